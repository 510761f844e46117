"""Address allocation by arithmetic: every address is pool base + a growth-stable ordinal.

Ordinals are SU-major (``leaf ordinal = (su * planes + plane) * rails + rail``), so adding SUs appends
addresses after the existing ones and never renumbers them. Point-to-point links are /31s (RFC 3021); on
leaf-spine and spine-super-spine links the upper tier takes the even address. Host links follow the intent's
``host_links.mode`` and ``host_address`` parity (Juniper AI JVD: host odd; NVIDIA k8s-launch-kit: host even).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import netaddr

from hwaac.errors import IntentIssue
from hwaac.model.intent import Intent, NetBoxPrefixRef
from hwaac.plan.design import Design


@dataclass(frozen=True, slots=True)
class Pool:
    """A parsed pool. ``base`` is the network address as int, ``size`` the number of addresses."""

    path: str  # intent field path, for messages
    cidr: str
    base: int
    prefixlen: int

    @property
    def size(self) -> int:
        return 1 << (32 - self.prefixlen)

    @property
    def last(self) -> int:
        return self.base + self.size - 1

    def overlaps(self, other: Pool) -> bool:
        return self.base <= other.last and other.base <= self.last


def parse_pool(path: str, cidr: str | NetBoxPrefixRef) -> Pool | IntentIssue:
    """Parse an IPv4 prefix with netaddr; a host address with bits set, or IPv6, is an issue, and so is a pool
    still naming a NetBox prefix role (resolve it first: :func:`hwaac.validate.load_intent` with a lookup)."""
    if isinstance(cidr, NetBoxPrefixRef):
        return IntentIssue(
            path,
            f"names the NetBox prefix role {cidr.netbox_role!r}, which needs NetBox to resolve",
            cidr.netbox_role,
            "NETBOX_URL and NETBOX_TOKEN set, or the local NetBox up (hwaac netbox up); or a literal prefix",
            rule="netbox-pool-unresolved",
        )
    try:
        net = netaddr.IPNetwork(cidr)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return IntentIssue(path, "not an IP prefix", cidr, "CIDR notation such as 10.0.0.0/16", rule="not-a-prefix")
    if net.version != 4:
        return IntentIssue(path, "IPv6 pools are not supported yet", cidr, "an IPv4 prefix", rule="ipv6-pool")
    if net.ip != net.network:
        return IntentIssue(path, "host bits are set", cidr, f"the network address {net.cidr}", rule="host-bits-set")
    return Pool(path, str(net.cidr), int(net.network), net.prefixlen)


def smallest_prefix_for(addresses: int) -> int:
    """Longest IPv4 prefix length whose block holds ``addresses`` addresses."""
    return 32 - max(0, math.ceil(math.log2(max(addresses, 1))))


def rail_subnet_prefixlen(intent: Intent, design: Design) -> int:
    """Prefix length of one leaf's rail subnet: network, gateway, one address per downlink, broadcast."""
    given = intent.addressing.host_links.rail_subnet_prefixlen
    return given or smallest_prefix_for(design.leaf_downlinks + 3)


@dataclass(frozen=True, slots=True)
class Pools:
    loopback_leaf: Pool
    loopback_spine: Pool
    loopback_super_spine: Pool | None
    leaf_spine: Pool
    spine_super_spine: Pool | None
    host_links: Pool

    def present(self) -> list[Pool]:
        """The pools the fabric uses (super-spine pools only with 3 tiers), in field order."""
        return [
            p
            for p in (
                self.loopback_leaf,
                self.loopback_spine,
                self.loopback_super_spine,
                self.leaf_spine,
                self.spine_super_spine,
                self.host_links,
            )
            if p is not None
        ]


def parse_pools(intent: Intent) -> tuple[Pools | None, list[IntentIssue]]:
    a = intent.addressing
    issues: list[IntentIssue] = []
    entries = {
        "loopback_leaf": ("addressing.loopbacks.leaf", a.loopbacks.leaf),
        "loopback_spine": ("addressing.loopbacks.spine", a.loopbacks.spine),
        "loopback_super_spine": ("addressing.loopbacks.super_spine", a.loopbacks.super_spine),
        "leaf_spine": ("addressing.leaf_spine", a.leaf_spine),
        "spine_super_spine": ("addressing.spine_super_spine", a.spine_super_spine),
        "host_links": ("addressing.host_links.prefix", a.host_links.prefix),
    }
    parsed: dict[str, Pool | None] = {}
    for key, (path, cidr) in entries.items():
        if cidr is None:
            parsed[key] = None
            continue
        p = parse_pool(path, cidr)
        if isinstance(p, IntentIssue):
            issues.append(p)
            parsed[key] = None
        else:
            parsed[key] = p
    if intent.fabric.tiers == 3:
        for key in ("loopback_super_spine", "spine_super_spine"):
            if parsed[key] is None and entries[key][1] is None:
                issues.append(
                    IntentIssue(
                        entries[key][0],
                        "required for a 3-tier fabric",
                        None,
                        "an IPv4 prefix",
                        rule="three-tier-missing-pools",
                    )
                )
    if issues:
        return None, issues
    return Pools(**parsed), []  # type: ignore[arg-type]


def pool_needs(intent: Intent, design: Design) -> dict[str, int]:
    """Addresses each pool needs at ``su_capacity`` (keys as in :class:`Pools`)."""
    d = design
    leaves = d.su_capacity * d.rails * d.planes
    spines = d.spines_per_group * d.planes if d.tiers == 2 else d.pod_capacity * d.planes * d.spines_per_group
    needs = {
        "loopback_leaf": leaves + 1,  # + 1: the pool's first address is not used (topology.loopback)
        "loopback_spine": spines + 1,
        "leaf_spine": leaves * d.leaf_uplinks * 2,
    }
    if intent.addressing.host_links.mode == "p2p31":
        needs["host_links"] = leaves * d.leaf_downlinks * 2
    else:
        needs["host_links"] = leaves * (1 << (32 - rail_subnet_prefixlen(intent, design)))
    if d.tiers == 3:
        needs["loopback_super_spine"] = d.planes * d.spines_per_group * d.super_spines_per_group + 1
        needs["spine_super_spine"] = spines * d.spine_uplinks * 2
    return needs


def check_pools(intent: Intent, design: Design) -> list[IntentIssue]:
    """Pool problems: unparseable, too small for su_capacity, or overlapping another pool."""
    pools, issues = parse_pools(intent)
    if pools is None:
        return issues
    needs = pool_needs(intent, design)
    for key, need in needs.items():
        pool: Pool | None = getattr(pools, key)
        if pool is not None and need > pool.size:
            issues.append(
                IntentIssue(
                    pool.path,
                    f"pool too small: needs {need} addresses for {design.su_capacity} SU(s), "
                    f"/{pool.prefixlen} holds {pool.size}",
                    pool.cidr,
                    f"a /{smallest_prefix_for(need)} or larger",
                    rule="pool-too-small",
                )
            )
    listed = [p for p in (getattr(pools, k) for k in Pools.__slots__) if p is not None]
    for i, p in enumerate(listed):
        for q in listed[i + 1 :]:
            if p.overlaps(q):
                issues.append(
                    IntentIssue(
                        p.path,
                        f"overlaps {q.path} ({q.cidr})",
                        p.cidr,
                        "pools that share no address",
                        rule="pools-overlap",
                    )
                )
    if intent.addressing.host_links.mode == "rail_subnet":
        plen = rail_subnet_prefixlen(intent, design)
        if (1 << (32 - plen)) < design.leaf_downlinks + 3:
            issues.append(
                IntentIssue(
                    "addressing.host_links.rail_subnet_prefixlen",
                    f"a /{plen} cannot hold {design.leaf_downlinks} hosts, a gateway, network and broadcast",
                    plen,
                    f"<= {smallest_prefix_for(design.leaf_downlinks + 3)}",
                    rule="rail-subnet-too-small",
                )
            )
    return issues


# --- the allocation functions used by the planner (pure arithmetic) ------------------------------------------


def p2p31(pool: Pool, ordinal: int) -> int:
    """Network address of the ``ordinal``-th /31 of ``pool``."""
    return pool.base + 2 * ordinal


def plane_block(pool: Pool, planes: int, plane: int) -> tuple[int, int]:
    """(base, prefixlen) of ``plane``'s equal share of ``pool`` (planes is 1, 2 or 4).

    Host links of each plane get their own block so that a host can route exactly its plane's aggregate through
    that plane's rails (NVIDIA k8s-launch-kit puts the plane in the address bits for the same reason).
    """
    bits = planes.bit_length() - 1
    return pool.base + plane * (pool.size >> bits), pool.prefixlen + bits


def host_link_addresses(
    intent: Intent, pool: Pool, plane: int, leaf_in_plane: int, downlinks: int, port: int, rail_plen: int
) -> tuple[int, int, int, int]:
    """(network, prefixlen, host_ip, leaf_ip) of the host link on downlink ``port`` of a leaf.

    ``leaf_in_plane`` is the leaf's growth-stable index within its plane, ``su * rails + rail`` (su 0-based).
    In rail_subnet mode ``leaf_ip`` is the leaf's gateway, the first address of its subnet.
    """
    hl = intent.addressing.host_links
    base, _ = plane_block(pool, intent.fabric.planes, plane)
    if hl.mode == "p2p31":
        net = base + 2 * (leaf_in_plane * downlinks + port)
        return (net, 31, net + 1, net) if hl.host_address == "odd" else (net, 31, net, net + 1)
    net = base + leaf_in_plane * (1 << (32 - rail_plen))
    return net, rail_plen, net + 2 + port, net + 1
