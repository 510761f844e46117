"""SUSPECT_RULES names every rule that builds a Suspect in hwaac's sources, and no other."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from hwaac.telemetry.suspects import DEGRADING, SUSPECT_RULES

SRC = Path(__file__).parents[3] / "src"


def _builds_suspect(func: ast.expr) -> bool:
    """Whether a call of ``func`` makes a Suspect: the class, or its constructor :meth:`Suspect.worst_of`."""
    if isinstance(func, ast.Attribute):
        return func.attr == "worst_of" and isinstance(func.value, ast.Name) and func.value.id == "Suspect"
    return isinstance(func, ast.Name) and func.id == "Suspect"


def _built_rules() -> dict[str, str]:
    """The first argument (or ``rule=``) of every ``Suspect(...)`` or ``Suspect.worst_of(...)`` call under src/hwaac,
    resolved to its text: rule -> the module that builds it."""
    out: dict[str, str] = {}
    for path in sorted((SRC / "hwaac").rglob("*.py")):
        text = path.read_text()
        if "Suspect(" not in text and "Suspect.worst_of(" not in text:
            continue
        module = ".".join(path.relative_to(SRC).with_suffix("").parts)
        for node in ast.walk(ast.parse(text)):
            if not (isinstance(node, ast.Call) and _builds_suspect(node.func)):
                continue
            arg = node.args[0] if node.args else next(k.value for k in node.keywords if k.arg == "rule")
            if isinstance(arg, ast.Constant):
                name = arg.value
            else:
                assert isinstance(arg, ast.Name), f"{module}:{node.lineno}: a rule name that is not a name or a text"
                name = getattr(importlib.import_module(module), arg.id)
            out[name] = module
    return out


def test_suspect_rules_is_every_rule_the_sources_build() -> None:
    built = _built_rules()
    assert "probe_unreachable" in built and "errors_both_ends" in built  # the scan sees literals and constants
    assert set(built) == set(SUSPECT_RULES)
    assert len(SUSPECT_RULES) == len(set(SUSPECT_RULES))


def test_degrading_rules_are_known() -> None:
    assert set(DEGRADING) <= set(SUSPECT_RULES)
