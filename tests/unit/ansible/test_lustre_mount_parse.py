"""Parsers and helpers of plugins/module_utils/lustre_mount.py on the recorded samples of tests/fixtures/tools/
(proc_mounts, fuser, lctl; sources in their READMEs). Expected values were read off the recordings by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_mount import (
    LustreError,
    Nid,
    check_fsname,
    check_options,
    compare_options,
    find_mount,
    foreign_fstab_line,
    format_source,
    fstab_entry,
    lnet_problems,
    normalise_net,
    parse_fuser,
    parse_list_nids,
    parse_mgs,
    parse_mounts,
    parse_nid,
    parse_source,
    render_fstab_line,
    resolve_nid,
    resolved_groups,
    same_mgs,
    update_fstab,
    with_netdev,
)

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "tools"


def text(*parts: str) -> str:
    return (FIX.joinpath(*parts)).read_text()


# --- /proc/mounts ------------------------------------------------------------------------------------------------


def test_go_lustre_mtab_three_lustre_mounts_old_layout() -> None:
    entries = parse_mounts(text("proc_mounts", "go-lustre_mtab.txt"))
    lustre = [e for e in entries if e.fstype == "lustre"]
    assert [(e.source, e.mount_point) for e in lustre] == [
        ("10.0.2.15@tcp:/lustre", "/mnt/lustre"),
        ("10.0.2.15@tcp0:/lustre", "/var/lib/lhsmd/roots/lhsm-plugin-posix"),
        ("10.0.2.15@tcp0:/lustre", "/var/lib/lhsmd/roots/lhsm-plugin-s3"),
    ]
    assert lustre[0].options == ["rw", "flock", "user_xattr"]
    groups, fs, sub = parse_source(lustre[1].source)
    assert groups == [[Nid("10.0.2.15", "tcp")]] and fs == "lustre" and sub == ""  # tcp0 is tcp


def test_old_layout_option_comparison() -> None:
    mounted = find_mount(parse_mounts(text("proc_mounts", "go-lustre_mtab.txt")), "/mnt/lustre").options
    assert not compare_options(["flock", "user_xattr", "_netdev"], mounted).any
    # the old layout shows only the flags that are set: absence of flock is noflock
    diff = compare_options(["noflock"], mounted)
    assert diff.unmount == ["noflock wanted, flock in effect"]
    # checksum is not shown before 2.15: cannot be verified
    assert compare_options(["checksum"], mounted).unverified == ["checksum"]
    diff = compare_options(["localflock"], mounted)
    assert diff.unmount == ["localflock wanted, not in effect"]


def test_fsx_2_15_layout_relatime_and_table_flags() -> None:
    entry = find_mount(parse_mounts(text("proc_mounts", "lustre_2.15_fsx_options_derived.txt")), "/mnt/lustre")
    assert entry.source == "10.20.0.1@tcp:/lfs1"
    assert entry.options[:3] == ["rw", "relatime", "seclabel"]
    # the FSx fstab asked for relatime,flock: nothing to change
    assert not compare_options(["defaults", "relatime", "flock", "_netdev"], entry.options).any
    # noatime instead of relatime: a remount fixes it, nothing needs an unmount
    diff = compare_options(["noatime", "flock"], entry.options)
    assert sorted(diff.remount) == ["noatime wanted, not set", "relatime set, not wanted"] and diff.unmount == []
    # user_xattr: the table shows nouser_xattr -> needs an unmount
    assert compare_options(["relatime", "user_xattr"], entry.options).unmount == ["user_xattr wanted, not in effect"]
    assert compare_options(["relatime", "noencrypt"], entry.options).unmount == ["noencrypt wanted, encrypt in effect"]
    assert compare_options(["relatime", "network=o2ib1"], entry.options).unverified == ["network=o2ib1"]


def test_failover_source_and_escaped_mount_point() -> None:
    entries = parse_mounts(text("proc_mounts", "lustre_failover_escaped_derived.txt"))
    groups, fs, subdir = parse_source(entries[0].source)
    assert subdir == ""
    assert fs == "lfs1"
    assert [[str(n) for n in g] for g in groups] == [
        ["10.20.0.1@o2ib", "10.20.1.1@o2ib"],
        ["10.20.0.2@o2ib", "10.20.1.2@o2ib"],
    ]
    data = find_mount(entries, "/mnt/scratch data")
    assert data is not None and data.options[:3] == ["ro", "nosuid", "nodev"]
    # localflock set: flock is wanted -> unmount needed; rw wanted -> remount
    diff = compare_options(["flock"], data.options)
    assert "flock wanted, not in effect" in diff.unmount
    assert sorted(diff.remount) == [
        "nodev set, not wanted",
        "nosuid set, not wanted",
        "ro set, not wanted",
        "rw wanted, not set",
    ]
    assert not compare_options(["ro", "nosuid", "nodev", "localflock", "user_xattr"], data.options).any


def test_find_mount_takes_the_top_mount() -> None:
    entries = parse_mounts("a@tcp:/x /mnt/a lustre rw 0 0\ntmpfs /mnt/a tmpfs rw 0 0\n")
    assert find_mount(entries, "/mnt/a/").fstype == "tmpfs"
    assert find_mount(entries, "/mnt/b") is None


# --- NIDs, sources, names --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("net", "norm"),
    [("o2ib0", "o2ib"), ("o2ib", "o2ib"), ("o2ib1", "o2ib1"), ("tcp0", "tcp"), ("tcp10", "tcp10"), ("kfi", "kfi")],
)
def test_normalise_net(net: str, norm: str) -> None:
    assert normalise_net(net) == norm


@pytest.mark.parametrize(
    "bad",
    [
        "10.20.0.1",
        "10.20.0.1@",
        "@o2ib",
        "10.20.0.300@o2ib",
        "a b@tcp",
        "x@o2-ib",
        "10.20.0.1@o2ib:10.20.0.2@o2ib",
        "-bad-@tcp",
    ],
)
def test_bad_nids_name_the_field(bad: str) -> None:
    with pytest.raises(LustreError, match=r"^mgs\[1\]\[0\]: .* is not a NID"):
        parse_mgs([["10.20.0.9@o2ib"], [bad]])


def test_mgs_groups_and_source() -> None:
    groups = parse_mgs([["10.20.0.1@o2ib0", "10.20.1.1@o2ib"], "10.20.0.2@o2ib,mgs02@o2ib"])
    assert format_source(groups, "lfs1") == "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.2@o2ib,mgs02@o2ib:/lfs1"
    with pytest.raises(LustreError, match=r"^mgs: .*non-empty list"):
        parse_mgs([])


@pytest.mark.parametrize("name", ["lfs1", "A_b9", "12345678"])
def test_fsname_ok(name: str) -> None:
    assert check_fsname(name) == name


@pytest.mark.parametrize("name", ["", "toolong12", "lfs-1", "lfs.1"])
def test_fsname_bad(name: str) -> None:
    with pytest.raises(LustreError, match=r"^name: .* 1 to 8 characters from A-Z, a-z, 0-9 and _"):
        check_fsname(name)


def test_options_checked_and_netdev_added() -> None:
    assert with_netdev(check_options(["flock", "noatime", "flock"])) == ["flock", "noatime", "_netdev"]
    with pytest.raises(LustreError, match=r"^options\[1\]: 'noatime,flock' is not one mount option"):
        check_options(["x", "noatime,flock"])
    with pytest.raises(LustreError, match=r"remount"):
        check_options(["remount"])


def test_resolution_by_getaddrinfo() -> None:
    calls = []

    def resolver(host, port, family, kind):
        calls.append((host, family))
        return [(family, kind, 6, "", ("10.20.0.1", 0))]

    groups = resolved_groups(parse_mgs([["mgs01@o2ib", "10.20.1.1@o2ib"]]), resolver)
    assert [[str(n) for n in g] for g in groups] == [["10.20.0.1@o2ib", "10.20.1.1@o2ib"]]
    assert calls == [("mgs01", 2)]  # only the host name, IPv4 only
    assert same_mgs(groups, parse_source("10.20.1.1@o2ib,10.20.0.1@o2ib:/lfs1")[0])

    def broken(*_a):
        raise OSError(-2, "Name or service not known")

    with pytest.raises(LustreError, match="cannot resolve host name 'mgs01' of NID mgs01@o2ib"):
        resolve_nid(parse_nid("mgs01@o2ib"), broken)


def test_same_mgs_ignores_order_but_not_nids() -> None:
    a = parse_source("10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.2@o2ib:/lfs1")[0]
    b = parse_source("10.20.0.2@o2ib:10.20.1.1@o2ib,10.20.0.1@o2ib:/lfs1")[0]
    c = parse_source("10.20.0.1@o2ib:10.20.0.2@o2ib:/lfs1")[0]
    assert same_mgs(a, b)
    assert not same_mgs(a, c)


# --- fstab ------------------------------------------------------------------------------------------------------


FSTAB = """# /etc/fstab
UUID=1B2C-1908 /boot/efi vfat defaults,noatime 0 2

10.20.0.9@tcp:/old /mnt/lfs1 lustre defaults,_netdev 0 0
/dev/md/scratch /data xfs defaults,nofail 0 0
"""


def test_fstab_line_replaced_in_place_others_kept() -> None:
    line = render_fstab_line("10.20.0.1@o2ib:10.20.0.2@o2ib:/lfs1", "/mnt/lfs1", ["flock", "_netdev"])
    new = update_fstab(FSTAB, "/mnt/lfs1/", line)
    assert new.splitlines() == [
        "# /etc/fstab",
        "UUID=1B2C-1908 /boot/efi vfat defaults,noatime 0 2",
        "",
        "10.20.0.1@o2ib:10.20.0.2@o2ib:/lfs1 /mnt/lfs1 lustre flock,_netdev 0 0",
        "/dev/md/scratch /data xfs defaults,nofail 0 0",
    ]
    assert fstab_entry(new, "/mnt/lfs1") == line
    removed = update_fstab(new, "/mnt/lfs1", None)
    assert "lustre" not in removed and removed.count("\n") == 4
    added = update_fstab("", "/mnt/x y", render_fstab_line("a@tcp:/x", "/mnt/x y", ["_netdev"]))
    assert added == "a@tcp:/x /mnt/x\\040y lustre _netdev 0 0\n"
    assert fstab_entry(added, "/mnt/x y") is not None


def test_foreign_fstab_lines() -> None:
    """Every line for the mount point counts (update_fstab replaces or removes all of them)."""
    assert foreign_fstab_line(FSTAB, "/mnt/lfs1", "old") is None
    assert foreign_fstab_line(FSTAB, "/mnt/lfs1/", "lfs1") == (
        4,
        "10.20.0.9@tcp:/old /mnt/lfs1 lustre defaults,_netdev 0 0",
        "of Lustre file system old",
    )
    nfs_first = "nfs01:/e /mnt/lfs1 nfs defaults 0 0\n" + FSTAB
    assert foreign_fstab_line(nfs_first, "/mnt/lfs1", "old") == (
        1,
        "nfs01:/e /mnt/lfs1 nfs defaults 0 0",
        "of type nfs",
    )
    bad = "nonsense /mnt/lfs1 lustre defaults 0 0\n"
    ((num, line, why),) = [foreign_fstab_line(bad, "/mnt/lfs1", "old")]
    assert (num, line) == (1, bad.strip()) and why.startswith("a Lustre line whose source cannot be read (")
    assert foreign_fstab_line("#10.20.0.9@tcp:/x /mnt/lfs1 nfs defaults 0 0\n", "/mnt/lfs1", "lfs1") is None


# --- fuser ------------------------------------------------------------------------------------------------------


def terminal_streams(text: str) -> tuple[str, str]:
    """The two streams of a ``fuser -v`` table as a terminal showed it (psmisc ``print_matches``, see the fuser
    fixtures' README): the PID column (a number, or ``kernel`` for the mount itself) went to stdout, the rest of
    each line to stderr. Returns ``(stdout, stderr)`` as the module captures them."""
    pids: list[str] = []
    lines: list[str] = []
    for line in text.splitlines():
        head = line[:20]
        fields = line[20:].split(None, 2)
        if line.strip().endswith(":") or "PID ACCESS COMMAND" in line or len(fields) < 2:
            lines.append(line)
            continue
        pids.append(fields[1])
        lines.append(head + f"{fields[0]:<8}  " + (fields[2] if len(fields) > 2 else ""))
    return " " + " ".join(pids), "\n".join(lines) + "\n"


def test_terminal_streams_split_like_the_derived_capture() -> None:
    """The splitter gives the module's two streams for a table whose streams were captured apart."""
    derived_out, derived_err = text("fuser", "lustre_busy_derived.stdout"), text("fuser", "lustre_busy_derived.stderr")
    merged = (
        derived_err.replace("root      mount", "root     kernel mount")
        .replace("alice     ..c..", "alice      4242 ..c..")
        .replace("bob       F....", "bob       51234 F....")
    )
    out, err = terminal_streams(merged)
    assert out.split() == derived_out.split()
    assert parse_fuser(out, err) == parse_fuser(derived_out, derived_err)


def parse_fuser_terminal(text: str) -> list:
    return parse_fuser(*terminal_streams(text))


def test_fuser_terminal_recordings() -> None:
    """parse_fuser on the published terminal recordings, split back into the two streams."""
    nfs = parse_fuser_terminal(text("fuser", "nfs_busy_terminal.txt"))
    assert [(h.name, h.user, h.pid, h.access, h.command, h.kind) for h in nfs] == [
        ("/var/www/html", "root", None, "", "/media/zhangsan", "mount"),
        ("/var/www/html", "root", 2662, "..c..", "bash", "process"),
    ]
    ltp = parse_fuser_terminal(text("fuser", "ltp_long_name_terminal.txt"))
    assert [(h.name, h.pid, h.command, h.kind) for h in ltp] == [
        ("/tmp/LTP_nfs07.P1XS9smc5w", None, "/tmp", "mount"),
        ("/tmp/LTP_nfs07.P1XS9smc5w", 2125, "tst_timeout_kil", "process"),
    ]


def test_fuser_streams_apart() -> None:
    holders = parse_fuser(text("fuser", "lustre_busy_derived.stdout"), text("fuser", "lustre_busy_derived.stderr"))
    assert [(h.user, h.pid, h.access, h.command, h.kind) for h in holders] == [
        ("root", None, "", "/mnt/lfs1", "mount"),
        ("alice", 4242, "..c..", "bash", "process"),
        ("bob", 51234, "F....", "python3", "process"),
    ]
    assert holders[2].describe() == "pid 51234 (bob) python3"


# --- lctl list_nids and the LNet check -----------------------------------------------------------------------------


def test_list_nids_and_lnet_check() -> None:
    nids = parse_list_nids(text("lctl", "list_nids_tcp.txt"))
    assert nids == [Nid("10.20.0.5", "tcp")]
    reason, warnings = lnet_problems(nids, parse_mgs([["10.20.0.1@o2ib"]]))
    assert reason == "LNet has no NID on the MGS network (o2ib); local NIDs: 10.20.0.5@tcp"
    reason, warnings = lnet_problems(nids, parse_mgs([["10.20.0.1@tcp0"], ["10.20.9.2@o2ib1"]]))
    assert reason is None
    assert warnings == [
        "failover MGS node 10.20.9.2@o2ib1 has no NID on a local LNet network (tcp); failover to it will not work"
    ]
