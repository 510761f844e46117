"""aiinfra.hwaac.lnet run as Ansible runs it (tests/unit/ansible/module_run.py) against the stateful lnetctl and
modprobe fakes (tests/fakes/bin; state in HWAAC_FAKE_STATE, see the fakes' docstrings).

The fake host (tests/unit/ansible/fake_host.py) has ib0 (10.20.0.5) and ib1 (10.20.1.5); without lnet.json the
LNet modules are not loaded. The cases that are data are in tests/unit/ansible/cases/lnet.yml.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.unit.ansible.fake_host import FakeHost
from tests.unit.ansible.module_run import REPO, load_cases, run_case

MOUNT = "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.2@o2ib:/lfs1 /mnt/lfs1 lustre rw,flock,lazystatfs 0 0\n"
READ_ONLY = {"lnetctl net show", "lnetctl export --backup", "lnetctl global show"}

NETWORKS = [
    {
        "net": "o2ib0",
        "interfaces": ["ib0", "ib1"],
        "tunables": {"peer_credits": 32},
        "lnd_tunables": {"conns_per_peer": 1},
    }
]
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


class Host(FakeHost):
    """The fake host with its lnet.conf and mount table; the module's networks and global default to NETWORKS."""

    module_name = "lnet"

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp)
        self.conf = tmp / "etc" / "lnet.conf"

    def module(self, networks=None, glob=None, *, check: bool = False, **extra: object) -> dict:
        args = {
            "networks": NETWORKS if networks is None else networks,
            "global": {"discovery": 1} if glob is None else glob,
            **extra,
        }
        return self.run(self.case_args(args), check=check)

    def case_args(self, given: dict) -> dict:
        return {
            "networks": NETWORKS,
            "global": {"discovery": 1},
            "lnet_conf": str(self.conf),
            "proc_mounts": str(self.state / "proc_mounts"),
            **given,
        }

    def lnet(self, **state: object) -> None:
        self.write_state("lnet.json", state)

    def read(self) -> dict:
        return self.read_state("lnet.json")

    def nets(self) -> list[str]:
        """The nets LNet has, in order."""
        return [n["net"] for n in self.read()["nets"]]

    def mount(self) -> None:
        (self.state / "proc_mounts").write_text(MOUNT)


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path)


@pytest.mark.parametrize("case", load_cases("lnet"))
def test_case(host: Host, case: dict) -> None:
    run_case(host, case)


def ni(interface: str, ip: str, net: str = "o2ib", peer_credits: int = 32) -> dict:
    return {
        "interface": interface,
        "nid": f"{ip}@{net}",
        "status": "up",
        "tunables": {"peer_timeout": 180, "peer_credits": peer_credits, "peer_buffer_credits": 0, "credits": 256},
        "lnd_tunables": {"conns_per_peer": 1},
    }


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
        "global:\n  discovery: 1\n"
    )
    assert (conf_diff["before"], conf_diff["after"]) == ("", LNET_CONF)

    real = host.module()
    assert real["commands"] == predicted["commands"]
    assert real["diff"][0]["after"] == lnet_diff["after"]

    # check mode on a configured host that differs: only read calls
    host.clear_calls()
    before = (host.state / "lnet.json").read_text()
    predicted = host.module([{"net": "o2ib", "interfaces": ["ib1"], "tunables": {"peer_credits": 16}}], check=True)
    # ib0 is not declared any more, ib1 needs new tunables: both are deleted, ib1 is added again
    assert predicted["commands"] == [
        "lnetctl lnet configure",
        "lnetctl net del --net o2ib --if ib0",
        "lnetctl net del --net o2ib --if ib1",
        "lnetctl net add --net o2ib --if ib1 --peer-credits 16",
    ]
    assert (host.state / "lnet.json").read_text() == before
    assert set(host.calls()) <= READ_ONLY


def test_add_a_rail_to_a_mounted_client(host: Host) -> None:
    host.lnet(configured=True, nets=[{"net": "o2ib", "nis": [ni("ib0", "10.20.0.5")]}])
    host.mount()
    res = host.module()
    assert res.get("failed") is not True, res
    assert res["commands"] == [
        "lnetctl lnet configure",
        "lnetctl net add --net o2ib --if ib1 --peer-credits 32 --conns-per-peer 1",
    ]
    assert res["mounts"] == ["/mnt/lfs1"]
    assert [x["nid"] for x in host.read()["nets"][0]["nis"]] == ["10.20.0.5@o2ib", "10.20.1.5@o2ib"]
    assert (host.state / "proc_mounts").read_text() == MOUNT  # the mount was not touched
    assert not [c for c in host.calls() if "unconfigure" in c or c.startswith("modprobe")]
    assert host.module()["changed"] is False


def test_refusal_while_mounted_leaves_everything_as_it_was(host: Host) -> None:
    host.lnet(
        configured=True,
        nets=[{"net": "o2ib", "nis": [ni("ib0", "10.20.0.5", peer_credits=8), ni("ib1", "10.20.1.5", peer_credits=8)]}],
    )
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
        assert res["would_run"] == [
            "lnetctl lnet configure",
            "lnetctl net del --net o2ib --if ib0",
            "lnetctl net del --net o2ib --if ib1",
            "lnetctl net add --net o2ib --if ib0,ib1 --peer-credits 32 --conns-per-peer 1",
        ]
        assert (host.state / "lnet.json").read_text() == before
        assert set(host.calls()) <= READ_ONLY
        assert not host.conf.exists()


def test_unmounted_tunable_change_recreates_the_net(host: Host) -> None:
    host.lnet(
        configured=True,
        nets=[{"net": "o2ib", "nis": [ni("ib0", "10.20.0.5", peer_credits=8), ni("ib1", "10.20.1.5", peer_credits=8)]}],
    )
    res = host.module()
    # discovery is 1 already (the fake's default)
    assert res["commands"] == [
        "lnetctl lnet configure",
        "lnetctl net del --net o2ib --if ib0",
        "lnetctl net del --net o2ib --if ib1",
        "lnetctl net add --net o2ib --if ib0,ib1 --peer-credits 32 --conns-per-peer 1",
    ]
    assert [x["tunables"]["peer_credits"] for x in host.read()["nets"][0]["nis"]] == [32, 32]
    assert [x["interface"] for x in host.read()["nets"][0]["nis"]] == ["ib0", "ib1"]
    assert host.module()["changed"] is False


def test_configure_answering_eexist_is_not_an_error(host: Host) -> None:
    host.lnet(layout="2.16", configured=True, knobs={"configure_exclusive": True})
    res = host.module()
    assert res.get("failed") is not True, res
    assert res["commands"] == [
        "lnetctl lnet configure",
        "lnetctl net add --net o2ib --if ib0,ib1 --peer-credits 32 --conns-per-peer 1",
    ]
    assert len(host.read()["nets"][0]["nis"]) == 2


def test_o2ib_lnd_tunables_go_through_import(host: Host) -> None:
    host.lnet(configured=True)
    nets = [
        {
            "net": "o2ib",
            "interfaces": ["ib0"],
            "tunables": {"peer_credits": 32},
            "lnd_tunables": {"concurrent_sends": 64},
        }
    ]
    res = host.module(nets, {})
    assert res.get("failed") is not True, res
    assert res["commands"][1].startswith("lnetctl import <<'EOF'\nnet:\n    - net type: o2ib\n")
    assert host.read()["nets"][0]["nis"][0]["lnd_tunables"]["concurrent_sends"] == 64
    assert "              concurrent_sends: 64\n" in (host.state / "lnetctl-import.log").read_text()
    assert host.module(nets, {})["changed"] is False


def test_the_rendered_demo_client_file_converges(host: Host) -> None:
    """The lnet section hwaac renders for the demo's first GPU node (golden file), as the role passes it."""
    lnet = json.loads(
        (REPO / "tests" / "golden" / "demo" / "hosts" / "gpu-su01-h01" / "lustre-client.json").read_text()
    )["lnet"]
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


def test_lnet_conf_null_is_left_alone(host: Host) -> None:
    res = host.module(lnet_conf=None)
    assert res["changed"] is True
    assert len(res["diff"]) == 1
    assert not host.conf.exists()


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
