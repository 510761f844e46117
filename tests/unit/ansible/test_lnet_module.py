"""aiinfra.hwaac.lnet run as Ansible runs it (tests/unit/ansible/module_run.py) against the stateful lnetctl and
modprobe fakes (tests/fakes/bin; state in HWAAC_FAKE_STATE, see the fakes' docstrings).

The fake host has ib0 (10.20.0.5) and ib1 (10.20.1.5); without lnet.json the LNet modules are not loaded.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from tests.unit.ansible.module_run import run_module

REPO = Path(__file__).resolve().parents[3]
FAKE_BIN = REPO / "tests" / "fakes" / "bin"
MOUNT = "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.2@o2ib:/lfs1 /mnt/lfs1 lustre rw,flock,lazystatfs 0 0\n"
READ_ONLY = {"lnetctl net show", "lnetctl export --backup", "lnetctl global show"}

NETWORKS = [{"net": "o2ib0", "interfaces": ["ib0", "ib1"], "tunables": {"peer_credits": 32},
             "lnd_tunables": {"conns_per_peer": 1}}]
LNET_CONF = (
    "# Managed by hwaac (aiinfra.hwaac.lnet): lnetctl export --backup layout, read at boot by\n"
    "# lnet.service (lnetctl import /etc/lnet.conf). Local edits are overwritten.\n"
    "net:\n"
    "    - net type: o2ib\n"
    "      local NI(s):\n"
    "        - interfaces:\n"
    "              0: ib0\n"
    "          tunables:\n"
    "              peer_credits: 32\n"
    "          lnd tunables:\n"
    "              conns_per_peer: 1\n"
    "        - interfaces:\n"
    "              0: ib1\n"
    "          tunables:\n"
    "              peer_credits: 32\n"
    "          lnd tunables:\n"
    "              conns_per_peer: 1\n"
    "global:\n"
    "    discovery: 1\n"
)


class Host:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.state = tmp / "fake"
        self.state.mkdir()
        self.conf = tmp / "etc" / "lnet.conf"
        self.env = {**os.environ, "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}",
                    "HWAAC_FAKE_STATE": str(self.state), "PYTHONPATH": str(REPO)}
        self.n = 0

    def module(self, networks=None, glob=None, *, check: bool = False, **extra: object) -> dict:
        self.n += 1
        args = {"networks": NETWORKS if networks is None else networks,
                "global": {"discovery": 1} if glob is None else glob,
                "lnet_conf": str(self.conf), "proc_mounts": str(self.state / "proc_mounts"), **extra}
        return run_module("lnet", args, self.tmp / f"args{self.n}.json", self.env, check=check)

    def lnet(self, **state: object) -> None:
        (self.state / "lnet.json").write_text(json.dumps(state))

    def read(self) -> dict:
        return json.loads((self.state / "lnet.json").read_text())

    def mount(self) -> None:
        (self.state / "proc_mounts").write_text(MOUNT)

    def calls(self) -> list[str]:
        path = self.state / "calls.log"
        return path.read_text().splitlines() if path.exists() else []

    def clear_calls(self) -> None:
        (self.state / "calls.log").unlink(missing_ok=True)


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path)


def ni(interface: str, ip: str, net: str = "o2ib", peer_credits: int = 32) -> dict:
    return {"interface": interface, "nid": f"{ip}@{net}", "status": "up",
            "tunables": {"peer_timeout": 180, "peer_credits": peer_credits, "peer_buffer_credits": 0,
                         "credits": 256},
            "lnd_tunables": {"conns_per_peer": 1}}


EXPECTED_RUN = [
    "modprobe lnet",
    "lnetctl lnet configure",
    "lnetctl net add --net o2ib --if ib0,ib1 --peer-credits 32 --conns-per-peer 1",
    "lnetctl set discovery 0",
]


def test_converge_from_nothing_then_nothing_changes(host: Host) -> None:
    res = host.module(glob={"discovery": 0})
    assert res.get("failed") is not True, res
    assert res["changed"] is True
    assert res["lnet_status"] == "not_loaded"
    assert res["commands"] == EXPECTED_RUN
    assert res["nids"] == ["10.20.0.5@o2ib", "10.20.1.5@o2ib"]
    state = host.read()
    assert [(n["net"], [x["interface"] for x in n["nis"]]) for n in state["nets"]] == [("o2ib", ["ib0", "ib1"])]
    assert state["nets"][0]["nis"][1]["tunables"]["peer_credits"] == 32
    assert state["global"]["discovery"] == 0
    assert host.conf.read_text() == LNET_CONF.replace("discovery: 1", "discovery: 0")
    assert host.calls() == ["lnetctl net show", *EXPECTED_RUN, "lnetctl net show", "lnetctl export --backup"]

    first_conf = host.conf.read_bytes()
    mtime = host.conf.stat().st_mtime_ns
    host.clear_calls()
    again = host.module(glob={"discovery": 0})
    assert again["changed"] is False
    assert again["commands"] == []
    assert again["lnet_conf_changed"] is False
    assert host.conf.read_bytes() == first_conf
    assert host.conf.stat().st_mtime_ns == mtime
    assert set(host.calls()) <= READ_ONLY


def test_check_mode_predicts_and_changes_nothing(host: Host) -> None:
    predicted = host.module(check=True)
    assert predicted["changed"] is True
    assert predicted["commands"] == [*EXPECTED_RUN[:3], "lnetctl set discovery 1"]
    assert predicted["lnet_conf_changed"] is True
    assert not host.conf.exists()
    assert not (host.state / "lnet.json").exists()  # modprobe did not run
    assert host.calls() == ["lnetctl net show"]
    lnet_diff, conf_diff = predicted["diff"]
    assert lnet_diff["before"] == "net: {}\nglobal:\n  discovery: null\n"
    assert lnet_diff["after"] == (
        "net:\n  o2ib:\n"
        "  - interface: ib0\n    tunables:\n      peer_credits: 32\n    lnd_tunables:\n      conns_per_peer: 1\n"
        "  - interface: ib1\n    tunables:\n      peer_credits: 32\n    lnd_tunables:\n      conns_per_peer: 1\n"
        "global:\n  discovery: 1\n")
    assert (conf_diff["before"], conf_diff["after"]) == ("", LNET_CONF)

    real = host.module()
    assert real["commands"] == predicted["commands"]
    assert real["diff"][0]["after"] == lnet_diff["after"]

    # check mode on a configured host that differs: only read calls
    host.clear_calls()
    before = (host.state / "lnet.json").read_text()
    predicted = host.module([{"net": "o2ib", "interfaces": ["ib1"], "tunables": {"peer_credits": 16}}], check=True)
    # ib0 is not declared any more, ib1 needs new tunables: both are deleted, ib1 is added again
    assert predicted["commands"] == ["lnetctl lnet configure", "lnetctl net del --net o2ib --if ib0",
                                     "lnetctl net del --net o2ib --if ib1",
                                     "lnetctl net add --net o2ib --if ib1 --peer-credits 16"]
    assert (host.state / "lnet.json").read_text() == before
    assert set(host.calls()) <= READ_ONLY


def test_add_a_rail_to_a_mounted_client(host: Host) -> None:
    host.lnet(configured=True, nets=[{"net": "o2ib", "nis": [ni("ib0", "10.20.0.5")]}])
    host.mount()
    res = host.module()
    assert res.get("failed") is not True, res
    assert res["commands"] == ["lnetctl lnet configure",
                               "lnetctl net add --net o2ib --if ib1 --peer-credits 32 --conns-per-peer 1"]
    assert res["mounts"] == ["/mnt/lfs1"]
    assert [x["nid"] for x in host.read()["nets"][0]["nis"]] == ["10.20.0.5@o2ib", "10.20.1.5@o2ib"]
    assert (host.state / "proc_mounts").read_text() == MOUNT  # the mount was not touched
    assert not [c for c in host.calls() if "unconfigure" in c or c.startswith("modprobe")]
    assert host.module()["changed"] is False


def test_refusal_while_mounted_leaves_everything_as_it_was(host: Host) -> None:
    host.lnet(configured=True, nets=[{"net": "o2ib", "nis": [ni("ib0", "10.20.0.5", peer_credits=8),
                                                             ni("ib1", "10.20.1.5", peer_credits=8)]}])
    host.mount()
    before = (host.state / "lnet.json").read_text()
    for check in (True, False):
        host.clear_calls()
        res = host.module(check=check)
        assert res["failed"] is True
        assert res["msg"].startswith("refusing to change LNet while Lustre is mounted (/mnt/lfs1): ")
        assert "Unmount /mnt/lfs1 and run again, or run in a reboot window" in res["msg"]
        # conns_per_peer is 1 already: only peer_credits differs; both NIs would have to be re-created
        assert res["refused"] == [
            "NI ib0 (10.20.0.5@o2ib) of net o2ib needs new tunables (peer_credits 8 -> 32); LNet cannot change an "
            "existing NI's tunables: deleting primary NI ib0 of net o2ib (the NID the servers know this client by) "
            "while /mnt/lfs1 is mounted",
            "NI ib1 (10.20.1.5@o2ib) of net o2ib needs new tunables (peer_credits 8 -> 32); LNet cannot change an "
            "existing NI's tunables: deleting NI ib1 of net o2ib (RPCs in flight on it would be dropped) while "
            "/mnt/lfs1 is mounted",
        ]
        assert res["commands"] == []
        assert res["would_run"] == ["lnetctl lnet configure", "lnetctl net del --net o2ib --if ib0",
                                    "lnetctl net del --net o2ib --if ib1",
                                    "lnetctl net add --net o2ib --if ib0,ib1 --peer-credits 32 --conns-per-peer 1"]
        assert (host.state / "lnet.json").read_text() == before
        assert set(host.calls()) <= READ_ONLY
        assert not host.conf.exists()


def test_unmounted_tunable_change_recreates_the_net(host: Host) -> None:
    host.lnet(configured=True, nets=[{"net": "o2ib", "nis": [ni("ib0", "10.20.0.5", peer_credits=8),
                                                             ni("ib1", "10.20.1.5", peer_credits=8)]}])
    res = host.module()
    # discovery is 1 already (the fake's default)
    assert res["commands"] == ["lnetctl lnet configure", "lnetctl net del --net o2ib --if ib0",
                               "lnetctl net del --net o2ib --if ib1",
                               "lnetctl net add --net o2ib --if ib0,ib1 --peer-credits 32 --conns-per-peer 1"]
    assert [x["tunables"]["peer_credits"] for x in host.read()["nets"][0]["nis"]] == [32, 32]
    assert [x["interface"] for x in host.read()["nets"][0]["nis"]] == ["ib0", "ib1"]
    assert host.module()["changed"] is False


def test_configure_answering_eexist_is_not_an_error(host: Host) -> None:
    host.lnet(layout="2.16", configured=True, knobs={"configure_exclusive": True})
    res = host.module()
    assert res.get("failed") is not True, res
    assert res["commands"] == ["lnetctl lnet configure",
                               "lnetctl net add --net o2ib --if ib0,ib1 --peer-credits 32 --conns-per-peer 1"]
    assert len(host.read()["nets"][0]["nis"]) == 2


def test_lnet_down_is_configured_then_added(host: Host) -> None:
    host.lnet(configured=False)
    res = host.module()
    assert res["lnet_status"] == "down"
    # with LNet down the global settings cannot be read, so the declared ones are set
    assert res["commands"] == ["lnetctl lnet configure",
                               "lnetctl net add --net o2ib --if ib0,ib1 --peer-credits 32 --conns-per-peer 1",
                               "lnetctl set discovery 1"]
    assert host.read()["configured"] is True
    assert host.module()["changed"] is False


def test_lnet_brought_up_by_a_mount_is_configured_first(host: Host) -> None:
    """A mount loaded LNet without configuration: default tcp on the first interface, not through lnetctl."""
    host.lnet(configured=True, dlc=False, interfaces={"eth0": "10.0.2.15", "ib0": "10.20.0.5", "ib1": "10.20.1.5"},
              nets=[{"net": "tcp", "nis": [ni("eth0", "10.0.2.15", "tcp", 8)]}])
    res = host.module()
    assert res.get("failed") is not True, res
    assert res["commands"] == ["lnetctl lnet configure", "lnetctl net del --net tcp",
                               "lnetctl net add --net o2ib --if ib0,ib1 --peer-credits 32 --conns-per-peer 1"]
    assert [n["net"] for n in host.read()["nets"]] == ["o2ib"]


def test_216_layout_converges_and_stays(host: Host) -> None:
    host.lnet(layout="2.16", configured=True)
    res = host.module(glob={"discovery": 1, "max_intf": 300})
    assert res.get("failed") is not True, res
    assert res["commands"] == ["lnetctl lnet configure",
                               "lnetctl net add --net o2ib --if ib0,ib1 --peer-credits 32 --conns-per-peer 1",
                               "lnetctl set max_interfaces 300"]
    again = host.module(glob={"discovery": 1, "max_intf": 300})
    assert again["changed"] is False
    assert again["state"]["nets"][0]["nis"][0]["nid"] == "10.20.0.5@o2ib"


def test_o2ib_lnd_tunables_go_through_import(host: Host) -> None:
    host.lnet(configured=True)
    nets = [{"net": "o2ib", "interfaces": ["ib0"], "tunables": {"peer_credits": 32},
             "lnd_tunables": {"concurrent_sends": 64}}]
    res = host.module(nets, {})
    assert res.get("failed") is not True, res
    assert res["commands"][1].startswith("lnetctl import <<'EOF'\nnet:\n    - net type: o2ib\n")
    assert host.read()["nets"][0]["nis"][0]["lnd_tunables"]["concurrent_sends"] == 64
    assert "              concurrent_sends: 64\n" in (host.state / "lnetctl-import.log").read_text()
    assert host.module(nets, {})["changed"] is False


def test_a_value_that_does_not_stick_fails_the_run(host: Host) -> None:
    host.lnet(configured=True, knobs={"ignore_tunables": ["concurrent_sends"]})
    nets = [{"net": "o2ib", "interfaces": ["ib0"], "lnd_tunables": {"concurrent_sends": 64}}]
    res = host.module(nets, {})
    assert res["failed"] is True
    assert "LNet differs from the desired state after applying" in res["msg"]
    assert "concurrent_sends 8 -> 64" in res["msg"]
    assert not host.conf.exists()  # lnet.conf is written only after a verified run


def test_lnetctl_error_is_reported(host: Host) -> None:
    host.lnet(configured=True, interfaces={"ib0": "10.20.0.5"})
    res = host.module()
    assert res["failed"] is True
    assert res["msg"] == ("'lnetctl net add --net o2ib --if ib0,ib1 --peer-credits 32 --conns-per-peer 1' failed "
                          "(rc=255): add net: errno -1 couldn't query intf ib1")
    assert res["commands"][-1].startswith("lnetctl net add")


def test_the_rendered_demo_client_file_converges(host: Host) -> None:
    """The lnet section hwaac renders for the demo's first GPU node (golden file), as the role passes it."""
    lnet = json.loads((REPO / "tests" / "golden" / "demo" / "hosts" / "gpu-su01-h01" / "lustre-client.json")
                      .read_text())["lnet"]
    interfaces = [i for n in lnet["networks"] for i in n["interfaces"]]
    host.lnet(configured=False, interfaces={name: f"10.20.{k}.5" for k, name in enumerate(interfaces)})
    res = host.module(lnet["networks"], lnet["global"])
    assert res.get("failed") is not True, res
    assert res["commands"][0] == "lnetctl lnet configure"
    assert res["nids"] == [f"10.20.{k}.5@o2ib" for k in range(len(interfaces))]
    rendered = yaml.safe_load(host.conf.read_text())
    assert [ni["interfaces"][0] for ni in rendered["net"][0]["local NI(s)"]] == interfaces
    assert rendered["global"] == lnet["global"]
    again = host.module(lnet["networks"], lnet["global"])
    assert (again["changed"], again["commands"]) == (False, [])


@pytest.mark.parametrize(
    ("networks", "glob", "expected"),
    [
        ([{"net": "o2ib", "interfaces": ["ib0"]}, {"net": "tcp", "interfaces": ["ib0"]}], {},
         "networks[1].interfaces[0]: 'ib0' is not valid; an interface not already used by networks[0] (o2ib)"),
        ([{"net": "ib", "interfaces": ["ib0"]}], {}, "networks[0].net: 'ib' is not valid; o2ib or tcp"),
        ([{"net": "o2ib", "interfaces": []}], {}, "networks[0].interfaces: [] is not valid; a non-empty list"),
        ([], {"max_intf": "many"}, "global.max_intf: 'many' is not valid; an integer >= 0"),
    ],
)
def test_bad_input_fails_before_anything_runs(host: Host, networks, glob, expected) -> None:
    res = host.module(networks, glob)
    assert res["failed"] is True
    assert res["msg"].startswith(expected)
    assert host.calls() == []


def test_lnet_conf_null_is_left_alone(host: Host) -> None:
    res = host.module(lnet_conf=None)
    assert res["changed"] is True
    assert len(res["diff"]) == 1
    assert not host.conf.exists()


def test_purge_false_keeps_an_undeclared_net(host: Host) -> None:
    host.lnet(configured=True, interfaces={"eth0": "10.30.0.5", "ib0": "10.20.0.5", "ib1": "10.20.1.5"},
              nets=[{"net": "tcp", "nis": [ni("eth0", "10.30.0.5", "tcp", 8)]}])
    res = host.module(purge=False)
    assert res["commands"] == ["lnetctl lnet configure",
                               "lnetctl net add --net o2ib --if ib0,ib1 --peer-credits 32 --conns-per-peer 1"]
    assert [n["net"] for n in host.read()["nets"]] == ["tcp", "o2ib"]
    assert "nets not declared are kept (purge=false): tcp" in json.dumps(res["warnings"])
    assert host.module(purge=False)["changed"] is False


def test_files_that_cannot_be_read_or_written_fail_clearly(host: Host) -> None:
    (host.state / "proc_mounts").mkdir()
    res = host.module()
    assert res["failed"] is True and res["msg"] == f"cannot read {host.state / 'proc_mounts'}: Is a directory", res
    assert host.calls() == []
    (host.state / "proc_mounts").rmdir()
    (host.tmp / "etc").write_text("")  # etc is a file: lnet.conf cannot be read, and nothing runs
    res = host.module()
    assert res["failed"] is True and res["msg"] == f"cannot read {host.conf}: Not a directory", res
    assert set(host.calls()) <= READ_ONLY
    (host.tmp / "etc").unlink()
    (host.tmp / "etc").symlink_to(host.tmp / "gone")  # lnet.conf is missing, and its directory cannot be made
    res = host.module()
    assert res["failed"] is True, res
    assert res["msg"] == f"LNet was configured, but cannot write {host.conf}: File exists"
    assert res["commands"][:3] == EXPECTED_RUN[:3]  # LNet was changed before the file could not be written
    assert res["nids"] == ["10.20.0.5@o2ib", "10.20.1.5@o2ib"]
