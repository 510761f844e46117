"""``hwaac deploy``'s display, from the accounting's notes: a live table of the current play's batches (rich) when
stderr is a terminal, else one plain line per batch started and finished and per failed host; at the end a recap
per host and per batch (:func:`recap`). Text from the run (names, messages) goes to rich as ``Text``, never as
markup, so it is shown as written."""

from __future__ import annotations

import sys
from typing import Any, Protocol, TextIO

from hwaac.deploy.accounting import Accounting, Batch, Note

SHOWN_HOSTS = 6  # hosts named per batch line; the rest counted
LIVE_ROWS = 12  # batches of the current play in the live table (the latest)


def hosts_text(hosts: list[str], limit: int = SHOWN_HOSTS) -> str:
    """``a, b, c`` or ``a, b, ... (+N)``."""
    if len(hosts) <= limit:
        return ", ".join(hosts) or "-"
    return f"{', '.join(hosts[:limit])}, ... (+{len(hosts) - limit})"


def batch_line(batch: Batch) -> str:
    """The counts of a finished batch, one line."""
    changed = f" ({hosts_text(batch.changed_hosts)})" if batch.changed_hosts else ""
    failed = f" ({hosts_text(batch.failed_hosts)})" if batch.failed_hosts else ""
    dark = f" ({hosts_text(batch.unreachable_hosts)})" if batch.unreachable_hosts else ""
    return (
        f"{batch.tasks} tasks, ok {batch.ok}, changed {batch.changed}{changed}, failed {batch.failed}"
        f"{failed}, unreachable {batch.unreachable}{dark}, skipped {batch.skipped}"
    )


class Display(Protocol):
    def note(self, note: Note, acc: Accounting) -> None: ...

    def close(self) -> None: ...


class PlainDisplay:
    """One line per play, per batch started and finished, and per failed or unreachable host."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def _say(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def note(self, note: Note, acc: Accounting) -> None:
        b = note.batch
        if note.kind == "play" and note.play is not None:
            self._say(f"play {note.play.name!r} (hosts: {note.play.pattern})")
        elif note.kind == "no_hosts" and note.play is not None:
            self._say(f"play {note.play.name!r}: no hosts matched")
        elif note.kind == "batch" and b is not None:
            self._say(f"  batch {b.label}: {len(b.hosts)} host(s): {hosts_text(b.hosts)}")
        elif note.kind in ("failed", "unreachable"):
            self._say(f"    {note.kind.upper()} {note.host}: {note.task}: {note.message}")
        elif note.kind == "done" and b is not None:
            self._say(f"  batch {b.label} done: {batch_line(b)}")

    def close(self) -> None:
        pass


class RichDisplay:
    """A live table of the current play's batches (hosts, tasks done, the task running, changed and failed)."""

    def __init__(self, out: TextIO) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = Console(file=out)
        self.live = Live(console=self.console, refresh_per_second=4, transient=False)
        self.live.start()
        self.lines: list[Any] = []  # rich Text

    def _table(self, acc: Accounting) -> Any:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        play = acc.plays[-1] if acc.plays else None
        table = Table(title=Text(f"play {play.name!r}" if play else "starting"), title_justify="left", expand=False)
        for col in ("batch", "hosts", "tasks", "changed", "failed/unreachable", "state"):
            table.add_column(col, no_wrap=col != "hosts")
        for b in (play.batches if play else [])[-LIVE_ROWS:]:
            state = "done" if b.finished else (b.task or "starting")
            bad = len(b.failed_hosts) + len(b.unreachable_hosts)
            table.add_row(
                Text(b.label),
                Text(hosts_text(b.hosts, 3)),
                str(b.tasks),
                str(len(b.changed_hosts)),
                Text(str(bad), style="red" if bad else ""),
                Text(state),
            )
        return Group(*self.lines[-8:], table)

    def note(self, note: Note, acc: Accounting) -> None:
        from rich.text import Text

        if note.kind in ("failed", "unreachable"):
            self.lines.append(Text.assemble((note.kind.upper(), "red"), f" {note.host}: {note.task}: {note.message}"))
        elif note.kind == "no_hosts" and note.play is not None:
            self.lines.append(Text(f"play {note.play.name!r}: no hosts matched"))
        self.live.update(self._table(acc), refresh=note.kind in ("batch", "done", "failed", "stats"))

    def close(self) -> None:
        self.live.stop()


def display_for(out: TextIO = sys.stderr, rich: bool | None = None) -> Display:
    """The rich display when ``out`` is a terminal (or ``rich``), else the plain lines."""
    use_rich = out.isatty() if rich is None else rich
    return RichDisplay(out) if use_rich else PlainDisplay(out)


def recap(summary: dict[str, Any]) -> str:
    """The recap of a run's summary: per host (ansible's recap), per batch, the hosts never started."""
    hosts: dict[str, dict[str, int]] = summary.get("hosts", {})
    cols = ("ok", "changed", "failed", "unreachable", "skipped", "rescued", "ignored")
    width = max([len("host"), *(len(h) for h in hosts)])
    lines = [f"{'host':<{width}}  " + "  ".join(f"{c:>{len(c)}}" for c in cols)]
    for host, counts in hosts.items():
        lines.append(f"{host:<{width}}  " + "  ".join(f"{counts.get(c, 0):>{len(c)}}" for c in cols))
    lines.append("batches:")
    for b in summary.get("batches", []):
        of = b["of"] if b["of"] is not None else "?"
        lines.append(
            f"  {b['play']!r} batch {b['batch']}/{of}: {hosts_text(b['hosts'])}: {b['tasks']} tasks, "
            f"changed {b['changed']}, failed {b['failed']}, unreachable {b['unreachable']}"
        )
    if summary.get("not_started"):
        lines.append(f"not started (the rollout stopped): {hosts_text(summary['not_started'], 20)}")
    return "\n".join(lines)
