"""``show pfc counters`` (sonic-utilities ``scripts/pfcstat``) as a :class:`~hwaac.telemetry.model.Snapshot`: PFC
frames received and sent per priority from the ``Port Rx`` and ``Port Tx`` tables, and with ``--history`` the
time paused per priority. Layouts and the mapping: ``docs/telemetry/sonic-qos.md``.
"""

from __future__ import annotations

from hwaac.telemetry.model import Snapshot, all_known
from hwaac.telemetry.parsers.sonic_table import Table, read_tables, to_int

_DIRECTIONS = {"Port Rx": "rx", "Port Tx": "tx"}
_TOTAL_PAUSE = "Total RX Pause Time US"
_HISTORY = (("Port", "Priority"),)


def _count_columns(table: Table, direction: str, snap: Snapshot) -> list[str | None]:
    """The canonical name of each counter column (``PFC3`` -> ``pfc3_rx``); None for a column that is not PFCn."""
    names: list[str | None] = []
    for title in table.header[1:]:
        number = title[3:]
        if title.startswith("PFC") and number.isdigit():
            names.append(f"pfc{number}_{direction}")
        else:
            names.append(None)
            snap.unknown.append(f"line {table.line}: column {title!r} of the {table.header[0]!r} table is not PFCn")
    return names


def _read_counts(table: Table, direction: str, snap: Snapshot) -> set[str]:
    names = _count_columns(table, direction, snap)
    all_named = names if all_known(names) else None  # every column a PFCn: the rows' fast path
    ports: set[str] = set()
    for line, cells in table.rows:
        port = cells[0]
        ports.add(port)
        sample = snap.port(port)
        if table.cleared_at:
            sample.state["cleared_at"] = table.cleared_at
        counters = sample.counters
        digits = [cell.replace(",", "") for cell in cells[1:]]
        if all_named is not None and "".join(digits).isdigit():  # the usual row: every cell a count
            counters.update(zip(all_named, map(int, digits), strict=False))
            continue
        bad: list[str] = []
        for name, cell in zip(names, cells[1:], strict=False):
            if name is None:
                continue
            value = to_int(cell)
            counters[name] = value
            if value is None:
                bad.append(f"{name}={cell}")
        if bad:
            snap.unknown.append(f"line {line}: {port} {', '.join(bad)} (not a count)")
    return ports


def _read_history(table: Table, snap: Snapshot) -> None:
    if _TOTAL_PAUSE not in table.header:
        snap.unknown.append(f"line {table.line}: history table without a {_TOTAL_PAUSE!r} column")
        return
    column = table.header.index(_TOTAL_PAUSE)
    for line, cells in table.rows:
        port, priority = cells[0], cells[1]
        if not (priority.startswith("PFC") and priority[3:].isdigit()):
            snap.unknown.append(f"line {line}: {port} priority {priority!r} is not PFCn")
            continue
        value = to_int(cells[column])
        snap.port(port).counters[f"pfc{priority[3:]}_rx_duration_us"] = value
        if value is None:
            snap.unknown.append(f"line {line}: {port} {priority} total RX pause time {cells[column]!r} (not a count)")


def parse_pfc_counters(raw: str, *, device: str = "", version: str | None = None) -> Snapshot:
    """Read ``show pfc counters`` / ``pfcstat`` (both tables), or ``show pfc counters --history``. After a
    ``sonic-clear pfccounters`` the counts are since the clear: ``state["cleared_at"]`` holds its time as printed.

    ``unknown`` names: no pfcstat table, a missing Rx or Tx table (a cut or grepped output), a port in one table
    but not the other, rows cut short, ``N/A`` cells (those counters are None). Never raises."""
    snap = Snapshot("show pfc counters", device=device, version=version or "")
    if not isinstance(raw, str):
        snap.unknown.append(f"input is {type(raw).__name__}, not text")
        return snap
    seen: dict[str, set[str]] = {}
    tables, snap.unknown = read_tables(raw, gapped=_HISTORY)
    for table in tables:
        snap.unknown += table.problems
        first = table.header[0]
        if first in _DIRECTIONS:
            seen.setdefault(first, set()).update(_read_counts(table, _DIRECTIONS[first], snap))
        elif table.header[:2] == ["Port", "Priority"]:
            seen.setdefault("history", set())
            _read_history(table, snap)
        else:
            snap.unknown.append(f"line {table.line}: a table headed {first!r} is not pfcstat's")
            continue
        if not table.rows:
            snap.unknown.append(f"line {table.line}: the {first!r} table has no rows")
    if not seen:
        snap.unknown.append("no 'Port Rx', 'Port Tx' or history table: not pfcstat output")
    elif "history" not in seen:
        rx, tx = seen.get("Port Rx"), seen.get("Port Tx")
        if rx is None or tx is None:
            snap.unknown.append(f"no {'Port Rx' if rx is None else 'Port Tx'!r} table (output cut or filtered)")
        else:
            for port in sorted(rx ^ tx):
                where, other = ("Port Rx", "Port Tx") if port in rx else ("Port Tx", "Port Rx")
                snap.unknown.append(f"{port}: in the {where!r} table, not in {other!r}")
    return snap


__all__ = ["parse_pfc_counters"]
