"""hwaac.model.yamlfile: the YAML 1.2 core schema on libyaml, lines of keys, and YAML that is refused.

Expected values follow YAML 1.2.2 section 10.3.2 (core schema tag resolution), the examples of section 2 and the
rules ruamel.yaml applies (a duplicate key is an error).
"""

from __future__ import annotations

import math

import pytest

from hwaac.errors import IntentError
from hwaac.model.yamlfile import load_yaml

# text -> data: YAML 1.2 resolution, where YAML 1.1 (PyYAML's default) reads several differently
RESOLVED = [
    ("a: yes", {"a": "yes"}),  # 1.1: True
    ("a: off", {"a": "off"}),  # 1.1: False
    ("a: TRUE", {"a": True}),
    ("a: 010", {"a": 10}),  # 1.1: 8 (octal)
    ("a: 0o10", {"a": 8}),
    ("a: 0x1F", {"a": 31}),
    ("a: -0x1F", {"a": "-0x1F"}),  # the core schema has no signed hex or octal
    ("a: -17", {"a": -17}),
    ("a: 9223372036854775807", {"a": 2**63 - 1}),
    ("a: 1:30", {"a": "1:30"}),  # 1.1: 5400 (base 60)
    ("a: 1_000", {"a": "1_000"}),  # 1.1: 1000
    ("a: 1e3", {"a": 1000.0}),  # 1.1: the string '1e3'
    ("a: .5", {"a": 0.5}),
    ("a: -.inf", {"a": -math.inf}),
    ("a: 2024-01-01", {"a": "2024-01-01"}),  # 1.1: a date
    ("a: ~", {"a": None}),
    ("a:", {"a": None}),
    ('a: "26"', {"a": "26"}),
    ("x: &x {a: 1, b: 2}\ny: {<<: *x, b: 3}", {"x": {"a": 1, "b": 2}, "y": {"a": 1, "b": 3}}),
    ("\ufeffa: 1", {"a": 1}),  # a byte order mark
    ("", None),
]


@pytest.mark.parametrize(("text", "data"), RESOLVED, ids=[t for t, _ in RESOLVED])
def test_scalars_resolve_by_the_yaml_1_2_core_schema(text: str, data: object):
    assert load_yaml(text + "\n", "f.yml")[0] == data


# text -> (line, message part)
REFUSED = [
    ("a: 1\nb: 2\na: 3", 3, "duplicate key 'a' (first on line 1)"),
    ("{a: 1, a: 1}", 1, "duplicate key 'a'"),
    ("a: &a [1, *a]", 1, "refers to a mapping or list that contains it"),
    ("a: !!timestamp 2020-01-01", 1, "unsupported tag"),
    ("a: !!binary aGk=", 1, "unsupported tag"),
    ("a: !!python/object/apply:os.system [true]", 1, "unsupported tag"),
    ("a: !!int abc", 1, "not an integer"),
    ("a: !!int " + "9" * 5000, 1, "not an integer"),  # beyond Python's int conversion limit
    ("a: 9223372036854775808", 1, "does not fit in 64 bits"),  # 2**63
    ("a: !!float x", 1, "not a number"),
    ("a: !!bool yes", 1, "not true or false"),
    ("? [1, 2]\n: x", 1, "unhashable key"),
    ("a: *nowhere", 1, "undefined alias"),
    ("a: 1\n---\nb: 2", 2, "another document"),
    ("a: [1, 2", 2, "not valid YAML"),
]


@pytest.mark.parametrize(("text", "line", "message"), REFUSED, ids=[t[:30] for t, _, _ in REFUSED])
def test_refused_yaml_names_the_line(text: str, line: int, message: str):
    with pytest.raises(IntentError) as info:
        load_yaml(text + "\n", "f.yml")
    issue = info.value.issues[0]
    assert message in issue.message
    assert (issue.file, issue.line) == ("f.yml", line)


def test_lines_of_keys_items_and_missing_fields():
    text = "a:\n  b: 1\n  c:\n    - x\n    - {d: 2}\n"
    _, index = load_yaml(text, "f.yml")
    assert index.line_of(["a", "b"]) == 2
    assert index.line_of(["a", "c", 1, "d"]) == 5
    assert index.line_of(["a", "missing"]) == 1  # the nearest enclosing key
    assert index.value_at(["a", "c", 1]) == {"d": 2}
