"""Lifecycle rules: the transition table, states read from NetBox, the circuit breaker and Slurm reason ownership."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hwaac.health.lifecycle import (
    NETBOX_STATUS,
    TRANSITIONS,
    BreakerPolicy,
    State,
    TransitionError,
    breaker_decision,
    check_transition,
    owns_reason,
    parse_state,
    slurm_reason,
    state_of,
)


def test_every_state_has_a_distinct_netbox_status_and_a_way_on() -> None:
    assert len(set(NETBOX_STATUS.values())) == len(State)
    assert NETBOX_STATUS[State.BURN_IN] == "staged" and NETBOX_STATUS[State.PRODUCTION] == "active"
    assert NETBOX_STATUS[State.QUARANTINE] == "offline"
    # every state is reachable from planned and can reach production again
    seen, todo = {State.PLANNED}, [State.PLANNED]
    while todo:
        for nxt in TRANSITIONS[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    assert seen == set(State)


@pytest.mark.parametrize(
    ("current", "target"),
    [
        (State.PLANNED, State.PRODUCTION),  # no production without burn-in
        (State.QUARANTINE, State.PRODUCTION),  # back only through burn-in
        (State.RMA, State.BURN_IN),  # returned first
        (State.RETURNED, State.PRODUCTION),
    ],
)
def test_shortcuts_are_refused_with_the_allowed_targets(current: State, target: State) -> None:
    with pytest.raises(TransitionError) as err:
        check_transition("gpu-su01-h01", current, target)
    allowed = ", ".join(sorted(s.value for s in TRANSITIONS[current]))
    assert str(err.value) == (
        f"gpu-su01-h01: {current.value} -> {target.value} is not a lifecycle transition; "
        f"from {current.value} a node may go to: {allowed}"
    )


def test_same_state_is_no_change_and_unknown_status_is_refused() -> None:
    assert check_transition("n", State.PRODUCTION, State.PRODUCTION) is False
    assert check_transition("n", State.BURN_IN, State.PRODUCTION) is True
    with pytest.raises(TransitionError, match="not a lifecycle state"):
        check_transition("n", None, State.BURN_IN)
    with pytest.raises(TransitionError, match="valid: planned, burn_in"):
        parse_state("prod")


def test_state_prefers_the_custom_field_then_the_status() -> None:
    assert state_of("offline", "quarantine") is State.QUARANTINE
    assert state_of("active", None) is State.PRODUCTION
    assert state_of("active", "typo-by-hand") is State.PRODUCTION
    assert state_of("decommissioning", None) is None


def test_breaker_rounds_down_counts_only_the_window_and_trips_on_excess() -> None:
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    policy = BreakerPolicy(max_share=0.5, window=timedelta(minutes=5))
    assert [policy.allowed(n) for n in (1, 3, 4, 32)] == [1, 1, 2, 16]
    old, fresh = now - timedelta(minutes=6), now - timedelta(minutes=1)
    ok = breaker_decision(policy, 4, [old, old, fresh], 1, now)
    assert (ok.tripped, ok.recent) == (False, 1)
    trip = breaker_decision(policy, 4, [fresh], 2, now)
    assert trip.tripped and "no node quarantined" in trip.message
    assert not breaker_decision(policy, 4, [fresh, fresh, fresh], 0, now).tripped  # nothing requested
    with pytest.raises(ValueError, match="max_share"):
        BreakerPolicy(max_share=0)


def test_slurm_reasons_are_owned_by_prefix() -> None:
    reason = slurm_reason(["GPU_ROW_REMAP_PENDING", "NIC_PORT_DOWN"], "burn-in")
    assert reason == "hwaac: GPU_ROW_REMAP_PENDING,NIC_PORT_DOWN burn-in"
    assert owns_reason(reason) and owns_reason("  hwaac: x")
    assert not owns_reason("NHC: ECC") and not owns_reason("maintenance by alice (hwaac: later)")
    assert not owns_reason(None) and not owns_reason("")
    assert len(slurm_reason(["X"] * 100)) == 200
