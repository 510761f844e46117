"""aiinfra.hwaac.node_health: the action plugin driven with its real host module (tests/unit/ansible/module_run.py,
what a ``connection: local`` play does) against the fakes of a simulated GPU node (tests/fakes/bin, a fake sysfs
from tests/fakes/nic_counters.py): a stage's ``rdma statistic show`` reading comes back as ``rdma_statistic`` and,
given to a later stage as ``rdma_statistic_before``, its counters' growth is judged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.aiinfra.hwaac.plugins.action.node_health import ActionModule
from ansible_collections.aiinfra.hwaac.plugins.module_utils.controller_specs import PROBES_OPTION, SPECS
from ansible_collections.aiinfra.hwaac.plugins.modules import node_health
from tests.fakes import nic_counters
from tests.unit.ansible.action_run import run_action_plugin
from tests.unit.ansible.fake_host import FakeHost


class Node(FakeHost):
    """A simulated node's state folder (fake_host.FakeHost) and the node_health task run on it."""

    module_name = "node_health"

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp, state="gpu-node-01")
        nic_counters.ensure_tree(self.state, 8)

    def run_action(self, args: dict[str, Any]) -> dict[str, Any]:
        return run_action_plugin(
            ActionModule,
            {"sysfs_root": str(nic_counters.sys_root(self.state)), **args},
            task_vars={"inventory_hostname": "gpu-node-01"},
            module="node_health",
            execute=self.run,
        )


RNR = ("NIC_RNR_NAK_RETRY_ERR", "FAIL", "mlx5_3 port 1", "check_link")
CASES = [
    # name, pass the last run's reading back, its age, the (code, status, subject, action) of the second run
    ("the last run's reading given: its growth is judged", True, 3600.0, {RNR}),
    ("without the interval: the delta of a fatal counter still fails", True, None, {RNR}),
    ("no reading given: nothing to grow from", False, None, set()),
]


@pytest.mark.parametrize(("give", "age", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_health_stage_judges_rdma_statistic_growth_since_the_last_run(
    tmp_path: Path, give: bool, age: float | None, expected: set
) -> None:
    node = Node(tmp_path)
    first = node.run_action({"stage": "health"})
    assert first["status"] == "PASS" and first["rdma_statistic"].startswith("link mlx5_0/1 ")
    nic_counters.bump(node.state, "mlx5_3", rnr_nak_retry_err=2)  # no counters_before: sysfs growth is not asked
    args: dict[str, Any] = {"stage": "health", "counters_age": age}
    if give:
        args["rdma_statistic_before"] = first["rdma_statistic"]
    second = node.run_action(args)
    assert {(f["code"], f["status"], f["subject"], f["action"]) for f in second["findings"]} == expected


def test_spec_documents_every_option() -> None:
    documented = yaml.safe_load(node_health.DOCUMENTATION)["options"]
    assert set(documented) == {*SPECS["node_health"], *PROBES_OPTION}
    for name, spec in SPECS["node_health"].items():
        assert documented[name]["type"] == spec["type"], name
        assert documented[name].get("default") == spec.get("default"), name
    assert {"counters", "rdma_statistic"} <= set(yaml.safe_load(node_health.RETURN))
