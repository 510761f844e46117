"""The maintenance workflow on a real twin (the small fabric of tests/fixtures/verify/fabric in namespaces: 2
spines, 4 leaves, 4 nodes; FRR, lldpd, SONiC's config tools), no mocks: ``playbooks/maintenance.yml`` run by
ansible-playbook on the twin's inventory drains a spine behind the guard rails (``hwaac remediate
--drain-switch``), pushes a change with its checkpoint kept, opens the sessions still marked graceful-shutdown,
verifies (BGP gate, ``hwaac verify lab:NAME --devices``), then commits and undrains. A good change ends in service
and in the running CONFIG_DB; a bad one (a wrong peer ASN) is rolled back, the spine stays drained and the decision
log says why; a drain the guard rails refuse changes nothing; check mode changes nothing. Needs root, frr, lldpd
and ansible-core: it FAILS, not skips."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hwaac.lab import Lab
from hwaac.lab.deploy import PlaybookRun, inventory, run_playbook
from hwaac.lab.factory import prepare
from hwaac.lab.sonic_cli import Switch
from tests.integration.lab_twin import planned_twin

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("lab-small")]  # a small twin beside the demo ones

REPO = Path(__file__).resolve().parents[2]
FABRIC = REPO / "tests" / "fixtures" / "verify" / "fabric"  # a spine drain touches 5 switches, not the demo's 17
PLAYBOOK = REPO / "playbooks" / "maintenance.yml"
NAME = "maint"
POLICY = "guard_rails: {min_plane_spines: %d}\ngraceful_s: 1\nrules:\n  - name: tell\n    action: notify\n"
PORT = "Ethernet0"  # a spine's first port


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with planned_twin(tmp_path_factory.mktemp("maint-lab"), FABRIC, NAME) as built:
        prepare(built)  # the switches' SONiC tools (hwaac remediate --apply does it too; check mode does not)
        yield built


def _changed(lab: Lab, folder: Path, spine: str, change: Any) -> Path:
    """A copy of the twin's rendered folder in ``folder`` with ``change(config)`` made to ``spine``'s
    config_db.json."""
    shutil.copytree(lab.render_dir, folder)
    path = folder / "switches" / spine / "config_db.json"
    config = json.loads(path.read_text())
    change(config)
    path.write_text(json.dumps(config, indent=1))
    return folder


def _play(
    lab: Lab, tmp: Path, spine: str, render: Path, *, spines: int = 1, check: bool = False, gate: int = 30
) -> PlaybookRun:
    """maintenance.yml on the twin's inventory (hwaac.lab.deploy's, plus localhost for the hwaac steps)."""
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    (tmp / "policy.yaml").write_text(POLICY % spines)
    inv = inventory(lab, Path(lab.render_dir), {n: 1.0 for n in lab.switches}, gate_s=gate)
    inv["all"]["hosts"] = {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}
    (work / "inventory.json").write_text(json.dumps(inv))
    (work / "vars.json").write_text(
        json.dumps(
            {
                "maintenance_switch": spine,
                "maintenance_reason": "optic swap, CHG-42",
                "maintenance_render_dir": str(render),
                "maintenance_verify_dir": str(tmp / "verify"),
                "remediate_intent": str(FABRIC),
                "remediate_state": str(tmp / "state"),
                "remediate_lab": NAME,
                "remediate_policy": str(tmp / "policy.yaml"),
                "remediate_hwaac": str(Path(sys.executable).parent / "hwaac"),
            }
        )
    )
    run = run_playbook(PLAYBOOK, work / "inventory.json", work / "vars.json", work, check=check, forks=2)
    print(f"maintenance of {spine}{' (check)' if check else ''}: rc {run.rc}, {run.seconds:.1f} s")
    return run


def _sessions(lab: Lab, device: str) -> dict[str, str]:
    peers = json.loads(lab.vty(device, "bgpd", "show bgp summary json"))["ipv4Unicast"]["peers"]
    return {ip: p["state"] for ip, p in peers.items()}


def _log(tmp: Path) -> list[dict]:
    return [json.loads(x) for x in (tmp / "state" / "decisions.jsonl").read_text().splitlines()]


def test_a_bad_change_is_rolled_back_and_stays_drained_then_a_good_one_is_kept(lab: Lab, tmp_path: Path) -> None:
    """One spine, as a person would go on: check mode first, the change that breaks a session (rolled back, left
    drained, the log says why), then the change that is right (verified, kept, back in service)."""
    spine = "spine-p0-01"
    sw = Switch.of_lab(lab.folder, spine)
    before = sw.state.running()
    peer = sorted(before["BGP_NEIGHBOR"])[0]  # one session to a leaf: its ASN made wrong in the bad change
    leaf, leaf_end = before["BGP_NEIGHBOR"][peer]["name"], before["BGP_NEIGHBOR"][peer]["local_addr"]
    bad = _changed(lab, tmp_path / "bad", spine, lambda c: c["BGP_NEIGHBOR"][peer].update(asn="4200100999"))
    described = f"{before['PORT'][PORT]['description']} (optic swapped, CHG-42)"
    good = _changed(lab, tmp_path / "good", spine, lambda c: c["PORT"][PORT].update(description=described))

    check = _play(lab, tmp_path, spine, good, check=True)  # predicts, changes nothing
    assert check.rc == 0, check.output[-3000:]
    assert described in check.output and sw.state.running() == before and not (tmp_path / "state").exists()

    run = _play(lab, tmp_path, spine, bad, gate=10)
    assert run.rc != 0
    assert 'maintenance failed at "BGP gate' in run.output and "the switch stays drained" in run.output
    running = sw.state.running()
    assert running["BGP_NEIGHBOR"][peer]["asn"] == before["BGP_NEIGHBOR"][peer]["asn"]  # rolled back
    assert {n["admin_status"] for n in running["BGP_NEIGHBOR"].values()} == {"down"}  # drained
    assert sw.state.checkpoints() == [] and sw.state.saved() == running
    assert set(_sessions(lab, spine).values()) == {"Idle (Admin)"}
    assert _sessions(lab, leaf)[leaf_end] == "Idle (Admin)"  # the peer's end shut again
    failed = _log(tmp_path)[-1]
    assert (failed["action"], failed["policy_rule"], failed["outcome"]) == ("drain_switch", "manual", "done")
    assert failed["note"].startswith('maintenance failed at "BGP gate') and peer.split("|")[1] in failed["note"]
    out = json.loads((tmp_path / "state" / "state.json").read_text())["out"]
    assert out[f"drain_switch|{spine}"]["manual"] is True

    run = _play(lab, tmp_path, spine, good)
    assert run.rc == 0, run.output[-4000:]
    running = sw.state.running()
    assert running["PORT"][PORT]["description"] == described
    assert running["BGP_NEIGHBOR"] == before["BGP_NEIGHBOR"]  # no session left shut
    assert running["BGP_NEIGHBOR_AF"] == before["BGP_NEIGHBOR_AF"]  # the rendered route maps, no marking
    assert sw.state.checkpoints() == [] and sw.state.saved() == running
    assert set(_sessions(lab, spine).values()) == {"Established"}
    assert _sessions(lab, leaf)[leaf_end] == "Established"
    reason = "optic swap, CHG-42"
    assert [(x["action"], x["rule"], x["policy_rule"], x["note"], x["outcome"]) for x in _log(tmp_path)] == [
        ("drain_switch", "ok", "manual", reason, "done"),
        ("undrain_switch", "ok", "manual", reason, "opened"),
        ("drain_switch", "already", "manual", failed["note"], "done"),
        ("drain_switch", "already", "manual", reason, "done"),
        ("undrain_switch", "ok", "manual", reason, "opened"),
        ("undrain_switch", "ok", "manual", reason, "done"),
    ]
    assert json.loads((tmp_path / "state" / "state.json").read_text())["out"] == {}
    report = (tmp_path / "verify" / spine / "verify.md").read_text()
    assert " 0 FAIL, 0 SKIP, 0 ERROR" in report


def test_a_drain_the_guard_rails_refuse_changes_nothing(lab: Lab, tmp_path: Path) -> None:
    spine = "spine-p0-02"
    sw = Switch.of_lab(lab.folder, spine)
    before = sw.state.running()
    new = _changed(lab, tmp_path / "new", spine, lambda c: c["PORT"][PORT].update(description="never pushed"))

    run = _play(lab, tmp_path, spine, new, spines=2)  # the plane has 2 spines: neither may go
    assert run.rc != 0
    assert f"{spine} was not drained" in run.output and "last_spines" in run.output
    assert sw.state.running() == before and sw.state.checkpoints() == []
    assert set(_sessions(lab, spine).values()) == {"Established"}
    (line,) = _log(tmp_path)
    assert (line["action"], line["rule"], line["allowed"], line["outcome"]) == (
        "drain_switch",
        "last_spines",
        False,
        "",
    )
