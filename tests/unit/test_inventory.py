"""The fabric as an Ansible inventory (hwaac.inventory), from plan documents (pure: no NetBox, no Ansible)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.inventory import from_plan_doc, group_name
from hwaac.netbox.plane_state import plan_from_text, pool_lookup_from
from hwaac.plan import build_plan
from hwaac.plan.serialize import plan_to_dict
from hwaac.validate import load_intent

REPO = Path(__file__).resolve().parents[2]
TWIN = REPO / "tests/fixtures/intents/terraform/twin.yml"


@pytest.fixture(scope="module")
def demo() -> dict:
    return plan_to_dict(build_plan(load_intent(REPO / "inventory/demo/fabric.yml")))


def test_demo_groups_follow_the_rail_layout(demo: dict) -> None:
    inv = from_plan_doc(demo, render_dir="/out")
    g = inv.groups
    # the demo: 2 SUs of 32 nodes x 8 rails, one plane; one leaf per rail per SU, 8 spines
    assert len(g["leaf"]) == 16 and len(g["spine"]) == 8 and len(g["gpu_nodes"]) == 64
    assert g["rail3"] == ["leaf-p0-su01-r3", "leaf-p0-su02-r3"]
    assert set(g["su02"]) == {f"leaf-p0-su02-r{r}" for r in range(8)} | {f"gpu-su02-h{h:02d}" for h in range(1, 33)}
    assert set(g["plane0"]) == set(inv.hostvars)  # one plane holds everything
    assert inv.children == {"switches": ["leaf", "spine"], "fabric_demo": ["switches", "gpu_nodes"]}
    assert "super_spine" not in g and not any(k.startswith("pod") for k in g)


def test_host_variables_carry_what_the_roles_need(demo: dict) -> None:
    inv = from_plan_doc(demo, render_dir="/out")
    leaf = inv.hostvars["leaf-p0-su02-r7"]
    want = demo["switches"]["leaf-p0-su02-r7"]
    assert leaf == {
        "hwaac_fabric": "demo",
        "hwaac_role": "leaf",
        "hwaac_source": "plan",
        "hwaac_plane": 0,
        "hwaac_model": want["model"],
        "hwaac_asn": want["asn"],
        "hwaac_loopback": want["loopback"].removesuffix("/32"),
        "hwaac_su": 2,
        "hwaac_rail": 7,
        "hwaac_files": "/out/switches/leaf-p0-su02-r7",
    }
    node = inv.hostvars["gpu-su01-h05"]
    assert node["hwaac_rails"] == list(range(8)) and node["hwaac_planes"] == [0] and node["hwaac_slot"] == 5
    assert node["hwaac_files"] == "/out/hosts/gpu-su01-h05" and node["hwaac_role"] == "gpu"
    assert "hwaac_files" not in from_plan_doc(demo).hostvars["gpu-su01-h05"]


def test_a_twin_plane_fabric_puts_every_node_in_both_planes() -> None:
    plan = plan_from_text(
        TWIN.read_text(),
        str(TWIN),
        pool_lookup_from({"tftwin-p2p": "10.31.0.0/24", "tftwin-hosts": "172.30.0.0/23"}, None),
    )
    inv = from_plan_doc(plan_to_dict(plan))
    nodes = {n.name for n in plan.nodes}
    for p in (0, 1):
        switches = {s.name for s in plan.switches if s.plane == p}
        assert set(inv.groups[f"plane{p}"]) == switches | nodes
    assert all(inv.hostvars[n]["hwaac_planes"] == [0, 1] for n in nodes)
    # rail groups hold the leaves of both planes
    leaves = [s for s in plan.switches if s.role == "leaf" and s.rail == 0]
    assert inv.groups["rail0"] == sorted(s.name for s in leaves) and {s.plane for s in leaves} == {0, 1}


def test_a_three_tier_fabric_has_pods_and_super_spines() -> None:
    plan = build_plan(load_intent(REPO / "inventory/examples/b200-3tier/fabric.yml"))
    inv = from_plan_doc(plan_to_dict(plan))
    assert set(inv.groups["super_spine"]) == {s.name for s in plan.switches if s.role == "super_spine"}
    assert inv.children["switches"] == ["leaf", "spine", "super_spine"]
    pods = {s.pod for s in plan.switches if s.pod is not None}
    assert {f"pod{p}" for p in pods} <= set(inv.groups)


def test_a_switch_without_a_needed_field_names_the_host_and_the_field(demo: dict) -> None:
    doc = {**demo, "switches": {**demo["switches"], "leaf-x": {"role": "leaf", "plane": 0}}}
    with pytest.raises(ValueError, match=r"switch leaf-x has no field 'model'"):
        from_plan_doc(doc)


def test_group_names_are_ansible_safe() -> None:
    assert group_name("AI-Fabric.West 2") == "ai_fabric_west_2"
