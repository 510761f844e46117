"""Suspects from correlated, rated link samples and SLIs: which cable, optic, port, switch or host to look at.

Each rule is a small function ``rule_<name>(obs: Observed) -> list[Suspect]`` that holds its judgement and says it
in words; :func:`localise` runs them, folds many degraded ports of one switch into the switch, ranks by severity
then strength of evidence, and names the GPU nodes (and Slurm jobs) behind each suspect. A rule over the ends first
picks, with numpy over the correlated ends' columns, those that can give it evidence, and judges only them ("Scale").
Rules and their public sources: ``docs/network-health.md`` "Localisation". The shapes and the per-port helpers are in
:mod:`hwaac.telemetry.suspects`; the PFC, congestion and switch rules in :mod:`hwaac.telemetry.localise_flow`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

from hwaac.health.parsers.slurm_squeue import Squeue
from hwaac.plan.model import Link
from hwaac.telemetry.framed import RatedFrame
from hwaac.telemetry.localise_flow import fold_switches, rule_congestion, rule_pfc_storm
from hwaac.telemetry.sli import AVAILABILITY, LOSS, SliTable
from hwaac.telemetry.suspects import (
    FAULT,
    WARN,
    Component,
    Evidence,
    Observed,
    Suspect,
    link_components,
    rank,
    truthy,
)
from hwaac.telemetry.topology import LINK_KINDS

_FLAPS = ("link_down_events", "link_state_changes")


def _error_links(obs: Observed) -> list[int]:
    """The links, in plan order, with an end that can have receive errors (:meth:`Observed.error_ends`); every
    link when not screening."""
    if not obs.screen:
        return list(range(len(obs.index.links)))
    return np.unique(obs.error_ends() >> 1).tolist()


def _flap_screen(obs: Observed) -> np.ndarray:
    """Per end, whether a down or state-change counter of it rose (is true: neither 0 nor None)."""
    table = obs.corr.ends
    out = np.zeros(len(table), dtype=bool)
    for k in _FLAPS:
        col = table.rates.get(k)
        if col is not None:
            out |= truthy(col)
    return out


def _error_ends(obs: Observed) -> Iterator[tuple[int, Link, tuple[Evidence, ...], tuple[Evidence, ...]]]:
    """(index, link, end a's errors, end b's errors) of each link of :func:`_error_links`."""
    links = obs.index.links
    for i in _error_links(obs):
        yield i, links[i], obs.errors(2 * i), obs.errors(2 * i + 1)


def rule_errors_both_ends(obs: Observed) -> list[Suspect]:
    """Receive errors above the SLO at both ends of a link: the medium between them, the cable or an optic on it.

    Both receivers seeing errors at once is what a dirty or damaged cable or connector, or a marginal optic whose
    transmit and receive share a module, does; two independent receivers failing together is far less likely."""
    return [
        Suspect.worst_of(
            "errors_both_ends",
            (Component("cable", link.cable_id, role="cable or an optic on it"), *link_components(link)[1:]),
            (*ea, *eb),
            f"both ends of {link.cable_id} receive errors above the SLO ({link.a_device} {link.a_port} and "
            f"{link.b_device} {link.b_port}): the fault is on the medium both share, the cable or an optic on it; "
            "clean and reseat the connectors, then swap the cable, then the optics",
            2.0,
            links=(i,),
        )
        for i, link, ea, eb in _error_ends(obs)
        if ea and eb
    ]


def rule_errors_one_end(obs: Observed) -> list[Suspect]:
    """Receive errors above the SLO at one end only: the far end's transmitter (its optic) first, then the local
    receiver. The end that counts the errors is the receiver; what it receives was sent by the far end."""
    out = []
    for i, link, ea, eb in _error_ends(obs):
        if bool(ea) == bool(eb):
            continue
        local = 0 if ea else 1
        ld, lp = obs.index.end_name(2 * i + local)
        fd, fp = obs.index.end_name(2 * i + (local ^ 1))
        local_kind = "nic" if obs.is_host(ld) else "port"
        comps = (
            Component("optic", f"{fd} {fp}", fd, fp, "far-end transmitter"),
            Component(local_kind, f"{ld} {lp}", ld, lp, "local receiver"),
            Component("cable", link.cable_id, role="the link"),
        )
        other = "" if obs.sampled(2 * i + (local ^ 1)) else f" ({fd} {fp} was not sampled, so its side is unknown)"
        out.append(
            Suspect.worst_of(
                "errors_one_end",
                comps,
                ea or eb,
                f"only {ld} {lp} receives errors{other}: the frames it receives were sent by {fd} {fp}, so that "
                f"transmitter (its optic) is the first suspect and {ld} {lp}'s receiver the second; the reverse "
                "direction is clean, which makes the shared cable less likely",
                1.0,
                links=(i,),
            )
        )
    return out


def rule_flapping(obs: Observed) -> list[Suspect]:
    """A link whose down or state-change counters rose, or whose BGP session dropped from Established."""
    found: dict[int, list[Evidence]] = {}
    table = obs.corr.ends
    for code in obs.screened(lambda: _flap_screen(obs)):  # ends in link order: a, then b
        pr = table[code]
        if pr is None:
            continue
        get = pr.rates.get
        for k in _FLAPS:
            r = get(k)
            if r:
                d, p = obs.index.end_name(code)
                found.setdefault(code >> 1, []).append(Evidence(k, f"{d} {p}", r * 3600, "per hour", 0.0, FAULT))
    loose: list[Suspect] = []
    for leaf, iv in obs.bgp.items():
        peers: dict[str, int] | None = None  # worked out for a switch with a dropped session only
        for peer, r in (
            iv.truthy("bgp_dropped")
            if isinstance(iv, RatedFrame)
            else ((peer, r) for peer, pr in iv.ports.items() if (r := pr.rates.get("bgp_dropped")))
        ):
            e = Evidence("bgp_dropped", f"{leaf} peer {peer}", r * 3600, "per hour", 0.0, FAULT)
            if peers is None:
                peers = obs.peer_links(leaf)
            i = peers.get(peer.rpartition("/")[2])
            if i is None:
                loose.append(
                    Suspect(
                        "flapping",
                        FAULT,
                        (Component("link", f"{leaf} BGP peer {peer}", leaf),),
                        (e,),
                        f"the BGP session of {leaf} with {peer} dropped from Established; the plan has "
                        "no link with that peer, so the link cannot be named",
                        (1.0, r * 3600),
                        switches=(leaf,),
                    )
                )
            else:
                found.setdefault(i, []).append(e)
    out = []
    for i, ev in found.items():
        link = obs.index.links[i]
        out.append(
            Suspect(
                "flapping",
                FAULT,
                link_components(link),
                tuple(ev),
                f"{link.cable_id} went down or its BGP session dropped in the interval ("
                + ", ".join(f"{e.where} {e.what}" for e in ev)
                + "): a flapping link blackholes traffic at every "
                "flap and reroutes the rest; look at the optics' DOM and the cable",
                (float(len(ev)), max(e.value for e in ev)),
                links=(i,),
            )
        )
    return out + loose


def _uplink_loss(obs: Observed, limit: float) -> dict[str, tuple[int, list[tuple[int, float]]]]:
    """Per leaf, in the order of its first uplink with a loss ratio: (its uplinks with one, those above ``limit``
    with their ratio, in plan order). Screening, only the leaves with an uplink above ``limit``, picked from the
    SLI columns; else from every link's SLIs (the plain loop)."""
    out: dict[str, tuple[int, list[tuple[int, float]]]] = {}
    if not obs.screen:
        paths: dict[str, list[tuple[int, float]]] = {}
        for s in obs.slis:
            link = obs.index.links[s.link]
            v = s.values.get(LOSS)
            if link.kind == "leaf_spine" and v is not None:
                paths.setdefault(link.a_device, []).append((s.link, v))
        for leaf, measured in paths.items():
            out[leaf] = (len(measured), [(i, v) for i, v in measured if v > limit])
        return out
    loss = SliTable.of(obs.slis).values[LOSS]
    uplink = obs.index.kinds == LINK_KINDS.index("leaf_spine")
    lossy = np.flatnonzero(uplink & (loss > limit))  # the few links to look at
    if not len(lossy):
        return out
    names, owner = obs.index.owners  # an uplink's owner is its leaf, its end a
    measured_at = np.flatnonzero(uplink & ~np.isnan(loss))
    counts = np.bincount(owner[measured_at], minlength=len(names)).tolist()
    first = np.full(len(names), len(owner))
    np.minimum.at(first, owner[measured_at], measured_at)  # the leaves in the order of their first measured uplink
    for i in sorted(lossy.tolist(), key=lambda k: (int(first[owner[k]]), k)):
        leaf = names[owner[i]]
        out.setdefault(leaf, (counts[owner[i]], []))[1].append((i, float(loss[i])))
    return out


def rule_spine_path_loss(obs: Observed) -> list[Suspect]:
    """One leaf-spine link with loss above the SLO while the same leaf's other uplinks are clean: that link."""
    limit = obs.limit(LOSS)
    out = []
    for leaf, (paths, lossy) in _uplink_loss(obs, limit).items():
        clean = paths - len(lossy)
        if not lossy or clean == 0 or len(lossy) * 2 > paths:
            continue
        for i, v in lossy:
            link = obs.index.links[i]
            ev = (Evidence(LOSS, link.cable_id, v, "ratio", limit, FAULT, obs.slis[i].source.get(LOSS, "")),)
            out.append(
                Suspect(
                    "spine_path_loss",
                    FAULT,
                    link_components(link),
                    ev,
                    f"{leaf}'s path to {link.b_device} loses frames ({v:.3g}, SLO {limit:.3g}) while {clean} of its "
                    f"{paths} other uplinks measured are clean: the traffic is hashed evenly (ECMP), so the loss is "
                    "on this link, not in the leaf or the load",
                    (1.0, ev[0].multiple),
                    links=(i,),
                )
            )
    return out


def rule_links_down(obs: Observed) -> list[Suspect]:
    """Planned links that are down: an end oper down (fault) or administratively down (warn: someone shut it)."""
    out = []
    slis = obs.slis
    links = np.flatnonzero(SliTable.of(slis).values[AVAILABILITY] == 0.0).tolist() if obs.screen else range(len(slis))
    for i in links:  # screening, only the links whose availability is 0
        s = slis[i]
        if s.values.get(AVAILABILITY) != 0.0:
            continue
        src = s.source.get(AVAILABILITY, "")
        if "oper down" not in src and "admin down" not in src:  # a flap counter rose on a link up: rule_flapping
            continue
        link = obs.index.links[s.link]
        admin = "admin down" in src
        sev = WARN if admin else FAULT
        why = (
            "administratively down: shut on purpose (a drain?) or a config that did not apply"
            if admin
            else "operationally down: no signal, a failed optic, a pulled cable or a far end that is off"
        )
        out.append(
            Suspect(
                "links_down",
                sev,
                link_components(link),
                (Evidence(AVAILABILITY, link.cable_id, 0.0, "up", obs.limit(AVAILABILITY), sev, src),),
                f"planned link {link.cable_id} is {why} ({src})",
                (1.0, 1.0),
                links=(s.link,),
            )
        )
    return out


Rule = Callable[[Observed], list[Suspect]]
RULES: tuple[Rule, ...] = (
    rule_errors_both_ends,
    rule_errors_one_end,
    rule_flapping,
    rule_spine_path_loss,
    rule_links_down,
    rule_pfc_storm,
    rule_congestion,
)


_PROBE_RULES = ("probe_path_loss", "probe_unreachable")  # hwaac.telemetry.tomography
# rule -> the rules that explain it when they name the same link: physical errors explain the path loss they cause;
# a link that is down now explains the flap (the drop) that took it down
_EXPLAINED_BY = {"spine_path_loss": ("errors_both_ends", "errors_one_end"), "flapping": ("links_down",)}


def _fold_same_link(suspects: list[Suspect]) -> list[Suspect]:
    """A link named by a rule of :data:`_EXPLAINED_BY` is not named again by the rule it explains, and links named
    by a counter rule are not named again by the active probes' rules (their first evidence joins the counter
    rule's); the folded rule is kept in ``also`` of the one that stays."""
    by_rule: dict[tuple[str, int], Suspect] = {}
    for s in suspects:
        for i in s.links:
            by_rule.setdefault((s.rule, i), s)
    counters = {s.links: s for s in suspects if s.links and s.rule not in _PROBE_RULES}
    out = []
    for s in suspects:
        keep = next(
            (k for r in _EXPLAINED_BY.get(s.rule, ()) if s.links and (k := by_rule.get((r, s.links[0]))) is not None),
            None,
        )
        if keep is not None:
            keep.also = (*keep.also, s.rule)
            continue
        if s.rule in _PROBE_RULES and s.links in counters:
            keep = counters[s.links]
            keep.also = (*keep.also, s.rule)
            keep.evidence = (*keep.evidence, s.evidence[0])
            continue
        out.append(s)
    return out


def localise(
    obs: Observed, *, squeue: Squeue | None = None, rules: Sequence[Rule] = RULES, extra: Sequence[Suspect] = ()
) -> list[Suspect]:
    """Run ``rules``, add ``extra`` suspects (active probes' tomography, which name their own nodes: those whose
    probes crossed them), fold a switch's many degraded ports into the switch, rank (severity, then strength), and
    name each suspect's GPU nodes and, with ``squeue``, the jobs on them."""
    found: list[Suspect] = []
    for rule in rules:
        found.extend(rule(obs))
    found.extend(extra)
    found = fold_switches(obs, _fold_same_link(found))
    ranked = rank(found)
    for s in ranked:
        s.nodes = s.nodes or obs.nodes_behind(s)
        if squeue is not None:
            s.jobs = tuple(squeue.jobs_on(frozenset(s.nodes)))
    return ranked


__all__ = [
    "RULES",
    "Rule",
    "localise",
    "rule_errors_both_ends",
    "rule_errors_one_end",
    "rule_flapping",
    "rule_links_down",
    "rule_spine_path_loss",
]
