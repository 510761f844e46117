"""Devices of a fabric: leaves (one per SU, rail and plane), spines, super-spines, GPU nodes and appliances.

Ordinals are growth-stable (SU-major for leaves, pod-major for 3-tier spines) and drive addresses and ASNs
(:mod:`hwaac.plan.ipam`, :mod:`hwaac.plan.asn`).
"""

from __future__ import annotations

from collections.abc import Iterator

from hwaac.model.intent import Intent
from hwaac.plan.asn import leaf_asn, spine_asn
from hwaac.plan.design import Design
from hwaac.plan.ipam import Pool, Pools
from hwaac.plan.model import Node, Switch

SPINE_3TIER_DEFAULT = "spine-p{plane}-pod{pod:02d}-{index:02d}"


def spine_pattern(intent: Intent) -> str:
    """The spine naming pattern; 3-tier fabrics without an explicit one get the pod in the name."""
    if intent.fabric.tiers == 3 and "spine" not in intent.naming.model_fields_set:
        return SPINE_3TIER_DEFAULT
    return intent.naming.spine


def loopback(pool: Pool, ordinal: int) -> int:
    """Loopback /32 of the ``ordinal``-th switch of a role: the pool's first address is left out (an address
    ending in .0 is a valid /32, but operators read it as a network address)."""
    return pool.base + 1 + ordinal


def leaf_ordinal(design: Design, su: int, plane: int, rail: int) -> int:
    """Growth-stable index of a leaf (su 0-based)."""
    return (su * design.planes + plane) * design.rails + rail


def spine_ordinal(design: Design, pod: int, plane: int, j: int) -> int:
    return (pod * design.planes + plane) * design.spines_per_group + j


def super_spine_ordinal(design: Design, plane: int, group: int, member: int) -> int:
    return (plane * design.spines_per_group + group) * design.super_spines_per_group + member


def leaves(intent: Intent, design: Design, pools: Pools) -> Iterator[Switch]:
    pat, model = intent.naming.leaf, intent.switches.leaf.model
    for su in range(design.su_count):
        pod = su // design.sus_per_pod
        for plane in range(design.planes):
            for rail in range(design.rails):
                o = leaf_ordinal(design, su, plane, rail)
                name = pat.format(plane=plane, su=su + 1, rail=rail, pod=pod + 1, index=o + 1)
                yield Switch(
                    name,
                    "leaf",
                    plane,
                    o,
                    model,
                    leaf_asn(intent, o),
                    loopback(pools.loopback_leaf, o),
                    su=su + 1,
                    rail=rail,
                    pod=pod + 1 if design.tiers == 3 else None,
                )


def spines(intent: Intent, design: Design, pools: Pools) -> Iterator[Switch]:
    pat, model = spine_pattern(intent), intent.switches.spine.model
    pods = design.pods if design.tiers == 3 else 1
    for pod in range(pods):
        for plane in range(design.planes):
            for j in range(design.spines_per_group):
                o = spine_ordinal(design, pod, plane, j)
                name = pat.format(plane=plane, pod=pod + 1, index=j + 1)
                yield Switch(
                    name,
                    "spine",
                    plane,
                    o,
                    model,
                    spine_asn(intent, design, plane, pod),
                    loopback(pools.loopback_spine, o),
                    pod=pod + 1 if design.tiers == 3 else None,
                    group=j,
                )


def super_spines(intent: Intent, design: Design, pools: Pools) -> Iterator[Switch]:
    if design.tiers != 3:
        return
    assert intent.switches.super_spine is not None and pools.loopback_super_spine is not None
    pat, model = intent.naming.super_spine, intent.switches.super_spine.model
    for plane in range(design.planes):
        for g in range(design.spines_per_group):
            for m in range(design.super_spines_per_group):
                o = super_spine_ordinal(design, plane, g, m)
                name = pat.format(plane=plane, index=g * design.super_spines_per_group + m + 1)
                yield Switch(
                    name,
                    "super_spine",
                    plane,
                    o,
                    model,
                    intent.asn.super_spine,
                    loopback(pools.loopback_super_spine, o),
                    group=g,
                )


def nodes(intent: Intent, design: Design) -> Iterator[Node]:
    """GPU nodes fill free slots SU by SU until ``fabric.nodes`` (default: all); appliances take their slots."""
    f = intent.fabric
    appliances = {(a.su, a.slot): a for a in f.appliances}
    remaining = f.nodes if f.nodes is not None else f.su_count * f.nodes_per_su
    all_rails = tuple(range(f.rails))
    for su in range(1, f.su_count + 1):
        for slot in range(1, f.nodes_per_su + 1):
            a = appliances.get((su, slot))
            if a is not None:
                yield Node(a.name, "appliance", su, slot, tuple(sorted(a.rails)))
            elif remaining > 0:
                remaining -= 1
                yield Node(
                    intent.naming.node.format(su=su, slot=slot, pod=(su - 1) // design.sus_per_pod + 1),
                    "gpu",
                    su,
                    slot,
                    all_rails,
                )


def device_names(intent: Intent, design: Design) -> Iterator[tuple[str, str]]:
    """(role, name) of every device, for the duplicate-name rule; raises KeyError on a bad pattern field."""
    from hwaac.plan.ipam import Pool

    dummy = Pool("", "0.0.0.0/0", 0, 0)
    pools = Pools(dummy, dummy, dummy, dummy, dummy, dummy)
    for s in leaves(intent, design, pools):
        yield "leaf", s.name
    for s in spines(intent, design, pools):
        yield "spine", s.name
    for s in super_spines(intent, design, pools):
        yield "super_spine", s.name
    for n in nodes(intent, design):
        yield ("node" if n.kind == "gpu" else "appliance"), n.name
