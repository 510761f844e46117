"""aiinfra.hwaac.slurm_node against the stateful scontrol fake (tests/fakes/bin/scontrol).

The module runs as Ansible runs it (tests/unit/ansible/module_run.py: a separate ``python -m`` process with an args
file, check mode and diff as Ansible passes them), with ``tests/fakes/bin`` first on PATH and ``HWAAC_FAKE_STATE``
in the test's tmp directory, so every test starts from the fake's default nodes (see the fake's docstring):

    gpu-node-01 IDLE, gpu-node-02 MIXED, gpu-node-03 ALLOCATED,
    gpu-node-04 IDLE+DRAIN "bad DIMM B2, ticket 4711" by root (someone else's drain),
    gpu-node-05 DOWN+DRAIN "Not responding" by slurm (Slurm's own),
    gpu-node-06 IDLE+DRAIN+REBOOT_REQUESTED "hwaac: GPU_ROW_REMAP_PENDING reboot" (hwaac's, reboot pending).

The fake host is tests/unit/ansible/fake_host.py; the cases that are data: tests/unit/ansible/cases/slurm_node.yml.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils.slurm import parse_show_node
from tests.unit.ansible.fake_host import FAKE_BIN, FakeHost
from tests.unit.ansible.module_run import REPO, load_cases, run_case

FIX = REPO / "tests" / "fixtures" / "slurm"
XID = "GPU_XID_79 gpu 3 fell off the bus"


class Cluster(FakeHost):
    """A fake Slurm controller host: the scontrol fake's state and a way to run the module."""

    module_name = "slurm_node"

    def placeholders(self) -> dict[str, str]:
        return {**super().placeholders(), "FAKE_BIN": str(FAKE_BIN), "XID": XID}

    def module(self, *, check: bool = False, **args: object) -> dict:
        return self.run(args, check=check)

    def tool(self, *args: str) -> subprocess.CompletedProcess:
        return self.sh("scontrol", *args)

    def node(self, name: str):
        out = self.tool("show", "node", "-o", name)
        assert out.returncode == 0, out
        return parse_show_node(out.stdout)[0]

    def node_state(self, name: str) -> str:
        return self.node(name).state.raw

    def node_reason(self, name: str) -> str:
        return self.node(name).reason

    def updates(self) -> list[list[str]]:
        path = self.state / "scontrol.calls"
        if not path.exists():
            return []
        calls = [json.loads(line) for line in path.read_text().splitlines()]
        return [c for c in calls if c and c[0] == "update"]

    def knobs(self, **knobs: object) -> None:
        self.tool("show", "node", "gpu-node-01")  # creates the state file with the defaults
        self.merge_knobs("scontrol.json", knobs)


def warnings(res: dict) -> list[str]:
    """The warning texts (ansible-core >= 2.19 returns each as ``{"event": {"msg": ...}}``, older ones a string)."""
    return [w["event"]["msg"] if isinstance(w, dict) else w for w in res.get("warnings", [])]


@pytest.fixture
def cluster(tmp_path: Path) -> Cluster:
    return Cluster(tmp_path)


@pytest.mark.parametrize("case", load_cases("slurm_node"))
def test_case(cluster: Cluster, case: dict) -> None:
    run_case(cluster, case)


# ---- the fake itself -----------------------------------------------------------------------------------------------


def test_fake_prints_the_fields_of_the_recorded_23_11_output(cluster: Cluster) -> None:
    recorded = parse_show_node((FIX / "show_node_o_idle_23.11.3.txt").read_text())[0]
    fake = cluster.node("gpu-node-01")
    assert list(fake.fields) == list(recorded.fields)
    out = cluster.tool("show", "node", "-o", "gpu-node-01").stdout
    assert "CoresPerSocket=56  CPUAlloc=0" in out  # the double space of the one-liner, as recorded
    assert out.count("\n") == 1
    multi = cluster.tool("show", "node", "gpu-node-04").stdout
    assert "\n   State=IDLE+DRAIN ThreadsPerCore=2" in multi
    assert multi.endswith("Reason=bad DIMM B2, ticket 4711 [root@2026-01-20T09:15:00]\n\n")
    assert parse_show_node(multi)[0].fields == cluster.node("gpu-node-04").fields
    missing = cluster.tool("show", "node", "-o", "gpu-node-99")
    assert (missing.returncode, missing.stdout) == (1, "Node gpu-node-99 not found\n")


# ---- drained -------------------------------------------------------------------------------------------------------


def test_drain_check_mode_predicts_exactly_then_second_run_changes_nothing(cluster: Cluster) -> None:
    predicted = cluster.module(name="gpu-node-01", state="drained", reason=XID, check=True)
    assert predicted["changed"] is True
    assert predicted["action"] == "drain"
    assert predicted["owner"] == "none"
    assert predicted["diff"] == {
        "before": {"state": "IDLE", "reason": ""},
        "after": {"state": "IDLE+DRAIN", "reason": f"hwaac: {XID}"},
    }
    assert cluster.updates() == []  # check mode only reads
    assert cluster.node("gpu-node-01").state.raw == "IDLE"

    real = cluster.module(name="gpu-node-01", state="drained", reason=XID)
    assert real["changed"] is True
    assert real["diff"] == predicted["diff"]
    assert (real["node_state_after"], real["reason_after"]) == ("IDLE+DRAIN", f"hwaac: {XID}")
    assert cluster.updates() == [["update", "NodeName=gpu-node-01", "State=DRAIN", f'Reason="hwaac: {XID}"']]
    assert [r.splitlines()[0] for r in real["raw"]] == [
        f"$ {FAKE_BIN / 'scontrol'} show node -o gpu-node-01",
        f"$ {FAKE_BIN / 'scontrol'} update NodeName=gpu-node-01 State=DRAIN 'Reason=\"hwaac: {XID}\"'",
        f"$ {FAKE_BIN / 'scontrol'} show node -o gpu-node-01",
    ]
    node = cluster.node("gpu-node-01")
    assert (node.state.raw, node.reason, node.reason_user) == ("IDLE+DRAIN", f"hwaac: {XID}", "root")

    again = cluster.module(name="gpu-node-01", state="drained", reason=f"hwaac: {XID}")
    assert again["changed"] is False
    assert (again["owner"], again["action"]) == ("hwaac", "none")
    assert again["diff"]["before"] == again["diff"]["after"]
    assert len(cluster.updates()) == 1


@pytest.mark.parametrize(
    ("name", "before", "after"),
    [("gpu-node-02", "MIXED", "MIXED+DRAIN"), ("gpu-node-03", "ALLOCATED", "ALLOCATED+DRAIN")],
)
def test_drain_busy_nodes_predicts_slurms_state(cluster: Cluster, name: str, before: str, after: str) -> None:
    predicted = cluster.module(name=name, state="drained", reason="x", check=True)
    real = cluster.module(name=name, state="drained", reason="x")
    assert predicted["diff"] == real["diff"]
    assert (real["node_state"], real["node_state_after"]) == (before, after)


def test_hwaac_drain_gets_the_new_reason_and_stays_hwaacs(cluster: Cluster) -> None:
    cluster.module(name="gpu-node-01", state="drained", reason=XID)
    predicted = cluster.module(name="gpu-node-01", state="drained", reason="GPU_ROW_REMAP_PENDING gpu 5", check=True)
    assert predicted["changed"] is True
    assert predicted["action"] == "update_reason"
    assert len(cluster.updates()) == 1
    real = cluster.module(name="gpu-node-01", state="drained", reason="GPU_ROW_REMAP_PENDING gpu 5")
    assert real["changed"] is True
    assert real["owner"] == "hwaac"
    assert (
        real["diff"]
        == predicted["diff"]
        == {
            "before": {"state": "IDLE+DRAIN", "reason": f"hwaac: {XID}"},
            "after": {"state": "IDLE+DRAIN", "reason": "hwaac: GPU_ROW_REMAP_PENDING gpu 5"},
        }
    )
    assert cluster.node("gpu-node-01").reason == "hwaac: GPU_ROW_REMAP_PENDING gpu 5"
    assert cluster.module(name="gpu-node-01", state="drained", reason="GPU_ROW_REMAP_PENDING gpu 5")["changed"] is False


@pytest.mark.parametrize(
    ("name", "state", "reason", "user"),
    [
        ("gpu-node-04", "IDLE+DRAIN", "bad DIMM B2, ticket 4711", "root"),
        ("gpu-node-05", "DOWN+DRAIN", "Not responding", "slurm"),
    ],
)
def test_someone_elses_drain_is_never_overwritten(cluster: Cluster, name: str, state: str, reason: str, user: str):
    for check in (True, False):
        res = cluster.module(name=name, state="drained", reason=XID, check=check)
        assert res.get("failed") is not True
        assert res["changed"] is False
        assert (res["owner"], res["action"]) == ("other", "none")
        assert (res["node_state"], res["reason"], res["reason_user"]) == (state, reason, user)
        assert res["diff"]["before"] == res["diff"]["after"] == {"state": state, "reason": reason}
        assert any("by someone else" in w and "does not overwrite" in w for w in warnings(res))
    assert cluster.updates() == []
    assert (cluster.node(name).state.raw, cluster.node(name).reason) == (state, reason)


# ---- resumed -------------------------------------------------------------------------------------------------------


def test_resume_hwaac_drain_check_mode_predicts_exactly_then_second_run_changes_nothing(cluster: Cluster) -> None:
    cluster.module(name="gpu-node-02", state="drained", reason=XID)
    predicted = cluster.module(name="gpu-node-02", state="resumed", check=True)
    assert predicted["changed"] is True
    assert (predicted["owner"], predicted["action"]) == ("hwaac", "resume")
    assert predicted["diff"] == {
        "before": {"state": "MIXED+DRAIN", "reason": f"hwaac: {XID}"},
        "after": {"state": "MIXED", "reason": ""},
    }
    assert len(cluster.updates()) == 1  # only the drain
    real = cluster.module(name="gpu-node-02", state="resumed")
    assert real["changed"] is True
    assert real["diff"] == predicted["diff"]
    assert cluster.updates()[-1] == ["update", "NodeName=gpu-node-02", "State=RESUME"]
    assert (cluster.node("gpu-node-02").state.raw, cluster.node("gpu-node-02").reason) == ("MIXED", "")

    again = cluster.module(name="gpu-node-02", state="resumed")
    assert again["changed"] is False
    assert (again["owner"], again["action"]) == ("none", "none")
    assert "nothing to resume" in again["message"]
    assert len(cluster.updates()) == 2


def test_someone_elses_drain_is_never_resumed_and_the_play_goes_on(cluster: Cluster) -> None:
    cluster.module(name="gpu-node-01", state="drained", reason=XID)
    res = cluster.module(names=["gpu-node-04", "gpu-node-01", "gpu-node-05", "gpu-node-03"], state="resumed")
    assert res.get("failed") is not True
    assert res["changed"] is True
    by = {n["name"]: n for n in res["nodes"]}
    assert [n["name"] for n in res["nodes"]] == ["gpu-node-04", "gpu-node-01", "gpu-node-05", "gpu-node-03"]
    assert {k: (v["owner"], v["action"], v["changed"]) for k, v in by.items()} == {
        "gpu-node-04": ("other", "none", False),
        "gpu-node-01": ("hwaac", "resume", True),
        "gpu-node-05": ("other", "none", False),
        "gpu-node-03": ("none", "none", False),
    }
    assert by["gpu-node-04"]["reason"] == "bad DIMM B2, ticket 4711"
    assert by["gpu-node-05"]["message"] == (
        "gpu-node-05 is drained by someone else (reason 'Not responding' set by slurm at 2026-01-21T03:02:11); "
        "hwaac does not resume it"
    )
    assert len([w for w in warnings(res) if "does not resume" in w]) == 2
    assert res["diff"]["after"]["gpu-node-01"] == {"state": "IDLE", "reason": ""}
    assert res["diff"]["after"]["gpu-node-04"] == res["diff"]["before"]["gpu-node-04"]
    assert [u for u in cluster.updates() if "State=RESUME" in u] == [["update", "NodeName=gpu-node-01", "State=RESUME"]]
    assert cluster.node("gpu-node-04").state.raw == "IDLE+DRAIN"
    assert cluster.node("gpu-node-05").state.raw == "DOWN+DRAIN"


def test_seeded_nodes_nhc_drain_is_someone_elses(cluster: Cluster) -> None:
    seed = cluster.tmp / "seed.json"
    seed.write_text(json.dumps({"nodes": {
        "h100-a": {"state": "IDLE+DRAIN", "reason": "NHC: check_hw_ib:  No IB port mlx5_3:1 is ACTIVE",
                   "reason_user": "root", "reason_time": "2026-01-23T01:00:00"},
        "h100-b": {"state": "MIXED"},
    }}))  # fmt: skip
    cluster.env["HWAAC_FAKE_SCONTROL_SEED"] = str(seed)
    res = cluster.module(names=["h100-a", "h100-b"], state="resumed")
    assert [(n["name"], n["owner"], n["changed"]) for n in res["nodes"]] == [
        ("h100-a", "other", False),
        ("h100-b", "none", False),
    ]
    drained = cluster.module(names=["h100-a", "h100-b"], state="drained", reason="burn-in failed")
    assert [(n["owner"], n["action"]) for n in drained["nodes"]] == [("other", "none"), ("none", "drain")]
    assert cluster.node("h100-a").reason.startswith("NHC:")


# ---- errors --------------------------------------------------------------------------------------------------------


def test_every_node_is_processed_and_the_failed_ones_named(cluster: Cluster) -> None:
    res = cluster.module(names=["gpu-node-01", "gpu-node-99", "gpu-node-04"], state="drained", reason=XID)
    assert res["failed"] is True
    assert res["changed"] is True
    assert res["failed_nodes"] == ["gpu-node-99"]
    assert res["msg"].startswith("slurm_node failed on 1 of 3 nodes: node gpu-node-99 not found by Slurm")
    assert [n.get("failed", False) for n in res["nodes"]] == [False, True, False]
    assert cluster.node("gpu-node-01").state.raw == "IDLE+DRAIN"
    assert sorted(res["diff"]["before"]) == ["gpu-node-01", "gpu-node-04"]
