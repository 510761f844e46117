"""Compare two plan documents: what is added, changed and removed, and which changes renumber.

A *renumbering* is a change to something that already exists in the field: a switch's ASN or loopback, a node's
SU or slot, or a cable whose ends (device, port) or addresses changed. Growth of a well-sized fabric only adds;
shrinking removes. ``hwaac plan --against`` refuses a renumbering unless ``--allow-renumber`` is given, and a
removal of devices or cables unless ``--allow-remove`` is given, since applying either re-addresses, re-cables
or drops devices in service.
"""

from __future__ import annotations

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
        return not any(self.added.values()) and not any(self.removed.values()) and not any(self.changed.values())

    def summary(self) -> str:
        """One line per section: ``switches: +N ~N -N``."""
        lines = []
        for s in SECTIONS:
            a, c, r = len(self.added.get(s, [])), len(self.changed.get(s, {})), len(self.removed.get(s, []))
            lines.append(f"{s}: +{a} ~{c} -{r}")
        return "\n".join(lines)

    def affected_summary(self, limit: int = 8) -> str:
        """One line naming the devices that stay but whose configuration changes (new or removed cables on them,
        changed allocations): these need a push even though nothing of theirs is renumbered."""
        if not self.affected:
            return "existing devices whose configuration changes: none"
        shown = ", ".join(self.affected[:limit]) + (f", ... {len(self.affected) - limit} more"
                                                      if len(self.affected) > limit else "")
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
        return "\n".join(lines)


def _short(v: Any) -> str:
    return ":".join(map(str, v)) if isinstance(v, list) else str(v)


def diff_plans(old: dict[str, Any], new: dict[str, Any]) -> PlanDiff:
    """Diff two plan documents (:func:`hwaac.plan.serialize.plan_to_dict` shape)."""
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
    d.affected = sorted((touched & old_devices) - gone)
    return d
