# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""A node's verdict (``hwaac.health`` ``Verdict.to_dict()`` or a report of the same keys) in a task result, alike
in every action plugin that judges on the controller."""

from __future__ import annotations

from typing import Any

VERDICT_KEYS = ("status", "codes", "action", "findings")


def verdict_fields(verdict: dict[str, Any]) -> dict[str, Any]:
    """The verdict's ``status``, ``codes``, ``action`` and ``findings``, for the task result."""
    return {k: verdict[k] for k in VERDICT_KEYS}


def verdict_msg(label: str, verdict: dict[str, Any]) -> str:
    """The task's one-line ``msg``: ``LABEL: STATUS``, then the fault codes in brackets when there are any."""
    return f"{label}: {verdict['status']}" + (f" ({', '.join(verdict['codes'])})" if verdict["codes"] else "")
