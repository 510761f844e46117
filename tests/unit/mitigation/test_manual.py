"""A person's drains and undrains (``hwaac remediate --drain-switch NAME --reason TEXT`` ...): decided by the same
guard rails, kept as manual so that the sweeps never undrain them, carried out again when already so, logged with
the reason; ``--open-only`` opens a drained target's sessions and keeps it out. Each case is a run of requests and
sweeps on the demo plan, as data."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hwaac.cli import main as hwaac_main
from hwaac.mitigation import engine, findings, guard, manual
from hwaac.mitigation.policy import PolicyError, load_policy_text
from hwaac.plan import build_plan
from hwaac.validate import load_intent

DEMO = Path(__file__).parents[3] / "inventory" / "demo"
T0 = datetime(2026, 12, 5, 3, 0, tzinfo=UTC)
SPINE, SPINE2, LEAF = "spine-p0-01", "spine-p0-02", "leaf-p0-su01-r0"
FAST = (
    "guard_rails: {min_plane_spines: %d}\ngraceful_s: 0\nrules:\n  - name: degraded\n    match: {kinds: [switch]}\n"
    "    action: drain_switch\n    persistence: 1\n    hold_down_s: 0\n    recheck_sweeps: 1\n"
)


@pytest.fixture(scope="module")
def demo():
    plan = build_plan(load_intent(DEMO))
    return plan, guard.Fabric(plan), findings.Targets(plan)


def _degraded(name: str) -> findings.Finding:
    return findings.Finding("switch_degraded", "fault", "switch", name, "", name)


# (case, min_plane_spines, steps); a step is (minute, what, expected): what is "drain X", "undrain X", "open X" (a
# person's request) or "sweep [X ...]" (the switches found degraded); expected is the request's (rule, carried out)
# or the sweep's [(action, target, rule)]; after each step the targets out of service, "manual" marking a person's
CASES: list[tuple[str, int, list[tuple[int, str, Any, dict[str, bool]]]]] = [
    (
        "a person's drain is never undrained by the sweeps",
        2,
        [
            (0, f"drain {SPINE}", ("ok", True), {SPINE: True}),
            (1, "sweep", [], {SPINE: True}),
            (90, "sweep", [], {SPINE: True}),
            (91, f"undrain {SPINE}", ("ok", True), {}),
        ],
    ),
    (
        "a drain the sweeps made is taken over by a person's drain, and kept",
        2,
        [
            (0, f"sweep {SPINE}", [("drain_switch", SPINE, "ok")], {SPINE: False}),
            (1, f"drain {SPINE}", ("already", True), {SPINE: True}),
            (2, "sweep", [], {SPINE: True}),
            (3, "sweep", [], {SPINE: True}),
        ],
    ),
    (
        "without the person, the same drain comes back after a clean sweep",
        2,
        [
            (0, f"sweep {SPINE}", [("drain_switch", SPINE, "ok")], {SPINE: False}),
            (1, "sweep", [("undrain_switch", SPINE, "ok")], {}),
        ],
    ),
    (
        "a drain of what is drained is carried out again (the switches come to match)",
        2,
        [(0, f"drain {SPINE}", ("ok", True), {SPINE: True}), (1, f"drain {SPINE}", ("already", True), {SPINE: True})],
    ),
    ("the last spines of a plane are kept", 8, [(0, f"drain {SPINE}", ("last_spines", False), {})]),
    (
        "one spine fewer is one too many",
        7,
        [
            (0, f"drain {SPINE}", ("ok", True), {SPINE: True}),
            (1, f"drain {SPINE2}", ("last_spines", False), {SPINE: True}),
        ],
    ),
    (
        "a leaf and an unknown switch are refused",
        2,
        [(0, f"drain {LEAF}", ("only_path", False), {}), (0, "drain spine-p9-99", ("unknown_target", False), {})],
    ),
    (
        "open-only keeps the target out; the undrain puts it back",
        2,
        [
            (0, f"open {SPINE}", ("not_drained", False), {}),
            (1, f"drain {SPINE}", ("ok", True), {SPINE: True}),
            (2, f"open {SPINE}", ("ok", True), {SPINE: True}),
            (3, "sweep", [], {SPINE: True}),
            (4, f"undrain {SPINE}", ("ok", True), {}),
        ],
    ),
    ("an undrain of what is in service is carried out again", 2, [(0, f"undrain {SPINE}", ("already", True), {})]),
]


@pytest.mark.parametrize(("case", "spines", "steps"), CASES, ids=[c[0] for c in CASES])
def test_requests_and_sweeps(demo, case, spines, steps):
    _plan, fabric, targets = demo
    policy = load_policy_text(FAST % spines)
    state = engine.State()
    for minute, what, expected, out in steps:
        now = T0 + timedelta(minutes=minute)
        verb, *names = what.split()
        if verb == "sweep":
            actions = engine.sweep(policy, fabric, targets, state, [_degraded(n) for n in names], now)
            assert [(a.decision.action, a.decision.target, a.decision.rule) for a in actions] == expected, minute
        else:
            action = {"drain": "drain_switch", "undrain": "undrain_switch", "open": "undrain_switch"}[verb]
            a = manual.decide(
                fabric, policy.rails(), state, action, names[0], now, f"ticket {minute}", open_only=verb == "open"
            )
            assert (a.decision.rule, a.act) == expected, minute
            assert a.to_dict()["policy_rule"] == "manual" and a.to_dict()["note"] == f"ticket {minute}"
        state = engine.State.from_dict(json.loads(json.dumps(state.to_dict())))  # as kept between runs
        assert {o.target: o.manual for o in state.out.values()} == out, minute


def test_manual_is_a_reserved_rule_name():
    with pytest.raises(PolicyError, match="reserved"):
        load_policy_text("rules:\n  - name: manual\n    action: notify\n")


def _run(tmp_path: Path, capsys, *args: str, spines: int = 2) -> tuple[int, dict, str]:
    (tmp_path / "policy.yaml").write_text(FAST % spines)
    capsys.readouterr()
    found = [a for a in args if a.endswith(".json")]  # FINDINGS: right after INTENT_DIR, as argparse reads it
    code = hwaac_main(
        [
            "remediate",
            str(DEMO),
            *found,
            "--state",
            str(tmp_path / "state"),
            "--policy",
            str(tmp_path / "policy.yaml"),
            "--format",
            "json",
            *[a for a in args if a not in found],
        ]
    )
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else {}, err


def _stages(out: dict) -> set[str]:
    return {st["stage"] for st in out["steps"]}


def test_apply_keeps_the_drain_opens_it_unsaved_and_undrains(tmp_path, capsys, switches):
    code, out, _ = _run(
        tmp_path, capsys, "--drain-switch", SPINE, "--reason", "NOS 4.4 upgrade", "--apply", "-i", "inv.yml"
    )
    assert code == 0 and out["outcome"] == {f"drain_switch|{SPINE}": "done"}
    assert _stages(out) == {"graceful", "shut"} and switches.runs[0]["save"] and len(switches.runs) == 1
    state = json.loads((tmp_path / "state" / "state.json").read_text())
    assert state["out"][f"drain_switch|{SPINE}"] | {"since": ""} == {
        "action": "drain_switch",
        "target": SPINE,
        "rule": "manual",
        "since": "",
        "clean": 0,
        "evidence": [],
        "manual": True,
        "note": "NOS 4.4 upgrade",
    }

    code, out, _ = _run(
        tmp_path, capsys, "--undrain-switch", SPINE, "--open-only", "--reason", "check it", "--apply", "-i", "inv.yml"
    )
    assert code == 0 and out["outcome"] == {f"undrain_switch|{SPINE}": "opened"}
    assert (
        _stages(out) == {"open"}
        and switches.runs[1] | {"pause_s": 0, "save": False, "recheck": []} == switches.runs[1]
        and switches.runs[1]["stage2"] == {}
    )
    assert f"drain_switch|{SPINE}" in json.loads((tmp_path / "state" / "state.json").read_text())["out"]

    code, out, _ = _run(tmp_path, capsys, "--undrain-switch", SPINE, "--reason", "upgraded", "--apply", "-i", "inv.yml")
    assert code == 0 and out["outcome"] == {f"undrain_switch|{SPINE}": "done"}
    # opened and every link re-checked (its 64 leaf links), then restored: two runs
    assert _stages(out) == {"open", "restore"} and switches.runs[2]["save"] and switches.runs[3]["save"]
    assert len(switches.runs[2]["recheck"]) == 64 and switches.runs[3]["recheck"] == []
    assert json.loads((tmp_path / "state" / "state.json").read_text())["out"] == {}

    log = [json.loads(x) for x in (tmp_path / "state" / "decisions.jsonl").read_text().splitlines()]
    assert [(x["action"], x["rule"], x["policy_rule"], x["note"], x["outcome"]) for x in log] == [
        ("drain_switch", "ok", "manual", "NOS 4.4 upgrade", "done"),
        ("undrain_switch", "ok", "manual", "check it", "opened"),
        ("undrain_switch", "ok", "manual", "upgraded", "done"),
    ]


def test_a_refused_drain_exits_1_changes_nothing_and_is_logged(tmp_path, capsys, switches):
    code, out, err = _run(
        tmp_path, capsys, "--drain-switch", SPINE, "--reason", "swap PSU", "--apply", "-i", "inv.yml", spines=8
    )
    assert code == 1 and switches.runs == [] and out["steps"] == [] and out["outcome"] == {}
    assert "refused: drain_switch spine-p0-01: last_spines - plane 0 would keep 7 spine(s) in service" in err
    assert json.loads((tmp_path / "state" / "state.json").read_text())["out"] == {}
    (line,) = [json.loads(x) for x in (tmp_path / "state" / "decisions.jsonl").read_text().splitlines()]
    assert (line["rule"], line["allowed"], line["note"], line["outcome"]) == ("last_spines", False, "swap PSU", "")


def test_a_failed_carry_out_keeps_the_state_as_it_was(tmp_path, capsys, switches):
    switches.rc = 2
    code, out, _ = _run(tmp_path, capsys, "--drain-switch", SPINE, "--reason", "x", "--apply", "-i", "inv.yml")
    assert code == 1 and out["outcome"][f"drain_switch|{SPINE}"].startswith("failed (ansible-playbook rc 2")
    assert json.loads((tmp_path / "state" / "state.json").read_text())["out"] == {}


def test_a_dry_run_writes_nothing(tmp_path, capsys, switches):
    code, out, _ = _run(tmp_path, capsys, "--drain-switch", SPINE, "--reason", "x")
    assert code == 0 and out["dry_run"] and len(out["steps"]) == 2 * 17 and switches.runs == []
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--drain-switch", SPINE], "--drain-switch needs --reason TEXT"),
        (["--drain-link", "C1", "--reason", " "], "--drain-link needs --reason TEXT"),
        (["--drain-switch", SPINE, "--reason", "x", "findings.json"], "--drain-switch is instead of FINDINGS"),
        (["--drain-switch", SPINE, "--reason", "x", "--open-only"], "--open-only goes with --undrain-switch"),
        (["--drain-switch", SPINE, "--undrain-switch", SPINE], "not allowed with argument"),
        (["findings.json", "--reason", "x"], "--reason and --open-only go with --drain-switch"),
        ([], "give FINDINGS, --alertmanager URL or a person's --drain-switch"),
    ],
)
def test_bad_requests_exit_2_naming_what_is_wrong(tmp_path, capsys, args, message):
    try:
        code, _, err = _run(tmp_path, capsys, *args)
    except SystemExit as exc:  # argparse's own refusals
        code, err = exc.code, capsys.readouterr().err
    assert code == 2 and message in err
    assert not (tmp_path / "state").exists()
