"""Node lifecycle in NetBox: move GPU nodes between states with a journal entry of evidence for each move.

:func:`apply_transitions` (rules in :mod:`hwaac.health.lifecycle`) refuses, before any write, a device hwaac does
not own, an unknown device or a move the lifecycle does not allow; leaves a device already in the target state
alone; passes quarantines through the circuit breaker; and in ``enforce`` mode patches the devices, then posts the
journal entries, patching the devices back if that fails. ``dry_run`` (the default) writes nothing. The steps, the
journal's Markdown and its ``json`` evidence block (:func:`journal_evidence`): docs/netbox-sync.md "The node
lifecycle". Tokens never appear in messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from hwaac.health.lifecycle import (
    JOURNAL_KIND,
    NETBOX_STATUS,
    TRANSITIONS,
    BreakerDecision,
    BreakerPolicy,
    State,
    TransitionError,
    breaker_decision,
    check_transition,
    state_of,
)
from hwaac.netbox.errors import NetBoxError
from hwaac.netbox.sync.client import Client, SyncError
from hwaac.netbox.sync.desired import OWNER_TAG
from hwaac.netbox.sync.records import ID_CHUNK, tags_of

LIFECYCLE_FIELD = "hwaac_lifecycle"
QUARANTINE_TAG = "hwaac-quarantine"
EXCERPT_CHARS = 4000  # per raw excerpt in a journal entry: enough for the failing lines, not a whole dump
Mode = Literal["dry_run", "enforce"]


class LifecycleError(NetBoxError):
    """The lifecycle change was refused or failed; the message says what NetBox holds now."""


@dataclass
class LinkEnd:
    """One failing link as NetBox records it: the node's interface and the peer at the other end of the cable."""

    interface: str
    peer_device: str = ""
    peer_interface: str = ""
    cable: str = ""  # the cable's label (hwaac's cable id) or id


@dataclass
class Evidence:
    """Why a node moves. Every field is optional; what is given is written to the journal.

    Attributes:
        verdict: PASS | WARN | FAIL | UNKNOWN (the node verdict that caused the move).
        codes: fault codes (``GPU_ROW_REMAP_PENDING``...).
        findings: the findings as dicts (code, status, message, subject, evidence, action).
        raw: tool -> raw output excerpt (cut to 4,000 characters each).
        parsed: JSON-able parsed results that back the verdict.
        gpu_serials / nic_serials: GPU (index or bus id) -> serial; NIC (RDMA device) -> serial.
        failing_interfaces: node interfaces whose link failed (``rail3``); their peers are read from NetBox.
        links: filled by :func:`apply_transitions` from NetBox: both ends of each failing link.
        action: the recommended action (``reset_gpu``, ``rma``...).
    """

    verdict: str = ""
    codes: list[str] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, str] = field(default_factory=dict)
    parsed: dict[str, Any] = field(default_factory=dict)
    gpu_serials: dict[str, str] = field(default_factory=dict)
    nic_serials: dict[str, str] = field(default_factory=dict)
    failing_interfaces: list[str] = field(default_factory=list)
    links: list[LinkEnd] = field(default_factory=list)
    action: str = ""


def evidence_from(raw: dict[str, Any] | None) -> Evidence:
    """:class:`Evidence` from a JSON object (a file, a module argument). ``links`` is NetBox's to fill.

    Raises:
        ValueError: unknown keys, named with the valid ones.
    """
    raw = dict(raw or {})
    known = set(Evidence.__dataclass_fields__) - {"links"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(known))}")
    return Evidence(**raw)


@dataclass
class TransitionRequest:
    """Move ``device`` to ``to``. ``via``: a state the device passes through when it is not there yet and the
    lifecycle allows both steps (burn-in's final move names ``via=burn_in``, so that a dry run that did not write
    the start of burn-in still predicts planned -> burn_in -> quarantine); each step gets its journal entry."""

    device: str
    to: State
    reason: str
    evidence: Evidence = field(default_factory=Evidence)
    via: State | None = None


@dataclass
class Outcome:
    """What happened to one device: ``result`` is ``moved`` | ``unchanged`` | ``would_move`` (dry run) |
    ``blocked`` (circuit breaker)."""

    device: str
    from_state: str
    to_state: str
    result: str
    message: str = ""
    journal_id: int | None = None


@dataclass
class LifecycleReport:
    mode: Mode
    outcomes: list[Outcome]
    breaker: BreakerDecision | None
    requests: dict[str, int]

    @property
    def changed(self) -> bool:
        return any(o.result == "moved" for o in self.outcomes)

    @property
    def alerts(self) -> list[str]:
        return [self.breaker.message] if self.breaker and self.breaker.tripped else []


def read_devices(
    client: Client, names: Sequence[str], fields: str = "id,name,status,serial,tags,custom_fields", **params: Any
) -> dict[str, dict]:
    """name -> record of the named devices (one GET per 150 names; ``params``: more filters, e.g. ``site``)."""
    out: dict[str, dict] = {}
    names = sorted(set(names))
    for i in range(0, len(names), ID_CHUNK):
        for r in client.read("devices", fields, name=names[i : i + ID_CHUNK], **params):
            out[r["name"]] = r
    return out


def _status(rec: dict) -> str | None:
    st = rec.get("status")
    return st.get("value") if isinstance(st, dict) else str(st or "")


def ensure_catalogue(client: Client) -> None:
    """Create the custom field ``hwaac_lifecycle`` (text, on devices) and the tag ``hwaac-quarantine`` if missing.

    Both are hwaac's: created once, never changed after."""
    client.ensure(
        "custom-fields",
        "name",
        {
            "name": LIFECYCLE_FIELD,
            "label": "Lifecycle (hwaac)",
            "type": "text",
            "object_types": ["dcim.device"],
            "group_name": "hwaac",
            "validation_regex": "^(" + "|".join(s.value for s in State) + ")$",
            "description": "The node's lifecycle state as hwaac keeps it (planned, burn_in, production, "
            "quarantine, rma, returned)",
        },
    )
    ensure_tag(client, QUARANTINE_TAG, "ff9800", "hwaac journal entry of a quarantine (counted by the circuit breaker)")


def ensure_tag(client: Client, slug: str, color: str, description: str) -> None:
    """Create the tag ``slug`` (named as its slug) if NetBox lacks it; an existing one is left as it is."""
    client.ensure("tags", "slug", {"name": slug, "slug": slug, "color": color, "description": description})


def _pool_ids(client: Client, pool: Sequence[str] | None, fabric: str | None) -> dict[int, str]:
    if pool:
        return {r["id"]: name for name, r in read_devices(client, pool).items()}
    if fabric:
        recs = client.read("devices", "id,name", tag=f"hwaac-fabric-{fabric}", role="gpu-node")
        return {r["id"]: r["name"] for r in recs}
    raise LifecycleError("quarantine needs a pool for the circuit breaker: give the pool's devices or the fabric")


def _recent_quarantines(client: Client, ids: Iterable[int], since: datetime) -> list[datetime]:
    ids = set(ids)
    if not client.read("tags", "id", slug=QUARANTINE_TAG):
        return []  # no quarantine was ever recorded here (NetBox refuses a filter on a tag it does not know)
    recs = client.read(
        "journal-entries",
        "id,assigned_object_id,created",
        tag=QUARANTINE_TAG,
        assigned_object_type="dcim.device",
        created__gte=since.isoformat(),
    )
    return [
        datetime.fromisoformat(r["created"].replace("Z", "+00:00")) for r in recs if r.get("assigned_object_id") in ids
    ]


def _link_ends(client: Client, device_id: int, names: list[str]) -> list[LinkEnd]:
    ends = []
    recs = {
        r["name"]: r for r in client.read("interfaces", "id,name,cable,link_peers", device_id=device_id, name=names)
    }
    for name in names:
        r = recs.get(name)
        if r is None:
            ends.append(LinkEnd(name, cable="(no such interface in NetBox)"))
            continue
        peers = r.get("link_peers") or []
        peer = peers[0] if peers else {}
        cable = r.get("cable") or {}
        ends.append(
            LinkEnd(
                name,
                ((peer.get("device") or {}).get("name") or ""),
                peer.get("name") or "",
                str(cable.get("label") or cable.get("id") or "") if cable else "(not cabled)",
            )
        )
    return ends


def _unprefixed(message: str, subject: str) -> str:
    """Parsers' messages may start with their subject; the journal line names it already."""
    return message[len(subject) + 1 :].lstrip() if subject and message.startswith(subject + ":") else message


def journal_text(device: str, current: State | None, req: TransitionRequest, serial: str) -> str:
    """The Markdown comment of one lifecycle journal entry (see the module docstring)."""
    ev = req.evidence
    lines = [f"**hwaac lifecycle: {current.value if current else '?'} -> {req.to.value}**", "", f"Reason: {req.reason}"]
    if ev.verdict:
        lines.append(f"Verdict: {ev.verdict}" + (f"; fault codes: {', '.join(ev.codes)}" if ev.codes else ""))
    if ev.action:
        lines.append(f"Recommended action: {ev.action}")
    if serial:
        lines.append(f"Node serial: {serial}")
    for title, serials in (("GPU serials", ev.gpu_serials), ("NIC serials", ev.nic_serials)):
        if serials:
            lines.append(f"{title}: " + ", ".join(f"{k} {v}" for k, v in sorted(serials.items())))
    if ev.links:
        lines += ["", "Failing links (both ends):"]
        lines += [
            f"- {device} {e.interface} <-> {e.peer_device or '?'} {e.peer_interface or '?'} (cable {e.cable})"
            for e in ev.links
        ]
    if ev.findings:
        lines += ["", "Findings:"]
        lines += [
            f"- {f.get('status', '')} {f.get('code', '')} {f.get('subject', '')}: "
            f"{_unprefixed(f.get('message', ''), f.get('subject', ''))}"
            for f in ev.findings
        ]
    for tool, text in sorted(ev.raw.items()):
        cut = text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "\n[... cut]"
        lines += ["", f"Raw output ({tool}):", "```", cut.replace("```", "'''"), "```"]
    return "\n".join(lines + evidence_block(asdict(ev)))


def evidence_block(evidence: Any) -> list[str]:
    """The closing lines of a journal comment: ``evidence`` as the fenced ``json`` block that
    :func:`journal_evidence` reads back."""
    return ["", "Evidence:", "```json", json.dumps(evidence, sort_keys=True, default=str), "```"]


def journal_evidence(comments: str) -> dict[str, Any] | None:
    """The evidence JSON of a journal entry written by hwaac (``None`` when the comment has none)."""
    marker = "Evidence:\n```json\n"
    at = comments.rfind(marker)
    if at < 0:
        return None
    body = comments[at + len(marker) :].split("\n```", 1)[0]
    try:
        return json.loads(body)
    except ValueError:
        return None


def apply_transitions(
    client: Client,
    requests: Sequence[TransitionRequest],
    *,
    mode: Mode = "dry_run",
    fabric: str | None = None,
    pool: Sequence[str] | None = None,
    breaker: BreakerPolicy | None = None,
    now: datetime | None = None,
) -> LifecycleReport:
    """Move devices between lifecycle states in NetBox (module docstring: steps, safety, idempotence).

    Args:
        client: a :class:`hwaac.netbox.sync.client.Client`.
        requests: one per device (a device named twice is an error).
        mode: ``dry_run`` (default: read, decide and report; write nothing) or ``enforce``.
        fabric: when given, every device must carry ``hwaac-fabric-<fabric>``; also the default breaker pool
            (the fabric's GPU nodes).
        pool: the circuit breaker's pool (device names), e.g. the SU's nodes; default: the fabric's GPU nodes.
        breaker: the cap and window; ``now``: the clock (UTC), for tests.

    Raises:
        LifecycleError: an unknown or unowned device, a transition not allowed, a device named twice (nothing
            written); or a failed write (the message says what NetBox holds now).
        hwaac.netbox.sync.client.SyncError: NetBox unreachable or the token refused.
    """
    now = now or datetime.now(UTC)
    breaker = breaker or BreakerPolicy()
    names = [r.device for r in requests]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise LifecycleError(f"devices named more than once: {', '.join(dupes)}")
    devices = read_devices(client, names)
    problems: list[str] = []
    moves: list[tuple[TransitionRequest, dict, State | None]] = []
    steps: dict[str, list[tuple[State | None, State]]] = {}
    outcomes: list[Outcome] = []
    for req in requests:
        rec = devices.get(req.device)
        if rec is None:
            problems.append(f"{req.device}: no such device in NetBox")
            continue
        tags = tags_of(rec)
        if OWNER_TAG not in tags or (fabric and f"hwaac-fabric-{fabric}" not in tags):
            need = OWNER_TAG + (f" and hwaac-fabric-{fabric}" if fabric else "")
            problems.append(
                f"{req.device}: not owned by hwaac (tags: {', '.join(sorted(tags)) or 'none'}; "
                f"needs {need}); hwaac changes only devices it owns"
            )
            continue
        current = state_of(_status(rec), (rec.get("custom_fields") or {}).get(LIFECYCLE_FIELD))
        try:
            if (
                req.via is not None
                and current is not None
                and current not in (req.to, req.via)
                and req.via in TRANSITIONS[current]
                and req.to in TRANSITIONS[req.via]
            ):
                moves.append((req, rec, current))
                steps[req.device] = [(current, req.via), (req.via, req.to)]
            elif check_transition(req.device, current, req.to):
                moves.append((req, rec, current))
                steps[req.device] = [(current, req.to)]
            else:
                outcomes.append(Outcome(req.device, req.to.value, req.to.value, "unchanged", f"already {req.to.value}"))
        except TransitionError as exc:
            problems.append(str(exc))
    if problems:
        raise LifecycleError(
            f"{len(problems)} lifecycle change(s) refused; nothing written:\n  " + "\n  ".join(problems)
        )

    decision = None
    quarantines = [m for m in moves if m[0].to is State.QUARANTINE]
    if quarantines:
        ids = _pool_ids(client, pool, fabric)
        recent = _recent_quarantines(client, ids, now - breaker.window)
        decision = breaker_decision(breaker, len(ids), recent, len(quarantines), now)
        if decision.tripped:
            for req, _rec, current in quarantines:
                outcomes.append(
                    Outcome(req.device, current.value if current else "?", req.to.value, "blocked", decision.message)
                )
            moves = [m for m in moves if m[0].to is not State.QUARANTINE]

    for req, rec, _current in moves:
        if req.evidence.failing_interfaces:
            req.evidence.links = _link_ends(client, rec["id"], req.evidence.failing_interfaces)

    if mode == "dry_run" or not moves:
        outcomes += [
            Outcome(
                req.device,
                cur.value if cur else "?",
                req.to.value,
                "would_move" if mode == "dry_run" else "moved",
                req.reason,
            )
            for req, _r, cur in moves
        ]
        return LifecycleReport(mode, sorted(outcomes, key=lambda o: o.device), decision, dict(client.requests))

    ensure_catalogue(client)
    patch = [
        {"id": rec["id"], "status": NETBOX_STATUS[req.to], "custom_fields": {LIFECYCLE_FIELD: req.to.value}}
        for req, rec, _cur in moves
    ]
    undo = [
        {
            "id": rec["id"],
            "status": _status(rec),
            "custom_fields": {LIFECYCLE_FIELD: (rec.get("custom_fields") or {}).get(LIFECYCLE_FIELD)},
        }
        for _req, rec, _cur in moves
    ]
    entries = [
        {
            "assigned_object_type": "dcim.device",
            "assigned_object_id": rec["id"],
            "kind": JOURNAL_KIND[to],
            "comments": journal_text(req.device, frm, replace(req, to=to), rec.get("serial") or ""),
            "tags": [{"slug": OWNER_TAG}] + ([{"slug": QUARANTINE_TAG}] if to is State.QUARANTINE else []),
        }
        for req, rec, _cur in moves
        for frm, to in steps[req.device]
    ]
    devices_ep, journal_ep = client.endpoint("devices"), client.endpoint("journal-entries")
    client.call("PATCH", "devices", lambda: devices_ep.update(patch))
    try:
        created = client.call("POST", "journal entries", lambda: journal_ep.create(entries))
    except SyncError as exc:
        moved = ", ".join(req.device for req, _r, _c in moves)
        try:
            client.call("PATCH", "devices", lambda: devices_ep.update(undo))
        except SyncError as undo_exc:
            raise LifecycleError(
                f"{exc}; the devices were moved but have no journal entry and could not be "
                f"moved back ({undo_exc}): {moved}"
            ) from None
        raise LifecycleError(f"{exc}; the devices were moved back, NetBox is as before: {moved}") from None
    journal_ids = iter(getattr(c, "id", None) for c in (created if isinstance(created, list) else [created]))
    for req, _rec, cur in moves:
        jid = [next(journal_ids, None) for _step in steps[req.device]][-1]  # the entry of the last step
        outcomes.append(Outcome(req.device, cur.value if cur else "?", req.to.value, "moved", req.reason, jid))
    return LifecycleReport(mode, sorted(outcomes, key=lambda o: o.device), decision, dict(client.requests))


def device_record(client: Client, device: str) -> dict[str, str] | None:
    """What an RMA report says of the device: ``{"name", "serial", "site", "status", "device_type", "lifecycle"}``
    (None when NetBox has no such device)."""
    recs = client.read("devices", "id,name,serial,site,status,device_type,custom_fields", name=device)
    if not recs:
        return None
    r = recs[0]
    return {
        "name": r["name"],
        "serial": r.get("serial") or "",
        "site": (r.get("site") or {}).get("name", ""),
        "status": (r.get("status") or {}).get("value", ""),
        "device_type": (r.get("device_type") or {}).get("model", ""),
        "lifecycle": (r.get("custom_fields") or {}).get(LIFECYCLE_FIELD) or "",
    }


def device_journal(client: Client, device: str) -> list[dict[str, Any]]:
    """hwaac's journal entries of a device, oldest first: ``[{id, created, kind, comments, evidence}]``."""
    recs = read_devices(client, [device])
    if device not in recs:
        raise LifecycleError(f"{device}: no such device in NetBox")
    entries = client.read(
        "journal-entries",
        "id,created,kind,comments",
        assigned_object_type="dcim.device",
        assigned_object_id=recs[device]["id"],
        tag=OWNER_TAG,
        ordering="created",
    )
    return [
        {
            "id": e["id"],
            "created": e["created"],
            "kind": (e.get("kind") or {}).get("value", e.get("kind")),
            "comments": e["comments"],
            "evidence": journal_evidence(e.get("comments") or ""),
        }
        for e in entries
    ]
