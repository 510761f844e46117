"""Link SLIs as columns (hwaac.telemetry.sli_table) equal the per-link objects of ``sli_link.link_sli`` (None as
NaN, the sign of a zero kept), the aggregates read from the columns equal the object code's, and the two rules that
pick their links from the columns give the suspects of their plain loops (``Observed(screen=False)``): on the
recorded samples folders, a table of hand-made edge cases on the demo plan, seeded random ends on the demo plan (its
links in plan order and shuffled), and the synthetic fabric of ``benchmarks/network_health.py`` at 512 GPUs. The
object code of the link SLIs and the aggregation as it was before the columns is kept here as the oracle."""

from __future__ import annotations

import dataclasses
import math
import random
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.plan_scale import scale_intent
from hwaac.plan import build_plan
from hwaac.plan.model import Plan
from hwaac.telemetry.exporter import families, metric_name
from hwaac.telemetry.fabric_health import assess
from hwaac.telemetry.localise import rule_links_down, rule_spine_path_loss
from hwaac.telemetry.model import PortSample, Snapshot
from hwaac.telemetry.parsers.frr_routes import RouteTable
from hwaac.telemetry.rated import read_rated
from hwaac.telemetry.rates import Interval, PortRates
from hwaac.telemetry.samples import read_sweeps
from hwaac.telemetry.sli import (
    AVAILABILITY,
    LINK_SLIS,
    LOSS,
    WORST,
    Aggregate,
    LinkSLI,
    SliTable,
    _Acc,
    aggregate,
    link_sli,
    link_slis,
    roll_up,
)
from hwaac.telemetry.slo import default_slos
from hwaac.telemetry.suspects import Observed, Suspect
from hwaac.telemetry.topology import Correlation, LinkIndex, correlate
from hwaac.validate import load_intent

ROOT = Path(__file__).parents[3]
DEMO = ROOT / "inventory" / "demo"
SAMPLES = ROOT / "tests" / "fixtures" / "telemetry" / "samples"
LEAF = "leaf-p0-su01-r0"


# --- the oracle: the object code before the columns ----------------------------------------------------------------


def object_slis(corr: Correlation) -> list[LinkSLI]:
    index, ends = corr.index, corr.ends
    prios = tuple(index.plan.intent.qos.pfc_priorities)
    out = []
    for i, link in enumerate(index.links):
        rated, seconds = ends.interval_seconds(2 * i)
        if not rated:
            seconds = ends.interval_seconds(2 * i + 1)[1]
        out.append(
            link_sli(
                i,
                (ends[2 * i], ends[2 * i + 1]),
                seconds,
                index.speed_bps[link.kind],
                prios,
                0 if link.kind == "host" else None,
            )
        )
    return out


def object_aggregate(
    corr: Correlation,
    slis: Sequence[LinkSLI],
    routes: Mapping[str, RouteTable] | None,
    bgp: Mapping[str, Interval] | None,
) -> tuple[list[Aggregate], dict[str, Aggregate]]:
    index = corr.index
    links = index.links
    buckets: dict[str, _Acc] = {}
    for s in slis:
        link = links[s.link]
        acc = buckets.setdefault(index.leaf_of[s.link] or link.a_device, _Acc())
        acc.planned += 1
        v = s.values
        av = v[AVAILABILITY]
        if av is not None:
            if av >= 1.0:
                acc.up += 1
            else:
                acc.down += 1
        if v[LOSS] is not None:
            acc.loss_links += 1
            acc.loss_num += s.lost
            acc.loss_den += s.received
        for n in WORST:
            x, w = v[n], acc.worst[n]
            if x is None:
                w[3] += 1
            else:
                w[2] += 1
                if w[0] is None or x > w[0]:
                    w[0], w[1] = x, link.cable_id
    return roll_up(index, buckets, routes=routes, bgp=bgp)


# --- inputs --------------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Input:
    corr: Correlation
    routes: Mapping[str, RouteTable] | None = None
    bgp: Mapping[str, Interval] | None = None


@cache
def demo_plan(shuffled: bool = False) -> Plan:
    """The demo plan with PFC on priorities 3 and 4 (two priorities to take the worst of); ``shuffled``: its links
    in a seeded random order, so that plan order is not grouped by leaf."""
    intent = load_intent(DEMO)
    plan = build_plan(intent.model_copy(update={"qos": intent.qos.model_copy(update={"pfc_priorities": [3, 4]})}))
    if shuffled:
        plan = dataclasses.replace(plan, links=random.Random(5).sample(plan.links, len(plan.links)))
    return plan


SNAP = "snapshot"  # the seconds of an end read by a state-only snapshot (intf-status), never rated


def end(
    rates: dict | None = None,
    state: dict | None = None,
    gauges: dict | None = None,
    why: dict | None = None,
    secs: float | str | None = 10.0,
) -> dict[str, Any]:
    return {"rates": rates or {}, "state": state or {}, "gauges": gauges or {}, "why": why or {}, "secs": secs}


def readings(index: LinkIndex, ends: Mapping[int, dict[str, Any]]) -> list[Interval | Snapshot]:
    """``ends`` (end code -> :func:`end`) as intervals (one per device and seconds) and state-only snapshots."""
    out: dict[tuple[str, object], Interval | Snapshot] = {}
    for code, e in ends.items():
        device, port = index.end_name(code)
        secs = e["secs"]
        if secs == SNAP:
            snap = out.setdefault((device, SNAP), Snapshot("intf-status", device))
            assert isinstance(snap, Snapshot)
            snap.ports[port] = PortSample(port, {}, dict(e["gauges"]), dict(e["state"]))
            continue
        iv = out.setdefault(
            (device, secs),
            Interval(device, f"test {secs}", 0.0 if secs else None, secs, secs, "taken_at" if secs else ""),
        )
        assert isinstance(iv, Interval)
        iv.ports[port] = PortRates(port, dict(e["rates"]), dict(e["why"]), dict(e["gauges"]), dict(e["state"]))
    return list(out.values())


def leaf_links(index: LinkIndex, kind: str, leaf: str = LEAF) -> list[int]:
    """A leaf's host links (``H``) or uplinks (``U``), in plan order."""
    if kind == "H":
        return [i for i, lk in enumerate(index.links) if lk.kind == "host" and lk.b_device == leaf]
    return [i for i, lk in enumerate(index.links) if lk.kind == "leaf_spine" and lk.a_device == leaf]


UP, DOWN = {"oper": "up"}, {"oper": "down"}
OK = {"rx_ok": 1000.0, "rx_err": 0.0, "rx_drop": 0.0, "tx_ok": 1000.0}
LOSSY = {**OK, "rx_err": 5.0}
A, B = 0, 1
# case, {(LEAF's host link "H" or uplink "U", its position, end): the end}
EDGE_CASES: list[tuple[str, dict[tuple[str, int, int], dict[str, Any]]]] = [
    ("nothing sampled", {}),
    ("both ends up", {("H", 0, A): end(OK, UP), ("H", 0, B): end(OK, UP)}),
    ("b oper down", {("H", 0, A): end(OK, UP), ("H", 0, B): end(OK, DOWN)}),
    (
        "a admin down, b flapped",
        {("U", 0, A): end(OK, {"admin": "down", "oper": "up"}), ("U", 0, B): end({"link_down_events": 0.1})},
    ),
    ("b admin down, a up", {("U", 1, A): end(OK, UP), ("U", 1, B): end(OK, {"admin": "down"})}),
    ("an oper word other than up or down", {("H", 1, A): end(OK, {"oper": "testing", "admin": "up"})}),
    ("flap rose while up", {("H", 1, A): end({**OK, "link_state_changes": 0.2}, UP)}),
    ("flap counter flat, no state", {("H", 1, B): end({"link_down_events": 0.0})}),
    (
        "flap counter reset, no state",
        {("H", 1, B): end({"link_down_events": None}, why={"link_down_events": "reset: 5 to 0"})},
    ),
    ("a NaN rate reads as None", {("H", 1, B): end({"link_down_events": math.nan, "rx_ok": math.nan}, UP)}),
    ("one end only", {("U", 2, B): end(LOSSY, UP)}),
    ("state only at a, rated b", {("H", 2, A): end(state=UP, secs=SNAP), ("H", 2, B): end(OK, UP, secs=20.0)}),
    ("a rated without seconds, b with", {("H", 2, A): end(OK, UP, secs=None), ("H", 2, B): end(OK, UP)}),
    (
        "loss: rx_drop unreadable at a",
        {("U", 3, A): end({**LOSSY, "rx_drop": None}, why={"rx_drop": "N/A"}), ("U", 3, B): end(LOSSY)},
    ),
    (
        "loss: no traffic",
        {
            ("U", 3, A): end({"rx_ok": 0.0, "rx_err": 0.0, "rx_drop": 0.0}),
            ("U", 3, B): end({"rx_ok": 0.0, "rx_err": 0.0, "rx_drop": 0.0}),
        },
    ),
    (
        "loss: frames at one end only",
        {
            ("U", 3, A): end({"rx_ok": 0.0, "rx_err": 0.0, "rx_drop": 0.0}),
            ("U", 3, B): end({"rx_ok": 3.0, "rx_err": 1.0, "rx_drop": 0.1}),
        },
    ),
    (
        "BER tie between the ends",
        {("U", 4, A): end(gauges={"pre_fec_ber": 1e-6}), ("U", 4, B): end(gauges={"pre_fec_ber": 1e-6})},
    ),
    (
        "BER -0.0 then 0.0",
        {("U", 4, A): end(gauges={"pre_fec_ber": -0.0}), ("U", 4, B): end(gauges={"pre_fec_ber": 0.0})},
    ),
    (
        "BER unreadable at a",
        {("U", 4, A): end(gauges={"pre_fec_ber": None}), ("U", 4, B): end(gauges={"pre_fec_ber": 3e-6})},
    ),
    (
        "FEC zero is a value",
        {("U", 5, A): end({"fec_uncorrectable": 0.0}), ("U", 5, B): end({"fec_uncorrectable": None})},
    ),
    ("pause: duration on 3, more frames on 4", {("H", 3, A): end({"pfc3_rx_duration_us": 1000.0, "pfc4_rx": 5.0})}),
    (
        "pause: frames saturate, duration at b",
        {("H", 3, A): end({"pfc4_rx": 1e9}), ("H", 3, B): end({"pfc3_rx_duration_us": 1e6})},
    ),
    (
        "pause: frames and duration equal",
        {("U", 6, A): end({"pfc3_rx": 10.0}), ("U", 6, B): end({"pfc4_rx_duration_us": 10 * 65535 * 512 / 400e3})},
    ),
    ("pause: a priority without PFC only", {("U", 6, A): end({"pfc0_rx": 10.0, "pfc0_rx_duration_us": 5.0})}),
    (
        "ECN: a NIC over rx_ok, the leaf over tx_ok",
        {
            ("H", 4, A): end({"ecn_marked": 5.0, "rx_ok": 100.0, "tx_ok": 1.0}),
            ("H", 4, B): end({"ecn_marked": 5.0, "rx_ok": 1.0, "tx_ok": 100.0}),
        },
    ),
    (
        "ECN: no packets or no marks",
        {
            ("H", 4, A): end({"ecn_marked": 5.0, "rx_ok": 0.0, "tx_ok": 9.0}),
            ("H", 4, B): end({"ecn_marked": None, "tx_ok": 100.0}),
        },
    ),
    ("ECN: an uplink's end a is a switch", {("U", 7, A): end({"ecn_marked": 5.0, "rx_ok": 10.0, "tx_ok": 50.0})}),
    (
        "worst ties across links: the first cable",
        {("U", k, A): end({"fec_uncorrectable": float(k in (2, 5, 9))}) for k in range(12)},
    ),
    ("one lossy uplink of 32", {**{("U", k, A): end(OK) for k in range(32)}, ("U", 20, B): end(LOSSY)}),
    ("3 lossy of 6 measured uplinks", {("U", k, A): end(LOSSY if k % 2 else OK) for k in range(6)}),
    ("4 lossy of 6 measured uplinks", {("U", k, A): end(OK if k in (0, 3) else LOSSY) for k in range(6)}),
    ("every measured uplink lossy", {("U", k, A): end(LOSSY) for k in range(3)}),
]


def edge_input(ends: dict[tuple[str, int, int], dict[str, Any]], shuffled: bool = False) -> Input:
    index = LinkIndex(demo_plan(shuffled))
    links = {k: leaf_links(index, k) for k in "HU"}
    return Input(correlate(index, readings(index, {2 * links[k][n] + e: v for (k, n, e), v in ends.items()})))


def two_leaves_input() -> Input:
    """Two leaves with one lossy uplink each of four and three measured, on the shuffled plan: the leaf whose first
    measured uplink comes first in plan order loses on its last uplink, which comes after the other leaf's lossy
    one. The suspects follow the leaves' first measured uplinks, not the lossy links' order."""
    index = LinkIndex(demo_plan(True))
    first, second = sorted((leaf_links(index, "U", leaf) for leaf in (LEAF, "leaf-p0-su01-r1")), key=lambda u: u[0])
    assert second[0] < first[-1]
    ends = {2 * i: end(OK) for i in (*first[:3], *second[1:3])}
    ends |= {2 * first[-1]: end(LOSSY), 2 * second[0]: end(LOSSY)}
    return Input(correlate(index, readings(index, ends)))


_COUNTERS = (
    "rx_ok",
    "rx_err",
    "rx_drop",
    "tx_ok",
    "fec_uncorrectable",
    "ecn_marked",
    "link_down_events",
    "link_state_changes",
    "pfc3_rx",
    "pfc4_rx",
    "pfc3_rx_duration_us",
    "pfc4_rx_duration_us",
)
_STATES = ({}, UP, DOWN, {"admin": "down"}, {"admin": "up", "oper": "up"}, {"oper": "unknown"})


def random_input(seed: int, shuffled: bool) -> Input:
    """Every end of the demo plan drawn at random: some not sampled, rates None, NaN, zero, tied or random, in a
    random order and subset, state words, BER gauges with signed zeros, seconds 10, 20, unknown or state only."""
    rng = random.Random(seed)
    index = LinkIndex(demo_plan(shuffled))

    def value() -> float | None:
        return rng.choice((None, math.nan, 0.0, -0.0, 1.0, 1.0, 1e6, rng.random(), rng.random() * 1e3))

    ends = {}
    for code in range(2 * len(index.links)):
        if rng.random() < 0.15:
            continue
        names = rng.sample(_COUNTERS, rng.randint(0, len(_COUNTERS)))
        rates = {k: value() for k in names}
        why = {k: "reset: 9 to 1" for k, v in rates.items() if v is None}
        gauges = {"pre_fec_ber": value()} if rng.random() < 0.5 else {}
        ends[code] = end(rates, rng.choice(_STATES), gauges, why, rng.choice((10.0, 10.0, 20.0, None, SNAP)))
    return Input(correlate(index, readings(index, ends)))


def recorded_input(*folders: str) -> Input:
    rated = read_rated([SAMPLES / f for f in folders], workers=1)
    return Input(correlate(LinkIndex(build_plan(load_intent(DEMO))), rated.readings), rated.routes, rated.bgp)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Input:
    """Both sweeps of the 512-GPU fabric as ``benchmarks/network_health.py --keep`` writes them, rated."""
    root = tmp_path_factory.mktemp("nh512")
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "network_health.py"),
            "--gpus",
            "512",
            "--keep",
            str(root),
            "--write-only",
        ],
        check=True,
        capture_output=True,
    )
    rated = read_rated([root / "sweep1", root / "sweep2"], workers=1)
    return Input(correlate(LinkIndex(build_plan(scale_intent(2))), rated.readings), rated.routes, rated.bgp)


INPUTS: dict[str, Callable[[], Input]] = {
    "recorded cable fault": lambda: recorded_input("cable-fault/sweep1", "cable-fault/sweep2"),
    "recorded clean": lambda: recorded_input("cable-fault/sweep1", "clean/sweep2"),
    "recorded one sweep": lambda: recorded_input("cable-fault/sweep1"),
    **{f"edge: {case}": (lambda ends=ends: edge_input(ends)) for case, ends in EDGE_CASES},
    "edge: one lossy uplink of 32, links shuffled": lambda: edge_input(
        dict(EDGE_CASES)["one lossy uplink of 32"], shuffled=True
    ),
    "edge: a lossy uplink of two leaves, links shuffled": two_leaves_input,
    **{
        f"random {seed}{', links shuffled' if shuffled else ''}": (lambda s=seed, sh=shuffled: random_input(s, sh))
        for seed in (1, 2, 3)
        for shuffled in (False, True)
    },
}


@pytest.fixture(params=[*INPUTS, "synthetic 512 GPUs"])
def given(request: pytest.FixtureRequest) -> Input:
    if request.param == "synthetic 512 GPUs":
        return request.getfixturevalue("synthetic")
    return INPUTS[request.param]()


# --- the checks ----------------------------------------------------------------------------------------------------


def _column(xs: Sequence[float | None]) -> np.ndarray:
    return np.array([math.nan if x is None else x for x in xs], dtype=np.float64)


def assert_same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Equal element by element, NaN where NaN, and zeros of the same sign."""
    same = (np.isnan(got) & np.isnan(want)) | ((got == want) & (np.signbit(got) == np.signbit(want)))
    bad = np.flatnonzero(~same)
    assert not len(bad), f"{what}: link {bad[0]}: {got[bad[0]]!r} != {want[bad[0]]!r} ({len(bad)} differ)"


def assert_same_repr(got: object, want: object, what: str) -> None:
    """``repr`` equal (values, their order and every float to the last bit); on failure, where they part (a diff
    of two long reprs would take pytest minutes)."""
    g, w = repr(got), repr(want)
    at = next((k for k, (x, y) in enumerate(zip(g, w, strict=False)) if x != y), min(len(g), len(w)))
    same = g == w
    assert same, (
        f"{what} differ at {at}: ...{g[max(0, at - 120) : at + 80]}... != ...{w[max(0, at - 120) : at + 80]}..."
    )


def test_columns_equal_the_objects(given: Input) -> None:
    table, objs = link_slis(given.corr), object_slis(given.corr)
    assert len(table) == len(objs) == len(given.corr.index.links)
    for name in LINK_SLIS:
        assert_same(table.values[name], _column([s.values[name] for s in objs]), name)
    assert_same(table.lost, _column([s.lost for s in objs]), "lost")
    assert_same(table.received, _column([s.received for s in objs]), "received")
    assert_same(table.seconds, _column([s.seconds for s in objs]), "seconds")
    assert_same_repr(list(table), objs, "items")  # the items are the objects, sources and reasons included


def test_aggregates_equal_the_object_aggregation(given: Input) -> None:
    got = aggregate(given.corr, link_slis(given.corr), routes=given.routes, bgp=given.bgp)
    want = object_aggregate(given.corr, object_slis(given.corr), given.routes, given.bgp)
    assert_same_repr(got, want, "aggregates")  # values, why and inputs, in their order, floats to the last bit


def test_the_rules_on_the_columns_equal_their_plain_loops(given: Input) -> None:
    """rule_links_down and rule_spine_path_loss pick their links from the columns (``Observed.screen``) and give
    the suspects of their loops over every link's object (``screen=False``)."""

    def rules(screen: bool) -> list[list[Suspect]]:
        obs = Observed(given.corr, link_slis(given.corr), default_slos(), given.bgp or {}, screen=screen)
        return [rule_links_down(obs), rule_spine_path_loss(obs)]

    assert_same_repr(rules(True), rules(False), "suspects")


def test_the_edge_cases_reach_what_they_name() -> None:
    """The table's cases give the values they are named for, so the equality above is tested where it matters."""

    def v(case: str, kind: str, n: int, name: str) -> float:
        given = edge_input(dict(EDGE_CASES)[case])
        return float(link_slis(given.corr).values[name][leaf_links(given.corr.index, kind)[n]])

    assert v("b admin down, a up", "U", 1, AVAILABILITY) == 0.0
    assert math.isnan(v("flap counter flat, no state", "H", 1, AVAILABILITY))
    assert math.isnan(v("loss: no traffic", "U", 3, LOSS))
    assert math.copysign(1.0, v("BER -0.0 then 0.0", "U", 4, "pre_fec_ber")) == -1.0
    assert v("pause: frames saturate, duration at b", "H", 3, "pause_ratio") == 1.0
    assert v("ECN: a NIC over rx_ok, the leaf over tx_ok", "H", 4, "ecn_mark_ratio") == 5.0 / 100.0
    obs = edge_input(dict(EDGE_CASES)["one lossy uplink of 32"])
    assert [s.rule for s in rule_spine_path_loss(Observed(obs.corr, link_slis(obs.corr), default_slos()))] == [
        "spine_path_loss"
    ]
    two = two_leaves_input()
    found = rule_spine_path_loss(Observed(two.corr, link_slis(two.corr), default_slos()))
    assert len(found) == 2 and found[0].links[0] > found[1].links[0]  # not in the lossy links' order


def test_a_table_is_a_sequence_of_its_links() -> None:
    given = edge_input(dict(EDGE_CASES)["b oper down"])
    table = link_slis(given.corr)
    objs = object_slis(given.corr)
    n = len(objs)
    assert table[-1] == objs[-1] and table[3:7] == objs[3:7] and table[np.int64(5)] == objs[5]
    with pytest.raises(IndexError):
        table[n]
    again = SliTable.of(objs)
    assert SliTable.of(table) is table and again[2] is objs[2] and len(again) == n
    for name in LINK_SLIS:
        assert_same(again.values[name], table.values[name], name)


def test_the_exporter_reads_the_link_values_of_the_objects() -> None:
    plan = build_plan(load_intent(DEMO))
    h = assess(
        plan, read_sweeps([SAMPLES / "cable-fault" / "sweep1", SAMPLES / "cable-fault" / "sweep2"]), default_slos()
    )
    objs = object_slis(h.corr)
    fams = {f.name: f for f in families(h)}
    for name in LINK_SLIS:
        got = [
            (s.labels["cable"], s.value)
            for s in fams[f"hwaac_sli_{metric_name(name)}"].samples
            if s.labels["scope"] == "link"
        ]
        want = [(h.corr.index.links[s.link].cable_id, s.values[name]) for s in objs if s.values[name] is not None]
        assert got == want, name
