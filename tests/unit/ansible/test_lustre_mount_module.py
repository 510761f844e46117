"""aiinfra.hwaac.lustre_mount against the stateful mount, umount, fuser and lctl fakes (tests/fakes/bin).

The module runs as Ansible runs it (tests/unit/ansible/module_run.py), with tests/fakes/bin first on PATH and
HWAAC_FAKE_STATE in the test's tmp directory. The fake host has LNet configured on tcp (10.20.0.5@tcp, the
``lnet.json`` shape of the shared fake-state contract) unless a test says otherwise; the MGS is ``localhost@tcp``
(resolved by getaddrinfo to 127.0.0.1, as mount.lustre and the module both do), so /proc/mounts shows
``127.0.0.1@tcp:/lfs1``. The mount point and fstab live under tmp_path.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.unit.ansible.module_run import run_module

REPO = Path(__file__).resolve().parents[3]
FAKE_BIN = REPO / "tests" / "fakes" / "bin"
LNET_TCP = {"configured": True, "layout": "2.15", "version": "2.15.5", "interfaces": {"eth0": "10.20.0.5"},
            "nets": [{"net": "tcp", "nis": [{"interface": "eth0", "nid": "10.20.0.5@tcp", "status": "up"}]}],
            "global": {}}
FSTAB = "# static table\nUUID=1B2C-1908 /boot/efi vfat defaults,noatime 0 2\n"


class Host:
    """A fake Lustre client host: fake state, fstab, mount point, and a way to run the module."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.state = tmp / "fake"
        self.state.mkdir()
        self.env = {**os.environ, "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}",
                    "HWAAC_FAKE_STATE": str(self.state), "PYTHONPATH": str(REPO)}
        self.fstab = tmp / "fstab"
        self.fstab.write_text(FSTAB)
        self.mp = str(tmp / "mnt" / "lfs1")
        self.runs = 0
        self.lnet(LNET_TCP)

    def lnet(self, data: dict | None) -> None:
        path = self.state / "lnet.json"
        if data is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(json.dumps(data))

    def args(self, **over: object) -> dict:
        base = {"name": "lfs1", "mgs": [["localhost@tcp"]], "mount_point": self.mp, "options": ["flock", "noatime"],
                "fstab": str(self.fstab), "proc_mounts": str(self.state / "proc_mounts")}
        return {**base, **over}

    def module(self, *, check: bool = False, **over: object) -> dict:
        self.runs += 1
        self.mark = len(self.calls())
        return run_module("lustre_mount", self.args(**over), self.tmp / f"args{self.runs}.json", self.env, check=check)

    def tool(self, *argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(list(argv), env=self.env, capture_output=True, text=True)

    def calls(self) -> list[str]:
        path = self.state / "calls.log"
        return path.read_text().splitlines() if path.exists() else []

    def new_calls(self) -> list[str]:
        return self.calls()[self.mark:]

    def proc_mounts(self) -> str:
        path = self.state / "proc_mounts"
        return path.read_text() if path.exists() else ""

    def premount(self, source: str = "localhost@tcp:/lfs1", options: str = "flock,noatime,_netdev") -> None:
        Path(self.mp).mkdir(parents=True, exist_ok=True)
        res = self.tool("mount", "-t", "lustre", "-o", options, source, self.mp)
        assert res.returncode == 0, res.stderr

    def busy(self, *procs: dict) -> None:
        (self.state / "busy.json").write_text(json.dumps({self.mp: list(procs)}))


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path)


def mounting(calls: list[str]) -> list[str]:
    return [c for c in calls if c.split()[0] in ("mount", "umount")]


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


def test_host_name_nid_matches_the_ip_nid_in_proc_mounts(host: Host) -> None:
    host.premount("127.0.0.1@tcp0:/lfs1")
    assert host.proc_mounts().startswith("127.0.0.1@tcp:/lfs1 ")
    host.fstab.write_text(FSTAB + f"localhost@tcp:/lfs1 {host.mp} lustre flock,noatime,_netdev 0 0\n")
    res = host.module(mgs=[["localhost@tcp0"]])
    assert res["changed"] is False and res["differences"] == [], res
    assert mounting(host.new_calls()) == [] and "lctl list_nids" not in host.new_calls()


def test_other_mgs_mounted_needs_allow_unmount(host: Host) -> None:
    host.premount("127.0.0.2@tcp:/lfs1")
    res = host.module()
    assert res["failed"] is True
    assert "differs from the wanted mount in a way a remount cannot change" in res["msg"]
    assert "mounted from MGS 127.0.0.2@tcp, wanted 127.0.0.1@tcp (resolved)" in res["msg"]
    assert "allow_unmount=true" in res["msg"]
    assert mounting(host.new_calls()) == [] and host.fstab.read_text() == FSTAB

    res = host.module(allow_unmount=True)
    assert res["changed"] is True and res["actions"] == ["fstab", "unmount", "mount"], res
    assert mounting(host.new_calls()) == [f"umount {host.mp}",
                                          f"mount -t lustre -o flock,noatime,_netdev localhost@tcp:/lfs1 {host.mp}"]
    assert host.proc_mounts().startswith("127.0.0.1@tcp:/lfs1 ")


def test_remountable_option_is_remounted(host: Host) -> None:
    host.premount()
    host.fstab.write_text(FSTAB + f"localhost@tcp:/lfs1 {host.mp} lustre flock,_netdev 0 0\n")
    pred = host.module(check=True, options=["flock"])
    assert pred["changed"] is True and pred["actions"] == ["remount"], pred
    assert pred["differences"] == ["noatime set, not wanted"]
    assert mounting(host.new_calls()) == []
    res = host.module(options=["flock"])
    assert res["actions"] == ["remount"], res
    assert mounting(host.new_calls()) == [f"mount -t lustre -o remount,flock,_netdev 127.0.0.1@tcp:/lfs1 {host.mp}"]
    assert "noatime" not in host.proc_mounts().split()[3].split(",")
    assert host.module(options=["flock"])["changed"] is False


def test_lustre_option_change_needs_an_unmount(host: Host) -> None:
    host.premount()
    res = host.module(options=["flock", "noatime", "user_xattr"])
    assert res["failed"] is True and "user_xattr wanted, not in effect" in res["msg"], res
    res = host.module(options=["flock", "noatime", "user_xattr"], allow_unmount=True)
    assert res["changed"] is True and "mount" in res["actions"] and "unmount" in res["actions"], res
    assert "user_xattr" in host.proc_mounts().split()[3].split(",")


def test_busy_unmount_names_the_processes_and_leaves_the_mount(host: Host) -> None:
    host.premount()
    host.busy({"pid": 4242, "user": "alice", "command": "bash", "access": "..c.."},
              {"pid": 51234, "user": "bob", "command": "python3", "access": "F...."})
    before = host.proc_mounts()
    res = host.module(state="unmounted")
    assert res["failed"] is True, res
    assert f"cannot unmount {host.mp}: target is busy" in res["msg"]
    assert "pid 4242 (alice) bash" in res["msg"] and "pid 51234 (bob) python3" in res["msg"]
    assert "force_unmount=lazy" in res["msg"]
    assert res["holders"] == [{"pid": 4242, "user": "alice", "command": "bash", "access": "..c.."},
                              {"pid": 51234, "user": "bob", "command": "python3", "access": "F...."}]
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


def test_present_writes_fstab_only(host: Host) -> None:
    res = host.module(state="present")
    assert res["changed"] is True and res["actions"] == ["fstab"] and res["mounted"] is False, res
    assert mounting(host.new_calls()) == [] and host.proc_mounts() == ""


def test_lnet_not_configured_is_refused_before_anything_changes(host: Host) -> None:
    host.lnet({**LNET_TCP, "configured": False, "nets": []})
    res = host.module()
    assert res["failed"] is True, res
    assert "LNet is not up on this node (lctl list_nids: IOC_LIBCFS_GET_NI error 100: Network is down)" in res["msg"]
    assert 'default networks="tcp"' in res["msg"] and "aiinfra.hwaac.lnet" in res["msg"]
    assert mounting(host.new_calls()) == [] and host.fstab.read_text() == FSTAB and not Path(host.mp).exists()
    host.lnet(None)  # modules not loaded at all
    res = host.module()
    assert res["failed"] is True and "opening /dev/lnet failed" in res["msg"], res


def test_lnet_without_a_nid_on_the_mgs_net_is_refused(host: Host) -> None:
    res = host.module(mgs=[["10.20.0.1@o2ib"]])
    assert res["failed"] is True, res
    assert "LNet has no NID on the MGS network (o2ib); local NIDs: 10.20.0.5@tcp" in res["msg"]
    assert mounting(host.new_calls()) == []


def test_mount_failure_reports_mount_lustre(host: Host) -> None:
    (host.state / "lustre.json").write_text(json.dumps({"knobs": {"unknown_filesystems": ["lfs1"]}}))
    res = host.module()
    assert res["failed"] is True, res
    assert "mount.lustre: mount localhost@tcp:/lfs1 at" in res["msg"]
    assert "Is the filesystem name correct?" in res["msg"]


def test_other_file_system_on_the_mount_point_is_left_alone(host: Host) -> None:
    host.premount("127.0.0.1@tcp:/lfs2")
    res = host.module(state="unmounted")
    assert res["failed"] is True and "not file system lfs1; not unmounting it" in res["msg"], res
    assert mounting(host.new_calls()) == []


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"name": "lustre-fs1"}, "name: 'lustre-fs1' is not a valid Lustre file system name: 1 to 8 characters"),
        ({"mount_point": "mnt/lfs1"}, "mount_point: 'mnt/lfs1' must be an absolute, normalised path"),
        ({"mgs": [["10.20.0.1"]]}, "mgs[0][0]: '10.20.0.1' is not a NID: expected ADDRESS@NET"),
        ({"mgs": [["10.20.0.1@o2ib", "10.20.0.999@o2ib"]]}, "mgs[0][1]: '10.20.0.999@o2ib' is not a NID"),
        ({"options": ["flock,noatime"]}, "options[0]: 'flock,noatime' is not one mount option"),
    ],
)
def test_bad_input_names_option_and_value(host: Host, over: dict, message: str) -> None:
    res = host.module(**over)
    assert res["failed"] is True and message in res["msg"], res
    assert host.calls() == []


def test_2_17_mgsname_option_and_equivalent_fstab_line_change_nothing(host: Host) -> None:
    (host.state / "lustre.json").write_text(json.dumps({"knobs": {"mgsname": True, "version": "2.17.0"}}))
    host.premount(options="noatime,flock,_netdev")
    assert "mgsname=localhost@tcp" in host.proc_mounts()
    # same line with tabs and the options in another order: an equal entry, left as it is
    fstab = FSTAB + f"localhost@tcp:/lfs1\t{host.mp}\tlustre\tnoatime,_netdev,flock\t0 0\n"
    host.fstab.write_text(fstab)
    res = host.module()
    assert res["changed"] is False and res["differences"] == [], res
    assert host.fstab.read_text() == fstab


@pytest.mark.parametrize("state", ["mounted", "present", "absent"])
def test_fstab_line_of_another_type_or_file_system_is_refused(host: Host, state: str) -> None:
    """Every fstab line for the mount point is checked, not only the last: an nfs line before the Lustre one (or a
    Lustre line of another file system) is someone else's, and replacing or removing it silently would lose it."""
    ours = f"localhost@tcp:/lfs1 {host.mp} lustre flock,noatime,_netdev 0 0\n"
    verb = "removing" if state == "absent" else "replacing"
    for extra, why in ((f"nfs01:/export {host.mp} nfs defaults 0 0\n", "of type nfs"),
                       (f"127.0.0.1@tcp:/lfs2 {host.mp} lustre defaults,_netdev 0 0\n", "of Lustre file system lfs2")):
        fstab = FSTAB + extra + ours
        host.fstab.write_text(fstab)
        res = host.module(state=state)
        assert res["failed"] is True, res
        assert res["msg"] == (f"{host.fstab} line 3 for {host.mp} is {why}, not of Lustre file system lfs1; not "
                              f"{verb} it: {extra.strip()}. Edit {host.fstab} by hand, or use another mount "
                              "point."), res
        assert host.fstab.read_text() == fstab
        assert mounting(host.new_calls()) == [] and not Path(host.mp).exists()


def test_duplicate_fstab_lines_of_ours_become_one(host: Host) -> None:
    line = f"localhost@tcp:/lfs1 {host.mp} lustre flock,noatime,_netdev 0 0"
    host.fstab.write_text(FSTAB + line + "\n" + line + "\n")
    res = host.module(state="present")
    assert res["changed"] is True and res["actions"] == ["fstab"], res
    assert host.fstab.read_text() == FSTAB + line + "\n"
    assert host.module(state="present")["changed"] is False
