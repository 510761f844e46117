"""Role aiinfra.hwaac.network_health and playbooks/network_health.yml (its argument spec and the playbook's syntax:
test_role_argument_specs.py): the role run on localhost against the fake switch tools gathers two sweeps and writes
the report in its output folder only; with network_health_probes a GPU node's latest probe results reach the report,
and a node without them is not read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from hwaac.probe.model import ProbeResults, write_results
from tests.unit.probe.synth import results

REPO = Path(__file__).resolve().parents[3]
ROLE = REPO / "roles" / "network_health"
BIN = Path(sys.executable).parent


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    return {**base, "PATH": f"{REPO / 'tests/fakes/bin'}{os.pathsep}{BIN}{os.pathsep}{base['PATH']}", **extra}


def test_the_role_on_a_fake_switch_reports_the_port_with_errors(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "telemetry.json").write_text(
        json.dumps({"add_per_call": {"Ethernet0": {"SAI_PORT_STAT_IF_IN_ERRORS": 100000}}})
    )
    (tmp_path / "hosts.yml").write_text(
        yaml.safe_dump(
            {
                "all": {
                    "hosts": {
                        "leaf-p0-su01-r0": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
                    }
                }
            }
        )
    )
    out = tmp_path / "out"
    r = subprocess.run(
        [
            str(BIN / "ansible-playbook"),
            "-i",
            str(tmp_path / "hosts.yml"),
            str(REPO / "playbooks" / "network_health.yml"),
            "-e",
            "network_health_hosts=all",
            "-e",
            "network_health_become=false",
            "-e",
            "network_health_interval=1",
            "-e",
            json.dumps(
                {
                    "network_health_tools": ["counters-db"],
                    "network_health_intent": str(REPO / "inventory/demo"),
                    "network_health_output_dir": str(out),
                }
            ),
        ],
        cwd=REPO,
        env=env(HWAAC_FAKE_STATE=str(state), PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 2, r.stdout[-4000:] + r.stderr  # the fault fails the play (fail_on: fault)
    assert sorted(p.name for p in out.iterdir()) == ["network-health.json", "network-health.md"]
    report = json.loads((out / "network-health.json").read_text())
    assert report["status"] == "fault"
    named = {(c["device"], c["port"]) for s in report["suspects"] for c in s["components"]}
    assert ("leaf-p0-su01-r0", "Ethernet0") in named
    assert (state / "telemetry_calls").read_text() == "2"


def run_role_on_node(tmp_path: Path, node: str, **extra: Any) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The playbook on localhost as GPU node ``node`` (group gpu_nodes), its ethtool the fake's, the demo's golden
    render as network_health_render_dir."""
    (tmp_path / "hosts.yml").write_text(
        yaml.safe_dump(
            {
                "all": {
                    "children": {
                        "gpu_nodes": {
                            "hosts": {
                                node: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
                            }
                        }
                    }
                }
            }
        )
    )
    out = tmp_path / "out"
    r = subprocess.run(
        [
            str(BIN / "ansible-playbook"),
            "-i",
            str(tmp_path / "hosts.yml"),
            str(REPO / "playbooks" / "network_health.yml"),
            "-e",
            "network_health_hosts=all",
            "-e",
            "network_health_become=false",
            "-e",
            "network_health_interval=0",
            "-e",
            json.dumps(
                {
                    "network_health_tools": ["ethtool"],
                    "network_health_fail_on": "never",
                    "network_health_render_dir": str(REPO / "tests/golden/demo"),
                    "network_health_intent": str(REPO / "inventory/demo"),
                    "network_health_output_dir": str(out),
                    **extra,
                }
            ),
        ],
        cwd=REPO,
        env=env(HWAAC_FAKE_STATE=str(tmp_path), PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    return r, out


def test_a_node_reads_the_rails_of_its_own_rendered_nic_roce(tmp_path: Path) -> None:
    r, out = run_role_on_node(tmp_path, "gpu-su01-h01")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr
    report = json.loads((out / "network-health.json").read_text())
    missing = set(report["coverage"]["planned_ports_not_sampled"])
    # inventory/demo: 8 rails named rail0..rail7; every one of them was read on this node, none elsewhere
    assert not {f"gpu-su01-h01 rail{r}" for r in range(8)} & missing
    assert "gpu-su01-h02" in report["coverage"]["devices_not_sampled"]


def test_a_node_without_its_rendered_file_fails_naming_it_and_the_path(tmp_path: Path) -> None:
    r, _ = run_role_on_node(tmp_path, "gpu-su01-h02")  # the golden render holds gpu-su01-h01 only
    assert r.returncode != 0
    path = REPO / "tests/golden/demo/hosts/gpu-su01-h02/nic-roce.json"
    assert f"gpu-su01-h02: {path}: no such file" in r.stdout, r.stdout[-4000:]


def test_with_probes_a_nodes_latest_results_reach_the_report(tmp_path: Path) -> None:
    now = time.time()
    doc = ProbeResults(
        "gpu-su01-h01", now - 30, now - 10, [r for r in results({}, seed=1) if r.flow.src_host == "gpu-su01-h01"]
    )
    write_results(tmp_path / "latest.json", doc)
    r, out = run_role_on_node(
        tmp_path, "gpu-su01-h01", network_health_probes=True, network_health_probe_file=str(tmp_path / "latest.json")
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr
    report = json.loads((out / "network-health.json").read_text())
    assert report["probes"]["flows"] == len(doc.flows) == 128
    assert report["coverage"]["probe_results_not_read"] == [] and report["suspects"] == []
    assert "Active probes" in (out / "network-health.md").read_text()


def test_with_probes_a_node_without_the_prober_is_not_read(tmp_path: Path) -> None:
    r, out = run_role_on_node(
        tmp_path, "gpu-su01-h01", network_health_probes=True, network_health_probe_file=str(tmp_path / "none.json")
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr
    report = json.loads((out / "network-health.json").read_text())
    (line,) = [f for f in report["coverage"]["files_skipped"] if " probe: " in f]
    assert line.startswith("network_health_sweep2 gpu-su01-h01 probe: not read, exit 1") and "network_probe" in line
    assert not report["probes"]  # no results: no probe section, and nothing judged healthy
