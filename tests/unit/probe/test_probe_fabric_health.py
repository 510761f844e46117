"""Active probes in a samples folder (``DIR/<host>/probe.json``) reach the fabric report: the tomography's suspect
is ranked with the others, the probes' summary and what they did not cover are reported; a clean sweep has no
suspect; a document that does not read is coverage, not a failure."""

from __future__ import annotations

import json
from pathlib import Path

from hwaac.probe.model import ProbeResults, write_results
from hwaac.telemetry.fabric_health import assess
from hwaac.telemetry.samples import read_sweep
from hwaac.telemetry.slo import default_slos
from tests.unit.probe.synth import between, demo, results

BAD = ("leaf-p0-su02-r5", "spine-p0-07", 3)


def sweep_folder(root: Path, loss: dict[int, float], seed: int = 5) -> Path:
    by_host: dict[str, ProbeResults] = {}
    for r in results(loss, seed):
        by_host.setdefault(r.flow.src_host, ProbeResults(r.flow.src_host, 1.7e9, 1.7e9 + 3)).flows.append(r)
    for host, doc in by_host.items():
        (root / host).mkdir(parents=True)
        write_results(root / host / "probe.json", doc)
    return root


def test_a_lossy_cable_is_the_top_suspect_of_the_report(tmp_path: Path) -> None:
    bad = between(demo(), BAD[0], BAD[1])[BAD[2]]
    folder = sweep_folder(tmp_path / "s1", {bad: 0.02})
    health = assess(demo(), [read_sweep(folder)], default_slos())
    report = health.report
    top = report.suspects[0]
    link = demo().links[bad]
    assert (top.rule, top.components[0].name, top.links) == ("probe_path_loss", link.cable_id, (bad,))
    assert len(report.suspects) == 1 and report.exit_code() == 1
    assert report.probes["flows"] == 8192 and report.probes["suspects"] == 1
    assert not report.coverage["probe_cables_not_crossed"] and not report.coverage["probe_flows_without_a_path"]
    md = report.markdown()
    assert "Active probes" in md and link.cable_id in md and "probe_path_loss" in md
    doc = report.to_dict()
    assert doc["probes"]["cables_planned"] == len(demo().links) and doc["suspects"][0]["rule"] == "probe_path_loss"
    assert set(top.nodes) & {f"gpu-su02-h{n:02d}" for n in range(1, 33)}  # the leaf's hosts whose probes crossed it


def test_clean_probes_and_an_unreadable_document(tmp_path: Path) -> None:
    folder = sweep_folder(tmp_path / "s1", {})
    (folder / "gpu-su01-h01" / "probe.json").write_text(json.dumps({"format": "hwaac-probe/1"})[:-3])
    report = assess(demo(), [read_sweep(folder)], default_slos()).report
    assert not report.suspects
    # probes only, no switch or NIC counters: no link's state is known, so coverage (not a suspect) warns
    assert report.exit_code() == 4 and {a.scope for a in report.coverage_short} >= {"fabric"}
    assert any("not JSON" in u for u in report.coverage["probe_results_not_read"])
    assert report.probes["flows"] == 8192 - 128  # that host's flows are missing, the others judged


def test_without_probes_the_report_has_no_probe_section(tmp_path: Path) -> None:
    (tmp_path / "s1" / "leaf-p0-su01-r0").mkdir(parents=True)
    report = assess(demo(), [read_sweep(tmp_path / "s1")], default_slos()).report
    assert report.probes == {} and "probe_flows_without_a_path" not in report.coverage
    assert "Active probes" not in report.markdown()


def test_another_nodes_results_in_a_nodes_folder_are_not_judged(tmp_path: Path) -> None:
    """A copy of one node's results under another node's folder would count its flows twice: it is skipped, named,
    and the node's own flows are missing (not taken from the copy)."""
    folder = sweep_folder(tmp_path / "s1", {})
    (folder / "gpu-su01-h02" / "probe.json").write_text((folder / "gpu-su01-h01" / "probe.json").read_text())
    sweep = read_sweep(folder)
    assert "gpu-su01-h02" not in sweep.probes and sweep.probes["gpu-su01-h01"].host == "gpu-su01-h01"
    (skipped,) = sweep.skipped
    assert "gpu-su01-h02" in skipped and "the probe results of gpu-su01-h01, not of gpu-su01-h02" in skipped
    report = assess(demo(), [sweep], default_slos()).report
    assert report.probes["flows"] == 8192 - 128 and skipped in report.coverage["files_skipped"]
