"""Sync engine: read what NetBox holds, diff by natural key, check conflicts, then write in bulk.

Reads use large pages (limit=1000) and ``fields=`` so NetBox serialises only what the diff needs. Everything
(diff and conflicts, for every object type) is computed before the first write. Writes are list POST / PATCH /
DELETE requests (pynetbox ``endpoint.create(list)`` / ``.update(list)`` / ``.delete(list)``) in chunks, deletes
first in reverse dependency order, then creates and updates in dependency order. NetBox applies each bulk request
atomically, and natural keys make a re-run after a failure converge without duplicates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pynetbox
import requests

from hwaac.netbox import api
from hwaac.netbox.errors import NetBoxError
from hwaac.netbox.sync.desired import ASN_FIELD, OWNER_TAG, Desired, Ref, Want

SUPPORTED = "4.7."
PAGE = 1000
CHUNK = {"devices": 100}  # NetBox instantiates ~130 interfaces per device: keep those requests short
DEFAULT_CHUNK = 500
CATALOGUE = ("tags", "custom-fields", "sites", "manufacturers", "device-roles", "rirs", "device-types",
             "interface-templates")
OWNED = ("asn-ranges", "asns", "devices", "prefixes", "cables", "ip-addresses")
ENDPOINT = {"tags": "extras.tags", "custom-fields": "extras.custom_fields", "sites": "dcim.sites",
            "manufacturers": "dcim.manufacturers", "device-roles": "dcim.device_roles", "rirs": "ipam.rirs",
            "device-types": "dcim.device_types", "interface-templates": "dcim.interface_templates",
            "asn-ranges": "ipam.asn_ranges", "asns": "ipam.asns", "devices": "dcim.devices",
            "prefixes": "ipam.prefixes", "cables": "dcim.cables", "ip-addresses": "ipam.ip_addresses",
            "interfaces": "dcim.interfaces", "cable-terminations": "dcim.cable_terminations"}
ID_CHUNK = 150  # ids per filtered read: keeps the request line well under gunicorn's 4094 bytes


SINGULAR = {"tags": "tag", "custom-fields": "custom field", "sites": "site", "manufacturers": "manufacturer",
            "device-roles": "device role", "rirs": "RIR", "device-types": "device type",
            "interface-templates": "interface template", "asn-ranges": "ASN range", "asns": "ASN",
            "devices": "device", "prefixes": "prefix", "cables": "cable", "ip-addresses": "IP address"}


class SyncError(NetBoxError):
    """The sync could not run or stopped (one line; never carries the token)."""


class SyncConflict(SyncError):
    """Planned objects collide with objects hwaac does not own; nothing was written."""

    def __init__(self, conflicts: list[str]) -> None:
        self.conflicts = conflicts
        head = f"{len(conflicts)} conflict(s) with objects hwaac does not own; nothing written: {conflicts[0]}"
        super().__init__(head + "".join(f"\n  {c}" for c in conflicts[1:]))


@dataclass
class Change:
    creates: list[tuple[Hashable, dict[str, Any]]] = field(default_factory=list)
    updates: list[tuple[Hashable, int, dict[str, tuple[Any, Any]]]] = field(default_factory=list)
    deletes: list[tuple[Hashable, int]] = field(default_factory=list)

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
        if rep.dry_run:
            for key, _ in ch.creates:
                lines.append(f"  + {_label(kind, key)}")
            for key, _id, diff in ch.updates:
                lines.append(f"  ~ {_label(kind, key)}: " + "; ".join(
                    f"{f}: {_show(old)} -> {_show(new)}" for f, (old, new) in diff.items()))
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


class Client:
    """pynetbox API with a request counter; errors become one-line SyncErrors without the token."""

    def __init__(self, url: str, token: str, timeout: float = 600.0) -> None:
        self.url, self._token = url.rstrip("/"), token
        self.requests: dict[str, int] = {}
        self.nb = pynetbox.api(self.url, token=token)
        session = requests.Session()
        session.hooks["response"].append(self._count)
        self.nb.http_session = session
        self.timeout = timeout

    def _count(self, resp: requests.Response, *args: Any, **kwargs: Any) -> None:
        m = resp.request.method or "?"
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

    def read(self, kind: str, fields: str, **params: Any) -> list[dict]:
        ep = self.endpoint(kind)
        from pynetbox.core.query import Request

        def go() -> list[dict]:
            return list(Request(base=ep.url, http_session=self.nb.http_session, token=self._token,
                                filters={**params, "fields": fields}, limit=PAGE).get())
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

# Owned objects are read with ``tag=<fabric tag>`` and without their tags (the filter says whose they are); the
# objects that may be adopted or conflict are read with ``tag__n=<fabric tag>`` and ``,tags``. Cables and IP
# addresses are read flat (no nested terminations / assigned object, which cost NetBox ~3 ms per cable): their
# ends come from cable-terminations and one read of the interfaces involved (see Sync._ends).
FIELDS = {
    "tags": "id,slug", "custom-fields": "id,name", "sites": "id,slug", "manufacturers": "id,slug",
    "device-roles": "id,slug", "rirs": "id,slug", "device-types": "id,slug",
    "interface-templates": "id,name,device_type",
    "asn-ranges": "id,name,start,end,rir", "asns": "id,asn,rir,description,sites",
    "devices": "id,name,device_type,role,site,serial,custom_fields",
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


# --- the sync ------------------------------------------------------------------------------------------------

class Sync:
    """One sync of ``desired`` into the NetBox of ``client``."""

    def __init__(self, client: Client, desired: Desired, site: str, pools: list[str],
                 fields: dict[str, str] | None = None) -> None:
        self.c, self.d, self.site, self.pools = client, desired, site, pools
        self.fields = fields or FIELDS  # read-back asks for a few more fields of the same objects
        self.ftag = desired.tags[1]
        self.ids: dict[str, dict[Hashable, int]] = {}
        self.existing: dict[str, dict[Hashable, dict]] = {}
        self.changes: dict[str, Change] = {}
        self.conflicts: list[str] = []
        self.dupes: dict[str, list[dict]] = {}

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
            elif keys:
                recs = c.read(kind, self.fields[kind], slug=keys)
            else:
                recs = []
            self._index(kind, recs)
        site_id = self.ids.get("sites", {}).get(self.site)
        # a fabric tag that does not exist yet means nothing is owned yet (and NetBox refuses the filter)
        tagged = self.ftag in self.ids["tags"]
        owned_tags = [{"slug": self.ftag}]
        raw: dict[str, list[dict]] = {}
        for kind in OWNED:
            recs = [{**r, "tags": owned_tags} for r in c.read(kind, self.fields[kind], tag=self.ftag)] \
                if tagged else []
            others = self.fields[kind] + ",tags"
            nt: dict[str, Any] = {"tag__n": self.ftag} if tagged else {}
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
            if kind in ("prefixes", "ip-addresses"):  # the global VRF only
                recs = [r for r in recs if not r.get("vrf") or self.ftag in _tags(r)]
            raw[kind] = recs
        self._ends(raw["cables"], raw["ip-addresses"], site_id)
        for kind in OWNED:
            self._index(kind, raw[kind])

    def _ends(self, cables: list[dict], ips: list[dict], site_id: int | None) -> None:
        """Fill in each cable's ``a_/b_terminations`` and each address's ``assigned_object`` (interface name and
        device name), as NetBox's nested serialisation would, from cable-terminations and one interface read."""
        c = self.c
        terms: dict[int, list[dict]] = {}
        for ch in _chunks(sorted({r["id"] for r in cables}), ID_CHUNK):
            for t in c.read("cable-terminations", "cable,cable_end,termination_type,termination_id", cable_id=ch):
                terms.setdefault(t["cable"], []).append(t)
        need = {t["termination_id"] for ts in terms.values() for t in ts if t["termination_type"] == "dcim.interface"}
        need |= {r["assigned_object_id"] for r in ips
                 if r.get("assigned_object_type") == "dcim.interface" and r.get("assigned_object_id") is not None}
        names: dict[int, dict] = {}
        if need and site_id is not None and len(need) > ID_CHUNK:  # the cabled interfaces of the site in one go
            for r in c.read("interfaces", "id,name,device", site_id=site_id, cabled=True):
                names[r["id"]] = r
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
        busy: dict[tuple[str, str], dict] = {}  # interface -> cable holding it
        for r in self.existing["cables"].values():
            a, b = _cable_ends(r)
            for e in a + b:
                busy[e] = r
        for kind in OWNED:
            ch = Change()
            have = self.existing[kind]
            wants = self.d.kinds.get(kind, {})
            for key, want in wants.items():
                r = have.get(key)
                if r is None:
                    if kind == "cables":
                        self._cable_conflicts(key, busy)
                    ch.creates.append((key, {**want.create_only, **want.fields}))
                    continue
                tags = _tags(r)
                norm = _normalise(kind, r, site_of_id)
                if self.ftag in tags:
                    diff = {f: (norm.get(f), v) for f, v in want.fields.items() if norm.get(f) != v}
                    if diff:
                        ch.updates.append((key, r["id"], diff))
                    continue
                msg = self._conflict(kind, key, want, r, norm, tags)
                if msg:
                    self.conflicts.append(msg)
                    continue
                # adopted: tags added and the few fields hwaac manages set; what the person entered (serial, asset
                # tag, description, comments, other custom fields) is not touched
                diff = {f: (norm.get(f), v) for f, v in want.fields.items() if norm.get(f) != v}
                diff["tags"] = (tuple(sorted(t for t in tags if t)),
                                tuple(sorted({t for t in tags if t} | set(self.d.tags))))
                ch.updates.append((key, r["id"], diff))
            for key, r in have.items():
                if key not in wants and self.ftag in _tags(r):
                    ch.deletes.append((key, r["id"]))
            for r in self.dupes.get(kind, []):
                ch.deletes.append((KEY[kind](r), r["id"]))
            self.changes[kind] = ch

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

    def _write(self) -> None:
        c = self.c
        tags = list(self.d.tags)
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
                body = [{**self._resolve(kind, f, ifaces), **({"tags": [{"slug": t} for t in tags]}
                                                              if with_tags and kind != "tags" else {})}
                        for _k, f in part]
                created = c.call("POST", kind, lambda body=body, ep=ep: ep.create(body))
                for (key, _f), rec in zip(part, created if isinstance(created, list) else [created], strict=True):
                    self.ids.setdefault(kind, {})[key] = rec.id
            for part in _chunks(ch.updates, n):
                body = [{"id": i, **self._resolve(kind, {f: new for f, (_o, new) in diff.items()}, ifaces)}
                        for _k, i, diff in part]
                c.call("PATCH", kind, lambda body=body, ep=ep: ep.update(body))

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
    p = plan.pools
    return [x.cidr for x in (p.loopback_leaf, p.loopback_spine, p.loopback_super_spine, p.leaf_spine,
                             p.spine_super_spine, p.host_links) if x is not None]


def sync_plan(plan: Any, url: str, token: str, *, dry_run: bool = False,
              log: Callable[[str], None] | None = None) -> Report:
    """Sync ``plan`` into the NetBox at ``url``. Raises SyncError / SyncConflict; returns the report."""
    from hwaac.netbox.sync.desired import desired_state

    t0 = time.monotonic()
    client = Client(url, token)
    client.probe()
    desired = desired_state(plan)
    s = Sync(client, desired, plan.intent.fabric.site, plan_pools(plan))
    s.run(dry_run)
    return Report(s.changes, dict(client.requests), time.monotonic() - t0, dry_run)
