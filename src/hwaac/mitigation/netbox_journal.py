"""Network mitigation in NetBox: what ``hwaac remediate --apply`` carried out, recorded on the devices and cables.

:func:`record_actions` takes each drain or undrain that was carried out (outcome ``done``, guard rule ``ok``),
reads the devices and cables of its links from NetBox (a cable found by its ends, as the sync keys cables), writes
a journal entry with the evidence as a fenced ``json`` block (:func:`hwaac.netbox.lifecycle.journal_evidence`
reads it back) on each device and cable, and sets the status of each cable the fabric owns (``decommissioning``
with the tag ``hwaac-drained``, or ``connected`` again). Idempotent; ``dry_run`` (the default) only reads. The
steps, what a cable hwaac does not own gets, and how a sync leaves a drained cable: docs/mitigation.md "NetBox".
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from hwaac.mitigation import guard
from hwaac.netbox.errors import NetBoxError
from hwaac.netbox.lifecycle import ensure_tag, evidence_block, journal_evidence, read_devices
from hwaac.netbox.sync.client import Client, SyncError
from hwaac.netbox.sync.desired import OWNER_TAG, fabric_tag
from hwaac.netbox.sync.records import ID_CHUNK, by_length, choice_value, chunks, tags_of
from hwaac.plan.model import Link, Plan

MITIGATION_TAG = "hwaac-mitigation"  # on every journal entry of a drain or undrain
DRAINED_TAG = "hwaac-drained"  # on a cable hwaac set to decommissioning because it drained the link
CONNECTED, DECOMMISSIONING = "connected", "decommissioning"
ENTRY_CHUNK = 500
Mode = Literal["dry_run", "enforce"]


class MitigationJournalError(NetBoxError):
    """Recording in NetBox was refused or failed; the message says what NetBox holds now."""


@dataclass
class Written:
    """What one object got for one action: ``journal`` is ``written``, ``would_write`` (dry run) or ``exists``
    (this sweep wrote it before); ``status`` a cable's change (``connected -> decommissioning``, or empty when it
    is left); ``note`` why a cable was left (not owned, already so)."""

    action: str
    target: str
    object_type: str  # dcim.device | dcim.cable
    name: str
    object_id: int
    journal: str
    status: str = ""
    note: str = ""
    journal_id: int | None = None


@dataclass
class MitigationReport:
    mode: Mode
    objects: list[Written] = field(default_factory=list)
    requests: dict[str, int] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return self.mode == "enforce" and any(o.journal == "written" or o.status for o in self.objects)

    def lines(self) -> list[str]:
        """One line per object and action, for ``hwaac remediate``."""
        verb = {"written": "journalled", "would_write": "would journal", "exists": "already journalled"}
        out = []
        for o in self.objects:
            what = f"{o.object_type.split('.')[1]} {o.name}"
            extra = "; ".join(x for x in (f"status {o.status}" if o.status else "", o.note) if x)
            out.append(f"netbox: {verb[o.journal]} {o.action} {o.target} on {what}" + (f" ({extra})" if extra else ""))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "objects": [asdict(o) for o in self.objects], "requests": self.requests}


def _cables(client: Client, devices: Mapping[str, dict], links: Sequence[Link]) -> tuple[dict[str, dict], list[str]]:
    """cable id of the plan -> the NetBox cable between its two ends ({id, label, status, tags}), and what is
    missing."""
    ends = {(d, p) for link in links for d, p in ((link.a_device, link.a_port), (link.b_device, link.b_port))}
    ids = sorted({devices[d]["id"] for d, _p in ends})
    at: dict[tuple[str | None, str], int] = {}  # (device name, port): cable id; a port of no device: None
    for part in chunks(ids, 50):  # device ids and port names stay well within a request line
        for names in by_length(sorted({p for _d, p in ends}), 1500):
            for r in client.read("interfaces", "id,name,device,cable", device_id=part, name=names):
                if isinstance(r.get("cable"), dict):
                    at[((r.get("device") or {}).get("name"), r["name"])] = r["cable"]["id"]
    recs = {
        r["id"]: r
        for part in chunks(sorted(set(at.values())), ID_CHUNK)
        for r in client.read("cables", "id,label,status,tags", id=part)
    }
    out, missing = {}, []
    for link in links:
        a, b = at.get((link.a_device, link.a_port)), at.get((link.b_device, link.b_port))
        if a is None or a != b or a not in recs:
            missing.append(
                f"cable {link.cable_id}: NetBox has no cable between {link.a_device}:{link.a_port} and "
                f"{link.b_device}:{link.b_port}"
            )
        else:
            out[link.cable_id] = recs[a]
    return out, missing


def _journalled(client: Client, sweep: str) -> set[tuple[object, object, object, object]]:
    """(action, target, object type, object id) of the entries this sweep already wrote, as they read back."""
    if not client.read("tags", "id", slug=MITIGATION_TAG):
        return set()  # nothing was ever recorded here (NetBox refuses a filter on a tag it does not know)
    out: set[tuple[object, object, object, object]] = set()
    for r in client.read(
        "journal-entries",
        "id,assigned_object_type,assigned_object_id,comments",
        tag=MITIGATION_TAG,
        q=f"Sweep: {sweep}",
    ):
        ev = journal_evidence(r.get("comments") or "") or {}
        if ev.get("sweep") == sweep:
            out.add((ev.get("action"), ev.get("target"), r.get("assigned_object_type"), r.get("assigned_object_id")))
    return out


def cable_change(action: str, status: str, tags: set[str], owner_tags: Sequence[str]) -> tuple[str, set[str], str]:
    """(status, tags, note) of a cable after ``action``: the same status and tags, with a note, when it is left."""
    if not set(owner_tags) <= tags:
        return status, tags, f"not owned by hwaac: journal only, status left {status}"
    if action.startswith("drain"):
        if status == DECOMMISSIONING:
            return (
                status,
                tags,
                "already decommissioning"
                if DRAINED_TAG in tags
                else "decommissioning already, not set by hwaac: left as is",
            )
        return DECOMMISSIONING, tags | {DRAINED_TAG}, ""
    if DRAINED_TAG not in tags:
        return status, tags, f"not drained by hwaac: status left {status}"
    return CONNECTED, tags - {DRAINED_TAG}, ""


def journal_comments(act: Mapping[str, Any], sweep: str, links: Sequence[tuple[Link, str, str]]) -> str:
    """The Markdown comment of one action's entries; ``links``: (link, NetBox label, what became of the cable)."""
    lines = [
        f"**hwaac mitigation: {act['action']} {act['target']}**",
        "",
        f"Sweep: {sweep}",
        f"Policy rule: {act.get('policy_rule') or '-'}",
        f"Guard: {act.get('rule')} - {act.get('reason', '')}"
        + (f" (scope {act['scope']})" if act.get("scope") else ""),
        "",
        "Links (both ends):",
    ]
    lines += [
        f"- {lk.a_device} {lk.a_port} <-> {lk.b_device} {lk.b_port} (cable {label}): {what}"
        for lk, label, what in links
    ]
    findings = act.get("findings") or []
    if findings:
        lines += ["", "Findings:"]
        for f in findings:
            names = f.get("component") or f.get("cable") or f"{f.get('device', '')} {f.get('port', '')}".strip()
            lines.append(f"- {f.get('severity', '')} {f.get('rule', '')} {f.get('kind', '')} {names}")
    evidence = {
        "action": act["action"],
        "target": act["target"],
        "sweep": sweep,
        "policy_rule": act.get("policy_rule", ""),
        "rule": act.get("rule"),
        "reason": act.get("reason", ""),
        "scope": act.get("scope", ""),
        "inputs": act.get("inputs", {}),
        "findings": findings,
        "links": [
            {
                "a": f"{lk.a_device}:{lk.a_port}",
                "b": f"{lk.b_device}:{lk.b_port}",
                "cable": label,
                "cable_id": lk.cable_id,
                "outcome": what,
            }
            for lk, label, what in links
        ],
    }
    return "\n".join(lines + evidence_block(evidence))


def record_actions(
    client: Client,
    plan: Plan,
    actions: Sequence[Mapping[str, Any]],
    *,
    when: datetime,
    mode: Mode = "dry_run",
    keep: Collection[str] = (),
) -> MitigationReport:
    """Record in NetBox the drains and undrains a sweep carried out (module docstring: what, idempotence).

    Args:
        client: a :class:`hwaac.netbox.sync.client.Client`.
        plan: the fabric's plan (links, the site).
        actions: ``Action.to_dict()`` each, plus ``"outcome"``; only drains and undrains with outcome ``done``
            and rule ``ok`` are recorded.
        when: the sweep's time (with a time zone); with action and target, what makes an entry the same one.
        mode: ``dry_run`` (default: read and report, write nothing) or ``enforce``.
        keep: cables that stay drained whatever an undrain says (drained on their own, or to a drained switch):
            a switch's undrain leaves them out of its record.

    Raises:
        MitigationJournalError: a device or cable NetBox lacks (nothing written), or the entries failed after the
            cables were patched (the message says so).
        hwaac.netbox.sync.client.SyncError: NetBox unreachable, the token refused, a write refused.
    """
    if when.tzinfo is None:
        raise ValueError("when: the sweep time needs a time zone")
    sweep = when.astimezone(UTC).isoformat()
    todo = [
        a for a in actions if a.get("outcome") == "done" and a.get("rule") == "ok" and a.get("action") in guard.ACTIONS
    ]
    report = MitigationReport(mode)
    if not todo:
        report.requests = dict(client.requests)
        return report
    acted = [(a, guard.links_of(plan, a["action"], a["target"])) for a in todo]
    problems = [
        f"{a['action']} {a['target']}: no such link or switch-to-switch links in the plan"
        for a, links in acted
        if not links
    ]
    acted = [
        (a, [lk for lk in links if a["action"].startswith("drain") or lk.cable_id not in keep]) for a, links in acted
    ]
    acted = [(a, links) for a, links in acted if links]
    all_links = list({lk.cable_id: lk for _a, links in acted for lk in links}.values())
    names = {d for lk in all_links for d in (lk.a_device, lk.b_device)}
    site = plan.intent.fabric.site
    devices = read_devices(client, sorted(names), "id,name", site=site)
    problems += [f"{d}: no such device in site {site} in NetBox" for d in sorted(names - set(devices))]
    cables, missing = _cables(client, devices, [lk for lk in all_links if {lk.a_device, lk.b_device} <= set(devices)])
    problems += missing
    if problems:
        raise MitigationJournalError(
            f"{len(problems)} mitigation record(s) cannot be written; nothing written:\n  " + "\n  ".join(problems)
        )
    done = _journalled(client, sweep)
    owner = (OWNER_TAG, fabric_tag(plan))
    start = {cid: (str(choice_value(r.get("status")) or ""), tags_of(r)) for cid, r in cables.items()}
    now = dict(start)  # each cable as the actions so far leave it
    entries: list[dict[str, Any]] = []
    for act, links in acted:
        rows = []  # (link, label, status change, note)
        for lk in links:
            (before, had), label = now[lk.cable_id], cables[lk.cable_id].get("label") or str(cables[lk.cable_id]["id"])
            status, tags, note = cable_change(act["action"], before, had, owner)
            now[lk.cable_id] = (status, tags)
            change = (
                ""
                if note
                else f"{before} -> {status}"
                if status != before
                else f"{status}, tag {DRAINED_TAG} {'added' if DRAINED_TAG in tags else 'removed'}"
            )
            rows.append((lk, label, change, note))
        text = journal_comments(act, sweep, [(lk, label, change or note) for lk, label, change, note in rows])
        first = [act["target"]] if act["action"] in (guard.DRAIN_SWITCH, guard.UNDRAIN_SWITCH) else []
        objects = [
            ("dcim.device", d, devices[d]["id"], "", "")
            for d in dict.fromkeys(first + [d for lk in links for d in (lk.a_device, lk.b_device)])
        ]
        objects += [("dcim.cable", label, cables[lk.cable_id]["id"], change, note) for lk, label, change, note in rows]
        for otype, name, oid, change, note in objects:
            seen = (act["action"], act["target"], otype, oid) in done
            report.objects.append(
                Written(
                    act["action"],
                    act["target"],
                    otype,
                    name,
                    oid,
                    "exists" if seen else "written" if mode == "enforce" else "would_write",
                    change,
                    note,
                )
            )
            if not seen:
                entries.append(
                    {
                        "assigned_object_type": otype,
                        "assigned_object_id": oid,
                        "kind": "warning" if act["action"].startswith("drain") else "info",
                        "comments": text,
                        "tags": [{"slug": OWNER_TAG}, {"slug": MITIGATION_TAG}],
                    }
                )
    patch = [
        {"id": cables[cid]["id"], "status": st, "tags": [{"slug": t} for t in sorted(tags)]}
        for cid, (st, tags) in now.items()
        if (st, tags) != start[cid]
    ]
    if mode == "enforce" and (patch or entries):
        _write(client, patch, entries, report)
    report.requests = dict(client.requests)
    return report


def _write(client: Client, patch: list[dict], entries: list[dict], report: MitigationReport) -> None:
    """Patch the cables, then post the entries (ids into ``report``)."""
    ensure_tag(client, MITIGATION_TAG, "ff5722", "hwaac journal entry of a network drain or undrain")
    ensure_tag(client, DRAINED_TAG, "ffc107", "cable drained by hwaac mitigation (BGP sessions shut at both ends)")
    if patch:
        ep = client.endpoint("cables")
        client.call("PATCH", "cables", lambda: ep.update(patch))
    ids: list[int | None] = []
    ep = client.endpoint("journal-entries")
    try:
        for part in chunks(entries, ENTRY_CHUNK):
            created = client.call("POST", "journal-entries", functools.partial(ep.create, part))
            ids += [getattr(c, "id", None) for c in (created if isinstance(created, list) else [created])]
    except SyncError as exc:
        raise MitigationJournalError(
            f"{exc}; {len(patch)} cable status(es) were written but {len(entries) - len(ids)} of {len(entries)} "
            "journal entries were not: record the sweep again to write them"
        ) from None
    it = iter(ids)
    for o in report.objects:
        if o.journal == "written":
            o.journal_id = next(it, None)


__all__ = [
    "CONNECTED",
    "DECOMMISSIONING",
    "DRAINED_TAG",
    "MITIGATION_TAG",
    "MitigationJournalError",
    "MitigationReport",
    "Written",
    "cable_change",
    "journal_comments",
    "record_actions",
]
