"""Compare two plan documents: what is added, changed and removed, and which changes renumber.

A renumbering changes something already in the field (a switch's ASN or loopback, a node's SU or slot, a
cable's ends or addresses); ``hwaac plan --against`` refuses it without ``--allow-renumber``, and removals
without ``--allow-remove``. A change of the ``storage`` entry is reported field by field and affects every GPU
node, but is never refused. Details: docs/plan.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

SECTIONS = ("switches", "nodes", "links")
RENUMBER_FIELDS = {
    "switches": ("asn", "loopback", "role", "plane"),
    "nodes": ("su", "slot"),
    "links": ("a", "b", "prefixlen", "kind"),
}


@dataclass
class PlanDiff:
    """Per section (switches, nodes, links): names added, removed, and changed with field-level details."""

    added: dict[str, list[str]] = field(default_factory=dict)
    removed: dict[str, list[str]] = field(default_factory=dict)
    changed: dict[str, dict[str, dict[str, tuple[Any, Any]]]] = field(default_factory=dict)
    affected: list[str] = field(default_factory=list)  # existing devices whose rendered files change
    # storage section: path inside it ("" = the whole section, added or removed) -> (old, new); empty = unchanged
    storage: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    @property
    def renumbered(self) -> list[str]:
        """Changes to existing allocations, as ``section name: field old -> new`` lines."""
        out = []
        for section, items in self.changed.items():
            for name, fields in items.items():
                for fname, (old, new) in fields.items():
                    if fname in RENUMBER_FIELDS[section]:
                        out.append(f"{section} {name}: {fname} {_short(old)} -> {_short(new)}")
        return out

    @property
    def removals(self) -> list[str]:
        """Removed switches, nodes and cables, as ``section name`` lines."""
        return [f"{s} {name}" for s in SECTIONS for name in self.removed.get(s, [])]

    @property
    def empty(self) -> bool:
        return (
            not any(self.added.values())
            and not any(self.removed.values())
            and not any(self.changed.values())
            and not self.storage
        )

    def storage_summary(self) -> str:
        """``storage: unchanged``, ``storage: added``, ``storage: removed`` or ``storage: N field(s) changed``."""
        if not self.storage:
            return "storage: unchanged"
        if "" in self.storage:
            return "storage: added" if self.storage[""][0] is None else "storage: removed"
        return f"storage: {len(self.storage)} field(s) changed"

    def summary(self) -> str:
        """One line per section, ``switches: +N ~N -N``, then :meth:`storage_summary`."""
        lines = []
        for s in SECTIONS:
            a, c, r = len(self.added.get(s, [])), len(self.changed.get(s, {})), len(self.removed.get(s, []))
            lines.append(f"{s}: +{a} ~{c} -{r}")
        lines.append(self.storage_summary())
        return "\n".join(lines)

    def affected_summary(self, limit: int = 8) -> str:
        """One line naming the devices that stay but whose configuration changes (new or removed cables on them,
        changed allocations): these need a push even though nothing of theirs is renumbered."""
        if not self.affected:
            return "existing devices whose configuration changes: none"
        shown = ", ".join(self.affected[:limit]) + (
            f", ... {len(self.affected) - limit} more" if len(self.affected) > limit else ""
        )
        return f"existing devices whose configuration changes: {len(self.affected)} ({shown})"

    def details(self, limit: int = 20) -> str:
        lines = []
        for s in SECTIONS:
            for verb, names in (("+", sorted(self.added.get(s, []))), ("-", sorted(self.removed.get(s, [])))):
                for n in names[:limit]:
                    lines.append(f"  {verb} {s} {n}")
                if len(names) > limit:
                    lines.append(f"  {verb} {s} ... {len(names) - limit} more")
            changed = self.changed.get(s, {})
            for n in list(changed)[:limit]:
                fields = ", ".join(f"{k}: {_short(o)} -> {_short(v)}" for k, (o, v) in changed[n].items())
                lines.append(f"  ~ {s} {n}: {fields}")
            if len(changed) > limit:
                lines.append(f"  ~ {s} ... {len(changed) - limit} more")
        items = list(self.storage.items())
        for path, (o, v) in items[:limit]:
            if path == "":
                lines.append(f"  {'+' if o is None else '-'} storage (lustre-client.json of every GPU node)")
            else:
                lines.append(f"  ~ storage {path}: {_json(o)} -> {_json(v)}")
        if len(items) > limit:
            lines.append(f"  ~ storage ... {len(items) - limit} more")
        return "\n".join(lines)


def _short(v: Any) -> str:
    return ":".join(map(str, v)) if isinstance(v, list) else str(v)


def _json(v: Any) -> str:
    """A storage value as compact JSON (``(none)`` for a field one side lacks), cut at 120 characters."""
    text = "(none)" if v is None else json.dumps(v, sort_keys=True, separators=(", ", ": "))
    return text if len(text) <= 120 else text[:117] + "..."


def storage_changes(old: Any, new: Any, path: str = "") -> dict[str, tuple[Any, Any]]:
    """Field-level differences of two storage sections (JSON values): path -> (old, new), in document order.

    Mappings are compared key by key (a key one side lacks is None there), lists of the same length item by item
    (``lnet.networks[0].routes``), anything else as a whole; ``""`` is the whole section (one side None).
    """
    if old == new:
        return {}
    if isinstance(old, dict) and isinstance(new, dict):
        out: dict[str, tuple[Any, Any]] = {}
        for key in [*old, *(k for k in new if k not in old)]:
            out.update(storage_changes(old.get(key), new.get(key), f"{path}.{key}" if path else str(key)))
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new) and path:
        out = {}
        for i, (o, n) in enumerate(zip(old, new, strict=True)):
            out.update(storage_changes(o, n, f"{path}[{i}]"))
        return out
    return {path: (old, new)}


def diff_plans(old: dict[str, Any], new: dict[str, Any]) -> PlanDiff:
    """Diff two plan documents (:func:`hwaac.plan.serialize.plan_to_dict` shape, with the optional ``storage``
    entry of :func:`hwaac.render.plan_document`)."""
    d = PlanDiff()
    for s in SECTIONS:
        o, n = old.get(s, {}), new.get(s, {})
        d.added[s] = [k for k in n if k not in o]
        d.removed[s] = [k for k in o if k not in n]
        changed: dict[str, dict[str, tuple[Any, Any]]] = {}
        for k, nv in n.items():
            ov = o.get(k)
            if ov is None or ov == nv:
                continue
            fields = {f: (ov.get(f), nv.get(f)) for f in sorted(set(ov) | set(nv)) if ov.get(f) != nv.get(f)}
            if fields:
                changed[k] = fields
        d.changed[s] = changed
    old_devices = set(old.get("switches", {})) | set(old.get("nodes", {}))
    gone = set(d.removed["switches"]) | set(d.removed["nodes"])
    touched: set[str] = set(d.changed["switches"]) | set(d.changed["nodes"])
    links_old, links_new = old.get("links", {}), new.get("links", {})
    for cable in [*d.added["links"], *d.changed["links"]]:
        touched.update((links_new[cable]["a"][0], links_new[cable]["b"][0]))
    for cable in [*d.removed["links"], *d.changed["links"]]:
        touched.update((links_old[cable]["a"][0], links_old[cable]["b"][0]))
    d.storage = storage_changes(old.get("storage"), new.get("storage"))
    if d.storage:  # every GPU node's lustre-client.json (and its netplan storage routes) follow the section
        touched.update(k for k, v in new.get("nodes", {}).items() if v.get("kind") == "gpu")
    d.affected = sorted((touched & old_devices) - gone)
    return d
