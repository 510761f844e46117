"""Load and validate an intent: schema (:mod:`hwaac.model.loader`), then every semantic rule
(:mod:`hwaac.model.rules` on the intent alone, :mod:`hwaac.plan.rules` on the derived fabric), each issue
located at its file and line.
"""

from __future__ import annotations

from pathlib import Path

from hwaac.errors import IntentError, IntentIssue
from hwaac.model import rules as intent_rules
from hwaac.model.intent import Intent
from hwaac.model.loader import load_intent_text, locate
from hwaac.plan import rules as fabric_rules

RULES: dict[str, str] = {**intent_rules.RULES, **fabric_rules.RULES}


def semantic_issues(intent: Intent) -> list[IntentIssue]:
    """All semantic issues of a schema-valid intent (empty when it is valid)."""
    return intent_rules.check_intent(intent) + fabric_rules.check_fabric(intent)


def validate_intent(intent: Intent) -> None:
    """Run every semantic rule on an intent built in code. Raises :class:`IntentError`."""
    issues = semantic_issues(intent)
    if issues:
        raise IntentError(issues)


def load_intent(path: str | Path) -> Intent:
    """Load ``path`` (an intent YAML file, or a folder holding ``fabric.yml``), validate schema and semantics.

    Returns the validated :class:`~hwaac.model.intent.Intent`.

    Raises:
        IntentError: listing every problem, each with file, line, field path, value and what would be valid.
        FileNotFoundError: the file does not exist.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "fabric.yml"
    intent, index = load_intent_text(p.read_text(), str(p))
    issues = semantic_issues(intent)
    if issues:
        raise IntentError([locate(i, index) for i in issues])
    return intent
