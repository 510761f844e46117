"""Sync engine: read what NetBox holds (:mod:`.read`), diff by natural key, check conflicts, then write in bulk
(:mod:`.write`).

Everything (diff and conflicts, for every object type) is computed before the first write. NetBox applies each
bulk request atomically, and natural keys make a re-run after a failure converge without duplicates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from hwaac.netbox.sync import ownership
from hwaac.netbox.sync.cleanup import cleanup_catalogue
from hwaac.netbox.sync.client import Client, ReadCache, SyncError
from hwaac.netbox.sync.desired import ADOPTED_TAG, OWNER_TAG, Desired, Want
from hwaac.netbox.sync.read import SyncReads
from hwaac.netbox.sync.records import (
    CATALOGUE,
    FIELDS,
    ID_CHUNK,
    KEY,
    OWNED,
    cable_ends,
    chunks,
    label_of,
    normalise,
    show,
    slug_of,
    tags_of,
)
from hwaac.netbox.sync.report import Change, Report, SyncConflict
from hwaac.netbox.sync.write import SyncWrites

# --- the sync ------------------------------------------------------------------------------------------------


class Sync(SyncReads, SyncWrites):
    """One sync of ``desired`` into the NetBox of ``client``."""

    def __init__(
        self,
        client: Client,
        desired: Desired,
        site: str,
        pools: list[str],
        fields: dict[str, str] | None = None,
        *,
        delete_active: bool = False,
    ) -> None:
        self.c, self.d, self.site, self.pools = client, desired, site, pools
        self.delete_active = delete_active
        self.fields = fields or FIELDS  # read-back asks for a few more fields of the same objects
        self.ftag = desired.tags[1]
        self.ids: dict[str, dict[Hashable, int]] = {}
        self.existing: dict[str, dict[Hashable, dict]] = {}
        self.changes: dict[str, Change] = {}
        self.conflicts: list[str] = []
        self.dupes: dict[str, list[dict]] = {}
        self.elsewhere: list[dict] = []  # planned device names a device of another site holds
        self.adopted_anywhere = False  # whether any object carries hwaac-adopted (else no read looks for them)

    # diffing
    def _diff(self) -> None:
        site_of_id = self.site_slugs()
        for kind in CATALOGUE:
            ch = Change()
            for key, want in self.d.kinds.get(kind, {}).items():
                if key not in self.existing[kind]:
                    ch.creates.append((key, {**want.create_only, **want.fields}))
            self.changes[kind] = ch
        for r in sorted(self.elsewhere, key=lambda r: r["name"]):
            self.conflicts.append(
                f"device {r['name']} is planned in site {self.site}, but NetBox holds a device of that name in site "
                f"{slug_of(r.get('site')) or '?'} (id {r['id']}, not this fabric's); rename one of them"
            )
        claim = self.d.claim_tags
        busy: dict[tuple[str, str], dict] = {}  # interface -> cable holding it
        for r in self.existing["cables"].values():
            a, b = cable_ends(r)
            for e in a + b:
                busy[e] = r
        for kind in OWNED:
            ch = Change()
            retag: list[tuple[Hashable, int, dict[str, tuple[Any, Any]], frozenset[str]]] = []
            have = self.existing[kind]
            wants = self.d.kinds.get(kind, {})
            for key, want in wants.items():
                if key not in have:
                    if kind == "cables" and isinstance(key, frozenset):  # a planned cable: its two ends
                        self._cable_conflicts(key, busy)
                    ch.creates.append(
                        (
                            key,
                            {**want.create_only, **want.fields, "tags": tuple(sorted(set(self.d.tags) | claim(want)))},
                        )
                    )
                    continue
                r = have[key]
                tags = tags_of(r)
                norm = normalise(kind, r, site_of_id)
                if self.ftag in tags:
                    if ADOPTED_TAG in tags:  # a person's object: filled in where empty, never overwritten
                        diff, clash = ownership.adopted_diff(kind, want, norm, label_of(kind, key), r["id"], show)
                        self.conflicts += clash
                    else:
                        diff = {f: (norm.get(f), v) for f, v in want.fields.items() if norm.get(f) != v}
                    claims = self._claims(tags)
                    new = claims | self.d.claim_tags(want) if self.d.scope is not None else self.d.claim_tags(want)
                    if new != claims:
                        retag.append((key, r["id"], diff, new))
                    elif diff:
                        ch.updates.append((key, r["id"], diff))
                    continue
                msg = self._conflict(kind, key, want, r, norm, tags)
                if msg:
                    self.conflicts.append(msg)
                    continue
                # adopted: tags added and the fields the plan needs filled in where empty; what the person entered
                # (role, status, scope, serial, asset tag, description, comments, ...) is not touched (.ownership)
                diff, clash = ownership.adopted_diff(kind, want, norm, label_of(kind, key), r["id"], show)
                if clash:
                    self.conflicts += clash
                    continue
                diff["tags"] = (
                    tuple(sorted(t for t in tags if t)),
                    tuple(sorted({t for t in tags if t} | set(self.d.tags) | {ADOPTED_TAG} | self.d.claim_tags(want))),
                )
                ch.updates.append((key, r["id"], diff))
            for key, r in have.items():
                tags = tags_of(r)
                if key in wants or self.ftag not in tags:
                    continue
                claims = self._claims(tags)
                if self.d.scope is not None:
                    mine = {self.d.plane_tags[p] for p in self.d.scope}
                    if not claims & mine:
                        continue  # another plane's object
                    rest = claims - mine
                    if rest:  # still claimed by another plane: release it to that plane
                        retag.append((key, r["id"], {}, rest))
                        continue
                if ADOPTED_TAG in tags:  # a person's object: let go, never deleted
                    ch.releases.append((key, r["id"]))
                elif kind == "devices" and (st := ownership.protected(r)) and not self.delete_active:
                    self.conflicts.append(
                        f"{label_of(kind, key)} (id {r['id']}) is {st} in NetBox and the plan no longer has it: it is "
                        f"deleted only when asked to (hwaac netbox sync --delete-active; delete_active = true on "
                        "hwaac_fabric_plane), or once its status in NetBox says it left service"
                    )
                else:
                    ch.deletes.append((key, r["id"]))
            if retag or ch.releases:
                full = self._full_tags(kind, [rid for _k, rid, _d, _n in retag] + [rid for _k, rid in ch.releases])
                for key, rid, diff, new in retag:
                    diff["tags"] = self._retag(full.get(rid, set()), new)
                    ch.updates.append((key, rid, diff))
                for key, rid in ch.releases:
                    ch.updates.append((key, rid, {"tags": ownership.released_tags(full.get(rid, set()), self._ours)}))
            for r in self.dupes.get(kind, []):
                ch.deletes.append((KEY[kind](r), r["id"]))
            self.changes[kind] = ch

    def _ours(self, tag: str) -> bool:
        """Whether ``tag`` is one of this fabric's ownership or plane tags."""
        return tag in self.d.tags or self.d.is_plane_tag(tag)

    def _claims(self, tags: set[str]) -> frozenset[str]:
        """The plane tags on an owned object; none means every plane of the plan claims it (objects recorded
        before hwaac tagged planes)."""
        claims = frozenset(t for t in tags if t and self.d.is_plane_tag(t))
        return claims or frozenset(self.d.plane_tags.values())

    def _full_tags(self, kind: str, ids: list[int]) -> dict[int, set[str]]:
        """Every tag of the owned objects ``ids`` (read only for objects whose tags are about to be written, so
        that a person's own tags survive)."""
        out: dict[int, set[str]] = {}
        for ch in chunks(sorted(ids), ID_CHUNK):
            for r in self.c.read(kind, "id,tags", id=ch):
                out[r["id"]] = tags_of(r)
        return out

    def _retag(self, tags: set[str], claims: frozenset[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(old, new) tag lists of an owned object whose plane claims become ``claims``."""
        keep = {t for t in tags if t and not self.d.is_plane_tag(t)}
        return tuple(sorted(t for t in tags if t)), tuple(sorted(keep | claims))

    def _conflict(self, kind: str, key: Hashable, want: Want, r: dict, norm: dict, tags: set[str]) -> str | None:
        what = label_of(kind, key)
        if OWNER_TAG in tags:
            other = sorted(t for t in tags if t.startswith("hwaac-fabric-")) or ["another fabric"]
            return f"{what} is owned by hwaac {', '.join(other)} (id {r['id']}), not by {self.ftag}"
        if kind == "devices" and norm["device_type"] != want.fields["device_type"]:
            return (
                f"{what}: NetBox holds device {key} (id {r['id']}, not owned by hwaac) of device type "
                f"{show(norm['device_type'])}, the plan needs {show(want.fields['device_type'])}"
            )
        if kind == "ip-addresses" and norm["interface"] is not None and norm["interface"] != want.fields["interface"]:
            return (
                f"IP address {want.fields['address']} is planned on {show(want.fields['interface'])}, but NetBox "
                f"holds {r['address']} (id {r['id']}, not owned by hwaac) on {show(norm['interface'])}"
            )
        return None

    def _cable_conflicts(self, key: frozenset, busy: dict[tuple[str, str], dict]) -> None:
        for end in sorted(key):
            r = busy.get(end)
            if r is not None and self.ftag not in tags_of(r):
                a, b = cable_ends(r)
                self.conflicts.append(
                    f"{label_of('cables', key)} is planned, but {end[0]}:{end[1]} holds cable {r.get('label') or ''} "
                    f"(id {r['id']}, not owned by hwaac) to "
                    f"{', '.join(f'{d}:{p}' for d, p in a + b if (d, p) != end) or 'nothing'}"
                )

    def read_and_diff(self) -> None:
        """Read what NetBox holds and diff it against the plan (``existing``, ``changes``, ``conflicts``); no
        write."""
        self._read_all()
        self._diff()

    def run(self, dry_run: bool) -> None:
        self.read_and_diff()
        if self.conflicts:
            raise SyncConflict(self.conflicts)
        if not dry_run:
            self._write()


def plan_pools(plan: Any) -> list[str]:
    """The plan's address pools (CIDRs): where the sync looks for prefixes and IP addresses to adopt."""
    return [x.cidr for x in plan.pools.present()]


def sync_plan(
    plan: Any,
    url: str,
    token: str,
    *,
    dry_run: bool = False,
    planes: Iterable[int] | None = None,
    remove: bool = False,
    delete_active: bool = False,
    log: Callable[[str], None] | None = None,
) -> Report:
    """Sync ``plan`` into the NetBox at ``url``; returns the report.

    Args:
        planes: act for these planes only (0-based; None: the whole fabric): create and update what they use,
            delete what only they claimed, release shared objects other planes still claim.
        remove: remove the planes instead (``desired`` holds no owned object): delete or release everything they
            claim; when nothing of the fabric is left, also delete the unused catalogue objects the fabric
            created (:func:`cleanup_catalogue`). What Terraform's destroy of ``hwaac_fabric_plane`` does.
        delete_active: delete devices the plan no longer has even when NetBox says they are active, staged or
            failed (without it, such a device is a conflict and nothing is written). Objects a person made and
            hwaac adopted are never deleted: they are released (:mod:`.ownership`).

    Raises:
        SyncError: NetBox unreachable, token refused, unsupported version, a write refused (one line, no token).
        SyncConflict: planned objects collide with objects hwaac does not own, or a device in service would be
            deleted (nothing written).
        ValueError: a plane outside the plan.
    """
    from hwaac.netbox.sync.desired import desired_state

    t0 = time.monotonic()
    client = Client(url, token)
    client.probe()
    desired = desired_state(plan, planes, owned=not remove)
    s = Sync(client, desired, plan.intent.fabric.site, plan_pools(plan), delete_active=delete_active)
    s.run(dry_run)
    changes = s.changes
    if remove and not dry_run:
        changes = {**changes, **cleanup_catalogue(client, desired)}
    return Report(changes, dict(client.requests), time.monotonic() - t0, dry_run)


def read_plan_state(
    plan: Any,
    url: str,
    token: str,
    planes: Iterable[int] | None = None,
    fields: dict[str, str] | None = None,
    cache: ReadCache | None = None,
) -> Sync:
    """Read what NetBox holds for ``planes`` of ``plan`` and diff it against the plan, without writing: the
    returned Sync has ``existing`` (per kind, natural key -> record), ``changes`` (what a sync would do) and
    ``conflicts``. ``cache``: share identical reads with other read-only callers (:class:`ReadCache`).
    Raises SyncError (one line, no token); ValueError for a plane outside the plan."""
    from hwaac.netbox.sync.desired import desired_state

    client = Client(url, token, cache=cache)
    client.probe()
    s = Sync(client, desired_state(plan, planes), plan.intent.fabric.site, plan_pools(plan), fields=fields)
    s.read_and_diff()
    if set(client.requests) - {"GET"}:  # cannot happen: read_and_diff only reads
        raise SyncError(f"read sent {client.requests}; it must only read")
    return s
