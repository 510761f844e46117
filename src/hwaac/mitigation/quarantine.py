"""Quarantining the GPU nodes a sweep names: the node lifecycle in NetBox (:func:`hwaac.netbox.lifecycle.
apply_transitions`, with its own quarantine breaker), each move journalled with the findings as evidence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from hwaac.health.lifecycle import State
from hwaac.mitigation.engine import QUARANTINE, Action

if TYPE_CHECKING:
    from hwaac.netbox.lifecycle import Mode


def requests(actions: Sequence[Action]) -> list[Any]:
    """One lifecycle request per node to quarantine (allowed and to carry out)."""
    from hwaac.netbox.lifecycle import Evidence, TransitionRequest

    out = []
    for a in actions:
        if not a.act or a.decision.action != QUARANTINE:
            continue
        found = [
            {
                "code": f.rule.upper(),
                "status": f.severity.upper(),
                "subject": f.component or f.device,
                "message": f"{f.kind} {f.component}: {f.rule} ({f.severity})",
                "evidence": list(f.evidence),
            }
            for f in a.findings
        ]
        ports = sorted({f.port for f in a.findings if f.port and f.device == a.decision.target})
        out.append(
            TransitionRequest(
                a.decision.target,
                State.QUARANTINE,
                f"network mitigation, policy rule {a.policy_rule}: {a.decision.reason}",
                Evidence(
                    verdict="FAIL",
                    findings=found,
                    failing_interfaces=ports,
                    action="check the node's rail link, then re-qualify it",
                ),
            )
        )
    return out


def quarantine(
    client: Any, actions: Sequence[Action], fabric: str, now: datetime, *, mode: Mode = "enforce"
) -> Mapping[str, str]:
    """Quarantine the nodes; ``quarantine_node|NODE`` -> its outcome (``done``, or why not)."""
    from hwaac.netbox.lifecycle import apply_transitions

    reqs = requests(actions)
    if not reqs:
        return {}
    report = apply_transitions(client, reqs, mode=mode, fabric=fabric, now=now)
    out = {}
    for o in report.outcomes:
        word = {"moved": "done", "unchanged": "done (already quarantined)", "would_move": "would quarantine"}
        out[f"{QUARANTINE}|{o.device}"] = word.get(o.result, f"not carried out: {o.result}: {o.message}")
    return out


__all__ = ["quarantine", "requests"]
