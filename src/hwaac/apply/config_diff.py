"""What a SONiC CONFIG_DB change does, per table: the keys added, removed and changed (with the changed fields),
from two config_db documents or from an RFC 6902 patch such as :func:`hwaac.apply.sonic_patch.config_patch`
makes. Facts only: which change is risky is for the caller (``hwaac review``, a playbook) to judge.

Shape (both functions): ``{TABLE: {"added": [key], "removed": [key], "changed": {key: [field]}}}``, tables in
sorted order, only tables with a change; keys and fields in natural order (``Ethernet4`` before ``Ethernet12``).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

import jsonpatch
import jsonpointer

TableSummary = dict[str, Any]
"""``{"added": [key], "removed": [key], "changed": {key: [field]}}``."""

Summary = dict[str, TableSummary]
"""``{TABLE: TableSummary}``."""

PATCH_OPS: tuple[str, ...] = ("add", "remove", "replace", "move", "copy", "test")
"""The operations of RFC 6902, section 4."""

_MISSING = object()


def _natural(text: str) -> list[Any]:
    """Sort key comparing runs of digits as numbers: ``Ethernet4`` < ``Ethernet12``."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part]


def _sorted(items: Any) -> list[str]:
    return sorted(items, key=_natural)


def _tables(doc: Any, name: str) -> Mapping[str, Mapping[str, Any]]:
    """``doc`` checked to be CONFIG_DB's shape ``{TABLE: {key: {field: value}}}``; ``name`` names it in errors."""
    if not isinstance(doc, Mapping):
        raise ValueError(
            f"{name}: expected a config_db object {{TABLE: {{key: {{field: value}}}}}}, got {type(doc).__name__}"
        )
    for table, entries in doc.items():
        if not isinstance(entries, Mapping):
            raise ValueError(
                f"{name}: table {table!r} must be an object of entries {{key: {{field: value}}}}, "
                f"got {type(entries).__name__} {entries!r:.60}"
            )
        for key, fields in entries.items():
            if not isinstance(fields, Mapping):
                raise ValueError(
                    f"{name}: {table}[{key!r}] must be an object of fields {{field: value}}, "
                    f"got {type(fields).__name__} {fields!r:.60}"
                )
    return doc


def _changed_fields(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    return _sorted(f for f in set(before) | set(after) if before.get(f, _MISSING) != after.get(f, _MISSING))


def _table_summary(added: Any, removed: Any, changed: Mapping[str, Any]) -> TableSummary:
    return {
        "added": _sorted(added),
        "removed": _sorted(removed),
        "changed": {key: _sorted(changed[key]) for key in _sorted(changed)},
    }


def summarize_config_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> Summary:
    """Per table, the keys ``after`` adds to ``before``, the keys it removes and, for keys in both, the fields
    whose value differs (a field added, removed or given another value; list values compare as lists).

    A table only one side has counts all its keys as added (or removed). Tables without a change are left out.

    Raises:
        ValueError: either document is not ``{TABLE: {key: {field: value}}}`` (names the side, table and key).
    """
    old = _tables(before, "before")
    new = _tables(after, "after")
    out: Summary = {}
    for table in sorted(set(old) | set(new)):
        was, now = old.get(table, {}), new.get(table, {})
        changed = {key: fields for key in set(was) & set(now) if (fields := _changed_fields(was[key], now[key]))}
        added, removed = set(now) - set(was), set(was) - set(now)
        if added or removed or changed:
            out[table] = _table_summary(added, removed, changed)
    return out


def _checked_ops(patch: Any) -> list[dict[str, Any]]:
    """``patch`` checked to be an RFC 6902 list of operations; errors name the index, field and value."""
    if not isinstance(patch, Sequence) or isinstance(patch, str | bytes):
        raise ValueError(f"patch: expected a list of RFC 6902 operations, got {type(patch).__name__}")
    ops: list[dict[str, Any]] = []
    for i, op in enumerate(patch):
        if not isinstance(op, Mapping):
            raise ValueError(
                f"patch[{i}]: expected an operation object {{op, path[, value|from]}}, got {type(op).__name__}"
            )
        if op.get("op") not in PATCH_OPS:
            raise ValueError(
                f"patch[{i}].op: {op.get('op')!r} is not an RFC 6902 operation (valid: {', '.join(PATCH_OPS)})"
            )
        need = ["path"] + (["from"] if op["op"] in ("move", "copy") else [])
        for field in need:
            pointer = op.get(field)
            if not isinstance(pointer, str):
                raise ValueError(f"patch[{i}].{field}: missing or not a JSON pointer string (got {pointer!r})")
            try:
                jsonpointer.JsonPointer(pointer)
            except jsonpointer.JsonPointerException as err:
                raise ValueError(f"patch[{i}].{field}: {pointer!r} is not an RFC 6901 JSON pointer ({err})") from None
        if op["op"] in ("add", "replace", "test") and "value" not in op:
            raise ValueError(f"patch[{i}]: a {op['op']!r} operation needs a 'value'")
        ops.append(dict(op))
    return ops


class _Tally:
    """Net effect of a patch read in order, without the document it applies to."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[str, Any]] = {}

    def _table(self, table: str) -> dict[str, Any]:
        return self.tables.setdefault(table, {"added": set(), "removed": set(), "changed": {}})

    def add_key(self, table: str, key: str, value: Any) -> None:
        t = self._table(table)
        if key in t["removed"]:  # removed, then added again: the entry is replaced
            t["removed"].discard(key)
            t["changed"].setdefault(key, set()).update(value if isinstance(value, Mapping) else ())
        else:
            t["added"].add(key)

    def remove_key(self, table: str, key: str) -> None:
        t = self._table(table)
        t["changed"].pop(key, None)
        if key in t["added"]:  # added earlier by this patch: nothing is left of it
            t["added"].discard(key)
        else:
            t["removed"].add(key)

    def replace_key(self, table: str, key: str, value: Any) -> None:
        t = self._table(table)
        if key not in t["added"]:
            t["changed"].setdefault(key, set()).update(value if isinstance(value, Mapping) else ())

    def touch_field(self, table: str, key: str, field: str) -> None:
        t = self._table(table)
        if key not in t["added"]:
            t["changed"].setdefault(key, set()).add(field)

    def summary(self) -> Summary:
        out: Summary = {}
        for table in sorted(self.tables):
            t = self.tables[table]
            if t["added"] or t["removed"] or t["changed"]:
                out[table] = _table_summary(t["added"], t["removed"], t["changed"])
        return out


def _write(tally: _Tally, i: int, kind: str, parts: list[str], value: Any) -> None:
    """Record an operation that writes ``value`` at ``parts`` (``kind``: add or replace)."""
    if len(parts) < 2:
        where = "the whole document" if not parts else f"the whole table /{parts[0]}"
        if kind == "add" and len(parts) == 1 and isinstance(value, Mapping):
            for key, fields in value.items():
                tally.add_key(parts[0], key, fields)
            return
        raise ValueError(
            f"patch[{i}]: {kind} of {where} cannot be summarized without the config it applies to; "
            "pass the running config as 'before'"
        )
    if len(parts) == 2:
        if kind == "add":
            tally.add_key(parts[0], parts[1], value)
        else:
            tally.replace_key(parts[0], parts[1], value)
    else:
        tally.touch_field(parts[0], parts[1], parts[2])


def _remove(tally: _Tally, i: int, parts: list[str]) -> None:
    if len(parts) < 2:
        where = "the whole document" if not parts else f"the whole table /{parts[0]}"
        raise ValueError(
            f"patch[{i}]: remove of {where} cannot be summarized without the config it applies to; "
            "pass the running config as 'before'"
        )
    if len(parts) == 2:
        tally.remove_key(parts[0], parts[1])
    else:
        tally.touch_field(parts[0], parts[1], parts[2])


def summarize_patch(patch: Sequence[Mapping[str, Any]], before: Mapping[str, Any] | None = None) -> Summary:
    """The summary of :func:`summarize_config_diff` for an RFC 6902 patch in GCU's CONFIGDB format
    (paths ``/TABLE/key[/field...]``, RFC 6901 escapes).

    With ``before`` (the config the patch applies to), the patch is applied with ``jsonpatch`` and the two
    documents compared: exact. Without it, the operations are read in order: ``add /T/k`` adds a key,
    ``remove /T/k`` removes it, an operation below ``/T/k/field`` changes that field of the key, a ``replace``
    of a whole entry changes the fields its new value holds (fields it drops are not known), ``move`` is a
    remove then an add, ``copy`` an add, ``test`` changes nothing. A key added and removed again by the same
    patch is left out.

    Raises:
        ValueError: the patch is not RFC 6902 (names the index, field and value); without ``before``, an
            operation removes or replaces a whole table or the whole document; with ``before``, the patch does not
            apply to it (a path that does not exist, a failed test).
    """
    ops = _checked_ops(patch)
    if before is not None:
        start = _tables(before, "before")
        try:
            after = jsonpatch.apply_patch(copy.deepcopy(dict(start)), ops)
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as err:
            raise ValueError(f"patch: does not apply to 'before': {err}") from None
        return summarize_config_diff(start, after)
    tally = _Tally()
    for i, op in enumerate(ops):
        parts = list(jsonpointer.JsonPointer(op["path"]).parts)
        kind = op["op"]
        if kind == "test":
            continue
        if kind == "remove":
            _remove(tally, i, parts)
        elif kind in ("add", "replace"):
            _write(tally, i, kind, parts, op["value"])
        else:  # move / copy: the value is whatever is at 'from', unknown without the document
            source = list(jsonpointer.JsonPointer(op["from"]).parts)
            if kind == "move":
                _remove(tally, i, source)
            _write(tally, i, "add", parts, {})
    return tally.summary()


def summary_counts(summary: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """``{TABLE: {"added": n, "removed": n, "changed": n}}`` for a summary of this module, same table order."""
    return {table: {kind: len(t[kind]) for kind in ("added", "removed", "changed")} for table, t in summary.items()}
