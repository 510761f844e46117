"""SONiC's COUNTERS_DB (what syncd's flex counters write, every show command reads and gNMI streams) as a
:class:`~hwaac.telemetry.model.Snapshot`: the fast path, one dump per switch for every port's and queue's counters.
Inputs (sonic-db-dump JSON, gNMI JSON, sonic-db-cli and redis-cli text) and the SAI-name table
(:mod:`hwaac.telemetry.parsers.sonic_sai_stats`): ``docs/telemetry/sonic-qos.md``. :func:`read_counters_db_frame`
reads the usual dump straight into columns (:class:`~hwaac.telemetry.frames.Frame`).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from itertools import chain, repeat
from operator import itemgetter
from typing import Any, TypeGuard

import numpy as np

from hwaac.telemetry.frames import Frame, counts
from hwaac.telemetry.model import Snapshot, all_known
from hwaac.telemetry.parsers import json_text
from hwaac.telemetry.parsers.sonic_sai_stats import (
    PFCWD_STATUS,
    QUEUE_KINDS,
    PortPlan,
    port_plan,
    queue_names,
    read_port,
    read_queue,
)

_KEY = re.compile(r"COUNTERS(?::oid:0x[0-9a-fA-F]+|_[A-Z_]+_MAP)")
_PORT_MAP, _QUEUE_MAP, _TYPE_MAP = "COUNTERS_PORT_NAME_MAP", "COUNTERS_QUEUE_NAME_MAP", "COUNTERS_QUEUE_TYPE_MAP"
_EMPTY = ("(empty array)", "(empty list or set)", "{}")

Hashes = dict[str, dict[str, str]]
TOOL = "COUNTERS_DB"
_VOQ = "SAI_QUEUE_TYPE_UNICAST_VOQ"


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
        named = {
            k: v
            for k, v in hashes.items()
            if not k.startswith("COUNTERS") and ":" not in k and any(f.startswith("SAI_PORT_STAT_") for f in v)
        }
        if not named:
            snap.unknown.append(f"no {_PORT_MAP}: port names unknown, port counters not read")
        for port, by_name in named.items():  # keyed by port name, as gNMI COUNTERS/Ethernet* answers
            read_port(by_name, snap.port(port).counters, port, snap.unknown)
        return
    missing: list[str] = []
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
        if queue_type == _VOQ:
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
    snap = Snapshot(TOOL, device=device, version=version or "")
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


# --- frame reader -----------------------------------------------------------------------------------------------------

_VALUE = itemgetter("value")
_ORDERS: dict[tuple[str, ...], tuple[int, ...]] = {}  # a hash's fields -> the places of those its plan takes


def _unwrapped(value: object) -> dict[str, Any] | None:
    """A hash as :func:`_read_json` keeps it: redis-dump-load's ``value``, else the object itself; None if not one."""
    if isinstance(value, dict) and "value" in value and "type" in value:
        value = value["value"]
    return value if isinstance(value, dict) else None


def _all_dicts(values: list[Any]) -> TypeGuard[list[dict[str, Any]]]:
    """Whether every item of ``values`` is a dict (JSON objects: string keys), in one pass over their types."""
    return set(map(type, values)) <= {dict}


def _port_hashes(doc: dict[str, Any], keys: list[str]) -> list[dict[str, Any]] | None:
    """The hashes of ``keys`` as :func:`_read_json` keeps them; None when one is missing or not a hash. Both layouts
    are taken whole in a few passes; a dump that mixes them, one hash at a time."""
    found = list(map(doc.get, keys))
    if _all_dicts(found):
        n = len(found)
        typed = sum(map(dict.__contains__, found, repeat("type")))
        valued = sum(map(dict.__contains__, found, repeat("value")))
        if typed == valued == n:
            inner = list(map(_VALUE, found))
            return inner if _all_dicts(inner) else None
        if not typed or not valued:
            return found
    hashes = [_unwrapped(v) for v in found]
    return hashes if all_known(hashes) else None


def _port_values(hashes: list[dict[str, Any]]) -> tuple[tuple[str, ...], np.ndarray] | None:
    """The ports' counter names and values as :func:`read_port` reads them; None unless every hash is read by plans
    that give the same names and every field they take is a string of ASCII digits (a sum that does not fit in 64
    bits included)."""
    first = tuple(hashes[0])
    order: tuple[int, ...] | None = None
    rows: Iterable[Iterable[Any]]  # per port, the values its plan takes
    if list(map(tuple, hashes)).count(first) == len(hashes):  # the usual dump: every port hash the same fields
        plan = port_plan(hashes[0])
        if plan is None:
            return None
        if plan.width == len(first):  # every field taken (a filtered dump): the values as they come, reordered
            rows = map(dict.values, hashes)
            order = _ORDERS.get(first)
            if order is None:
                order = tuple(map(first.index, plan.stats))
                order = () if order == tuple(range(plan.width)) else order  # (): in the plan's order
                if len(_ORDERS) < 64:
                    _ORDERS[first] = order
        else:
            rows = map(plan.get, hashes)
    else:
        plans = list(map(port_plan, hashes))
        plan = plans[0]
        if plan is None or not all_known(plans) or any(p.canonical != plan.canonical for p in plans):
            return None
        rows = [p.get(h) for p, h in zip(plans, hashes, strict=True)]
    try:
        joined = ",".join(chain.from_iterable(rows))
    except TypeError:  # a value that is not a string (a JSON number): the parser reads it
        return None
    flat = counts(joined, len(hashes) * plan.width)
    if flat is None:
        return None
    values: np.ndarray = flat.reshape(len(hashes), plan.width)
    if order:
        values = values[:, order]
    if plan.sums:
        summed = _summed(values, plan)
        if summed is None:
            return None
        values = summed
    return plan.canonical, values


def _summed(values: np.ndarray, plan: PortPlan) -> np.ndarray | None:
    """The plan's sums added up and its single fields after them; None when a sum does not fit in 64 bits."""
    out = np.empty((len(values), len(plan.canonical)), dtype=np.uint64)
    at = 0
    for k, (_name, width) in enumerate(plan.sums):
        total = values[:, at].copy()
        for j in range(at + 1, at + width):
            total += values[:, j]  # wraps past 2**64 - 1: then the total is below the part just added
            if (total < values[:, j]).any():
                return None
        out[:, k] = total
        at += width
    out[:, len(plan.sums) :] = values[:, at:]
    return out


def _queue_values(
    doc: dict[str, Any], queue_map: dict[str, Any], ports: list[str]
) -> tuple[list[list[str]], list[list[str]], list[dict[str, str]]] | None:
    """Per port (``ports`` grows by ports only queues name), the counter names and value texts :func:`_queues`
    reads from its queues, in order, and the state words; None where :func:`_queues` gives a reason."""
    types = _unwrapped(doc.get(_TYPE_MAP)) or {}
    at = {port: i for i, port in enumerate(ports)}
    names: list[list[str]] = [[] for _ in ports]
    texts: list[list[str]] = [[] for _ in ports]
    state: list[dict[str, str]] = [{} for _ in ports]
    for queue, oid in queue_map.items():
        port, _, index = queue.rpartition(":")
        fields = _unwrapped(doc.get(f"COUNTERS:{oid}"))
        if not port or not index.isdigit() or fields is None:
            return None
        queue_type = types.get(oid)
        if queue_type == _VOQ:
            continue
        kind = QUEUE_KINDS.get(queue_type or "")
        if kind is None:
            return None
        i = at.get(port)
        if i is None:
            i = at[port] = len(ports)
            ports.append(port)
            names.append([])
            texts.append([])
            state.append({})
        get = fields.get
        for stat, name in queue_names(index, kind):
            text = get(stat)
            if text is not None:
                names[i].append(name)
                texts[i].append(text)
        status = get(PFCWD_STATUS)
        if status is not None:
            state[i][f"pfcwd{index}_status"] = str(status)
    return names, texts, state


def read_counters_db_frame(raw: str | bytes, *, device: str = "", version: str | None = None) -> Frame | None:
    """:func:`parse_counters_db`'s reading of ``raw`` as a :class:`~hwaac.telemetry.frames.Frame`, when ``raw`` is a
    JSON dump (sonic-db-dump's redis-dump-load layout or the flat one, a port name map or ports by name) that it
    reads plain: every port hash read with one set of names, every field read (queues' too) a string of ASCII
    digits, every port the same counters. None for anything else, the text layouts included: the parser reads it
    and says why. ``raw`` may be the file's bytes (UTF-8), decoded faster than its text. Never raises."""
    if type(raw) not in (str, bytes) or raw.lstrip()[:1] not in ("{", b"{"):
        return None  # not a JSON object (a sonic-db-cli or redis-cli text)
    try:
        doc = json_text.loads_frame(raw)
    except (ValueError, RecursionError):
        return None
    if type(doc) is not dict:
        return None
    port_map = _unwrapped(doc.get(_PORT_MAP))
    if port_map is not None:
        ports = list(port_map)
        hashes = _port_hashes(doc, [f"COUNTERS:{oid}" for oid in port_map.values()])
        if hashes is None:  # a port without its hash (an empty one has no plan)
            return None
    else:
        named = {
            k: h
            for k, v in doc.items()
            if (h := _unwrapped(v)) is not None
            and not k.startswith("COUNTERS")
            and ":" not in k
            and any(f.startswith("SAI_PORT_STAT_") for f in h)
        }
        if not named:
            return None
        ports, hashes = list(named), list(named.values())
    names: tuple[str, ...] = ()
    values = np.zeros((0, 0), dtype=np.uint64)
    if hashes:
        read = _port_values(hashes)
        if read is None:
            return None
        names, values = read
    queue_map = _unwrapped(doc.get(_QUEUE_MAP))
    if not queue_map:
        return Frame(TOOL, device, None, version or "", ports, names, values, None)
    queues = _queue_values(doc, queue_map, ports)
    if queues is None:
        return None
    per_port, texts, states = queues
    first = per_port[0] if per_port else []
    if (hashes and len(ports) > len(hashes)) or any(q != first for q in per_port):
        return None  # a port that only queues name, or ports whose queues differ
    if not hashes:
        values = np.zeros((len(ports), 0), dtype=np.uint64)
    if first:
        try:
            joined = ",".join(map(",".join, texts))
        except TypeError:  # not a string: the parser reads it
            return None
        flat = counts(joined, len(ports) * len(first))
        if flat is None:
            return None
        values = np.hstack([values, flat.reshape(len(ports), len(first))])
    return Frame(TOOL, device, None, version or "", ports, (*names, *first), values, states if any(states) else None)


__all__ = ["TOOL", "parse_counters_db", "read_counters_db_frame"]
