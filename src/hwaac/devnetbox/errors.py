"""Errors of the development NetBox. Messages never carry an API token."""

from __future__ import annotations

from pathlib import Path

from hwaac.errors import NetBoxError


class LocalNetBoxError(NetBoxError):
    """The local NetBox (``hwaac netbox up``) could not be installed, started, stopped or used.

    ``log``: the service log that tells why; its last lines are appended to the message.
    """

    def __init__(self, message: str, *, log: Path | None = None, lines: int = 25) -> None:
        self.log = log
        text = message
        if log is not None:
            from hwaac.devnetbox.procs import tail

            last = tail(log, lines)
            text += f"\n  see {log}" + (f"; its last lines:\n{_indent(last)}" if last else " (empty)")
        super().__init__(text)


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines())
