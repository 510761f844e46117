"""aiinfra.hwaac.roce_qos against the mlnx_qos / cma_roce_tos fakes and a fake sysfs/configfs tree.

How the module is run: as Ansible runs an unwrapped module, a separate ``python -m
ansible_collections.aiinfra.hwaac.plugins.modules.roce_qos ARGS.json`` with ``{"ANSIBLE_MODULE_ARGS": {...}}``
(``AnsibleModule._load_params`` reads an args file named on the command line), the repository root on PYTHONPATH,
``tests/fakes/bin`` first on PATH and ``HWAAC_FAKE_STATE`` in the test's tmp directory; ``sysfs_root`` and
``configfs_root`` point at a tree built by ``tests.fakes.sysfs.build_roce_tree``.

Starting state: the mlnx_qos fake's defaults (trust pcp, no PFC, DSCP d -> priority d >> 3), cma_roce_tos 0, and the
tree's MTU 1500, ECN 0 everywhere, CNP 0/0, no global traffic class. The fake host is
tests/unit/ansible/fake_host.py; the cases that are data are in tests/unit/ansible/cases/roce_qos.yml.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.sysfs import build_roce_tree
from tests.unit.ansible.fake_host import FakeHost
from tests.unit.ansible.module_run import REPO, load_cases, run_case

DEMO_NIC = REPO / "tests" / "golden" / "demo" / "hosts" / "gpu-su01-h01" / "nic-roce.json"


class Host(FakeHost):
    """The fake host with a sysfs/configfs tree for ``ports`` (interface, HCA); no fake has state before a run."""

    module_name = "roce_qos"

    def __init__(self, tmp: Path, ports: list[tuple[str, str]] | None = None, **tree: object) -> None:
        super().__init__(tmp, create_state=False)
        self.sys = tmp / "sys"
        self.cfg = tmp / "cfg"
        build_roce_tree(self.sys, self.cfg, ports or [("rail0", "mlx5_0")], **tree)

    def module(self, params: dict, *, check: bool = False) -> dict:
        return self.run(self.case_args(params), check=check)

    def case_args(self, given: dict) -> dict:
        return {"sysfs_root": str(self.sys), "configfs_root": str(self.cfg), **given}

    def tool(self, *cmd: str) -> str:
        return self.stdout(*cmd)

    def sysfs(self, rel: str) -> str:
        return (self.sys / rel).read_text().strip()

    def unlink_sysfs(self, rel: str) -> None:
        (self.sys / rel).unlink()


def demo_port(index: int = 0) -> dict:
    """A port (0: the first) of the demo's first GPU node as hwaac renders it, reduced to the module's options."""
    port = json.loads(DEMO_NIC.read_text())["ports"][index]
    keys = ("interface", "hca", "trust", "pfc", "dscp2prio", "roce_tos", "ecn", "cnp", "mtu")
    return {k: port[k] for k in keys}


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path)


@pytest.mark.parametrize("case", load_cases("roce_qos"))
def test_case(host: Host, case: dict) -> None:
    run_case(host, case)


def test_check_mode_predicts_the_run_and_the_second_run_changes_nothing(host: Host) -> None:
    port = demo_port()
    assert port["pfc"] == "0,0,0,1,0,0,0,0"
    assert port["roce_tos"] == 106
    expected = {
        "mtu": {"before": 1500, "after": 9000},
        "trust": {"before": "pcp", "after": "dscp"},
        "pfc": {"before": "0,0,0,0,0,0,0,0", "after": "0,0,0,1,0,0,0,0"},
        "roce_tos.rdma_cm": {"before": 0, "after": 106},
        "roce_tos.traffic_class": {"before": None, "after": 106},
        "ecn.np.3": {"before": 0, "after": 1},
        "ecn.rp.3": {"before": 0, "after": 1},
        "cnp.dscp": {"before": 0, "after": 48},
        "cnp.priority": {"before": 0, "after": 6},
    }
    predicted = host.module(port, check=True)
    assert predicted["changed"] is True
    assert predicted["changes"] == expected
    # under trust pcp the map cannot be read; the demo's entries are listed, not guessed
    assert predicted["unverified"] == {"dscp2prio.26": 3, "dscp2prio.48": 6}
    assert predicted["diff"]["before"]["trust"] == "pcp"
    assert host.sysfs("class/net/rail0/mtu") == "1500"  # nothing written
    assert "Priority trust state: pcp" in host.tool("mlnx_qos", "-i", "rail0")

    real = host.module(port)
    assert real["changed"] is True
    assert real["changes"] == expected  # DSCP 26 -> 3 and 48 -> 6 are the default map already
    assert host.sysfs("class/net/rail0/mtu") == "9000"
    assert host.sysfs("class/net/rail0/ecn/roce_np/enable/3") == "1"
    assert host.sysfs("class/net/rail0/ecn/roce_np/enable/2") == "0"
    assert host.sysfs("class/infiniband/mlx5_0/tc/1/traffic_class") == "106"
    assert host.tool("cma_roce_tos", "-d", "mlx5_0").strip() == "106"
    assert (host.cfg / "rdma_cm" / "mlx5_0").is_dir()
    assert real["mlnx_qos"]["trust"] == "dscp"
    assert real["mlnx_qos"]["pfc"] == "0,0,0,1,0,0,0,0"
    cmds = [r.splitlines()[0] for r in real["raw"]]
    assert any(c.endswith("mlnx_qos -i rail0 --trust dscp --pfc 0,0,0,1,0,0,0,0") for c in cmds)
    assert not any("--dscp2prio" in c for c in cmds)

    again = host.module(port)
    assert again["changed"] is False
    assert again["changes"] == {}
    assert again["unverified"] == {}


def test_dscp_map_change_predicted_when_trust_is_dscp(host: Host) -> None:
    host.tool("mlnx_qos", "-i", "rail0", "--trust", "dscp")
    params = {"interface": "rail0", "trust": "dscp", "dscp2prio": {"26": 5, "48": 6}}
    predicted = host.module(params, check=True)
    assert predicted["changes"] == {"dscp2prio.26": {"before": 3, "after": 5}}
    real = host.module(params)
    assert real["changes"] == predicted["changes"]
    assert any(r.splitlines()[0].endswith("--dscp2prio set,26,5") for r in real["raw"])
    assert real["mlnx_qos"]["dscp2prio"]["26"] == 5
    assert "prio:5 dscp:47,46,45,44,43,42,41,40,\n\tprio:5 dscp:26," in host.tool("mlnx_qos", "-i", "rail0")
    assert host.module(params)["changed"] is False


def test_runtime_settings_are_reasserted_after_a_reboot(host: Host) -> None:
    port = demo_port()
    host.module(port)
    host.tool("hwaac-fake-reboot")  # mlnx_qos and RDMA-CM ToS are not persistent
    assert "Priority trust state: pcp" in host.tool("mlnx_qos", "-i", "rail0")
    res = host.module(port)
    assert res["changes"] == {
        "trust": {"before": "pcp", "after": "dscp"},
        "pfc": {"before": "0,0,0,0,0,0,0,0", "after": "0,0,0,1,0,0,0,0"},
        "roce_tos.rdma_cm": {"before": 0, "after": 106},
    }
    assert "Priority trust state: dscp" in host.tool("mlnx_qos", "-i", "rail0")
    assert host.tool("cma_roce_tos", "-d", "mlx5_0").strip() == "106"
    assert host.sysfs("class/net/rail0/mtu") == "9000"  # sysfs survives the fake reboot: not changed again
    assert host.module(port)["changed"] is False


def test_ecn_disable_others(tmp_path: Path) -> None:
    host = Host(tmp_path, ecn=1)  # mlx5 enables ECN on every priority; start from that
    params = {"interface": "rail0", "ecn": {"np_priorities": [3], "rp_priorities": [3]}}
    assert host.module(params)["changed"] is False  # priority 3 is on; others are left alone by default
    res = host.module({**params, "ecn_disable_others": True})
    assert sorted(res["changes"]) == sorted(f"ecn.{r}.{p}" for r in ("np", "rp") for p in range(8) if p != 3)
    assert host.sysfs("class/net/rail0/ecn/roce_rp/enable/0") == "0"
    assert host.sysfs("class/net/rail0/ecn/roce_rp/enable/3") == "1"


# ---- the list form: every port of a host in one invocation ------------------------------------------------------

DEMO_CHANGES = {
    "mtu": {"before": 1500, "after": 9000},
    "trust": {"before": "pcp", "after": "dscp"},
    "pfc": {"before": "0,0,0,0,0,0,0,0", "after": "0,0,0,1,0,0,0,0"},
    "roce_tos.rdma_cm": {"before": 0, "after": 106},
    "roce_tos.traffic_class": {"before": None, "after": 106},
    "ecn.np.3": {"before": 0, "after": 1},
    "ecn.rp.3": {"before": 0, "after": 1},
    "cnp.dscp": {"before": 0, "after": 48},
    "cnp.priority": {"before": 0, "after": 6},
}


@pytest.fixture
def rails(tmp_path: Path) -> Host:
    """A host with the demo node's first three rails (rail0..2 on mlx5_0..2)."""
    return Host(tmp_path, ports=[(f"rail{i}", f"mlx5_{i}") for i in range(3)])


def test_ports_check_mode_predicts_the_real_run_and_second_run_changes_nothing(rails: Host) -> None:
    ports = [demo_port(i) for i in range(3)]
    assert [p["interface"] for p in ports] == ["rail0", "rail1", "rail2"]
    assert [p["hca"] for p in ports] == ["mlx5_0", "mlx5_1", "mlx5_2"]

    predicted = rails.module({"ports": ports}, check=True)
    assert predicted["changed"] is True
    assert [r["interface"] for r in predicted["ports"]] == ["rail0", "rail1", "rail2"]
    assert [r["changes"] for r in predicted["ports"]] == [DEMO_CHANGES] * 3
    assert predicted["unverified"] == {f"rail{i}": {"dscp2prio.26": 3, "dscp2prio.48": 6} for i in range(3)}
    assert predicted["diff"]["before"]["rail2"]["trust"] == "pcp"
    assert predicted["diff"]["after"]["rail2"]["mtu"] == 9000
    assert "changes" not in predicted and "raw" not in predicted  # single-form fields are per port here
    assert rails.sysfs("class/net/rail2/mtu") == "1500"  # nothing written

    real = rails.module({"ports": ports})
    assert real["changed"] is True
    assert [r["changes"] for r in real["ports"]] == [r["changes"] for r in predicted["ports"]]
    assert real["unverified"] == {}
    assert real["diff"] == predicted["diff"]
    for i in range(3):
        assert rails.sysfs(f"class/net/rail{i}/mtu") == "9000"
        assert rails.sysfs(f"class/net/rail{i}/ecn/roce_rp/enable/3") == "1"
        assert rails.sysfs(f"class/infiniband/mlx5_{i}/tc/1/traffic_class") == "106"
        assert rails.tool("cma_roce_tos", "-d", f"mlx5_{i}").strip() == "106"
        assert "Priority trust state: dscp" in rails.tool("mlnx_qos", "-i", f"rail{i}")
        assert real["ports"][i]["mlnx_qos"]["pfc"] == "0,0,0,1,0,0,0,0"
        assert real["ports"][i]["state"]["mtu"] == 9000
    cmds = [r.splitlines()[0] for r in real["ports"][1]["raw"]]
    assert any(c.endswith("mlnx_qos -i rail1 --trust dscp --pfc 0,0,0,1,0,0,0,0") for c in cmds)
    assert any(c.endswith("cma_roce_tos -d mlx5_1 -p 1 -t 106") for c in cmds)

    again = rails.module({"ports": ports})
    assert again["changed"] is False
    assert [r["changes"] for r in again["ports"]] == [{}, {}, {}]
    assert again["diff"] == {"before": {}, "after": {}}


def test_ports_failing_port_is_named_and_the_others_still_processed(rails: Host) -> None:
    rails.write_state("cma_roce_tos.json", {"knobs": {"ignore_set": ["mlx5_1"]}})
    res = rails.module({"ports": [demo_port(i) for i in range(3)]})
    assert res["failed"] is True
    assert res["failed_ports"] == ["rail1"]
    assert (
        res["msg"]
        == "roce_qos failed on 1 of 3 ports: rail1: cma_roce_tos -d mlx5_1 -t 106 did not apply: the ToS is 0"
    )
    good0, bad1, good2 = res["ports"]
    assert good0["changes"] == good2["changes"] == DEMO_CHANGES
    assert "failed" not in good2
    assert rails.sysfs("class/net/rail2/mtu") == "9000"  # processed after the failure
    assert rails.sysfs("class/infiniband/mlx5_2/tc/1/traffic_class") == "106"
    # rail1: MTU, trust and PFC were written before the ToS failed; the ToS change is reported as found
    assert bad1["failed"] is True
    assert bad1["changed"] is True
    assert sorted(bad1["changes"]) == ["mtu", "pfc", "roce_tos.rdma_cm", "trust"]
    assert rails.sysfs("class/net/rail1/mtu") == "9000"
    assert rails.sysfs("class/net/rail1/ecn/roce_np/enable/3") == "0"  # ECN comes after the ToS: not reached
    assert res["changed"] is True
    assert sorted(res["diff"]["before"]) == ["rail0", "rail1", "rail2"]


def test_ports_values_are_checked_before_anything_runs(rails: Host) -> None:
    ports = [demo_port(0), {**demo_port(1), "pfc": "0,0,1"}]
    res = rails.module({"ports": ports})
    assert res["failed"] is True
    assert res["msg"] == "rail1: pfc must list 8 values of 0 or 1 (priorities 0..7), got '0,0,1'"
    assert rails.sysfs("class/net/rail0/mtu") == "1500"  # rail0 was not touched either
    assert not rails.state.exists()  # no tool ran

    twice = rails.module({"ports": [demo_port(0), {"interface": "rail0", "mtu": 9000}]})
    assert twice["msg"] == "interface rail0 is listed more than once in ports"
    both = rails.module({"interface": "rail0", "ports": [demo_port(0)]})
    assert both["failed"] is True
    assert "mutually exclusive: ports|interface" in both["msg"]
    flag = rails.module({"ecn_disable_others": True, "ports": [demo_port(0)]})
    assert "mutually exclusive: ports|ecn_disable_others" in flag["msg"]
    neither = rails.module({"mtu": 9000})
    assert "one of the following is required: interface, ports" in neither["msg"]
    ordinal = rails.module({"ports": [{**demo_port(0), "rail": 0}]})
    assert ordinal["failed"] is True
    assert "ports.rail" in ordinal["msg"]  # keys of nic-roce.json that are no module option are refused


def test_ports_take_their_own_flags(tmp_path: Path) -> None:
    host = Host(tmp_path, ports=[("rail0", "mlx5_0"), ("rail1", "mlx5_1")], ecn=1)
    ecn = {"np_priorities": [3], "rp_priorities": [3]}
    res = host.module(
        {
            "ports": [
                {"interface": "rail0", "ecn": ecn, "ecn_disable_others": True},
                {"interface": "rail1", "ecn": ecn},
            ]
        }
    )
    assert len(res["ports"][0]["changes"]) == 14  # 7 priorities x (np, rp) turned off
    assert res["ports"][1]["changes"] == {}
    assert host.sysfs("class/net/rail0/ecn/roce_np/enable/0") == "0"
    assert host.sysfs("class/net/rail1/ecn/roce_np/enable/0") == "1"
