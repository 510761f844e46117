"""The demo plan, intent and file readers the host render tests share."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from hwaac.model.intent import Intent
from hwaac.plan import build_plan
from hwaac.plan.model import Node, Plan
from hwaac.render.host import render_host_files

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "inventory" / "demo"
GOLDEN = ROOT / "tests" / "golden" / "demo" / "hosts"
GOLDEN_NODE = "gpu-su01-h01"
NETPLAN, SYSCTL, NIC, NCCL = (
    "netplan/60-hwaac-rails.yaml",
    "sysctl.d/90-hwaac-rdma.conf",
    "nic-roce.json",
    "nccl.env",
)


def yaml_of(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(io.StringIO(text))


def demo_dict() -> dict[str, Any]:
    return yaml_of((DEMO / "fabric.yml").read_text())


def plan_of(data: dict[str, Any]) -> Plan:
    return build_plan(Intent.model_validate(data))


def node(plan: Plan, name: str) -> Node:
    return next(n for n in plan.nodes if n.name == name)


def host_links(plan: Plan, name: str) -> list:
    return [lk for lk in plan.links_by_device[name] if lk.kind == "host" and lk.a_device == name]


def rail_ethernets(plan: Plan, name: str) -> dict[str, Any]:
    """The ``ethernets`` of the netplan file rendered for the node ``name``."""
    return yaml_of(render_host_files(plan, node(plan, name))[NETPLAN])["network"]["ethernets"]


def nccl_vars(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, _, v = line.partition("=")
            out[k] = v
    return out


RAILS = [f"rail{i}" for i in range(8)]  # the demo's NIC ports, in NIC order

# the demo's switch pools (inventory/demo/fabric.yml addressing: leaf and spine loopbacks, leaf-spine links), in
# intent order: every rail table routes them via its leaf, so that the switches' ICMP errors pass rp_filter
_ADDR = demo_dict()["addressing"]
FABRIC_POOLS = (_ADDR["loopbacks"]["leaf"], _ADDR["loopbacks"]["spine"], _ADDR["leaf_spine"])
