"""What a sync may do to an object a person made: adopt it without overwriting, release it instead of deleting it.

An adopted object carries ``hwaac-adopted`` beside the ownership tags. The plan's fields are only filled in where
the person left them empty; a field in :data:`KEEP` keeps the person's value, any other difference is a conflict
(nothing written). When the plan no longer wants it, the ownership tags come off and a journal entry says why: it
is never deleted. docs/netbox-ownership.md has the rules per field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hwaac.netbox.sync.desired import ADOPTED_TAG, Want
from hwaac.netbox.sync.records import choice_value

# fields whose value a person entered stays theirs on an adopted object (the plan's value is not written)
KEEP: dict[str, frozenset[str]] = {
    "devices": frozenset({"role"}),  # a person's role (e.g. core-switch) names how they see the device
    "prefixes": frozenset({"status", "scope"}),  # a person's prefix stays where and as they recorded it
    "asns": frozenset({"description", "sites"}),
    "cables": frozenset({"label"}),  # the person's cable label (asset or patch-panel id)
}
# NetBox object type of each owned kind (journal entries)
OBJECT_TYPE = {
    "devices": "dcim.device",
    "prefixes": "ipam.prefix",
    "ip-addresses": "ipam.ipaddress",
    "cables": "dcim.cable",
    "asns": "ipam.asn",
    "asn-ranges": "ipam.asnrange",
}
# a device hwaac created is not deleted in these states without ``delete_active`` (it carries jobs or evidence)
PROTECTED_STATUS = frozenset({"active", "staged", "failed"})


def empty(value: Any) -> bool:
    return value is None or value == "" or value == ()


def adopted_diff(
    kind: str, want: Want, norm: dict[str, Any], label: str, rid: int, show: Callable[[Any], str]
) -> tuple[dict[str, tuple[Any, Any]], list[str]]:
    """The fields to write on an adopted object (the planned value where the person's is empty) and the
    conflicts (a non-empty value that differs, in a field the person does not keep)."""
    diff: dict[str, tuple[Any, Any]] = {}
    conflicts: list[str] = []
    for f, v in want.fields.items():
        have = norm.get(f)
        if have == v or (f in KEEP.get(kind, ()) and not empty(have)):
            continue
        if empty(have):
            diff[f] = (have, v)
        else:
            conflicts.append(
                f"{label} (id {rid}, made by a person, adopted): NetBox holds {f} {show(have)}, the "
                f"plan needs {show(v)}; change one of them"
            )
    return diff, conflicts


def released_tags(tags: set[str], ours: Callable[[str], bool]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(old, new) tags of an adopted object hwaac lets go: every tag of hwaac's off, the person's kept."""
    old = tuple(sorted(t for t in tags if t))
    return old, tuple(t for t in old if not ours(t) and t != ADOPTED_TAG)


def journal(kind: str, rid: int, fabric: str, reason: str) -> dict[str, Any]:
    """The journal entry on an adopted object hwaac released."""
    return {
        "assigned_object_type": OBJECT_TYPE[kind],
        "assigned_object_id": rid,
        "kind": "info",
        "comments": f"Released by hwaac (fabric {fabric}): {reason}. This object was made by a person and "
        "adopted by hwaac; hwaac's tags were taken off and nothing of it was deleted.",
    }


def protected(rec: dict[str, Any]) -> str | None:
    """The status of a device that must not be deleted without ``delete_active``, or None."""
    value = choice_value(rec.get("status"))
    return value if value in PROTECTED_STATUS else None
