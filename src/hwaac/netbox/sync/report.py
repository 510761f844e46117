"""What a sync did or would do: changes per object type, the report and its lines, and the conflict error."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from hwaac.netbox.sync.client import SyncError
from hwaac.netbox.sync.records import label_of, show


class SyncConflict(SyncError):
    """Planned objects collide with objects hwaac does not own, or would delete a device in service; nothing was
    written."""

    def __init__(self, conflicts: list[str]) -> None:
        self.conflicts = conflicts
        head = f"{len(conflicts)} conflict(s); nothing written: {conflicts[0]}"
        super().__init__(head + "".join(f"\n  {c}" for c in conflicts[1:]))


@dataclass
class Change:
    creates: list[tuple[Hashable, dict[str, Any]]] = field(default_factory=list)
    updates: list[tuple[Hashable, int, dict[str, tuple[Any, Any]]]] = field(default_factory=list)
    deletes: list[tuple[Hashable, int]] = field(default_factory=list)
    # adopted objects the plan no longer wants: their tag update (in ``updates``) releases them, never a delete
    releases: list[tuple[Hashable, int]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.creates or self.updates or self.deletes)


@dataclass
class Report:
    changes: dict[str, Change]
    requests: dict[str, int]
    seconds: float
    dry_run: bool

    @property
    def writes(self) -> int:
        return sum(v for k, v in self.requests.items() if k != "GET")

    @property
    def changed(self) -> bool:
        return any(self.changes.values())

    def counts(self, kind: str) -> tuple[int, int, int]:
        c = self.changes.get(kind, Change())
        return len(c.creates), len(c.updates), len(c.deletes)

    def objects_written(self) -> int:
        return sum(sum(self.counts(k)) for k in self.changes)


def format_report(rep: Report, fabric: str) -> list[str]:
    verb = "would" if rep.dry_run else ""
    lines = []
    for kind, ch in rep.changes.items():
        if not ch:
            continue
        c, u, d = len(ch.creates), len(ch.updates), len(ch.deletes)
        lines.append(
            f"{kind}: {c} to create, {u} to update, {d} to delete"
            if rep.dry_run
            else f"{kind}: created {c}, updated {u}, deleted {d}"
        )
        if ch.releases:
            lines[-1] += f" ({len(ch.releases)} released: made by a person, hwaac's tags off, kept in NetBox)"
        if rep.dry_run:
            released = {key for key, _id in ch.releases}
            for key, _ in ch.creates:
                lines.append(f"  + {label_of(kind, key)}")
            for key, _id, diff in ch.updates:
                lines.append(
                    f"  ~ {label_of(kind, key)}: "
                    + (
                        "released (made by a person: hwaac's tags off, kept)"
                        if key in released
                        else "; ".join(f"{f}: {show(old)} -> {show(new)}" for f, (old, new) in diff.items())
                    )
                )
            for key, _id in ch.deletes:
                lines.append(f"  - {label_of(kind, key)}")
    reqs = ", ".join(f"{m} {n}" for m, n in sorted(rep.requests.items()))
    total = sum(rep.requests.values())
    if not rep.changed:
        lines.append(
            f"fabric {fabric}: no changes; NetBox already matches the plan "
            f"({total} requests: {reqs}; {rep.seconds:.1f} s)"
        )
    else:
        lines.append(
            f"fabric {fabric}: {verb + ' ' if verb else ''}{'write' if verb else 'wrote'} "
            f"{rep.objects_written()} objects "
            f"({total} requests: {reqs}; {rep.seconds:.1f} s)" + (" — dry run, nothing written" if rep.dry_run else "")
        )
    return lines
