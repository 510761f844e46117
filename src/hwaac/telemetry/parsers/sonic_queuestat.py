"""``show queue counters`` and ``show queue wredcounters`` (sonic-utilities ``scripts/queuestat``,
``scripts/wredstat``), as tables or with ``--json``, as a :class:`~hwaac.telemetry.model.Snapshot`: packets and
drops per egress queue, ECN marks per queue. ``docs/telemetry/sonic-qos.md``.

A queue is named as printed, ``UC3``, ``MC10``, ``ALL20``: its kind (unicast, multicast, both) and its index on
the port, so ``MC10`` gives ``q10_mc_pkts``.
"""

from __future__ import annotations

import json

from hwaac.telemetry.model import Snapshot
from hwaac.telemetry.parsers.sonic_table import read_tables, to_int

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


_NAMES: dict[tuple[str, tuple[str, ...]], tuple[str, ...] | None] = {}


def _names(queue: str, templates: tuple[str, ...]) -> tuple[str, ...] | None:
    """The canonical names of ``templates`` for queue ``queue`` (``MC10``, ``("{k}_pkts",)`` -> ``q10_mc_pkts``)."""
    key = (queue, templates)
    if key not in _NAMES:
        parsed = _queue(queue)
        _NAMES[key] = None if parsed is None else tuple(f"q{parsed[1]}_{t.format(k=parsed[0])}" for t in templates)
    return _NAMES[key]


def _store(
    snap: Snapshot,
    port: str,
    queue: str,
    templates: tuple[str, ...],
    cells: list[str],
    where: str,
    cleared_at: str = "",
) -> None:
    """Set the counters of one queue row: ``cells`` printed under the canonical suffix ``templates``."""
    names = _names(queue, templates)
    if names is None:
        snap.unknown.append(f"{where}: {port} queue {queue!r} is not UCn, MCn or ALLn")
        return
    sample = snap.port(port)
    if cleared_at:
        sample.state["cleared_at"] = cleared_at
    counters = sample.counters
    if "".join(cells).isdigit():  # the usual row: every cell a count without separators
        counters.update(zip(names, map(int, cells), strict=True))
        return
    bad = []
    for name, cell in zip(names, cells, strict=True):
        value = counters[name] = to_int(cell)
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
        cleared_at = str(queues.get("cached_time") or "")
        for queue, fields in queues.items():
            if not isinstance(fields, dict):  # "time", "cached_time"
                continue
            keys = [k for k in _JSON_KEYS if k in fields]
            if "ecnmarkedpacket" in fields:
                snap.tool = "show queue wredcounters --json"
            if keys:
                _store(
                    snap,
                    port,
                    queue,
                    tuple(_JSON_KEYS[k] for k in keys),
                    [str(fields[k]) for k in keys],
                    "json",
                    cleared_at,
                )
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
        columns = [i for i, name in enumerate(header) if name in _COLUMNS]
        templates = tuple(_COLUMNS[header[i]] for i in columns)
        if not columns:
            snap.unknown.append(f"line {table.line}: no packet, drop or ECN column (trimming only?)")
            continue
        for line, cells in table.rows:
            _store(snap, cells[0], cells[1], templates, [cells[i] for i in columns], f"line {line}", table.cleared_at)
    if not found:
        snap.unknown.append("no table headed 'Port  TxQ': not queue counter output")


def parse_queue_counters(raw: str, *, device: str = "", version: str | None = None) -> Snapshot:
    """Read ``show queue counters`` / ``queuestat`` (tables, one per port in newer releases) or their ``--json``
    output, and ``show queue wredcounters``: ``q{q}_{uc,mc,all}_pkts``, ``q{q}_{uc,mc,all}_drop``,
    ``q{q}_ecn_marked``; after a ``sonic-clear queuecounters`` the counts are since the clear and
    ``state["cleared_at"]`` holds its time as printed.

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
