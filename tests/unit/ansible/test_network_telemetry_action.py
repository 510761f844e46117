"""aiinfra.hwaac.network_telemetry's action plugin driven with its real host module (tests/unit/ansible/module_run.py)
against the fake ethtool of a GPU node: with render_dir, a node's per-port tools read the rails of its own rendered
nic-roce.json (the demo's golden render); a node without that file fails, naming the node and the path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.aiinfra.hwaac.plugins.action.network_telemetry import ActionModule
from tests.unit.ansible.action_run import run_action_plugin
from tests.unit.ansible.fake_host import fake_env
from tests.unit.ansible.module_run import REPO, run_module

# hwaac render of inventory/demo (its golden files hold gpu-su01-h01 only): 8 rails, interfaces rail0..rail7
RENDER = REPO / "tests" / "golden" / "demo"


def run_action(tmp: Path, args: dict[str, Any], host: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the task's result, the arguments the host module got)."""
    sent: list[dict[str, Any]] = []
    env = fake_env(tmp)

    def execute(module_args: dict[str, Any]) -> dict:
        sent.append(module_args)
        return run_module("network_telemetry", module_args, tmp / f"args{len(sent)}.json", env)

    return run_action_plugin(
        ActionModule, args, task_vars={"inventory_hostname": host}, module="network_telemetry", execute=execute
    ), sent


def test_a_node_reads_the_rails_of_its_rendered_nic_roce(tmp_path: Path) -> None:
    res, (sent,) = run_action(
        tmp_path, {"kind": "host", "tools": ["ethtool"], "render_dir": str(RENDER)}, "gpu-su01-h01"
    )
    rails = [f"ethtool@rail{r}" for r in range(8)]
    assert sent["tools"] == rails and "render_dir" not in sent
    assert sorted(res["outputs"]) == sorted(rails)
    assert all(o["rc"] == 0 and o["argv"] == ["ethtool", "-S", n.split("@")[1]] for n, o in res["outputs"].items())


def test_device_names_the_node_and_a_switch_ignores_render_dir(tmp_path: Path) -> None:
    _, (host,) = run_action(
        tmp_path,
        {"kind": "host", "tools": ["mlxlink"], "render_dir": str(RENDER), "device": "gpu-su01-h01"},
        "some-inventory-alias",
    )
    assert host["tools"] == [f"mlxlink@mlx5_{r}" for r in range(8)]
    _, (switch,) = run_action(
        tmp_path, {"kind": "sonic", "tools": ["pfcwd"], "render_dir": str(RENDER)}, "leaf-p0-su01-r0"
    )
    assert switch["tools"] == ["pfcwd"] and "render_dir" not in switch


@pytest.mark.parametrize(
    ("args", "host", "words"),
    [
        (
            {"kind": "host", "render_dir": str(RENDER)},
            "gpu-su01-h02",
            f"gpu-su01-h02: {RENDER}/hosts/gpu-su01-h02/nic-roce.json: no such file",
        ),
        ({"kind": "host", "render_dir": str(RENDER), "ports": ["rail0"]}, "gpu-su01-h01", "ports or render_dir"),
    ],
    ids=["node not rendered", "ports and render_dir"],
)
def test_refused_before_the_host_runs_anything(tmp_path: Path, args: dict, host: str, words: str) -> None:
    with pytest.raises(AnsibleActionFail) as err:
        run_action(tmp_path, args, host)
    assert str(err.value).startswith("aiinfra.hwaac.network_telemetry: ") and words in str(err.value)
