"""``hwaac deploy fabric_deploy`` against the demo's shared twin (the ``demo_twin`` fixture: FRR in namespaces,
SONiC's config tools per switch): the inventory ``hwaac lab deploy`` writes for it, the twin's own render pushed
to two spines and two leaves in two batches (the whole twin takes five times as long and shows nothing more). The
twin already runs that render, so the run changes nothing (changed=0 in the summary, every running config as
before) and leaves the twin as it found it for the next module of group ``lab`` (the file's name puts it among the
other twin modules, after test_lab*.py, whose own labs must not meet an idle twin).
Needs root, frr, lldpd and the SONiC toolkit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hwaac.lab import Lab
from hwaac.lab.deploy import batches, gate_shares, inventory
from hwaac.lab.factory import prepare

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("lab")]

REPO = Path(__file__).resolve().parents[2]
HWAAC = Path(sys.executable).with_name("hwaac")
PUSH = "Push SONiC config_db in batches, with rollback and a BGP health gate"
SWITCHES = ["spine-p0-01", "spine-p0-02", "leaf-p0-su01-r0", "leaf-p0-su01-r1"]


def test_fabric_deploy_of_the_twins_render_changes_nothing(demo_twin: Lab, sonic_toolkit: Any, tmp_path: Path) -> None:
    lab = demo_twin
    render = Path(lab.render_dir)
    switches = prepare(lab)  # the switches' sonic-cfggen and config, as hwaac lab deploy gives them
    before = {n: sw.state.running() for n, sw in switches.items()}
    desired = {n: json.loads((render / "switches" / n / "config_db.json").read_text()) for n in lab.switches}
    order = batches(lab, "100%")  # spines, then leaves: the inventory's host order
    shares = gate_shares(lab, order, desired, before)
    inv = tmp_path / "inventory.json"
    inv.write_text(json.dumps(inventory(lab, render, {n: shares[n] for b in order for n in b}, gate_s=10)))
    env = {**os.environ, "HWAAC_SONIC_TOOLKIT": str(sonic_toolkit.home)}
    r = subprocess.run(
        [
            str(HWAAC),
            "deploy",
            "fabric_deploy",
            "-i",
            str(inv),
            "--limit",
            ",".join(SWITCHES),
            "--batch-size",
            "2",
            "--artifacts",
            str(tmp_path / "artifacts"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    s = json.loads((tmp_path / "artifacts" / "summary.json").read_text())
    assert [(b["play"], b["batch"], b["of"], b["hosts"]) for b in s["batches"]] == [
        (PUSH, 1, 2, SWITCHES[:2]),
        (PUSH, 2, 2, SWITCHES[2:]),
    ]
    assert (s["status"], s["changed"], s["failed_hosts"], s["unreachable_hosts"]) == ("successful", 0, [], [])
    assert {h: (c["ok"], c["changed"]) for h, c in s["hosts"].items()} == {n: (3, 0) for n in SWITCHES}
    assert {n: sw.state.running() for n, sw in switches.items()} == before
