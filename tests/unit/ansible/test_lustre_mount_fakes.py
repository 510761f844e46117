"""The mount, umount and fuser fakes (tests/fakes/bin) against the recorded formats and hwaac's parsers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_mount import (
    compare_options,
    find_mount,
    parse_fuser,
    parse_mounts,
    parse_source,
)
from tests.unit.ansible.fake_host import FakeHost
from tests.unit.ansible.module_run import REPO

FIX = REPO / "tests" / "fixtures" / "tools"


class Fake(FakeHost):
    """The mount, umount and fuser fakes' state folder, with LNet up on o2ib."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp)
        self.write_state(
            "lnet.json",
            {
                "configured": True,
                "version": "2.15.5",
                "nets": [{"net": "o2ib", "nis": [{"interface": "ib0", "nid": "10.20.0.5@o2ib", "status": "up"}]}],
            },
        )

    def mounts(self):
        path = self.state / "proc_mounts"
        return parse_mounts(path.read_text()) if path.exists() else []


@pytest.fixture
def fake(tmp_path: Path) -> Fake:
    return Fake(tmp_path)


def test_fuser_fake_prints_the_derived_streams_byte_for_byte(fake: Fake) -> None:
    """The /mnt/lfs1 case of tests/fixtures/tools/fuser/lustre_busy_derived.* (psmisc print_matches)."""
    (fake.state / "proc_mounts").write_text("10.20.0.1@o2ib:/lfs1 /mnt/lfs1 lustre rw,flock 0 0\n")
    (fake.state / "busy.json").write_text(
        json.dumps(
            {
                "/mnt/lfs1": [
                    {"pid": 4242, "user": "alice", "command": "bash", "access": "..c.."},
                    {"pid": 51234, "user": "bob", "command": "python3", "access": "F...."},
                ]
            }
        )
    )
    res = fake.sh("fuser", "-vm", "/mnt/lfs1")
    assert res.returncode == 0
    assert res.stderr == (FIX / "fuser" / "lustre_busy_derived.stderr").read_text()
    assert res.stdout == (FIX / "fuser" / "lustre_busy_derived.stdout").read_text()
    assert [h.pid for h in parse_fuser(res.stdout, res.stderr)] == [None, 4242, 51234]


def test_fuser_fake_idle_mount_and_unknown_path(fake: Fake) -> None:
    (fake.state / "proc_mounts").write_text("10.20.0.1@o2ib:/lfs1 /mnt/lfs1 lustre rw,flock 0 0\n")
    idle = fake.sh("fuser", "-vm", "/mnt/lfs1")
    assert idle.returncode == 0 and idle.stdout == "kernel"  # -v: the mount itself counts (psmisc)
    quiet = fake.sh("fuser", "-m", "/mnt/lfs1")
    assert quiet.returncode == 1 and quiet.stdout == "" and quiet.stderr == ""
    assert fake.sh("fuser", "-vm", "/nowhere").returncode == 1


def test_mount_fake_writes_the_2_15_line_and_lctl_sees_the_devices(fake: Fake, tmp_path: Path) -> None:
    mp = tmp_path / "mnt"
    mp.mkdir()
    res = fake.sh(
        "mount",
        "-t",
        "lustre",
        "-o",
        "noatime,localflock,_netdev",
        "10.20.0.1@o2ib0,10.20.1.1@o2ib:10.20.0.2@o2ib:/lfs1",
        str(mp),
    )
    assert res.returncode == 0, res.stderr
    (entry,) = fake.mounts()
    # net number 0 dropped; table order of ll_show_options with localflock (flock/noflock skipped)
    assert entry.source == "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.2@o2ib:/lfs1"
    assert entry.options == [
        "rw",
        "noatime",
        "checksum",
        "localflock",
        "nouser_xattr",
        "lruresize",
        "lazystatfs",
        "nouser_fid2path",
        "verbose",
        "encrypt",
    ]
    assert not compare_options(["noatime", "localflock"], entry.options).any
    names = fake.sh("lctl", "list_param", "osc.*.max_rpcs_in_flight").stdout.split()
    assert len(names) == 4 and names[0] == "osc.lfs1-OST0000-osc-ffff8a2c4e1b8000.max_rpcs_in_flight"
    again = fake.sh("mount", "-t", "lustre", "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.2@o2ib:/lfs1", str(mp))
    assert again.returncode == 17 and "is already mounted on" in again.stderr  # check_mtab_entry: same source
    res = fake.sh("umount", str(mp))
    assert res.returncode == 0 and fake.mounts() == []
    assert fake.sh("lctl", "list_param", "osc.*.max_rpcs_in_flight").returncode == 2


def test_mount_fake_pre_2_15_layout(fake: Fake, tmp_path: Path) -> None:
    (fake.state / "lustre.json").write_text(json.dumps({"knobs": {"version": "2.12.9"}}))
    res = fake.sh("mount", "-t", "lustre", "-o", "user_xattr", "10.20.0.1@o2ib:/lfs1", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert fake.mounts()[0].options == ["rw", "flock", "user_xattr", "lazystatfs"]  # like the go-lustre recording


@pytest.mark.parametrize(
    ("setup", "source", "rc", "lines"),
    [
        ({"lnet": None}, "10.20.0.1@o2ib:/lfs1", 100, ["failed: Network is down"]),
        ({}, "10.20.0.1@tcp:/lfs1", 5, ["failed: Input/output error", "Is the MGS running?"]),
        ({"knobs": {"unreachable_nids": ["10.20.0.1@o2ib"]}}, "10.20.0.1@o2ib:/lfs1", 5, ["Is the MGS running?"]),
        (
            {"knobs": {"unknown_filesystems": ["lfs1"]}},
            "10.20.0.1@o2ib:/lfs1",
            2,
            [
                "failed: No such file or directory",
                "Is the MGS specification correct?",
                "Is the filesystem name correct?",
            ],
        ),
        (
            {},
            "no-such-host.invalid@o2ib:/lfs1",
            22,
            ["mount.lustre: Can't parse NID 'no-such-host.invalid@o2ib:/lfs1'"],
        ),
    ],
)
def test_mount_fake_failures_as_mount_lustre_prints_them(
    fake: Fake, tmp_path: Path, setup: dict, source: str, rc: int, lines: list[str]
) -> None:
    if "lnet" in setup:
        (fake.state / "lnet.json").unlink()
    if "knobs" in setup:
        (fake.state / "lustre.json").write_text(json.dumps({"knobs": setup["knobs"]}))
    res = fake.sh("mount", "-t", "lustre", source, str(tmp_path))
    assert res.returncode == rc
    for line in lines:
        assert line in res.stderr
    assert fake.mounts() == []


def test_remount_changes_vfs_flags_only(fake: Fake, tmp_path: Path) -> None:
    first = fake.sh("mount", "-t", "lustre", "-o", "noatime,flock", "10.20.0.1@o2ib:/lfs1", str(tmp_path))
    assert first.returncode == 0
    res = fake.sh("mount", "-t", "lustre", "-o", "remount,ro,nosuid,noflock", "10.20.0.1@o2ib:/lfs1", str(tmp_path))
    assert res.returncode == 0, res.stderr
    entry = find_mount(fake.mounts(), str(tmp_path))
    assert entry.options[:2] == ["ro", "nosuid"] and "flock" in entry.options  # noflock ignored by a remount
    assert "noatime" not in entry.options
    assert parse_source(entry.source)[1] == "lfs1"


def test_umount_fake_busy_lazy_and_not_mounted(fake: Fake, tmp_path: Path) -> None:
    assert fake.sh("mount", "-t", "lustre", "10.20.0.1@o2ib:/lfs1", str(tmp_path)).returncode == 0
    (fake.state / "busy.json").write_text(json.dumps({str(tmp_path): [{"pid": 1, "user": "root", "command": "x"}]}))
    busy = fake.sh("umount", str(tmp_path))
    assert busy.returncode == 32 and busy.stderr == f"umount: {tmp_path}: target is busy.\n"
    assert fake.sh("umount", "-f", str(tmp_path)).returncode == 0
    gone = fake.sh("umount", str(tmp_path))
    assert gone.returncode == 32 and gone.stderr == f"umount: {tmp_path}: not mounted.\n"
    log = (fake.state / "calls.log").read_text().splitlines()
    assert log[-3:] == [f"umount {tmp_path}", f"umount -f {tmp_path}", f"umount {tmp_path}"]


def test_mount_fake_implicit_lnet_is_the_wrong_nid_pitfall(fake: Fake, tmp_path: Path) -> None:
    """Knob implicit_lnet: an unconfigured node gets LNet on tcp (first interface) from the mount itself."""
    (fake.state / "lnet.json").write_text(
        json.dumps({"loaded": True, "configured": False, "interfaces": {"ib0": "10.20.0.5"}, "nets": []})
    )
    (fake.state / "lustre.json").write_text(json.dumps({"knobs": {"implicit_lnet": True}}))
    res = fake.sh("mount", "-t", "lustre", "10.20.0.1@o2ib:/lfs1", str(tmp_path))
    assert res.returncode == 5 and "Is the MGS running?" in res.stderr  # the o2ib MGS is out of reach
    lnet = json.loads((fake.state / "lnet.json").read_text())
    assert lnet["configured"] is True and lnet["dlc"] is False
    assert fake.sh("lctl", "list_nids").stdout == "10.20.0.5@tcp\n"
