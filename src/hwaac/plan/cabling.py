"""Port-level links (cables) of a fabric.

NIC port (plane p, rail r) of slot h in SU s goes to leaf (p, s, r) port h-1 (the rail rule of NVIDIA's DGX
SuperPOD reference architectures); leaf and spine uplinks spread evenly over the layer above. Every index is
growth-stable, so adding SUs only adds cables; ids are H/L/S + ordinal. The rules: docs/plan.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from hwaac.model.intent import Intent
from hwaac.plan.design import Design
from hwaac.plan.ipam import Pools, host_link_addresses, rail_subnet_prefixlen
from hwaac.plan.model import Link, LinkKind, Node, Switch
from hwaac.plan.ports import port_names
from hwaac.plan.topology import leaf_ordinal


def host_links(
    intent: Intent, design: Design, pools: Pools, nodes: list[Node], leaf_by_ordinal: dict[int, Switch]
) -> Iterator[Link]:
    names = port_names(design.leaf_model)
    h = intent.host
    rail_plen = rail_subnet_prefixlen(intent, design)
    down = design.leaf_downlinks
    for node in nodes:
        su, port = node.su - 1, node.slot - 1
        for rail in node.rails:
            for plane in range(design.planes):
                lo = leaf_ordinal(design, su, plane, rail)
                leaf = leaf_by_ordinal[lo]
                nic = rail * design.planes + plane
                net, plen, host_ip, leaf_ip = host_link_addresses(
                    intent, pools.host_links, plane, su * design.rails + rail, down, port, rail_plen
                )
                yield Link(
                    "host",
                    f"H{lo * down + port:07d}",
                    node.name,
                    h.interface_name.format(rail=rail, plane=plane, port=nic),
                    leaf.name,
                    names[port],
                    net,
                    plen,
                    host_ip,
                    leaf_ip,
                    plane,
                    rail,
                    h.hca_name.format(rail=rail, plane=plane, port=nic),
                )


def _uplink(
    kind: LinkKind,
    prefix: str,
    base: int,
    lower: Switch,
    u: int,
    up: int,
    lower_port: str,
    upper: Switch,
    upper_port: str,
) -> Link:
    """Uplink ``u`` of the ``up`` of ``lower``: cable ``prefix`` + its ordinal in the layer, on the ordinal-th /31 of
    the pool at ``base`` (the lower end on the odd address, the upper on the even one)."""
    o = lower.ordinal * up + u
    net = base + 2 * o
    return Link(
        kind, f"{prefix}{o:07d}", lower.name, lower_port, upper.name, upper_port, net, 31, net + 1, net, lower.plane
    )


def leaf_spine_links(
    design: Design, pools: Pools, leaves: list[Switch], spine_index: dict[tuple[int, int, int | None], Switch]
) -> Iterator[Link]:
    leaf_ports, spine_ports = port_names(design.leaf_model), port_names(design.spine_model)
    S, lps, up, down = design.spines_per_group, design.links_per_leaf_spine, design.leaf_uplinks, design.leaf_downlinks
    base = pools.leaf_spine.base
    for leaf in leaves:
        assert leaf.su is not None and leaf.rail is not None  # a leaf has both
        su, rail = leaf.su - 1, leaf.rail
        pod = su // design.sus_per_pod if design.tiers == 3 else 0
        leaf_in_group = (su % design.sus_per_pod if design.tiers == 3 else su) * design.rails + rail
        for u in range(up):
            j, k = u % S, u // S
            spine = spine_index[pod, leaf.plane, j]
            yield _uplink(
                "leaf_spine", "L", base, leaf, u, up, leaf_ports[down + u], spine, spine_ports[leaf_in_group * lps + k]
            )


def spine_super_spine_links(
    design: Design, pools: Pools, spines: list[Switch], ss_index: dict[tuple[int, int | None, int], Switch]
) -> Iterator[Link]:
    if design.tiers != 3:
        return
    assert design.super_spine_model is not None and pools.spine_super_spine is not None
    spine_ports, ss_ports = port_names(design.spine_model), port_names(design.super_spine_model)
    G, lpss, up, down = (
        design.super_spines_per_group,
        design.links_per_spine_super_spine,
        design.spine_uplinks,
        design.spine_downlinks,
    )
    base = pools.spine_super_spine.base
    for spine in spines:
        assert spine.pod is not None  # a spine of 3 tiers has its pod
        pod = spine.pod - 1
        for u in range(up):
            m, k = u % G, u // G
            ss = ss_index[spine.plane, spine.group, m]
            yield _uplink(
                "spine_super_spine", "S", base, spine, u, up, spine_ports[down + u], ss, ss_ports[pod * lpss + k]
            )
