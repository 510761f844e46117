"""``show queue counters`` and ``show queue wredcounters`` (sonic-utilities ``scripts/queuestat``,
``scripts/wredstat``), as tables or with ``--json``, as a :class:`~hwaac.telemetry.model.Snapshot`: packets and
drops per egress queue, ECN marks per queue. ``docs/telemetry/sonic-qos.md``.

A queue is named as printed, ``UC3``, ``MC10``, ``ALL20``: its kind (unicast, multicast, both) and its index on
the port, so ``MC10`` gives ``q10_mc_pkts``.
"""

from __future__ import annotations

import json

from hwaac.telemetry.model import Snapshot
from hwaac.telemetry.parsers.sonic_tables import read_tables, to_int

_KINDS = {"UC": "uc", "MC": "mc", "ALL": "all"}
# printed column (table) or JSON key -> canonical suffix; "{k}" is the queue kind. Bytes, trimming and WRED drops
# are not read (docs/telemetry/sonic-qos.md).
_COLUMNS = {"Counter/pkts": "{k}_pkts", "Drop/pkts": "{k}_drop", "EcnMarked/pkts": "ecn_marked"}
_JSON_KEYS = {"totalpacket": "{k}_pkts", "droppacket": "{k}_drop", "ecnmarkedpacket": "ecn_marked"}


def _queue(name: str) -> tuple[str, str] | None:
    """``"MC10"`` -> ``("mc", "10")``; None for a name that is not KIND+INDEX."""
    index = name.lstrip("ACLMU")
    kind = _KINDS.get(name[: len(name) - len(index)])
    return (kind, index) if kind and index.isdigit() else None


def _store(snap: Snapshot, port: str, queue: str, values: list[tuple[str, str]], where: str) -> None:
    """Set the counters of one queue row: ``values`` as (canonical suffix template, printed value)."""
    parsed = _queue(queue)
    if parsed is None:
        snap.unknown.append(f"{where}: {port} queue {queue!r} is not UCn, MCn or ALLn")
        return
    kind, index = parsed
    counters = snap.port(port).counters
    bad = []
    for template, cell in values:
        value = to_int(cell)
        name = f"q{index}_{template.format(k=kind)}"
        counters[name] = value
        if value is None:
            bad.append(f"{name}={cell}")
    if bad:
        snap.unknown.append(f"{where}: {port} {', '.join(bad)} (not a count)")


def _read_json(raw: str, snap: Snapshot) -> None:
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        snap.unknown.append(f"not JSON ({exc}), not queuestat --json output")
        return
    if not isinstance(doc, dict):
        snap.unknown.append(f"JSON {type(doc).__name__}, not queuestat's object of ports")
        return
    for port, queues in doc.items():
        if not isinstance(queues, dict):
            snap.unknown.append(f"{port!r}: {type(queues).__name__}, not an object of queues")
            continue
        for queue, fields in queues.items():
            if not isinstance(fields, dict):  # "time", "cached_time"
                continue
            values = [(t, str(fields[k])) for k, t in _JSON_KEYS.items() if k in fields]
            if "ecnmarkedpacket" in fields:
                snap.tool = "show queue wredcounters --json"
            if values:
                _store(snap, port, queue, values, "json")
            else:
                snap.unknown.append(f"json: {port} {queue} has none of {', '.join(_JSON_KEYS)}")
    if not snap.ports and not snap.unknown:
        snap.unknown.append("no port in the JSON object")


def _read_text(raw: str, snap: Snapshot) -> None:
    tables, snap.unknown = read_tables(raw)
    found = False
    for table in tables:
        header = table.header
        if header[:2] != ["Port", "TxQ"]:
            why = "VOQ counters are not read" if header[:2] == ["Port", "Voq"] else "not a queue counter table"
            snap.unknown.append(f"line {table.line}: a table headed {' '.join(header[:2])!r}: {why}")
            continue
        found = True
        snap.unknown += table.problems
        if "EcnMarked/pkts" in header:
            snap.tool = "show queue wredcounters"
        columns = [(i, _COLUMNS[name]) for i, name in enumerate(header) if name in _COLUMNS]
        if not columns:
            snap.unknown.append(f"line {table.line}: no packet, drop or ECN column (trimming only?)")
        for line, cells in table.rows:
            _store(snap, cells[0], cells[1], [(t, cells[i]) for i, t in columns], f"line {line}")
    if not found:
        snap.unknown.append("no table headed 'Port  TxQ': not queue counter output")


def parse_queue_counters(raw: str, *, device: str = "", version: str | None = None) -> Snapshot:
    """Read ``show queue counters`` / ``queuestat`` (tables, one per port in newer releases) or their ``--json``
    output, and ``show queue wredcounters``: ``q{q}_{uc,mc,all}_pkts``, ``q{q}_{uc,mc,all}_drop``,
    ``q{q}_ecn_marked``.

    ``unknown`` names: no queue table, rows cut short, ``N/A`` cells (those counters are None), queue names that
    are not UCn/MCn/ALLn. Never raises."""
    snap = Snapshot("show queue counters", device=device, version=version or "")
    if not isinstance(raw, str):
        snap.unknown.append(f"input is {type(raw).__name__}, not text")
        return snap
    if raw.lstrip().startswith("{"):
        snap.tool += " --json"
        _read_json(raw, snap)
    else:
        _read_text(raw, snap)
    return snap


__all__ = ["parse_queue_counters"]
