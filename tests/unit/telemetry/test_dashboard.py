"""The Grafana dashboard of hwaac.telemetry.dashboard: one row per (plane, rail) of the plan, every query valid PromQL
under the real promtool and over names the exporter serves or the rules record, thresholds equal to the SLO file's,
the Grafana 11 schema, the CLI, and the shipped demo file equal to what the code generates now."""

from __future__ import annotations

import difflib
import json
import re
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from hwaac.cli import main
from hwaac.plan import build_plan
from hwaac.plan.model import Plan
from hwaac.telemetry.dashboard import dashboard, dashboard_json, dashboard_uid
from hwaac.telemetry.exporter import families
from hwaac.telemetry.fabric_health import assess
from hwaac.telemetry.samples import read_sweep
from hwaac.telemetry.slo import default_slos
from hwaac.validate import load_intent
from tests.unit.telemetry.promql import RULES, family_series, promtool_test

ROOT = Path(__file__).parents[3]
DEMO = ROOT / "inventory" / "demo"
TWIN = ROOT / "inventory" / "examples" / "b300-twin-plane"
SHIPPED = ROOT / "files" / "grafana" / "hwaac-network-demo.json"
SLO_FILE = ROOT / "src" / "hwaac" / "telemetry" / "data" / "slo.yaml"
SAMPLES = ROOT / "tests" / "fixtures" / "telemetry" / "samples"
FAULT = [SAMPLES / "cable-fault" / "sweep1", SAMPLES / "cable-fault" / "sweep2"]

# (intent folder, planes, rails) as the fabric.yml files declare them
FABRICS = [(DEMO, 1, 8), (TWIN, 2, 8)]
FABRIC_IDS = [f.name for f, _, _ in FABRICS]


@cache
def plan_of(folder: Path) -> Plan:
    return build_plan(load_intent(folder))


@cache
def model(folder: Path) -> dict[str, Any]:
    return dashboard(plan_of(folder))


def rows(d: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(row title, its panels): a collapsed row holds its panels, an open row owns the panels after it."""
    out: list[tuple[str, list[dict[str, Any]]]] = []
    for p in d["panels"]:
        if p["type"] == "row":
            out.append((p["title"], list(p.get("panels", []))))
        else:
            assert out, f"panel {p['title']!r} before the first row"
            out[-1][1].append(p)
    return out


def panels(d: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for _, ps in rows(d) for p in ps]


def expressions(d: dict[str, Any]) -> list[str]:
    return [t["expr"] for p in panels(d) for t in p["targets"]]


# ---- rows


ROW_TITLE = re.compile(r"^Plane (\d+), rail (\d+)$")
ROW_SLIS = [
    "Availability",
    "Coverage",
    "Loss ratio",
    "Pre-FEC BER",
    "Uncorrectable FEC",
    "PFC pause",
    "ECN marking",
    "Probe loss",
]


@pytest.mark.parametrize(("folder", "planes", "rails"), FABRICS, ids=FABRIC_IDS)
def test_rows_are_the_plans_plane_rail_pairs_in_order(folder: Path, planes: int, rails: int) -> None:
    fabric = load_intent(folder).fabric
    assert (fabric.planes, fabric.rails) == (planes, rails)
    title, *rest = rows(model(folder))
    assert title[0] == "Fabric"
    got = []
    for t, ps in rest:
        m = ROW_TITLE.match(t)
        assert m, f"row {t!r} is not a plane and rail"
        plane, rail = m.groups()
        got.append((int(plane), int(rail)))
        assert [p["title"] for p in ps] == ROW_SLIS
        for p in ps:
            for target in p["targets"]:
                expr = target["expr"]
                # every selector of the query picks this plane and rail, and no other
                assert set(re.findall(r'plane="(\d+)"', expr)) == {plane}, expr
                assert set(re.findall(r'rail="(\d+)"', expr)) == {rail}, expr
                assert expr.count("{") == expr.count(f'plane="{plane}",rail="{rail}"'), expr
                assert "{{su}}" in target["legendFormat"]  # one series per SU
    assert got == [(p, r) for p in range(planes) for r in range(rails)]


# ---- PromQL: syntax (promtool) and names (the exporter's families, the rules' records)


def promtool_check(promtool: str, exprs: list[str], folder: Path) -> subprocess.CompletedProcess[str]:
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [{"record": f"hwaac_dashboard:check_{i}", "expr": e} for i, e in enumerate(exprs)],
            }
        ]
    }
    path = folder / "dashboard.rules.yml"
    path.write_text(yaml.safe_dump(rules, sort_keys=False))
    return subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False)


def concrete(expr: str, fabric: str) -> str:
    """The query as Prometheus receives it from Grafana with ``$fabric`` chosen."""
    out = expr.replace("$fabric", fabric)
    assert "$" not in out, f"a Grafana variable other than $fabric: {expr}"
    return out


def test_promtool_rejects_a_broken_expression(promtool: str, tmp_path: Path) -> None:
    """The check below can fail: promtool refuses a query with an unbalanced parenthesis."""
    assert promtool_check(promtool, ["sum by (su (hwaac:link_up)"], tmp_path).returncode != 0


@pytest.mark.parametrize("folder", [f for f, _, _ in FABRICS], ids=FABRIC_IDS)
def test_every_expression_is_valid_promql(folder: Path, promtool: str, tmp_path: Path) -> None:
    name = plan_of(folder).intent.fabric.name
    exprs = list(dict.fromkeys(concrete(e, name) for e in expressions(model(folder))))
    r = promtool_check(promtool, exprs, tmp_path)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert f"SUCCESS: {len(exprs)} rules found" in r.stdout


_DROPPED = re.compile(
    r'"(?:[^"\\]|\\.)*"|\{[^}]*\}|\[[^\]]*\]'
    r"|\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)"
)
_WORD = re.compile(r"(?<![\w:.])[A-Za-z_:][\w:]*")
_KEYWORDS = {
    "and",
    "or",
    "unless",
    "bool",
    "offset",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "inf",
    "nan",
}


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects: words that are not in strings, label matchers, ranges or
    grouping lists, not followed by ``(`` (functions, aggregations) and not keywords or numbers."""
    text = _DROPPED.sub(" ", expr)
    out = set()
    for m in _WORD.finditer(text):
        if text[m.end() :].lstrip().startswith("(") or m.group().lower() in _KEYWORDS:
            continue
        out.add(m.group())
    return out


NAME_CASES = [
    (
        'sum by (su, leaf) (hwaac:link_up{fabric="x"}) / sum(hwaac_link_planned)',
        {"hwaac:link_up", "hwaac_link_planned"},
    ),
    ('topk(5, a_b > on (fabric) group_left () c{bound="max"})', {"a_b", "c"}),
    ("time() - x_seconds", {"x_seconds"}),
    ("rate(y_total[5m]) > bool 1e-9", {"y_total"}),
    ('max by (su) (m{rail="0"}) unless on (cable) n', {"m", "n"}),
    ('label_join(up, "a", ",", "b")', {"up"}),
]


@pytest.mark.parametrize(("expr", "names"), NAME_CASES, ids=[c[0][:24] for c in NAME_CASES])
def test_metric_names_of_an_expression(expr: str, names: set[str]) -> None:
    assert metric_names(expr) == names


@cache
def demo_health():
    return assess(plan_of(DEMO), [read_sweep(d) for d in FAULT], default_slos())


@cache
def served_or_recorded() -> frozenset[str]:
    """The exporter's family names (an assessment of the demo samples) and the names the rules files record."""
    served = {m.name for m in families(demo_health())}
    groups = [g for path in RULES for g in yaml.safe_load(path.read_text())["groups"]]
    recorded = {r["record"] for g in groups for r in g["rules"] if "record" in r}
    assert "hwaac_link_planned" in served and "hwaac:link_up" in recorded  # both sources were read
    return frozenset(served | recorded)


@pytest.mark.parametrize("folder", [f for f, _, _ in FABRICS], ids=FABRIC_IDS)
def test_every_metric_is_served_or_recorded(folder: Path) -> None:
    d = model(folder)
    known = served_or_recorded()
    for expr in expressions(d):
        names = metric_names(expr)
        assert names, f"no metric in {expr}"
        assert names <= known, f"{sorted(names - known)} in {expr}: neither exported nor recorded"
    (fabric_var,) = [v for v in d["templating"]["list"] if v["name"] == "fabric"]
    (metric,) = re.findall(r"label_values\((\w+),\s*fabric\)", fabric_var["query"])
    assert metric in known


# the leaves of plane 0, rail 0 (one per SU); the demo samples read the first (tests/fixtures/telemetry/samples/
# README.md), so the other has coverage 0 (a value: unknown is never healthy) and no other SLI
ROW_LEAVES = {"leaf-p0-su01-r0": "1", "leaf-p0-su02-r0": "2"}
SLI_OF_TITLE = dict(
    zip(
        ROW_SLIS[:-1],
        (
            "availability",
            "coverage",
            "loss_ratio",
            "pre_fec_ber",
            "fec_uncorrectable_per_s",
            "pause_ratio",
            "ecn_mark_ratio",
        ),
        strict=True,
    )
)
PROBES = SAMPLES / "probe-loss_derived"


def test_row_queries_give_sli_py_values_per_leaf(promtool: str, tmp_path: Path) -> None:
    """Prometheus evaluates the row's queries over the exporter's series of the demo samples with the shipped rules:
    each SU gets sli.aggregate's values of its leaf (a query that selects nothing, or the wrong series, fails), and
    SLIs sli.py cannot compute have no series."""
    health = demo_health()
    inputs = family_series(families(health), ("hwaac_port_", "hwaac_link_planned", "hwaac_slo_"))
    aggs = {a.key: a for a in health.report.aggregates if a.scope == "leaf" and a.key in ROW_LEAVES}
    (row,) = [ps for t, ps in rows(model(DEMO)) if t == "Plane 0, rail 0"]
    checks, valued = [], 0
    for p in row:
        if p["title"] not in SLI_OF_TITLE:  # probe loss: test_row_probe_loss_is_the_worst_estimate_per_leaf
            continue
        (target,) = p["targets"]
        for leaf, su in ROW_LEAVES.items():
            # the query's series of this leaf only
            expr = (
                f"({concrete(target['expr'], 'demo')}) and on (su, leaf) "
                f'group by (su, leaf) (hwaac_link_planned{{leaf="{leaf}"}})'
            )
            x = aggs[leaf].values[SLI_OF_TITLE[p["title"]]]
            if x is None:
                checks.append(
                    {"expr": f"absent({expr})", "eval_time": "2m", "exp_samples": [{"labels": "{}", "value": 1}]}
                )
                continue
            valued += 1
            checks.append(
                {
                    "expr": f"abs(({expr}) - {x!r}) <= bool {abs(x) * 1e-9!r}",
                    "eval_time": "2m",
                    "exp_samples": [{"labels": f'{{leaf="{leaf}",su="{su}"}}', "value": 1}],
                }
            )
    assert valued >= 4  # availability, coverage and the loss ratio of the sampled leaf, the other's coverage
    promtool_test(tmp_path, promtool, inputs, checks)


def test_row_probe_loss_is_the_worst_estimate_per_leaf(promtool: str, tmp_path: Path) -> None:
    """The rows' probe loss query over the exporter's series of the derived probe samples with the shipped rules:
    each SU of plane 0, rail 0 gets the worst estimate of tomography among its leaf's cables with at least
    probe_min_probes probes; the lossy cable's leaf (su 2) is its 2 %."""
    health = assess(plan_of(DEMO), [read_sweep(PROBES)], default_slos())
    assert health.probes is not None
    least = health.report.slos.localise.probe_min_probes
    leaf_of = {i: lk.b_device if lk.kind == "host" else lk.a_device for i, lk in enumerate(plan_of(DEMO).links)}
    worst: dict[str, float] = {}
    for cables, est in health.probes.estimates.items():
        if est.sent >= least:
            leaf = leaf_of[min(cables)]
            worst[leaf] = max(worst.get(leaf, 0.0), est.estimate)
    assert set(worst) == set(ROW_LEAVES) and 0.01 < worst["leaf-p0-su02-r0"] < 0.03
    inputs = family_series(families(health), ("hwaac_probe_", "hwaac_localise_", "hwaac_slo_"))
    (row,) = [ps for t, ps in rows(model(DEMO)) if t == "Plane 0, rail 0"]
    (target,) = [t for p in row if p["title"] == "Probe loss" for t in p["targets"]]
    checks = [
        {
            "expr": f"abs(({concrete(target['expr'], 'demo')}) - on (leaf) group_left () "
            f'label_replace(vector({v!r}), "leaf", "{leaf}", "", "")) <= bool 1e-12',
            "eval_time": "2m",
            "exp_samples": [{"labels": f'{{leaf="{leaf}",su="{ROW_LEAVES[leaf]}"}}', "value": 1}],
        }
        for leaf, v in worst.items()
    ]
    promtool_test(tmp_path, promtool, inputs, checks)


# ---- thresholds, units, schema, variables


# panel title -> the SLI (the SLO file's key) it shows
TITLE_SLI = {
    "Availability": "availability",
    "Availability per plane": "availability",
    "Coverage": "coverage",
    "Loss ratio": "loss_ratio",
    "Probe loss": "probe_loss_ratio",
    "Probe loss, worst cables": "probe_loss_ratio",
    "Pre-FEC BER": "pre_fec_ber",
    "Uncorrectable FEC": "fec_uncorrectable_per_s",
    "PFC pause": "pause_ratio",
    "ECN marking": "ecn_mark_ratio",
    "BGP session drops per hour": "bgp_drops_per_hour",
    "Path diversity": "path_diversity",
}


@pytest.mark.parametrize("folder", [f for f, _, _ in FABRICS], ids=FABRIC_IDS)
def test_thresholds_are_the_slo_files(folder: Path) -> None:
    slos = yaml.safe_load(SLO_FILE.read_text())["slos"]
    seen = set()
    for p in panels(model(folder)):
        sli = TITLE_SLI.get(p["title"])
        if sli is None:
            continue
        seen.add(sli)
        slo = slos[sli]
        steps = p["fieldConfig"]["defaults"]["thresholds"]["steps"]
        assert steps[0]["value"] is None  # the base step
        assert [s["value"] for s in steps[1:]] == sorted(
            v for k in ("min", "max", "warn") if (v := slo.get(k)) is not None
        ), p["title"]
        color = {s["value"]: s["color"] for s in steps}
        if "max" in slo:  # red from the bound up
            assert color[slo["max"]] == "red" and color[None] != "red"
        else:  # red below the bound
            assert color[None] == "red" and color[slo["min"]] != "red"
        if p["type"] == "timeseries":
            assert "line" in p["fieldConfig"]["defaults"]["custom"]["thresholdsStyle"]["mode"]
    assert seen == set(slos)  # every SLO is drawn somewhere


UNITS = {
    "Availability": "percentunit",
    "Availability per plane": "percentunit",
    "Coverage": "percentunit",
    "PFC pause": "percentunit",
    "ECN marking": "percentunit",
    "Path diversity": "percentunit",
    "Sweep": "s",
    "Suspects": "short",
    "Coverage gaps": "short",
    "BGP session drops per hour": "short",
    "Probe loss": "percentunit",
    "Probe loss, worst cables": "percentunit",
    "Probed flows": "short",
}


def test_units() -> None:
    got = {(p["title"], p["fieldConfig"]["defaults"].get("unit")) for p in panels(model(DEMO))}
    assert set(UNITS.items()) <= got


def test_schema_version_of_grafana_11() -> None:
    # the Grafana 11 line writes 39 (grafana/grafana kinds/dashboard: `schemaVersion: uint16 | *39`) up to 41 (the
    # SDK's 11.6 build); 42, the last of the v1 dashboard API, came after (apps/dashboard/pkg/migration/schemaversion)
    for folder, _, _ in FABRICS:
        assert 39 <= model(folder)["schemaVersion"] <= 41


def test_variables_and_datasources() -> None:
    d = model(DEMO)
    variables = {v["name"]: v for v in d["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    fabric = variables["fabric"]
    assert fabric["type"] == "query" and fabric["current"]["value"] == "demo"
    assert fabric["datasource"]["uid"] == "${datasource}"
    for p in panels(d):
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, p["title"]
        assert all(t["datasource"]["uid"] == "${datasource}" for t in p["targets"])
        assert all('fabric="$fabric"' in t["expr"] for t in p["targets"]), p["title"]
    ids = [p["id"] for p in d["panels"]] + [q["id"] for p in d["panels"] for q in p.get("panels", [])]
    assert len(ids) == len(set(ids))


def test_uid_is_stable_and_fits_grafana() -> None:
    long_a, long_b = "a" * 60 + "-x1", "a" * 60 + "-x2"  # fabric names may have 63 characters
    uids = [dashboard_uid(n) for n in ("demo", "b300-twin-plane", long_a, long_b)]
    assert len(set(uids)) == 4
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,40}", u) for u in uids), uids
    assert model(DEMO)["uid"] == dashboard(plan_of(DEMO))["uid"] == dashboard_uid("demo")
    assert model(TWIN)["uid"] == dashboard_uid("b300-twin-plane")


# ---- the shipped file and the CLI


def test_shipped_demo_dashboard_is_current() -> None:
    now = dashboard_json(plan_of(DEMO))
    shipped = SHIPPED.read_text(encoding="utf-8")
    if shipped != now:
        diff = "".join(
            list(difflib.unified_diff(shipped.splitlines(True), now.splitlines(True), str(SHIPPED), "generated now"))[
                :80
            ]
        )
        pytest.fail(
            f"{SHIPPED.relative_to(ROOT)} is not what the code generates now; run `make dashboards`:\n{diff}",
            pytrace=False,
        )


def test_cli_prints_and_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["health", "dashboard", str(DEMO)]) == 0
    assert json.loads(capsys.readouterr().out) == model(DEMO)
    out = tmp_path / "d.json"
    assert main(["health", "dashboard", str(DEMO), "-o", str(out)]) == 0
    assert out.read_text() == dashboard_json(plan_of(DEMO))
    assert [p.name for p in tmp_path.iterdir()] == ["d.json"]  # no temporary file left


def test_cli_slo_file_moves_the_thresholds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = yaml.safe_load(SLO_FILE.read_text())
    doc["slos"]["loss_ratio"]["max"] = 1e-6
    slo = tmp_path / "slo.yaml"
    slo.write_text(yaml.safe_dump(doc))
    assert main(["health", "dashboard", str(DEMO), "--slo", str(slo)]) == 0
    d = json.loads(capsys.readouterr().out)
    loss = [p for p in panels(d) if p["title"] == "Loss ratio"]
    assert loss and all(p["fieldConfig"]["defaults"]["thresholds"]["steps"][-1]["value"] == 1e-6 for p in loss)
    # a file without an SLI: its panels have no threshold, the others keep theirs
    del doc["slos"]["loss_ratio"]
    slo.write_text(yaml.safe_dump(doc))
    assert main(["health", "dashboard", str(DEMO), "--slo", str(slo)]) == 0
    d = json.loads(capsys.readouterr().out)
    by_title = {p["title"]: p["fieldConfig"]["defaults"] for p in panels(d)}
    assert "thresholds" not in by_title["Loss ratio"] and "thresholds" in by_title["Pre-FEC BER"]


USAGE = [
    ("unwritable output", ["-o", "/nonexistent-dir/d.json"], "-o /nonexistent-dir/d.json"),
    ("missing slo", ["--slo", "/nonexistent-dir/slo.yaml"], "--slo"),
    ("invalid slo", ["--slo", "BAD"], "switch_degraded_share"),
]


@pytest.mark.parametrize(("case", "extra", "words"), USAGE, ids=[c[0] for c in USAGE])
def test_cli_usage_errors_exit_2(
    case: str, extra: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "slo.yaml"
    bad.write_text("version: 1\nslos: {}\nlocalise: {switch_degraded_share: 2}\n")
    extra = [str(bad) if a == "BAD" else a for a in extra]
    assert main(["health", "dashboard", str(DEMO), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hwaac health dashboard:") and words in err
