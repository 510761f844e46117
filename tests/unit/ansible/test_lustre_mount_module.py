"""aiinfra.hwaac.lustre_mount against the stateful mount, umount, fuser and lctl fakes (tests/fakes/bin).

The module runs as Ansible runs it (tests/unit/ansible/module_run.py), with tests/fakes/bin first on PATH and
HWAAC_FAKE_STATE in the test's tmp directory. The fake host has LNet configured on tcp (10.20.0.5@tcp, the
``lnet.json`` shape of the shared fake-state contract) unless a test says otherwise; the MGS is ``localhost@tcp``
(resolved by getaddrinfo to 127.0.0.1, as mount.lustre and the module both do), so /proc/mounts shows
``127.0.0.1@tcp:/lfs1``. The mount point and fstab live under tmp_path. The fake host is
tests/unit/ansible/fake_host.py; the cases that are data are in tests/unit/ansible/cases/lustre_mount.yml.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.ansible.fake_host import FakeHost
from tests.unit.ansible.module_run import load_cases, run_case

LNET_TCP = {
    "configured": True,
    "layout": "2.15",
    "version": "2.15.5",
    "interfaces": {"eth0": "10.20.0.5"},
    "nets": [{"net": "tcp", "nis": [{"interface": "eth0", "nid": "10.20.0.5@tcp", "status": "up"}]}],
    "global": {},
}
FSTAB = "# static table\nUUID=1B2C-1908 /boot/efi vfat defaults,noatime 0 2\n"


def mounting(calls: list[str]) -> list[str]:
    return [c for c in calls if c.split()[0] in ("mount", "umount")]


class Host(FakeHost):
    """A fake Lustre client host: fake state with LNet on tcp, fstab, mount point."""

    module_name = "lustre_mount"

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp)
        self.fstab = tmp / "fstab"
        self.fstab.write_text(FSTAB)
        self.mp = str(tmp / "mnt" / "lfs1")
        self.lnet(LNET_TCP)

    def placeholders(self) -> dict[str, str]:
        return {**super().placeholders(), "mp": self.mp, "fstab": str(self.fstab), "FSTAB": FSTAB}

    def lnet(self, data: dict | None) -> None:
        path = self.state / "lnet.json"
        if data is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(json.dumps(data))

    def case_args(self, given: dict) -> dict:
        base = {
            "name": "lfs1",
            "mgs": [["localhost@tcp"]],
            "mount_point": self.mp,
            "options": ["flock", "noatime"],
            "fstab": str(self.fstab),
            "proc_mounts": str(self.state / "proc_mounts"),
        }
        return {**base, **given}

    def module(self, *, check: bool = False, **over: object) -> dict:
        return self.run(self.case_args(over), check=check)

    def mount_calls(self) -> list[str]:
        """The mount and umount calls of the last module run."""
        return mounting(self.new_calls())

    def proc_mounts(self) -> str:
        path = self.state / "proc_mounts"
        return path.read_text() if path.exists() else ""

    def fstab_text(self) -> str:
        return self.fstab.read_text()

    def write_fstab(self, text: str) -> None:
        self.fstab.write_text(text)

    def premount(self, source: str = "localhost@tcp:/lfs1", options: str = "flock,noatime,_netdev") -> None:
        Path(self.mp).mkdir(parents=True, exist_ok=True)
        res = self.sh("mount", "-t", "lustre", "-o", options, source, self.mp)
        assert res.returncode == 0, res.stderr

    def busy(self, *procs: dict) -> None:
        (self.state / "busy.json").write_text(json.dumps({self.mp: list(procs)}))


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path)


@pytest.mark.parametrize("case", load_cases("lustre_mount"))
def test_case(host: Host, case: dict) -> None:
    run_case(host, case)


def test_converge_check_mode_predicts_then_second_run_changes_nothing(host: Host) -> None:
    pred = host.module(check=True)
    assert pred["changed"] is True and not pred.get("failed"), pred
    assert pred["actions"] == ["mkdir", "fstab", "mount"]
    assert mounting(host.new_calls()) == []  # check mode: lctl list_nids only
    assert host.new_calls() == ["lctl list_nids"]
    assert host.fstab.read_text() == FSTAB and host.proc_mounts() == "" and not Path(host.mp).exists()
    assert pred["commands"][-1].endswith(f"mount -t lustre -o flock,noatime,_netdev localhost@tcp:/lfs1 {host.mp}")

    res = host.module()
    assert res["changed"] is True and res["actions"] == pred["actions"], res
    assert mounting(host.new_calls()) == [f"mount -t lustre -o flock,noatime,_netdev localhost@tcp:/lfs1 {host.mp}"]
    line = f"localhost@tcp:/lfs1 {host.mp} lustre flock,noatime,_netdev 0 0"
    assert host.fstab.read_text() == FSTAB + line + "\n"
    assert res["fstab_line"] == line
    assert res["mounted"] is True and res["mounted_source"] == "127.0.0.1@tcp:/lfs1"
    assert "noatime" in res["mounted_options"] and "flock" in res["mounted_options"]
    assert res["lnet_nids"] == ["10.20.0.5@tcp"]
    fstab_diff, mount_diff = res["diff"]
    assert fstab_diff["before"] == FSTAB and fstab_diff["after"] == FSTAB + line + "\n"
    assert mount_diff["before"] == "not mounted\n" and mount_diff["after"].startswith("127.0.0.1@tcp:/lfs1 ")

    again = host.module()
    assert again["changed"] is False and again["actions"] == [] and again["diff"] == [], again
    assert mounting(host.new_calls()) == []
    check_again = host.module(check=True)
    assert check_again["changed"] is False


def test_lustre_option_change_needs_an_unmount(host: Host) -> None:
    host.premount()
    res = host.module(options=["flock", "noatime", "user_xattr"])
    assert res["failed"] is True and "user_xattr wanted, not in effect" in res["msg"], res
    res = host.module(options=["flock", "noatime", "user_xattr"], allow_unmount=True)
    assert res["changed"] is True and "mount" in res["actions"] and "unmount" in res["actions"], res
    assert "user_xattr" in host.proc_mounts().split()[3].split(",")


def test_busy_unmount_names_the_processes_and_leaves_the_mount(host: Host) -> None:
    host.premount()
    host.busy(
        {"pid": 4242, "user": "alice", "command": "bash", "access": "..c.."},
        {"pid": 51234, "user": "bob", "command": "python3", "access": "F...."},
    )
    before = host.proc_mounts()
    res = host.module(state="unmounted")
    assert res["failed"] is True, res
    assert f"cannot unmount {host.mp}: target is busy" in res["msg"]
    assert "pid 4242 (alice) bash" in res["msg"] and "pid 51234 (bob) python3" in res["msg"]
    assert "force_unmount=lazy" in res["msg"]
    assert res["holders"] == [
        {"pid": 4242, "user": "alice", "command": "bash", "access": "..c.."},
        {"pid": 51234, "user": "bob", "command": "python3", "access": "F...."},
    ]
    assert host.new_calls() == [f"umount {host.mp}", f"fuser -vm {host.mp}"]
    assert host.proc_mounts() == before


def test_lazy_unmount_when_asked_keeps_fstab(host: Host) -> None:
    host.module()
    fstab = host.fstab.read_text()
    host.busy({"pid": 4242, "user": "alice", "command": "bash", "access": "..c.."})
    pred = host.module(check=True, state="unmounted", force_unmount="lazy")
    assert pred["changed"] is True and pred["actions"] == ["unmount"] and mounting(host.new_calls()) == []
    res = host.module(state="unmounted", force_unmount="lazy")
    assert res["changed"] is True and res["mounted"] is False, res
    assert mounting(host.new_calls()) == [f"umount -l {host.mp}"]
    assert host.proc_mounts() == "" and host.fstab.read_text() == fstab
    assert host.module(state="unmounted", force_unmount="lazy")["changed"] is False


def test_absent_unmounts_and_removes_the_fstab_line(host: Host) -> None:
    host.module()
    res = host.module(state="absent")
    assert res["changed"] is True and res["actions"] == ["unmount", "fstab"], res
    assert host.fstab.read_text() == FSTAB and host.proc_mounts() == ""
    assert res["fstab_line"] is None
    assert host.module(state="absent")["changed"] is False


@pytest.mark.parametrize("state", ["mounted", "present", "absent"])
def test_fstab_line_of_another_type_or_file_system_is_refused(host: Host, state: str) -> None:
    """Every fstab line for the mount point is checked, not only the last: an nfs line before the Lustre one (or a
    Lustre line of another file system) is someone else's, and replacing or removing it silently would lose it."""
    ours = f"localhost@tcp:/lfs1 {host.mp} lustre flock,noatime,_netdev 0 0\n"
    verb = "removing" if state == "absent" else "replacing"
    for extra, why in (
        (f"nfs01:/export {host.mp} nfs defaults 0 0\n", "of type nfs"),
        (f"127.0.0.1@tcp:/lfs2 {host.mp} lustre defaults,_netdev 0 0\n", "of Lustre file system lfs2"),
    ):
        fstab = FSTAB + extra + ours
        host.fstab.write_text(fstab)
        res = host.module(state=state)
        assert res["failed"] is True, res
        assert res["msg"] == (
            f"{host.fstab} line 3 for {host.mp} is {why}, not of Lustre file system lfs1; not "
            f"{verb} it: {extra.strip()}. Edit {host.fstab} by hand, or use another mount "
            "point."
        ), res
        assert host.fstab.read_text() == fstab
        assert mounting(host.new_calls()) == [] and not Path(host.mp).exists()
