"""aiinfra.hwaac.network_health with the active prober's results (tool ``probe`` of network_telemetry): every GPU
node's latest results document of a demo sweep with one lossy cable (built from the plan by tests/unit/probe/synth.py,
not by the code under test), as registered results, name that cable; what the real host module returns for a missing,
cut or old results file is not judged and says why."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from hwaac.probe.model import ProbeResults, results_document, write_results
from tests.unit.ansible.fake_host import fake_env
from tests.unit.ansible.module_run import run_module
from tests.unit.ansible.test_network_health_action import run_action
from tests.unit.probe.synth import between, demo, results

BAD = ("leaf-p0-su02-r5", "spine-p0-07", 3)  # the 4th parallel cable between this leaf and spine loses 2 %


def documents(loss: dict[int, float], ended: float) -> dict[str, ProbeResults]:
    """Per GPU node, its results document of one sweep of the demo pinglist with ``loss`` per cable index."""
    docs: dict[str, ProbeResults] = {}
    for r in results(loss, seed=5):
        docs.setdefault(r.flow.src_host, ProbeResults(r.flow.src_host, ended - 20, ended)).flows.append(r)
    return docs


def registered(docs: dict[str, ProbeResults], read_at: float) -> dict[str, dict[str, Any]]:
    """What network_telemetry with ``probes: true`` registers on each node: the file's text, read at ``read_at``."""
    import json

    return {
        host: {
            "changed": False,
            "device": host,
            "taken_at": read_at,
            "outputs": {
                "probe": {
                    "argv": ["cat", "--", "/var/lib/hwaac/probe/latest.json"],
                    "rc": 0,
                    "stdout": json.dumps(results_document(doc), indent=1) + "\n",
                    "stderr": "",
                    "taken_at": read_at,
                    "seconds": 0.01,
                    "timed_out": False,
                    "truncated": False,
                }
            },
        }
        for host, doc in docs.items()
    }


def module_result(tmp: Path, host: str, probe_file: Path, **args: Any) -> dict[str, Any]:
    """The real host module on this machine reading ``probe_file`` as node ``host``."""
    env = fake_env(tmp, bins=())
    return run_module(
        "network_telemetry",
        {"kind": "host", "tools": [], "probes": True, "device": host, "probe_file": str(probe_file), **args},
        tmp / f"args-{host}.json",
        env,
    )


def test_probes_of_a_lossy_cable_name_it(tmp_path: Path) -> None:
    bad = between(demo(), BAD[0], BAD[1])[BAD[2]]
    now = time.time()
    sweep = registered(documents({bad: 0.02}, now - 60), now)
    # one node's entry as the real module returns it, from the file the agent's writer leaves
    write_results(tmp_path / "latest.json", documents({bad: 0.02}, now - 60)["gpu-su02-h07"])
    sweep["gpu-su02-h07"] = module_result(tmp_path, "gpu-su02-h07", tmp_path / "latest.json")
    res = run_action({"sweeps": [sweep], "output_dir": str(tmp_path / "out"), "fail_on": "never"})
    report = res["report"]
    top = report["suspects"][0]
    assert (top["rule"], top["components"][0]["name"]) == ("probe_path_loss", demo().links[bad].cable_id)
    assert report["probes"]["flows"] == 8192 and report["coverage"]["probe_results_not_read"] == []
    assert demo().links[bad].cable_id in res["msg"]
    assert "Active probes" in (tmp_path / "out" / "network-health.md").read_text()


def test_clean_probes_have_no_suspect(tmp_path: Path) -> None:
    now = time.time()
    res = run_action(
        {"sweeps": [registered(documents({}, now - 60), now)], "output_dir": str(tmp_path), "fail_on": "never"}
    )
    assert res["report"]["suspects"] == [] and res["report"]["probes"]["flows"] == 8192


def test_a_missing_results_file_is_not_read_with_the_reason(tmp_path: Path) -> None:
    now = time.time()
    sweep = registered(documents({}, now - 60), now)
    sweep["gpu-su01-h01"] = module_result(tmp_path, "gpu-su01-h01", tmp_path / "none.json")
    report = run_action({"sweeps": [sweep], "output_dir": str(tmp_path / "out"), "fail_on": "never"})["report"]
    (line,) = [s for s in report["coverage"]["files_skipped"] if "gpu-su01-h01" in s]
    assert line.startswith("sweep 1 gpu-su01-h01 probe: not read, exit 1: cat: ") and "No such file" in line
    assert "aiinfra.hwaac.network_probe" in line and "hwaac-probe-send.timer" in line
    assert report["probes"]["flows"] == 8192 - 128  # that node's flows are missing, none counted clean


@pytest.mark.parametrize(
    ("change", "module_args", "why"),
    [
        ("cut", {}, "not JSON"),
        ("old", {}, "not judged, its run ended"),
        ("over the cap", {"max_output": 1000}, "output cut at the task's max_output"),
    ],
    ids=["cut file", "old results", "over max_output"],
)
def test_an_incomplete_or_old_document_is_not_judged(tmp_path: Path, change: str, module_args: dict, why: str) -> None:
    bad = between(demo(), BAD[0], BAD[1])[BAD[2]]
    now = time.time()
    docs = documents({bad: 0.02}, now - 60)
    sweep = registered(docs, now)
    host = "gpu-su02-h07"  # one of the leaf's nodes whose flows cross the lossy cable
    agent_file = tmp_path / "latest.json"
    if change == "old":  # the agent stopped an hour ago: its last results are still there
        docs[host].started, docs[host].ended = now - 3620, now - 3600
    write_results(agent_file, docs[host])
    if change == "cut":
        agent_file.write_text(agent_file.read_text()[:5000])
    sweep[host] = module_result(tmp_path, host, agent_file, **module_args)
    report = run_action({"sweeps": [sweep], "output_dir": str(tmp_path / "out"), "fail_on": "never"})["report"]
    not_read = report["coverage"]["probe_results_not_read"] + report["coverage"]["files_skipped"]
    assert [w for w in not_read if host in w and why in w], not_read
    assert report["probes"]["flows"] == 8192 - 128
    assert report["suspects"][0]["rule"] == "probe_path_loss"  # the other nodes' probes still name the cable
