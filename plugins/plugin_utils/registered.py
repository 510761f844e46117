# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""What a filter reads from a registered ``command``/``shell`` result (or from its stdout string), with one-line
errors that name the filter: shared by the filters that take a tool's output."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible.errors import AnsibleFilterError


def command_output(value: Any, name: str) -> tuple[str, int | None, str]:
    """``(stdout, rc, stderr)`` of a registered command/shell result, or of a string (the stdout itself).

    Raises:
        AnsibleFilterError: a skipped task's result, a dict without ``stdout``, or values of the wrong type.
    """
    if isinstance(value, str):
        return value, None, ""
    if isinstance(value, Mapping):
        if value.get("skipped"):
            raise AnsibleFilterError(f"{name}: the registered task was skipped, there is no output to read")
        if "stdout" not in value:
            keys = ", ".join(sorted(map(str, value))[:12]) or "none"
            raise AnsibleFilterError(
                f"{name}: expected a registered command/shell result (with 'stdout') or its "
                f"stdout string, got a dict with keys {keys}"
            )
        stdout, rc, stderr = value.get("stdout"), value.get("rc"), value.get("stderr") or ""
        if not isinstance(stdout, str):
            raise AnsibleFilterError(f"{name}: 'stdout' must be text, got {type(stdout).__name__}")
        if rc is not None and (isinstance(rc, bool) or not isinstance(rc, int)):
            raise AnsibleFilterError(f"{name}: 'rc' must be an integer exit status, got {rc!r}")
        return stdout, rc, str(stderr)
    raise AnsibleFilterError(
        f"{name}: expected a registered command/shell result or its stdout string, got {type(value).__name__}"
    )
