"""Hop addresses to planned cables: the cables a flow's forward probes crossed, each as a set of candidates.

A router answers an expired probe from the address of the interface the probe came IN on only with
``net.ipv4.icmp_errors_use_inbound_ifaddr=1`` (Linux ``Documentation/networking/ip-sysctl.rst``; ``icmp_send`` in
``net/ipv4/icmp.c``); then the hop's address is a link end and names the exact cable, which tells apart the
parallel cables between a leaf and a spine. Otherwise it answers from the interface towards the prober or from
its loopback (SONiC's FRR sets BGP routes' source to Loopback0): only the device is known, and the cable is the
set of planned cables between the previous device and that one. The last hop is the destination's reply: its
host link. A hop that did not answer (``*``) or an address the plan does not know leaves that cable unknown.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from hwaac.plan.model import Link, Plan
from hwaac.probe.model import MISSING_HOP, Flow, FlowResult


@dataclass(frozen=True, slots=True)
class Hop:
    """Where an address lives: the device, and the link and end (0 a, 1 b) for a link end address (None for a
    loopback)."""

    device: str
    link: int | None = None
    end: int | None = None


@dataclass(frozen=True, slots=True)
class MappedPath:
    """The cables a flow's forward probes crossed, in order, each a set of candidate link indices (one for an
    exact cable, the parallel cables of two devices when only the device is known, empty when unknown).
    ``complete``: every cable is known and the path ends at the destination; ``notes``: why not, and ambiguities."""

    cables: tuple[frozenset[int], ...]
    complete: bool
    notes: tuple[str, ...] = ()


@lru_cache(maxsize=65536)
def _ip(text: str) -> int | None:
    """Dotted-quad text as an int (inet_aton, strict to four parts), None when it is no IPv4 address."""
    if text.count(".") != 3:
        return None
    try:
        return int.from_bytes(socket.inet_aton(text), "big")
    except OSError:
        return None


class PathIndex:
    """Address -> devices, links and ends of a set of planned links (and switch loopbacks).

    Args:
        links: the links, named by their position (a plan's ``links``).
        loopbacks: device -> loopback address (int).
        inbound: routers answer from the inbound interface (the sysctl above); False trusts devices only.
    """

    def __init__(
        self, links: Sequence[Link], loopbacks: Mapping[str, int] | None = None, *, inbound: bool = True
    ) -> None:
        self.links = list(links)
        self.inbound = inbound
        self.switches = frozenset(loopbacks or {}) | {lk.b_device for lk in self.links}
        self.addr: dict[int, list[Hop]] = {}
        self.between: dict[tuple[str, str], list[int]] = {}
        self.host_links: dict[int, int] = {}  # host (a) address -> its host link
        for i, link in enumerate(self.links):
            self.addr.setdefault(link.a_ip, []).append(Hop(link.a_device, i, 0))
            self.addr.setdefault(link.b_ip, []).append(Hop(link.b_device, i, 1))
            self.between.setdefault((link.a_device, link.b_device), []).append(i)
            self.between.setdefault((link.b_device, link.a_device), []).append(i)
            if link.kind == "host":
                self.host_links.setdefault(link.a_ip, i)
        for device, addr in (loopbacks or {}).items():
            self.addr.setdefault(addr, []).append(Hop(device))

    @classmethod
    def from_plan(cls, plan: Plan, *, inbound: bool = True) -> PathIndex:
        return cls(plan.links, {s.name: s.loopback for s in plan.switches}, inbound=inbound)

    def locate(self, address: str) -> list[Hop] | str:
        """Where ``address`` lives, or the reason it cannot be placed."""
        a = _ip(address)
        if a is None:
            return f"{address!r} is not an IPv4 address"
        found = self.addr.get(a)
        if not found:
            return f"{address} is no address of the plan (no link end, no loopback)"
        return found

    def host_link(self, address: str) -> int | None:
        """The host link whose host end has ``address``."""
        a = _ip(address)
        return None if a is None else self.host_links.get(a)

    def ends(self, flow: Flow) -> tuple[int | None, int | None]:
        """The source's and the destination's host links (known from the plan without a path)."""
        return self.host_link(flow.src_ip), self.host_link(flow.dst_ip)

    def parallel(self, a: str, b: str) -> frozenset[int]:
        """The planned cables between devices ``a`` and ``b``."""
        return frozenset(self.between.get((a, b), ()))

    def _cable(
        self, k: int, hop: str, prev: str | None, flow: Flow, last: bool, notes: list[str]
    ) -> tuple[frozenset[int], str | None]:
        """The cable into hop ``k`` (1-based) from device ``prev``, and the hop's device."""
        if last:
            i = self.host_link(flow.dst_ip)
            if i is None:
                notes.append(f"destination {flow.dst_ip} is no host address of the plan")
                return frozenset(), None
            link = self.links[i]
            if prev is not None and prev != link.b_device:
                notes.append(f"hop {k}: the destination was reached from {prev}, not from its leaf {link.b_device}")
            return frozenset({i}), link.a_device
        where = self.locate(hop)
        if isinstance(where, str):
            notes.append(f"hop {k}: {where}")
            return frozenset(), None
        devices = {h.device for h in where}
        if len(devices) > 1:
            notes.append(f"hop {k}: {hop} is planned on several devices ({', '.join(sorted(devices))})")
            return frozenset(), None
        device = where[0].device
        ends = [h for h in where if h.link is not None]
        if self.inbound and len(ends) == 1:
            link = self.links[ends[0].link]  # type: ignore[index]
            other = link.a_device if ends[0].end == 1 else link.b_device
            if prev is None or other == prev:
                return frozenset({ends[0].link}), device  # type: ignore[arg-type]
            notes.append(
                f"hop {k}: {hop} ({device}) is not on a cable from {prev}: the router answered from "
                "another interface (net.ipv4.icmp_errors_use_inbound_ifaddr=1 names the cable)"
            )
        if prev is None:
            notes.append(f"hop {k}: {device} answered, but the hop before it is unknown")
            return frozenset(), device
        cand = self.parallel(prev, device)
        if not cand:
            notes.append(f"hop {k}: no planned cable between {prev} and {device}")
        elif len(cand) > 1:
            notes.append(f"hop {k}: one of {len(cand)} parallel cables {prev} - {device}")
        return cand, device

    def map(self, result: FlowResult) -> MappedPath:
        """The cables of ``result``'s learned path (:class:`MappedPath`)."""
        flow, path = result.flow, result.path
        if path is None:
            return MappedPath((), False, ("no path learned",))
        notes: list[str] = []
        if self.host_link(flow.src_ip) is None:
            notes.append(f"source {flow.src_ip} is no host address of the plan")
        prev: str | None = flow.src_host
        cables: list[frozenset[int]] = []
        for k, hop in enumerate(path, 1):
            if hop == MISSING_HOP:
                notes.append(f"hop {k} did not answer")
                cables.append(frozenset())
                prev = None
                continue
            cand, prev = self._cable(k, hop, prev, flow, k == len(path) and hop == flow.dst_ip, notes)
            cables.append(cand)
        reached = bool(path) and path[-1] == flow.dst_ip
        if not reached:
            notes.append("the path does not reach the destination")
        complete = reached and result.path_complete and all(cables)
        return MappedPath(tuple(cables), complete, tuple(notes))

    def name(self, cables: frozenset[int]) -> str:
        """:func:`cables_name` of ``cables`` among these links."""
        return cables_name(self.links, cables)


def cables_name(links: Sequence[Link], cables: frozenset[int]) -> str:
    """A cable's id, or ``A - B (one of N: id, id, ...)`` for a set of parallel cables (indices into ``links``):
    the name a suspect's component and the exporter's series share."""
    if len(cables) == 1:
        return links[next(iter(cables))].cable_id
    ids = sorted(links[i].cable_id for i in cables)
    first = links[min(cables)]
    return f"{first.a_device} - {first.b_device} (one of {len(ids)}: {', '.join(ids)})"


__all__ = ["Hop", "MappedPath", "PathIndex", "cables_name"]
