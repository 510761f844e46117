"""``hwaac health fabric`` on the demo intent with the derived samples folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hwaac.cli import main
from hwaac.plan import build_plan
from hwaac.telemetry.fabric_health import assess, judge
from hwaac.telemetry.model import Snapshot
from hwaac.telemetry.rated import Rated
from hwaac.telemetry.rates import interval
from hwaac.telemetry.report import FabricReport
from hwaac.telemetry.samples import read_sweeps
from hwaac.telemetry.sli import Aggregate
from hwaac.telemetry.slo import load_slos
from hwaac.validate import load_intent

ROOT = Path(__file__).parents[3]
DEMO = str(ROOT / "inventory" / "demo")
SAMPLES = ROOT / "tests" / "fixtures" / "telemetry" / "samples"
FAULT1, FAULT2 = str(SAMPLES / "cable-fault" / "sweep1"), str(SAMPLES / "cable-fault" / "sweep2")
CLEAN2 = str(SAMPLES / "clean" / "sweep2")
SQUEUE = str(ROOT / "tests" / "fixtures" / "slurm" / "squeue" / "squeue_i_u_N_derived.txt")


def test_cable_fault_markdown_names_cable_nodes_and_jobs(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["health", "fabric", DEMO, "--samples", FAULT1, "--samples", FAULT2, "--squeue", SQUEUE])
    out = capsys.readouterr().out
    assert rc == 1
    assert out.startswith("# Fabric health: demo: FAULT")
    table = out.split("## Suspects", 1)[1].split("## SLIs", 1)[0]
    assert "| 1 | fault | cable | L0000000 | errors_both_ends |" in table
    assert "4101 (alice)" in table and "4102 (bob)" in table and "4103_2" not in table  # su02-h10 is not behind it
    assert "<details>" in out and "devices not sampled" in out


def test_json_report(tmp_path: Path) -> None:
    dest = tmp_path / "r.json"
    rc = main(["health", "fabric", DEMO, "--samples", FAULT1, "--samples", FAULT2, "--format", "json", "-o", str(dest)])
    doc = json.loads(dest.read_text())
    assert rc == 1 and doc["status"] == "fault" and doc["seconds"] == 60
    (s,) = doc["suspects"]
    assert [c["name"] for c in s["components"]] == ["L0000000", "leaf-p0-su01-r0 Ethernet128", "spine-p0-01 Ethernet0"]
    assert {e["where"] for e in s["evidence"]} == {"leaf-p0-su01-r0 Ethernet128", "spine-p0-01 Ethernet0"}


def test_clean_partial_interval_warns_for_the_unknown_links(capsys: pytest.CaptureFixture[str]) -> None:
    """2 of the demo's 88 devices sampled: no suspect, but coverage is below its SLO, which warns (exit 4) and
    names the planned links of unknown state per scope."""
    assert main(["health", "fabric", DEMO, "--samples", FAULT1, "--samples", CLEAN2]) == 4
    out = capsys.readouterr().out
    assert out.startswith("# Fabric health: demo: WARN")
    assert "No suspect among the links whose state is known" in out
    # 5 planned links known (the samples README: leaf-p0-su01-r0's 4 ports, spine-p0-01's other port) of 1024;
    # rail 0 holds all 5 of its 128, rail 1 none
    assert "**Coverage below its SLO**" in out and "fabric: 1019 of 1024" in out and "rail 1: 128 of 128" in out


def test_clean_interval_exits_0_when_coverage_is_not_required(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    slo = tmp_path / "slo.yaml"  # rails 1 to 7 have no known link: only a coverage SLO of 0 accepts that
    slo.write_text(
        (ROOT / "src" / "hwaac" / "telemetry" / "data" / "slo.yaml")
        .read_text()
        .replace("  coverage:\n    min: 0.99\n", "  coverage:\n    min: 0.0\n")
    )
    assert main(["health", "fabric", DEMO, "--samples", FAULT1, "--samples", CLEAN2, "--slo", str(slo)]) == 0
    out = capsys.readouterr().out
    assert "No suspect: every rule found the fabric within its SLOs" in out and "Coverage below" not in out


def _bad_samples(tmp: Path) -> dict[str, list[str]]:
    empty = tmp / "empty"
    empty.mkdir()
    bad_time = tmp / "badtime"
    (bad_time / "leaf-p0-su01-r0").mkdir(parents=True)
    (bad_time / "taken_at").write_text("yesterday\n")
    return {
        "missing folder": ["--samples", str(tmp / "nope")],
        "no device folder": ["--samples", str(empty)],
        "bad taken_at": ["--samples", str(bad_time)],
        "missing squeue": ["--samples", FAULT1, "--squeue", str(tmp / "nope.txt")],
        "missing slo": ["--samples", FAULT1, "--slo", str(tmp / "nope.yaml")],
    }


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("missing folder", "not a folder"),
        ("no device folder", "<device>"),
        ("bad taken_at", "ISO 8601"),
        ("missing squeue", "--squeue"),
        ("missing slo", "--slo"),
    ],
)
def test_usage_errors_exit_2(case: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["health", "fabric", DEMO, *_bad_samples(tmp_path)[case]]) == 2
    assert words in capsys.readouterr().err


def test_bad_slo_file_names_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    slo = tmp_path / "slo.yaml"
    slo.write_text("version: 1\nslos: {}\nlocalise: {switch_degraded_share: 2}\n")
    assert main(["health", "fabric", DEMO, "--samples", FAULT1, "--slo", str(slo)]) == 2
    assert "switch_degraded_share" in capsys.readouterr().err


def test_unknown_file_is_skipped_and_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sweep = tmp_path / "s"
    (sweep / "leaf-p0-su01-r0").mkdir(parents=True)
    (sweep / "leaf-p0-su01-r0" / "show-version.txt").write_text("SONiC\n")
    assert main(["health", "fabric", DEMO, "--samples", str(sweep), "--format", "json"]) == 4  # nothing known
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "warn" and doc["coverage_below_slo"][0]["unknown"] == 1024
    assert any("show-version" in f and "portstat" in f for f in doc["coverage"]["files_skipped"])


def test_assess_times_each_stage() -> None:
    timings: dict[str, float] = {}
    health = assess(build_plan(load_intent(DEMO)), read_sweeps([FAULT1, FAULT2]), load_slos(), timings=timings)
    assert list(timings) == ["rates", "index", "correlate", "slis", "localise", "report"]
    assert all(t >= 0 for t in timings.values()) and health.report.exit_code() == 1


def test_what_a_reader_could_not_read_of_rated_outputs_is_in_the_coverage() -> None:
    """A rated output (a port counter tool, a BGP summary) read in part is listed, never dropped as whole."""
    plan = build_plan(load_intent(DEMO))
    leaf = "leaf-p0-su01-r0"
    before, after = Snapshot("show bgp summary json", leaf, 0.0), Snapshot("show bgp summary json", leaf, 60.0)
    for s in (before, after):
        s.port("Ethernet128").counters.update(bgp_established=1, bgp_dropped=0)
    after.unknown.append("peer Ethernet132: connectionsDropped 'x' is not a count")
    ports = [Snapshot("portstat", leaf, t) for t in (0.0, 60.0)]
    for s in ports:
        s.port("Ethernet0").counters["rx_ok"] = int(s.taken_at or 0)
    ports[0].unknown.append("line 4: cut short")
    rated = Rated([("a", 0.0), ("b", 60.0)], [interval(*ports)], [60.0], {leaf: interval(before, after)})
    errors = judge(plan, rated, load_slos()).report.coverage["reader_and_rate_errors"]
    assert errors == [
        f"{leaf} (portstat): earlier sample: line 4: cut short",
        f"{leaf} (show bgp summary json): peer Ethernet132: connectionsDropped 'x' is not a count",
    ]


# scope, SLI values -> the report's status without a suspect
BREACH_CASES = [
    ("within every SLO", "leaf", {"path_diversity": 1.0, "coverage": 1.0, "loss_ratio": 0.0}, "ok"),
    ("a leaf's narrower ECMP", "leaf", {"path_diversity": 31 / 32, "coverage": 1.0}, "warn"),
    ("a rail's ECN marking", "rail", {"ecn_mark_ratio": 0.2, "coverage": 1.0}, "warn"),
    ("an SLI without a value", "fabric", {"availability": None, "coverage": 1.0}, "ok"),
]


@pytest.mark.parametrize(("case", "scope", "values", "status"), BREACH_CASES, ids=[c[0] for c in BREACH_CASES])
def test_an_sli_out_of_its_slo_warns_without_a_suspect(case: str, scope: str, values: dict, status: str) -> None:
    report = FabricReport(
        "demo", [("s1", 0.0), ("s2", 60.0)], 60.0, [], [Aggregate(scope, "7", dict(values))], load_slos()
    )
    assert report.status == status and report.exit_code() == (4 if status == "warn" else 0)
    text = report.markdown()
    if status == "warn":
        assert "No rule names a component, but SLIs are out of their SLO in " + scope in text
    else:
        assert "No suspect: every rule found the fabric within its SLOs" in text
