"""pydantic's :class:`~pydantic.ValidationError` as :class:`~hwaac.errors.IntentIssue` s that name file, line, field
path, value and what would be valid, for the small YAML files hwaac loads with
:func:`hwaac.model.loader.parse_yaml` (SLOs, health profiles, the mitigation policy). The intent file has its own,
richer mapping (unions, "did you mean"): :mod:`hwaac.model.loader`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from hwaac.errors import IntentIssue
from hwaac.model.yamlfile import LineIndex


def plain(node: Any) -> Any:
    """``node`` with every mapping a ``dict`` and every list a new ``list``, all the way down."""
    if isinstance(node, Mapping):
        return {k: plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain(v) for v in node]
    return node


def dotted(path: Sequence[str | int]) -> str:
    """``('a', 'b', 0, 'c')`` -> ``a.b[0].c``."""
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


def validation_issues(err: ValidationError, index: LineIndex, file: str | None = None) -> list[IntentIssue]:
    """One issue per error of ``err``, at the line ``index`` has for its field (``file``: ``index.file`` when None).

    An unknown field says so and names it, a missing one says it is required; pydantic's "Input should be X"
    becomes "invalid value" with X as what is valid; a model validator's ``ValueError`` keeps its own words. The
    value is the one written in the file (``<dict>`` or ``<list>`` for a mapping or a list, None when missing)."""
    file = index.file if file is None else file
    issues = []
    for e in err.errors(include_url=False):
        loc, kind, msg, valid = list(e["loc"]), e["type"], e["msg"], ""
        if kind == "extra_forbidden":
            msg = f"unknown field {loc[-1]!r}"
        elif kind == "missing":
            msg = "required field is missing"
        elif msg.startswith("Input should be "):
            msg, valid = "invalid value", msg.removeprefix("Input should be ")
        elif msg.startswith("Value error, "):
            msg = msg.removeprefix("Value error, ")
        value = None if kind in ("missing", "extra_forbidden") else index.value_at(loc)
        if isinstance(value, dict | list):
            value = f"<{type(value).__name__}>"
        issues.append(
            IntentIssue(path=dotted(loc), message=msg, value=value, valid=valid, file=file, line=index.line_of(loc))
        )
    return issues


__all__ = ["dotted", "plain", "validation_issues"]
