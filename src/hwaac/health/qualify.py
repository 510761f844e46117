"""The qualification gate: a scalable unit enters production only when every node passed burn-in and its links
show no error growth (pure rules; ``hwaac qualify`` reads the reports and NetBox and makes the moves).

The formats, sources and rules in full: ``docs/health-modules.md``, section "Scalable-unit qualification".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hwaac.health.profile import Profile

# findings about port counters that are not fatal-counter codes (checks_nic.check_ib_counters, check_counter_growth)
COUNTER_CODES = frozenset({"NIC_COUNTER_UNKNOWN", "IB_COUNTER_SATURATED", "IB_COUNTER_UNREADABLE"})


def counter_codes(profile: Profile) -> frozenset[str]:
    """Every fault code that means a port counter grew or could not be read, for ``profile``'s counters."""
    nic = profile.nic
    return (
        COUNTER_CODES
        | {f"NIC_{n.upper()}" for n in nic.counters_fatal_on_increase}
        | {f"NIC_{n.upper()}_RATE" for n in nic.counters_warn_per_second}
    )


@dataclass
class Qualification:
    """``admitted``: no blocker; ``blockers``: one line each; ``nodes``: the SU's nodes, in order."""

    su: int
    nodes: list[str]
    blockers: list[str] = field(default_factory=list)

    @property
    def admitted(self) -> bool:
        return not self.blockers


def qualify_su(
    su: int,
    nodes: list[str],
    reports: Mapping[str, Mapping[str, Any] | None],
    su_report: Mapping[str, Any] | None,
    states: Mapping[str, str | None],
    profile: Profile,
) -> Qualification:
    """Judge one SU (module docstring). ``reports``: node -> its burn-in report (None: no file); ``states``: node ->
    lifecycle state in NetBox."""
    q = Qualification(su, list(nodes))
    growth = counter_codes(profile)
    label = f"su{su:02d}"
    if not nodes:
        q.blockers.append(f"{label}: the fabric has no nodes in this SU")
        return q
    for node in nodes:
        rep = reports.get(node)
        state = states.get(node)
        if state not in ("burn_in", "production"):
            q.blockers.append(f"{node}: lifecycle state {state or 'unknown'} in NetBox (needs burn_in)")
        if rep is None:
            q.blockers.append(f"{node}: no burn-in report")
            continue
        if rep.get("status") not in ("PASS", "WARN"):
            q.blockers.append(
                f"{node}: burn-in {rep.get('status')}"
                + (f" ({', '.join(rep.get('codes') or [])})" if rep.get("codes") else "")
            )
        if "ib_pairwise" not in (rep.get("stages") or {}):
            q.blockers.append(f"{node}: ib_pairwise did not run: its links were never exercised")
        grew = sorted(
            {f"{f.get('subject') or '?'} {f.get('code')}" for f in rep.get("findings") or [] if f.get("code") in growth}
        )
        if grew:
            q.blockers.append(f"{node}: port counters grew or could not be read: {', '.join(grew)}")
    if su_report is None:
        q.blockers.append(f"{label}: no multi-node all-reduce result (su{su:02d}.nccl-multi.json)")
    else:
        missing = sorted(set(nodes) - set(su_report.get("hosts") or []))
        if missing:
            q.blockers.append(f"{label}: the multi-node all-reduce did not include {', '.join(missing)}")
        if su_report.get("status") not in ("PASS", "WARN"):
            q.blockers.append(
                f"{label}: multi-node all-reduce {su_report.get('status')}"
                + (f" ({', '.join(su_report.get('codes') or [])})" if su_report.get("codes") else "")
            )
    return q
