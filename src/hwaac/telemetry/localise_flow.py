"""Localisation rules about flow rather than one link: a PFC storm followed back to its source, ECN/CNP congestion
concentrated on one leaf or rail, and many degraded ports of one switch folded into the switch. The paused ends are
screened and the marks summed per leaf with numpy over the correlated ends' columns.

Reasoning and sources: ``docs/network-health.md`` "Localisation" (IEEE 802.1Qbb, the SONiC PFC watchdog HLD,
NVIDIA's RoCE congestion guidance).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain

import numpy as np

from hwaac.telemetry.model import distinct
from hwaac.telemetry.sli import ECN, PAUSE, SliTable, end_pause_ratio
from hwaac.telemetry.suspects import (
    DEGRADING,
    FAULT,
    INFO,
    WARN,
    Component,
    Evidence,
    Observed,
    Suspect,
    truthy,
)

_MARKS = ("ecn_marked", "cnp_sent")


def _named_pfcwd(names: Mapping[str, object]) -> bool:
    """Whether a name of ``names`` starts with ``pfcwd`` (one scan of the joined names: most ports have none)."""
    return bool(names) and "\npfcwd" in "\n" + "\n".join(names)


def _pause_screen(obs: Observed, priorities: tuple[int, ...], limit: float) -> np.ndarray:
    """Per end, whether it can be paused above ``limit`` or its PFC watchdog can have seen a storm (:func:`_paused`):
    a received pause duration or pause frames above 0 on a priority of ``priorities`` (any rated when ``limit`` is
    below 0), a ``pfcwd{q}_storm_detected`` that rose, or a state word ``stormed``."""
    table = obs.corr.ends
    out = np.zeros(len(table), dtype=bool)
    for p in priorities:
        for name in (f"pfc{p}_rx_duration_us", f"pfc{p}_rx"):  # what sli.end_pause_ratio reads
            col = table.rates.get(name)
            if col is not None:
                out |= col > 0 if limit >= 0 else ~np.isnan(col)
    storms = {k for rates, _ in table.layouts for k in rates if k.startswith("pfcwd") and k.endswith("_storm_detected")}
    for k in storms:
        out |= truthy(table.rates[k])
    out[_stormed(table.states)] = True
    return out


def _stormed(states: Mapping[int, dict[str, str]]) -> list[int]:
    """The ends with a state word ``pfcwd{q}_status`` of ``stormed``; the ends' distinct dicts (many share one) are
    first scanned for ``stormed`` in C, since most fabrics have none."""
    if "stormed" not in chain.from_iterable(map(dict.values, distinct(states.values()))):
        return []
    return [
        code
        for code, st in states.items()
        if any(k.startswith("pfcwd") and k.endswith("_status") and w == "stormed" for k, w in st.items())
    ]


def _paused(obs: Observed) -> dict[int, list[Evidence]]:
    """End code -> evidence that the port receives PFC pause continuously: the pause ratio above the SLO, or its
    PFC watchdog saw a storm on a queue (``pfcwd{q}_storm_detected`` rose, or the queue's status is ``stormed``)."""
    index = obs.index
    prios = tuple(index.plan.intent.qos.pfc_priorities)
    limit, storm = obs.limit(PAUSE), obs.slos.localise.storm_pause_ratio
    out: dict[int, list[Evidence]] = {}
    speeds, links, table = index.speed_bps, index.links, obs.corr.ends
    for code in obs.screened(lambda: _pause_screen(obs, prios, limit)):
        pr = table[code]
        if pr is None:
            continue
        x, how = end_pause_ratio(pr.rates, prios, speeds[links[code >> 1].kind])
        watchdog = _named_pfcwd(pr.rates) or _named_pfcwd(pr.state)
        if (x is None or x <= limit) and not watchdog:
            continue  # the usual port: not paused, no watchdog counter
        d, p = index.end_name(code)
        ev: list[Evidence] = []
        if x is not None and x > limit:
            ev.append(Evidence(how, f"{d} {p}", x, "of the time paused", limit, FAULT if x >= storm else WARN))
        if _named_pfcwd(pr.rates):
            for k, r in pr.rates.items():
                if k.startswith("pfcwd") and k.endswith("_storm_detected") and r:
                    q = k[5:].partition("_")[0]
                    ev.append(
                        Evidence(
                            k,
                            f"{d} {p} queue {q}",
                            r * 3600,
                            "storms per hour",
                            0.0,
                            FAULT,
                            "the PFC watchdog found the queue paused for a whole detection window",
                        )
                    )
        if _named_pfcwd(pr.state):
            for k, w in pr.state.items():
                if k.startswith("pfcwd") and k.endswith("_status") and w == "stormed":
                    ev.append(
                        Evidence(
                            k,
                            f"{d} {p} queue {k[5:].partition('_')[0]}",
                            1.0,
                            "stormed",
                            None,
                            FAULT,
                            "the PFC watchdog holds the queue as stormed now",
                        )
                    )
        if ev:
            out[code] = ev
    return out


def rule_pfc_storm(obs: Observed) -> list[Suspect]:
    """Follow received pause back to where it starts.

    A port receiving pause is paused by its peer. A host peer is the source (its NIC does not drain). A switch peer
    pauses because its ingress buffer for that port fills, which happens when its own egress is paused or
    congested: its other ports that receive pause are followed in turn, at most ``2 x tiers`` hops. A switch none of
    whose other ports is paused is the source itself (its port toward the paused one)."""
    index = obs.index
    paused = _paused(obs)
    if not paused:
        return []
    depth = 2 * index.plan.design.tiers
    origins: dict[int, tuple[list[int], list[str]]] = {}  # origin end code -> (paused ends, hops in words)
    for start in paused:
        path, words = [start], []
        code, seen = start, {start}
        for _ in range(depth):
            peer = code ^ 1
            pd, pp = index.end_name(peer)
            d, p = index.end_name(code)
            if obs.is_host(pd):
                words.append(f"{d} {p} is paused by host {pd} {pp}")
                code = peer
                break
            nexts = [c for c in index.ports.get(pd, {}).values() if c != peer and c in paused and c not in seen]
            if not nexts:
                words.append(f"{d} {p} is paused by {pd} {pp}, and no other port of {pd} is paused")
                code = peer
                break
            nxt = max(
                nexts,
                key=lambda c: (
                    max(e.value for e in paused[c] if e.unit == "of the time paused")
                    if any(e.unit == "of the time paused" for e in paused[c])
                    else 1.0
                ),
            )
            dn, pn = index.end_name(nxt)
            words.append(f"{d} {p} is paused by {pd} {pp}, which is itself paused on {dn} {pn}")
            code = nxt
            seen.add(nxt)
            path.append(nxt)
        else:
            code = code ^ 1
            words.append(f"stopped after {depth} hops (the fabric's depth)")
        o = origins.setdefault(code, ([], []))
        o[0].extend(c for c in path if c not in o[0])
        if len(words) > len(o[1]):  # the longest chain tells the whole way back
            o[1][:] = words
    out = []
    for origin, (ends, words) in origins.items():
        od, op = index.end_name(origin)
        host = obs.is_host(od)
        ev = tuple(e for c in ends for e in paused[c])
        kind = "nic" if host else "port"
        what = (
            f"host {od} ({op}) sends the pause: its NIC does not drain what it receives (a stuck host, PCIe "
            "back-pressure, NIC firmware), the classic PFC storm source"
            if host
            else f"{od} {op} sends the pause while nothing pauses {od} itself: the congestion or a stuck queue "
            f"starts in {od} (egress incast or a fault)"
        )
        queues = sorted({e.where for e in ev if e.what.startswith("pfcwd")})
        wd = f"; the PFC watchdog names {', '.join(queues)}" if queues else ""
        out.append(
            Suspect.worst_of(
                "pfc_storm",
                (Component(kind, f"{od} {op}", od, op, "PFC pause source"),),
                ev,
                "; ".join(words) + f". So {what}{wd}",
                float(len(ends)),
                links=(origin >> 1,),
                switches=() if host else (od,),
            )
        )
    return out


def _marks_per_leaf(obs: Observed) -> tuple[dict[str, float], float]:
    """(leaf -> the ECN marks and CNPs per second over its links, both ends, None as 0, leaves in the order of their
    first marked link; the fabric's total), summed link by link in plan order; links with no marks are left out."""
    table = obs.corr.ends
    if not obs.screen:  # the plain loop over every link the columns must match
        per_leaf: dict[str, float] = {}
        total = 0.0
        for i, leaf in enumerate(obs.index.leaf_of):
            if leaf is None:
                continue
            m = 0.0
            for pr in (table[2 * i], table[2 * i + 1]):
                if pr is not None:
                    m += sum(pr.rates.get(k) or 0.0 for k in _MARKS)
            if m > 0:
                per_leaf[leaf] = per_leaf.get(leaf, 0.0) + m
                total += m
        return per_leaf, total
    names, ids = obs.leaf_ids
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf is NaN, as in the plain loop
        ends = np.zeros(len(table))
        for k in _MARKS:  # per end, in the order the plain loop adds them
            col = table.rates.get(k)
            if col is not None:
                ends += np.where(np.isnan(col), 0.0, col)
        link = ends[0::2] + ends[1::2]
        at = np.flatnonzero((ids >= 0) & (link > 0))
        if not len(at):
            return {}, 0.0
        marks, leaf_id = link[at], ids[at]
        sums = np.bincount(leaf_id, weights=marks, minlength=len(names))  # adds each leaf's links in order
        total = float(np.cumsum(marks)[-1])  # in order (np.sum adds pairwise)
    seen, first = np.unique(leaf_id, return_index=True)
    return {names[k]: float(sums[k]) for k in seen[np.argsort(first)].tolist()}, total


def rule_congestion(obs: Observed) -> list[Suspect]:
    """ECN marks and CNPs concentrated on one leaf (or else one rail) whose links are error-free: congestion there,
    not a fault. Warn when a link of it is marked above the ECN SLO, else info."""
    index = obs.index
    sw = index.plan.switch_by_name
    per_leaf, total = _marks_per_leaf(obs)
    if total <= 0:
        return []
    share = obs.slos.localise.congestion_share
    per_rail: dict[int, float] = {}
    for leaf, m in per_leaf.items():
        rail = sw[leaf].rail
        if rail is not None:
            per_rail[rail] = per_rail.get(rail, 0.0) + m
    top_leaf = max(per_leaf, key=lambda k: per_leaf[k])
    if per_leaf[top_leaf] / total >= share:
        scope, leaves, comp = (
            f"leaf {top_leaf}",
            [top_leaf],
            Component("switch", top_leaf, top_leaf, role="congested leaf"),
        )
        marks = per_leaf[top_leaf]
    else:
        if not per_rail:
            return []
        rail = max(per_rail, key=lambda k: per_rail[k])
        if per_rail[rail] / total < share:
            return []
        leaves = [s for s in per_leaf if sw[s].rail == rail]
        scope, comp, marks = f"rail {rail}", Component("rail", f"rail {rail}", role="congested rail"), per_rail[rail]
    names, ids = obs.leaf_ids
    chosen = set(leaves)
    at = np.flatnonzero(np.isin(ids, [k for k, leaf in enumerate(names) if leaf in chosen]))
    screened = at[np.isin(at, obs.error_ends() >> 1)].tolist()  # its links with an end that can have errors
    if any(obs.errors(2 * i) or obs.errors(2 * i + 1) for i in screened):
        return []  # errors there: the error rules name the fault, and it may be the cause of the marks
    links = at.tolist()
    limit = obs.limit(ECN)
    ecn = SliTable.of(obs.slis).values[ECN][at].tolist()  # the column: obs.slis[i] would build link i's SLIs
    hot = [(i, v) for i, v in zip(links, ecn, strict=True) if v > limit]  # NaN (no value) is never above
    sev = WARN if hot else INFO
    ev = [
        Evidence(
            "ecn_marked + cnp_sent",
            scope,
            marks / total,
            "share of the fabric's marks",
            share,
            sev,
            f"{marks:.3g} of {total:.3g} marks and CNPs per second",
        )
    ]
    ev += [
        Evidence(ECN, index.links[i].cable_id, v, "ratio", limit, WARN, obs.slis[i].source.get(ECN, ""))
        for i, v in sorted(hot, key=lambda t: -t[1])[:5]
    ]
    return [
        Suspect(
            "congestion",
            sev,
            (comp,),
            tuple(ev),
            f"{scope} carries {marks / total:.0%} of the ECN marks and CNPs while its links are error-free: this is "
            "congestion (DCQCN slowing senders as designed), not a fault; look at the jobs' traffic pattern, the "
            "placement or the ECMP hashing" + (", and the links marked above the ECN SLO" if hot else ""),
            (float(len(hot)), marks / total / share),
            switches=tuple(leaves),
        )
    ]


def fold_switches(obs: Observed, suspects: list[Suspect]) -> list[Suspect]:
    """A switch with more than ``localise.switch_degraded_share`` of its planned ports named by degrading suspects
    (and at least two) becomes the suspect; the per-port suspects touching it are kept inside it (``replaced``)."""
    index = obs.index
    limit = obs.slos.localise.switch_degraded_share
    degraded: dict[str, set[str]] = {}
    for s in suspects:
        if s.rule in DEGRADING:
            for d, p in s.ports(index):
                if not obs.is_host(d):
                    degraded.setdefault(d, set()).add(p)
    chosen = sorted(
        (
            sw
            for sw, ports in degraded.items()
            if len(ports) >= 2 and len(ports) / len(index.ports.get(sw, {1: 0})) > limit
        ),
        key=lambda sw: -len(degraded[sw]),
    )
    if not chosen:
        return suspects
    out: list[Suspect] = []
    taken: dict[str, list[Suspect]] = {sw: [] for sw in chosen}
    for s in suspects:
        owner = next((sw for sw in chosen if s.rule in DEGRADING and any(d == sw for d, _ in s.ports(index))), None)
        (taken[owner] if owner else out).append(s)
    for sw in chosen:
        got = taken[sw]
        if not got:
            continue
        planned = len(index.ports[sw])
        n = len(degraded[sw])
        ev = (
            Evidence(
                "degraded ports",
                sw,
                n / planned,
                "share of planned ports",
                limit,
                FAULT,
                f"{n} of {planned} planned ports: " + ", ".join(sorted(degraded[sw])[:8]) + (" ..." if n > 8 else ""),
            ),
        )
        out.append(
            Suspect(
                "switch_degraded",
                max(s.severity for s in got),
                (Component("switch", sw, sw, role="the switch"),),
                ev,
                f"{n} of the {planned} planned ports of {sw} are degraded at once ({n / planned:.0%}, more than "
                f"{limit:.0%}): so many optics or cables failing together is unlikely; the switch (ASIC, power, a line "
                "card, firmware) is the suspect, the per-port suspects are kept under it",
                (float(n), n / planned / limit),
                links=tuple(sorted({i for s in got for i in s.links})),
                switches=(sw,),
                replaced=tuple(got),
            )
        )
    return out


__all__ = ["fold_switches", "rule_congestion", "rule_pfc_storm"]
