"""hwaac.tool_facts.plain: parser results as JSON-ready data (the filters' output shape)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any

import pytest

from hwaac.health.result import Action, Finding, Status
from hwaac.tool_facts import plain, tool_facts


@dataclass
class _Result:
    ports: dict[Any, int] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)

    @property
    def derived(self) -> int:  # a property is not a field: left out
        return 1


CASES = [
    (
        Finding("GPU_XID_79", Status.FAIL, "fallen off the bus", action=Action.RMA),
        {
            "code": "GPU_XID_79",
            "status": "FAIL",
            "message": "fallen off the bus",
            "subject": "",
            "evidence": "",
            "action": "rma",
        },
    ),
    (_Result({("mlx5_0", 1): 5, 3: 1}, {"b", "a"}), {"ports": {"mlx5_0/1": 5, "3": 1}, "seen": ["a", "b"]}),
    ({"x": (1.5, float("nan"), float("inf"))}, {"x": [1.5, None, None]}),
    (
        [datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC), PurePosixPath("/sys"), b"ok"],
        ["2025-01-02T03:04:05+00:00", "/sys", "ok"],
    ),
]


@pytest.mark.parametrize(("value", "expected"), CASES, ids=["finding-enums", "tuple-keys-sets", "nan", "others"])
def test_plain(value: Any, expected: Any) -> None:
    got = plain(value)
    assert got == expected
    assert json.loads(json.dumps(got, allow_nan=False)) == got


def test_output_must_be_text() -> None:
    with pytest.raises(ValueError, match=r"tool 'ibstat': the output must be text, got bytes"):
        tool_facts("ibstat", b"CA 'mlx5_0'")  # type: ignore[arg-type]
