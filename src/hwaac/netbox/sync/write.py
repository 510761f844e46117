"""The sync's writes: list POST / PATCH / DELETE requests in chunks (pynetbox ``endpoint.create(list)`` /
``.update(list)`` / ``.delete(list)``), references resolved to NetBox ids.

Addresses moving off a device about to be deleted are unassigned first, then deletes in reverse dependency order,
then creates and updates in dependency order, then a journal entry on each adopted object that was let go.
:class:`hwaac.netbox.sync.engine.Sync` writes with it once its diff holds no conflict.
"""

from __future__ import annotations

from collections.abc import Hashable
from functools import partial
from typing import Any

from hwaac.netbox.sync import ownership
from hwaac.netbox.sync.client import Client, SyncError
from hwaac.netbox.sync.desired import Desired, Ref
from hwaac.netbox.sync.records import CATALOGUE, OWNED, SINGULAR, chunks, ref_iface, show
from hwaac.netbox.sync.report import Change

CHUNK = {"devices": 100}  # NetBox instantiates ~130 interfaces per device: keep those requests short
DEFAULT_CHUNK = 500


class SyncWrites:
    """The writing half of a sync: carries out ``changes`` (ids of created objects are added to ``ids``)."""

    c: Client
    d: Desired
    site: str
    ids: dict[str, dict[Hashable, int]]
    changes: dict[str, Change]

    def _resolve(self, kind: str, fields: dict[str, Any], ifaces: dict[tuple[str, str], int]) -> dict[str, Any]:
        out: dict[str, Any] = {}

        def rid(v: Any) -> Any:
            if isinstance(v, Ref):
                if v.kind == "interfaces":
                    if v.key not in ifaces:
                        raise SyncError(
                            f"NetBox has no interface {show(v)} for the planned {kind}; "
                            "is the device of another device type?"
                        )
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
            planned = [v for _k, fields in ch.creates for v in fields.values()]
            planned += [new for _k, _i, diff in ch.updates for _o, new in diff.values()]
            names.update(end[1] for v in planned if (end := ref_iface(v)) is not None)
        site_id = self.ids["sites"].get(self.site)
        out: dict[tuple[str, str], int] = {}
        for part in chunks(sorted(names), 100):
            for r in self.c.read("interfaces", "id,name,device", site_id=site_id, name=part):
                out[(r["device"]["name"], r["name"])] = r["id"]
        return out

    def _leaving_deleted_devices(self) -> list[int]:
        """The addresses the plan moves off an interface of a device this sync deletes (re-planned host links: a
        node removed, its address now another node's). NetBox deletes an interface's addresses with the interface
        (``Interface.ip_addresses`` is a GenericRelation), so they are unassigned before the deletes and keep their
        id (and whatever a person entered on them); their update then assigns them where the plan wants them."""
        gone = {key for key, _id in self.changes["devices"].deletes}
        return [
            rid
            for _key, rid, diff in self.changes["ip-addresses"].updates
            if (old := ref_iface(diff.get("interface", (None, None))[0])) is not None and old[0] in gone
        ]

    def _write(self) -> None:
        c = self.c
        tags = list(self.d.tags)
        ep = c.endpoint("ip-addresses")
        for part in chunks(self._leaving_deleted_devices(), DEFAULT_CHUNK):
            body = [{"id": i, "assigned_object_type": None, "assigned_object_id": None} for i in part]
            c.call("PATCH", "ip-addresses", partial(ep.update, body))
        for kind in reversed(OWNED):
            ids = [i for _k, i in self.changes[kind].deletes]
            ep = c.endpoint(kind)
            for part in chunks(ids, DEFAULT_CHUNK):
                c.call("DELETE", kind, partial(ep.delete, part))
        ifaces: dict[tuple[str, str], int] = {}
        for kind in CATALOGUE + OWNED:
            ch = self.changes[kind]
            if kind in ("cables", "ip-addresses") and not ifaces and (ch.creates or ch.updates):
                ifaces = self._ifaces()
            ep = c.endpoint(kind)
            n = CHUNK.get(kind, DEFAULT_CHUNK)
            with_tags = kind not in ("interface-templates", "custom-fields")
            for part in chunks(ch.creates, n):
                body = [
                    {
                        **({"tags": [{"slug": t} for t in tags]} if with_tags and kind != "tags" else {}),
                        **self._resolve(kind, f, ifaces),
                    }
                    for _k, f in part
                ]
                created = c.call("POST", kind, partial(ep.create, body))
                for (key, _f), rec in zip(part, created if isinstance(created, list) else [created], strict=True):
                    self.ids.setdefault(kind, {})[key] = rec.id
            for part in chunks(ch.updates, n):
                body = [
                    {"id": i, **self._resolve(kind, {f: new for f, (_o, new) in diff.items()}, ifaces)}
                    for _k, i, diff in part
                ]
                c.call("PATCH", kind, partial(ep.update, body))
        # why each adopted object was let go, on the object itself
        reason = (
            "no longer in the plan"
            if self.d.scope is None
            else f"no longer in the plan of plane(s) {', '.join(map(str, sorted(self.d.scope)))}"
        )
        notes = [
            ownership.journal(kind, rid, self.d.fabric, reason)
            for kind in OWNED
            for _k, rid in self.changes[kind].releases
        ]
        ep = c.endpoint("journal-entries")
        for part in chunks(notes, DEFAULT_CHUNK):
            c.call("POST", "journal-entries", partial(ep.create, part))
