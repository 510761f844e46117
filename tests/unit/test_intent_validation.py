"""Schema and semantic validation: every rule has a negative fixture in tests/fixtures/intents/invalid/.

Each fixture's first line says ``# expect: <field path> | <message part>`` and the line the error must point
at ends with ``# <- error`` (no marker: line 1, the field's section is absent).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.errors import IntentError
from hwaac.plan import build_plan
from hwaac.validate import RULES, load_intent

FIXTURES = Path(__file__).parents[1] / "fixtures" / "intents"
INVALID = sorted((FIXTURES / "invalid").glob("*.yml"))
REPO = Path(__file__).parents[2]


def _expectation(path: Path) -> tuple[str, str, int]:
    lines = path.read_text().splitlines()
    field, message = (part.strip() for part in lines[0].removeprefix("# expect:").split("|"))
    marked = [i + 1 for i, line in enumerate(lines) if line.endswith("# <- error")]
    return field, message, marked[0] if marked else 1


SCHEMA_FIXTURES = {"unknown-field", "wrong-type", "bad-tiers", "missing-field"}


def _rule_of(fixture: Path) -> str:
    field, message, _ = _expectation(fixture)
    with pytest.raises(IntentError) as info:
        load_intent(fixture)
    return next(i.rule for i in info.value.issues if i.path == field and message in i.message)


# rules that only a real NetBox can trigger, with the integration test that does
NETBOX_RULES = {"netbox-pool-missing": REPO / "tests" / "integration" / "test_netbox_pools.py"}


def test_every_semantic_rule_has_a_negative_fixture():
    covered = {_rule_of(f) for f in INVALID if f.stem not in SCHEMA_FIXTURES}
    for rule, test_file in NETBOX_RULES.items():
        assert f'i.rule == "{rule}"' in test_file.read_text(), f"{test_file} no longer checks {rule}"
        covered.add(rule)
    assert set(RULES) - covered == set(), "rules without a negative fixture"
    assert covered <= set(RULES), "issues carry rule ids that are not registered"


@pytest.mark.parametrize("fixture", INVALID, ids=[p.stem for p in INVALID])
def test_invalid_intent_names_file_line_field_value_and_fix(fixture: Path):
    field, message, line = _expectation(fixture)
    with pytest.raises(IntentError) as info:
        load_intent(fixture)
    matching = [i for i in info.value.issues if i.path == field and message in i.message]
    assert matching, f"expected {field}: {message!r}; got:\n{info.value}"
    issue = matching[0]
    assert issue.file == str(fixture)
    assert issue.line == line, f"{issue} should point at line {line}"
    text = str(issue)
    assert text.startswith(f"{fixture}:{line}: {field}: ")
    # every message says what would be valid, or is a 'missing' error that names the field
    assert issue.valid or "missing" in issue.message


def test_pool_too_small_says_how_many_and_smallest_prefix():
    with pytest.raises(IntentError) as info:
        load_intent(FIXTURES / "invalid" / "pool-too-small.yml")
    issue = next(i for i in info.value.issues if i.path == "addressing.host_links.prefix")
    # 1 SU x 2 rails x 4 downlinks = 8 /31s = 16 addresses -> a /28
    assert issue.value == "172.16.0.0/30"
    assert "needs 16 addresses" in issue.message
    assert issue.valid == "a /28 or larger"


def test_unknown_field_lists_valid_keys():
    with pytest.raises(IntentError) as info:
        load_intent(FIXTURES / "invalid" / "unknown-field.yml")
    issue = info.value.issues[0]
    assert "rails" in issue.valid and "su_count" in issue.valid


def test_type_errors_say_what_is_valid():
    with pytest.raises(IntentError) as info:
        load_intent(FIXTURES / "invalid" / "wrong-type.yml")
    issue = info.value.issues[0]
    assert (issue.value, issue.valid) == ("two", "a valid integer")
    with pytest.raises(IntentError) as info:
        load_intent(FIXTURES / "invalid" / "bad-tiers.yml")
    assert (info.value.issues[0].value, info.value.issues[0].valid) == (5, "2 or 3")


def test_yaml_syntax_error_has_line(tmp_path: Path):
    bad = tmp_path / "fabric.yml"
    bad.write_text("fabric:\n  name: x\n  site: [unclosed\nswitches: {}\n")
    with pytest.raises(IntentError) as info:
        load_intent(bad)
    issue = info.value.issues[0]
    assert "not valid YAML" in issue.message
    assert issue.line >= 3


def test_valid_fixtures_and_inventory_load():
    for path in [
        *sorted((FIXTURES / "valid").glob("*.yml")),
        *sorted((REPO / "inventory").glob("*/fabric.yml")),
        *sorted((REPO / "inventory" / "examples").glob("*/fabric.yml")),
    ]:
        plan = build_plan(load_intent(path))
        assert plan.switches and plan.links


def test_folder_argument_reads_fabric_yml():
    assert load_intent(REPO / "inventory" / "demo").fabric.name == "demo"
