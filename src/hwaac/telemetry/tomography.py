"""Loss tomography: from probe results whose forward paths are mapped to planned cables, the cables that lose.

Greedy explanation, after 007 (Arzani et al., "007: Democratically Finding the Cause of Packet Drops", NSDI 2018)
and NetBouncer (Tan et al., NSDI 2019): the flows that lost probes vote for the cables on their paths; the cable
that explains the most lost probes is named when its own loss estimate (lost / sent over every flow crossing it,
the clean ones too) is above the SLO with enough evidence (``localise.probe_*``: probes, lossy flows, and a
binomial tail under the SLO); its flows are then explained and the vote is repeated. A cable crossed only by clean
flows is exonerated. Pairs of which nothing came back at all are judged apart (:func:`rule_probe_unreachable`):
a rail port, or a node, all of whose pairs are dark is named itself, not the many cables its paths would cross.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from hwaac.probe.model import NO_RESPONDER, FlowResult
from hwaac.probe.paths import PathIndex
from hwaac.telemetry.slo import PROBE_LOSS, SloSet, default_slos
from hwaac.telemetry.suspects import FAULT, WARN, Component, Evidence, Suspect, link_components

RULE_LOSS, RULE_UNREACHABLE = "probe_path_loss", "probe_unreachable"


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    if k > n or p <= 0:
        return 0.0
    if p >= 1:
        return 1.0
    lp, lq, top = math.log(p), math.log1p(-p), math.lgamma(n + 1)

    def pmf(i: int) -> float:
        return math.exp(top - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq)

    if k <= n * p:
        return max(0.0, 1.0 - sum(pmf(i) for i in range(k)))
    total = 0.0
    for i in range(k, n + 1):
        term = pmf(i)
        total += term
        if term < total * 1e-15:
            break
    return min(1.0, total)


@dataclass(slots=True)
class CableLoss:
    """Probes across one cable (or set of parallel cables) over the flows whose mapped paths cross it."""

    cables: frozenset[int]
    sent: int = 0
    lost: int = 0
    flows: int = 0
    lossy_flows: int = 0

    @property
    def estimate(self) -> float:
        return self.lost / self.sent if self.sent else 0.0


@dataclass(slots=True)
class Tomography:
    """Suspects, the per-cable estimates (all usable flows), what the probes did not cover, and a summary."""

    suspects: list[Suspect]
    estimates: dict[frozenset[int], CableLoss]
    coverage: dict[str, list[str]] = field(default_factory=dict)
    summary: dict[str, int | float] = field(default_factory=dict)


@dataclass(slots=True)
class _F:
    r: FlowResult
    lost: int
    cables: tuple[frozenset[int], ...]


def _slo(slos: SloSet) -> float:
    o = slos.slos.get(PROBE_LOSS) or default_slos().slos[PROBE_LOSS]
    return o.max if o.max is not None else 0.0


def _who(r: FlowResult) -> str:
    f = r.flow
    return f"{f.src_host} {f.src_if} -> {f.dst_host} ({f.dst_ip}) sport {f.sport}"


def rule_probe_unreachable(
    pairs: dict[tuple[str, str], list[FlowResult]], index: PathIndex, slo: float
) -> tuple[list[Suspect], set[tuple[str, str]]]:
    """Pairs of which nothing came back on any flow: a node all of whose probed rail ports are dark (every pair
    of each dark) is the suspect; else such a rail port's host link; else the pair. Returns the suspects and the
    dark pairs (which tomography leaves out)."""
    dark = {p for p, rs in pairs.items() if all(r.dark for r in rs)}
    if not dark:
        return [], dark
    by_addr: dict[str, set[tuple[str, str]]] = {}
    where: dict[str, tuple[str, str]] = {}  # address -> (node, interface)
    for (src, dst), rs in pairs.items():
        by_addr.setdefault(src, set()).add((src, dst))
        by_addr.setdefault(dst, set()).add((src, dst))
        f = rs[0].flow
        for a, node in ((src, f.src_host), (dst, f.dst_host)):
            i = index.host_link(a)
            where.setdefault(a, (node, index.links[i].a_port if i is not None else ""))
    dark_addr = {a for a, ps in by_addr.items() if ps <= dark}
    by_node: dict[str, set[str]] = {}
    for a, (node, _) in where.items():
        by_node.setdefault(node, set()).add(a)
    out: list[Suspect] = []
    explained: set[tuple[str, str]] = set()

    def evidence(a: str) -> Evidence:
        rs = [r for p in by_addr[a] for r in pairs[p]]
        last = sorted({r.path[-1] for r in rs if r.path and r.path[-1] != "*"})
        node, iface = where[a]
        return Evidence(
            "probe reachability",
            f"{node} {iface or a}".strip() + f" ({a})",
            1.0,
            "share of probes lost",
            slo,
            FAULT,
            f"{len(by_addr[a])} pair(s), {len(rs)} flows, {sum(r.sent for r in rs)} probes: "
            "no reply and no count came back" + (f"; last hops that answered: {', '.join(last)}" if last else ""),
        )

    for node in sorted(by_node):
        addrs = by_node[node]
        dk = sorted(addrs & dark_addr)
        if not dk:
            continue
        links = tuple(sorted(i for a in dk if (i := index.host_link(a)) is not None))
        for a in dk:
            explained |= by_addr[a]
        if set(dk) == addrs:
            comps = (
                Component("host", node, node, role="unreachable on every rail port probed"),
                *(Component("nic", f"{node} {where[a][1] or a}", node, where[a][1], "rail port") for a in dk),
            )
            out.append(
                Suspect(
                    RULE_UNREACHABLE,
                    FAULT,
                    comps,
                    tuple(evidence(a) for a in dk),
                    f"no probe to or from {node} came back on any of its {len(dk)} rail port(s) probed, while their "
                    "peers answer other nodes: the node (down, its NICs, or its responder) rather than the fabric",
                    (2.0 + len(dk), 1.0 / slo if slo else math.inf),
                    links=links,
                    nodes=(node,),
                )
            )
            continue
        for a in dk:
            i = index.host_link(a)
            comps = (
                link_components(index.links[i])
                if i is not None
                else (Component("nic", f"{node} {where[a][1] or a}", node, where[a][1], "rail port"),)
            )
            out.append(
                Suspect(
                    RULE_UNREACHABLE,
                    FAULT,
                    comps,
                    (evidence(a),),
                    f"no probe to or from {node}'s rail port {a} came back, from any peer, while its other rail ports "
                    "answer: that port's link (NIC, optic, cable or leaf port)",
                    (2.0, 1.0 / slo if slo else math.inf),
                    links=(i,) if i is not None else (),
                    nodes=(node,),
                )
            )
    for src, dst in sorted(dark - explained):
        rs = pairs[(src, dst)]
        f = rs[0].flow
        last = sorted({r.path[-1] for r in rs if r.path and r.path[-1] != "*"})
        ev = Evidence(
            "probe reachability",
            f"{f.src_host} {f.src_if} -> {f.dst_host} ({dst})",
            1.0,
            "share of probes lost",
            slo,
            FAULT,
            f"{len(rs)} flows, {sum(r.sent for r in rs)} probes, no "
            "reply" + (f"; last hops that answered: {', '.join(last)}" if last else ""),
        )
        out.append(
            Suspect(
                RULE_UNREACHABLE,
                FAULT,
                (Component("link", f"path {f.src_host} {f.src_if} -> {f.dst_host} {dst}", role="unreachable pair"),),
                (ev,),
                f"{f.src_host} cannot reach {f.dst_host} on rail {f.rail} although both answer other peers: a routing "
                "hole or a blackholing hop between them" + (f" (after {', '.join(last)})" if last else ""),
                (1.0, 1.0 / slo if slo else math.inf),
                nodes=tuple(sorted({f.src_host, f.dst_host})),
            )
        )
    return out, dark


def _components(cables: frozenset[int], index: PathIndex) -> tuple[Component, ...]:
    if len(cables) == 1:
        return link_components(index.links[next(iter(cables))])
    first = index.links[min(cables)]
    group = Component(
        "link",
        index.name(cables),
        role=f"one of {len(cables)} parallel cables (the hop answered from its device, not the cable)",
    )
    return (
        group,
        *(
            Component(
                "cable",
                index.links[i].cable_id,
                role=f"{index.links[i].a_device} "
                f"{index.links[i].a_port} - {index.links[i].b_device} {index.links[i].b_port}",
            )
            for i in sorted(cables, key=lambda i: index.links[i].cable_id)
        ),
        *(
            Component("switch" if d in index.switches else "host", d, d, role="an end of every one of them")
            for d in (first.a_device, first.b_device)
        ),
    )


def rule_probe_path_loss(flows: Sequence[_F], index: PathIndex, slos: SloSet) -> list[Suspect]:
    """The greedy explanation of the module docstring."""
    slo, loc = _slo(slos), slos.localise
    crossing: dict[frozenset[int], list[int]] = {}
    for n, f in enumerate(flows):
        for c in f.cables:
            crossing.setdefault(c, []).append(n)
    explained: set[int] = set()
    out: list[Suspect] = []
    while True:
        best: tuple[tuple[int, float], frozenset[int], CableLoss, float] | None = None
        for c, members in crossing.items():
            est = CableLoss(c)
            for n in members:
                if n in explained:
                    continue
                f = flows[n]
                est.sent += f.r.sent
                est.flows += 1
                if f.lost:
                    est.lost += f.lost
                    est.lossy_flows += 1
            if (
                not est.lost
                or est.sent < loc.probe_min_probes
                or est.lossy_flows < loc.probe_min_flows
                or est.estimate <= slo
            ):
                continue
            p = binomial_tail(est.lost, est.sent, slo)
            if p >= loc.probe_significance:
                continue
            key = (est.lost, est.estimate)
            if best is None or key > best[0] or (key == best[0] and index.name(c) < index.name(best[1])):
                best = (key, c, est, p)
        if best is None:
            return out
        _, c, est, p = best
        members = [n for n in crossing[c] if n not in explained]
        # cables crossed by exactly the same unexplained flows: the probes cannot tell them apart, so all are named
        same = set(members)
        tied = sorted(
            (t for t, m in crossing.items() if t != c and {n for n in m if n not in explained} == same), key=index.name
        )
        lossy = sorted((flows[n] for n in members if flows[n].lost), key=lambda f: (-f.lost, _who(f.r)))
        explained.update(n for n in members if flows[n].lost)
        name = " or ".join(index.name(x) for x in (c, *tied))
        ev = [
            Evidence(
                "probe forward loss",
                name,
                est.estimate,
                "ratio",
                slo,
                FAULT,
                f"{est.lost} of {est.sent} probes lost by {est.lossy_flows} of the {est.flows} flows whose "
                f"paths cross it; P = {p:.1e} were it at the SLO",
            )
        ]
        ev += [
            Evidence(
                "flow forward loss",
                _who(f.r),
                f.lost / f.r.sent,
                "ratio",
                slo,
                WARN,
                f"{f.lost} of {f.r.sent} lost; path {' '.join(f.r.path or ())}",
            )
            for f in lossy[:3]
        ]
        exact = len(c) == 1 and not tied
        comps = tuple(x for t in (c, *tied) for x in _components(t, index))
        out.append(
            Suspect(
                RULE_LOSS,
                FAULT,
                comps,
                tuple(ev),
                f"active probes (UDP, one ECMP path per source port) whose learned forward paths cross {name} lost "
                f"{est.lost} of {est.sent} ({est.estimate:.2%}, SLO {slo:.2%}) over {est.lossy_flows} of {est.flows} "
                "flows; it explains more of the lost probes than any other cable on their paths (greedy tomography, "
                "007 / NetBouncer), and the probes lost elsewhere were not enough to name another"
                + (
                    ""
                    if len(c) == 1
                    else "; the routers answered from their device, not the cable, so it is one of "
                    "these parallel cables (set net.ipv4.icmp_errors_use_inbound_ifaddr=1 to name it)"
                )
                + (
                    ""
                    if not tied
                    else f"; every probe that crossed {index.name(c)} also crossed "
                    f"{' and '.join(index.name(t) for t in tied)}, so the probes cannot tell them apart "
                    "(more peers per rail, or counters at their ends, can)"
                ),
                (2.0 if exact else 1.0, est.estimate / slo if slo else math.inf),
                links=tuple(sorted(c.union(*tied))),
                nodes=tuple(sorted({h for n in members for h in (flows[n].r.flow.src_host, flows[n].r.flow.dst_host)})),
            )
        )


def tomography(results: Sequence[FlowResult], index: PathIndex, slos: SloSet) -> Tomography:
    """Suspects from probe results: unreachable pairs, then the greedy over the flows with mapped paths."""
    slo = _slo(slos)
    cov: dict[str, list[str]] = {
        "probe_flows_without_a_path": [],
        "probe_flows_not_judged": [],
        "probe_flow_errors": [],
    }
    pairs: dict[tuple[str, str], list[FlowResult]] = {}
    for r in results:
        if r.errors:
            cov["probe_flow_errors"].append(f"{_who(r)}: " + "; ".join(r.errors))
        if r.sent == 0:
            cov["probe_flows_not_judged"].append(f"{_who(r)}: no probe sent")
        elif any(e.startswith(NO_RESPONDER) for e in r.errors):
            cov["probe_flows_not_judged"].append(f"{_who(r)}: no responder at the destination")
        else:
            pairs.setdefault((r.flow.src_ip, r.flow.dst_ip), []).append(r)
    suspects, dark = rule_probe_unreachable(pairs, index, slo)
    flows: list[_F] = []
    for p, rs in pairs.items():
        if p in dark:
            continue
        for r in rs:
            lost = r.forward_lost
            if r.host_drops:
                cov["probe_flows_not_judged"].append(f"{_who(r)}: a host's receive buffer dropped {r.host_drops}")
                continue
            if lost is None:
                cov["probe_flows_not_judged"].append(f"{_who(r)}: the forward count is unknown")
                continue
            m = index.map(r)
            if not m.complete:
                cov["probe_flows_without_a_path"].append(f"{_who(r)}: lost {lost} of {r.sent}; " + "; ".join(m.notes))
                continue
            flows.append(_F(r, lost, tuple(dict.fromkeys(m.cables))))
    estimates: dict[frozenset[int], CableLoss] = {}
    for f in flows:
        for c in f.cables:
            est = estimates.get(c)
            if est is None:
                est = estimates[c] = CableLoss(c)
            est.sent += f.r.sent
            est.flows += 1
            est.lost += f.lost
            est.lossy_flows += 1 if f.lost else 0
    suspects += rule_probe_path_loss(flows, index, slos)
    crossed = {i for c in estimates for i in c} | {i for s in suspects if s.rule == RULE_UNREACHABLE for i in s.links}
    cov["probe_cables_not_crossed"] = (
        [] if not results else sorted(index.links[i].cable_id for i in range(len(index.links)) if i not in crossed)
    )
    summary: dict[str, int | float] = {
        "flows": len(results),
        "hosts": len({r.flow.src_host for r in results}),
        "probes_sent": sum(r.sent for r in results),
        "forward_lost": sum(r.forward_lost or 0 for r in results),
        "flows_judged": len(flows),
        "flows_lossy": sum(1 for f in flows if f.lost),
        "cables_crossed": len(crossed),
        "cables_planned": len(index.links),
        "cables_exonerated": sum(1 for e in estimates.values() if e.lost == 0),
        "unreachable_pairs": len(dark),
        "suspects": len(suspects),
    }
    return Tomography(suspects, estimates, cov, summary)


__all__ = [
    "RULE_LOSS",
    "RULE_UNREACHABLE",
    "CableLoss",
    "Tomography",
    "binomial_tail",
    "rule_probe_path_loss",
    "rule_probe_unreachable",
    "tomography",
]
