"""Errors raised by hwaac, shaped so that a user can fix the input from the message alone.

Every problem with an intent file is an :class:`IntentIssue` that names the file, the line, the field path
(dotted, list items as ``[i]``), the bad value and what would be valid. :class:`IntentError` carries one or
more issues; the CLI prints them and exits with status 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class IntentIssue:
    """One problem found in an intent file.

    Attributes:
        path: the field path, e.g. ``addressing.host_links.prefix`` or ``switch_models.SN5600.ports``.
        message: what is wrong, in one sentence.
        value: the offending value as written (``None`` when the field is missing).
        valid: what would be accepted instead (empty when the message already says it).
        file: the YAML file the field came from (empty when the intent was built in code).
        line: 1-based line of the field in ``file`` (0 when unknown).
        rule: id of the semantic rule that found it (see ``hwaac.validate.RULES``); empty for schema errors.
    """

    path: str
    message: str
    value: object = None
    valid: str = ""
    file: str = ""
    line: int = 0
    rule: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.file and self.line else (self.file or "<intent>")
        text = f"{where}: {self.path or '<root>'}: {self.message}"
        if self.value is not None:
            text += f" (got {_short(repr(self.value))})"
        if self.valid:
            text += f"; valid: {self.valid}"
        return text


MAX_VALUE_CHARS = 80  # of a value quoted in a message: a name pasted 5 MB long must not flood the terminal


def _short(text: str) -> str:
    """``text`` cut to :data:`MAX_VALUE_CHARS` with the full length said, e.g. ``'uuuu…(500002 chars)``."""
    if len(text) <= MAX_VALUE_CHARS:
        return text
    return f"{text[:MAX_VALUE_CHARS]}…({len(text)} chars)"


@dataclass
class IntentError(Exception):
    """The intent is invalid; ``issues`` lists every problem found (never empty)."""

    issues: list[IntentIssue] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(str(i) for i in self.issues)


class RenumberError(Exception):
    """A new plan would change addresses, ASNs or ports of devices that already exist in the old plan.

    ``changes`` lists human-readable descriptions (``device: field old -> new``).
    """

    def __init__(self, changes: list[str]):
        self.changes = changes
        super().__init__(
            f"{len(changes)} existing allocation(s) would be renumbered; "
            "pass --allow-renumber to accept:\n  "
            + "\n  ".join(changes[:50])
            + (f"\n  ... and {len(changes) - 50} more" if len(changes) > 50 else "")
        )


class NetBoxError(Exception):
    """Any failure talking to, or running, a NetBox; the message is meant for the user, one line first.

    Defined here, below both the NetBox client (:mod:`hwaac.netbox`, which re-exports it) and the development
    NetBox (:mod:`hwaac.devnetbox`). Messages never carry an API token.
    """
