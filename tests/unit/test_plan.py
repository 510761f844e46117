"""Planner behaviour: published reference-design counts, the rail rule, allocation properties."""

from __future__ import annotations

import copy
import itertools
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from hwaac.model.intent import Intent
from hwaac.plan import build_plan
from hwaac.plan.serialize import plan_to_dict

REPO = Path(__file__).parents[2]


def intent_dict(name: str) -> dict:
    path = REPO / "inventory" / ("demo" if name == "demo" else f"examples/{name}") / "fabric.yml"
    return YAML(typ="safe").load(path.read_text())


def plan_of(d: dict):
    return build_plan(Intent.model_validate(d))


def counts(plan) -> tuple[Counter, Counter]:
    return Counter(s.role for s in plan.switches), Counter(link.kind for link in plan.links)


# --- published tables ---------------------------------------------------------------------------------------

# NVIDIA DGX SuperPOD H100 RA, network fabrics, table 4: SUs -> leaves, spines, node+UFM-leaf cables,
# spine-leaf cables (each SU holds 32 slots; the design's last slot is the UFM with 4 fabric ports).
H100_TABLE4 = {1: (8, 4, 252, 256), 2: (16, 8, 508, 512), 3: (24, 16, 764, 768), 4: (32, 16, 1020, 1024)}


@pytest.mark.parametrize("sus", sorted(H100_TABLE4))
def test_h100_example_matches_published_table(sus):
    d = intent_dict("h100-4su")
    d["fabric"].update(su_count=sus, nodes=32 * sus - 1)
    d["fabric"]["appliances"][0]["su"] = sus
    roles, kinds = counts(plan_of(d))
    assert (roles["leaf"], roles["spine"], kinds["host"], kinds["leaf_spine"]) == H100_TABLE4[sus]


def test_h100_example_file_is_the_4su_row():
    roles, kinds = counts(plan_of(intent_dict("h100-4su")))
    assert (roles["leaf"], roles["spine"], kinds["host"], kinds["leaf_spine"]) == H100_TABLE4[4]


# NVIDIA DGX SuperPOD B300 (Spectrum-X, twin-plane): SUs -> leaves, spines (both planes together).
B300 = {1: (16, 8), 4: (64, 32), 16: (256, 128)}


@pytest.mark.parametrize("sus", sorted(B300))
def test_b300_twin_plane_matches_published_counts(sus):
    d = intent_dict("b300-twin-plane")
    d["fabric"]["su_count"] = sus
    d["fabric"].pop("su_capacity", None)
    plan = plan_of(d)
    roles, kinds = counts(plan)
    assert (roles["leaf"], roles["spine"]) == B300[sus]
    # each GPU has 2 x 400G, one per plane
    assert kinds["host"] == sus * 64 * 8 * 2
    per_node = Counter(link.a_device for link in plan.links if link.kind == "host")
    assert set(per_node.values()) == {16}


# NVIDIA DGX SuperPOD B200: SUs -> leaves, spines, core (super-spines); 8 cables per node in each tier.
B200_3TIER = {16: (128, 128, 64), 32: (256, 256, 128), 64: (512, 512, 256)}


@pytest.mark.parametrize("sus", sorted(B200_3TIER))
def test_b200_three_tier_matches_published_counts(sus):
    d = intent_dict("b200-3tier")
    d["fabric"]["su_count"] = sus
    roles, kinds = counts(plan_of(d))
    assert (roles["leaf"], roles["spine"], roles["super_spine"]) == B200_3TIER[sus]
    nodes = sus * 32
    assert kinds["host"] == kinds["leaf_spine"] == kinds["spine_super_spine"] == 8 * nodes


@pytest.mark.parametrize("sus,spines", [(2, 8), (4, 16), (8, 32)])
def test_b200_two_tier_counts(sus, spines):
    d = intent_dict("h100-4su")
    d["fabric"].update(su_count=sus, nodes=None, appliances=[])
    roles, _ = counts(plan_of(d))
    assert (roles["leaf"], roles["spine"]) == (8 * sus, spines)


def test_sixteen_sus_do_not_fit_two_tiers_of_64_port_switches():
    from hwaac.errors import IntentError

    d = intent_dict("h100-4su")
    d["fabric"].update(su_count=16, nodes=None, appliances=[])
    with pytest.raises(IntentError) as info:
        plan_of(d)
    assert any("fabric.tiers: 3" in i.valid for i in info.value.issues)


# --- rail rule and cabling ------------------------------------------------------------------------------------


def test_rail_rule_nic_r_of_node_h_goes_to_leaf_r_port_h():
    plan = plan_of(intent_dict("demo"))
    leaf_ports = plan.design.leaf_model
    from hwaac.plan.ports import port_names

    names = port_names(leaf_ports)
    for link in plan.links:
        if link.kind != "host":
            continue
        node = next(n for n in plan.nodes if n.name == link.a_device)
        leaf = plan.switch_by_name[link.b_device]
        assert (leaf.su, leaf.rail, leaf.plane) == (node.su, link.rail, link.plane)
        assert link.b_port == names[node.slot - 1]
        assert link.a_port == f"rail{link.rail}"


def test_every_leaf_links_equally_to_every_spine_of_its_plane():
    for name in ("demo", "b300-twin-plane", "h100-4su"):
        plan = plan_of(intent_dict(name))
        pairs = Counter((link.a_device, link.b_device) for link in plan.links if link.kind == "leaf_spine")
        spines_per_plane = defaultdict(set)
        for s in plan.switches:
            if s.role == "spine":
                spines_per_plane[s.plane].add(s.name)
        for leaf in plan.switches_of("leaf"):
            per_spine = {sp: pairs[(leaf.name, sp)] for sp in spines_per_plane[leaf.plane]}
            assert len(set(per_spine.values())) == 1 and min(per_spine.values()) >= 1, (name, leaf.name)


def test_switch_ports_are_used_once_and_exist():
    from hwaac.plan.ports import port_names

    plan = plan_of(intent_dict("b200-3tier"))
    models = {
        "leaf": plan.design.leaf_model,
        "spine": plan.design.spine_model,
        "super_spine": plan.design.super_spine_model,
    }
    used = Counter()
    for link in plan.links:
        for dev, port in ((link.a_device, link.a_port), (link.b_device, link.b_port)):
            if dev in plan.switch_by_name:
                used[(dev, port)] += 1
                assert port in port_names(models[plan.switch_by_name[dev].role])
    assert max(used.values()) == 1


def test_plan_is_deterministic():
    d = intent_dict("b300-twin-plane")
    assert plan_to_dict(plan_of(d)) == plan_to_dict(plan_of(copy.deepcopy(d)))


# --- allocation properties --------------------------------------------------------------------------------------


def _addresses(plan) -> list[tuple[str, int]]:
    out = [(f"{s.name}/lo", s.loopback) for s in plan.switches]
    for link in plan.links:
        out.append((f"{link.cable_id}/a", link.a_ip))
        if link.prefixlen == 31:
            out.append((f"{link.cable_id}/b", link.b_ip))
    return out


fabric_shapes = st.fixed_dictionaries(
    {
        "planes": st.sampled_from([1, 2]),
        "rails": st.integers(1, 8),
        "nodes_per_su": st.integers(1, 16),
        "capacity": st.integers(1, 6),
        "mode": st.sampled_from(["p2p31", "rail_subnet"]),
        "parity": st.sampled_from(["odd", "even"]),
    }
)


def shaped_intent(shape: dict, su_count: int) -> Intent:
    return Intent.model_validate(
        {
            "fabric": {
                "name": "prop",
                "site": "lab",
                "planes": shape["planes"],
                "rails": shape["rails"],
                "nodes_per_su": shape["nodes_per_su"],
                "su_count": su_count,
                "su_capacity": shape["capacity"],
            },
            "switches": {
                "leaf": {"model": "SN5600-O128", "downlinks": shape["nodes_per_su"]},
                "spine": {"model": "SN5600-O128"},
            },
            "addressing": {
                "loopbacks": {"leaf": "10.0.0.0/22", "spine": "10.0.4.0/24"},
                "leaf_spine": "10.1.0.0/16",
                "host_links": {"prefix": "172.16.0.0/16", "mode": shape["mode"], "host_address": shape["parity"]},
            },
            "host": {"interface_name": "r{rail}p{plane}"},
        }
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fabric_shapes)
def test_allocation_has_no_overlap_and_respects_parity(shape):
    plan = build_plan(shaped_intent(shape, shape["capacity"]))
    addrs = _addresses(plan)
    values = [a for _, a in addrs]
    assert len(values) == len(set(values)), "an address is allocated twice"
    nets = [(link.network, link.prefixlen) for link in plan.links if link.prefixlen == 31]
    assert len(nets) == len(set(nets)), "a /31 is used by two links"
    for link in plan.links:
        size = 1 << (32 - link.prefixlen)
        assert link.network % size == 0
        assert link.network <= link.a_ip < link.network + size
        if link.kind == "host" and link.prefixlen == 31:
            host_odd = link.a_ip % 2 == 1
            assert host_odd == (shape["parity"] == "odd")
            assert link.b_ip == link.a_ip ^ 1
        if link.kind == "host" and link.prefixlen != 31:
            # rail subnet: leaf gateway on the first address, hosts after it, no network/broadcast address
            assert link.b_ip == link.network + 1
            assert link.network + 1 < link.a_ip < link.network + size - 1
    # rail subnets of different leaves never overlap
    subnets = {(link.b_device, link.network, link.prefixlen) for link in plan.links if link.kind == "host"}
    spans = sorted((n, n + (1 << (32 - p)) - 1) for _, n, p in subnets)
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end < start


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fabric_shapes)
def test_growth_from_1_to_capacity_never_changes_an_existing_allocation(shape):
    previous = None
    for sus in range(1, shape["capacity"] + 1):
        doc = plan_to_dict(build_plan(shaped_intent(shape, sus)))
        if previous is not None:
            for section in ("switches", "nodes", "links"):
                for key, value in previous[section].items():
                    assert doc[section].get(key) == value, f"{section} {key} changed when growing to {sus} SUs"
            assert len(doc["links"]) > len(previous["links"])
        previous = doc


def test_growth_past_capacity_is_reported_as_renumbering():
    from hwaac.plan.diff import diff_plans

    d = intent_dict("demo")
    old = plan_to_dict(plan_of(d))
    d["fabric"].update(su_count=5, su_capacity=5)
    d["addressing"]["loopbacks"]["leaf"] = "10.0.0.0/24"
    new = plan_to_dict(plan_of(d))
    diff = diff_plans(old, new)
    assert diff.renumbered, "more spines move existing leaf uplinks to other spine ports"


def test_asns_follow_rfc7938():
    plan = plan_of(intent_dict("b200-3tier"))
    leaves = plan.switches_of("leaf")
    assert len({s.asn for s in leaves}) == len(leaves)
    by_pod = defaultdict(set)
    for s in plan.switches_of("spine"):
        by_pod[(s.pod, s.plane)].add(s.asn)
    assert all(len(v) == 1 for v in by_pod.values())
    assert len({next(iter(v)) for v in by_pod.values()}) == len(by_pod)
    assert {s.asn for s in plan.switches_of("super_spine")} == {4_200_000_000}
    assert all(4_200_000_000 <= s.asn <= 4_294_967_294 for s in plan.switches)


three_tier_shapes = st.fixed_dictionaries(
    {
        "planes": st.sampled_from([1, 2, 4]),
        "rails": st.integers(1, 4),
        "nodes_per_su": st.integers(1, 8),
        "capacity": st.integers(2, 6),
        "sus_per_pod": st.integers(1, 3),
        "appliance": st.booleans(),
    }
)


def three_tier_intent(shape: dict, su_count: int) -> Intent:
    appliances = []
    if shape["appliance"]:
        appliances = [{"name": "ufm-01", "su": 1, "slot": shape["nodes_per_su"], "rails": [0]}]
    return Intent.model_validate(
        {
            "fabric": {
                "name": "prop3",
                "site": "lab",
                "tiers": 3,
                "planes": shape["planes"],
                "rails": shape["rails"],
                "nodes_per_su": shape["nodes_per_su"],
                "su_count": su_count,
                "su_capacity": shape["capacity"],
                "appliances": appliances,
            },
            "switches": {
                "leaf": {"model": "SN5600-O128", "downlinks": shape["nodes_per_su"]},
                "spine": {"model": "SN5600-O128", "sus_per_pod": shape["sus_per_pod"]},
                "super_spine": {"model": "SN5600-O128"},
            },
            "addressing": {
                "loopbacks": {"leaf": "10.0.0.0/22", "spine": "10.0.4.0/22", "super_spine": "10.0.8.0/22"},
                "leaf_spine": "10.1.0.0/16",
                "spine_super_spine": "10.2.0.0/16",
                "host_links": {"prefix": "172.16.0.0/16"},
            },
            "host": {"interface_name": "r{rail}p{plane}"},
        }
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(three_tier_shapes)
def test_three_tier_multi_plane_growth_is_stable_and_overlap_free(shape):
    previous = None
    for sus in range(1, shape["capacity"] + 1):
        plan = build_plan(three_tier_intent(shape, sus))
        values = [a for _, a in _addresses(plan)]
        assert len(values) == len(set(values)), "an address is allocated twice"
        ports = Counter(
            (d, p) for link in plan.links for d, p in ((link.a_device, link.a_port), (link.b_device, link.b_port))
        )
        assert max(ports.values()) == 1, "a port carries two cables"
        # every spine uplinks to exactly one group of super-spines, every super-spine to every pod of its plane
        ss_pods = defaultdict(set)
        for link in plan.links:
            if link.kind == "spine_super_spine":
                ss_pods[link.b_device].add(plan.switch_by_name[link.a_device].pod)
        pods = {s.pod for s in plan.switches_of("spine")}
        assert all(v == pods for v in ss_pods.values())
        doc = plan_to_dict(plan)
        if previous is not None:
            for section in ("switches", "nodes", "links"):
                for key, value in previous[section].items():
                    assert doc[section].get(key) == value, f"{section} {key} changed when growing to {sus} SUs"
        previous = doc
