"""The change that takes a SONiC switch from its running CONFIG_DB to hwaac's rendered config_db, as a JSON patch
for SONiC's generic config updater (GCU, ``config apply-patch``), plus the guard rails around it.

The patch is RFC 6902 in GCU's CONFIGDB format, made with ``jsonpatch`` as GCU makes its own. It touches only
the tables hwaac renders: merged per field by default, replaced whole in :data:`OWNED_TABLES`; it never removes
or changes the management plane or Loopback0 (:func:`check_patch` raises :class:`UnsafePatchError`). Shapes and
policies, with sources: docs/apply.md.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any

import jsonpatch
import jsonpointer

Config = dict[str, dict[str, dict[str, Any]]]
"""CONFIG_DB as JSON: ``{TABLE: {key: {field: value}}}``."""

PatchOp = dict[str, Any]
"""One RFC 6902 operation: ``{"op", "path"[, "value"]}`` (only add, remove and replace are produced)."""

OWNED_TABLES: frozenset[str] = frozenset(
    {
        "INTERFACE",
        "VLAN",
        "VLAN_MEMBER",
        "VLAN_INTERFACE",
        "BGP_NEIGHBOR",
        "BGP_NEIGHBOR_AF",
        "DEVICE_NEIGHBOR",
    }
)
"""Managed tables that become exactly the desired table (stale entries removed); see the module docstring."""

MANAGEMENT_TABLES: tuple[str, ...] = ("MGMT_INTERFACE", "MGMT_PORT", "MGMT_VRF_CONFIG")
"""Tables a patch must never remove or change: losing them cuts the switch off from its management network."""

PROTECTED_LOOPBACK = "Loopback0"
"""The LOOPBACK_INTERFACE entries (``Loopback0`` and ``Loopback0|<prefix>``) a patch must never remove or change."""


class UnsafePatchError(ValueError):
    """A patch would remove or change the management interface or Loopback0.

    Attributes:
        paths: the offending JSON pointers (``path`` or ``from`` of the operations), in patch order.
    """

    def __init__(self, paths: list[str], ops: list[PatchOp]) -> None:
        self.paths = paths
        self.ops = ops
        shown = ", ".join(f"{op['op']} {p}" for op, p in zip(ops, paths, strict=True))
        super().__init__(
            f"refused: the change would remove or change the management interface or {PROTECTED_LOOPBACK} "
            f"({shown}); fix the rendered config or the switch by hand, hwaac never pushes such a change"
        )


def managed_tables(desired: Mapping[str, Any], tables: Iterable[str] | None = None) -> list[str]:
    """The tables a push changes: those in ``desired``, narrowed to ``tables`` when given, in desired's order.

    Raises:
        ValueError: ``tables`` names a table ``desired`` does not have (a typo would otherwise push nothing).
    """
    if tables is None:
        return list(desired)
    wanted = list(dict.fromkeys(tables))
    missing = [t for t in wanted if t not in desired]
    if missing:
        raise ValueError(f"tables {missing} are not in the desired config (it has {sorted(desired)})")
    return [t for t in desired if t in wanted]


def target_config(
    running: Mapping[str, Any],
    desired: Mapping[str, Any],
    *,
    tables: Iterable[str] | None = None,
    owned: Collection[str] = OWNED_TABLES,
) -> Config:
    """The whole CONFIG_DB as it will be after the push: ``running`` with each managed table merged or replaced.

    Args:
        running: the switch's config (``sonic-cfggen -d --print-data``); not modified.
        desired: the rendered config_db; not modified.
        tables: narrow the managed tables (default: every table of ``desired``).
        owned: managed tables that become exactly the desired table (default :data:`OWNED_TABLES`).

    Returns:
        A new dict; unmanaged tables are deep copies of running's. A managed table that ends up empty is left
        out, because CONFIG_DB has no empty tables (GCU refuses a patch that leaves one).
    """
    target: Config = copy.deepcopy(dict(running))
    for table in managed_tables(desired, tables):
        want = desired[table]
        if table in owned:
            merged = copy.deepcopy(dict(want))
        else:
            merged = copy.deepcopy(dict(running.get(table, {})))
            for key, fields in want.items():
                entry = dict(merged.get(key, {}))
                entry.update(copy.deepcopy(fields))
                merged[key] = entry
        if merged:
            target[table] = merged
        else:
            target.pop(table, None)
    return target


def _plain_ops(source: Mapping[str, Any], patch: jsonpatch.JsonPatch) -> list[PatchOp]:
    """``patch`` as add/remove/replace only: ``jsonpatch.make_patch`` turns an entry removed under one key and an
    equal one added under another (``Ethernet0|172.16.0.0/31: {}`` -> ``Ethernet0|172.16.0.2/31: {}``) into
    ``move``/``copy``. Those are valid RFC 6902, but a reviewer reads "remove this address, add that one" far more
    easily, GCU's pre-processing (``append_emptytables_if_required``, ``filter_duplicate_patch_operations``)
    looks at ``path``/``value`` only, and :func:`check_patch` then has one kind of removal to look for."""
    doc = copy.deepcopy(dict(source))
    out: list[PatchOp] = []
    for op in patch:
        if op["op"] in ("move", "copy"):
            value = copy.deepcopy(jsonpointer.resolve_pointer(doc, op["from"]))
            if op["op"] == "move":
                out.append({"op": "remove", "path": op["from"]})
            out.append({"op": "add", "path": op["path"], "value": value})
        else:
            out.append(dict(op))
        doc = jsonpatch.apply_patch(doc, [op])
    return out


def config_patch(
    running: Mapping[str, Any],
    desired: Mapping[str, Any],
    *,
    tables: Iterable[str] | None = None,
    owned: Collection[str] = OWNED_TABLES,
    check: bool = True,
) -> list[PatchOp]:
    """The RFC 6902 patch from ``running`` to :func:`target_config` (empty when the switch already matches).

    Args:
        running, desired, tables, owned: as for :func:`target_config`.
        check: run :func:`check_patch` on the result (default); off only to measure what differs.

    Returns:
        add/remove/replace operations, paths escaped per RFC 6901, touching managed tables only.

    Raises:
        UnsafePatchError: the patch would remove or change MGMT_* or Loopback0 (when ``check``).
        ValueError: ``tables`` names a table not in ``desired``.
    """
    target = target_config(running, desired, tables=tables, owned=owned)
    ops = _plain_ops(running, jsonpatch.make_patch(dict(running), target))
    if check:
        check_patch(ops, running)
    return ops


def _segments(pointer: str) -> list[str]:
    return list(jsonpointer.JsonPointer(pointer).parts)


def _touches_protected(op: PatchOp, running: Mapping[str, Any]) -> str | None:
    """The pointer by which ``op`` removes or changes a protected entry of ``running``, else None."""
    pointers = [op["path"]] + ([op["from"]] if "from" in op else [])
    for pointer in pointers:
        parts = _segments(pointer)
        if not parts:  # the whole config replaced
            if any(t in running for t in MANAGEMENT_TABLES) or _loopback_keys(running):
                return pointer
            continue
        table = parts[0]
        if table in MANAGEMENT_TABLES:
            # adding a management table the switch lacks changes nothing that exists; any operation inside an
            # existing one (even adding a second address) changes how the switch is reached
            if table in running or op["op"] != "add":
                return pointer
        elif table == "LOOPBACK_INTERFACE":
            if len(parts) == 1:
                if op["op"] != "add" or _loopback_keys(running):
                    return pointer
            elif _is_loopback0(parts[1]) and (parts[1] in running.get(table, {}) or op["op"] != "add"):
                return pointer
    return None


def _is_loopback0(key: str) -> bool:
    return key == PROTECTED_LOOPBACK or key.startswith(PROTECTED_LOOPBACK + "|")


def _loopback_keys(running: Mapping[str, Any]) -> list[str]:
    return [k for k in running.get("LOOPBACK_INTERFACE", {}) if _is_loopback0(k)]


def check_patch(patch: Iterable[Mapping[str, Any]], running: Mapping[str, Any]) -> None:
    """Refuse a patch that removes or changes MGMT_INTERFACE, MGMT_PORT, MGMT_VRF_CONFIG or Loopback0 entries.

    Adding a management table that ``running`` lacks, or a Loopback0 entry it lacks, is allowed (a fresh
    switch); any other operation inside an existing management table is refused.

    Raises:
        UnsafePatchError: naming every offending path.
    """
    bad_paths: list[str] = []
    bad_ops: list[PatchOp] = []
    for op in patch:
        hit = _touches_protected(dict(op), running)
        if hit is not None:
            bad_paths.append(hit)
            bad_ops.append(dict(op))
    if bad_paths:
        raise UnsafePatchError(bad_paths, bad_ops)


def tables_changed(patch: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per-table count of operations: ``{TABLE: {"add": n, "remove": n, "replace": n}}``, tables in patch order,
    only the kinds that occur."""
    out: dict[str, dict[str, int]] = {}
    for op in patch:
        parts = _segments(op["path"])
        table = parts[0] if parts else "/"
        kinds = out.setdefault(table, {})
        kinds[op["op"]] = kinds.get(op["op"], 0) + 1
    return out


def table_diffs(running: Mapping[str, Any], target: Mapping[str, Any], tables: Iterable[str]) -> list[dict[str, str]]:
    """Ansible ``diff`` entries, one per changed table: ``{"before_header", "after_header", "before", "after"}``
    with each table as sorted, indented JSON (Ansible's diff callback shows them as a unified diff)."""
    out = []
    for table in tables:
        out.append(
            {
                "before_header": f"CONFIG_DB {table} (running)",
                "after_header": f"CONFIG_DB {table} (after)",
                "before": json.dumps(running.get(table, {}), indent=2, sort_keys=True) + "\n",
                "after": json.dumps(target.get(table, {}), indent=2, sort_keys=True) + "\n",
            }
        )
    return out


def bgp_neighbors(config: Mapping[str, Any], vrf: str = "default") -> list[str]:
    """Addresses of the BGP neighbours ``config`` declares in ``vrf`` that are not shut down, in table order.

    Reads both shapes SONiC has (sonic-bgp-neighbor.yang): frrcfgd's ``<vrf>|<address>`` keys (hwaac's) and
    bgpcfgd's bare ``<address>`` keys (VRF default). ``admin_status`` "false" or "down" means shut down.
    """
    out: list[str] = []
    for key, fields in config.get("BGP_NEIGHBOR", {}).items():
        name, _, address = key.rpartition("|")
        if (name or "default") != vrf:
            continue
        if str(fields.get("admin_status", "true")).lower() in ("false", "down"):
            continue
        out.append(address)
    return out
