"""The filter nccl_hca_ports (plugins/filter/nccl_hca.py over hwaac.health.nccl_hca): recorded ibstat output, given
as a registered result or its stdout, and an NCCL_IB_HCA value or what plan_nccl_hca returns; bad input fails
naming the filter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.aiinfra.hwaac.plugins.filter.nccl_hca import FilterModule

IBSTAT = Path(__file__).resolve().parents[2] / "fixtures" / "health" / "ibstat"
ROCE = (IBSTAT / "rdma-core-47" / "h100-roce-400g-down-polling.txt").read_text()  # mlx5_0..mlx5_11
FILTERS = FilterModule().filters()
RAILS = [f"mlx5_{i}" for i in range(8)]


# (case, input, hca, the devices taken, the entries missing)
CASES: list[tuple[str, Any, Any, list[str], list[dict[str, Any]]]] = [
    ("stdout-rendered", ROCE, "=" + ",".join(f"{d}:1" for d in RAILS), RAILS, []),
    ("registered-exclude", {"stdout": ROCE, "stderr": "", "rc": 0}, "^=mlx5_8,mlx5_9,mlx5_10,mlx5_11", RAILS, []),
    ("prefix", ROCE, "mlx5_1", ["mlx5_1", "mlx5_10", "mlx5_11"], []),
    ("plan-nccl-hca", ROCE, {"value": "=mlx5_0:1,mlx5_12:1", "exact": True, "exclude": False},
     ["mlx5_0"], [{"device": "mlx5_12", "port": 1}]),
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


@pytest.mark.parametrize(("value", "hca", "message"), [
    (ROCE, 7, r"nccl_hca_ports: hca must be an NCCL_IB_HCA value or what aiinfra.hwaac.plan_nccl_hca returns, "
              r"got int"),
    (ROCE, {"devices": ["mlx5_0"]}, r"hca must be an NCCL_IB_HCA value .* got dict"),
    (ROCE, "=mlx5_0:x", r"nccl_hca_ports: NCCL_IB_HCA='=mlx5_0:x': entry 'mlx5_0:x' is not DEVICE"),
    ({"skipped": True}, "mlx5", r"aiinfra.hwaac.nccl_hca_ports: the registered task was skipped"),
    ({"rc": 0}, "mlx5", r"nccl_hca_ports: expected a registered command/shell result \(with 'stdout'\)"),
])
def test_bad_input_names_the_filter(value: Any, hca: Any, message: str) -> None:
    with pytest.raises(AnsibleFilterError, match=message):
        FILTERS["nccl_hca_ports"](value, hca)
