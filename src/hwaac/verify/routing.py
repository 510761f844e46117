"""What the fabric's eBGP should converge to over a given set of live sessions: who reaches which origin, over
which sessions (ECMP), and how many prefixes each session carries.

A path-vector fixpoint as RFC 4271 describes it, reduced to what the plan decides here: every switch originates
its loopback (leaves also their host prefixes), advertises its best path to every peer, and a receiver drops a
path that holds its own ASN (section 9.1.2); the best path is the shortest AS path, and every path of that length
is a multipath (FRR's ``bgp bestpath as-path multipath-relax``, ``maximum-paths``). Prefixes that share an
origin travel together, so the work is per origin switch, not per prefix.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Edge:
    id: str  # the session id (its cable id)
    a: str
    b: str


@dataclass
class Routing:
    """The converged state for ``edges`` (live sessions) and ``origins`` (switch -> prefixes it originates)."""

    asn: Mapping[str, int]
    edges: tuple[Edge, ...]
    origins: Mapping[str, tuple[str, ...]]
    max_paths: Mapping[str, int] = field(default_factory=dict)
    paths: dict[str, dict[str, tuple[int, ...]]] = field(init=False)  # origin -> switch -> best AS path
    multipath: dict[str, dict[str, frozenset[str]]] = field(init=False)  # origin -> switch -> session ids

    def __post_init__(self) -> None:
        self.peers: dict[str, dict[str, str]] = {}  # switch -> session id -> the peer over it
        for e in self.edges:
            self.peers.setdefault(e.a, {})[e.id] = e.b
            self.peers.setdefault(e.b, {})[e.id] = e.a
        self.paths, self.multipath = {}, {}
        for origin in self.origins:
            self.paths[origin], self.multipath[origin] = self._converge(origin)

    def _converge(self, origin: str) -> tuple[dict[str, tuple[int, ...]], dict[str, frozenset[str]]]:
        paths: dict[str, tuple[int, ...]] = {origin: ()}
        mp: dict[str, frozenset[str]] = {origin: frozenset()}
        for _ in range(len(self.asn) + 2):
            cands: dict[str, list[tuple[tuple[int, ...], str]]] = {}
            for x, p in paths.items():
                adv = (self.asn[x], *p)
                for sid, y in self.peers.get(x, {}).items():
                    if y != origin and self.asn[y] not in adv:
                        cands.setdefault(y, []).append((adv, sid))
            new_paths: dict[str, tuple[int, ...]] = {origin: ()}
            new_mp: dict[str, frozenset[str]] = {origin: frozenset()}
            for y, cs in cands.items():
                shortest = min(len(a) for a, _ in cs)
                new_paths[y] = min(a for a, _ in cs if len(a) == shortest)
                new_mp[y] = frozenset(s for a, s in cs if len(a) == shortest)
            if new_paths == paths and new_mp == mp:
                break
            paths, mp = new_paths, new_mp
        return paths, mp

    def reaches(self, switch: str, origin: str) -> bool:
        return switch in self.paths.get(origin, {})

    def nexthops(self, switch: str, origin: str) -> frozenset[str]:
        """The sessions ``switch`` installs for ``origin``'s prefixes (empty at the origin or without a route)."""
        return self.multipath.get(origin, {}).get(switch, frozenset())

    def width(self, switch: str, origin: str) -> int:
        n = len(self.nexthops(switch, origin))
        cap = self.max_paths.get(switch)
        return min(n, cap) if cap else n

    def received(self, switch: str, session: str, peer: str) -> int:
        """Prefixes ``switch`` accepts from ``peer`` over ``session`` (FRR's ``pfxRcd``), of the planned origins."""
        if session not in self.peers.get(switch, {}):
            return 0
        own = self.asn[switch]
        total = 0
        for origin, prefixes in self.origins.items():
            p = self.paths[origin].get(peer)
            if p is not None and own not in (self.asn[peer], *p):
                total += len(prefixes)
        return total

    def upstream(self, switch: str, origin: str) -> set[tuple[str, str]]:
        """Every (switch, session) on the multipath DAG from ``switch`` towards ``origin``."""
        out: set[tuple[str, str]] = set()
        stack = [switch]
        seen = {switch}
        while stack:
            x = stack.pop()
            for sid in self.nexthops(x, origin):
                out.add((x, sid))
                y = self.peer_over(x, sid)
                if y is not None and y not in seen:
                    seen.add(y)
                    stack.append(y)
        return out

    def peer_over(self, switch: str, session: str) -> str | None:
        return self.peers.get(switch, {}).get(session)


def explain(
    planned: Routing, live: Routing, switch: str, origin: str, session_fault: Mapping[str, str], down: Iterable[str]
) -> set[str]:
    """The faults that make ``live`` differ from ``planned`` at ``switch`` for ``origin``: the faults of planned
    next-hop sessions that are gone, followed upstream where a session is live but its peer lost the route."""
    down = set(down)
    out: set[str] = set()
    seen: set[str] = set()

    def walk(x: str) -> None:
        if x in seen:
            return
        seen.add(x)
        if x in down:
            out.add(x)
            return
        if x == origin or (x != switch and planned.nexthops(x, origin) == live.nexthops(x, origin)):
            return  # nothing lost here, so nothing upstream of here made a difference
        gone = planned.nexthops(x, origin) - live.nexthops(x, origin)
        for sid in planned.nexthops(x, origin):
            y = planned.peer_over(x, sid)
            if sid in gone and sid in session_fault:
                out.add(session_fault[sid])
            elif y is not None:
                walk(y)

    if origin in down:
        out.add(origin)
    walk(switch)
    return out
