"""The plans and render helpers the SONiC config_db tests share: the demo fabric and its variants (rail_subnet,
two planes, three tiers)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from ruamel.yaml import YAML

from hwaac.model.intent import Intent
from hwaac.plan import build_plan
from hwaac.plan.model import Plan
from hwaac.render.sonic import render_config_db
from hwaac.validate import load_intent

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "inventory" / "demo"
GOLDEN = ROOT / "tests" / "golden" / "demo" / "switches"
LEAF, SPINE = "leaf-p0-su01-r0", "spine-p0-01"


@cache
def demo_plan() -> Plan:
    return build_plan(load_intent(DEMO))


def demo_dict() -> dict:
    return YAML(typ="safe").load((DEMO / "fabric.yml").read_text())


def plan_from(d: dict) -> Plan:
    return build_plan(Intent.model_validate(d))


@cache
def rail_subnet_plan() -> Plan:
    d = demo_dict()
    d["addressing"]["host_links"]["mode"] = "rail_subnet"
    return plan_from(d)


@cache
def rail_subnet_partial_plan() -> Plan:
    """rail_subnet with a partly populated fabric: 32 nodes fill SU 1, SU 2's leaves have no host yet."""
    d = demo_dict()
    d["addressing"]["host_links"]["mode"] = "rail_subnet"
    d["fabric"]["nodes"] = 32
    return plan_from(d)


@cache
def two_plane_plan() -> Plan:
    d = demo_dict()
    d["fabric"]["planes"] = 2
    d["host"]["interface_name"] = "rail{rail}p{plane}"
    return plan_from(d)


@cache
def three_tier_plan() -> Plan:
    d = demo_dict()
    d["fabric"].update(tiers=3, su_count=2, su_capacity=2, nodes_per_su=32)
    d["switches"]["leaf"].update(model="SN5600-O128", downlinks=32)
    d["switches"]["spine"]["per_plane"] = 4  # 4 spines per pod: 1 SU per pod, so both pods are built
    d["switches"]["super_spine"] = {"model": "SN5600-O128"}
    d["addressing"]["loopbacks"]["super_spine"] = "10.0.2.0/26"
    d["addressing"]["spine_super_spine"] = "10.2.0.0/20"
    del d["naming"]["spine"]  # the 3-tier default pattern carries the pod, so names stay unique
    return plan_from(d)


def render(name: str, plan: Plan | None = None) -> dict:
    plan = plan or demo_plan()
    return render_config_db(plan, plan.switch_by_name[name])


def dump(cfg: dict) -> str:
    return json.dumps(cfg, indent=2, sort_keys=False) + "\n"


def announced_networks(cfg: dict) -> list[str]:
    """The prefixes of the network statements, in table order (BGP_GLOBALS_AF_NETWORK default|ipv4_unicast|P)."""
    assert all(k.startswith("default|ipv4_unicast|") and v == {} for k, v in cfg["BGP_GLOBALS_AF_NETWORK"].items())
    return [k.split("|")[2] for k in cfg["BGP_GLOBALS_AF_NETWORK"]]
