"""Per-plan facts shared by every host's files, computed once per plan and cached.

Everything that does not depend on the host (intent lookups, the aggregate route, QoS vectors, neighbour-table
sizing) is worked out once, and files that only depend on the set of rail interfaces are memoised by that set,
so 12,500 hosts render in a couple of seconds. The plan is trusted as validated by :mod:`hwaac.model.rules`.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from hwaac.plan.model import Link, Node, Plan, ip_str

# Neighbour (ARP) table sizing, see neighbour_thresholds().
KERNEL_GC_THRESH = (128, 512, 1024)  # Linux defaults of net.ipv4.neigh.default.gc_thresh1/2/3
GC_THRESH1_CAP = 65_536  # caps gc_thresh3 at 262,144 entries (see neighbour_thresholds)


@dataclass(slots=True)
class Rail:
    """One NIC port of a host, in NIC order. Addresses are dotted-quad text."""

    ordinal: int  # NIC port ordinal = rail * planes + plane (0-based)
    rail: int
    plane: int
    interface: str  # Linux interface, e.g. rail0
    hca: str  # RDMA device, e.g. mlx5_0
    address: str  # host address on the link (Link.a_ip)
    peer: str  # leaf address (p2p31) or leaf gateway (rail_subnet) (Link.b_ip)
    network: str  # link subnet, e.g. 172.16.0.0
    prefixlen: int  # 31 (p2p31) or the rail subnet's length
    table: int  # routing table of this port: routing.table_base + ordinal
    priority: int  # source rule priority: routing.rule_priority_base + ordinal * rule_priority_step


@dataclass(slots=True)
class HostContext:
    """Everything host renderers need that is the same for all hosts of a plan."""

    fabric: str
    planes: int
    mtu: int  # host rail MTU in bytes (qos.host_mtu)
    aggregates: tuple[str, ...]  # per plane: the host-link block routed through that plane's rails, "172.16.0.0/16"
    fabric_prefixes: tuple[str, ...]  # the switches' own pools (loopbacks, inter-switch links), routed on every rail
    table_base: int
    priority_base: int
    priority_step: int
    tos: int  # RDMA-CM / verbs ToS byte, e.g. 106
    gid_index: int
    pfc: str  # mlnx_qos --pfc vector, e.g. "0,0,0,1,0,0,0,0"
    ecn_priorities: list[int]
    trust: str
    mlxconfig: dict[str, int | str]
    cnp: dict[str, int]
    dscp2prio: dict[str, int]
    nccl_extra: dict[str, str]
    sysctl_base: list[tuple[str, str]]  # intent.host.sysctl, in intent order, as text
    neighbour: list[tuple[str, int]]  # (key, value) of the gc_thresh sysctls (empty where the intent sets them)
    neighbour_basis: tuple[int, int, int, int]  # (su_capacity, nodes_per_su, nodes at capacity, NIC ports/node)
    memo: dict[tuple, str] = field(default_factory=dict)  # per-rail-set file texts


def default_tos(roce_dscp: int) -> int:
    """ToS byte for RoCE: DSCP in the top six bits, ECT(0) (binary 10) in the ECN bits: 26 -> 106.

    Source: cma_roce_tos / tc/1/traffic_class usage in ImperialCollegeLondon/rcs-node-config and
    att/netarbiter; NCCL_IB_TC takes the same full ToS byte (NVIDIA/nccl net_ib).
    """
    return roce_dscp << 2 | 2


def neighbour_thresholds(nodes: int, nics: int) -> tuple[int, int, int]:
    """gc_thresh1/2/3 of the IPv4 neighbour table for a fabric of ``nodes`` hosts with ``nics`` ports each.

    ``nodes`` is the node count at the design capacity (``su_capacity x nodes_per_su``), not the nodes built
    now, so growing the fabric up to its capacity leaves every existing host's sysctl file unchanged (the same
    growth rule as cables, addresses and ASNs). Appliances occupy node slots, so they are counted too.

    HPE's Slingshot host software guide ("ARP settings", HewlettPackard/shs-docs
    docs/portal/developer-portal/install/arp_settings.md) sets
    gc_thresh1 = nodes x adapters^2. Its gc_thresh2 = 1.5 x nodes x adapters and gc_thresh3 = 2 x nodes x
    adapters fall *below* gc_thresh1 as soon as a node has 2 or more adapters, which would put the hard limit
    under the no-GC floor, so we keep the kernel's ordering instead: gc_thresh2 = 2 x gc_thresh1 and
    gc_thresh3 = 4 x gc_thresh1 (both still at least HPE's figures). Bounds: never below the kernel defaults
    128/512/1024; gc_thresh1 capped at 65,536, so gc_thresh3 <= 262,144 entries. HPE warns that oversized
    tables strand kernel memory; a neighbour entry costs a few hundred bytes, so the cap bounds a full table to
    roughly 100 MiB. In p2p31 mode a rail port has a single neighbour (its leaf), so these limits are generous
    upper bounds; they matter in rail_subnet mode, where a rail is one L2 segment per SU.
    """
    t1 = max(KERNEL_GC_THRESH[0], min(nodes * nics * nics, GC_THRESH1_CAP))
    return t1, max(KERNEL_GC_THRESH[1], 2 * t1), max(KERNEL_GC_THRESH[2], 4 * t1)


def _build(plan: Plan) -> HostContext:
    intent = plan.intent
    qos, host = intent.qos, intent.host
    design = plan.design
    planes = design.planes
    nics = design.rails * planes  # NIC ports per node
    nodes = design.su_capacity * design.nodes_per_su  # node slots at capacity, not len(plan.nodes): growth-stable
    thresholds = neighbour_thresholds(nodes, nics)
    neighbour = [
        (f"net.ipv4.neigh.default.gc_thresh{i}", v)
        for i, v in enumerate(thresholds, 1)
        if f"net.ipv4.neigh.default.gc_thresh{i}" not in host.sysctl
    ]
    return HostContext(
        fabric=intent.fabric.name,
        planes=planes,
        mtu=qos.host_mtu,
        aggregates=tuple(f"{ip_str(n)}/{p}" for n, p in map(plan.host_aggregate, range(planes))),
        fabric_prefixes=tuple(p.cidr for p in plan.pools.present() if p is not plan.pools.host_links),
        table_base=host.routing.table_base,
        priority_base=host.routing.rule_priority_base,
        priority_step=host.routing.rule_priority_step,
        tos=host.roce_tos if host.roce_tos is not None else default_tos(qos.roce_dscp[0]),
        gid_index=host.nccl_gid_index,
        pfc=",".join("1" if p in qos.pfc_priorities else "0" for p in range(8)),
        ecn_priorities=sorted(host.ecn_priorities if host.ecn_priorities is not None else [qos.lossless_priority]),
        trust=host.trust,
        mlxconfig=dict(host.mlxconfig),
        cnp={"dscp": qos.cnp_dscp, "priority": qos.cnp_priority},
        dscp2prio={**{str(d): qos.lossless_priority for d in qos.roce_dscp}, str(qos.cnp_dscp): qos.cnp_priority},
        nccl_extra=dict(host.nccl_env),
        sysctl_base=[(k, str(v)) for k, v in host.sysctl.items()],
        neighbour=neighbour,
        neighbour_basis=(design.su_capacity, design.nodes_per_su, nodes, nics),
    )


_CACHE: dict[int, tuple[weakref.ref[Plan], HostContext]] = {}


def context(plan: Plan) -> HostContext:
    """The cached :class:`HostContext` of ``plan`` (dropped when the plan is garbage collected)."""
    key = id(plan)
    hit = _CACHE.get(key)
    if hit is not None and hit[0]() is plan:
        return hit[1]
    ctx = _build(plan)

    def forget(_ref: weakref.ref[Plan], k: int = key) -> None:
        _CACHE.pop(k, None)

    _CACHE[key] = (weakref.ref(plan, forget), ctx)
    return ctx


def rails_of(plan: Plan, node: Node, ctx: HostContext) -> list[Rail]:
    """The node's NIC ports in NIC order (ordinal = rail * planes + plane), from its host links."""
    planes, tb, pb, ps = ctx.planes, ctx.table_base, ctx.priority_base, ctx.priority_step
    out = []
    for link in plan.links_by_device.get(node.name, ()):
        if link.kind != "host" or link.a_device != node.name:
            continue
        out.append(_rail(link, planes, tb, pb, ps))
    out.sort(key=lambda r: r.ordinal)
    return out


def _rail(link: Link, planes: int, table_base: int, priority_base: int, priority_step: int) -> Rail:
    rail = link.rail if link.rail is not None else 0
    ordinal = rail * planes + link.plane
    return Rail(
        ordinal,
        rail,
        link.plane,
        link.a_port,
        link.hca or "",
        ip_str(link.a_ip),
        ip_str(link.b_ip),
        ip_str(link.network),
        link.prefixlen,
        table_base + ordinal,
        priority_base + ordinal * priority_step,
    )
