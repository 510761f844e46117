"""Pinglists from the plan: per GPU node and rail port, the peers to probe and the UDP ports of each flow.

Peers are the same rail's (and plane's) nodes in other SUs, so every probe crosses leaf -> spine -> leaf; with one
SU, the other nodes under the same leaf. Peer ``j`` of the node at position ``p`` of its SU is in SU
``others[(p + j) % len(others)]`` at position ``(p + j // len(others)) % n``: the SUs are taken in turn, so every
leaf pair of a rail is probed once an SU has as many nodes as there are other SUs. Each peer is probed from
``sports`` source ports (one flow each under L4 ECMP hashing), the same ports on every node. Deterministic: a
function of the plan and the options only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hwaac.plan.model import Link, Plan, ip_str
from hwaac.probe.model import Flow

DPORT = 31790  # the responder's UDP port: hwaac's choice, below Linux's ephemeral range (ip_local_port_range 32768)
SPORT_BASE = 31800  # first source port; flow ports are SPORT_BASE + peer * sports + i, also below 32768
PEERS, SPORTS = 2, 8


@dataclass(frozen=True, slots=True)
class RailPort:
    """A GPU node's port on one rail: the node, its SU and slot, the interface and address, the leaf above."""

    node: str
    su: int
    slot: int
    plane: int
    rail: int
    interface: str
    ip: str
    leaf: str


def rail_ports(plan: Plan) -> list[RailPort]:
    """Every GPU node's rail port (host links), in plan order."""
    nodes = {n.name: n for n in plan.nodes if n.kind == "gpu"}
    out = []
    for link in plan.links:
        n = nodes.get(link.a_device) if link.kind == "host" else None
        if n is not None:
            out.append(
                RailPort(
                    n.name, n.su, n.slot, link.plane, link.rail or 0, link.a_port, ip_str(link.a_ip), link.b_device
                )
            )
    return out


def host_link_of(plan: Plan, node: str, ip: str) -> Link | None:
    """The host link of ``node`` whose address is ``ip``."""
    for link in plan.links_by_device.get(node, ()):
        if link.kind == "host" and link.a_device == node and ip_str(link.a_ip) == ip:
            return link
    return None


def pinglist(
    plan: Plan,
    *,
    peers: int = PEERS,
    sports: int = SPORTS,
    hosts: Iterable[str] | None = None,
    sport_base: int = SPORT_BASE,
    dport: int = DPORT,
) -> list[Flow]:
    """The flows of every GPU node (or of ``hosts``), by node, rail port, peer and source port.

    Raises:
        ValueError: options out of range (peers or sports below 1, ports past 65535).
    """
    if peers < 1 or sports < 1:
        raise ValueError(f"peers ({peers}) and sports ({sports}) must be at least 1")
    if sport_base < 1 or sport_base + peers * sports - 1 > 65535 or not 0 < dport <= 65535:
        raise ValueError(f"source ports {sport_base}..{sport_base + peers * sports - 1} or port {dport} past 65535")
    want = None if hosts is None else set(hosts)
    ports = rail_ports(plan)
    groups: dict[tuple[int, int], dict[int, list[RailPort]]] = {}
    for rp in ports:
        groups.setdefault((rp.plane, rp.rail), {}).setdefault(rp.su, []).append(rp)
    for by_su in groups.values():
        for members in by_su.values():
            members.sort(key=lambda r: (r.slot, r.node))
    out: list[Flow] = []
    for rp in sorted((r for r in ports if want is None or r.node in want), key=lambda r: (r.node, r.rail, r.plane)):
        by_su = groups[(rp.plane, rp.rail)]
        mine = by_su[rp.su]
        p = mine.index(rp)
        others = sorted(su for su in by_su if su != rp.su)
        chosen: list[RailPort] = []
        if others:
            for j in range(peers):
                there = by_su[others[(p + j) % len(others)]]
                chosen.append(there[(p + j // len(others)) % len(there)])
        else:
            rest = [r for r in mine if r is not rp]
            chosen = [rest[(p + j) % len(rest)] for j in range(min(peers, len(rest)))] if rest else []
        seen: set[str] = set()
        for j, peer in enumerate(chosen):
            if peer.ip in seen:
                continue
            seen.add(peer.ip)
            for i in range(sports):
                out.append(
                    Flow(rp.node, rp.interface, rp.ip, peer.node, peer.ip, rp.rail, sport_base + j * sports + i, dport)
                )
    return out


__all__ = ["DPORT", "PEERS", "SPORTS", "SPORT_BASE", "RailPort", "host_link_of", "pinglist", "rail_ports"]
