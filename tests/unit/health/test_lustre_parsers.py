"""Lustre client parsers on recorded and derived outputs (fixtures/tools/lfs, fixtures/health/lustre; sources in
their README.md), and what hwaac.health.checks_lustre makes of each. Expected values were read off the fixture files
by hand."""

from __future__ import annotations

import re

import pytest

from hwaac.health.parsers.lctl import parse_health_check, parse_lctl_ping
from hwaac.health.parsers.lnetctl import parse_lnet_net_show
from hwaac.health.parsers.lustre import parse_lfs_check, split_obd_name
from hwaac.health.parsers.lustre_formats import normalise_nid
from hwaac.health.parsers.lustre_imports import parse_imports, parse_server_uuid
from hwaac.health.parsers.lustre_mounts import parse_lustre_mounts
from hwaac.health.result import Action, Status
from tests.unit.health.lustre_judge import FIX, GARBAGE, HEALTH, codes, faults, read, verdict

LFS = FIX / "tools" / "lfs"


# --- names --------------------------------------------------------------------------------------------------------


def test_obd_names_split_into_fs_target_kind() -> None:
    osc = split_obd_name("lfs1-OST000a-osc-ffff9c2a4e1b8000")
    assert (osc.kind, osc.fsname, osc.target) == ("osc", "lfs1", "OST000A")
    mgc = split_obd_name("MGC10.20.0.1@o2ib")
    assert (mgc.kind, mgc.fsname, mgc.mgs_nid) == ("mgc", "", "10.20.0.1@o2ib")
    assert split_obd_name("lfs1-clilov-ffff9c2a4e1b8000").kind == ""
    assert split_obd_name("toolongname-OST0000-osc-ffff").kind == ""  # fsnames have at most 8 characters


# --- lfs check ----------------------------------------------------------------------------------------------------


def test_lfs_check_2_10_all_active_passes() -> None:
    result = parse_lfs_check(read(LFS / "check_servers_2.10_active.txt"), exit_code=0)
    assert verdict(result) == Status.PASS and not result.unknown
    assert [t.obd.target for t in result.targets] == ["MDT0000"] + [f"OST000{i}" for i in range(1, 7)]
    assert {t.obd.fsname for t in result.targets} == {"lustrefs"}
    assert [t.obd.kind for t in result.of_fs("lustrefs")].count("osc") == 6


def test_lfs_check_master_error_line_on_stderr_fails_even_with_exit_0() -> None:
    result = parse_lfs_check(
        read(LFS / "check_servers_master_derived.stdout"),
        read(LFS / "check_servers_master_derived.stderr"),
        exit_code=0,
    )
    assert verdict(result) == Status.FAIL
    bad = [t for t in result.targets if not t.ok]
    assert [(t.obd.name, t.errno, t.error) for t in bad] == [
        ("lfs1-OST0002-osc-ffff9c2a4e1b8000", 107, "Transport endpoint is not connected")
    ]
    assert codes(result) == ["LUSTRE_TARGET_INACTIVE"]
    assert faults(result)[0].subject == "lfs1-OST0002-osc-ffff9c2a4e1b8000"
    assert faults(result)[0].action == Action.CHECK_LINK
    assert [t.obd.kind for t in result.targets if t.ok] == ["osc", "osc", "osc", "mdc", "mgc"]


def test_lfs_check_q_and_a_errors_keep_errno_and_kind_of_error() -> None:
    result = parse_lfs_check(read(LFS / "check_all_ost_unmounted_qa.txt"))
    assert [(t.obd.name, t.errno) for t in result.targets] == [
        ("nas_test-OST0007-osc-MDT0001", 11),
        ("nas_test-OST0007-osc-ffff99f77f63e800", 107),
    ]
    assert codes(result) == ["LUSTRE_TARGET_UNREACHABLE", "LUSTRE_TARGET_INACTIVE"]
    mgc = parse_lfs_check(read(LFS / "check_all_mgc_shutdown_qa.txt"))
    assert mgc.targets[0].obd.kind == "mgc" and mgc.targets[0].errno == 108
    assert codes(mgc) == ["LUSTRE_TARGET_UNREACHABLE"] and verdict(mgc) == Status.FAIL


def test_lfs_check_inactive_form() -> None:
    result = parse_lfs_check(read(LFS / "check_servers_inactive_derived.txt"))
    assert codes(result) == ["LUSTRE_TARGET_INACTIVE"]
    assert faults(result)[0].subject == "lfs1-OST0001-osc-ffff9c2a4e1b8000"


@pytest.mark.parametrize("name", ["check_not_mounted_derived.txt", "check_not_mounted_2.10_derived.txt"])
def test_lfs_check_not_mounted_is_no_pass(name: str) -> None:
    result = parse_lfs_check(read(LFS / name), exit_code=19)
    assert result.not_mounted and not result.targets
    assert verdict(result) == Status.FAIL and codes(result) == ["LUSTRE_NO_CLIENT_MOUNT"]


@pytest.mark.parametrize("text", GARBAGE)
def test_lfs_check_garbage_is_unknown(text: str) -> None:
    result = parse_lfs_check(text, exit_code=0)
    assert verdict(result) == Status.UNKNOWN and result.unknown


def test_lfs_check_truncated_or_mixed_output_is_unknown() -> None:
    good = read(LFS / "check_servers_2.10_active.txt")
    assert verdict(parse_lfs_check(good + "lustrefs-OST0007-osc-ffff88003bfbd000 act")) == Status.UNKNOWN
    assert verdict(parse_lfs_check(good, "liblustreapi was not properly initialized\n")) == Status.UNKNOWN


@pytest.mark.parametrize(
    "keep",
    [
        len("lfs check: error: check 'nas_test-OST0007-osc-ffff99f7"),
        len("lfs check: error: check 'nas_test-OST0007-osc-ffff99f77f63e800': Transport"),
        len("lfs check: error: check 'nas_test-OST0007-osc-ffff99f77f63e800': Transport endpoint is not connected (10"),
    ],
)
def test_lfs_check_error_line_cut_inside_is_unknown(keep: int) -> None:
    """llapi_error() prints ``lfs check: error: check '<obd>': <strerror> (<errno>)``: a line cut inside it (the
    device name cut, or the message) is not read as that device's error."""
    first, second = read(LFS / "check_all_ost_unmounted_qa.txt").splitlines()
    result = parse_lfs_check(f"{first}\n{second[:keep]}")
    assert [t.obd.name for t in result.targets] == ["nas_test-OST0007-osc-MDT0001"]
    assert len(result.unknown) == 1 and "cut short" in result.unknown[0]


def test_lfs_check_exit_status_only_makes_it_worse() -> None:
    good = read(LFS / "check_servers_2.10_active.txt")
    result = parse_lfs_check(good, exit_code=2)
    assert verdict(result) == Status.UNKNOWN and "exit status 2" in result.unknown[0]
    bad = parse_lfs_check(read(LFS / "check_all_ost_unmounted_qa.txt"), exit_code=0)
    assert verdict(bad) == Status.FAIL


def test_lfs_check_whole_check_failure_is_unknown() -> None:
    result = parse_lfs_check("", "lfs check: cannot check target 'servers': Operation not permitted\n", exit_code=1)
    assert verdict(result) == Status.UNKNOWN and "Operation not permitted" in result.unknown[0]


# --- lctl ping ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "nids"),
    [
        ("lctl_ping_ok_2.15.4.txt", ["10.20.0.1@tcp"]),
        ("lctl_ping_ok_two_nids_exa.txt", ["10.20.0.1@tcp", "10.20.1.1@tcp"]),
        ("lctl_ping_netlink_derived.txt", ["10.20.0.1@o2ib", "10.20.1.1@o2ib"]),
    ],
)
def test_lctl_ping_success(name: str, nids: list[str]) -> None:
    result = parse_lctl_ping(read(HEALTH / name), nid=nids[0], exit_code=0)
    assert result.reachable is True and verdict(result) == Status.PASS
    assert result.peer_nids == nids  # 0@lo left out


def test_lctl_ping_failure_is_fail_whatever_the_exit_status() -> None:
    for rc in (0, 1, 255):
        result = parse_lctl_ping(read(HEALTH / "lctl_ping_failed.txt"), nid="10.20.0.1@tcp", exit_code=rc)
        assert result.reachable is False and result.error == "Input/output error"
        assert verdict(result) == Status.FAIL and codes(result) == ["LUSTRE_PING_FAILED"]


def test_lctl_ping_only_loopback_or_bad_exit_is_unknown() -> None:
    assert verdict(parse_lctl_ping("12345-0@lo\n", nid="10.20.0.1@o2ib")) == Status.UNKNOWN
    ok = read(HEALTH / "lctl_ping_ok_2.15.4.txt")
    result = parse_lctl_ping(ok, nid="10.20.0.1@tcp", exit_code=1)
    assert result.reachable is None and verdict(result) == Status.UNKNOWN


@pytest.mark.parametrize("text", [*GARBAGE, "Can't parse nid \"bogus\"\n"])
def test_lctl_ping_garbage_is_unknown(text: str) -> None:
    result = parse_lctl_ping(text, nid="10.20.0.1@o2ib", exit_code=0)
    assert verdict(result) == Status.UNKNOWN and result.reachable is None


# --- health_check -------------------------------------------------------------------------------------------------


def test_health_check_healthy() -> None:
    result = parse_health_check(read(HEALTH / "health_check_healthy_derived.txt"), exit_code=0)
    assert result.healthy is True and verdict(result) == Status.PASS
    assert parse_health_check("health_check=healthy\n").healthy is True


@pytest.mark.parametrize("name", ["health_check_unhealthy_2.14_ddn.txt", "health_check_unhealthy_n_2.14_derived.txt"])
def test_health_check_not_healthy_names_devices(name: str) -> None:
    result = parse_health_check(read(HEALTH / name))
    assert result.healthy is False and verdict(result) == Status.FAIL
    assert result.unhealthy_devices == ["lustre-OST0012", "lustre-OST0014", "lustre-OST0016"]
    assert codes(result) == ["LUSTRE_NOT_HEALTHY"] and faults(result)[0].action == Action.REBOOT
    assert "lustre-OST0014" in faults(result)[0].message


def test_health_check_lbug() -> None:
    result = parse_health_check(read(HEALTH / "health_check_lbug_derived.txt"))
    assert result.lbug and codes(result) == ["LUSTRE_LBUG"] and verdict(result) == Status.FAIL
    procfs = parse_health_check(read(HEALTH / "health_check_procfs_lbug_derived.txt"))
    assert codes(procfs) == ["LUSTRE_LBUG", "LUSTRE_NOT_HEALTHY"]
    assert procfs.unhealthy_devices == ["lfs1-OST0001-osc-ffff9c2a4e1b8000"]


def test_health_check_device_lines_beat_a_healthy_word() -> None:
    result = parse_health_check("healthy\ndevice lfs1-MDT0000-mdc-ffff reported unhealthy\n")
    assert result.healthy is False and verdict(result) == Status.FAIL


def test_health_check_not_loaded_and_bad_exit_are_unknown() -> None:
    result = parse_health_check(read(HEALTH / "health_check_not_loaded_derived.txt"), exit_code=2)
    assert verdict(result) == Status.UNKNOWN and "modules loaded" in result.unknown[0]
    assert verdict(parse_health_check("healthy\n", exit_code=1)) == Status.UNKNOWN


@pytest.mark.parametrize("text", [*GARBAGE, "HEALTHY\n", "healthy-ish\n"])
def test_health_check_garbage_is_unknown(text: str) -> None:
    assert verdict(parse_health_check(text, exit_code=0)) == Status.UNKNOWN


# --- imports ------------------------------------------------------------------------------------------------------


def test_imports_2_12_idle_is_fine() -> None:
    result = parse_imports(read(HEALTH / "import_2.12.7_idle_transactions_derived.txt"))
    assert verdict(result) == Status.PASS
    [imp] = result.imports
    assert (imp.obd.fsname, imp.obd.kind, imp.target, imp.state) == ("temp", "osc", "temp-OST0004_UUID", "IDLE")
    assert imp.current_connection == "10.20.0.13@tcp" and imp.failover_nids == ["10.20.0.13@tcp"]
    assert imp.flags == ["replayable", "pingable", "connect_tried"] and imp.deactivated is None


def test_imports_master_full() -> None:
    result = parse_imports(read(HEALTH / "imports_master_full_derived.txt"), exit_code=0)
    assert verdict(result) == Status.PASS
    assert [(i.obd.kind, i.obd.target, i.state) for i in result.imports] == [
        ("osc", "OST0000", "FULL"),
        ("osc", "OST0001", "FULL"),
        ("mdc", "MDT0000", "FULL"),
    ]
    assert result.imports[0].failover_nids == ["10.20.0.11@o2ib", "10.20.1.11@o2ib"]  # quotes removed
    assert result.imports[0].current_connection == "10.20.0.11@o2ib"


def test_imports_bad_states() -> None:
    result = parse_imports(read(HEALTH / "imports_master_bad_derived.txt"))
    assert verdict(result) == Status.FAIL
    by_subject = {f.subject: (f.code, f.status) for f in faults(result)}
    assert by_subject == {
        "lfs1-OST0001-osc-ffff9c2a4e1b8000": ("LUSTRE_IMPORT_NOT_FULL", Status.FAIL),
        "lfs1-OST0002-osc-ffff9c2a4e1b8000": ("LUSTRE_IMPORT_EVICTED", Status.FAIL),
        "lfs1-OST0003-osc-ffff9c2a4e1b8000": ("LUSTRE_IMPORT_RECOVERING", Status.WARN),
    }


def test_imports_with_n_flag_split_on_import_lines() -> None:
    text = read(HEALTH / "imports_master_bad_derived.txt")
    bare = "\n".join(line for line in text.splitlines() if not line.endswith(".import="))
    result = parse_imports(bare)
    assert [i.state for i in result.imports] == ["FULL", "DISCONN", "EVICTED", "REPLAY_WAIT", "FULL"]
    assert result.imports[1].obd.name == "lfs1-OST0001-osc-ffff9c2a4e1b8000"  # from the name: line


def test_imports_not_mounted_records_missing_params() -> None:
    result = parse_imports(read(HEALTH / "imports_not_mounted_derived.txt"), exit_code=2)
    assert not result.imports and result.missing_params == ["osc/*/import", "mdc/*/import"]


def test_imports_unknown_state_and_truncated_block_are_unknown() -> None:
    text = read(HEALTH / "import_2.12.7_idle.txt").replace("state: IDLE", "state: SLEEPY")
    assert verdict(parse_imports(text)) == Status.UNKNOWN
    cut = "\n".join(read(HEALTH / "import_2.12.7_idle.txt").splitlines()[:4])  # header, import:, name, target
    result = parse_imports(cut)
    assert verdict(result) == Status.UNKNOWN and "no import state" in result.unknown[0]


def test_imports_cut_in_half_is_unknown() -> None:
    """Cut in half, the output ends inside OST0002's value: three of five imports read, and it must say so."""
    text = read(HEALTH / "imports_master_bad_derived.txt")
    result = parse_imports(text[: len(text) // 2])
    assert [i.state for i in result.imports] == ["FULL", "DISCONN", "EVICTED"]
    assert verdict(result) == Status.UNKNOWN  # OST0003 and the MDT are unread: a retest, never PASS
    assert any(r.startswith("lfs1-OST0002-osc-ffff9c2a4e1b8000: no ") and "cut short" in r for r in result.unknown)


def test_imports_recorded_2_12_value_stops_before_transactions() -> None:
    result = parse_imports(read(HEALTH / "import_2.12.7_idle.txt"))
    assert [i.state for i in result.imports] == ["IDLE"]
    assert result.unknown == ["temp-OST0004-osc-ffff9068ea7c9000: no transactions.last_checked (output cut short?)"]


# the last line of each cut; the value ends there, so a key printed after it is missing
@pytest.mark.parametrize(
    "last",
    [
        "    name: lfs1-MDT0000-mdc-ffff9c2a4e1b8000",
        "    import_flags: [ replayable, pingable, connect_tried ]",
        '       current_connection: "10.20.0.2@o2ib"',
        "    rpcs:",
        "       network: 1 sec",
        "       peer_committed: 0",
    ],
)
def test_imports_value_cut_at_a_line_is_unknown(last: str) -> None:
    text = read(HEALTH / "imports_master_full_derived.txt")
    cut = text[: text.rindex(last) + len(last)]
    result = parse_imports(cut)
    assert len(result.imports) == 3 and verdict(result) == Status.UNKNOWN
    assert result.unknown[-1].startswith("lfs1-MDT0000-mdc-ffff9c2a4e1b8000: no ")


@pytest.mark.parametrize(
    "cut_inside",
    ["osc.lfs1-OST0001-osc-ffff9c2a", "    rp", "    transactions:\n       last_che", "[hwaac: output cut at 1 MiB]"],
)
def test_imports_line_cut_inside_is_unknown(cut_inside: str) -> None:
    """A line cut inside (or the host module's cut marker) is not lctl's: unknown, even where the imports read so far
    look complete."""
    text = read(HEALTH / "imports_master_full_derived.txt")
    end = text.index("osc.lfs1-OST0001") if cut_inside.startswith(("osc.", "[")) else text.index("    rpcs:")
    result = parse_imports(text[:end] + cut_inside)
    assert verdict(result) == Status.UNKNOWN


def test_imports_without_rpc_statistics_end_after_the_connection() -> None:
    """``lprocfs_import_seq_show_locked()`` returns after ``connection:`` when the device keeps no RPC statistics."""
    text = read(HEALTH / "imports_master_full_derived.txt")
    values = re.split(r"(?m)^(?=(?:osc|mdc)\.)", text)
    no_stats = "".join(value[: value.index("    rpcs:\n")] for value in values if value)
    result = parse_imports(no_stats)
    assert [i.state for i in result.imports] == ["FULL", "FULL", "FULL"] and verdict(result) == Status.PASS
    first_with_stats = values[1] + no_stats[no_stats.index("osc.lfs1-OST0001") :]
    result = parse_imports(first_with_stats)  # every import of a client keeps statistics, or none does
    assert verdict(result) == Status.UNKNOWN and "lfs1-OST0001" in result.unknown[0]


@pytest.mark.parametrize("text", GARBAGE)
def test_imports_garbage_is_unknown(text: str) -> None:
    assert verdict(parse_imports(text, exit_code=0)) == Status.UNKNOWN


def test_server_uuid_lines() -> None:
    result = parse_server_uuid(read(HEALTH / "ost_server_uuid_derived.txt"))
    assert [(i.obd.target, i.state, i.deactivated) for i in result.imports] == [
        ("OST0000", "FULL", False),
        ("OST0001", "FULL", True),
        ("OST0002", "DISCONN", False),
    ]
    assert codes(result) == ["LUSTRE_TARGET_DEACTIVATED", "LUSTRE_IMPORT_NOT_FULL"]
    bare = parse_server_uuid("lfs1-OST0000_UUID\tFULL\n")
    assert bare.imports[0].obd.fsname == "lfs1" and verdict(bare) == Status.PASS
    assert verdict(parse_server_uuid("lfs1-OST0000_UUID FULL\n")) == Status.UNKNOWN  # a space is not lctl's tab


# --- /proc/mounts -------------------------------------------------------------------------------------------------


def test_proc_mounts_lustre_lines() -> None:
    text = (
        "sysfs /sys sysfs rw,nosuid 0 0\n"
        "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.2@o2ib:/lfs1 /mnt/lfs1 lustre rw,noatime,flock,lazystatfs 0 0\n"
        "10.20.0.3@o2ib:/scratch/sub /mnt/my\\040scratch lustre rw,flock 0 0\n"
        "/dev/sda1 / ext4 rw 0 0\n"
    )
    a, b = parse_lustre_mounts(text)
    assert (a.fsname, a.mount_point, a.mgs) == (
        "lfs1",
        "/mnt/lfs1",
        (("10.20.0.1@o2ib", "10.20.1.1@o2ib"), ("10.20.0.2@o2ib",)),
    )
    assert "flock" in a.options
    assert (b.fsname, b.mount_point) == ("scratch", "/mnt/my scratch")
    assert parse_lustre_mounts("garbage\n\n") == []


def test_proc_mounts_fields_are_unescaped_as_the_kernel_escapes_them() -> None:
    """fs/proc_namespace.c show_vfsmnt(): ``mangle()`` (``seq_escape(m, s, " \\t\\n\\\\")``) writes space, tab,
    newline and backslash of the device name and the type as ``\\ooo``, ``seq_path()`` those of the mount point."""
    text = (
        "10.20.0.3@o2ib:/scratch/my\\040dir\\011x\\134y /mnt/a\\134b\\012c lustre rw,flock 0 0\n"
        "10.20.0.4@o2ib:/lfs2 /mnt/lfs2 lustre rw 0 0\n"
    )
    a, b = parse_lustre_mounts(text)
    assert a.source == "10.20.0.3@o2ib:/scratch/my dir\tx\\y"
    assert (a.fsname, a.mgs) == ("scratch", (("10.20.0.3@o2ib",),))
    assert a.mount_point == "/mnt/a\\b\nc"
    assert (b.fsname, b.mount_point) == ("lfs2", "/mnt/lfs2")


def test_proc_mounts_escaped_fixture() -> None:
    text = read(FIX / "tools" / "proc_mounts" / "lustre_failover_escaped_derived.txt")
    a, b = parse_lustre_mounts(text)
    assert b.mount_point == "/mnt/scratch data" and b.fsname == "scratch"
    assert a.mgs == b.mgs == (("10.20.0.1@o2ib", "10.20.1.1@o2ib"), ("10.20.0.2@o2ib", "10.20.1.2@o2ib"))


@pytest.mark.parametrize(
    ("nid", "want"),
    [
        ("10.20.0.1@o2ib0", "10.20.0.1@o2ib"),  # libcfs_net2str prints net number 0 without the number
        ("10.20.0.1@o2ib", "10.20.0.1@o2ib"),
        ("10.20.0.1@tcp0", "10.20.0.1@tcp"),
        ("10.20.0.1@o2ib1", "10.20.0.1@o2ib1"),
        ("10.20.0.1@o2ib10", "10.20.0.1@o2ib10"),
        ("10.20.0.1@tcp00", "10.20.0.1@tcp"),
        ("MGS01.Example@o2ib0", "mgs01.example@o2ib"),  # host names are case-insensitive (RFC 4343)
        ("0@lo", "0@lo"),
        ("27@gni0", "27@gni"),
        ("not a nid", "not a nid"),  # left as is (compared verbatim)
    ],
)
def test_normalise_nid(nid: str, want: str) -> None:
    assert normalise_nid(nid) == want


# --- facts only ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parse", "expected"),
    [
        (lambda: parse_lfs_check("", read(LFS / "check_servers_master_derived.stderr")), "LUSTRE_TARGET_INACTIVE"),
        (
            lambda: parse_lfs_check("", read(LFS / "check_not_mounted_derived.txt"), exit_code=19),
            "LUSTRE_NO_CLIENT_MOUNT",
        ),
        (
            lambda: parse_lctl_ping(read(HEALTH / "lctl_ping_failed.txt"), nid="10.20.0.1@o2ib", exit_code=1),
            "LUSTRE_PING_FAILED",
        ),
        (lambda: parse_health_check(read(HEALTH / "health_check_lbug_derived.txt")), "LUSTRE_LBUG"),
        (lambda: parse_imports(read(HEALTH / "imports_master_bad_derived.txt")), "LUSTRE_IMPORT_NOT_FULL"),
        (lambda: parse_server_uuid(read(HEALTH / "ost_server_uuid_derived.txt")), "LUSTRE_TARGET_DEACTIVATED"),
        (
            lambda: parse_lnet_net_show(read(HEALTH / "lnetctl_net_show_v2_2.16_layout_degraded_derived.txt")),
            "LUSTRE_LNET_NI_DEGRADED",
        ),
        (
            lambda: parse_lnet_net_show("", stderr=read(HEALTH / "lnetctl_down_2.12_lustrefs_exporter.txt")),
            "LUSTRE_LNET_DOWN",
        ),
    ],
    ids=[
        "lfs check",
        "lfs check not mounted",
        "lctl ping",
        "health_check",
        "imports",
        "server_uuid",
        "lnetctl",
        "lnetctl down",
    ],
)
def test_parsers_record_facts_and_the_check_layer_judges(parse, expected: str) -> None:
    """A faulty output: the parser records no finding (facts only), hwaac.health.checks_lustre names the fault."""
    result = parse()
    assert result.findings == [] and result.status() in (Status.PASS, Status.UNKNOWN)
    assert expected in codes(result)
