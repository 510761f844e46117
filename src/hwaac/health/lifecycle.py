"""A GPU node's life, as rules: states, the transitions allowed between them, and the quarantine circuit breaker.

The formats, sources and rules in full: ``docs/health-modules.md``, section "Node lifecycle".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum


class State(StrEnum):
    PLANNED = "planned"
    BURN_IN = "burn_in"
    PRODUCTION = "production"
    QUARANTINE = "quarantine"
    RMA = "rma"
    RETURNED = "returned"


NETBOX_STATUS: dict[State, str] = {
    State.PLANNED: "planned",
    State.BURN_IN: "staged",
    State.PRODUCTION: "active",
    State.QUARANTINE: "offline",
    State.RMA: "failed",
    State.RETURNED: "inventory",
}
STATE_OF_STATUS: dict[str, State] = {v: k for k, v in NETBOX_STATUS.items()}

TRANSITIONS: dict[State, frozenset[State]] = {
    State.PLANNED: frozenset({State.BURN_IN}),
    State.BURN_IN: frozenset({State.PRODUCTION, State.QUARANTINE}),
    State.PRODUCTION: frozenset({State.QUARANTINE, State.BURN_IN}),
    State.QUARANTINE: frozenset({State.BURN_IN, State.RMA}),
    State.RMA: frozenset({State.RETURNED}),
    State.RETURNED: frozenset({State.BURN_IN}),
}

# NetBox journal entry kinds (JournalEntryKindChoices) by the state a node enters
JOURNAL_KIND: dict[State, str] = {
    State.PLANNED: "info",
    State.BURN_IN: "info",
    State.PRODUCTION: "success",
    State.QUARANTINE: "warning",
    State.RMA: "danger",
    State.RETURNED: "info",
}


class TransitionError(ValueError):
    """A transition the lifecycle does not allow; the message names the device, both states and the valid ones."""


def parse_state(value: str, *, field: str = "state") -> State:
    """``value`` as a :class:`State`; raises :class:`TransitionError` naming the field and the valid values."""
    try:
        return State(value)
    except ValueError:
        valid = ", ".join(s.value for s in State)
        raise TransitionError(f"{field}: {value!r} is not a lifecycle state; valid: {valid}") from None


def state_of(status: str | None, lifecycle_field: str | None) -> State | None:
    """The node's state from its custom field, else from its NetBox status; ``None`` when neither tells
    (e.g. status ``decommissioning``, which hwaac never sets)."""
    if lifecycle_field:
        try:
            return State(lifecycle_field)
        except ValueError:
            pass  # a value written by hand: fall back to the status, which NetBox validates
    return STATE_OF_STATUS.get(status or "")


def check_transition(device: str, current: State | None, target: State) -> bool:
    """Whether anything must change: ``False`` when ``current == target`` (a second run changes nothing).

    Raises:
        TransitionError: the lifecycle does not allow ``current -> target``; names the allowed targets.
    """
    if current == target:
        return False
    if current is None:
        raise TransitionError(
            f"{device}: its NetBox status is not a lifecycle state; hwaac will not move it to "
            f"{target.value} (set the status to one of: {', '.join(STATE_OF_STATUS)})"
        )
    if target not in TRANSITIONS[current]:
        allowed = ", ".join(sorted(s.value for s in TRANSITIONS[current]))
        raise TransitionError(
            f"{device}: {current.value} -> {target.value} is not a lifecycle transition; "
            f"from {current.value} a node may go to: {allowed}"
        )
    return True


@dataclass(frozen=True)
class BreakerPolicy:
    """The quarantine circuit breaker: at most ``max_share`` of a pool's nodes quarantined within ``window``.

    Defaults follow NVIDIA NVSentinel's (at most 50 % of nodes cordoned within a 5-minute sliding window);
    the allowed count rounds down, as Kubernetes MachineHealthCheck's ``maxUnhealthy``
    does, but is at least 1 so that a pool can always quarantine one node.
    """

    max_share: float = 0.5
    window: timedelta = timedelta(minutes=5)

    def __post_init__(self) -> None:
        if not 0 < self.max_share <= 1:
            raise ValueError(f"max_share: {self.max_share!r} must be in (0, 1], e.g. 0.5 for 50 %")
        if self.window.total_seconds() <= 0:
            raise ValueError(f"window: {self.window} must be positive")

    def allowed(self, pool_size: int) -> int:
        """Nodes of a pool of ``pool_size`` that may be quarantined within one window."""
        return max(1, math.floor(self.max_share * pool_size))


@dataclass(frozen=True)
class BreakerDecision:
    """``tripped``: the requested quarantines would exceed the cap; none of them is made (a mass failure
    usually has a shared cause -- fabric, driver rollout, a bad checker -- that quarantine would not fix)."""

    tripped: bool
    pool_size: int
    allowed: int
    recent: int  # quarantines already made in the window
    requested: int
    message: str


def breaker_decision(
    policy: BreakerPolicy, pool_size: int, recent: list[datetime], requested: int, now: datetime
) -> BreakerDecision:
    """Whether ``requested`` new quarantines fit the cap, given the times of the pool's ``recent`` ones.

    ``recent`` may hold older times: only those within ``policy.window`` before ``now`` count.
    """
    since = now - policy.window
    in_window = sum(1 for t in recent if t >= since)
    allowed = policy.allowed(pool_size)
    tripped = requested > 0 and in_window + requested > allowed
    share = f"{policy.max_share:.0%} of {pool_size} = {allowed}"
    window = f"{policy.window.total_seconds():g} s"
    if tripped:
        msg = (
            f"circuit breaker tripped: {requested} new quarantine(s) + {in_window} in the last {window} "
            f"> {share}; no node quarantined, investigate a shared cause"
        )
    else:
        msg = f"{in_window + requested} quarantine(s) in the last {window} <= {share}"
    return BreakerDecision(tripped, pool_size, allowed, in_window, requested, msg)


SLURM_REASON_PREFIX = "hwaac:"


def slurm_reason(codes: list[str], detail: str = "") -> str:
    """A Slurm drain reason hwaac owns: ``hwaac: CODE[,CODE...] detail`` (the prefix marks ownership, as LBNL
    NHC's ``NHC:`` does; ``node-mark-online`` resumes only nodes whose reason carries it). Slurm keeps reasons
    short: cut to 200 characters."""
    text = f"{SLURM_REASON_PREFIX} {','.join(codes) or 'check'}" + (f" {detail}" if detail else "")
    return text[:200]


def owns_reason(reason: str | None) -> bool:
    """Whether a Slurm drain reason is hwaac's (hwaac never resumes a node someone else drained)."""
    return bool(reason and reason.strip().startswith(SLURM_REASON_PREFIX))
