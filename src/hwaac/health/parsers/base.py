"""What the parsers of :mod:`hwaac.health.parsers` share: the empty-output reason, the numbered non-blank lines of
an output, the capped collector of "line not understood" reasons (garbage input would otherwise give one reason per
line) and the non-zero exit finding."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from hwaac.health.result import Action, Finding, Status, ToolResult

MAX_LINE_REASONS = 5


class HasUnknown(Protocol):
    """A result with its list of UNKNOWN reasons (:class:`hwaac.health.result.ToolResult`)."""

    unknown: list[str]


def no_output(result: HasUnknown, raw: object, reason: str = "no output") -> bool:
    """True, with ``reason`` added to ``result``, when ``raw`` is not text, or is empty or only whitespace."""
    if isinstance(raw, str) and raw.strip():
        return False
    result.unknown.append(reason)
    return True


def with_stderr(stdout: str, stderr: str) -> str:
    """``stdout`` with ``stderr`` after it on a line of its own (a tool that says its errors there), as parsed."""
    return stdout + ("\n" + stderr if stderr else "")


def text_lines(raw: str) -> Iterator[tuple[int, str, str]]:
    """``(number, line, text)`` for each line of ``raw`` that is not blank: its number (counting from 1, blank lines
    included), the line as written and the line without surrounding white space."""
    for number, line in enumerate(raw.splitlines(), start=1):
        if text := line.strip():
            yield number, line, text


def exit_not_zero(result: ToolResult, exit_code: int | None, code: str, tool: str) -> None:
    """A FAIL finding ``code`` (retest) when ``tool`` exited non-zero although its output, read completely, shows
    no failure: an exit code only ever makes a result worse (:mod:`hwaac.health.result`)."""
    if exit_code not in (None, 0) and result.status() < Status.UNKNOWN:
        result.findings.append(
            Finding(
                code,
                Status.FAIL,
                f"{tool} exited with code {exit_code} although its output shows no failure",
                action=Action.RETEST,
            )
        )


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
