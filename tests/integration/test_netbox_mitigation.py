"""Mitigation recorded in a real NetBox: journal entries on both devices and the cable of a drained link, the
cable's status and tag, idempotence, an undrain, a switch drain, a sync during a drain, a cable hwaac does not own,
a dry run, and ``hwaac remediate --apply --netbox`` with the switch steps stubbed out.

Each test gets its own copy of the run's one sync of ``lifecycle.yml`` (1 SU: 2 leaves with 14 uplinks each to
one spine), so that tests never see each other's drains.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pynetbox
import pytest

from hwaac.cli import main as hwaac_main
from hwaac.devnetbox.instances import Instance
from hwaac.mitigation.netbox_journal import DRAINED_TAG, MITIGATION_TAG, MitigationJournalError, record_actions
from hwaac.netbox.lifecycle import journal_evidence
from hwaac.netbox.sync import sync_plan
from hwaac.netbox.sync.client import Client
from hwaac.plan import build_plan
from hwaac.validate import load_intent

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INTENT = REPO / "tests/fixtures/intents/valid/lifecycle.yml"
PLAN = build_plan(load_intent(INTENT))
UPLINKS = [lk for lk in PLAN.links if lk.kind == "leaf_spine"]
SPINE = "spine-p0-01"
WHEN = datetime(2026, 12, 5, 3, 0, tzinfo=UTC)
EVIDENCE = {"metric": "hwaac_probe_loss_ratio", "value": 0.02, "hosts": ["gpu-su01-h01", "gpu-su01-h02"]}
POLICY = (
    "guard_rails: {}\nrules:\n  - name: lossy-uplink\n    match: {kinds: [link], link_kinds: [leaf_spine]}\n"
    "    action: drain_link\n    persistence: 1\n"
)


def action(name: str, target: str, *, outcome: str = "done", rule: str = "ok") -> dict[str, Any]:
    """An ``Action.to_dict()`` of a sweep, with its outcome."""
    return {
        "action": name,
        "target": target,
        "allowed": True,
        "rule": rule,
        "reason": "within the guard rails",
        "scope": "leaf-p0-su01-r0",
        "inputs": {"recent": 0},
        "policy_rule": "lossy-uplink",
        "outcome": outcome,
        "findings": [
            {
                "rule": "probe_path_loss",
                "severity": "fault",
                "kind": "link",
                "component": target,
                "cable": target,
                "device": "",
                "port": "",
                "evidence": [EVIDENCE],
            }
        ],
    }


def record(nb: Instance, *actions: dict[str, Any], when: datetime = WHEN, mode: str = "enforce", keep=()):
    return record_actions(Client(nb.url, nb.token), PLAN, list(actions), when=when, mode=mode, keep=keep)


def cable(api: pynetbox.api, label: str):
    (c,) = api.dcim.cables.filter(label=label)
    return c


def journal(api: pynetbox.api, object_type: str, object_id: int) -> list:
    return list(
        api.extras.journal_entries.filter(
            assigned_object_type=object_type, assigned_object_id=object_id, ordering="created"
        )
    )


def state(c) -> tuple[str, set[str]]:
    return c.status.value, {t.slug for t in c.tags}


def test_drain_journals_both_devices_and_the_cable_then_undrain_puts_it_back(synced_nb: Instance) -> None:
    nb, link = synced_nb, UPLINKS[3]
    api = pynetbox.api(nb.url, token=nb.token)
    c = cable(api, link.cable_id)
    assert state(c)[0] == "connected"
    rep = record(nb, action("drain_link", link.cable_id))
    assert [(o.object_type, o.name, o.journal) for o in rep.objects] == [
        ("dcim.device", link.a_device, "written"),
        ("dcim.device", link.b_device, "written"),
        ("dcim.cable", link.cable_id, "written"),
    ]
    assert rep.objects[2].status == "connected -> decommissioning" and rep.changed
    status, tags = state(cable(api, link.cable_id))
    assert status == "decommissioning" and {DRAINED_TAG, "hwaac", "hwaac-fabric-lifecycle"} <= tags
    for otype, oid in (
        ("dcim.device", api.dcim.devices.get(name=link.a_device).id),
        ("dcim.device", api.dcim.devices.get(name=link.b_device).id),
        ("dcim.cable", c.id),
    ):
        (entry,) = journal(api, otype, oid)
        assert entry.kind.value == "warning" and {t.slug for t in entry.tags} == {"hwaac", MITIGATION_TAG}
        text = entry.comments
        assert text.startswith(f"**hwaac mitigation: drain_link {link.cable_id}**")
        assert "Policy rule: lossy-uplink" in text and "Guard: ok - within the guard rails" in text
        assert (
            f"- {link.a_device} {link.a_port} <-> {link.b_device} {link.b_port} (cable {link.cable_id}): "
            "connected -> decommissioning"
        ) in text
        ev = journal_evidence(text)
        assert ev is not None and ev["sweep"] == WHEN.isoformat() and ev["findings"][0]["evidence"] == [EVIDENCE]
        assert ev["links"][0]["a"] == f"{link.a_device}:{link.a_port}"

    # the same sweep recorded again writes nothing and patches nothing
    again = record(nb, action("drain_link", link.cable_id))
    assert {o.journal for o in again.objects} == {"exists"} and not again.changed
    assert set(again.requests) == {"GET"}
    assert len(journal(api, "dcim.cable", c.id)) == 1

    # a later sweep undrains it: connected, the tag off, an info entry on each of the three
    back = record(nb, action("undrain_link", link.cable_id), when=WHEN + timedelta(minutes=30))
    assert [o.status for o in back.objects if o.object_type == "dcim.cable"] == ["decommissioning -> connected"]
    status, tags = state(cable(api, link.cable_id))
    assert status == "connected" and DRAINED_TAG not in tags and "hwaac" in tags
    entries = journal(api, "dcim.device", api.dcim.devices.get(name=link.a_device).id)
    assert [e.kind.value for e in entries] == ["warning", "info"]
    assert entries[1].comments.startswith(f"**hwaac mitigation: undrain_link {link.cable_id}**")
    # only what was carried out and allowed by the guard is recorded
    none = record(
        nb,
        action("drain_link", UPLINKS[4].cable_id, outcome="failed (rc 2)"),
        action("drain_link", UPLINKS[5].cable_id, rule="already"),
        action("notify", UPLINKS[6].cable_id),
    )
    assert none.objects == [] and state(cable(api, UPLINKS[4].cable_id))[0] == "connected"


def test_a_switch_drain_journals_the_switch_and_every_peer_and_drains_each_cable(synced_nb: Instance) -> None:
    nb = synced_nb
    api = pynetbox.api(nb.url, token=nb.token)
    rep = record(nb, action("drain_switch", SPINE))
    devices = [o.name for o in rep.objects if o.object_type == "dcim.device"]
    assert devices == [SPINE, "leaf-p0-su01-r0", "leaf-p0-su01-r1"]
    cables = {o.name: o.status for o in rep.objects if o.object_type == "dcim.cable"}
    assert cables == {lk.cable_id: "connected -> decommissioning" for lk in UPLINKS}
    assert {c.status.value for c in api.dcim.cables.filter(tag=DRAINED_TAG)} == {"decommissioning"}
    assert api.dcim.cables.count(tag=DRAINED_TAG) == len(UPLINKS)
    assert len(journal(api, "dcim.device", api.dcim.devices.get(name="leaf-p0-su01-r1").id)) == 1
    # the switch comes back but one of its links stays drained on its own (keep): that cable stays out
    kept = UPLINKS[2].cable_id
    back = record(nb, action("undrain_switch", SPINE), when=WHEN + timedelta(hours=1), keep={kept})
    assert kept not in {o.name for o in back.objects} and len(back.objects) == 3 + len(UPLINKS) - 1
    assert [c.label for c in api.dcim.cables.filter(tag=DRAINED_TAG)] == [kept]
    assert state(cable(api, kept))[0] == "decommissioning"
    assert {
        c.status.value for c in api.dcim.cables.filter(label=[lk.cable_id for lk in UPLINKS if lk.cable_id != kept])
    } == {"connected"}


def test_a_sync_during_a_drain_keeps_the_cable_drained(synced_nb: Instance) -> None:
    nb, link = synced_nb, UPLINKS[7]
    api = pynetbox.api(nb.url, token=nb.token)
    record(nb, action("drain_link", link.cable_id))
    report = sync_plan(PLAN, nb.url, nb.token)
    assert not report.changes["cables"].updates and not report.changes["cables"].deletes
    status, tags = state(cable(api, link.cable_id))
    assert status == "decommissioning" and DRAINED_TAG in tags and "hwaac" in tags


def test_a_cable_hwaac_does_not_own_is_journalled_but_not_changed(synced_nb: Instance) -> None:
    nb, link = synced_nb, UPLINKS[8]
    api = pynetbox.api(nb.url, token=nb.token)
    c = cable(api, link.cable_id)
    c.tags = []  # a person took it over
    c.save()
    rep = record(nb, action("drain_link", link.cable_id))
    (mine,) = [o for o in rep.objects if o.object_type == "dcim.cable"]
    assert mine.journal == "written" and mine.status == ""
    assert mine.note == "not owned by hwaac: journal only, status left connected"
    assert state(cable(api, link.cable_id)) == ("connected", set())
    (entry,) = journal(api, "dcim.cable", c.id)
    assert "not owned by hwaac: journal only" in entry.comments
    assert len(journal(api, "dcim.device", api.dcim.devices.get(name=link.a_device).id)) == 1


def test_a_dry_run_reads_and_writes_nothing(synced_nb: Instance) -> None:
    nb, link = synced_nb, UPLINKS[9]
    api = pynetbox.api(nb.url, token=nb.token)
    rep = record(nb, action("drain_link", link.cable_id), mode="dry_run")
    assert {o.journal for o in rep.objects} == {"would_write"} and not rep.changed
    assert rep.objects[2].status == "connected -> decommissioning"
    assert set(rep.requests) == {"GET"}
    assert state(cable(api, link.cable_id))[0] == "connected"
    assert api.extras.journal_entries.count() == 0 and api.extras.tags.get(slug=MITIGATION_TAG) is None


def test_a_device_netbox_lacks_stops_before_any_write(synced_nb: Instance) -> None:
    nb, link = synced_nb, UPLINKS[10]
    api = pynetbox.api(nb.url, token=nb.token)
    api.dcim.devices.get(name=link.a_device).delete()
    with pytest.raises(MitigationJournalError, match=rf"{link.a_device}: no such device in site lifecycle-lab"):
        record(nb, action("drain_link", link.cable_id), action("drain_link", UPLINKS[20].cable_id))
    assert api.extras.journal_entries.count() == 0 and state(cable(api, UPLINKS[20].cable_id))[0] == "connected"


def remediate(nb: Instance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> int:
    """``hwaac remediate`` of a lossy UPLINKS[11], the switch steps stubbed as done."""
    from hwaac.mitigation import carry_out

    monkeypatch.setenv("NETBOX_URL", nb.url)
    monkeypatch.setenv("NETBOX_TOKEN", nb.token)
    monkeypatch.setattr(carry_out, "run", lambda *a, **k: (0, str(tmp_path / "ansible.log")))
    cable_id = UPLINKS[11].cable_id
    labels = {
        "alertname": "HwaacFabricSuspect",
        "rule": "probe_path_loss",
        "severity": "fault",
        "kind": "link",
        "component": cable_id,
        "cable": cable_id,
        "device": "",
        "port": "",
        "hosts": "",
    }
    (tmp_path / "alert.json").write_text(
        json.dumps(
            {
                "version": "4",
                "status": "firing",
                "alerts": [
                    {"status": "firing", "labels": labels, "annotations": {}, "startsAt": "2026-12-05T02:59:00Z"}
                ],
            }
        )
    )
    (tmp_path / "policy.yaml").write_text(POLICY)
    return hwaac_main(
        [
            "remediate",
            str(INTENT),
            str(tmp_path / "alert.json"),
            "--state",
            str(tmp_path / "state"),
            "--policy",
            str(tmp_path / "policy.yaml"),
            "--now",
            WHEN.isoformat(),
            "--netbox",
            *extra,
        ]
    )


def test_remediate_apply_netbox_records_the_drain(
    synced_nb: Instance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    nb, link = synced_nb, UPLINKS[11]
    api = pynetbox.api(nb.url, token=nb.token)
    assert remediate(nb, tmp_path, monkeypatch) == 0  # a dry run says what it would record
    out = capsys.readouterr()
    assert (
        f"netbox: would journal drain_link {link.cable_id} on cable {link.cable_id} (status connected -> "
        "decommissioning)" in out.out
    )
    assert api.extras.journal_entries.count() == 0 and nb.token not in out.out + out.err

    assert remediate(nb, tmp_path, monkeypatch, "--apply", "-i", str(tmp_path / "inventory.yml")) == 0
    out = capsys.readouterr()
    assert f"netbox: journalled drain_link {link.cable_id} on device {link.a_device}" in out.out
    assert nb.token not in out.out + out.err
    assert state(cable(api, link.cable_id))[0] == "decommissioning"
    (line,) = [json.loads(x) for x in (tmp_path / "state" / "decisions.jsonl").read_text().splitlines()]
    assert line["outcome"] == "done"


def test_remediate_apply_when_the_journal_fails_keeps_the_drain_and_exits_1(
    synced_nb: Instance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    nb, link = synced_nb, UPLINKS[11]
    api = pynetbox.api(nb.url, token=nb.token)
    from hwaac.netbox.sync import client

    # the journal endpoint answers 404: the real NetBox refuses the POST after the real PATCH of the cable
    monkeypatch.setitem(client.ENDPOINT, "journal-entries", "extras.journal_entries_missing")
    assert remediate(nb, tmp_path, monkeypatch, "--apply", "-i", str(tmp_path / "inventory.yml")) == 1
    err = capsys.readouterr().err
    assert "1 cable status(es) were written but 3 of 3 journal entries were not" in err and nb.token not in err
    (line,) = [json.loads(x) for x in (tmp_path / "state" / "decisions.jsonl").read_text().splitlines()]
    assert line["outcome"].startswith("done; NetBox journal failed: ")
    saved = json.loads((tmp_path / "state" / "state.json").read_text())
    assert f"drain_link|{link.cable_id}" in saved["out"]  # the switch changes stay done
    monkeypatch.undo()
    # recording the sweep again writes the entries and leaves the cable as it is
    rep = record(nb, action("drain_link", link.cable_id))
    assert [o.journal for o in rep.objects] == ["written"] * 3
    assert [o.note for o in rep.objects if o.object_type == "dcim.cable"] == ["already decommissioning"]
    assert "PATCH" not in rep.requests and api.extras.journal_entries.count() == 3


QUARANTINE_POLICY = (
    "guard_rails: {}\nrules:\n  - name: node-link\n"
    "    match: {kinds: [nic, link], link_kinds: [host]}\n    action: quarantine_node\n"
    "    persistence: 1\n"
)


def test_a_fault_on_a_node_link_quarantines_the_node_through_its_lifecycle(
    synced_nb: Instance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    nb = synced_nb
    api = pynetbox.api(nb.url, token=nb.token)
    link = next(lk for lk in PLAN.links if lk.kind == "host")
    labels = {
        "alertname": "HwaacMitigate",
        "rule": "errors_both_ends",
        "severity": "fault",
        "kind": "nic",
        "component": f"{link.a_device} {link.a_port}",
        "cable": link.cable_id,
        "device": link.a_device,
        "port": link.a_port,
        "hosts": link.a_device,
    }
    (tmp_path / "alert.json").write_text(
        json.dumps(
            {
                "version": "4",
                "status": "firing",
                "alerts": [
                    {"status": "firing", "labels": labels, "annotations": {}, "startsAt": "2026-12-05T02:59:00Z"}
                ],
            }
        )
    )
    (tmp_path / "policy.yaml").write_text(QUARANTINE_POLICY)
    args = [
        "remediate",
        str(INTENT),
        str(tmp_path / "alert.json"),
        "--state",
        str(tmp_path / "state"),
        "--policy",
        str(tmp_path / "policy.yaml"),
        "--now",
        WHEN.isoformat(),
        "--format",
        "json",
        "--apply",
        "-i",
        str(tmp_path / "inventory.yml"),
    ]
    from hwaac.health.lifecycle import State
    from hwaac.netbox.lifecycle import TransitionRequest, apply_transitions

    apply_transitions(
        Client(nb.url, nb.token),
        [TransitionRequest(link.a_device, State.PRODUCTION, "qualified", via=State.BURN_IN)],
        mode="enforce",
    )
    before = api.dcim.devices.get(name=link.a_device).status.value
    assert before == "active"

    assert hwaac_main(args) == 1  # without NetBox the node lifecycle cannot move: not carried out, asked again
    out = json.loads(capsys.readouterr().out)
    assert out["outcome"][f"quarantine_node|{link.a_device}"].startswith("not carried out: a quarantine needs")
    assert json.loads((tmp_path / "state" / "state.json").read_text())["out"] == {}
    assert api.dcim.devices.get(name=link.a_device).status.value == before

    monkeypatch.setenv("NETBOX_URL", nb.url)
    monkeypatch.setenv("NETBOX_TOKEN", nb.token)
    assert hwaac_main([*args, "--netbox"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["outcome"][f"quarantine_node|{link.a_device}"] == "done"
    node = api.dcim.devices.get(name=link.a_device)
    assert node.status.value == "offline" and node.custom_fields["hwaac_lifecycle"] == "quarantine"
    (entry,) = api.extras.journal_entries.filter(
        assigned_object_type="dcim.device", assigned_object_id=node.id, tag="hwaac-quarantine"
    )
    assert "network mitigation, policy rule node-link" in entry.comments
    assert journal_evidence(entry.comments)["findings"][0]["code"] == "ERRORS_BOTH_ENDS"
