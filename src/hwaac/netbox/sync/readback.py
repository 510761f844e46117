"""Read-back: the fabric as NetBox holds it (:func:`export_fabric`) and where NetBox differs from the plan
(:func:`drift`).

Both reuse the sync engine's reads and diff (:meth:`.engine.Sync.read_and_diff`) and never write: the engine's
client only GETs here, and :func:`read_back` checks that no other method was sent. Drift is what a sync would
change, per object: ``missing``, ``extra``, ``changed``, ``unowned`` or ``conflict`` (docs/netbox-sync.md
"Read-back and drift" says what each means and which fields never drift).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from hwaac.netbox.sync.client import Client
from hwaac.netbox.sync.desired import ASN_FIELD
from hwaac.netbox.sync.engine import Sync, read_plan_state
from hwaac.netbox.sync.records import (
    CATALOGUE,
    FIELDS,
    OWNED,
    cable_ends,
    choice_value,
    iface_of,
    label_of,
    show,
    slug_of,
    tags_of,
)

# the same objects as the sync reads, with the few more fields an export shows
EXPORT_FIELDS = {**FIELDS, "cables": FIELDS["cables"] + ",status"}
EXPORT_KINDS = ("devices", "interfaces", "cables", "prefixes", "ip-addresses", "asn-ranges", "asns")


def read_back(plan: Any, url: str, token: str) -> tuple[Sync, Client, float]:
    """Read the fabric from NetBox and diff it against ``plan`` (no write). Raises SyncError (one line)."""
    t0 = time.monotonic()
    s = read_plan_state(plan, url, token, fields=EXPORT_FIELDS)
    return s, s.c, time.monotonic() - t0


# --- export -------------------------------------------------------------------------------------------------


def _end(e: tuple[str, str]) -> str:
    return f"{e[0]}:{e[1]}"


def _owned(s: Sync, kind: str) -> list[dict]:
    return [r for r in s.existing.get(kind, {}).values() if s.ftag in tags_of(r)] + [r for r in s.dupes.get(kind, [])]


def export_fabric(s: Sync) -> dict[str, Any]:
    """The fabric's owned objects as NetBox holds them: natural keys and values only (no ids, URLs or token),
    every list sorted, so two NetBox databases holding the same fabric export the same document."""
    site_of_id = s.site_slugs()
    devices = sorted(
        (
            {
                "name": r["name"],
                "role": slug_of(r.get("role")),
                "device_type": slug_of(r.get("device_type")),
                "site": slug_of(r.get("site")),
                "status": choice_value(r.get("status")),
                "serial": r.get("serial") or "",
                "asn": (r.get("custom_fields") or {}).get(ASN_FIELD),
            }
            for r in _owned(s, "devices")
        ),
        key=lambda d: d["name"],
    )
    ifaces: dict[tuple[str, str], dict[str, Any]] = {}

    def iface(e: tuple[str, str]) -> dict[str, Any]:
        return ifaces.setdefault(e, {"device": e[0], "name": e[1], "cable": None, "addresses": []})

    cables = []
    for r in _owned(s, "cables"):
        a, b = cable_ends(r)
        ends = sorted([_end(e) for e in a] + [_end(e) for e in b])
        label = r.get("label") or ""
        cables.append({"ends": ends, "label": label, "status": choice_value(r.get("status"))})
        for e in a + b:
            iface(e)["cable"] = label
    ips = []
    for r in _owned(s, "ip-addresses"):
        on = iface_of(r.get("assigned_object")) if r.get("assigned_object_type") == "dcim.interface" else None
        ips.append(
            {
                "address": r["address"],
                "interface": _end(on) if on else None,
                "status": choice_value(r.get("status")),
                "description": r.get("description") or "",
            }
        )
        if on:
            iface(on)["addresses"].append(r["address"])
    for i in ifaces.values():
        i["addresses"].sort()
    prefixes = [
        {
            "prefix": r["prefix"],
            "status": choice_value(r.get("status")),
            "site": site_of_id.get(r["scope_id"]) if r.get("scope_type") == "dcim.site" else None,
            "description": r.get("description") or "",
        }
        for r in _owned(s, "prefixes")
    ]
    ranges = [
        {"name": r["name"], "start": r.get("start"), "end": r.get("end"), "rir": slug_of(r.get("rir"))}
        for r in _owned(s, "asn-ranges")
    ]
    asns = [
        {
            "asn": r["asn"],
            "description": r.get("description") or "",
            "sites": sorted(slug_of(x) or "" for x in r.get("sites") or []),
        }
        for r in _owned(s, "asns")
    ]
    return {
        "fabric": s.d.fabric,
        "tag": s.ftag,
        "site": s.site,
        "devices": devices,
        "interfaces": sorted(ifaces.values(), key=lambda i: (i["device"], i["name"])),
        "cables": sorted(cables, key=lambda c: c["ends"]),
        "prefixes": sorted(prefixes, key=lambda p: p["prefix"]),
        "ip-addresses": sorted(ips, key=lambda i: i["address"]),
        "asn-ranges": sorted(ranges, key=lambda r: r["name"]),
        "asns": sorted(asns, key=lambda a: a["asn"]),
    }


# --- drift --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DriftItem:
    kind: str  # NetBox object type, e.g. "cables"
    what: str  # missing | extra | changed | unowned | conflict
    label: str  # e.g. "cable a:Ethernet0 <-> b:Ethernet1"
    fields: dict[str, tuple[str, str]] = field(default_factory=dict)  # field -> (NetBox value, planned value)

    def line(self) -> str:
        text = f"{self.what} {self.label}"
        if self.fields:
            text += ": " + "; ".join(f"{f}: {old} -> {new}" for f, (old, new) in self.fields.items())
        return text


@dataclass
class DriftReport:
    fabric: str
    items: list[DriftItem]
    requests: dict[str, int]
    seconds: float

    def by_kind(self) -> dict[str, list[DriftItem]]:
        out: dict[str, list[DriftItem]] = {}
        for i in self.items:
            out.setdefault(i.kind, []).append(i)
        return out

    def lines(self) -> list[str]:
        out = []
        for kind, items in self.by_kind().items():
            out.append(f"{kind}:")
            out += [f"  {i.line()}" for i in items]
        reqs = f"{sum(self.requests.values())} requests, read only; {self.seconds:.1f} s"
        if not self.items:
            out.append(f"fabric {self.fabric}: no drift; NetBox matches the plan ({reqs})")
        else:
            n: dict[str, int] = {}
            for i in self.items:
                n[i.what] = n.get(i.what, 0) + 1
            out.append(
                f"fabric {self.fabric}: {len(self.items)} objects drift from the plan ("
                + ", ".join(f"{k} {v}" for k, v in sorted(n.items()))
                + f"; {reqs})"
            )
        return out


_ORDER = {"conflict": 0, "missing": 1, "extra": 2, "changed": 3, "unowned": 4}


def drift(s: Sync, client: Client, seconds: float) -> DriftReport:
    """Every object where NetBox differs from the plan, from the engine's diff (what a sync would write)."""
    items: list[DriftItem] = []

    for kind in CATALOGUE + OWNED:
        ch = s.changes.get(kind)
        if ch is None:
            continue
        got: list[DriftItem] = []
        for k, _f in ch.creates:
            got.append(DriftItem(kind, "missing", label_of(kind, k)))
        released = {k for k, _i in ch.releases}  # a person's object the plan no longer has: a sync lets it go
        for k, _i in ch.deletes + ch.releases:
            got.append(DriftItem(kind, "extra", label_of(kind, k)))
        for k, _i, diff in ch.updates:
            if k in released:
                continue
            # a tags change on an object without the fabric's tag is an adoption; on an owned one, a plane's claim
            unowned = "tags" in diff and s.ftag not in diff["tags"][0]
            fields = {f: (show(old), show(new)) for f, (old, new) in diff.items() if f != "tags" or not unowned}
            got.append(DriftItem(kind, "unowned" if unowned else "changed", label_of(kind, k), fields))
        items += sorted(got, key=lambda i: (_ORDER[i.what], i.label))
    items = [DriftItem("conflicts", "conflict", c) for c in s.conflicts] + items
    return DriftReport(s.d.fabric, items, dict(client.requests), seconds)
