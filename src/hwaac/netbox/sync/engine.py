"""Sync engine: read what NetBox holds, diff by natural key, check conflicts, then write in bulk.

Reads use large pages (limit=1000) and ``fields=`` so NetBox serialises only what the diff needs. Everything
(diff and conflicts, for every object type) is computed before the first write. Writes are list POST / PATCH /
DELETE requests (pynetbox ``endpoint.create(list)`` / ``.update(list)`` / ``.delete(list)``) in chunks: addresses
moving off a device about to be deleted are unassigned, then deletes in reverse dependency order, then creates and
updates in dependency order. NetBox applies each bulk request atomically, and natural keys make a re-run after a
failure converge without duplicates.
"""

from __future__ import annotations

import copy
import hashlib
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import pynetbox
import requests

from hwaac.netbox import api
from hwaac.netbox.errors import NetBoxError
from hwaac.netbox.sync import ownership
from hwaac.netbox.sync.desired import ADOPTED_TAG, ASN_FIELD, OWNED_KINDS, OWNER_TAG, Desired, Ref, Want

SUPPORTED = "4.7."
PAGE = 1000
CHUNK = {"devices": 100}  # NetBox instantiates ~130 interfaces per device: keep those requests short
DEFAULT_CHUNK = 500
CATALOGUE = ("tags", "custom-fields", "sites", "manufacturers", "device-roles", "rirs", "device-types",
             "interface-templates")
OWNED = OWNED_KINDS
ENDPOINT = {"tags": "extras.tags", "custom-fields": "extras.custom_fields", "sites": "dcim.sites",
            "manufacturers": "dcim.manufacturers", "device-roles": "dcim.device_roles", "rirs": "ipam.rirs",
            "device-types": "dcim.device_types", "interface-templates": "dcim.interface_templates",
            "asn-ranges": "ipam.asn_ranges", "asns": "ipam.asns", "devices": "dcim.devices",
            "prefixes": "ipam.prefixes", "cables": "dcim.cables", "ip-addresses": "ipam.ip_addresses",
            "interfaces": "dcim.interfaces", "cable-terminations": "dcim.cable_terminations",
            "locations": "dcim.locations", "roles": "ipam.roles", "vrfs": "ipam.vrfs",
            "journal-entries": "extras.journal_entries"}
READ_THREADS = 3  # object types read side by side (NetBox serialises while the client parses)
ID_CHUNK = 150  # ids per filtered read: keeps the request line well under gunicorn's 4094 bytes


SINGULAR = {"tags": "tag", "custom-fields": "custom field", "sites": "site", "manufacturers": "manufacturer",
            "device-roles": "device role", "rirs": "RIR", "device-types": "device type",
            "interface-templates": "interface template", "asn-ranges": "ASN range", "asns": "ASN",
            "devices": "device", "prefixes": "prefix", "cables": "cable", "ip-addresses": "IP address"}


class SyncError(NetBoxError):
    """The sync could not run or stopped (one line; never carries the token)."""


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


def _label(kind: str, key: Hashable) -> str:
    if kind == "cables" and isinstance(key, frozenset):
        a, b = sorted(key)
        return f"cable {a[0]}:{a[1]} <-> {b[0]}:{b[1]}"
    if isinstance(key, tuple):
        key = ":".join(str(k) for k in key)
    return f"{SINGULAR.get(kind, kind)} {key}"


def _show(v: Any) -> str:
    if isinstance(v, Ref):
        k = v.key
        return ":".join(map(str, k)) if isinstance(k, tuple) else str(k)
    if isinstance(v, tuple):
        return "[" + ", ".join(_show(x) for x in v) + "]"
    return "(empty)" if v in (None, "") else str(v)


def format_report(rep: Report, fabric: str) -> list[str]:
    verb = "would" if rep.dry_run else ""
    lines = []
    for kind, ch in rep.changes.items():
        if not ch:
            continue
        c, u, d = len(ch.creates), len(ch.updates), len(ch.deletes)
        lines.append(f"{kind}: {c} to create, {u} to update, {d} to delete" if rep.dry_run
                     else f"{kind}: created {c}, updated {u}, deleted {d}")
        if ch.releases:
            lines[-1] += f" ({len(ch.releases)} released: made by a person, hwaac's tags off, kept in NetBox)"
        if rep.dry_run:
            released = {key for key, _id in ch.releases}
            for key, _ in ch.creates:
                lines.append(f"  + {_label(kind, key)}")
            for key, _id, diff in ch.updates:
                lines.append(f"  ~ {_label(kind, key)}: " + ("released (made by a person: hwaac's tags off, kept)"
                                                            if key in released else "; ".join(
                    f"{f}: {_show(old)} -> {_show(new)}" for f, (old, new) in diff.items())))
            for key, _id in ch.deletes:
                lines.append(f"  - {_label(kind, key)}")
    reqs = ", ".join(f"{m} {n}" for m, n in sorted(rep.requests.items()))
    total = sum(rep.requests.values())
    if not rep.changed:
        lines.append(f"fabric {fabric}: no changes; NetBox already matches the plan "
                     f"({total} requests: {reqs}; {rep.seconds:.1f} s)")
    else:
        lines.append(f"fabric {fabric}: {verb + ' ' if verb else ''}{'write' if verb else 'wrote'} "
                     f"{rep.objects_written()} objects "
                     f"({total} requests: {reqs}; {rep.seconds:.1f} s)" + (" — dry run, nothing written"
                                                                            if rep.dry_run else ""))
    return lines


class ReadCache:
    """Answers to identical reads, shared by the read-only clients of one process until :meth:`clear`.

    Terraform refreshes every plane of a fabric at once, and each plane's read asks NetBox mostly the same
    questions (the fabric's owned objects, the planes' claims, the site's cabled interfaces): with one cache the
    second asker waits for the first answer instead of sending the request again. Whoever writes must
    :meth:`clear` it first. Every caller gets its own copy of an answer (the sync annotates records it reads).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: dict[Hashable, Future[Any]] = {}

    def get(self, key: Hashable, fetch: Callable[[], Any]) -> Any:
        with self._lock:
            fut = self._answers.get(key)
            mine = fut is None
            if fut is None:
                fut = self._answers[key] = Future()
        if mine:
            try:
                fut.set_result(fetch())
            except BaseException as exc:
                with self._lock:
                    self._answers.pop(key, None)  # a failed read is asked again next time
                fut.set_exception(exc)
        return copy.deepcopy(fut.result())

    def clear(self) -> None:
        with self._lock:
            self._answers.clear()


def _frozen(v: Any) -> Hashable:
    return tuple(_frozen(x) for x in v) if isinstance(v, list | tuple) else v


class Client:
    """pynetbox API with a request counter; errors become one-line SyncErrors without the token.

    With a :class:`ReadCache` (``cache``), :meth:`probe` and :meth:`read` answer from it: for clients that only
    read (a Terraform refresh), never for a sync that writes."""

    def __init__(self, url: str, token: str, timeout: float = 600.0, cache: ReadCache | None = None) -> None:
        self.url, self._token = url.rstrip("/"), token
        self.cache = cache
        self._who = (self.url, hashlib.sha256(token.encode()).hexdigest())  # cache key: the NetBox and the token
        self.requests: dict[str, int] = {}
        self._lock = threading.Lock()
        self.nb = pynetbox.api(self.url, token=token)
        session = requests.Session()
        session.hooks["response"].append(self._count)
        self.nb.http_session = session
        self.timeout = timeout

    def _count(self, resp: requests.Response, *args: Any, **kwargs: Any) -> None:
        m = resp.request.method or "?"
        with self._lock:  # reads run on several threads
            self.requests[m] = self.requests.get(m, 0) + 1

    def _clean(self, text: str) -> str:
        text = " ".join(str(text).split())
        if self._token:
            text = text.replace(self._token, "<token>")
            if "." in self._token:
                text = text.replace(self._token.split(".", 1)[1], "<token>")
        return text[:400]

    def endpoint(self, kind: str):
        app, name = ENDPOINT[kind].split(".")
        return getattr(getattr(self.nb, app), name)

    def probe(self) -> str:
        """Check URL, token and version (``/api/status/``); return the NetBox version."""
        if self.cache is not None:
            return str(self.cache.get((*self._who, "probe"), self._probe))
        return self._probe()

    def _probe(self) -> str:
        st = api.status(self.url, self._token)
        version = str(st.get("netbox-version", "?"))
        if not version.startswith(SUPPORTED):
            raise SyncError(f"NetBox at {self.url} runs version {version}; hwaac netbox sync supports "
                            f"{SUPPORTED}x")
        # the status endpoint answers any token; a token without rights fails here
        self.call("GET", "tags", lambda: list(self.endpoint("tags").filter(slug=OWNER_TAG, limit=1)))
        return version

    def call(self, what: str, kind: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except pynetbox.RequestError as exc:
            code = getattr(exc.req, "status_code", "?")
            if code in (401, 403):
                raise SyncError(f"NetBox at {self.url} rejected the API token (HTTP {code})") from None
            raise SyncError(f"NetBox at {self.url} refused {what} {kind} (HTTP {code}): "
                            f"{self._clean(exc.error)}") from None
        except requests.RequestException as exc:
            raise SyncError(f"NetBox at {self.url} stopped answering during {what} {kind}: "
                            f"{self._clean(type(exc).__name__ + ': ' + str(exc))}") from None

    def count(self, kind: str, **params: Any) -> int:
        """How many objects of ``kind`` match ``params`` (one GET with limit=1)."""
        ep = self.endpoint(kind)
        return int(self.call("GET", kind, lambda: ep.count(**params)))

    def read(self, kind: str, fields: str, **params: Any) -> list[dict]:
        ep = self.endpoint(kind)
        from pynetbox.core.query import Request

        def go() -> list[dict]:
            return list(Request(base=ep.url, http_session=self.nb.http_session, token=self._token,
                                filters={**params, "fields": fields}, limit=PAGE).get())
        if self.cache is not None:
            key = (*self._who, kind, fields, tuple(sorted((k, _frozen(v)) for k, v in params.items())))
            return self.cache.get(key, lambda: self.call("GET", kind, go))
        return self.call("GET", kind, go)


# --- reading and normalising ------------------------------------------------------------------------------------

def _slug(obj: dict | None) -> str | None:
    return obj.get("slug") if isinstance(obj, dict) else None


def _value(v: Any) -> Any:
    return v.get("value") if isinstance(v, dict) and "value" in v else v


def _iface(obj: dict | None) -> tuple[str, str] | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("device"), dict):
        return None
    return (obj["device"].get("name"), obj.get("name"))


def _cable_ends(rec: dict) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    def ends(terms: list) -> list[tuple[str, str]]:
        return [e for t in terms or [] if t.get("object_type") == "dcim.interface"
                and (e := _iface(t.get("object"))) is not None]
    return ends(rec.get("a_terminations")), ends(rec.get("b_terminations"))


def _cable_key(rec: dict) -> Hashable:
    a, b = _cable_ends(rec)
    if len(a) == 1 and len(b) == 1 and len(rec.get("a_terminations") or []) == 1 \
            and len(rec.get("b_terminations") or []) == 1:
        return frozenset((a[0], b[0]))
    return ("cable-id", rec["id"])


KEY: dict[str, Callable[[dict], Hashable]] = {
    "tags": lambda r: r["slug"], "custom-fields": lambda r: r["name"], "sites": lambda r: r["slug"],
    "manufacturers": lambda r: r["slug"], "device-roles": lambda r: r["slug"], "rirs": lambda r: r["slug"],
    "device-types": lambda r: r["slug"],
    "interface-templates": lambda r: (_slug(r.get("device_type")), r["name"]),
    "asn-ranges": lambda r: r["name"], "asns": lambda r: r["asn"], "devices": lambda r: r["name"],
    "prefixes": lambda r: r["prefix"], "cables": _cable_key,
    "ip-addresses": lambda r: r["address"].split("/")[0],
}

# Owned objects are read with ``tag=<fabric tag>`` and without their tags (costly to serialise); which planes claim
# them comes from id-only reads per plane tag (Sync._read_all). Objects that may be adopted or conflict are read with
# ``tag__n=<fabric tag>`` and their tags. Cables and IP addresses are read flat (no nested terminations / assigned
# object, which cost NetBox ~3 ms per cable): their ends come from one read of the site's cabled interfaces.
FIELDS = {
    "tags": "id,slug,tagged_items", "custom-fields": "id,name", "sites": "id,slug", "manufacturers": "id,slug",
    "device-roles": "id,slug", "rirs": "id,slug", "device-types": "id,slug",
    "interface-templates": "id,name,device_type",
    "asn-ranges": "id,name,start,end,rir", "asns": "id,asn,rir,description,sites",
    "devices": "id,name,device_type,role,site,serial,status,custom_fields",
    "prefixes": "id,prefix,status,scope_type,scope_id,vrf,description",
    "cables": "id,label",
    "ip-addresses": "id,address,vrf,assigned_object_type,assigned_object_id,status,description",
}


def _normalise(kind: str, r: dict, site_of_id: dict[int, str]) -> dict[str, Any]:
    if kind == "asn-ranges":
        return {"start": r.get("start"), "end": r.get("end"), "rir": Ref("rirs", _slug(r.get("rir")))}
    if kind == "asns":
        return {"description": r.get("description") or "",
                "sites": tuple(sorted((Ref("sites", s.get("slug")) for s in r.get("sites") or []),
                                      key=lambda x: str(x.key)))}
    if kind == "devices":
        return {"device_type": Ref("device-types", _slug(r.get("device_type"))),
                "role": Ref("device-roles", _slug(r.get("role"))), "site": Ref("sites", _slug(r.get("site"))),
                f"custom_fields.{ASN_FIELD}": (r.get("custom_fields") or {}).get(ASN_FIELD)}
    if kind == "prefixes":
        scope = Ref("sites", site_of_id.get(r.get("scope_id"), f"id {r.get('scope_id')}")) \
            if r.get("scope_type") == "dcim.site" else None
        return {"status": _value(r.get("status")), "scope": scope}
    if kind == "cables":
        return {"label": r.get("label") or ""}
    if kind == "ip-addresses":
        iface = _iface(r.get("assigned_object")) if r.get("assigned_object_type") == "dcim.interface" else None
        return {"address": r.get("address"), "interface": Ref("interfaces", iface) if iface else None}
    return {}


def _tags(r: dict) -> set[str]:
    return {t.get("slug") for t in r.get("tags") or []}


def _chunks(items: list, n: int) -> Iterable[list]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


def _by_length(names: list[str], budget: int = 2500) -> Iterable[list[str]]:
    """``names`` in chunks whose ``&name=...`` parameters stay within ``budget`` bytes of the request line."""
    part: list[str] = []
    used = 0
    for n in names:
        cost = len(quote(n, safe="")) + 6
        if part and used + cost > budget:
            yield part
            part, used = [], 0
        part.append(n)
        used += cost
    if part:
        yield part


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


# catalogue kind -> NetBox's count fields that must all be 0 before hwaac deletes an object it created
IN_USE = {"device-types": ("device_count",), "manufacturers": ("devicetype_count", "inventoryitem_count",
                                                               "platform_count"),
          "device-roles": ("device_count", "virtualmachine_count"), "rirs": ("aggregate_count",),
          "sites": ("device_count", "rack_count", "prefix_count", "vlan_count", "circuit_count",
                    "virtualmachine_count")}
# extra "is it used" queries: (endpoint kind, filter field) that must find nothing
IN_USE_BY = {"rirs": (("asn-ranges", "rir_id"), ("asns", "rir_id")), "sites": (("locations", "site_id"),)}


def cleanup_catalogue(client: Client, desired: Desired) -> dict[str, Change]:
    """After planes were removed: delete the catalogue objects the fabric created (its tag) that nothing uses any
    more, once no owned object of the fabric is left; delete plane tags nothing carries; and, when no object
    carries ``hwaac`` any more, the ``hwaac`` tag and the ``hwaac_asn`` custom field. Never deletes an object
    another fabric, a person or NetBox still uses (NetBox's counts, e.g. ``device_count``, are checked first).
    Returns the deletes per kind."""
    c, ftag = client, desired.tags[1]
    out: dict[str, Change] = {}

    def delete(kind: str, recs: list[dict], key: str) -> None:
        if recs:
            ep = c.endpoint(kind)
            ids = [r["id"] for r in recs]
            c.call("DELETE", kind, lambda: ep.delete(ids))
            out.setdefault(kind, Change()).deletes.extend((r[key], r["id"]) for r in recs)

    tag_recs = c.read("tags", "id,slug,tagged_items", slug__isw="hwaac")
    if not any(r["slug"] == ftag for r in tag_recs):
        return out
    left = any(c.count(kind, tag=ftag) for kind in OWNED)
    if not left:
        for kind in ("device-types", "manufacturers", "device-roles", "rirs", "sites"):
            recs = c.read(kind, "id,slug," + ",".join(IN_USE[kind]), tag=ftag)
            unused = [r for r in recs if not any(r.get(f) for f in IN_USE[kind])
                      and not any(c.count(other, **{field: r["id"]}) for other, field in IN_USE_BY.get(kind, ()))]
            delete(kind, unused, "slug")
    tag_recs = c.read("tags", "id,slug,tagged_items", slug__isw="hwaac")
    fabric_tags = [r for r in tag_recs if (desired.is_plane_tag(r["slug"]) or (r["slug"] == ftag and not left))
                   and not r.get("tagged_items")]
    delete("tags", fabric_tags, "slug")
    for kind, ch in cleanup_owner(c).items():
        out.setdefault(kind, Change()).deletes.extend(ch.deletes)
    return out


def cleanup_owner(client: Client) -> dict[str, Change]:
    """When no object carries the ``hwaac`` tag any more, delete it and the ``hwaac_asn`` custom field: the last
    of what hwaac created. Returns the deletes per kind."""
    out: dict[str, Change] = {}
    owner = client.read("tags", "id,slug,tagged_items", slug=[OWNER_TAG, ADOPTED_TAG])
    if any(r["slug"] == OWNER_TAG for r in owner) and not any(r.get("tagged_items") for r in owner):
        for kind, recs, key in (("tags", owner, "slug"),
                                ("custom-fields", client.read("custom-fields", "id,name", name=ASN_FIELD), "name")):
            if recs:
                ep = client.endpoint(kind)
                ids = [r["id"] for r in recs]
                client.call("DELETE", kind, lambda ep=ep, ids=ids: ep.delete(ids))
                out.setdefault(kind, Change()).deletes.extend((r[key], r["id"]) for r in recs)
    return out


