"""How the sync reads NetBox records: natural keys, the fields it asks for, values normalised for the diff, and
labels for reports.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any
from urllib.parse import quote

from hwaac.netbox.sync.desired import ASN_FIELD, OWNED_KINDS, Ref

CATALOGUE = (
    "tags",
    "custom-fields",
    "sites",
    "manufacturers",
    "device-roles",
    "rirs",
    "device-types",
    "interface-templates",
)
OWNED = OWNED_KINDS
ID_CHUNK = 150  # ids per filtered read: keeps the request line well under gunicorn's 4094 bytes

SINGULAR = {
    "tags": "tag",
    "custom-fields": "custom field",
    "sites": "site",
    "manufacturers": "manufacturer",
    "device-roles": "device role",
    "rirs": "RIR",
    "device-types": "device type",
    "interface-templates": "interface template",
    "asn-ranges": "ASN range",
    "asns": "ASN",
    "devices": "device",
    "prefixes": "prefix",
    "cables": "cable",
    "ip-addresses": "IP address",
}


def label_of(kind: str, key: Hashable) -> str:
    """An object named for messages: ``device leaf-p0-su01-r0``, ``cable a:p1 <-> b:p2``."""
    if kind == "cables" and isinstance(key, frozenset):
        a, b = sorted(key)
        return f"cable {a[0]}:{a[1]} <-> {b[0]}:{b[1]}"
    if isinstance(key, tuple):
        key = ":".join(str(k) for k in key)
    return f"{SINGULAR.get(kind, kind)} {key}"


def show(v: Any) -> str:
    """A planned or read value for messages: a reference by its key, ``(empty)`` for none."""
    if isinstance(v, Ref):
        k = v.key
        return ":".join(map(str, k)) if isinstance(k, tuple) else str(k)
    if isinstance(v, tuple):
        return "[" + ", ".join(show(x) for x in v) + "]"
    return "(empty)" if v in (None, "") else str(v)


def slug_of(obj: dict | None) -> str | None:
    """The slug of a nested NetBox object (None when there is none)."""
    return obj.get("slug") if isinstance(obj, dict) else None


def choice_value(v: Any) -> Any:
    """The ``value`` of a NetBox choice field (``{"value": ..., "label": ...}``), anything else as it is."""
    return v.get("value") if isinstance(v, dict) and "value" in v else v


def iface_of(obj: dict | None) -> tuple[str, str] | None:
    """(device name, interface name) of a nested interface, None when it is not one."""
    if not isinstance(obj, dict) or not isinstance(obj.get("device"), dict) or not isinstance(obj.get("name"), str):
        return None
    return (obj["device"].get("name"), obj["name"])


def ref_iface(v: Any) -> tuple[str, str] | None:
    """The (device name, interface name) a planned value refers to when it is an interface reference, else None."""
    if isinstance(v, Ref) and v.kind == "interfaces" and isinstance(v.key, tuple):
        return v.key
    return None


def cable_ends(rec: dict) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The interfaces, as (device, interface), at the A and at the B end of a cable record."""

    def ends(terms: list[dict] | None) -> list[tuple[str, str]]:
        return [
            e
            for t in terms or []
            if t.get("object_type") == "dcim.interface" and (e := iface_of(t.get("object"))) is not None
        ]

    return ends(rec.get("a_terminations")), ends(rec.get("b_terminations"))


def _cable_key(rec: dict) -> Hashable:
    a, b = cable_ends(rec)
    if (
        len(a) == 1
        and len(b) == 1
        and len(rec.get("a_terminations") or []) == 1
        and len(rec.get("b_terminations") or []) == 1
    ):
        return frozenset((a[0], b[0]))
    return ("cable-id", rec["id"])


KEY: dict[str, Callable[[dict], Hashable]] = {
    "tags": lambda r: r["slug"],
    "custom-fields": lambda r: r["name"],
    "sites": lambda r: r["slug"],
    "manufacturers": lambda r: r["slug"],
    "device-roles": lambda r: r["slug"],
    "rirs": lambda r: r["slug"],
    "device-types": lambda r: r["slug"],
    "interface-templates": lambda r: (slug_of(r.get("device_type")), r["name"]),
    "asn-ranges": lambda r: r["name"],
    "asns": lambda r: r["asn"],
    "devices": lambda r: r["name"],
    "prefixes": lambda r: r["prefix"],
    "cables": _cable_key,
    "ip-addresses": lambda r: r["address"].split("/")[0],
}

# Owned objects are read with ``tag=<fabric tag>`` and without their tags (costly to serialise); which planes claim
# them comes from id-only reads per plane tag (Sync._read_all). Objects that may be adopted or conflict are read with
# ``tag__n=<fabric tag>`` and their tags. Cables and IP addresses are read flat (no nested terminations / assigned
# object, which cost NetBox ~3 ms per cable): their ends come from one read of the site's cabled interfaces.
FIELDS = {
    "tags": "id,slug,tagged_items",
    "custom-fields": "id,name",
    "sites": "id,slug",
    "manufacturers": "id,slug",
    "device-roles": "id,slug",
    "rirs": "id,slug",
    "device-types": "id,slug",
    "interface-templates": "id,name,device_type",
    "asn-ranges": "id,name,start,end,rir",
    "asns": "id,asn,rir,description,sites",
    "devices": "id,name,device_type,role,site,serial,status,custom_fields",
    "prefixes": "id,prefix,status,scope_type,scope_id,vrf,description",
    "cables": "id,label",
    "ip-addresses": "id,address,vrf,assigned_object_type,assigned_object_id,status,description",
}


def normalise(kind: str, r: dict, site_of_id: dict[int, str]) -> dict[str, Any]:
    """The fields of a NetBox record of ``kind`` as the plan writes them (references by natural key)."""
    if kind == "asn-ranges":
        return {"start": r.get("start"), "end": r.get("end"), "rir": Ref("rirs", slug_of(r.get("rir")))}
    if kind == "asns":
        return {
            "description": r.get("description") or "",
            "sites": tuple(
                sorted((Ref("sites", s.get("slug")) for s in r.get("sites") or []), key=lambda x: str(x.key))
            ),
        }
    if kind == "devices":
        return {
            "device_type": Ref("device-types", slug_of(r.get("device_type"))),
            "role": Ref("device-roles", slug_of(r.get("role"))),
            "site": Ref("sites", slug_of(r.get("site"))),
            f"custom_fields.{ASN_FIELD}": (r.get("custom_fields") or {}).get(ASN_FIELD),
        }
    if kind == "prefixes":
        scope = (
            Ref("sites", site_of_id.get(r["scope_id"], f"id {r['scope_id']}"))
            if r.get("scope_type") == "dcim.site"
            else None
        )
        return {"status": choice_value(r.get("status")), "scope": scope}
    if kind == "cables":
        return {"label": r.get("label") or ""}
    if kind == "ip-addresses":
        iface = iface_of(r.get("assigned_object")) if r.get("assigned_object_type") == "dcim.interface" else None
        return {"address": r.get("address"), "interface": Ref("interfaces", iface) if iface else None}
    return {}


def tags_of(r: dict) -> set[str]:
    """The tag slugs of a NetBox record."""
    return {t.get("slug") for t in r.get("tags") or []}


def chunks(items: list, n: int) -> Iterable[list]:
    """``items`` in lists of at most ``n``."""
    for i in range(0, len(items), n):
        yield items[i : i + n]


def by_length(names: list[str], budget: int = 2500) -> Iterable[list[str]]:
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
