"""SONiC's COUNTERS_DB (what syncd's flex counters write, every show command reads and gNMI streams) as a
:class:`~hwaac.telemetry.model.Snapshot`: the fast path, one dump per switch for every port's and queue's counters.
Inputs (sonic-db-dump JSON, gNMI JSON, sonic-db-cli and redis-cli text) and the SAI-name table
(:mod:`hwaac.telemetry.parsers.sonic_sai_stats`): ``docs/telemetry/sonic-qos.md``.
"""

from __future__ import annotations

import ast
import json
import re

from hwaac.telemetry.model import Snapshot
from hwaac.telemetry.parsers import json_text
from hwaac.telemetry.parsers.sonic_sai_stats import QUEUE_KINDS, read_port, read_queue

_KEY = re.compile(r"COUNTERS(?::oid:0x[0-9a-fA-F]+|_[A-Z_]+_MAP)")
_PORT_MAP, _QUEUE_MAP, _TYPE_MAP = "COUNTERS_PORT_NAME_MAP", "COUNTERS_QUEUE_NAME_MAP", "COUNTERS_QUEUE_TYPE_MAP"
_EMPTY = ("(empty array)", "(empty list or set)", "{}")

Hashes = dict[str, dict[str, str]]


def _dict_line(text: str) -> dict[str, str] | None:
    """sonic-db-cli's ``{'field': 'value', ...}``: JSON once its quotes are swapped, else a Python literal."""
    try:
        body = json.loads(text.replace("'", '"')) if '"' not in text else ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return {str(k): str(v) for k, v in body.items()} if isinstance(body, dict) else None


def _read_json(doc: object, unknown: list[str]) -> Hashes:
    if not isinstance(doc, dict):
        unknown.append(f"JSON {type(doc).__name__}, not an object of keys")
        return {}
    hashes: Hashes = {}
    for key, value in doc.items():
        if isinstance(value, dict) and "value" in value and "type" in value:  # redis-dump-load (sonic-db-dump)
            value = value["value"]
        if isinstance(value, dict):
            hashes[str(key)] = value
    return hashes


def _read_text(raw: str, unknown: list[str]) -> Hashes:
    """Key lines followed by a dict line (sonic-db-cli) or by field/value lines (redis-cli)."""
    hashes: Hashes = {}
    key: str | None = None
    items: list[str] = []

    def close() -> None:
        if key is not None and items:
            if len(items) % 2:
                unknown.append(f"{key}: {len(items)} field and value lines, an odd number (output cut?)")
                items.pop()
            hashes[key] = dict(zip(items[::2], items[1::2], strict=True))

    for number, line in enumerate(raw.splitlines(), 1):
        text = line.strip()
        if not text:
            continue
        if text[0] == "{" and text != "{}":
            body = _dict_line(text)
            if body is None:
                unknown.append(f"line {number}: {text[:60]!r}... is not a sonic-db-cli dict")
            elif key is None:
                unknown.append(f"line {number}: a hash with no key line before it")
            else:
                hashes[key] = body
            key, items = None, []
            continue
        if "COUNTERS" in text:
            close()
            match = _KEY.search(text)
            key, items = (match[0] if match else None), []
            continue
        if "@" in text and ("$ " in text or "# " in text):  # a prompt with another command
            close()
            key, items = None, []
            continue
        if key is None:
            continue
        if text in _EMPTY:
            hashes[key] = {}
            continue
        if not text.strip("."):
            unknown.append(f"line {number}: {text!r} in place of lines of {key} (output elided)")
            close()
            key, items = None, []
            continue
        if text[0].isdigit():
            head, sep, rest = text.partition(") ")
            if sep and head.isdigit():
                text = rest
        if len(text) > 1 and text[0] == '"' and text[-1] == '"':
            text = text[1:-1]
        items.append(text)
    close()
    return hashes


def _ports(hashes: Hashes, snap: Snapshot) -> None:
    port_map = hashes.get(_PORT_MAP)
    if port_map is None:
        named = {k: v for k, v in hashes.items() if not k.startswith("COUNTERS") and ":" not in k
                 and any(f.startswith("SAI_PORT_STAT_") for f in v)}
        if not named:
            snap.unknown.append(f"no {_PORT_MAP}: port names unknown, port counters not read")
        for port, fields in named.items():  # keyed by port name, as gNMI COUNTERS/Ethernet* answers
            read_port(fields, snap.port(port).counters, port, snap.unknown)
        return
    missing = []
    for port, oid in port_map.items():
        fields = hashes.get(f"COUNTERS:{oid}")
        if fields is None:
            missing.append(port)
            continue
        read_port(fields, snap.port(port).counters, port, snap.unknown)
        if not fields:
            snap.unknown.append(f"{port}: its COUNTERS:{oid} hash is empty")
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        snap.unknown.append(f"no COUNTERS hash for {len(missing)} of {len(port_map)} ports in {_PORT_MAP}: {shown}")


def _queues(hashes: Hashes, snap: Snapshot) -> None:
    queue_map = hashes.get(_QUEUE_MAP)
    if queue_map is None:
        return
    types = hashes.get(_TYPE_MAP, {})
    missing, untyped = 0, 0
    for queue, oid in queue_map.items():
        port, _, index = queue.rpartition(":")
        fields = hashes.get(f"COUNTERS:{oid}")
        if not port or not index.isdigit():
            snap.unknown.append(f"{_QUEUE_MAP}: {queue!r} is not PORT:INDEX")
            continue
        if fields is None:
            missing += 1
            continue
        queue_type = types.get(oid)
        if queue_type == "SAI_QUEUE_TYPE_UNICAST_VOQ":
            continue
        kind = QUEUE_KINDS.get(queue_type or "")
        if kind is None:
            untyped += 1
        sample = snap.port(port)
        read_queue(fields, kind, index, sample.counters, sample.state, queue, snap.unknown)
    if missing:
        snap.unknown.append(f"no COUNTERS hash for {missing} of {len(queue_map)} queues in {_QUEUE_MAP}")
    if untyped:
        snap.unknown.append(f"{untyped} queues of no known kind in {_TYPE_MAP}: their packets and drops not read")


def parse_counters_db(raw: str, *, device: str = "", version: str | None = None) -> Snapshot:
    """Read COUNTERS_DB content: port counters (``rx_err``, ``rx_drop``, ``fec_uncorrectable``, ``pfc3_rx``...),
    queue counters (``q3_uc_drop``, ``q3_ecn_marked``...), PFC watchdog storms and status per queue.

    ``unknown`` names: no port name map, ports or queues of a map with no hash, a value that is not a count (None),
    a sum with a part missing (``rx_ok`` without ``SAI_PORT_STAT_IF_IN_NON_UCAST_PKTS``: None), hashes cut short,
    queues of no known kind. Hashes of other objects (router interfaces, priority groups, buffer pools) are not
    read. Never raises."""
    snap = Snapshot("COUNTERS_DB", device=device, version=version or "")
    if not isinstance(raw, str):
        snap.unknown.append(f"input is {type(raw).__name__}, not text")
        return snap
    head = raw.lstrip()[:2]
    if head[:1] == "[" or (head[:1] == "{" and head != "{'"):  # JSON; sonic-db-cli's dicts start "{'"
        try:
            doc = json_text.loads(raw)
        except ValueError as exc:
            snap.unknown.append(f"not valid JSON (cut?): {exc}")
            return snap
        hashes = _read_json(doc, snap.unknown)
    else:
        hashes = _read_text(raw, snap.unknown)
    if not hashes:
        snap.unknown.append("no COUNTERS_DB hash found")
        return snap
    _ports(hashes, snap)
    _queues(hashes, snap)
    return snap


__all__ = ["parse_counters_db"]
