"""The localisation rules' column screens (``Observed.screen``): every rule that reads the ends gives exactly the
suspects of its plain loop over every end (the same suspects in the same order, evidence and words), and
``Observed.errors`` the same evidence for every end, on the recorded samples folders, the fault cases of
test_localise, edge cases (None, NaN, negative and infinite rates, values at the SLOs, admin down, ends not sampled,
no traffic, PFC watchdog words, marks to sum in order), seeded random fabrics and the synthetic fabric of
``benchmarks/network_health.py`` with its three injected faults; and a screened run builds only the ends of links
that carry a fault."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

import pytest

from benchmarks.network_sweep import Faults
from benchmarks.plan_scale import scale_intent
from hwaac.plan import build_plan
from hwaac.telemetry.localise import localise, rule_errors_both_ends, rule_errors_one_end, rule_flapping
from hwaac.telemetry.localise_flow import rule_congestion, rule_pfc_storm
from hwaac.telemetry.model import PortSample, Snapshot
from hwaac.telemetry.rated import read_rated
from hwaac.telemetry.rates import Interval, PortRates
from hwaac.telemetry.sli import ECN, link_slis
from hwaac.telemetry.slo import SloSet, default_slos
from hwaac.telemetry.suspects import Observed, Suspect
from hwaac.telemetry.topology import LinkIndex, correlate
from tests.unit.telemetry.test_localise import CASES, CLEAN, H1, L0, L1, far, index, observe

ROOT = Path(__file__).parents[3]
SAMPLES = ROOT / "tests" / "fixtures" / "telemetry" / "samples"
ON_ENDS: tuple[Callable[[Observed], list[Suspect]], ...] = (
    rule_errors_both_ends,
    rule_errors_one_end,
    rule_flapping,
    rule_pfc_storm,
    rule_congestion,
)
NAN, INF = math.nan, math.inf
SYNTH_GPUS = 512


def assert_screens_match(obs: Observed) -> list[Suspect]:
    """Each rule on the ends, ``errors`` of every end and ``localise`` give the same with the screens as without
    (compared as repr: exact floats, NaN included); returns the screened run's suspects."""

    def fresh(screen: bool) -> Observed:
        return Observed(obs.corr, obs.slis, obs.slos, obs.bgp, screen=screen)

    screened, plain = fresh(True), fresh(False)
    for rule in ON_ENDS:
        assert repr(rule(screened)) == repr(rule(plain)), rule.__name__
    codes = range(len(obs.corr.ends))
    assert repr([screened.errors(c) for c in codes]) == repr([plain.errors(c) for c in codes])
    got = localise(fresh(True))
    assert repr(got) == repr(localise(fresh(False)))
    return got


def observed(
    ix: LinkIndex,
    faults: dict[tuple[str, str], dict],
    *,
    base: dict[str, float | None] = CLEAN,
    missing: Iterable[str | tuple[str, str]] = (),
    snapshots: Iterable[Snapshot] = (),
    slos: SloSet | None = None,
) -> Observed:
    """Every planned end up for 10 s with ``base`` rates, ``faults`` (rates, ``state``, ``gauges``) laid over; the
    devices or (device, port) ends of ``missing`` not sampled; ``snapshots`` (state only) read after."""
    gone = set(missing)
    readings: list[Interval | Snapshot] = []
    for device, ports in ix.ports.items():
        if device in gone:
            continue
        iv = Interval(device, "test", 0.0, 10.0, 10.0, "taken_at")
        for port in ports:
            if (device, port) in gone:
                continue
            f = faults.get((device, port), {})
            rates = {**base, **{k: v for k, v in f.items() if k not in ("state", "gauges")}}
            iv.ports[port] = PortRates(port, rates, {}, dict(f.get("gauges", {})), {"oper": "up", **f.get("state", {})})
        readings.append(iv)
    corr = correlate(ix, [*readings, *snapshots])
    return Observed(corr, link_slis(corr), slos or default_slos(), {})


def state_only(device: str, port: str, state: dict[str, str]) -> Snapshot:
    snap = Snapshot("show pfcwd stats", device, 10.0)
    snap.ports[port] = PortSample(port, state=state)
    return snap


def slos_with(sli: str, **fields: float | None) -> SloSet:
    """The default SLOs with the fields of ``sli``'s objective replaced (no fields: without that objective), not
    validated, so that a screen meets bounds a file could not give."""
    s = default_slos()
    objs = dict(s.slos)
    if fields:
        objs[sli] = objs[sli].model_copy(update=fields)
    else:
        del objs[sli]
    return s.model_copy(update={"slos": objs})


@pytest.mark.parametrize(
    "folders",
    [
        ["cable-fault/sweep1", "cable-fault/sweep2"],
        ["cable-fault/sweep1", "clean/sweep2"],
        ["cable-fault/sweep2"],
        ["probe-loss_derived"],
    ],
    ids=lambda f: "+".join(f),
)
def test_samples_folders(folders: list[str]) -> None:
    rated = read_rated([SAMPLES / f for f in folders], workers=1)
    corr = correlate(index(), rated.readings)
    assert_screens_match(Observed(corr, link_slis(corr), default_slos(), rated.bgp))


@pytest.mark.parametrize(("case", "faults", "bgp"), [c[:3] for c in CASES], ids=[c[0] for c in CASES])
def test_fault_cases_of_every_rule(case: str, faults: dict, bgp: dict | None) -> None:
    assert assert_screens_match(observe(faults, bgp))


H1_LEAF = far(H1, "rail0")
SPINE_END = far(L0, "Ethernet128")
L0_HOST_PORTS = [f"Ethernet{4 * k}" for k in range(8)]
_marks = random.Random(3)
MANY_MARKS = {
    (leaf, f"Ethernet{4 * k}"): {"ecn_marked": _marks.uniform(0.1, 10.0), "cnp_sent": _marks.random()}
    for leaf in ("leaf-p0-su01-r1", "leaf-p0-su01-r2", "leaf-p0-su02-r1")
    for k in range(16)
}

# case, faults, options of observed()
EDGE: list[tuple[str, dict[tuple[str, str], dict], dict]] = [
    ("no rates at all: state only", {(L0, "Ethernet0"): {"state": {"oper": "down"}}}, {"base": {}}),
    ("zero traffic", {}, {"base": dict.fromkeys(CLEAN, 0.0)}),
    ("every counter None", {(L0, "Ethernet4"): {"rx_err": 5.0}}, {"base": dict.fromkeys([*CLEAN, "cnp_sent"])}),
    (
        "NaN counters",
        {
            (L0, p): dict.fromkeys(
                [
                    "rx_err",
                    "rx_crc",
                    "fec_uncorrectable",
                    "link_down_events",
                    "pfc3_rx_duration_us",
                    "pfc3_rx",
                    "ecn_marked",
                    "cnp_sent",
                ],
                NAN,
            )
            | {"gauges": {"pre_fec_ber": NAN}}
            for p in L0_HOST_PORTS
        },
        {},
    ),
    (
        "negative rates: a flap counter below 0 is still a rise",
        {
            (L0, "Ethernet4"): {"link_down_events": -1.0},
            (H1, "rail1"): {"rx_err": -5.0, "pfc3_rx": -1.0},
            (L1, "Ethernet8"): {"ecn_marked": -3.0, "cnp_sent": 10.0},
            (L1, "Ethernet12"): {"link_state_changes": -0.5},
        },
        {},
    ),
    (
        "infinite rates",
        {
            (L0, "Ethernet8"): {"rx_err": INF, "ecn_marked": INF},
            (L1, "Ethernet8"): {"pfc3_rx": INF},
            (L1, "Ethernet12"): {"fec_uncorrectable": INF, "link_down_events": INF},
            (L1, "Ethernet16"): {"ecn_marked": INF, "cnp_sent": -INF},
        },
        {},
    ),
    (
        "errors below, at and above the SLOs",
        {
            (L0, "Ethernet0"): {"rx_err": 1e-9},
            (L0, "Ethernet4"): {"fec_uncorrectable": 0.0025},
            (L0, "Ethernet8"): {"gauges": {"pre_fec_ber": 2.4e-5}},
            (L0, "Ethernet12"): {"gauges": {"pre_fec_ber": 2.5e-5}},
            (L0, "Ethernet16"): {"gauges": {"pre_fec_ber": 2.4e-4}},
            (L0, "Ethernet20"): {"gauges": {"pre_fec_ber": 3e-4}},
            (L0, "Ethernet24"): {"rx_symbol_err": 0.5, "rx_ok": None},
            (L0, "Ethernet28"): {"fec_uncorrectable": 0.003},
        },
        {},
    ),
    (
        "admin down and flapping at once",
        {
            SPINE_END: {"state": {"admin": "down"}, "link_state_changes": 0.002},
            (L0, "Ethernet128"): {"link_down_events": 0.001},
        },
        {},
    ),
    (
        "pause at the limit, from frames, on a priority the plan does not use",
        {
            (H1, "rail0"): {"pfc3_rx_duration_us": 10_000.0},
            (H1, "rail1"): {"pfc3_rx": 20_000.0},
            (H1, "rail2"): {"pfc4_rx_duration_us": 900_000.0},
            (H1, "rail3"): {"pfc3_rx_duration_us": 0.0, "pfc3_rx": 1e6},
            (H1, "rail4"): {"pfc3_rx": 1e-3},
        },
        {},
    ),
    (
        "PFC watchdog counters and words",
        {
            (L0, "Ethernet0"): {"pfcwd3_storm_detected": 0.0, "state": {"pfcwd3_status": "operational"}},
            (L0, "Ethernet4"): {"pfcwd3_storm_detected": 0.01, "pfcwd3_storm_restored": 0.01},
            (L1, "Ethernet4"): {"state": {"pfcwd4_status": "stormed"}},
            (L1, "Ethernet8"): {"state": {"mode": "stormed"}, "pfcwd_total": 3.0},
        },
        {},
    ),
    (
        "a stormed queue read in a snapshot only",
        {},
        {"snapshots": [state_only(L1, "Ethernet0", {"pfcwd3_status": "stormed"})]},
    ),
    (
        "ends and devices not sampled",
        {
            (H1, "rail0"): {"rx_err": 4.0},
            (L1, "Ethernet0"): {"rx_crc": 2.0},
            far("spine-p0-01", "Ethernet0"): {"rx_err": 1.0, "link_down_events": 0.1},
        },
        {"missing": ["spine-p0-01", H1_LEAF, (H1, "rail1"), "gpu-su02-h03"]},
    ),
    (
        "marks tie on two leaves",
        {
            ("leaf-p0-su01-r5", "Ethernet0"): {"ecn_marked": 50.0},
            ("leaf-p0-su02-r5", "Ethernet0"): {"ecn_marked": 50.0},
        },
        {},
    ),
    (
        "marks on a leaf whose link has errors",
        {("leaf-p0-su01-r2", f"Ethernet{4 * k}"): {"ecn_marked": 100.0} for k in range(4)}
        | {("leaf-p0-su01-r2", "Ethernet12"): {"ecn_marked": 100.0, "rx_err": 3.0}},
        {},
    ),
    ("many marks summed in plan order", MANY_MARKS, {}),
    (
        "marks of very different sizes summed in plan order",
        {(L1, f"Ethernet{4 * k}"): {"ecn_marked": 1.0} for k in range(1, 40)}
        | {(L1, "Ethernet0"): {"ecn_marked": 1e16}},
        {},
    ),
    (
        "marks spread over every rail",
        {(f"leaf-p0-su0{s}-r{r}", "Ethernet0"): {"ecn_marked": 10.0} for s in (1, 2) for r in range(8)},
        {},
    ),
]


@pytest.mark.parametrize(("case", "faults", "options"), EDGE, ids=[c[0] for c in EDGE])
def test_edge_cases(case: str, faults: dict, options: dict) -> None:
    assert_screens_match(observed(index(), faults, **options))


ERRORS = next(c for c in EDGE if c[0] == "errors below, at and above the SLOs")
PAUSE = next(c for c in EDGE if c[0].startswith("pause at the limit"))
UNPAUSED = {k: v for k, v in CLEAN.items() if not k.startswith("pfc")}  # only the case's ends have pause rated
# SLOs, which they are, the edge case judged with them
SLO_CASES = [
    ("BER without a warn level", slos_with("pre_fec_ber", warn=None), ERRORS),
    ("no BER objective", slos_with("pre_fec_ber"), ERRORS),
    ("no uncorrectable codeword allowed", slos_with("fec_uncorrectable_per_s", max=0.0), ERRORS),
    ("no pause allowed", slos_with("pause_ratio", max=0.0), PAUSE),
    ("a pause bound below 0", slos_with("pause_ratio", max=-1.0), (*PAUSE[:2], {"base": UNPAUSED})),
]


@pytest.mark.parametrize(("name", "slos", "case"), SLO_CASES, ids=[c[0] for c in SLO_CASES])
def test_edge_cases_with_other_slos(name: str, slos: SloSet, case: tuple[str, dict, dict]) -> None:
    _, faults, options = case
    assert_screens_match(observed(index(), faults, slos=slos, **options))


POOL = (None, NAN, 0.0, -0.0, -1.0, 1e-9, 1e-3, 0.5, 3.0, 1e5, INF, -INF)
NAMES = (
    "rx_err",
    "rx_crc",
    "rx_symbol_err",
    "rx_ok",
    "fec_uncorrectable",
    "link_down_events",
    "link_state_changes",
    "pfc3_rx_duration_us",
    "pfc3_rx",
    "pfc4_rx",
    "ecn_marked",
    "cnp_sent",
    "pfcwd3_storm_detected",
)
BERS = (None, NAN, 0.0, 1e-9, 2.4e-5, 5e-5, 2.4e-4, 1e-3)
STATES = ({"oper": "down"}, {"admin": "down"}, {"pfcwd3_status": "operational"}, {"pfcwd3_status": "stormed"}, {})


@cache
def scale_index() -> LinkIndex:
    return LinkIndex(build_plan(scale_intent(SYNTH_GPUS // 256)))


def random_fabric(ix: LinkIndex, seed: int) -> Observed:
    """Faults of random names and values at random ends, marks on many ends, some ends and a device not sampled."""
    rng = random.Random(seed)
    ends = [(d, p) for d, ports in ix.ports.items() for p in ports]
    faults: dict[tuple[str, str], dict] = {}
    for end in rng.sample(ends, 40):
        f = faults[end] = {k: rng.choice(POOL) for k in rng.sample(NAMES, rng.randint(1, 5))}
        if rng.random() < 0.3:
            f["gauges"] = {"pre_fec_ber": rng.choice(BERS)}
        if rng.random() < 0.2:
            f["state"] = rng.choice(STATES)
    for end in rng.sample(ends, 200):
        faults.setdefault(end, {})["ecn_marked"] = rng.uniform(0.0, 100.0) * rng.randint(0, 1)
    missing: list[str | tuple[str, str]] = [*rng.sample(ends, 5), rng.choice(sorted(ix.ports))]
    return observed(ix, faults, missing=missing)


@pytest.mark.parametrize(("plan", "seed"), [("demo", s) for s in range(12)] + [("scale", s) for s in range(3)])
def test_random_fabrics(plan: str, seed: int) -> None:
    assert assert_screens_match(random_fabric(index() if plan == "demo" else scale_index(), seed))


def test_synthetic_fabric(tmp_path: Path) -> None:
    """The fabric of ``benchmarks/network_health.py --gpus 512 --keep DIR``, read, rated and correlated."""
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "network_health.py"),
            "--gpus",
            str(SYNTH_GPUS),
            "--keep",
            str(tmp_path),
            "--write-only",
        ],
        check=True,
        capture_output=True,
    )
    rated = read_rated([tmp_path / "sweep1", tmp_path / "sweep2"])
    corr = correlate(scale_index(), rated.readings)
    obs, faults = Observed(corr, link_slis(corr), default_slos(), rated.bgp), Faults.pick(scale_index().plan)
    got = assert_screens_match(obs)
    cables = {obs.index.links[i].cable_id for s in got for i in s.links}
    assert {faults.crc.cable_id, faults.flap.cable_id, faults.down.cable_id} <= cables


def test_a_screened_run_builds_only_the_ends_of_faulty_links(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain loops build every end; the screens only the ends of links with errors or a flap, and of the few
    links the congestion suspect cites above the ECN SLO (its marks are summed on the columns, the ECN ratios read
    from the SLI columns; a cited link's SLIs are built for their source)."""
    errors_and_flap = {**CASES[0][1], **next(c[1] for c in CASES if c[3] == "flapping" and c[1])}
    marks = next(c[1] for c in CASES if c[3] == "congestion")
    obs = observe({**errors_and_flap, **marks})
    table = obs.corr.ends
    built: list[int] = []
    end = table.end
    monkeypatch.setattr(table, "end", lambda code: (built.append(code), end(code))[1])
    localise(Observed(obs.corr, obs.slis, obs.slos, obs.bgp, screen=False))
    assert set(built) == set(range(len(table)))
    built.clear()
    got = localise(Observed(obs.corr, obs.slis, obs.slos, obs.bgp))
    assert {s.rule for s in got} == {"errors_both_ends", "flapping", "congestion"}
    faulty = {code >> 1 for d, p in errors_and_flap if (code := index().find(d, p)) is not None}
    cables = {e.where for s in got if s.rule == "congestion" for e in s.evidence if e.what == ECN}
    cited = {i for i, lk in enumerate(index().links) if lk.cable_id in cables}
    assert 0 < len(cited) <= 5
    assert built and {code >> 1 for code in built} <= faulty | cited
