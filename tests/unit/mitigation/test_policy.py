"""The mitigation policy: the shipped default, the loader's errors (file, line, field, value, what is valid), and
which rule takes a finding."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from hwaac.mitigation.guard import GuardRails
from hwaac.mitigation.policy import Match, PolicyError, default_policy, load_policy, load_policy_text
from hwaac.telemetry.suspects import FAULT, INFO, WARN


def test_the_shipped_default_loads() -> None:
    policy = load_policy()
    assert policy is load_policy(None) is default_policy()
    assert policy.rails() == GuardRails(2, 2, 2, 6, timedelta(minutes=10))
    assert policy.graceful_s == 5
    assert [r.action for r in policy.rules] == ["drain_link", "drain_switch", "quarantine_node", "notify"]


def test_defaults_of_a_minimal_rule() -> None:
    policy = load_policy_text("rules:\n  - name: tell\n    action: notify\n")
    (rule,) = policy.rules
    assert (rule.persistence, rule.hold_down_s, rule.recheck_sweeps, rule.auto_undrain) == (2, 600, 3, True)
    assert (rule.match.rules, rule.match.kinds, rule.match.severity, rule.match.link_kinds) == (
        None,
        None,
        "fault",
        None,
    )
    assert policy.rails() == GuardRails() and policy.graceful_s == 5


def test_guard_rails_become_the_guards() -> None:
    policy = load_policy_text(
        "guard_rails:\n  max_actions: 1\n  window_s: 90\nrules:\n  - name: t\n    action: notify\n"
    )
    assert policy.rails() == GuardRails(max_actions=1, window=timedelta(seconds=90))


def test_a_file_names_itself_in_its_issues(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("rules:\n  - name: t\n    action: reboot\n")
    with pytest.raises(PolicyError) as err:
        load_policy(path)
    assert [(i.file, i.line, i.path) for i in err.value.issues] == [(str(path), 3, "rules[0].action")]


# YAML text -> field path, line, words of the message, words of what is valid ("" : no check of valid)
BAD = [
    (
        "duplicate name",
        "rules:\n  - name: a\n    action: notify\n  - name: a\n    action: notify\n",
        "rules[1].name",
        4,
        "duplicate rule name (first at line 2)",
        "no other rule",
    ),
    (
        "unknown suspect rule",
        "rules:\n  - name: a\n    match:\n      rules: [flapping, cable_on_fire]\n    action: notify\n",
        "rules[0].match.rules[1]",
        4,
        "unknown suspect rule",
        "congestion, errors_both_ends, errors_one_end",
    ),
    (
        "drain_link of a switch",
        "rules:\n  - name: a\n    match:\n      kinds: [cable, switch]\n      link_kinds: [leaf_spine]\n"
        "    action: drain_link\n",
        "rules[0].match.kinds[1]",
        4,
        "drain_link cannot act on a switch",
        "cable, optic, port, link",
    ),
    (
        "drain_link of a rail, block list",
        "rules:\n  - name: a\n    match:\n      kinds:\n        - port\n        - rail\n"
        "      link_kinds: [leaf_spine]\n    action: drain_link\n",
        "rules[0].match.kinds[1]",
        6,
        "cannot act on a rail",
        "cable, optic, port, link",
    ),
    (
        "drain_link of a nic",
        "rules:\n  - name: a\n    match: {kinds: [nic], link_kinds: [leaf_spine]}\n    action: drain_link\n",
        "rules[0].match.kinds[0]",
        3,
        "cannot act on a nic",
        "cable, optic, port, link",
    ),
    (
        "drain_link of any kind",
        "rules:\n  - name: a\n    match:\n      link_kinds: [leaf_spine]\n    action: drain_link\n",
        "rules[0].match.kinds",
        3,
        "drain_link needs match.kinds",
        "cable, optic, port, link",
    ),
    (
        "drain_switch of a port",
        "rules:\n  - name: a\n    match:\n      kinds: [switch, port]\n    action: drain_switch\n",
        "rules[0].match.kinds[1]",
        4,
        "drain_switch cannot act on a port",
        "switch",
    ),
    (
        "quarantine_node of a rail",
        "rules:\n  - name: a\n    match:\n      kinds: [nic, rail]\n    action: quarantine_node\n",
        "rules[0].match.kinds[1]",
        4,
        "quarantine_node cannot act on a rail",
        "nic, host, port, cable",
    ),
    (
        "quarantine_node of a switch",
        "rules:\n  - name: a\n    match:\n      kinds: [switch]\n    action: quarantine_node\n",
        "rules[0].match.kinds[0]",
        4,
        "cannot act on a switch",
        "nic",
    ),
    (
        "drain_link of a host link",
        "rules:\n  - name: a\n    match:\n      kinds: [cable]\n      link_kinds: [leaf_spine, host]\n"
        "    action: drain_link\n",
        "rules[0].match.link_kinds[1]",
        5,
        "only path on its rail",
        "quarantine_node",
    ),
    (
        "drain_link of any link",
        "rules:\n  - name: a\n    match:\n      kinds: [cable]\n    action: drain_link\n",
        "rules[0].match.link_kinds",
        3,
        "needs match.link_kinds",
        "quarantine_node",
    ),
    (
        "quarantine_node for a fabric link",
        "rules:\n  - name: a\n    match:\n      kinds: [port]\n      link_kinds: [spine_super_spine]\n"
        "    action: quarantine_node\n",
        "rules[0].match.link_kinds[0]",
        5,
        "not its nodes' fault",
        "host",
    ),
    (
        "text for a number",
        "rules:\n  - name: a\n    action: notify\n    persistence: often\n",
        "rules[0].persistence",
        4,
        "invalid value",
        "integer",
    ),
    (
        "persistence zero",
        "rules:\n  - name: a\n    action: notify\n    persistence: 0\n",
        "rules[0].persistence",
        4,
        "invalid value",
        "greater than or equal to 1",
    ),
    (
        "window of zero",
        "guard_rails:\n  window_s: 0\nrules:\n  - name: a\n    action: notify\n",
        "guard_rails.window_s",
        2,
        "invalid value",
        "greater than 0",
    ),
    (
        "unknown kind",
        "rules:\n  - name: a\n    match:\n      kinds: [wire]\n    action: notify\n",
        "rules[0].match.kinds[0]",
        4,
        "invalid value",
        "'switch'",
    ),
    (
        "unknown severity",
        "rules:\n  - name: a\n    match:\n      severity: critical\n    action: notify\n",
        "rules[0].match.severity",
        4,
        "invalid value",
        "'warn'",
    ),
    (
        "unknown action",
        "rules:\n  - name: a\n    action: reboot\n",
        "rules[0].action",
        3,
        "invalid value",
        "'quarantine_node'",
    ),
    ("bad name", "rules:\n  - name: Lossy Link\n    action: notify\n", "rules[0].name", 2, "pattern", ""),
    (
        "unknown field in a rule",
        "rules:\n  - name: a\n    action: notify\n    colour: red\n",
        "rules[0].colour",
        4,
        "unknown field 'colour'",
        "",
    ),
    (
        "unknown field in a match",
        "rules:\n  - name: a\n    match:\n      rule: [flapping]\n    action: notify\n",
        "rules[0].match.rule",
        4,
        "unknown field 'rule'",
        "",
    ),
    (
        "missing action",
        "graceful_s: 5\nrules:\n  - name: a\n    match: {severity: warn}\n",
        "rules[0].action",
        3,
        "required field is missing",
        "",
    ),
    ("missing rules", "graceful_s: 5\n", "rules", 1, "required field is missing", ""),
    ("no rules", "graceful_s: 5\nrules: []\n", "rules", 2, "give at least one item", ""),
    (
        "empty kinds",
        "rules:\n  - name: a\n    match:\n      kinds: []\n    action: notify\n",
        "rules[0].match.kinds",
        4,
        "give at least one item",
        "",
    ),
    ("not a mapping", "- name: a\n  action: notify\n", "", 1, "must be a YAML mapping", "rules"),
    ("empty file", "# nothing\n", "", 1, "must be a YAML mapping", "guard_rails"),
]


@pytest.mark.parametrize(("case", "text", "path", "line", "message", "valid"), BAD, ids=[b[0] for b in BAD])
def test_errors_name_file_line_field_and_what_is_valid(
    case: str, text: str, path: str, line: int, message: str, valid: str
) -> None:
    with pytest.raises(PolicyError) as err:
        load_policy_text(text, "my-policy.yaml")
    issue = next((i for i in err.value.issues if i.path == path), None)
    assert issue is not None, f"no issue at {path!r}: {err.value}"
    assert (issue.file, issue.line) == ("my-policy.yaml", line)
    assert message in issue.message and valid in issue.valid


def test_issues_quote_the_value_written() -> None:
    with pytest.raises(PolicyError) as err:
        load_policy_text(
            "rules:\n  - name: a\n    match:\n      rules: [cable_on_fire]\n      kinds: [host]\n"
            "      link_kinds: [leaf_spine]\n    action: drain_link\n"
        )
    assert {i.path: i.value for i in err.value.issues} == {
        "rules[0].match.rules[0]": "cable_on_fire",
        "rules[0].match.kinds[0]": "host",
    }


def test_not_yaml_is_a_policy_error() -> None:
    with pytest.raises(PolicyError) as err:
        load_policy_text("rules: [\n", "my-policy.yaml")
    assert err.value.issues[0].file == "my-policy.yaml"


# Match fields, finding (rule, severity, kind, link kind) -> taken
MATCHES = [
    ("absent filters take any fault", {}, ("pfc_storm", "fault", "rail", None), True),
    ("the default least severity is fault", {}, ("pfc_storm", "warn", "port", None), False),
    ("warn takes warn", {"severity": "warn"}, ("congestion", "warn", "rail", None), True),
    ("warn takes fault", {"severity": "warn"}, ("flapping", "fault", "link", "leaf_spine"), True),
    ("warn leaves info", {"severity": "warn"}, ("congestion", "info", "rail", None), False),
    ("info takes info", {"severity": "info"}, ("congestion", "info", "rail", None), True),
    ("fault leaves warn", {"severity": "fault"}, ("errors_one_end", "warn", "optic", "leaf_spine"), False),
    ("listed rule", {"rules": ("flapping", "links_down")}, ("links_down", "fault", "link", "leaf_spine"), True),
    ("unlisted rule", {"rules": ("flapping",)}, ("links_down", "fault", "link", "leaf_spine"), False),
    ("listed kind", {"kinds": ("cable", "optic")}, ("errors_one_end", "fault", "optic", "host"), True),
    ("unlisted kind", {"kinds": ("cable",)}, ("errors_one_end", "fault", "optic", "host"), False),
    ("listed link kind", {"link_kinds": ("host",)}, ("links_down", "fault", "link", "host"), True),
    ("unlisted link kind", {"link_kinds": ("host",)}, ("links_down", "fault", "link", "leaf_spine"), False),
    ("no link, link kinds given", {"link_kinds": ("host",)}, ("switch_degraded", "fault", "switch", None), False),
    (
        "every filter",
        {"rules": ("errors_both_ends",), "kinds": ("cable",), "severity": "warn", "link_kinds": ("leaf_spine",)},
        ("errors_both_ends", "warn", "cable", "leaf_spine"),
        True,
    ),
    (
        "every filter, one off",
        {"rules": ("errors_both_ends",), "kinds": ("cable",), "severity": "warn", "link_kinds": ("leaf_spine",)},
        ("errors_both_ends", "warn", "port", "leaf_spine"),
        False,
    ),
]


@pytest.mark.parametrize(("case", "fields", "finding", "taken"), MATCHES, ids=[m[0] for m in MATCHES])
def test_match(case: str, fields: dict, finding: tuple, taken: bool) -> None:
    assert Match(**fields).matches(*finding) is taken


def test_match_takes_severity_enums_and_refuses_unknown_words() -> None:
    m = Match(severity="warn")
    assert (m.matches("x", FAULT, "port"), m.matches("x", WARN, "port"), m.matches("x", INFO, "port")) == (
        True,
        True,
        False,
    )
    with pytest.raises(ValueError, match="critical"):
        m.matches("x", "critical", "port")


# finding -> the name of the shipped default's rule that takes it (None: no rule)
DEFAULT_RULES = [
    (("errors_one_end", "fault", "optic", "leaf_spine"), "lossy-fabric-link"),
    (("spine_path_loss", "fault", "link", "spine_super_spine"), "lossy-fabric-link"),
    (("errors_one_end", "fault", "optic", "host"), "faulty-host-link"),
    (("probe_unreachable", "fault", "host", "host"), "faulty-host-link"),
    (("switch_degraded", "fault", "switch", None), "degraded-switch"),
    (("errors_both_ends", "warn", "cable", "leaf_spine"), "tell-an-operator"),
    (("links_down", "fault", "link", "leaf_spine"), "tell-an-operator"),
    (("congestion", "info", "rail", None), None),
]


@pytest.mark.parametrize(("finding", "name"), DEFAULT_RULES)
def test_the_first_rule_that_takes_a_finding_decides(finding: tuple, name: str | None) -> None:
    rule = default_policy().rule_for(*finding)
    assert (rule.name if rule else None) == name


def test_rule_order_decides() -> None:
    text = (
        "rules:\n  - name: first\n    match: {severity: warn}\n    action: notify\n"
        "  - name: second\n    match: {severity: warn, kinds: [switch]}\n    action: drain_switch\n"
    )
    assert load_policy_text(text).rule_for("switch_degraded", "fault", "switch").name == "first"
