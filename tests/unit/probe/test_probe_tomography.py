"""Loss tomography on synthetic sweeps of the demo plan (tests/unit/probe/synth.py): one bad cable at 2 % with
binomial noise is named alone, a clean sweep names nothing, two bad cables are both named, a dead node or rail
port is named itself, and hops answering from loopbacks give the set of parallel cables."""

from __future__ import annotations

import math
from functools import cache

import pytest

from hwaac.plan.model import ip_str
from hwaac.probe.paths import PathIndex
from hwaac.telemetry.slo import default_slos
from hwaac.telemetry.suspects import FAULT
from hwaac.telemetry.tomography import RULE_LOSS, RULE_UNREACHABLE, binomial_tail, tomography
from tests.unit.probe.synth import between, demo, host_link, results, route


@cache
def index() -> PathIndex:
    return PathIndex.from_plan(demo())


def up(leaf: str, spine: str, n: int) -> int:
    return between(demo(), leaf, spine)[n]


BAD_UP = ("leaf-p0-su01-r0", "spine-p0-03", 1)  # crossed upwards by su01 rail-0 flows
BAD_DOWN = ("leaf-p0-su02-r4", "spine-p0-05", 2)  # crossed downwards by su01 -> su02 rail-4 flows


@pytest.mark.parametrize(
    ("k", "n", "p", "expected"),
    [
        (0, 10, 0.5, 1.0),
        (1, 100, 0.01, 1 - 0.99**100),
        (3, 10, 0.5, 1 - (1 + 10 + 45) / 1024),
        (10, 10, 0.5, 0.5**10),
        (11, 10, 0.5, 0.0),
        (2, 1600, 0.001, 1 - 0.999**1600 - 1600 * 0.001 * 0.999**1599),
    ],
)
def test_binomial_tail(k: int, n: int, p: float, expected: float) -> None:
    assert math.isclose(binomial_tail(k, n, p), expected, rel_tol=1e-9, abs_tol=1e-15)


CASES = [  # name, cable -> loss, seeds, stray single-probe losses, the cables that must be named
    ("clean", {}, range(2), 0, []),
    ("clean with stray losses", {}, range(3), 40, []),
    ("one cable at 2 %", {BAD_UP: 0.02}, range(6), 0, [BAD_UP]),
    ("one cable at 2 % with stray losses", {BAD_UP: 0.02}, range(3), 40, [BAD_UP]),
    ("two cables", {BAD_UP: 0.02, BAD_DOWN: 0.05}, range(3), 0, [BAD_UP, BAD_DOWN]),
]


@pytest.mark.parametrize(("name", "loss", "seeds", "stray", "named"), CASES, ids=[c[0] for c in CASES])
def test_lossy_cables_are_named_and_nothing_else(name: str, loss: dict, seeds: range, stray: int, named: list) -> None:
    cables = {up(*k): v for k, v in loss.items()}
    want = {frozenset({up(*k)}) for k in named}
    for seed in seeds:
        rs = results(cables, seed, stray=stray)
        t = tomography(rs, index(), default_slos())
        assert {frozenset(s.links) for s in t.suspects} == want, (seed, [s.components[0].name for s in t.suspects])
        assert all(s.rule == RULE_LOSS and s.severity == FAULT for s in t.suspects)
        assert not t.coverage["probe_flows_without_a_path"]


def test_the_named_cable_has_both_ends_its_hosts_and_flows_that_lost_nothing() -> None:
    plan, bad = demo(), up(*BAD_UP)
    rs = results({bad: 0.02}, 7)
    crossing = [r for r in rs if bad in route(plan, r.flow)]
    assert any(r.forward_lost == 0 for r in crossing) and any(r.forward_lost for r in crossing)  # the hard case
    (s,) = tomography(rs, index(), default_slos()).suspects
    link = plan.links[bad]
    names = [c.name for c in s.components]
    assert names == [link.cable_id, f"{link.a_device} {link.a_port}", f"{link.b_device} {link.b_port}"]
    assert set(s.nodes) == {h for r in crossing for h in (r.flow.src_host, r.flow.dst_host)}
    lost, sent = sum(r.forward_lost for r in crossing), sum(r.sent for r in crossing)
    assert s.evidence[0].value == pytest.approx(lost / sent) and s.evidence[0].slo == 1e-3


@pytest.mark.parametrize("bad_end", [("leaf-p0-su01-r0", "spine-p0-03", 1), ("leaf-p0-su02-r0", "spine-p0-03", 2)])
def test_loopback_hops_name_the_sets_the_probes_cannot_tell_apart(bad_end: tuple[str, str, int]) -> None:
    """Hops answering from loopbacks give sets of 4 parallel cables; with two SUs every rail-0 probe through
    spine-p0-03 crosses its set at su01's leaf AND its set at su02's leaf, so both are named, whichever is bad."""
    bad = up(*bad_end)
    (s,) = tomography(results({bad: 0.02}, 3, loopbacks=True), index(), default_slos()).suspects
    sets = [set(between(demo(), leaf, "spine-p0-03")) for leaf in ("leaf-p0-su01-r0", "leaf-p0-su02-r0")]
    assert set(s.links) == sets[0] | sets[1] and bad in s.links
    assert s.kind == "link" and all("one of 4" in s.components[i].name for i in (0, 7))
    assert "cannot tell them apart" in s.reasoning and s.strength[0] == 1.0


def test_a_dead_node_is_named_itself_not_the_cables_of_its_paths() -> None:
    t = tomography(results({}, 1, dead={"gpu-su01-h03"}), index(), default_slos())
    (s,) = t.suspects
    assert (s.rule, s.kind, s.components[0].name, s.nodes) == (
        RULE_UNREACHABLE,
        "host",
        "gpu-su01-h03",
        ("gpu-su01-h03",),
    )
    assert len(s.links) == 8 and t.summary["unreachable_pairs"] > 0


def test_a_dead_rail_port_is_named_as_its_link() -> None:
    plan = demo()
    link = next(lk for lk in plan.links if lk.kind == "host" and (lk.a_device, lk.rail) == ("gpu-su02-h07", 2))
    t = tomography(results({}, 1, dead={ip_str(link.a_ip)}), index(), default_slos())
    (s,) = t.suspects
    assert s.rule == RULE_UNREACHABLE and s.links == (host_link(plan, ip_str(link.a_ip)),)
    assert [c.name for c in s.components[1:]] == [f"{link.a_device} {link.a_port}", f"{link.b_device} {link.b_port}"]


def test_flows_without_a_path_are_coverage_not_evidence() -> None:
    rs = results({up(*BAD_UP): 0.5}, 2)
    for r in rs:
        r.path, r.path_complete = None, False
    t = tomography(rs, index(), default_slos())
    assert not t.suspects and len(t.coverage["probe_flows_without_a_path"]) == len(rs)
