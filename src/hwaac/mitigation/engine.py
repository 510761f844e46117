"""One remediation sweep: findings through the policy and the guard rails to actions, with the state that carries
persistence, hold-down and re-check from sweep to sweep, and the decision log. Pure but for :class:`Store`, which
reads and writes the state folder. Why: ``docs/mitigation.md``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hwaac.fileio import write_atomic
from hwaac.mitigation import guard
from hwaac.mitigation.findings import Finding, Targets, dedupe
from hwaac.mitigation.policy import MANUAL, Policy, PolicyRule

QUARANTINE, NOTIFY = "quarantine_node", "notify"
DRAINS = {guard.DRAIN_LINK: guard.UNDRAIN_LINK, guard.DRAIN_SWITCH: guard.UNDRAIN_SWITCH}
STATE_VERSION = 1


@dataclass
class Out:
    """A target mitigation took out of service: since when, by which policy rule, clean sweeps since. ``manual``:
    a person drained it (or took over a drain) with ``note`` as the reason; only a person puts it back."""

    action: str
    target: str
    rule: str
    since: datetime
    clean: int = 0
    evidence: list[dict[str, Any]] = field(default_factory=list)
    manual: bool = False
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = {
            "action": self.action,
            "target": self.target,
            "rule": self.rule,
            "since": self.since.isoformat(),
            "clean": self.clean,
            "evidence": self.evidence,
        }
        return {**out, "manual": True, "note": self.note} if self.manual else out


@dataclass
class State:
    """What carries over between sweeps: streaks of findings seen in a row, what is out, the drains made (for the
    rate limits) and the breaker."""

    streaks: dict[str, int] = field(default_factory=dict)  # "action|target" -> sweeps in a row
    out: dict[str, Out] = field(default_factory=dict)  # "action|target" -> Out
    acted: list[tuple[datetime, str]] = field(default_factory=list)
    tripped_at: datetime | None = None
    sweeps: int = 0

    def out_of_service(self) -> guard.OutOfService:
        return guard.OutOfService(
            links={o.target for o in self.out.values() if o.action == guard.DRAIN_LINK},
            switches={o.target for o in self.out.values() if o.action == guard.DRAIN_SWITCH},
            acted=list(self.acted),
            tripped_at=self.tripped_at,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "sweeps": self.sweeps,
            "streaks": dict(sorted(self.streaks.items())),
            "out": {k: o.to_dict() for k, o in sorted(self.out.items())},
            "acted": [[t.isoformat(), s] for t, s in self.acted],
            "tripped_at": self.tripped_at.isoformat() if self.tripped_at else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> State:
        if data.get("version") != STATE_VERSION:
            raise ValueError(f"version: {data.get('version')!r} is not {STATE_VERSION}")
        out = {
            k: Out(
                v["action"],
                v["target"],
                v["rule"],
                datetime.fromisoformat(v["since"]),
                int(v["clean"]),
                list(v.get("evidence", [])),
                bool(v.get("manual", False)),
                str(v.get("note", "")),
            )
            for k, v in data.get("out", {}).items()
        }
        tripped = data.get("tripped_at")
        return cls(
            streaks={k: int(v) for k, v in data.get("streaks", {}).items()},
            out=out,
            acted=[(datetime.fromisoformat(t), s) for t, s in data.get("acted", [])],
            tripped_at=datetime.fromisoformat(tripped) if tripped else None,
            sweeps=int(data.get("sweeps", 0)),
        )


@dataclass(frozen=True)
class Action:
    """One decision of a sweep: the guard's (or the policy's) verdict on an action, the policy rule and the findings
    behind it. ``act`` says whether something is to be carried out. ``note``: a person's reason (policy rule
    ``manual``)."""

    decision: guard.Decision
    policy_rule: str = ""
    findings: tuple[Finding, ...] = ()
    note: str = ""

    @property
    def act(self) -> bool:
        """Whether to carry it out: allowed and changing something, or a person's request (carried out again when
        already so: the switches come to match it, and nothing changes where they do)."""
        return self.decision.allowed and (self.decision.rule in ("ok", "notify") or self.policy_rule == MANUAL)

    def to_dict(self) -> dict[str, Any]:
        out = self.decision.to_dict()
        out["policy_rule"] = self.policy_rule
        out["findings"] = [
            {
                "rule": f.rule,
                "severity": f.severity,
                "kind": f.kind,
                "component": f.component,
                "cable": f.cable,
                "device": f.device,
                "port": f.port,
                "evidence": list(f.evidence),
            }
            for f in self.findings
        ]
        if self.note:
            out["note"] = self.note
        return out


def _wanted(
    policy: Policy, targets: Targets, findings: Sequence[Finding]
) -> dict[str, tuple[str, str, PolicyRule, list[Finding]]]:
    """``action|target`` -> (action, target, policy rule, findings) for every finding a policy rule matches."""
    out: dict[str, tuple[str, str, PolicyRule, list[Finding]]] = {}
    for f in dedupe(findings):
        link = targets.link(f)
        rule = policy.rule_for(f.rule, f.severity, f.kind, link.kind if link else None)
        if rule is None:
            continue
        if rule.action in (guard.DRAIN_LINK, NOTIFY) and link is not None:
            names = [link.cable_id]
        elif rule.action == guard.DRAIN_SWITCH:
            names = [s for s in (targets.switch(f),) if s]
        elif rule.action == QUARANTINE:
            names = targets.nodes_of(f)
        else:
            names = [f.component or f.device]
        for name in names:
            key = f"{rule.action}|{name}"
            out.setdefault(key, (rule.action, name, rule, []))[3].append(f)
    return out


def sweep(
    policy: Policy, fabric: guard.Fabric, targets: Targets, state: State, findings: Sequence[Finding], now: datetime
) -> list[Action]:
    """Decide one sweep; ``state`` is updated as if every allowed action were carried out (the caller keeps the old
    state on a dry run, or when carrying out fails)."""
    rails = policy.rails()
    wanted = _wanted(policy, targets, findings)
    state.sweeps += 1
    state.streaks = {k: state.streaks.get(k, 0) + 1 for k in wanted}
    actions: list[Action] = []
    out = state.out_of_service()
    for key, (action, target, rule, found) in wanted.items():
        streak = state.streaks[key]
        if key in state.out:
            state.out[key].clean = 0
            continue
        if streak < rule.persistence:
            d = guard.Decision(
                action,
                target,
                False,
                "persistence",
                f"seen in {streak} sweep(s) in a row, acting after {rule.persistence}",
                "",
                {"streak": streak, "persistence": rule.persistence},
            )
        elif action in DRAINS:
            d = guard.decide(fabric, rails, out, action, target, now)
        elif action == QUARANTINE:
            d = guard.Decision(
                action,
                target,
                True,
                "ok",
                "the fault is on the node's side: quarantine it (the node lifecycle's breaker decides)",
                target,
            )
        else:
            d = guard.Decision(action, target, True, "notify", "the policy only reports this finding", target)
        actions.append(Action(d, rule.name, tuple(found)))
        if d.allowed and d.rule == "ok":
            guard.record(out, d, now)
            state.out[key] = Out(action, target, rule.name, now, evidence=[e for f in found for e in f.evidence][:8])
    state.tripped_at = out.tripped_at
    for key, o in list(state.out.items()):
        if key in wanted or o.manual:  # a person put it out: a person puts it back
            continue
        o.clean += 1
        kept_by = next((r for r in policy.rules if r.name == o.rule), None)
        if o.action == QUARANTINE:
            if kept_by is None or o.clean >= kept_by.recheck_sweeps:
                del state.out[key]  # the node comes back through burn-in; a new fault quarantines it again
            continue
        if kept_by is None or not kept_by.auto_undrain:
            continue
        held = (now - o.since).total_seconds()
        if held < kept_by.hold_down_s or o.clean < kept_by.recheck_sweeps:
            why = (
                f"held {held:.0f} s of hold_down_s {kept_by.hold_down_s:g}"
                if held < kept_by.hold_down_s
                else f"clean in {o.clean} sweep(s) of recheck_sweeps {kept_by.recheck_sweeps}"
            )
            actions.append(
                Action(
                    guard.Decision(
                        DRAINS[o.action],
                        o.target,
                        False,
                        "hold_down",
                        why,
                        "",
                        {"held_s": round(held, 1), "clean": o.clean},
                    ),
                    o.rule,
                )
            )
            continue
        d = guard.decide(fabric, rails, out, DRAINS[o.action], o.target, now)
        actions.append(Action(d, o.rule))
        guard.record(out, d, now)
        del state.out[key]
    state.acted = list(out.acted)
    return actions


def drained_again(
    state: State, undrain: Action, cable: str, detail: str, now: datetime, prior: Out | None = None
) -> Action:
    """A link ``undrain`` opened failed its re-check and was shut again: it is out again from ``now`` (the hold-down
    starts over), owned as ``prior`` (what was out before the undrain: the link, or its switch) was, else by the
    undrain's policy rule, the re-check first in its evidence. Returns the decision that says so, to log and record
    beside the undrain."""
    d = undrain.decision
    why = f"the re-check before {d.action} {d.target} failed: {detail}"
    rule = prior.rule if prior else undrain.policy_rule
    manual = prior.manual if prior else undrain.policy_rule == MANUAL
    note = (prior.note if prior else undrain.note) if manual else ""
    evidence = [{"recheck": detail}, *(prior.evidence if prior else [])][:8]
    state.out[f"{guard.DRAIN_LINK}|{cable}"] = Out(
        guard.DRAIN_LINK, cable, rule, now, evidence=evidence, manual=manual, note=note
    )
    return Action(guard.Decision(guard.DRAIN_LINK, cable, True, "ok", why, cable, {"recheck": detail}), rule, note=note)


STARTED = "sweep-started"  # in the state folder, see Store.mark_started


class Store:
    """The state folder: ``state.json`` (replaced whole, atomically), ``decisions.jsonl`` (appended) and
    ``sweep-started``, used under an exclusive lock so that two sweeps never interleave."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / ".lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            yield

    def mark_started(self, at: float) -> None:
        """Write ``sweep-started``: a sweep that reads the alerts after ``at`` (unix seconds) has started. The
        rulebook's event source reads it to ask for no second sweep while the one it asked for has not started."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self._replace(STARTED, f"{at:.6f}\n")

    def load(self) -> State:
        path = self.folder / "state.json"
        if not path.exists():
            return State()
        try:
            return State.from_dict(json.loads(path.read_text()))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not a mitigation state ({exc})") from None

    def save(self, state: State) -> None:
        self._replace("state.json", json.dumps(state.to_dict(), indent=1))

    def _replace(self, name: str, text: str) -> None:
        """Write ``name`` whole, atomically: a reader sees the old file or the new one."""
        write_atomic(self.folder / name, text, mode=0o600)

    def log(
        self,
        actions: Sequence[Action],
        now: datetime,
        *,
        sweep: int,
        dry_run: bool,
        outcome: Mapping[str, str] | None = None,
    ) -> None:
        """Append each decision, allowed or refused, with what came of it (``outcome`` by ``action|target``)."""
        with open(self.folder / "decisions.jsonl", "a") as fh:
            for a in actions:
                line = {"time": now.isoformat(), "sweep": sweep, "dry_run": dry_run, **a.to_dict()}
                if outcome is not None:
                    line["outcome"] = outcome.get(f"{a.decision.action}|{a.decision.target}", "")
                fh.write(json.dumps(line, sort_keys=True) + "\n")


__all__ = ["MANUAL", "NOTIFY", "QUARANTINE", "STARTED", "Action", "Out", "State", "Store", "drained_again", "sweep"]
