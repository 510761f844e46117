"""The exporter's text exposition for the demo samples (read back with prometheus_client's parser), and the rules
in files/prometheus/ under the real promtool: syntax, one alert per localisation rule, SLIs equal to sli.py's."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from hwaac.cli import main
from hwaac.plan import build_plan
from hwaac.telemetry.exporter import families, metric_name
from hwaac.telemetry.fabric_health import FabricHealth, assess
from hwaac.telemetry.model import PortSample, Snapshot
from hwaac.telemetry.samples import Sweep, read_sweep
from hwaac.telemetry.sli import Aggregate
from hwaac.telemetry.slo import default_slos
from hwaac.telemetry.topology import LinkIndex
from hwaac.validate import load_intent
from tests.unit.telemetry.promql import PROMETHEUS, promtool_test, series

ROOT = Path(__file__).parents[3]
DEMO = ROOT / "inventory" / "demo"
SAMPLES = ROOT / "tests" / "fixtures" / "telemetry" / "samples"
FAULT = [str(SAMPLES / "cable-fault" / "sweep1"), str(SAMPLES / "cable-fault" / "sweep2")]
CLEAN = [FAULT[0], str(SAMPLES / "clean" / "sweep2")]
UNIT_TESTS = sorted((ROOT / "tests" / "prometheus").glob("*.test.yml"))


def exposition(sweeps: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, list]:
    args = ["health", "exporter", str(DEMO), "--once"]
    for s in sweeps:
        args += ["--samples", s]
    assert main(args) == 0
    return {f.name: f.samples for f in text_string_to_metric_families(capsys.readouterr().out)}


def value(fams: dict[str, list], name: str, **labels: str) -> float:
    (s,) = [s for s in fams[name] if all(s.labels.get(k) == v for k, v in labels.items())]
    return s.value


# the README of the samples: 60 s apart, 60,000,000 more frames on every port, RX_ERR +50 at leaf-p0-su01-r0
# Ethernet128 and +30 at spine-p0-01 Ethernet0, the two ends of cable L0000000
LEAF_END = {
    "device": "leaf-p0-su01-r0",
    "port": "Ethernet128",
    "peer_device": "spine-p0-01",
    "peer_port": "Ethernet0",
    "cable": "L0000000",
    "end": "a",
    "link_kind": "leaf_spine",
    "leaf": "leaf-p0-su01-r0",
    "spine": "spine-p0-01",
    "plane": "0",
    "rail": "0",
    "su": "1",
    "fabric": "demo",
    "node": "",
}
SPINE_END = {
    **LEAF_END,
    "device": "spine-p0-01",
    "port": "Ethernet0",
    "peer_device": "leaf-p0-su01-r0",
    "peer_port": "Ethernet128",
    "end": "b",
}
PORT_CASES = [
    ("hwaac_port_rx_err_per_second", LEAF_END, 50 / 60),
    ("hwaac_port_rx_err_per_second", SPINE_END, 30 / 60),
    ("hwaac_port_rx_ok_per_second", LEAF_END, 1_000_000.0),
    ("hwaac_port_rx_drop_per_second", SPINE_END, 0.0),
    ("hwaac_port_oper_up", LEAF_END, 1.0),
    (
        "hwaac_sli_loss_ratio",
        {"scope": "link", "cable": "L0000000", "leaf": "leaf-p0-su01-r0"},
        (50 + 30) / (2 * 60_000_000 + 50 + 30),
    ),
    ("hwaac_slo_loss_ratio", {"bound": "max"}, 7.4e-8),
    ("hwaac_slo_pre_fec_ber", {"bound": "warn"}, 2.4e-5),
    (
        "hwaac_suspect",
        {
            "rule": "errors_both_ends",
            "kind": "cable",
            "component": "L0000000",
            "cable": "L0000000",
            "severity": "fault",
        },
        1.0,
    ),
    ("hwaac_fabric_rate_interval_seconds", {"fabric": "demo"}, 60.0),
    ("hwaac_fabric_sweep_timestamp_seconds", {"fabric": "demo"}, 1_700_000_060.0),  # sweep2/taken_at
    # links of known state: the leaf's 4 sampled ports and spine-p0-01 Ethernet4 (Ethernet0 is the same cable as
    # the leaf's Ethernet128): 5 of the demo's 1024 planned links
    ("hwaac_sli_coverage", {"scope": "fabric"}, 5 / 1024),
    ("hwaac_scope_links", {"scope": "fabric", "state": "unknown"}, 1024 - 5),
    ("hwaac_scope_links", {"scope": "fabric", "state": "up"}, 5),
    ("hwaac_sli_availability", {"scope": "fabric"}, 1.0),
    ("hwaac_slo_coverage", {"bound": "min"}, 0.99),
]


@pytest.mark.parametrize(
    ("name", "labels", "expected"),
    PORT_CASES,
    ids=[f"{n}-{lab.get('device', lab.get('rule', lab.get('state', '')))}" for n, lab, _ in PORT_CASES],
)
def test_exporter_names_labels_values(
    name: str, labels: dict[str, str], expected: float, capsys: pytest.CaptureFixture[str]
) -> None:
    fams = exposition(FAULT, capsys)
    assert value(fams, name, **labels) == pytest.approx(expected, rel=1e-12)


def test_sweep_timestamp_without_taken_at_is_the_newest_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sweep folder without taken_at is as old as its newest file: the stale-sweep alert needs a time."""
    sweep = tmp_path / "sweep2"
    shutil.copytree(SAMPLES / "clean" / "sweep2", sweep)
    (sweep / "taken_at").unlink()
    for n, f in enumerate(sorted(sweep.glob("*/*"))):
        os.utime(f, (1_800_000_000 + n, 1_800_000_000 + n))
    newest = 1_800_000_000 + len(list(sweep.glob("*/*"))) - 1
    fams = exposition([str(sweep)], capsys)
    assert value(fams, "hwaac_fabric_sweep_timestamp_seconds", fabric="demo") == newest


def test_exporter_every_planned_link_once_and_clean_has_no_suspect(capsys: pytest.CaptureFixture[str]) -> None:
    plan = build_plan(load_intent(DEMO))
    fams = exposition(CLEAN, capsys)
    assert len(fams["hwaac_link_planned"]) == len(plan.links)
    assert len({s.labels["cable"] for s in fams["hwaac_link_planned"]}) == len(plan.links)
    assert fams["hwaac_suspect"] == []
    # 2 devices sampled: 4 leaf ends, 2 spine ends, one series each per rate
    assert len(fams["hwaac_port_rx_err_per_second"]) == 6


RULE_FILES = sorted(PROMETHEUS.glob("*.rules.yml"))


@pytest.mark.parametrize("path", RULE_FILES, ids=[p.name for p in RULE_FILES])
def test_promtool_check_rules(promtool: str, path: Path) -> None:
    r = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("path", UNIT_TESTS, ids=[p.name for p in UNIT_TESTS])
def test_promtool_unit_tests(path: Path, promtool: str) -> None:
    r = subprocess.run(
        [promtool, "test", "rules", str(path)], capture_output=True, text=True, check=False, cwd=path.parent
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_alert_test_series_are_exporter_series(capsys: pytest.CaptureFixture[str]) -> None:
    """Every input series of the alert tests is a family the exporter emits, with labels the family has."""
    from hwaac.telemetry.exporter import LINK_LABELS, PORT_LABELS, SUSPECT_LABELS
    from hwaac.telemetry.exporter_probe import PARALLEL_LABELS

    fams = exposition(FAULT, capsys)
    own = {
        "hwaac_link_planned": LINK_LABELS,
        "hwaac_suspect": SUSPECT_LABELS,
        "hwaac_leaf_route_min_ecmp": ("fabric", "leaf"),
        "hwaac_leaf_uplinks_planned": ("fabric", "leaf"),
        "hwaac_bgp_peer_dropped_per_second": ("fabric", "leaf", "peer", "cable"),
        "hwaac_probe_link_loss_ratio": LINK_LABELS,
        "hwaac_probe_link_probes_sent": LINK_LABELS,
        "hwaac_probe_parallel_loss_ratio": PARALLEL_LABELS,
        "hwaac_probe_parallel_probes_sent": PARALLEL_LABELS,
        "hwaac_probe_flows": ("fabric", "state"),
    }
    for path in UNIT_TESTS:
        for test in yaml.safe_load(path.read_text())["tests"]:
            for s in test["input_series"]:
                name, _, rest = s["series"].partition("{")
                labels = {kv.split("=", 1)[0] for kv in rest.rstrip("}").split('",') if kv}
                assert name in fams, f"{path.name}: {name} is not an exporter family"
                allowed = PORT_LABELS if name.startswith("hwaac_port_") else own.get(name, ("fabric", "bound"))
                assert labels <= set(allowed), f"{path.name}: {name} has labels {labels - set(allowed)}"


SCOPE_KEYS = ("leaf", "rail", "su", "plane", "fabric")  # the spine scope: test_spine_recording_rules_equal_sli_py
RECORDED = (
    "availability",
    "coverage",
    "loss_ratio",
    "pre_fec_ber",
    "fec_uncorrectable_per_s",
    "pause_ratio",
    "ecn_mark_ratio",
)


def _sli_checks(health: FabricHealth, keep: Callable[[Aggregate], bool]) -> list[dict]:
    """promtool expression tests: each kept aggregate's recorded SLIs and unknown links equal sli.aggregate's."""
    fabric = health.report.fabric
    checks = []
    for a in health.report.aggregates:
        if not keep(a):
            continue
        key = {"fabric": fabric} | ({} if a.scope == "fabric" else {a.scope: a.key})
        sel = ",".join(f'{k}="{v}"' for k, v in key.items())
        unknown = a.inputs["coverage"]["unknown"]  # type: ignore[index]
        checks.append(
            {
                "expr": f"hwaac:links_unknown:{a.scope}{{{sel}}}",
                "eval_time": "2m",
                "exp_samples": [{"labels": f"hwaac:links_unknown:{a.scope}{{{sel}}}", "value": unknown}],
            }
        )
        for n in RECORDED:
            x = a.values.get(n)
            expr = f"hwaac:sli_{metric_name(n)}:{a.scope}{{{sel}}}"
            if x is None:  # sli.py has no value: neither may the rule
                checks.append(
                    {
                        "expr": f"absent({expr})",
                        "eval_time": "2m",
                        "exp_samples": [{"labels": "{" + sel + "}", "value": 1}],
                    }
                )
                continue
            checks.append(
                {
                    "expr": f"abs({expr} - {x!r}) <= bool {abs(x) * 1e-9!r}",
                    "eval_time": "2m",
                    "exp_samples": [{"labels": "{" + sel + "}", "value": 1}],
                }
            )
    return checks


def test_recording_rules_equal_sli_py(tmp_path: Path, promtool: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The recording rules over the exporter's per-port series give sli.aggregate's values, scope by scope."""
    fams = exposition(FAULT, capsys)
    inputs = [
        series(name, s.labels, s.value)
        for name, samples in fams.items()
        if name.startswith(("hwaac_port_", "hwaac_link_planned", "hwaac_slo_"))
        for s in samples
    ]
    health = assess(build_plan(load_intent(DEMO)), [read_sweep(d) for d in FAULT], default_slos())
    checks = _sli_checks(health, lambda a: a.scope in SCOPE_KEYS)
    valued = [c for c in checks if not c["expr"].startswith("absent")]
    assert len(valued) >= 5 * 3  # availability, coverage, loss ratio at least, for a leaf, rail, su, plane, fabric
    promtool_test(tmp_path, promtool, inputs, checks)


TIER3 = ROOT / "inventory" / "examples" / "b200-3tier"


def _three_tier() -> tuple[FabricHealth, list[str], int]:
    """The 3-tier example with two sweeps 10 s apart: spine A's uplinks (to the super spines) all read at the spine
    end, 1000 frames/s each, 6 errors/s on the first, the second oper down; spine B's first uplink read at its super
    spine end only; spine C not read. Returns the assessment, [A, B, C] and the uplinks per spine."""
    plan = build_plan(load_intent(TIER3))
    up: dict[str, list[tuple[str, str, str]]] = {}
    for link in plan.links:
        if link.kind == "spine_super_spine":
            up.setdefault(link.a_device, []).append((link.a_port, link.b_device, link.b_port))
    a, b, c = sorted(up)[:3]
    sweeps = []
    for n, t in enumerate((0.0, 10.0)):
        spine = Snapshot("portstat", a)
        for i, (port, _, _) in enumerate(up[a]):
            spine.ports[port] = PortSample(
                port,
                {"rx_ok": 10_000 * n, "rx_err": 60 * n if i == 0 else 0, "rx_drop": 0},
                state={"oper": "down" if i == 1 else "up"},
            )
        _, far, far_port = up[b][0]
        top = Snapshot("portstat", far)
        top.ports[far_port] = PortSample(
            far_port, {"rx_ok": 10_000 * n, "rx_err": 0, "rx_drop": 0}, state={"oper": "up"}
        )
        sweeps.append(Sweep(Path(f"sweep{n + 1}"), t, {(a, "portstat"): (spine, t), (far, "portstat"): (top, t)}))
    return assess(plan, sweeps, default_slos()), [a, b, c], len(up[a])


def test_spine_recording_rules_equal_sli_py(tmp_path: Path, promtool: str) -> None:
    """The spine scope (spine-to-super-spine links, as sli.aggregate owns them) recorded as sli.py computes it,
    with availability over the known links and coverage of the planned ones."""
    health, spines, n = _three_tier()
    by = {(a.scope, a.key): a for a in health.report.aggregates}
    sa, sb, sc = (by[("spine", s)] for s in spines)
    # independent of sli.py: A knows all n uplinks, one down; B knows 1 of n, up; C none
    assert (sa.values["availability"], sa.values["coverage"]) == (pytest.approx((n - 1) / n), 1.0)
    assert (sb.values["availability"], sb.values["coverage"]) == (1.0, pytest.approx(1 / n))
    assert (sc.values["availability"], sc.values["coverage"]) == (None, 0.0)
    assert sa.values["loss_ratio"] == pytest.approx(6 / ((n - 1) * 1000 + 1006))
    inputs = []
    for fam in families(health):
        if not fam.name.startswith(("hwaac_port_", "hwaac_link_planned", "hwaac_slo_")):
            continue
        for smp in fam.samples:  # the spines' uplinks only: 12,288 planned links are more than the test needs
            lab = smp.labels
            if "bound" in lab or (lab.get("link_kind") == "spine_super_spine" and lab.get("spine") in spines):
                inputs.append(series(smp.name, lab, smp.value))
    checks = _sli_checks(health, lambda a: a.scope == "spine" and a.key in spines)
    assert len(checks) == 3 * (len(RECORDED) + 1)
    promtool_test(tmp_path, promtool, inputs, checks)


PROBES = SAMPLES / "probe-loss_derived"
PROBE_SCOPES = ("leaf", "rail", "su", "plane", "fabric")


def test_probe_rules_on_the_probe_samples(tmp_path: Path, promtool: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The exporter's series of the derived probe samples under the shipped rules: HwaacProbePathLoss fires on the
    cable tomography named and on none of the others above the SLO (they share its flows), and the recorded worst
    probe loss per scope is the worst estimate of a cable there with at least probe_min_probes probes."""
    fams = exposition([str(PROBES)], capsys)
    inputs = [
        {"series": series(name, s.labels, s.value)["series"], "values": f"{s.value!r}+0x15"}
        for name, samples in fams.items()
        for s in samples
        if name.startswith(("hwaac_probe_", "hwaac_slo_", "hwaac_localise_")) or name == "hwaac_suspect"
    ]
    plan = build_plan(load_intent(DEMO))
    health = assess(plan, [read_sweep(PROBES)], default_slos())
    assert health.probes is not None
    slos = health.report.slos
    slo, least = slos.slos["probe_loss_ratio"].max, slos.localise.probe_min_probes
    index = LinkIndex(plan)
    named = [index.labels(s.links[0]) for s in health.report.suspects if s.rule == "probe_path_loss"]
    assert len(named) == 1
    above = [c for c, e in health.probes.estimates.items() if e.sent >= least and e.estimate > slo]
    assert len(above) > 1  # cables sharing the named one's flows are above the SLO too: they must not fire
    alerts = []
    for lab in named:
        labels = {
            "alertname": "HwaacProbePathLoss",
            "alertstate": "firing",
            "fabric": "demo",
            "link_kind": lab.pop("kind"),
            **{k: str(v) for k, v in lab.items() if k != "hca" and v != ""},
            "severity": "fault",
            "rule": "probe_path_loss",
            "component": "cable",
        }
        alerts.append({"labels": "ALERTS{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}", "value": 1})
    checks: list[dict] = [
        {
            "expr": 'ALERTS{alertname="HwaacProbePathLoss",alertstate="firing"}',
            "eval_time": "10m",
            "exp_samples": alerts,
        }
    ]
    worst: dict[tuple[str, str], float] = {}
    for cables, est in health.probes.estimates.items():
        if est.sent < least:
            continue
        lab = index.labels(min(cables))
        for scope in PROBE_SCOPES:
            key = (scope, "demo" if scope == "fabric" else str(lab[scope]))
            worst[key] = max(worst.get(key, 0.0), est.estimate)
    assert len(worst) == 2 + 1 + 2 + 1 + 1  # rail 0's two leaves, rail 0, two SUs, plane 0, the fabric
    for (scope, key), v in worst.items():
        sel = f'fabric="demo",{scope}="{key}"' if scope != "fabric" else 'fabric="demo"'
        checks.append(
            {
                "expr": f"abs(hwaac:sli_probe_loss_ratio:{scope}{{{sel}}} - {v!r}) <= bool 1e-12",
                "eval_time": "10m",
                "exp_samples": [{"labels": "{" + sel + "}", "value": 1}],
            }
        )
    promtool_test(tmp_path, promtool, inputs, checks)
