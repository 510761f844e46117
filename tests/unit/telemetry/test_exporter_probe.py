"""The exporter's probe families (hwaac.telemetry.exporter_probe): on the derived probe samples each crossed cable's
probes and forward loss equal what the flows' planned routes give (tests/unit/probe/synth.py routes them from the
plan, not from the learned paths), with hwaac_link_planned's labels; parallel cables the hops did not tell apart
are one series per set, never spread onto their cables; flows by state; the probes' time; empty families without
probes; and the scrape passes ``promtool check metrics``."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from hwaac.cli import main
from hwaac.probe.model import Flow, FlowResult, ProbeResults
from hwaac.telemetry.exporter import families
from hwaac.telemetry.exporter_probe import FLOW_STATES, PARALLEL_LABELS
from hwaac.telemetry.fabric_health import assess
from hwaac.telemetry.samples import Sweep
from hwaac.telemetry.slo import default_slos
from tests.unit.probe.synth import DEMO, between, demo, results, route

SAMPLES = Path(__file__).parents[2] / "fixtures" / "telemetry" / "samples"
PROBES = SAMPLES / "probe-loss_derived"
CLEAN = SAMPLES / "clean" / "sweep2"
PROBE_FAMILIES = (
    "hwaac_probe_link_loss_ratio",
    "hwaac_probe_link_probes_sent",
    "hwaac_probe_parallel_loss_ratio",
    "hwaac_probe_parallel_probes_sent",
    "hwaac_probe_flows",
    "hwaac_probe_sweep_timestamp_seconds",
)


def exposition(folder: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["health", "exporter", str(DEMO), "--once", "--samples", str(folder)]) == 0
    return capsys.readouterr().out


def parsed(text: str) -> dict[str, list]:
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


def documents() -> list[dict]:
    """The probe.json documents of the derived samples, read as plain JSON."""
    return [json.loads(p.read_text()) for p in sorted(PROBES.glob("*/probe.json"))]


def routed(docs: list[dict]) -> dict[str, tuple[int, int]]:
    """cable id -> (probes sent, lost on the way out) over the flows whose planned route crosses it."""
    plan, out = demo(), {}
    for doc in docs:
        for f in doc["flows"]:
            for i in route(plan, Flow(**f["flow"])):
                sent, lost = out.get(plan.links[i].cable_id, (0, 0))
                out[plan.links[i].cable_id] = (sent + f["sent"], lost + f["sent"] - f["received_forward"])
    return out


def test_each_crossed_cable_has_its_routes_probes_and_loss(capsys: pytest.CaptureFixture[str]) -> None:
    fams = parsed(exposition(PROBES, capsys))
    want = routed(documents())
    assert len(want) == 128  # rail 0: 2 leaves x 32 uplinks and 64 host links
    ratio = {s.labels["cable"]: s for s in fams["hwaac_probe_link_loss_ratio"]}
    sent = {s.labels["cable"]: s.value for s in fams["hwaac_probe_link_probes_sent"]}
    assert set(ratio) == set(sent) == set(want)
    planned = {s.labels["cable"]: s.labels for s in fams["hwaac_link_planned"]}
    for cable, (n, lost) in want.items():
        assert sent[cable] == n
        assert ratio[cable].value == pytest.approx(lost / n, rel=1e-12)
        assert ratio[cable].labels == planned[cable]  # the same labels as hwaac_link_planned
    # the derive script's lossy cable (2 % of the probes crossing it) is the worst, and nothing is spread on sets
    worst = max(ratio.values(), key=lambda s: s.value)
    lossy = demo().links[between(demo(), "leaf-p0-su02-r0", "spine-p0-03")[1]].cable_id
    assert worst.labels["cable"] == lossy and 0.01 < worst.value < 0.03
    assert fams["hwaac_probe_parallel_loss_ratio"] == [] and fams["hwaac_probe_parallel_probes_sent"] == []


def test_flows_by_state_and_the_probes_time(capsys: pytest.CaptureFixture[str]) -> None:
    fams = parsed(exposition(PROBES, capsys))
    docs = documents()
    flows = [f for d in docs for f in d["flows"]]
    lossy = sum(1 for f in flows if f["received_forward"] < f["sent"])
    got = {s.labels["state"]: s.value for s in fams["hwaac_probe_flows"]}
    assert got == {"clean": len(flows) - lossy, "lossy": lossy, "no_path": 0, "not_judged": 0, "unreachable": 0}
    assert lossy > 2  # the lossy cable's flows and the stray ones
    (ts,) = fams["hwaac_probe_sweep_timestamp_seconds"]
    assert ts.value == max(d["ended"] for d in docs)


def test_promtool_accepts_the_scrape(promtool: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = exposition(PROBES, capsys)
    assert "hwaac_probe_link_loss_ratio{" in text
    r = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True, check=False, timeout=60
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_without_probes_the_families_are_there_and_empty(capsys: pytest.CaptureFixture[str]) -> None:
    fams = parsed(exposition(CLEAN, capsys))
    for name in PROBE_FAMILIES:
        assert fams[name] == [], name


def assess_results(
    rs: list[FlowResult], started: float | None = 1.0, ended: float | None = 2.0, taken_at: float | None = None
):
    docs: dict[str, ProbeResults] = {}
    for r in rs:
        docs.setdefault(r.flow.src_host, ProbeResults(r.flow.src_host, started, ended)).flows.append(r)
    return assess(demo(), [Sweep(Path("s"), taken_at, probes=docs)], default_slos())


def series(h, name: str) -> list:
    (fam,) = [f for f in families(h) if f.name == name]
    return fam.samples


def test_parallel_cables_are_one_series_per_set() -> None:
    """Hops answering from their loopbacks: the leaf-spine cables are sets (4 between a leaf and a spine); each set
    is one series with its probes, the host links stay exact."""
    plan = demo()
    rs = [r for r in results({}, 3, loopbacks=True) if r.flow.rail == 0]
    h = assess_results(rs)
    exact = series(h, "hwaac_probe_link_loss_ratio")
    assert exact and all(s.labels["link_kind"] == "host" for s in exact)
    want: dict[tuple[str, str], int] = {}  # (leaf, spine) -> probes of the flows routed across one of their cables
    for r in rs:
        for i in route(plan, r.flow)[1:3]:
            link = plan.links[i]
            want[(link.a_device, link.b_device)] = want.get((link.a_device, link.b_device), 0) + r.sent
    sent = series(h, "hwaac_probe_parallel_probes_sent")
    assert len(sent) == len(want) == 2 * 8  # two leaves on rail 0, 8 spines each
    for s in sent:
        lab = s.labels
        assert tuple(lab) == PARALLEL_LABELS
        ids = [plan.links[i].cable_id for i in between(plan, lab["leaf"], lab["spine"])]
        assert lab["cables"].startswith(f"{lab['leaf']} - {lab['spine']} (one of 4:")
        assert all(c in lab["cables"] for c in ids)
        assert s.value == want[(lab["leaf"], lab["spine"])]
    assert all(s.value == 0.0 for s in series(h, "hwaac_probe_parallel_loss_ratio"))


def _unchanged(rs: list[FlowResult]) -> list[FlowResult]:
    return rs


def _no_path(rs: list[FlowResult]) -> list[FlowResult]:
    for r in rs[:5]:
        r.path, r.path_complete = None, False
    return rs


def _not_judged(rs: list[FlowResult]) -> list[FlowResult]:
    rs[0].sent = rs[0].received_forward = rs[0].received_back = 0  # nothing sent
    rs[1].host_drops = 3  # a host's receive buffer dropped
    rs[2].received_forward = None  # replies came back, the count did not
    return rs


def _touching(host: str) -> Callable[[list[FlowResult]], dict[str, int]]:
    return lambda rs: {"unreachable": sum(1 for r in rs if host in (r.flow.src_host, r.flow.dst_host))}


# name, hosts of which nothing comes back, how the results are changed, the flows expected by state (but clean)
STATE_CASES: list[
    tuple[str, set[str], Callable[[list[FlowResult]], list[FlowResult]], Callable[[list[FlowResult]], dict[str, int]]]
] = [
    ("unreachable", {"gpu-su01-h03"}, _unchanged, _touching("gpu-su01-h03")),
    ("no path", set(), _no_path, lambda rs: {"no_path": 5}),
    ("not judged", set(), _not_judged, lambda rs: {"not_judged": 3}),
]


@pytest.mark.parametrize(("name", "dead", "change", "want"), STATE_CASES, ids=[c[0] for c in STATE_CASES])
def test_flow_states(name: str, dead: set[str], change: Callable, want: Callable) -> None:
    rs = change([r for r in results({}, 4, dead=dead) if r.flow.rail == 0])
    expected = dict.fromkeys(FLOW_STATES, 0) | want(rs)
    assert sum(expected.values()) > 0
    expected["clean"] = len(rs) - sum(expected.values())
    got = {s.labels["state"]: s.value for s in series(assess_results(rs), "hwaac_probe_flows")}
    assert got == expected


TIME_CASES = [  # started, ended, the sweep's taken_at -> the probes' time
    (10.0, 13.0, 99.0, 13.0),
    (10.0, None, 99.0, 10.0),
    (None, None, 99.0, 99.0),
    (None, None, None, None),
]


@pytest.mark.parametrize(("started", "ended", "taken_at", "want"), TIME_CASES)
def test_probe_time(started: float | None, ended: float | None, taken_at: float | None, want: float | None) -> None:
    rs = [r for r in results({}, 1) if r.flow.src_host == "gpu-su01-h01"]
    got = series(assess_results(rs, started, ended, taken_at), "hwaac_probe_sweep_timestamp_seconds")
    assert [s.value for s in got] == ([] if want is None else [want])
