"""Load and validate an intent: schema (:mod:`hwaac.model.loader`), then every semantic rule
(:mod:`hwaac.model.rules` on the intent alone, :mod:`hwaac.plan.rules` on the derived fabric), each issue
located at its file and line.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hwaac.errors import IntentError, IntentIssue
from hwaac.model import rules as intent_rules
from hwaac.model.intent import Intent, NetBoxPrefixRef
from hwaac.model.limits import read_text
from hwaac.model.loader import load_intent_text, locate
from hwaac.plan import rules as fabric_rules

RULES: dict[str, str] = {**intent_rules.RULES, **fabric_rules.RULES}

POOL_PATHS: tuple[tuple[str, ...], ...] = (
    ("addressing", "loopbacks", "leaf"),
    ("addressing", "loopbacks", "spine"),
    ("addressing", "loopbacks", "super_spine"),
    ("addressing", "leaf_spine"),
    ("addressing", "spine_super_spine"),
    ("addressing", "host_links", "prefix"),
)


class PoolLookupError(Exception):
    """A NetBox prefix role names no prefix, or several. ``valid`` says what would be accepted."""

    def __init__(self, message: str, valid: str):
        super().__init__(message)
        self.valid = valid


PoolLookup = Callable[[NetBoxPrefixRef, str], str]
"""Resolves a NetBox pool reference (and the fabric's site slug) to its prefix, e.g. ``"172.16.0.0/16"``;
raises :class:`PoolLookupError` when NetBox holds no such prefix (``hwaac.netbox.pools.prefix_lookup``)."""


def netbox_pool_refs(intent: Intent) -> list[tuple[tuple[str, ...], NetBoxPrefixRef]]:
    """The pools of ``intent`` that name a NetBox prefix role, with their field paths."""
    out = []
    for path in POOL_PATHS:
        node: Any = intent
        for key in path:
            node = getattr(node, key, None)
        if isinstance(node, NetBoxPrefixRef):
            out.append((path, node))
    return out


def resolve_netbox_pools(intent: Intent, lookup: PoolLookup) -> tuple[Intent, list[IntentIssue]]:
    """``intent`` with every NetBox pool reference replaced by the prefix NetBox holds for it, and the issues of
    references NetBox cannot resolve (rule ``netbox-pool-missing``)."""
    refs = netbox_pool_refs(intent)
    if not refs:
        return intent, []
    data = intent.model_dump(exclude_unset=True)  # keep "unset" so defaults that depend on it still apply
    issues = []
    resolved: dict[str, str] = {}
    for path, ref in refs:
        try:
            prefix = lookup(ref, intent.fabric.site)
        except PoolLookupError as exc:
            issues.append(IntentIssue(".".join(path), str(exc), ref.netbox_role, exc.valid, rule="netbox-pool-missing"))
            continue
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = prefix
        resolved[".".join(path)] = ref.netbox_role
    out = Intent.model_validate(data)
    out._netbox_pools.update(resolved)
    return out, issues


def semantic_issues(intent: Intent) -> list[IntentIssue]:
    """All semantic issues of a schema-valid intent (empty when it is valid)."""
    return intent_rules.check_intent(intent) + fabric_rules.check_fabric(intent)


def validate_intent(intent: Intent) -> None:
    """Run every semantic rule on an intent built in code. Raises :class:`IntentError`."""
    issues = semantic_issues(intent)
    if issues:
        raise IntentError(issues)


def load_intent(path: str | Path, pool_lookup: PoolLookup | None = None) -> Intent:
    """Load ``path`` (an intent YAML file, or a folder holding ``fabric.yml``), validate schema and semantics.

    Args:
        pool_lookup: resolves pools that name a NetBox prefix role (:data:`PoolLookup`); without it such pools
            are reported (rule ``netbox-pool-unresolved``).

    Returns the validated :class:`~hwaac.model.intent.Intent`, its NetBox pools replaced by their prefixes.

    Raises:
        IntentError: listing every problem, each with file, line, field path, value and what would be valid.
        FileNotFoundError: there is no such file (a file that cannot be read is an :class:`IntentError`).
        hwaac.netbox.errors.NetBoxError: from ``pool_lookup``, when NetBox cannot be reached.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "fabric.yml"
    return load_intent_source(read_text(p), str(p), pool_lookup)


def load_intent_source(text: str, source: str, pool_lookup: PoolLookup | None = None) -> Intent:
    """:func:`load_intent` for intent YAML held in memory (``source`` names it in errors: a file path)."""
    intent, index = load_intent_text(text, source)
    issues: list[IntentIssue] = []
    if pool_lookup is not None:
        intent, issues = resolve_netbox_pools(intent, pool_lookup)
    issues += semantic_issues(intent)
    if issues:
        raise IntentError([locate(i, index) for i in issues])
    return intent
