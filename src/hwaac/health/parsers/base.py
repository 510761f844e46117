"""What every line parser of :mod:`hwaac.health.parsers` starts with: the empty-output reason and the capped
collector of "line not understood" reasons (garbage input would otherwise give one reason per line)."""

from __future__ import annotations

from typing import Protocol

MAX_LINE_REASONS = 5


class HasUnknown(Protocol):
    """A result with its list of UNKNOWN reasons (:class:`hwaac.health.result.ToolResult`)."""

    unknown: list[str]


def no_output(result: HasUnknown, raw: str) -> bool:
    """True, with the reason ``no output`` added to ``result``, when ``raw`` is empty or only whitespace."""
    if raw.strip():
        return False
    result.unknown.append("no output")
    return True


class LineReasons:
    """Collects ``line N not understood`` reasons, the first :data:`MAX_LINE_REASONS` of them.

    With ``counted``, :meth:`close` then says how many more lines were not understood; without, the first line past
    the cap adds ``more lines not understood`` where it stands among the other reasons.
    """

    def __init__(self, unknown: list[str], *, counted: bool = False) -> None:
        self.unknown = unknown
        self.count = 0
        self.counted = counted

    def add(self, number: int, line: str) -> None:
        """One line not understood (``number`` counts from 1)."""
        self.count += 1
        if self.count <= MAX_LINE_REASONS:
            self.unknown.append(f"line {number} not understood: {line.strip()[:120]!r}")
        elif self.count == MAX_LINE_REASONS + 1 and not self.counted:
            self.unknown.append("more lines not understood")

    def close(self) -> None:
        """The count of the lines past the cap, when ``counted``."""
        if self.counted and self.count > MAX_LINE_REASONS:
            self.unknown.append(f"{self.count - MAX_LINE_REASONS} more lines not understood")
