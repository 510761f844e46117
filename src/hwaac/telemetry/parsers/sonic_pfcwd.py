"""``show pfcwd stats`` (sonic-utilities ``pfcwd/main.py``) as a :class:`~hwaac.telemetry.model.Snapshot`: PFC
watchdog storms detected and restored per lossless queue, and the watchdog's status of the queue as printed.

The tool prints only queues with a nonzero statistic (unless ``--empty``): a queue that is absent had no storm,
and an empty table is a complete reading. ``docs/telemetry/sonic-qos.md``.
"""

from __future__ import annotations

from hwaac.telemetry.model import Snapshot
from hwaac.telemetry.parsers.sonic_table import read_tables, to_int

_STORMS = "STORM DETECTED/RESTORED"


def parse_pfcwd_stats(raw: str, *, device: str = "", version: str | None = None) -> Snapshot:
    """Read ``show pfcwd stats`` / ``pfcwd show stats``: ``pfcwd{q}_storm_detected``, ``pfcwd{q}_storm_restored``
    and ``state["pfcwd{q}_status"]`` (``operational``, ``stormed``, ``N/A`` when the watchdog is stopped) for
    queue ``q`` of each port printed as ``Ethernet0:3``.

    ``unknown`` names: no pfcwd table, rows cut short, a count that is not a number (None). Never raises."""
    snap = Snapshot("show pfcwd stats", device=device, version=version or "")
    if not isinstance(raw, str):
        snap.unknown.append(f"input is {type(raw).__name__}, not text")
        return snap
    tables, snap.unknown = read_tables(raw)
    found = False
    for table in tables:
        header = table.header
        if header[0] != "QUEUE" or _STORMS not in header:
            snap.unknown.append(f"line {table.line}: a table headed {header[0]!r} is not pfcwd stats")
            continue
        found = True
        snap.unknown += table.problems
        storms = header.index(_STORMS)
        status = header.index("STATUS") if "STATUS" in header else None
        for line, cells in table.rows:
            port, _, queue = cells[0].rpartition(":")
            if not port or not queue.isdigit():
                snap.unknown.append(f"line {line}: queue {cells[0]!r} is not PORT:INDEX")
                continue
            sample = snap.port(port)
            if status is not None:
                sample.state[f"pfcwd{queue}_status"] = cells[status]
            detected, _, restored = cells[storms].partition("/")
            pair = (to_int(detected), to_int(restored))
            sample.counters[f"pfcwd{queue}_storm_detected"], sample.counters[f"pfcwd{queue}_storm_restored"] = pair
            if None in pair:
                snap.unknown.append(f"line {line}: {cells[0]} storms {cells[storms]!r} is not DETECTED/RESTORED")
    if not found:
        snap.unknown.append(f"no table with a {_STORMS!r} column: not pfcwd stats output")
    return snap


__all__ = ["parse_pfcwd_stats"]
