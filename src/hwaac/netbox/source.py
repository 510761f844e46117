"""NetBox as the source for rendering: the plan with the values NetBox holds.

:func:`plan_from_netbox` reads the fabric back (GET only, through the sync engine) and returns the plan with each
switch's ASN (``hwaac_asn``) and loopback and each link end's address as NetBox holds them, plus one line per value
that differs from the plan. A cable NetBox holds differently from the plan stops rendering with an error that
names the cables. Why the record, not the intent, is the truth: docs/netbox-sync.md "Rendering from NetBox".
"""

from __future__ import annotations

import dataclasses

import netaddr

from hwaac.netbox.errors import NetBoxError
from hwaac.netbox.sync.desired import ASN_FIELD
from hwaac.netbox.sync.engine import read_plan_state
from hwaac.netbox.sync.records import cable_ends, iface_of, tags_of
from hwaac.plan.model import Plan, ip_str


class NetBoxRecordError(NetBoxError):
    """NetBox does not hold what rendering needs (a planned device or cable is missing or cabled otherwise)."""


def plan_from_netbox(plan: Plan, url: str, token: str) -> tuple[Plan, list[str]]:
    """``plan`` with the ASNs, loopbacks and link addresses NetBox holds, and the differences taken over
    (``"leaf-p0-su01-r0: asn 4200100000 -> 64999 (NetBox)"``).

    Raises:
        NetBoxRecordError: a planned switch, node or cable is not in NetBox (owned by the fabric), or a cable
            joins other interfaces; the message names up to 10 of them.
        SyncError: NetBox unreachable, token refused (one line, no token).
    """
    s = read_plan_state(plan, url, token)
    ftag = s.ftag
    devices = {k: r for k, r in s.existing.get("devices", {}).items() if ftag in tags_of(r)}
    missing = [n for n in [sw.name for sw in plan.switches] + [n.name for n in plan.nodes] if n not in devices]
    cabled: set[frozenset] = set()
    for r in s.existing.get("cables", {}).values():
        if ftag in tags_of(r):
            a, b = cable_ends(r)
            if len(a) == 1 and len(b) == 1:
                cabled.add(frozenset((a[0], b[0])))
    uncabled = [
        link.cable_id
        for link in plan.links
        if frozenset(((link.a_device, link.a_port), (link.b_device, link.b_port))) not in cabled
    ]
    if missing or uncabled:
        what = [f"device {n}" for n in missing[:10]] + [f"cable {c}" for c in uncabled[:10]]
        more = len(missing) + len(uncabled) - len(what)
        raise NetBoxRecordError(
            f"NetBox does not hold fabric {plan.intent.fabric.name} as planned: {', '.join(what)}"
            + (f" and {more} more" if more > 0 else "")
            + " are missing or cabled otherwise; "
            "sync the fabric (terraform apply or hwaac netbox sync) or see hwaac netbox drift"
        )
    addr: dict[tuple[str, str], str] = {}
    for r in s.existing.get("ip-addresses", {}).values():
        end = iface_of(r.get("assigned_object"))
        if end is not None and ftag in tags_of(r):
            addr[end] = r["address"]
    notes: list[str] = []

    def taken(name: str, what: str, old: object, new: object) -> None:
        notes.append(f"{name}: {what} {old} -> {new} (NetBox)")

    switches = []
    for sw in plan.switches:
        asn = (devices[sw.name].get("custom_fields") or {}).get(ASN_FIELD)
        lo = addr.get((sw.name, "Loopback0"))
        new = sw
        if isinstance(asn, int) and asn != sw.asn:
            taken(sw.name, "asn", sw.asn, asn)
            new = dataclasses.replace(new, asn=asn)
        if lo is not None and int(netaddr.IPNetwork(lo).ip) != sw.loopback:
            taken(sw.name, "loopback", ip_str(sw.loopback), lo.split("/")[0])
            new = dataclasses.replace(new, loopback=int(netaddr.IPNetwork(lo).ip))
        switches.append(new)
    links = []
    for link in plan.links:
        new_link = link
        for side, dev, port in (("a", link.a_device, link.a_port), ("b", link.b_device, link.b_port)):
            held = addr.get((dev, port))
            if held is None:
                continue
            ip = int(netaddr.IPNetwork(held).ip)
            if ip != getattr(link, f"{side}_ip"):
                taken(f"{dev}:{port}", "address", ip_str(getattr(link, f"{side}_ip")), held.split("/")[0])
                new_link = (
                    dataclasses.replace(new_link, a_ip=ip) if side == "a" else dataclasses.replace(new_link, b_ip=ip)
                )
        links.append(new_link)
    return dataclasses.replace(plan, switches=switches, links=links), notes
