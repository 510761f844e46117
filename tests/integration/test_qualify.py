"""``hwaac qualify`` and playbooks/qualify.yml against a real NetBox: an SU whose nodes all passed burn-in is admitted
(dry run first, then enforced); one blocker keeps the whole SU out and nothing moves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pynetbox
import pytest

from hwaac.devnetbox.instances import Instance
from hwaac.health.lifecycle import State
from hwaac.health.report import node_report
from hwaac.netbox.lifecycle import TransitionRequest, apply_transitions
from hwaac.netbox.sync.client import Client
from hwaac.plan import build_plan
from hwaac.validate import load_intent

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INTENT = REPO / "tests/fixtures/intents/valid/burn-in.yml"
PLAN = build_plan(load_intent(INTENT))
NODES = sorted(n.name for n in PLAN.nodes)
BIN = Path(sys.executable).parent
PASS_STAGES = {s: {"status": "PASS", "findings": []} for s in ("quick", "dcgm", "single_node", "ib_pairwise")}


def write_reports(folder: Path, failing: dict[str, list[dict]] | None = None, su_status: str = "PASS") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n in NODES:
        stages = dict(PASS_STAGES)
        if failing and n in failing:
            stages["ib_pairwise"] = {"status": "FAIL", "findings": failing[n]}
        (folder / f"{n}.burn-in.json").write_text(json.dumps(node_report(n, "hgx-h200-8x400g", stages)))
    (folder / "su01.nccl-multi.json").write_text(
        json.dumps({"su": 1, "hosts": NODES, "status": su_status, "codes": [], "findings": []})
    )


def states(api: pynetbox.api) -> dict[str, str]:
    return {d.name: d.custom_fields.get("hwaac_lifecycle") for d in api.dcim.devices.filter(name=NODES)}


def run(nb: Instance, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "NETBOX_URL": nb.url,
        "NETBOX_TOKEN": nb.token,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    }
    r = subprocess.run(list(argv), cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert nb.token not in r.stdout + r.stderr
    return r


@pytest.fixture
def nb(synced_nb: Instance) -> Instance:
    """This module's NetBox: the burn-in fabric already synced."""
    return synced_nb


@pytest.fixture
def burning(nb: Instance) -> pynetbox.api:
    apply_transitions(
        Client(nb.url, nb.token), [TransitionRequest(n, State.BURN_IN, "burn-in starts") for n in NODES], mode="enforce"
    )
    return pynetbox.api(nb.url, token=nb.token)


@pytest.mark.cost(85)
def test_blockers_keep_the_su_out_then_it_is_admitted(nb: Instance, burning: pynetbox.api, tmp_path: Path) -> None:
    # one node's links grew errors: the SU is blocked, every blocker named, nothing moves (CLI and playbook)
    grown = [
        {
            "code": "NIC_LINK_DOWNED",
            "status": "FAIL",
            "subject": "mlx5_5 port 1",
            "message": "grew",
            "evidence": "",
            "action": "check_link",
        }
    ]
    write_reports(tmp_path, failing={NODES[2]: grown})
    r = run(nb, "hwaac", "qualify", str(INTENT), "--su", "1", "--reports", str(tmp_path), "--enforce")
    assert r.returncode == 7, r.stdout + r.stderr
    assert f"{NODES[2]}: burn-in FAIL (NIC_LINK_DOWNED)" in r.stdout
    assert f"{NODES[2]}: port counters grew or could not be read: mlx5_5 port 1 NIC_LINK_DOWNED" in r.stdout
    assert set(states(burning).values()) == {"burn_in"}
    playbook = [
        str(BIN / "ansible-playbook"),
        "playbooks/qualify.yml",
        "-e",
        f"qualify_fabric={INTENT}",
        "-e",
        '{"qualify_sus": [1]}',
        "-e",
        f"qualify_reports={tmp_path}",
        "-e",
        "qualify_enforce=true",
    ]
    r = run(nb, *playbook)
    assert r.returncode != 0 and "NIC_LINK_DOWNED" in r.stdout
    assert set(states(burning).values()) == {"burn_in"}

    # the SU passed: a dry run reports the moves and writes nothing; --enforce moves every node; again: nothing
    write_reports(tmp_path)
    r = run(nb, "hwaac", "qualify", str(INTENT), "--su", "1", "--reports", str(tmp_path))
    assert r.returncode == 0 and "su01 of burnin: admitted (4 nodes)" in r.stdout and "would_move" in r.stdout
    assert set(states(burning).values()) == {"burn_in"}
    r = run(nb, *playbook[:-2], "-e", "qualify_enforce=true", "--check")
    assert r.returncode == 0 and set(states(burning).values()) == {"burn_in"}  # check mode writes nothing
    r = run(nb, *playbook)
    assert r.returncode == 0 and "changed=1" in r.stdout, r.stdout[-3000:]
    assert set(states(burning).values()) == {"production"}
    again = run(nb, "hwaac", "qualify", str(INTENT), "--su", "1", "--reports", str(tmp_path), "--enforce")
    assert again.returncode == 0 and ": moved" not in again.stdout  # nothing left to move
    r = run(nb, *playbook)
    assert r.returncode == 0 and "changed=0" in r.stdout
