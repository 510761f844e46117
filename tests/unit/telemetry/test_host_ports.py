"""A GPU node's per-port telemetry tools from its rendered nic-roce.json (the demo's golden render): each per-port
tool once per rail, by the field its command takes; errors name the node and the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hwaac.telemetry.host_ports import HostPortsError, expand_tools, nic_roce_path, node_tools

ROOT = Path(__file__).parents[3]
RENDER = ROOT / "tests" / "golden" / "demo"  # hwaac render of inventory/demo (golden files: gpu-su01-h01 only)
NODE = "gpu-su01-h01"
# inventory/demo: 8 rails, host.interface_name "rail{rail}", host.hca_name "mlx5_{port}", one plane
RAILS = [f"rail{r}" for r in range(8)]
HCAS = [f"mlx5_{r}" for r in range(8)]

# tools asked -> tools run
CASES = [
    (
        "host defaults",
        ["rdma-statistic", "ib-counters", "ethtool"],
        ["rdma-statistic", "ib-counters", *(f"ethtool@{r}" for r in RAILS)],
    ),
    ("mlxlink takes the RDMA device", ["mlxlink"], [f"mlxlink@{h}" for h in HCAS]),
    ("a named port is kept", ["ethtool@rail3", "mlxlink"], ["ethtool@rail3", *(f"mlxlink@{h}" for h in HCAS)]),
    ("no per-port tool", ["rdma-statistic"], ["rdma-statistic"]),
    ("each once", ["ethtool@rail0", "ethtool"], [f"ethtool@{r}" for r in RAILS]),
]


@pytest.mark.parametrize(("case", "tools", "expected"), CASES, ids=[c[0] for c in CASES])
def test_node_tools_from_the_rendered_ports(case: str, tools: list[str], expected: list[str]) -> None:
    assert node_tools(RENDER, NODE, tools) == expected


def _write(tmp: Path, node: str, text: str) -> Path:
    path = nic_roce_path(tmp, node)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


# case, file text (None: no file), tools, words of the error besides the node and the path
ERRORS = [
    ("missing file", None, ["ethtool"], "no such file"),
    ("not JSON", "{ports: [", ["ethtool"], "not JSON"),
    ("no ports", json.dumps({"node": "n", "ports": []}), ["ethtool"], "no list of ports"),
    (
        "a port without its interface",
        json.dumps({"ports": [{"port": 0, "hca": "mlx5_0"}]}),
        ["ethtool"],
        "port 0 has no 'interface'",
    ),
    (
        "a switch tool",
        json.dumps({"ports": [{"port": 0, "interface": "rail0"}]}),
        ["fec-histogram"],
        "reads switch ports",
    ),
]


@pytest.mark.parametrize(("case", "text", "tools", "words"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_name_the_node_and_the_file(
    case: str, text: str | None, tools: list[str], words: str, tmp_path: Path
) -> None:
    node = "gpu-su09-h07"
    path = _write(tmp_path, node, text) if text is not None else nic_roce_path(tmp_path, node)
    with pytest.raises(HostPortsError) as err:
        node_tools(tmp_path, node, tools)
    msg = str(err.value)
    assert msg.startswith(f"{node}: {path}: ") and words in msg


def test_expand_without_per_port_tools_needs_no_ports() -> None:
    assert expand_tools(["rdma-statistic", "ib-counters"], []) == ["rdma-statistic", "ib-counters"]
