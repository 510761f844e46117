"""After planes were removed: the catalogue objects a fabric created and nothing uses any more, and hwaac's own tag
and custom field once nothing carries them."""

from __future__ import annotations

from functools import partial

from hwaac.netbox.sync.client import Client
from hwaac.netbox.sync.desired import ADOPTED_TAG, ASN_FIELD, OWNER_TAG, Desired
from hwaac.netbox.sync.records import OWNED
from hwaac.netbox.sync.report import Change

# catalogue kind -> NetBox's count fields that must all be 0 before hwaac deletes an object it created
IN_USE = {
    "device-types": ("device_count",),
    "manufacturers": ("devicetype_count", "inventoryitem_count", "platform_count"),
    "device-roles": ("device_count", "virtualmachine_count"),
    "rirs": ("aggregate_count",),
    "sites": ("device_count", "rack_count", "prefix_count", "vlan_count", "circuit_count", "virtualmachine_count"),
}
# extra "is it used" queries: (endpoint kind, filter field) that must find nothing
IN_USE_BY = {"rirs": (("asn-ranges", "rir_id"), ("asns", "rir_id")), "sites": (("locations", "site_id"),)}


def _delete(client: Client, out: dict[str, Change], kind: str, recs: list[dict], key: str) -> None:
    """Delete the records ``recs`` of ``kind`` in one request; add them to ``out`` by their field ``key``."""
    if recs:
        ep = client.endpoint(kind)
        ids = [r["id"] for r in recs]
        client.call("DELETE", kind, partial(ep.delete, ids))
        out.setdefault(kind, Change()).deletes.extend((r[key], r["id"]) for r in recs)


def cleanup_catalogue(client: Client, desired: Desired) -> dict[str, Change]:
    """After planes were removed: delete the catalogue objects the fabric created (its tag) that nothing uses any
    more, once no owned object of the fabric is left; delete plane tags nothing carries; and, when no object
    carries ``hwaac`` any more, the ``hwaac`` tag and the ``hwaac_asn`` custom field. Never deletes an object
    another fabric, a person or NetBox still uses (NetBox's counts, e.g. ``device_count``, are checked first).
    Returns the deletes per kind."""
    c, ftag = client, desired.tags[1]
    out: dict[str, Change] = {}
    tag_recs = c.read("tags", "id,slug,tagged_items", slug__isw="hwaac")
    if not any(r["slug"] == ftag for r in tag_recs):
        return out
    left = any(c.count(kind, tag=ftag) for kind in OWNED)
    if not left:
        for kind in ("device-types", "manufacturers", "device-roles", "rirs", "sites"):
            recs = c.read(kind, "id,slug," + ",".join(IN_USE[kind]), tag=ftag)
            unused = [
                r
                for r in recs
                if not any(r.get(f) for f in IN_USE[kind])
                and not any(c.count(other, **{field: r["id"]}) for other, field in IN_USE_BY.get(kind, ()))
            ]
            _delete(c, out, kind, unused, "slug")
    tag_recs = c.read("tags", "id,slug,tagged_items", slug__isw="hwaac")
    fabric_tags = [
        r
        for r in tag_recs
        if (desired.is_plane_tag(r["slug"]) or (r["slug"] == ftag and not left)) and not r.get("tagged_items")
    ]
    _delete(c, out, "tags", fabric_tags, "slug")
    for kind, ch in cleanup_owner(c).items():
        out.setdefault(kind, Change()).deletes.extend(ch.deletes)
    return out


def cleanup_owner(client: Client) -> dict[str, Change]:
    """When no object carries the ``hwaac`` tag any more, delete it and the ``hwaac_asn`` custom field: the last
    of what hwaac created. Returns the deletes per kind."""
    out: dict[str, Change] = {}
    owner = client.read("tags", "id,slug,tagged_items", slug=[OWNER_TAG, ADOPTED_TAG])
    if any(r["slug"] == OWNER_TAG for r in owner) and not any(r.get("tagged_items") for r in owner):
        for kind, recs, key in (
            ("tags", owner, "slug"),
            ("custom-fields", client.read("custom-fields", "id,name", name=ASN_FIELD), "name"),
        ):
            _delete(client, out, kind, recs, key)
    return out
