"""Service level indicators per planned link, aggregated per leaf, rail, SU, plane and the fabric.

Every value is computed from rates and gauges of a :class:`~hwaac.telemetry.topology.Correlation` and says what
it came from; a value without inputs is ``None`` with a reason, never 0 and never healthy. The per-link formulas
are in :mod:`hwaac.telemetry.sli_link` (their names are imported from here too). Formulas and their sources:
``docs/network-health.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from hwaac.telemetry.framed import RatedFrame
from hwaac.telemetry.parsers.frr_routes import RouteTable
from hwaac.telemetry.rates import Interval
from hwaac.telemetry.sli_link import (
    AVAILABILITY,
    ECN,
    FEC_UNCORR,
    LINK_SLIS,
    LOSS,
    PAUSE,
    PRE_FEC_BER,
    LinkSLI,
    end_pause_ratio,
    link_sli,
)
from hwaac.telemetry.sli_table import SliTable
from hwaac.telemetry.topology import Correlation, LinkIndex

PATH_DIVERSITY, BGP_DROPS, COVERAGE = "path_diversity", "bgp_drops_per_hour", "coverage"
WORST = (PRE_FEC_BER, FEC_UNCORR, PAUSE, ECN)  # aggregated as the worst link


@dataclass(slots=True)
class Aggregate:
    """SLIs of a scope (``leaf``, ``rail``, ``su``, ``plane``, ``spine`` or ``fabric``) and what they came from.

    ``inputs`` holds the counts behind each value: planned/up/down/unknown links, the frames summed for the loss
    ratio, per worst-of SLI the links with a value, without one, and the worst cable.
    """

    scope: str
    key: str
    values: dict[str, float | None] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)
    inputs: dict[str, object] = field(default_factory=dict)


class _Acc:
    __slots__ = ("bgp", "bgp_none", "down", "loss_den", "loss_links", "loss_num", "planned", "up", "worst")

    def __init__(self) -> None:
        self.planned = self.up = self.down = self.loss_links = 0
        self.loss_num = self.loss_den = 0.0
        self.bgp: float | None = None
        self.bgp_none: list[str] = []
        self.worst: dict[str, list] = {n: [None, "", 0, 0] for n in WORST}  # value, cable, with, without

    def merge(self, o: _Acc) -> None:
        self.planned += o.planned
        self.up += o.up
        self.down += o.down
        self.loss_links += o.loss_links
        self.loss_num += o.loss_num
        self.loss_den += o.loss_den
        if o.bgp is not None:
            self.bgp = (self.bgp or 0.0) + o.bgp
        self.bgp_none.extend(o.bgp_none)
        for n, w in o.worst.items():
            mine = self.worst[n]
            if w[0] is not None and (mine[0] is None or w[0] > mine[0]):
                mine[0], mine[1] = w[0], w[1]
            mine[2] += w[2]
            mine[3] += w[3]


def link_slis(corr: Correlation) -> SliTable:
    """The SLIs of every planned link, in plan order: their columns, and each link's :class:`LinkSLI` on access."""
    return SliTable.of_correlation(corr)


def path_diversity(
    leaf: str, table: RouteTable | None, planned: int, owners: Mapping[str, str]
) -> tuple[float | None, str, dict[str, object]]:
    """(observed / planned ECMP width, reason when None, inputs): the narrowest selected, installed BGP route to a
    prefix of another leaf (``owners``: prefix -> its leaf, :attr:`LinkIndex.leaf_prefixes`). Routes to a spine's
    own addresses are left out: they use only the cables to that spine, not every uplink."""
    inputs: dict[str, object] = {"planned": planned}
    if table is None:
        return None, f"{leaf}: no route table read", inputs
    widths = [
        r.ecmp
        for p, r in table.routes.items()
        if r.protocol == "bgp" and r.selected and r.installed and owners.get(p, leaf) != leaf
    ]
    if not widths:
        why = "; ".join(table.unknown) or "no selected, installed BGP route to another leaf's prefixes"
        return None, f"{leaf}: {why}", inputs
    if planned <= 0:
        return None, f"{leaf}: the plan gives it no uplink", inputs
    inputs.update(routes=len(widths), min_ecmp=min(widths), max_ecmp=max(widths))
    return min(widths) / planned, "", inputs


def bgp_drops_per_hour(iv: Interval | RatedFrame) -> tuple[float | None, str]:
    """Sessions dropped from Established per hour, over all peers of one BGP summary interval."""
    if iv.errors:
        return None, "; ".join(iv.errors)
    if isinstance(iv, RatedFrame) and (col := iv.column("bgp_dropped")) is not None:
        return (sum(col.tolist(), 0.0) * 3600.0, "") if len(col) else (None, "no BGP peer in both summaries")
    total = 0.0
    for peer, pr in iv.ports.items():
        r = pr.rates.get("bgp_dropped")
        if r is None:
            return None, f"peer {peer}: {pr.why.get('bgp_dropped', 'connectionsDropped not read')}"
        total += r
    if not iv.ports:
        return None, "no BGP peer in both summaries"
    return total * 3600.0, ""


def _buckets(index: LinkIndex, table: SliTable) -> dict[str, _Acc]:
    """Per owner of links (:attr:`LinkIndex.owners`, in the order of their first link), its links' counts, sums
    and worst values, from the columns: sums add in plan order (``np.bincount`` adds its weights one by one, in
    order), and a worst value is the first link in plan order to reach the maximum, as a loop over the links
    keeping the larger value gives."""
    names, owner = index.owners
    k = len(names)
    v = table.values

    def count(mask: np.ndarray) -> list[int]:
        return np.bincount(owner[mask], minlength=k).tolist()

    av = v[AVAILABILITY]
    known = ~np.isnan(av)
    up, down = count(known & (av >= 1.0)), count(known & ~(av >= 1.0))
    measured = ~np.isnan(v[LOSS])
    o = owner[measured]
    loss_links = count(measured)
    # a ratio of sums: frames per second over the links' ends
    num = np.bincount(o, weights=table.lost[measured], minlength=k).tolist()
    den = np.bincount(o, weights=table.received[measured], minlength=k).tolist()
    planned = np.bincount(owner, minlength=k).tolist()
    out: dict[str, _Acc] = {}
    for j, name in enumerate(names):
        acc = out[name] = _Acc()
        acc.planned, acc.up, acc.down = planned[j], up[j], down[j]
        acc.loss_links, acc.loss_num, acc.loss_den = loss_links[j], num[j], den[j]
    links = index.links
    for n in WORST:
        x = v[n]
        has = ~np.isnan(x)
        with_ = count(has)
        top = np.full(k, -np.inf)
        np.maximum.at(top, owner[has], x[has])
        at = np.flatnonzero(has & (x == top[owner]))
        first = np.full(k, len(owner))
        np.minimum.at(first, owner[at], at)
        firsts, values = first.tolist(), x[np.minimum(first, len(owner) - 1)].tolist()
        for j, acc in enumerate(out.values()):
            w = acc.worst[n]
            w[2], w[3] = with_[j], planned[j] - with_[j]
            if with_[j]:
                w[0], w[1] = values[j], links[firsts[j]].cable_id
    return out


def aggregate(
    corr: Correlation,
    slis: Sequence[LinkSLI],
    *,
    routes: Mapping[str, RouteTable] | None = None,
    bgp: Mapping[str, Interval | RatedFrame] | None = None,
) -> tuple[list[Aggregate], dict[str, Aggregate]]:
    """(per-scope aggregates, per-leaf path diversity and BGP stability by leaf name).

    Availability is links up / links whose state is known, coverage links whose state is known / planned links
    (a link of unknown state lowers coverage, not availability, and is never counted up); the loss ratio the
    summed frames' ratio; pre-FEC BER, uncorrectable FEC, pause and ECN the worst link with its cable. Leaves roll
    up into their rail, SU, plane and the fabric; spine-to-super-spine links into their spine, plane and the
    fabric. ``slis``: one per planned link, in plan order (:func:`link_slis`); read as columns.
    """
    return roll_up(corr.index, _buckets(corr.index, SliTable.of(slis)), routes=routes, bgp=bgp)


def roll_up(
    index: LinkIndex,
    buckets: dict[str, _Acc],
    *,
    routes: Mapping[str, RouteTable] | None = None,
    bgp: Mapping[str, Interval | RatedFrame] | None = None,
) -> tuple[list[Aggregate], dict[str, Aggregate]]:
    """:func:`aggregate` from its per-owner sums (a leaf, or a spine for spine-super-spine links): the leaves' path
    diversity and BGP stability added, then every owner rolled up into its scopes."""
    sw = index.plan.switch_by_name
    per_leaf: dict[str, Aggregate] = {}
    for leaf, planned in index.uplinks.items():
        agg = per_leaf[leaf] = Aggregate("leaf", leaf)
        pd, why, inputs = path_diversity(leaf, (routes or {}).get(leaf), planned, index.leaf_prefixes)
        agg.values[PATH_DIVERSITY], agg.inputs[PATH_DIVERSITY] = pd, inputs
        if pd is None:
            agg.why[PATH_DIVERSITY] = why
        iv = (bgp or {}).get(leaf)
        drops, why = bgp_drops_per_hour(iv) if iv is not None else (None, f"{leaf}: no BGP summaries read")
        agg.values[BGP_DROPS] = drops
        if drops is None:
            agg.why[BGP_DROPS] = why
        acc = buckets.setdefault(leaf, _Acc())
        acc.bgp = drops
        if drops is None:
            acc.bgp_none.append(leaf)
    rolled: dict[tuple[str, str], _Acc] = {}
    for owner, acc in buckets.items():
        s = sw.get(owner)
        keys = [("fabric", "")]
        if s is not None:
            keys.append(("plane", str(s.plane)))
            if s.role == "leaf":
                keys += [("leaf", owner), ("rail", str(s.rail)), ("su", str(s.su))]
            else:
                keys.append((s.role, owner))
        for key in keys:
            r = rolled.get(key)
            if r is None:
                r = rolled[key] = _Acc()
            r.merge(acc)
    out = [_finish(scope, key, acc) for (scope, key), acc in sorted(rolled.items())]
    for agg in out:
        if agg.scope == "leaf" and agg.key in per_leaf:
            agg.values[PATH_DIVERSITY] = per_leaf[agg.key].values[PATH_DIVERSITY]
            agg.inputs[PATH_DIVERSITY] = per_leaf[agg.key].inputs[PATH_DIVERSITY]
            if PATH_DIVERSITY in per_leaf[agg.key].why:
                agg.why[PATH_DIVERSITY] = per_leaf[agg.key].why[PATH_DIVERSITY]
    return out, per_leaf


def _finish(scope: str, key: str, acc: _Acc) -> Aggregate:
    agg = Aggregate(scope, key)
    v, why, inp = agg.values, agg.why, agg.inputs
    known = acc.up + acc.down
    inp[AVAILABILITY] = {"planned": acc.planned, "up": acc.up, "down": acc.down, "unknown": acc.planned - known}
    inp[COVERAGE] = {"planned": acc.planned, "known": known, "unknown": acc.planned - known}
    if known:
        v[AVAILABILITY] = acc.up / known
    else:
        v[AVAILABILITY] = None
        why[AVAILABILITY] = f"the state of none of {acc.planned} planned links is known"
    if acc.planned:
        v[COVERAGE] = known / acc.planned
    else:
        v[COVERAGE] = None
        why[COVERAGE] = "no planned link"
    inp[LOSS] = {"links": acc.loss_links, "lost_per_s": acc.loss_num, "received_per_s": acc.loss_den}
    if acc.loss_den > 0:
        v[LOSS] = acc.loss_num / acc.loss_den
    else:
        v[LOSS] = None
        why[LOSS] = "no link with frames received and all of rx_ok, rx_err, rx_drop rated"
    for n, (x, cable, with_, without) in acc.worst.items():
        v[n] = x
        inp[n] = {"links": with_, "without": without, "worst_cable": cable}
        if x is None:
            why[n] = f"none of {without} links has a value"
    if acc.bgp is not None and not acc.bgp_none:
        v[BGP_DROPS] = acc.bgp
    elif acc.bgp_none:
        v[BGP_DROPS] = None
        why[BGP_DROPS] = f"no BGP flap rate for {len(acc.bgp_none)} leaves, e.g. {acc.bgp_none[0]}"
    return agg


__all__ = [
    "AVAILABILITY",
    "BGP_DROPS",
    "COVERAGE",
    "ECN",
    "FEC_UNCORR",
    "LINK_SLIS",
    "LOSS",
    "PATH_DIVERSITY",
    "PAUSE",
    "PRE_FEC_BER",
    "Aggregate",
    "LinkSLI",
    "SliTable",
    "aggregate",
    "bgp_drops_per_hour",
    "end_pause_ratio",
    "link_sli",
    "link_slis",
    "path_diversity",
    "roll_up",
]
