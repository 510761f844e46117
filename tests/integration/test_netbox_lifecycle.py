"""Node lifecycle against a real NetBox: every transition, its journal evidence, refusals, dry run, the circuit
breaker, and a failed journal write that leaves NetBox as it was.

The fabric (``lifecycle.yml``: 1 SU of 14 nodes x 2 rails) is synced once into the module's fresh database, and
the module's tests stay on one xdist worker (group ``netbox_lifecycle`` under ``--dist loadgroup``) so that the
sync, NetBox's main cost here, happens once per run; each test still moves its own nodes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pynetbox
import pytest

from hwaac.devnetbox.instances import Instance
from hwaac.health.lifecycle import BreakerPolicy, State
from hwaac.netbox import lifecycle as lc
from hwaac.netbox.lifecycle import Evidence, LifecycleError, TransitionRequest, apply_transitions, device_journal
from hwaac.netbox.sync import sync_plan
from hwaac.netbox.sync.client import Client
from hwaac.plan import build_plan
from hwaac.validate import load_intent

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("netbox_lifecycle")]

REPO = Path(__file__).resolve().parents[2]
INTENT = REPO / "tests/fixtures/intents/valid/lifecycle.yml"
PLAN = build_plan(load_intent(INTENT))
NODES = sorted(n.name for n in PLAN.nodes)
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def fabric(netbox_db: Instance) -> Iterator[tuple[Instance, pynetbox.api]]:
    sync_plan(PLAN, netbox_db.url, netbox_db.token)
    yield netbox_db, pynetbox.api(netbox_db.url, token=netbox_db.token)


def move(nb: Instance, device: str, to: State, *, mode: lc.Mode = "enforce", **kw: object) -> lc.LifecycleReport:
    return apply_transitions(
        Client(nb.url, nb.token),
        [TransitionRequest(device, to, f"test: to {to.value}")],
        mode=mode,
        fabric="lifecycle",
        **kw,
    )


def status_and_field(api: pynetbox.api, device: str) -> tuple[str, str | None]:
    d = api.dcim.devices.get(name=device)
    return d.status.value, d.custom_fields.get("hwaac_lifecycle")


def test_every_transition_sets_status_field_and_one_journal_entry(fabric: tuple[Instance, pynetbox.api]) -> None:
    nb, api = fabric
    node = NODES[0]
    assert status_and_field(api, node) == ("planned", None)  # as the sync created it
    path = [
        (State.BURN_IN, "staged"),
        (State.PRODUCTION, "active"),
        (State.QUARANTINE, "offline"),
        (State.BURN_IN, "staged"),
        (State.PRODUCTION, "active"),
        (State.QUARANTINE, "offline"),
        (State.RMA, "failed"),
        (State.RETURNED, "inventory"),
        (State.BURN_IN, "staged"),
    ]
    previous = "planned"
    for i, (state, status) in enumerate(path, 1):
        rep = move(nb, node, state)
        (out,) = rep.outcomes
        assert (out.from_state, out.to_state, out.result) == (previous, state.value, "moved")
        assert status_and_field(api, node) == (status, state.value)
        journal = device_journal(Client(nb.url, nb.token), node)
        assert len(journal) == i
        assert journal[-1]["comments"].startswith(f"**hwaac lifecycle: {previous} -> {state.value}**")
        assert journal[-1]["kind"] == lc.JOURNAL_KIND[state]
        # a second run of the same move changes nothing and writes no second entry
        again = move(nb, node, state)
        assert [o.result for o in again.outcomes] == ["unchanged"] and not again.changed
        assert len(device_journal(Client(nb.url, nb.token), node)) == i
        previous = state.value


def test_refusals_write_nothing(fabric: tuple[Instance, pynetbox.api]) -> None:
    nb, api = fabric
    node = NODES[1]
    with pytest.raises(
        LifecycleError,
        match=rf"{node}: planned -> production is not a lifecycle transition; "
        r"from planned a node may go to: burn_in",
    ):
        move(nb, node, State.PRODUCTION)
    with pytest.raises(LifecycleError, match="gpu-nowhere: no such device"):
        move(nb, "gpu-nowhere", State.BURN_IN)
    # a device a person created (same site, type and role, no hwaac tag) is not hwaac's to move
    template = api.dcim.devices.get(name=node)
    api.dcim.devices.create(
        name="gpu-by-hand",
        site=template.site.id,
        device_type=template.device_type.id,
        role=template.role.id,
        status="planned",
    )
    with pytest.raises(LifecycleError, match="gpu-by-hand: not owned by hwaac"):
        apply_transitions(
            Client(nb.url, nb.token),
            [TransitionRequest("gpu-by-hand", State.BURN_IN, "t"), TransitionRequest(node, State.BURN_IN, "t")],
            mode="enforce",
        )
    # the refusal of one device stopped the whole batch: the owned node did not move either
    assert status_and_field(api, node) == ("planned", None)
    assert status_and_field(api, "gpu-by-hand") == ("planned", None)
    assert device_journal(Client(nb.url, nb.token), node) == []


def test_dry_run_reports_and_writes_nothing(fabric: tuple[Instance, pynetbox.api]) -> None:
    nb, api = fabric
    client = Client(nb.url, nb.token)
    nodes = NODES[2:4]
    rep = apply_transitions(client, [TransitionRequest(n, State.BURN_IN, "burn-in starts") for n in nodes])
    assert rep.mode == "dry_run" and not rep.changed
    assert [(o.device, o.result) for o in rep.outcomes] == [(n, "would_move") for n in nodes]
    assert set(rep.requests) == {"GET"}
    assert {status_and_field(api, n) for n in nodes} == {("planned", None)}


def test_quarantine_journal_holds_evidence_and_both_link_ends(fabric: tuple[Instance, pynetbox.api]) -> None:
    nb, _api = fabric
    node = NODES[4]
    move(nb, node, State.BURN_IN)
    host_links = {lk.a_port: lk for lk in PLAN.links if lk.kind == "host" and lk.a_device == node}
    dead = sorted(host_links)[-1]  # the node's last rail
    evidence = Evidence(
        verdict="FAIL",
        codes=["NIC_PORT_DOWN", "GPU_ROW_REMAP_PENDING"],
        action="reset_gpu",
        findings=[{"code": "NIC_PORT_DOWN", "status": "FAIL", "subject": "mlx5_1 port 1", "message": "port Down"}],
        raw={"ibstat": "CA 'mlx5_1'\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tRate: 10"},
        gpu_serials={"0": "1650000000001"},
        nic_serials={"mlx5_1": "MT0000X00001"},
        failing_interfaces=[dead],
    )
    rep = apply_transitions(
        Client(nb.url, nb.token),
        [TransitionRequest(node, State.QUARANTINE, "burn-in FAIL", evidence)],
        mode="enforce",
        fabric="lifecycle",
    )
    assert [o.result for o in rep.outcomes] == ["moved"]
    entry = device_journal(Client(nb.url, nb.token), node)[-1]
    text, stored = entry["comments"], entry["evidence"]
    link = host_links[dead]
    assert f"- {node} {dead} <-> {link.b_device} {link.b_port} (cable {link.cable_id})" in text
    assert "State: Down" in text and "GPU serials: 0 1650000000001" in text and "mlx5_1 MT0000X00001" in text
    assert stored["codes"] == ["NIC_PORT_DOWN", "GPU_ROW_REMAP_PENDING"]
    assert stored["links"] == [
        {"interface": dead, "peer_device": link.b_device, "peer_interface": link.b_port, "cable": link.cable_id}
    ]
    assert entry["kind"] == "warning"


def test_circuit_breaker_stops_a_mass_quarantine(fabric: tuple[Instance, pynetbox.api]) -> None:
    nb, api = fabric
    pool = NODES[5:9]  # the breaker's pool: 4 nodes, at most 2 quarantined per 5 minutes
    apply_transitions(
        Client(nb.url, nb.token), [TransitionRequest(n, State.BURN_IN, "t") for n in pool], mode="enforce"
    )
    policy = BreakerPolicy(max_share=0.5, window=timedelta(minutes=5))

    def quarantine(names: list[str], now: datetime | None = None) -> lc.LifecycleReport:
        return apply_transitions(
            Client(nb.url, nb.token),
            [TransitionRequest(n, State.QUARANTINE, "burn-in FAIL") for n in names],
            mode="enforce",
            pool=pool,
            breaker=policy,
            now=now,
        )

    rep = quarantine(pool[:3])
    assert rep.breaker is not None and rep.breaker.tripped and rep.breaker.allowed == 2
    assert {o.result for o in rep.outcomes} == {"blocked"} and rep.alerts
    assert {status_and_field(api, n)[0] for n in pool} == {"staged"}  # nobody quarantined

    rep = quarantine(pool[:2])
    assert not rep.breaker.tripped and [o.result for o in rep.outcomes] == ["moved", "moved"]
    # two made in this window: a third trips, counted from the journal entries NetBox holds
    rep = quarantine(pool[2:3])
    assert rep.breaker.tripped and rep.breaker.recent == 2 and status_and_field(api, pool[2])[0] == "staged"
    # after the window the third is allowed
    later = datetime.now(UTC) + timedelta(minutes=6)
    rep = quarantine(pool[2:3], now=later)
    assert not rep.breaker.tripped and [o.result for o in rep.outcomes] == ["moved"]


def test_failed_journal_write_moves_devices_back(
    fabric: tuple[Instance, pynetbox.api], monkeypatch: pytest.MonkeyPatch
) -> None:
    nb, api = fabric
    node = NODES[9]
    move(nb, node, State.BURN_IN)
    # the journal endpoint answers 404: the real NetBox refuses the POST after the real PATCH went through
    from hwaac.netbox.sync import client

    monkeypatch.setitem(client.ENDPOINT, "journal-entries", "extras.journal_entries_missing")
    with pytest.raises(LifecycleError, match=rf"moved back, NetBox is as before: {node}"):
        move(nb, node, State.PRODUCTION)
    monkeypatch.undo()
    assert status_and_field(api, node) == ("staged", "burn_in")
    assert len(device_journal(Client(nb.url, nb.token), node)) == 1


def hwaac(nb: Instance, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NETBOX_URL": nb.url, "NETBOX_TOKEN": nb.token}
    r = subprocess.run([str(BIN / "hwaac"), *args], env=env, capture_output=True, text=True, timeout=120)
    assert nb.token not in r.stdout + r.stderr
    return r


def test_cli_move_journal_and_rma_report(fabric: tuple[Instance, pynetbox.api], tmp_path: Path) -> None:
    nb, api = fabric
    node = NODES[10]
    r = hwaac(nb, "node", "move", node, "--to", "burn_in", "--reason", "racked", "--fabric", "lifecycle")
    assert r.returncode == 0, r.stderr
    assert f"{node}: planned -> burn_in: would_move (racked)" in r.stdout and "dry run: nothing written" in r.stdout
    assert status_and_field(api, node) == ("planned", None)
    r = hwaac(nb, "node", "move", node, "--to", "burn_in", "--reason", "racked", "--fabric", "lifecycle", "--enforce")
    assert r.returncode == 0 and f"{node}: planned -> burn_in: moved" in r.stdout, r.stderr
    assert status_and_field(api, node) == ("staged", "burn_in")

    evidence = tmp_path / "evidence.json"
    evidence.write_text(
        json.dumps(
            {
                "verdict": "FAIL",
                "codes": ["GPU_ROW_REMAP_PENDING"],
                "action": "reset_gpu",
                "gpu_serials": {"3": "1650000000004"},
                "raw": {"nvidia-smi -q -x": "<remapped_rows_pending>Yes</...>"},
                "findings": [
                    {"code": "GPU_ROW_REMAP_PENDING", "status": "FAIL", "subject": "gpu3", "message": "pending"}
                ],
            }
        )
    )
    r = hwaac(
        nb,
        "node",
        "move",
        node,
        "--to",
        "quarantine",
        "--reason",
        "burn-in FAIL",
        "--evidence",
        str(evidence),
        "--pool",
        *NODES[10:12],
        "--enforce",
    )
    assert r.returncode == 0 and "moved" in r.stdout, r.stdout + r.stderr
    r = hwaac(nb, "node", "move", node, "--to", "rma", "--reason", "remap pending after reset", "--enforce")
    assert r.returncode == 0, r.stderr

    r = hwaac(nb, "node", "journal", node)
    assert r.returncode == 0 and r.stdout.count("--- ") == 3 and "quarantine -> rma" in r.stdout

    r = hwaac(nb, "node", "rma-report", node, "-o", str(tmp_path / "rma"))
    assert r.returncode == 0, r.stderr
    report = json.loads((tmp_path / "rma" / f"{node}.rma.json").read_text())
    assert report["device"]["name"] == node and report["device"]["lifecycle"] == "rma"
    assert report["fault_codes"] == ["GPU_ROW_REMAP_PENDING"] and report["gpu_serials"] == {"3": "1650000000004"}
    assert [e["move"] for e in report["events"]] == ["planned -> burn_in", "burn_in -> quarantine", "quarantine -> rma"]
    md = (tmp_path / "rma" / f"{node}.rma.md").read_text()
    assert f"# RMA report: {node}" in md and "| 3 | 1650000000004 |" in md and "<remapped_rows_pending>Yes" in md


def test_cli_refusals_exit_nonzero_and_name_the_problem(fabric: tuple[Instance, pynetbox.api], tmp_path: Path) -> None:
    nb, _api = fabric
    node = NODES[11]
    r = hwaac(nb, "node", "move", node, "--to", "production", "--reason", "x", "--enforce")
    assert r.returncode == 2 and "planned -> production is not a lifecycle transition" in r.stderr
    r = hwaac(nb, "node", "move", node, "--to", "prod", "--reason", "x")
    assert r.returncode == 2 and "--to: 'prod' is not a lifecycle state; valid: planned, burn_in" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"verdikt": "FAIL"}')
    r = hwaac(nb, "node", "move", node, "--to", "burn_in", "--reason", "x", "--evidence", str(bad))
    assert r.returncode != 0 and "unknown key(s) verdikt" in r.stderr


def test_via_predicts_two_steps_in_a_dry_run_and_journals_both(fabric: tuple[Instance, pynetbox.api]) -> None:
    nb, api = fabric
    node = NODES[12]
    req = TransitionRequest(node, State.QUARANTINE, "burn-in FAIL", Evidence(verdict="FAIL"), via=State.BURN_IN)
    dry = apply_transitions(Client(nb.url, nb.token), [req], pool=NODES[12:14])
    assert [(o.from_state, o.to_state, o.result) for o in dry.outcomes] == [("planned", "quarantine", "would_move")]
    assert status_and_field(api, node) == ("planned", None)
    done = apply_transitions(Client(nb.url, nb.token), [req], mode="enforce", pool=NODES[12:14])
    assert [o.result for o in done.outcomes] == ["moved"] and status_and_field(api, node) == ("offline", "quarantine")
    moves = [e["comments"].splitlines()[0] for e in device_journal(Client(nb.url, nb.token), node)]
    assert moves == ["**hwaac lifecycle: planned -> burn_in**", "**hwaac lifecycle: burn_in -> quarantine**"]
    # without via the same shortcut is refused
    with pytest.raises(LifecycleError, match="planned -> quarantine is not a lifecycle transition"):
        apply_transitions(Client(nb.url, nb.token), [TransitionRequest(NODES[13], State.QUARANTINE, "x")])
