# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Filters that summarize a SONiC CONFIG_DB change per table: ``config_db_diff`` (two config_db documents),
``config_patch_summary`` (an RFC 6902 patch) and ``config_diff_counts``. Thin: the logic is
:mod:`hwaac.apply.config_diff`. Documentation: ``<filter>.yml`` beside this file, docs/filters.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_imports import HwaacImports

with HwaacImports() as HWAAC:  # this collection's Python core (same version), checked when a filter runs
    from hwaac.apply import config_diff


def _call(name: str, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` (a function over hwaac.apply.config_diff) with its errors as errors of the filter ``name``."""
    HWAAC.require(f"aiinfra.hwaac.{name} needs", AnsibleFilterError)
    try:
        return fn(*args)
    except ValueError as exc:
        raise AnsibleFilterError(f"aiinfra.hwaac.{name}: {exc}") from None


def _summarize_config_diff(before: Any, after: Any) -> dict[str, Any]:
    return config_diff.summarize_config_diff(before, after)


def _summarize_patch(patch: Any, before: Any) -> dict[str, Any]:
    return config_diff.summarize_patch(patch, before=before)


def config_db_diff(before: Any, after: Any) -> dict[str, Any]:
    """Per table, the keys ``after`` adds, removes and changes (with the fields) relative to ``before``."""
    return _call("config_db_diff", _summarize_config_diff, before, after)


def config_patch_summary(patch: Any, before: Any = None) -> dict[str, Any]:
    """The same summary from an RFC 6902 patch (exact when ``before``, the config it applies to, is given)."""
    return _call("config_patch_summary", _summarize_patch, patch, before)


def config_diff_counts(summary: Any) -> dict[str, Any]:
    """``{table: {added: n, removed: n, changed: n}}`` of a summary."""

    def counts(s: Any) -> dict[str, Any]:
        if not isinstance(s, dict) or not all(
            isinstance(t, dict) and {"added", "removed", "changed"} <= set(t) for t in s.values()
        ):
            raise ValueError(
                "expected the output of config_db_diff or config_patch_summary ({table: {added, removed, changed}})"
            )
        return config_diff.summary_counts(s)

    return _call("config_diff_counts", counts, summary)


class FilterModule:
    """aiinfra.hwaac config diff filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "config_db_diff": config_db_diff,
            "config_patch_summary": config_patch_summary,
            "config_diff_counts": config_diff_counts,
        }
