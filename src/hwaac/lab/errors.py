"""The lab's error: one message for the operator, naming what failed and what to do."""

from __future__ import annotations


class LabError(Exception):
    """A lab operation could not be done (bad input, a missing tool, a command that failed)."""


class LabNotUp(LabError):
    """No lab of that name is up (no state folder)."""
