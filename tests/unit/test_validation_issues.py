"""hwaac.model.issues.validation_issues: one issue per pydantic error, at the line of its field."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hwaac.model.issues import dotted, plain, validation_issues
from hwaac.model.yamlfile import load_yaml


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    size: int = Field(ge=1)

    @field_validator("size")
    @classmethod
    def _even(cls, v: int) -> int:
        if v % 2:
            raise ValueError("size must be even")
        return v


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    items: list[_Item] = []


# YAML -> (path, line, message, value, valid)
CASES = [
    ("name: a\ncolour: red\n", "colour", 2, "unknown field 'colour'", None, ""),
    ("items: []\n", "name", 1, "required field is missing", None, ""),
    ("name: a\nitems:\n  - size: x\n", "items[0].size", 3, "invalid value", "x", "a valid integer"),
    ("name: a\nitems:\n  - size: 2\n  - size: 3\n", "items[1].size", 4, "size must be even", 3, ""),
    ("name: a\nitems: {size: 2}\n", "items", 2, "invalid value", "<dict>", "a valid list"),
]


@pytest.mark.parametrize(("text", "path", "line", "message", "value", "valid"), CASES)
def test_each_error_names_its_field_line_value_and_what_is_valid(
    text: str, path: str, line: int, message: str, value: object, valid: str
) -> None:
    root, index = load_yaml(text, "doc.yaml")
    with pytest.raises(ValidationError) as err:
        _Doc.model_validate(plain(root))
    (issue,) = validation_issues(err.value, index)
    assert (issue.path, issue.line, issue.message, issue.value, issue.file) == (path, line, message, value, "doc.yaml")
    assert valid in issue.valid and bool(issue.valid) == bool(valid)


def test_file_overrides_the_index_file() -> None:
    root, index = load_yaml("colour: red\n", "doc.yaml")
    with pytest.raises(ValidationError) as err:
        _Doc.model_validate(root)
    assert {i.file for i in validation_issues(err.value, index, "shown.yaml")} == {"shown.yaml"}


def test_dotted_and_plain() -> None:
    assert dotted(("a", "b", 0, "c")) == "a.b[0].c"
    nested = {"a": [{"b": 1}]}
    copy = plain(nested)
    assert copy == nested and copy["a"] is not nested["a"]
