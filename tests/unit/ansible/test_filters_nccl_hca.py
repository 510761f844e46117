"""The filters of plugins/filter/nccl_hca.py: nccl_hca_ports (over hwaac.health.nccl_hca) on recorded ibstat output,
given as a registered result or its stdout, and an NCCL_IB_HCA value or what plan_nccl_hca returns; nccl_rail_check
(over hwaac.health.rail_check) on the demo plan as ``hwaac plan -o DIR`` writes it. Bad input fails naming the
filter."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.aiinfra.hwaac.plugins.filter.nccl_hca import FilterModule
from hwaac.plan import build_plan
from hwaac.render import render_to_dir
from hwaac.validate import load_intent

REPO = Path(__file__).resolve().parents[3]
NODE = "gpu-su01-h01"
IBSTAT = REPO / "tests" / "fixtures" / "health" / "ibstat"
ROCE = (IBSTAT / "rdma-core-47" / "h100-roce-400g-down-polling.txt").read_text()  # mlx5_0..mlx5_11
FILTERS = FilterModule().filters()
RAILS = [f"mlx5_{i}" for i in range(8)]


# (case, input, hca, the devices taken, the entries missing)
CASES: list[tuple[str, Any, Any, list[str], list[dict[str, Any]]]] = [
    ("stdout-rendered", ROCE, "=" + ",".join(f"{d}:1" for d in RAILS), RAILS, []),
    ("registered-exclude", {"stdout": ROCE, "stderr": "", "rc": 0}, "^=mlx5_8,mlx5_9,mlx5_10,mlx5_11", RAILS, []),
    ("prefix", ROCE, "mlx5_1", ["mlx5_1", "mlx5_10", "mlx5_11"], []),
    (
        "plan-nccl-hca",
        ROCE,
        {"value": "=mlx5_0:1,mlx5_12:1", "exact": True, "exclude": False},
        ["mlx5_0"],
        [{"device": "mlx5_12", "port": 1}],
    ),
]


@pytest.mark.parametrize(("value", "hca", "devices", "missing"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_nccl_hca_ports(value: Any, hca: Any, devices: list[str], missing: list[dict[str, Any]]) -> None:
    got = FILTERS["nccl_hca_ports"](value, hca)
    assert got["devices"] == devices
    assert got["ports"] == [{"device": d, "port": 1} for d in devices]
    assert got["missing"] == missing


def test_an_ibpanic_on_stderr_ends_the_devices_read() -> None:
    """ibstat prints ibpanic on stderr: read with stdout, the devices after it are not there, so not taken."""
    text = (IBSTAT / "rdma-core-39" / "a100-ibpanic.txt").read_text()
    panic = [line for line in text.splitlines() if line.startswith("ibpanic")]
    stdout = "\n".join(line for line in text.splitlines() if not line.startswith("ibpanic"))
    got = FILTERS["nccl_hca_ports"]({"stdout": stdout, "stderr": panic[0], "rc": 255}, "=mlx5_7,mlx5_8")
    assert got["devices"] == ["mlx5_7"] and got["missing"] == [{"device": "mlx5_8", "port": None}]


@pytest.mark.parametrize(
    ("value", "hca", "message"),
    [
        (
            ROCE,
            7,
            r"nccl_hca_ports: hca must be an NCCL_IB_HCA value or what aiinfra.hwaac.plan_nccl_hca returns, "
            r"got int",
        ),
        (ROCE, {"devices": ["mlx5_0"]}, r"hca must be an NCCL_IB_HCA value .* got dict"),
        (ROCE, "=mlx5_0:x", r"nccl_hca_ports: NCCL_IB_HCA='=mlx5_0:x': entry 'mlx5_0:x' is not DEVICE"),
        ({"skipped": True}, "mlx5", r"aiinfra.hwaac.nccl_hca_ports: the registered task was skipped"),
        ({"rc": 0}, "mlx5", r"nccl_hca_ports: expected a registered command/shell result \(with 'stdout'\)"),
    ],
)
def test_bad_input_names_the_filter(value: Any, hca: Any, message: str) -> None:
    with pytest.raises(AnsibleFilterError, match=message):
        FILTERS["nccl_hca_ports"](value, hca)


@pytest.fixture(scope="module")
def plan_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("plan")
    render_to_dir(build_plan(load_intent(REPO / "inventory" / "demo")), out)
    return out


def test_nccl_rail_check_of_a_rendered_node(plan_dir: Path) -> None:
    """The plan folder or its plan.json: the node's nccl.env, rails and nic-roce.json, judged against ibstat."""
    for plan in (str(plan_dir), str(plan_dir / "plan.json")):
        report = FILTERS["nccl_rail_check"]({"stdout": ROCE, "stderr": "", "rc": 0}, plan, NODE)
        assert report["status"] == "FAIL" and [r["interface"] for r in report["rails"] if r["problem"]] == ["rail5"]
        assert report["msg"].startswith("1 of 8 rails not usable: rail5 (mlx5_5, Down/Disabled, 172.16.1.65/31)")


def test_nccl_rail_check_errors_name_the_filter(plan_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(AnsibleFilterError, match=r"nccl_rail_check: node must be a non-empty name, got ''"):
        FILTERS["nccl_rail_check"](ROCE, str(plan_dir), "")
    loaded = json.loads((plan_dir / "plan.json").read_text())
    with pytest.raises(
        AnsibleFilterError,
        match=r"nccl_rail_check: the NCCL HCA list is in the rendered "
        r"hosts/<node>/nccl.env: give the folder",
    ):
        FILTERS["nccl_rail_check"](ROCE, loaded, NODE)
    copy = tmp_path / "plan"
    shutil.copytree(plan_dir, copy)
    (copy / "hosts" / NODE / "nic-roce.json").unlink()
    with pytest.raises(AnsibleFilterError, match=r"nccl_rail_check: gpu-su01-h01: .*nic-roce.json: no such file"):
        FILTERS["nccl_rail_check"](ROCE, str(copy), NODE)
