"""SONiC port counters as ``portstat -j`` (``show interfaces counters -j``, also with ``-a``, ``errors``,
``fec-stats``) prints them, and portstat's own cache file, read into a :class:`~hwaac.telemetry.model.Snapshot`.

``-j`` prints the text table's cells as strings, keyed by port and then by column header (sonic-utilities
``utilities_common/netstat.py`` ``table_as_json``), so the columns map as in :mod:`.sonic_portstat`. The cache file
``portstat -c`` writes holds raw counters under NStats field names and a ``time`` key; a ``time`` key, where
present, becomes ``taken_at`` (``docs/telemetry/sonic-ports.md``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hwaac.telemetry.model import PortSample, Snapshot
from hwaac.telemetry.parsers.sonic_portstat import (
    Plan,
    Unreadable,
    misaligned,
    plan_columns,
    preamble,
    read_row,
    view_of,
)


def _taken_at(value: object) -> float | None:
    """Seconds since the epoch of portstat's ``time``: an ISO time (``json_serial`` of ``datetime.now()``, local
    time without a zone: read as UTC, SONiC's default zone) or a number of seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    return None


def parse_portstat_json(raw: str, *, device: str = "", version: str | None = None) -> Snapshot:
    """Read ``portstat -j`` output (or portstat's JSON cache file).

    Args:
        raw: the output as recorded; a ``Last cached time was ...`` line before the JSON is allowed.
        device: the switch, when the caller knows it.
        version: the SONiC release or sonic-utilities version, when known.

    Returns:
        A snapshot as :func:`~hwaac.telemetry.parsers.sonic_portstat.parse_portstat` returns it; ``taken_at`` from a
        top-level ``time`` key. Never raises.
    """
    snap = Snapshot("portstat -j", device=device, version=version or "")
    start = raw.find("{")
    if start < 0:
        first = next((line.strip() for line in raw.splitlines() if line.strip()), "")
        snap.unknown.append(f"no JSON object (first line: {first[:120]!r})" if first else "empty output")
        return snap
    cleared: list[str] = []
    for line in raw[:start].splitlines():
        if not preamble(line, snap, cleared):
            return snap
    try:
        doc, end = json.JSONDecoder().raw_decode(raw, start)
    except ValueError as exc:
        snap.unknown.append(f"not valid JSON: {exc}")
        return snap
    if raw[end:].strip():
        snap.unknown.append(f"text after the JSON object not read: {raw[end:].strip()[:120]!r}")
    if not isinstance(doc, dict):
        snap.unknown.append(f"the JSON is a {type(doc).__name__}, not an object keyed by port")
        return snap
    stamp = {"last_cleared": cleared[-1]} if cleared else {}
    plans: dict[tuple[str, ...], Plan] = {}
    bad = Unreadable()
    views: set[str] = set()
    for port, columns in doc.items():
        if port == "time":
            snap.taken_at = _taken_at(columns)
            if snap.taken_at is None:
                snap.unknown.append(f"time {columns!r} not read as a time")
            continue
        if not isinstance(columns, dict):
            snap.unknown.append(f"{port}: {type(columns).__name__} instead of an object of columns")
            continue
        names = ("IFACE", *columns)
        plan = plans.get(names)
        if plan is None:
            plan = plans[names] = plan_columns(names)
            views.add(view_of(names))
            if plan.unread:
                snap.unknown.append(f"columns not read (unknown to this reader): {', '.join(plan.unread)}")
        cells = (port, *(v if isinstance(v, str) else json.dumps(v) for v in columns.values()))
        off = misaligned(plan, cells)
        if off is not None:
            snap.unknown.append(f"{port}: {off} is not a rate")
            continue
        sample = snap.ports[port] = PortSample(port)
        if stamp:
            sample.state.update(stamp)
        read_row(plan, cells, sample, bad)
    if len(views) == 1:
        snap.tool = f"{views.pop()} -j"
    snap.unknown.extend(bad.reasons())
    if not snap.ports:
        snap.unknown.append("the JSON lists no port")
    elif not any(p.counters or p.gauges for p in snap.ports.values()):
        snap.unknown.append("no counter column in the JSON")
    return snap


__all__ = ["parse_portstat_json"]
