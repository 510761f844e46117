"""Remediation sweeps on the demo plan with the shipped policy: each case a run of sweeps (minutes after T0, the
findings of that sweep) and the decisions expected of each, as (action, target, rule, acted)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hwaac.mitigation import engine, findings, guard
from hwaac.mitigation.policy import load_policy, load_policy_text
from hwaac.plan import build_plan
from hwaac.validate import load_intent

DEMO = Path(__file__).parents[3] / "inventory" / "demo"
T0 = datetime(2026, 12, 5, 3, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def demo():
    plan = build_plan(load_intent(DEMO))
    return plan, guard.Fabric(plan), findings.Targets(plan)


def _uplink(plan, leaf: int, k: int):
    leaves = sorted({x.a_device for x in plan.links if x.kind == "leaf_spine"})
    return [x for x in plan.links if x.kind == "leaf_spine" and x.a_device == leaves[leaf]][k]


def _finding(plan, what: str) -> findings.Finding:
    """``uplink L K``: a lossy leaf-spine link, named by its cable; ``port L K``: the same, named by the leaf's
    port only; ``host N``: errors on a GPU node's rail link; ``spine S``: a degraded spine; ``warn L K``: a warn."""
    kind, *nums = what.split()
    n = [int(x) for x in nums]
    if kind in ("uplink", "warn"):
        link = _uplink(plan, *n)
        return findings.Finding(
            "errors_both_ends",
            "fault" if kind == "uplink" else "warn",
            "link",
            link.cable_id,
            link.cable_id,
            link.a_device,
            link.a_port,
        )
    if kind == "port":
        link = _uplink(plan, *n)
        return findings.Finding(
            "errors_one_end", "fault", "optic", f"{link.b_device} {link.b_port}", "", link.b_device, link.b_port
        )
    if kind == "host":
        link = [x for x in plan.links if x.kind == "host"][n[0]]
        return findings.Finding(
            "errors_both_ends",
            "fault",
            "nic",
            f"{link.a_device} {link.a_port}",
            link.cable_id,
            link.a_device,
            link.a_port,
            (link.a_device,),
        )
    spine = sorted(s.name for s in plan.switches if s.role == "spine")[n[0]]
    return findings.Finding("switch_degraded", "fault", "switch", spine, "", spine)


def _name(plan, what: str) -> str:
    kind, *nums = what.split()
    if kind in ("uplink", "port", "warn"):
        return _uplink(plan, *[int(x) for x in nums]).cable_id
    if kind == "host":
        return [x for x in plan.links if x.kind == "host"][int(nums[0])].a_device
    return sorted(s.name for s in plan.switches if s.role == "spine")[int(nums[0])]


# (case, policy override (YAML, or None for the shipped one), [(minute, [findings], [(action, target, rule, acts)])])
CASES = [
    (
        "a lossy uplink is drained after two sweeps, undrained after hold-down and three clean sweeps",
        None,
        [
            (0, ["uplink 0 0"], [("drain_link", "uplink 0 0", "persistence", False)]),
            (1, ["uplink 0 0"], [("drain_link", "uplink 0 0", "ok", True)]),
            (2, ["uplink 0 0"], []),
            (3, [], [("undrain_link", "uplink 0 0", "hold_down", False)]),
            (4, [], [("undrain_link", "uplink 0 0", "hold_down", False)]),
            (12, [], [("undrain_link", "uplink 0 0", "ok", True)]),
            (13, [], []),
        ],
    ),
    (
        "a finding that comes back restarts the clean count",
        None,
        [
            (0, ["uplink 0 0"], [("drain_link", "uplink 0 0", "persistence", False)]),
            (1, ["uplink 0 0"], [("drain_link", "uplink 0 0", "ok", True)]),
            (20, [], [("undrain_link", "uplink 0 0", "hold_down", False)]),
            (21, [], [("undrain_link", "uplink 0 0", "hold_down", False)]),
            (22, ["uplink 0 0"], []),
            (23, [], [("undrain_link", "uplink 0 0", "hold_down", False)]),
        ],
    ),
    (
        "a gap between sightings resets persistence",
        None,
        [
            (0, ["uplink 0 0"], [("drain_link", "uplink 0 0", "persistence", False)]),
            (1, [], []),
            (2, ["uplink 0 0"], [("drain_link", "uplink 0 0", "persistence", False)]),
        ],
    ),
    (
        "a port named without its cable is found in the plan",
        None,
        [
            (0, ["port 1 3"], [("drain_link", "port 1 3", "persistence", False)]),
            (1, ["port 1 3"], [("drain_link", "port 1 3", "ok", True)]),
        ],
    ),
    (
        "a host link's fault quarantines its node",
        None,
        [
            (0, ["host 5"], [("quarantine_node", "host 5", "persistence", False)]),
            (1, ["host 5"], [("quarantine_node", "host 5", "ok", True)]),
            (2, ["host 5"], []),
        ],
    ),
    ("a warn is only told", None, [(0, ["warn 2 0"], [("notify", "warn 2 0", "notify", True)])]),
    (
        "a degraded spine is drained after three sweeps and stays drained",
        None,
        [
            (0, ["spine 0"], [("drain_switch", "spine 0", "persistence", False)]),
            (1, ["spine 0"], [("drain_switch", "spine 0", "persistence", False)]),
            (2, ["spine 0"], [("drain_switch", "spine 0", "ok", True)]),
            (60, [], []),
            (61, [], []),
            (62, [], []),
            (120, [], []),
        ],
    ),
    (
        "the last uplinks of a leaf are kept",
        "min_leaf_uplinks: 31",
        [
            (
                0,
                ["uplink 0 0", "uplink 0 1"],
                [("drain_link", "uplink 0 0", "ok", True), ("drain_link", "uplink 0 1", "last_uplinks", False)],
            ),
            (1, ["uplink 0 0", "uplink 0 1"], [("drain_link", "uplink 0 1", "last_uplinks", False)]),
        ],
    ),
    (
        "a storm trips the breaker; undrains still go ahead",
        "breaker_actions: 2",
        [
            (
                0,
                ["uplink 0 0", "uplink 1 0", "uplink 2 0"],
                [
                    ("drain_link", "uplink 0 0", "ok", True),
                    ("drain_link", "uplink 1 0", "ok", True),
                    ("drain_link", "uplink 2 0", "breaker", False),
                ],
            ),
            (
                1,
                ["uplink 3 0"],
                [
                    ("drain_link", "uplink 3 0", "breaker", False),
                    ("undrain_link", "uplink 0 0", "hold_down", False),
                    ("undrain_link", "uplink 1 0", "hold_down", False),
                ],
            ),
            (
                5,
                [],
                [
                    ("undrain_link", "uplink 0 0", "hold_down", False),
                    ("undrain_link", "uplink 1 0", "hold_down", False),
                ],
            ),
            (11, [], [("undrain_link", "uplink 0 0", "ok", True), ("undrain_link", "uplink 1 0", "ok", True)]),
            (30, ["uplink 3 0"], [("drain_link", "uplink 3 0", "breaker", False)]),
        ],
    ),
]


def _policy(override: str | None):
    if override is None:
        return load_policy()
    text = override
    base = (DEMO.parents[1] / "src" / "hwaac" / "mitigation" / "data" / "policy.yaml").read_text()
    key = text.split(":")[0]
    lines = [f"  {text}" if line.strip().startswith(f"{key}:") else line for line in base.splitlines()]
    lines = [line.replace("persistence: 2", "persistence: 1") for line in lines]
    return load_policy_text("\n".join(lines))


@pytest.mark.parametrize(("case", "override", "sweeps"), CASES, ids=[c[0] for c in CASES])
def test_sweeps_decide_as_the_policy_and_rails_say(demo, case, override, sweeps):
    plan, fabric, targets = demo
    policy = _policy(override)
    state = engine.State()
    for minute, names, expected in sweeps:
        found = [_finding(plan, n) for n in names]
        actions = engine.sweep(policy, fabric, targets, state, found, T0 + timedelta(minutes=minute))
        got = [(a.decision.action, a.decision.target, a.decision.rule, a.act) for a in actions]
        assert got == [(act, _name(plan, t), rule, acts) for act, t, rule, acts in expected], f"minute {minute}"
        state = engine.State.from_dict(json.loads(json.dumps(state.to_dict())))  # as kept between runs


def test_the_store_keeps_state_and_logs_every_decision(demo, tmp_path):
    plan, fabric, targets = demo
    store = engine.Store(tmp_path / "state")
    policy = load_policy()
    for minute in (0, 1):
        with store.locked():
            state = store.load()
            now = T0 + timedelta(minutes=minute)
            actions = engine.sweep(policy, fabric, targets, state, [_finding(plan, "uplink 0 0")], now)
            store.save(state)
            store.log(actions, now, sweep=state.sweeps, dry_run=False, outcome={})
    lines = [json.loads(x) for x in (tmp_path / "state" / "decisions.jsonl").read_text().splitlines()]
    assert [(x["sweep"], x["rule"], x["allowed"]) for x in lines] == [(1, "persistence", False), (2, "ok", True)]
    assert lines[1]["findings"][0]["cable"] == _name(plan, "uplink 0 0")
    assert store.load().out_of_service().links == {_name(plan, "uplink 0 0")}
    (tmp_path / "state" / "state.json").write_text('{"version": 9}')
    with pytest.raises(ValueError, match="not a mitigation state"):
        store.load()
