"""Sync engine: read what NetBox holds, diff by natural key, check conflicts, then write in bulk.

Reads use large pages (limit=1000) and ``fields=`` so NetBox serialises only what the diff needs. Everything
(diff and conflicts, for every object type) is computed before the first write. Writes are list POST / PATCH /
DELETE requests (pynetbox ``endpoint.create(list)`` / ``.update(list)`` / ``.delete(list)``) in chunks: addresses
moving off a device about to be deleted are unassigned, then deletes in reverse dependency order, then creates and
updates in dependency order. NetBox applies each bulk request atomically, and natural keys make a re-run after a
failure converge without duplicates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hwaac.netbox.sync import ownership
from hwaac.netbox.sync.cleanup import cleanup_catalogue, cleanup_owner
from hwaac.netbox.sync.client import PAGE, SUPPORTED, Client, ReadCache, SyncError
from hwaac.netbox.sync.desired import ADOPTED_TAG, OWNER_TAG, Desired, Ref, Want
from hwaac.netbox.sync.records import (
    CATALOGUE,
    FIELDS,
    ID_CHUNK,
    KEY,
    OWNED,
    SINGULAR,
    _by_length,
    _cable_ends,
    _chunks,
    _iface,
    _label,
    _normalise,
    _show,
    _slug,
    _tags,
    _value,
)
from hwaac.netbox.sync.report import Change, Report, SyncConflict, format_report

# what other modules import from here (the engine was one file before)
__all__ = ["CATALOGUE", "FIELDS", "ID_CHUNK", "OWNED", "PAGE", "SINGULAR", "SUPPORTED", "Change", "Client",
           "ReadCache", "Report", "Sync", "SyncConflict", "SyncError", "_cable_ends", "_iface", "_label", "_show",
           "_slug", "_tags", "_value", "cleanup_catalogue", "cleanup_owner", "format_report", "plan_pools",
           "read_plan_state", "sync_plan"]

CHUNK = {"devices": 100}  # NetBox instantiates ~130 interfaces per device: keep those requests short
DEFAULT_CHUNK = 500
READ_THREADS = 3  # object types read side by side (NetBox serialises while the client parses)


# --- the sync ------------------------------------------------------------------------------------------------

class Sync:
    """One sync of ``desired`` into the NetBox of ``client``."""

    def __init__(self, client: Client, desired: Desired, site: str, pools: list[str],
                 fields: dict[str, str] | None = None, *, delete_active: bool = False) -> None:
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

    # reading
    def _read_all(self) -> None:
        w = self.d.kinds
        c = self.c
        for kind in CATALOGUE:
            keys = list(w.get(kind, {}))
            if kind == "interface-templates":
                type_ids = list(self.ids.get("device-types", {}).values())
                recs = [r for ch in _chunks(type_ids, 100)
                        for r in c.read(kind, self.fields[kind], devicetype_id=ch)] if type_ids else []
            elif kind == "custom-fields":
                recs = c.read(kind, self.fields[kind], name=keys)
            elif kind == "tags":  # also the plane tags of planes not in this sync (their claims are read below)
                recs = c.read(kind, self.fields[kind], slug=keys) + \
                    c.read(kind, self.fields[kind], slug__isw=self.d.plane_tag_prefix)
            elif keys:
                recs = c.read(kind, self.fields[kind], slug=keys)
            else:
                recs = []
            self._index(kind, recs)
            if kind == "tags":
                self.adopted_anywhere = any(r["slug"] == ADOPTED_TAG and r.get("tagged_items") for r in recs)
        site_id = self.ids.get("sites", {}).get(self.site)
        # a fabric tag that does not exist yet means nothing is owned yet (and NetBox refuses the filter)
        tagged = self.ftag in self.ids["tags"]
        plane_tags = sorted(t for t in self.ids["tags"] if self.d.is_plane_tag(t))

        def owned(kind: str) -> list[dict]:
            return c.read(kind, self.fields[kind], tag=self.ftag) if tagged else []

        def claims(kind: str, t: str) -> tuple[bool, set[int]]:
            """(True, ids of the owned objects plane tag ``t`` claims) or, when the plan says most of them are
            claimed (a one-plane fabric: all), (False, ids of the owned objects it does not claim): whichever read
            is expected to be smaller. Plane tags are the fabric's own, so one tag filter finds their objects."""
            wants = w.get(kind, {}).values()
            expect = sum(1 for want in wants if p_of[t] in want.planes)
            if 2 * expect > len(wants):
                return False, {r["id"] for r in c.read(kind, "id", tag=self.ftag, tag__n=t)}
            return True, {r["id"] for r in c.read(kind, "id", tag=t)}

        def adopted(kind: str) -> set[int]:
            """The fabric's owned objects a person made (NetBox ANDs repeated tag filters)."""
            return {r["id"] for r in c.read(kind, "id", tag=[self.ftag, ADOPTED_TAG])}

        def elsewhere() -> list[dict]:
            """Devices of another site named as planned devices (NetBox names are unique per site only)."""
            names = sorted(w.get("devices", {}))
            other: dict[str, Any] = {"site_id__n": site_id} if site_id is not None else {}
            return [r for ch in _by_length(names) for r in c.read("devices", "id,name,site", name=ch, **other)]

        def unowned(kind: str) -> list[dict]:
            others = self.fields[kind] + ",tags"
            nt: dict[str, Any] = {"tag__n": self.ftag} if tagged else {}
            recs: list[dict] = []
            if kind == "asn-ranges":
                recs += c.read(kind, others, name=list(w.get(kind, {})), **nt)
            elif kind == "asns":
                for ch in _chunks(sorted(w.get(kind, {})), 200):
                    recs += c.read(kind, others, asn=ch, **nt)
            elif kind in ("devices", "cables") and site_id is not None:
                recs += c.read(kind, others, site_id=site_id, **nt)
            elif kind == "prefixes":
                for pool in self.pools:
                    recs += c.read(kind, others, within_include=pool, **nt)
            elif kind == "ip-addresses" and self.pools:
                recs += c.read(kind, others, parent=self.pools, **nt)
            return recs

        p_of = {t: int(t[len(self.d.plane_tag_prefix):]) for t in plane_tags}
        # every read is its own task, the largest first: NetBox serialises one page while this process parses
        # another, and no type waits behind another's pages
        with ThreadPoolExecutor(max_workers=READ_THREADS) as pool:
            cabled = pool.submit(self._cabled, site_id)
            big_first = sorted(OWNED, key=lambda k: -len(w.get(k, {})))
            own = {kind: pool.submit(owned, kind) for kind in big_first}
            claim = {(kind, t): pool.submit(claims, kind, t) for kind in big_first for t in plane_tags} \
                if tagged else {}
            other = {kind: pool.submit(unowned, kind) for kind in big_first}
            mine = {kind: pool.submit(adopted, kind) for kind in big_first} \
                if tagged and self.adopted_anywhere else {}
            named = pool.submit(elsewhere)
            raw: dict[str, list[dict]] = {}
            for kind in OWNED:
                recs = own[kind].result()
                if recs:  # which planes claim them (tags are costly to serialise: only the ones that matter here)
                    got = {t: claim[kind, t].result() for t in plane_tags}
                    made = mine[kind].result() if mine else set()
                    # a write of tags first reads the object's full list (_full_tags)
                    recs = [{**r, "_partial_tags": True, "tags": [{"slug": self.ftag}] + [
                        {"slug": t} for t, (positive, ids) in got.items() if (r["id"] in ids) == positive]
                        + ([{"slug": ADOPTED_TAG}] if r["id"] in made else [])}
                        for r in recs]
                recs += other[kind].result()
                if kind in ("prefixes", "ip-addresses"):  # the global VRF only
                    recs = [r for r in recs if not r.get("vrf") or self.ftag in _tags(r)]
                raw[kind] = recs
            names, terms = cabled.result()
            self.elsewhere = named.result()
        self._ends(raw["cables"], raw["ip-addresses"], names, terms)
        for kind in OWNED:
            self._index(kind, raw[kind])

    def _cabled(self, site_id: int | None) -> tuple[dict[int, dict], dict[int, list[dict]]]:
        """The site's cabled interfaces (id -> record with name, device, cable, cable_end) and, per cable id, its
        interface terminations: one read, instead of NetBox's nested serialisation of cable ends (~3 ms a cable)."""
        names: dict[int, dict] = {}
        terms: dict[int, list[dict]] = {}
        if site_id is None:
            return names, terms
        for r in self.c.read("interfaces", "id,name,device,cable,cable_end", site_id=site_id, cabled=True):
            names[r["id"]] = r
            if isinstance(r.get("cable"), dict):
                terms.setdefault(r["cable"]["id"], []).append(
                    {"cable_end": r.get("cable_end"), "termination_type": "dcim.interface", "termination_id": r["id"]})
        return names, terms

    def _ends(self, cables: list[dict], ips: list[dict], names: dict[int, dict],
              terms: dict[int, list[dict]]) -> None:
        """Fill in each cable's ``a_/b_terminations`` and each address's ``assigned_object`` (interface name and
        device name), as NetBox's nested serialisation would, from the site's cabled interfaces (``_cabled``);
        cable-terminations only for cables with no interface at the site, and interfaces by id for addresses on
        uncabled ones (loopbacks)."""
        c = self.c
        for ch in _chunks(sorted({r["id"] for r in cables} - set(terms)), ID_CHUNK):
            for t in c.read("cable-terminations", "cable,cable_end,termination_type,termination_id", cable_id=ch):
                terms.setdefault(t["cable"], []).append(t)
        need = {t["termination_id"] for ts in terms.values() for t in ts if t["termination_type"] == "dcim.interface"}
        need |= {r["assigned_object_id"] for r in ips
                 if r.get("assigned_object_type") == "dcim.interface" and r.get("assigned_object_id") is not None}
        for ch in _chunks(sorted(need - set(names)), ID_CHUNK):
            for r in c.read("interfaces", "id,name,device", id=ch):
                names[r["id"]] = r
        for r in cables:
            for end in ("A", "B"):
                r[f"{end.lower()}_terminations"] = [
                    {"object_type": t["termination_type"], "object_id": t["termination_id"],
                     "object": names.get(t["termination_id"]) if t["termination_type"] == "dcim.interface" else None}
                    for t in sorted(terms.get(r["id"], []), key=lambda t: t["termination_id"])
                    if t["cable_end"] == end]
        for r in ips:
            r["assigned_object"] = names.get(r.get("assigned_object_id")) \
                if r.get("assigned_object_type") == "dcim.interface" else None

    def _index(self, kind: str, recs: list[dict]) -> None:
        by_key: dict[Hashable, dict] = {}
        dupes: list[dict] = []
        seen: set[int] = set()
        for r in recs:
            if r["id"] in seen:
                continue
            seen.add(r["id"])
            k = KEY[kind](r)
            if k in by_key:  # keep the owned one; extra owned duplicates are deleted
                keep, other = (r, by_key[k]) if self.ftag in _tags(r) and self.ftag not in _tags(by_key[k]) \
                    else (by_key[k], r)
                by_key[k] = keep
                dupes.append(other)
            else:
                by_key[k] = r
        self.existing[kind] = by_key
        self.dupes[kind] = [r for r in dupes if self.ftag in _tags(r)]
        self.ids[kind] = {k: r["id"] for k, r in by_key.items()}

    # diffing
    def _diff(self) -> None:
        site_of_id = {i: k for k, i in self.ids.get("sites", {}).items()}
        for kind in CATALOGUE:
            ch = Change()
            for key, want in self.d.kinds.get(kind, {}).items():
                if key not in self.existing[kind]:
                    ch.creates.append((key, {**want.create_only, **want.fields}))
            self.changes[kind] = ch
        for r in sorted(self.elsewhere, key=lambda r: r["name"]):
            self.conflicts.append(
                f"device {r['name']} is planned in site {self.site}, but NetBox holds a device of that name in site "
                f"{_slug(r.get('site')) or '?'} (id {r['id']}, not this fabric's); rename one of them")
        claim = self.d.claim_tags
        busy: dict[tuple[str, str], dict] = {}  # interface -> cable holding it
        for r in self.existing["cables"].values():
            a, b = _cable_ends(r)
            for e in a + b:
                busy[e] = r
        for kind in OWNED:
            ch = Change()
            retag: list[tuple[Hashable, int, dict[str, tuple[Any, Any]], frozenset[str]]] = []
            have = self.existing[kind]
            wants = self.d.kinds.get(kind, {})
            for key, want in wants.items():
                r = have.get(key)
                if r is None:
                    if kind == "cables":
                        self._cable_conflicts(key, busy)
                    ch.creates.append((key, {**want.create_only, **want.fields,
                                             "tags": tuple(sorted(set(self.d.tags) | claim(want)))}))
                    continue
                tags = _tags(r)
                norm = _normalise(kind, r, site_of_id)
                if self.ftag in tags:
                    if ADOPTED_TAG in tags:  # a person's object: filled in where empty, never overwritten
                        diff, clash = ownership.adopted_diff(kind, want, norm, _label(kind, key), r["id"], _show)
                        self.conflicts += clash
                    else:
                        diff = {f: (norm.get(f), v) for f, v in want.fields.items() if norm.get(f) != v}
                    claims = self._claims(tags)
                    new = claims | self.d.claim_tags(want) if self.d.scope is not None \
                        else self.d.claim_tags(want)
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
                diff, clash = ownership.adopted_diff(kind, want, norm, _label(kind, key), r["id"], _show)
                if clash:
                    self.conflicts += clash
                    continue
                diff["tags"] = (tuple(sorted(t for t in tags if t)),
                                tuple(sorted({t for t in tags if t} | set(self.d.tags) | {ADOPTED_TAG}
                                             | self.d.claim_tags(want))))
                ch.updates.append((key, r["id"], diff))
            for key, r in have.items():
                tags = _tags(r)
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
                        f"{_label(kind, key)} (id {r['id']}) is {st} in NetBox and the plan no longer has it: it is "
                        f"deleted only when asked to (hwaac netbox sync --delete-active; delete_active = true on "
                        "hwaac_fabric_plane), or once its status in NetBox says it left service")
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
        for ch in _chunks(sorted(ids), ID_CHUNK):
            for r in self.c.read(kind, "id,tags", id=ch):
                out[r["id"]] = _tags(r)
        return out

    def _retag(self, tags: set[str], claims: frozenset[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(old, new) tag lists of an owned object whose plane claims become ``claims``."""
        keep = {t for t in tags if t and not self.d.is_plane_tag(t)}
        return tuple(sorted(t for t in tags if t)), tuple(sorted(keep | claims))

    def _conflict(self, kind: str, key: Hashable, want: Want, r: dict, norm: dict, tags: set[str]) -> str | None:
        what = _label(kind, key)
        if OWNER_TAG in tags:
            other = sorted(t for t in tags if t.startswith("hwaac-fabric-")) or ["another fabric"]
            return f"{what} is owned by hwaac {', '.join(other)} (id {r['id']}), not by {self.ftag}"
        if kind == "devices" and norm["device_type"] != want.fields["device_type"]:
            return (f"{what}: NetBox holds device {key} (id {r['id']}, not owned by hwaac) of device type "
                    f"{_show(norm['device_type'])}, the plan needs {_show(want.fields['device_type'])}")
        if kind == "ip-addresses" and norm["interface"] is not None and norm["interface"] != want.fields["interface"]:
            return (f"IP address {want.fields['address']} is planned on {_show(want.fields['interface'])}, but NetBox "
                    f"holds {r['address']} (id {r['id']}, not owned by hwaac) on {_show(norm['interface'])}")
        return None

    def _cable_conflicts(self, key: frozenset, busy: dict[tuple[str, str], dict]) -> None:
        for end in sorted(key):
            r = busy.get(end)
            if r is not None and self.ftag not in _tags(r):
                a, b = _cable_ends(r)
                self.conflicts.append(
                    f"{_label('cables', key)} is planned, but {end[0]}:{end[1]} holds cable {r.get('label') or ''} "
                    f"(id {r['id']}, not owned by hwaac) to "
                    f"{', '.join(f'{d}:{p}' for d, p in a + b if (d, p) != end) or 'nothing'}")

    # writing
    def _resolve(self, kind: str, fields: dict[str, Any], ifaces: dict[tuple[str, str], int]) -> dict[str, Any]:
        out: dict[str, Any] = {}

        def rid(v: Any) -> Any:
            if isinstance(v, Ref):
                if v.kind == "interfaces":
                    if v.key not in ifaces:
                        raise SyncError(f"NetBox has no interface {_show(v)} for the planned {kind}; "
                                        "is the device of another device type?")
                    return ifaces[v.key]
                if v.key not in self.ids.get(v.kind, {}):
                    raise SyncError(f"{SINGULAR.get(v.kind, v.kind)} {v.key} is missing in NetBox (needed by {kind})")
                return self.ids[v.kind][v.key]
            if isinstance(v, tuple):
                return [rid(x) for x in v]
            return v

        for f, v in fields.items():
            if f.startswith("custom_fields."):
                out.setdefault("custom_fields", {})[f.split(".", 1)[1]] = v
            elif f == "interface":
                out["assigned_object_type"] = "dcim.interface" if v is not None else None
                out["assigned_object_id"] = rid(v) if v is not None else None
            elif f == "scope":
                out["scope_type"], out["scope_id"] = "dcim.site", rid(v)
            elif f in ("a", "b"):
                out[f"{f}_terminations"] = [{"object_type": "dcim.interface", "object_id": rid(v)}]
            elif f == "tags":
                out["tags"] = [{"slug": t} for t in v]
            else:
                out[f] = rid(v)
        return out

    def _ifaces(self) -> dict[tuple[str, str], int]:
        names: set[str] = set()
        for kind in ("cables", "ip-addresses"):
            ch = self.changes[kind]
            for _k, fields in ch.creates:
                names.update(v.key[1] for v in fields.values() if isinstance(v, Ref) and v.kind == "interfaces")
            for _k, _i, diff in ch.updates:
                names.update(new.key[1] for _o, new in diff.values()
                             if isinstance(new, Ref) and new.kind == "interfaces")
        site_id = self.ids["sites"].get(self.site)
        out: dict[tuple[str, str], int] = {}
        for ch in _chunks(sorted(names), 100):
            for r in self.c.read("interfaces", "id,name,device", site_id=site_id, name=ch):
                out[(r["device"]["name"], r["name"])] = r["id"]
        return out

    def _leaving_deleted_devices(self) -> list[int]:
        """The addresses the plan moves off an interface of a device this sync deletes (re-planned host links: a
        node removed, its address now another node's). NetBox deletes an interface's addresses with the interface
        (``Interface.ip_addresses`` is a GenericRelation), so they are unassigned before the deletes and keep their
        id (and whatever a person entered on them); their update then assigns them where the plan wants them."""
        gone = {key for key, _id in self.changes["devices"].deletes}
        return [rid for _key, rid, diff in self.changes["ip-addresses"].updates
                if isinstance(old := diff.get("interface", (None, None))[0], Ref) and old.key[0] in gone]

    def _write(self) -> None:
        c = self.c
        tags = list(self.d.tags)
        ep = c.endpoint("ip-addresses")
        for part in _chunks(self._leaving_deleted_devices(), DEFAULT_CHUNK):
            body = [{"id": i, "assigned_object_type": None, "assigned_object_id": None} for i in part]
            c.call("PATCH", "ip-addresses", lambda body=body, ep=ep: ep.update(body))
        for kind in reversed(OWNED):
            ids = [i for _k, i in self.changes[kind].deletes]
            ep = c.endpoint(kind)
            for ch in _chunks(ids, DEFAULT_CHUNK):
                c.call("DELETE", kind, lambda ch=ch, ep=ep: ep.delete(ch))
        ifaces: dict[tuple[str, str], int] = {}
        for kind in CATALOGUE + OWNED:
            ch = self.changes[kind]
            if kind in ("cables", "ip-addresses") and not ifaces and (ch.creates or ch.updates):
                ifaces = self._ifaces()
            ep = c.endpoint(kind)
            n = CHUNK.get(kind, DEFAULT_CHUNK)
            with_tags = kind not in ("interface-templates", "custom-fields")
            for part in _chunks(ch.creates, n):
                body = [{**({"tags": [{"slug": t} for t in tags]} if with_tags and kind != "tags" else {}),
                         **self._resolve(kind, f, ifaces)} for _k, f in part]
                created = c.call("POST", kind, lambda body=body, ep=ep: ep.create(body))
                for (key, _f), rec in zip(part, created if isinstance(created, list) else [created], strict=True):
                    self.ids.setdefault(kind, {})[key] = rec.id
            for part in _chunks(ch.updates, n):
                body = [{"id": i, **self._resolve(kind, {f: new for f, (_o, new) in diff.items()}, ifaces)}
                        for _k, i, diff in part]
                c.call("PATCH", kind, lambda body=body, ep=ep: ep.update(body))
        # why each adopted object was let go, on the object itself
        reason = "no longer in the plan" if self.d.scope is None else \
            f"no longer in the plan of plane(s) {', '.join(map(str, sorted(self.d.scope)))}"
        notes = [ownership.journal(kind, rid, self.d.fabric, reason)
                 for kind in OWNED for _k, rid in self.changes[kind].releases]
        ep = c.endpoint("journal-entries")
        for part in _chunks(notes, DEFAULT_CHUNK):
            c.call("POST", "journal-entries", lambda part=part, ep=ep: ep.create(part))

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


def sync_plan(plan: Any, url: str, token: str, *, dry_run: bool = False, planes: Iterable[int] | None = None,
              remove: bool = False, delete_active: bool = False, log: Callable[[str], None] | None = None) -> Report:
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


def read_plan_state(plan: Any, url: str, token: str, planes: Iterable[int] | None = None,
                    fields: dict[str, str] | None = None, cache: ReadCache | None = None) -> Sync:
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
