"""playbooks/rma.yml against a real NetBox and the fake ``scontrol``: a quarantined node goes to rma (status failed)
with a journal entry, its RMA report (Markdown and JSON) holds the serials and the evidence, its Slurm drain
reason becomes ``hwaac: RMA ...``; check mode first changes nothing, a second run changes nothing, and a play with
a node that is not in quarantine fails naming the transition and changes nothing. The NetBox token never shows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pynetbox
import pytest

from hwaac.devnetbox.instances import Instance
from hwaac.health.lifecycle import State
from hwaac.netbox.lifecycle import Evidence, TransitionRequest, apply_transitions, device_journal
from hwaac.netbox.sync.client import Client

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INTENT = REPO / "tests/fixtures/intents/valid/burn-in.yml"
BIN = Path(sys.executable).parent
FAKES = REPO / "tests/fakes/bin"
NODE = "gpu-su01-h02"  # quarantined by burn-in
HEALTHY = "gpu-su01-h03"  # in production
REASON = "remap pending after GPU reset"
BURN_IN_DRAIN = "hwaac: GPU_ROW_REMAP_PENDING burn-in FAIL"
EVIDENCE = Evidence(
    verdict="FAIL",
    codes=["GPU_ROW_REMAP_PENDING"],
    action="reset_gpu",
    findings=[
        {
            "code": "GPU_ROW_REMAP_PENDING",
            "status": "FAIL",
            "subject": "gpu3 00000000:5D:00.0",
            "message": "row remap pending",
        }
    ],
    raw={"nvidia-smi -q -x": "<remapped_rows>\n\t<remapped_row_pending>Yes</remapped_row_pending>"},
    gpu_serials={"gpu3 00000000:5D:00.0": "1650000000004"},
    nic_serials={"mlx5_3": "MT0000X00003"},
)


def slurm_seed(state: Path, node: str, status: str, reason: str | None = None) -> None:
    state.mkdir(parents=True, exist_ok=True)
    entry = {"state": status}
    if reason:
        entry.update(reason=reason, reason_user="root", reason_time="2026-11-30T09:00:00")
    (state / "scontrol.json").write_text(json.dumps({"nodes": {node: entry}}))


def slurm_show(state: Path, node: str) -> str:
    r = subprocess.run(
        [str(FAKES / "scontrol"), "show", "node", "-o", node],
        capture_output=True,
        text=True,
        env={**os.environ, "HWAAC_FAKE_STATE": str(state)},
        timeout=30,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def slurm_updates(state: Path) -> list[str]:
    calls = state / "scontrol.calls"
    return [c for c in (calls.read_text().splitlines() if calls.exists() else []) if "update" in c]


@pytest.fixture
def nb(synced_nb: Instance) -> Instance:
    """This module's NetBox: the burn-in fabric already synced."""
    return synced_nb


@pytest.fixture
def site(nb: Instance, tmp_path: Path) -> tuple[pynetbox.api, Path]:
    """The burn-in fabric in NetBox, NODE quarantined with its evidence and drained by burn-in, HEALTHY in
    production and idle; an inventory of both (simulated on localhost)."""
    client = Client(nb.url, nb.token)
    apply_transitions(
        client,
        [TransitionRequest(n, State.BURN_IN, "burn-in starts") for n in (NODE, HEALTHY)],
        mode="enforce",
        fabric="burnin",
    )
    apply_transitions(
        client,
        [
            TransitionRequest(NODE, State.QUARANTINE, "burn-in FAIL: GPU_ROW_REMAP_PENDING", EVIDENCE),
            TransitionRequest(HEALTHY, State.PRODUCTION, "burn-in PASS"),
        ],
        mode="enforce",
        fabric="burnin",
    )
    slurm_seed(tmp_path / "sim" / NODE, NODE, "IDLE+DRAIN", BURN_IN_DRAIN)
    slurm_seed(tmp_path / "sim" / HEALTHY, HEALTHY, "IDLE")
    (tmp_path / "inventory.yml").write_text(
        json.dumps(
            {
                "gpu_nodes": {
                    "hosts": {NODE: {}, HEALTHY: {}},
                    "vars": {
                        "ansible_connection": "local",
                        "ansible_python_interpreter": sys.executable,
                        "hwaac_fabric": "burnin",
                        "hwaac_environment": {"HWAAC_FAKE_STATE": f"{tmp_path}/sim/{{{{ inventory_hostname }}}}"},
                    },
                }
            }
        )
    )
    return pynetbox.api(nb.url, token=nb.token), tmp_path


def rma(nb: Instance, tmp: Path, *extra: str, limit: str = NODE) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "NETBOX_"))}
    env.update(
        NETBOX_URL=nb.url,
        NETBOX_TOKEN=nb.token,
        NO_COLOR="1",
        PATH=f"{FAKES}{os.pathsep}{BIN}{os.pathsep}{env.get('PATH', '')}",
    )
    r = subprocess.run(
        [
            str(BIN / "ansible-playbook"),
            "-i",
            str(tmp / "inventory.yml"),
            "playbooks/rma.yml",
            "--limit",
            limit,
            "-e",
            "rma_enforce=true",
            "-e",
            json.dumps({"rma_reason": REASON}),
            "-e",
            f"rma_report_dir={tmp / 'rma'}",
            *extra,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert nb.token not in r.stdout + r.stderr
    return r


def changed(r: subprocess.CompletedProcess[str], host: str = NODE) -> int:
    m = re.search(rf"^{re.escape(host)}\s*:\s*ok=\d+\s+changed=(\d+)", r.stdout, re.MULTILINE)
    assert m, r.stdout[-3000:]
    return int(m.group(1))


def netbox_state(api: pynetbox.api, node: str) -> tuple[str, str | None]:
    d = api.dcim.devices.get(name=node)
    return d.status.value, d.custom_fields.get("hwaac_lifecycle")


@pytest.mark.cost(90)
def test_rma_refuses_a_node_not_in_quarantine_then_moves_a_quarantined_one(
    nb: Instance, site: tuple[pynetbox.api, Path]
) -> None:
    # one synced fabric for both points (the burn-in fabric is NetBox's most expensive setup here): the refusal
    # changes nothing, so the quarantined node's RMA that follows starts from the same state
    api, tmp = site
    client = Client(nb.url, nb.token)
    state = tmp / "sim" / NODE

    # a node that is not in quarantine is refused, and the refusal stops the batch
    r = rma(nb, tmp, limit=f"{NODE},{HEALTHY}")
    assert r.returncode != 0
    assert f"{HEALTHY}: production -> rma is not a lifecycle transition" in r.stdout, r.stdout[-3000:]
    # the quarantined node did not move either
    assert netbox_state(api, HEALTHY) == ("active", "production")
    assert netbox_state(api, NODE) == ("offline", "quarantine")
    assert [len(device_journal(client, n)) for n in (NODE, HEALTHY)] == [2, 2]
    assert not (tmp / "rma").exists()
    for n in (NODE, HEALTHY):
        assert slurm_updates(tmp / "sim" / n) == []
    assert "Reason=" not in slurm_show(tmp / "sim" / HEALTHY, HEALTHY)

    # check mode first: it predicts the changes and makes none
    check = rma(nb, tmp, "--check", "--diff")
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr
    assert "-lifecycle: quarantine" in check.stdout and "+lifecycle: rma" in check.stdout, check.stdout[-3000:]
    assert netbox_state(api, NODE) == ("offline", "quarantine")
    assert len(device_journal(client, NODE)) == 2
    assert not (tmp / "rma").exists()
    assert f"Reason={BURN_IN_DRAIN} " in slurm_show(state, NODE) and slurm_updates(state) == []

    r = rma(nb, tmp)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    assert changed(r) == changed(check) > 0  # check mode predicted the run
    assert netbox_state(api, NODE) == ("failed", "rma")
    journal = device_journal(client, NODE)
    assert len(journal) == 3
    assert journal[-1]["comments"].startswith("**hwaac lifecycle: quarantine -> rma**")
    assert f"Reason: {REASON}" in journal[-1]["comments"]

    report = json.loads((tmp / "rma" / f"{NODE}.rma.json").read_text())
    assert report["device"]["name"] == NODE and report["device"]["lifecycle"] == "rma"
    assert report["gpu_serials"] == {"gpu3 00000000:5D:00.0": "1650000000004"}
    assert report["nic_serials"] == {"mlx5_3": "MT0000X00003"}
    assert report["fault_codes"] == ["GPU_ROW_REMAP_PENDING"]
    assert [e["move"] for e in report["events"]] == ["planned -> burn_in", "burn_in -> quarantine", "quarantine -> rma"]
    assert report["events"][1]["raw"] == EVIDENCE.raw and report["events"][2]["reason"] == REASON
    md = (tmp / "rma" / f"{NODE}.rma.md").read_text()
    assert f"# RMA report: {NODE}" in md and "| gpu3 00000000:5D:00.0 | 1650000000004 |" in md
    assert "| mlx5_3 | MT0000X00003 |" in md and "<remapped_row_pending>Yes</remapped_row_pending>" in md

    slurm = slurm_show(state, NODE)
    assert re.search(r"State=\S*DRAIN", slurm) and f"Reason=hwaac: RMA {REASON} [" in slurm, slurm

    again = rma(nb, tmp)
    assert again.returncode == 0 and changed(again) == 0, again.stdout[-3000:]
    assert len(device_journal(client, NODE)) == 3 and len(slurm_updates(state)) == 1
