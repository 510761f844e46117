"""The guard rails of network mitigation on the demo plan (one plane, 8 spines, 16 leaves of 32 uplinks, 4 to each
spine): each case a run of decisions, each with the rule expected to decide it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hwaac.mitigation.guard import (
    DRAIN_LINK,
    DRAIN_SWITCH,
    UNDRAIN_LINK,
    UNDRAIN_SWITCH,
    Fabric,
    GuardRails,
    OutOfService,
    decide,
    record,
)
from hwaac.plan import build_plan
from hwaac.validate import load_intent

DEMO = Path(__file__).parents[3] / "inventory" / "demo"
T0 = datetime(2026, 12, 5, 3, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def fabric() -> Fabric:
    return Fabric(build_plan(load_intent(DEMO)))


def _target(fabric: Fabric, name: str) -> str:
    """``uplink L K``: leaf L's K-th uplink; ``host L``: a host link of leaf L; ``spine S``, ``leaf L``: a switch;
    anything else as it is."""
    kind, _, rest = name.partition(" ")
    leaves = sorted(fabric.uplinks)
    if kind == "uplink":
        leaf, k = rest.split()
        return fabric.uplinks[leaves[int(leaf)]][int(k)].cable_id
    if kind == "host":
        return next(
            link.cable_id for link in fabric.plan.links if link.kind == "host" and link.b_device == leaves[int(rest)]
        )
    if kind == "spine":
        return sorted(fabric.downlinks)[int(rest)]
    if kind == "leaf":
        return leaves[int(rest)]
    return name


# (case, rails, [(minutes after T0, action, target, allowed, rule)])
CASES = [
    (
        "a leaf-spine link drained, then again",
        GuardRails(),
        [(0, DRAIN_LINK, "uplink 0 0", True, "ok"), (1, DRAIN_LINK, "uplink 0 0", True, "already")],
    ),
    (
        "a host link or a leaf is its nodes' only path",
        GuardRails(),
        [(0, DRAIN_LINK, "host 0", False, "only_path"), (0, DRAIN_SWITCH, "leaf 0", False, "only_path")],
    ),
    (
        "what the plan does not hold",
        GuardRails(),
        [
            (0, DRAIN_LINK, "L9999999", False, "unknown_target"),
            (0, DRAIN_SWITCH, "spine-p9-99", False, "unknown_target"),
            (0, UNDRAIN_LINK, "L9999999", False, "unknown_target"),
        ],
    ),
    (
        "a second fault on a leaf that would leave it too few uplinks",
        GuardRails(min_leaf_uplinks=31),
        [
            (0, DRAIN_LINK, "uplink 0 0", True, "ok"),
            (1, DRAIN_LINK, "uplink 0 1", False, "last_uplinks"),
            (2, DRAIN_LINK, "uplink 1 1", True, "ok"),
        ],
    ),
    (
        "a spine whose drain leaves a plane too few spines",
        GuardRails(min_plane_spines=7),
        [(0, DRAIN_SWITCH, "spine 0", True, "ok"), (1, DRAIN_SWITCH, "spine 1", False, "last_spines")],
    ),
    (
        "a spine whose drain leaves a leaf too few uplinks",
        GuardRails(min_leaf_uplinks=29),
        [(0, DRAIN_SWITCH, "spine 0", False, "last_uplinks")],
    ),
    (
        "a link to a drained spine counts as out of service",
        GuardRails(min_leaf_uplinks=28),
        [(0, DRAIN_SWITCH, "spine 0", True, "ok"), (1, DRAIN_LINK, "uplink 0 31", False, "last_uplinks")],
    ),
    (
        "drains of one leaf limited within the window",
        GuardRails(max_actions=2),
        [
            (0, DRAIN_LINK, "uplink 0 0", True, "ok"),
            (1, DRAIN_LINK, "uplink 0 1", True, "ok"),
            (2, DRAIN_LINK, "uplink 0 2", False, "rate_limit"),
            (2, DRAIN_LINK, "uplink 1 2", True, "ok"),
            (11, DRAIN_LINK, "uplink 0 2", True, "ok"),
        ],
    ),
    (
        "a storm of faults trips the breaker, which stays tripped",
        GuardRails(breaker_actions=3),
        [
            (0, DRAIN_LINK, "uplink 0 0", True, "ok"),
            (0, DRAIN_LINK, "uplink 1 0", True, "ok"),
            (1, DRAIN_LINK, "uplink 2 0", True, "ok"),
            (1, DRAIN_LINK, "uplink 3 0", False, "breaker"),
            (30, DRAIN_LINK, "uplink 4 0", False, "breaker"),
            (30, UNDRAIN_LINK, "uplink 0 0", True, "ok"),
        ],
    ),
    (
        "undrained once, then already in service",
        GuardRails(),
        [
            (0, DRAIN_SWITCH, "spine 2", True, "ok"),
            (5, UNDRAIN_SWITCH, "spine 2", True, "ok"),
            (6, UNDRAIN_SWITCH, "spine 2", True, "already"),
            (6, DRAIN_LINK, "uplink 0 8", True, "ok"),
        ],
    ),
]


@pytest.mark.parametrize(("case", "rails", "steps"), CASES, ids=[c[0] for c in CASES])
def test_guard_rails(fabric: Fabric, case: str, rails: GuardRails, steps: list) -> None:
    out = OutOfService()
    for minutes, action, name, allowed, rule in steps:
        now = T0 + timedelta(minutes=minutes)
        target = _target(fabric, name)
        before = (set(out.links), set(out.switches))
        decision = decide(fabric, rails, out, action, target, now)
        assert (decision.allowed, decision.rule) == (allowed, rule), (name, decision.reason)
        assert decision.reason and decision.to_dict()["target"] == target
        record(out, decision, now)
        if not allowed or rule == "already":
            assert (out.links, out.switches) == before  # a refused or idle decision takes nothing out
    assert (out.tripped_at is not None) == any(rule == "breaker" for *_, rule in steps)


def test_a_refusal_names_what_it_counted(fabric: Fabric) -> None:
    out = OutOfService()
    decision = decide(fabric, GuardRails(min_plane_spines=8), out, DRAIN_SWITCH, _target(fabric, "spine 0"), T0)
    assert decision.inputs == {"plane": 0, "spines_left": 7, "min_plane_spines": 8}
    assert "plane 0 would keep 7 spine(s) in service" in decision.reason


@pytest.mark.parametrize(
    ("field", "value"),
    [("min_leaf_uplinks", 0), ("max_actions", 1.5), ("breaker_actions", -1), ("window", timedelta(0))],
)
def test_rails_out_of_range_are_refused_by_name(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        GuardRails(**{field: value})  # type: ignore[arg-type]


THREE_TIER = Path(__file__).parents[3] / "inventory" / "examples" / "b200-3tier"


@pytest.fixture(scope="module")
def three_tier() -> Fabric:
    return Fabric(build_plan(load_intent(THREE_TIER)))


def _three_tier_target(fabric: Fabric, name: str) -> str:
    """``suplink S K``: spine S's K-th super-spine uplink; ``superspine N``: a super-spine."""
    kind, _, rest = name.partition(" ")
    spines = sorted(s for s, r in fabric.role.items() if r == "spine")
    if kind == "suplink":
        spine, k = rest.split()
        return fabric.uplinks[spines[int(spine)]][int(k)].cable_id
    return sorted(s for s, r in fabric.role.items() if r == "super_spine")[int(rest)]


# the b200-3tier example: each spine has 32 super-spine uplinks, 16 of them to each of its two super-spines
THREE_TIER_CASES = [
    (
        "a spine keeps its super-spine uplinks",
        GuardRails(min_spine_uplinks=31),
        [
            (0, DRAIN_LINK, "suplink 0 0", True, "ok"),
            (1, DRAIN_LINK, "suplink 0 1", False, "last_uplinks"),
            (1, DRAIN_LINK, "suplink 1 1", True, "ok"),
        ],
    ),
    (
        "a super-spine whose drain leaves its spines too few uplinks",
        GuardRails(min_spine_uplinks=17),
        [(0, DRAIN_SWITCH, "superspine 0", False, "last_uplinks")],
    ),
    (
        "a super-spine whose spines keep enough; its links then count as out",
        GuardRails(min_spine_uplinks=16),
        [(0, DRAIN_SWITCH, "superspine 0", True, "ok"), (1, DRAIN_LINK, "suplink 0 31", False, "last_uplinks")],
    ),
]


@pytest.mark.parametrize(("case", "rails", "steps"), THREE_TIER_CASES, ids=[c[0] for c in THREE_TIER_CASES])
def test_three_tier_rails(three_tier: Fabric, case: str, rails: GuardRails, steps: list) -> None:
    out = OutOfService()
    spines = sorted(s for s, r in three_tier.role.items() if r == "spine")
    assert len(three_tier.uplinks[spines[0]]) == 32
    for minutes, action, name, allowed, rule in steps:
        now = T0 + timedelta(minutes=minutes)
        decision = decide(three_tier, rails, out, action, _three_tier_target(three_tier, name), now)
        assert (decision.allowed, decision.rule) == (allowed, rule), (name, decision.reason)
        record(out, decision, now)
