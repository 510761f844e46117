"""The NetBox objects a plan asks for, keyed by natural key (pure: no NetBox access).

Object model (one fabric, ``F`` = fabric name):

- tags ``hwaac`` (ownership) and ``hwaac-fabric-F``; every object hwaac creates carries both.
- site by slug (``fabric.site``), adopted when present.
- manufacturers, device roles (leaf, spine, super-spine, gpu-node, appliance), device types: one per switch model
  with an interface template per SONiC port (type by speed) plus ``Loopback0`` (virtual); one GPU-node type
  ``hwaac-node-<rails>x<speed>g`` (and one appliance type) with a template per rail NIC port
  (``host.interface_name``). Devices get their interfaces from these templates, never one by one.
  These are shared catalogue objects: created when missing, never updated or deleted by a sync.
- devices (switches, GPU nodes, appliances), status ``planned`` on create only (lifecycle status belongs to
  ``verify``); a switch's ASN is in the device custom field ``hwaac_asn`` (integer).
- cables between the planned interfaces, label = the plan's cable id.
- prefixes: every address pool as a ``container`` scoped to the site; in ``rail_subnet`` mode each leaf's rail
  subnet as an ``active`` child. Per-link /31s are not recorded as prefixes (each end's IP address carries its /31).
- IP addresses on interfaces: loopbacks /32 on ``Loopback0`` (role loopback), both ends of every link with the link's
  prefix length. In ``rail_subnet`` mode the leaf gateway (shared by a leaf's host ports) is not recorded.
- ASNs: RIR ``hwaac-private`` (private), one ASN range per switch role (``hwaac-F-<role>``), one ASN object per
  planned ASN (description: the devices that use it, site: the fabric's site).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from hwaac.plan.model import Plan, ip_str
from hwaac.plan.ports import port_table

OWNER_TAG = "hwaac"
ASN_FIELD = "hwaac_asn"
RIR_SLUG = "hwaac-private"
GENERIC_MANUFACTURER = "Generic"

ROLE_SLUG = {"leaf": "leaf", "spine": "spine", "super_spine": "super-spine", "gpu": "gpu-node",
             "appliance": "appliance"}
ROLE_COLOR = {"leaf": "2196f3", "spine": "3f51b5", "super-spine": "673ab7", "gpu-node": "4caf50",
              "appliance": "ff9800"}

# NetBox interface type by port speed in Mb/s (dcim/choices.py InterfaceTypeChoices)
IFACE_TYPE = {10_000: "10gbase-x-sfpp", 25_000: "25gbase-x-sfp28", 50_000: "50gbase-x-sfp56",
              100_000: "100gbase-x-qsfp28", 200_000: "200gbase-x-qsfp56", 400_000: "400gbase-x-osfp",
              800_000: "800gbase-x-osfp"}


def fabric_tag(plan: Plan) -> str:
    return f"hwaac-fabric-{plan.intent.fabric.name}"


def iface_type(speed_mbps: int) -> str:
    return IFACE_TYPE.get(speed_mbps, "other")


def slugify(text: str) -> str:
    out = "".join(c if c.isalnum() else "-" for c in text.lower())
    while "--" in out:
        out = out.replace("--", "-")
    return out.strip("-") or "x"


class Ref(NamedTuple):
    """A reference to another object by its kind and natural key; resolved to an id only when written."""

    kind: str
    key: Hashable


@dataclass
class Want:
    """One desired object: ``fields`` are managed (compared and updated on owned objects, filled in when empty on
    adopted ones), ``create_only`` are set on create only."""

    key: Hashable
    fields: dict[str, Any]
    create_only: dict[str, Any] = field(default_factory=dict)


@dataclass
class Desired:
    """Desired objects per kind, in dependency order."""

    fabric: str
    tags: tuple[str, str]
    kinds: dict[str, dict[Hashable, Want]]

    def count(self, kind: str) -> int:
        return len(self.kinds.get(kind, {}))


def _add(kinds: dict[str, dict[Hashable, Want]], kind: str, want: Want) -> None:
    kinds.setdefault(kind, {}).setdefault(want.key, want)


def node_type_slug(plan: Plan, kind: str) -> str:
    f = plan.intent.fabric
    return f"hwaac-{'node' if kind == 'gpu' else 'appliance'}-{plan.design.rails}x{f.host_port_speed_gbps}g"


def desired_state(plan: Plan) -> Desired:
    """Everything the plan asks NetBox to hold."""
    intent, d = plan.intent, plan.design
    fab, ftag = intent.fabric.name, fabric_tag(plan)
    site = intent.fabric.site
    kinds: dict[str, dict[Hashable, Want]] = {}

    _add(kinds, "tags", Want(OWNER_TAG, {}, {"name": OWNER_TAG, "slug": OWNER_TAG, "color": "9e9e9e",
                                            "description": "owned by hwaac (Hardware-as-Code)"}))
    _add(kinds, "tags", Want(ftag, {}, {"name": ftag, "slug": ftag, "color": "607d8b",
                                       "description": f"hwaac fabric {fab}"}))
    _add(kinds, "custom-fields", Want(ASN_FIELD, {}, {
        "name": ASN_FIELD, "label": "BGP ASN (hwaac)", "type": "integer", "object_types": ["dcim.device"],
        "description": "The device's BGP ASN as planned by hwaac", "group_name": "hwaac"}))
    _add(kinds, "sites", Want(site, {}, {"name": site, "slug": site, "status": "active"}))

    # device types: switch models, then the node types
    models = {"leaf": (intent.switches.leaf.model, d.leaf_model), "spine": (intent.switches.spine.model, d.spine_model)}
    if d.super_spine_model is not None and intent.switches.super_spine is not None:
        models["super_spine"] = (intent.switches.super_spine.model, d.super_spine_model)
    type_of_role: dict[str, str] = {}
    for role, (name, model) in models.items():
        mslug = slugify(model.manufacturer or GENERIC_MANUFACTURER)
        _add(kinds, "manufacturers", Want(mslug, {}, {"name": model.manufacturer or GENERIC_MANUFACTURER,
                                                      "slug": mslug}))
        tslug = slugify(name)
        type_of_role[role] = tslug
        _add(kinds, "device-types", Want(tslug, {}, {"model": name, "slug": tslug, "part_number": model.hwsku,
                                                     "manufacturer": Ref("manufacturers", mslug), "u_height": 1}))
        for p in port_table(model):
            _add(kinds, "interface-templates", Want((tslug, p.name), {}, {
                "device_type": Ref("device-types", tslug), "name": p.name, "type": iface_type(p.speed_mbps),
                "label": p.alias}))
        _add(kinds, "interface-templates", Want((tslug, "Loopback0"), {}, {
            "device_type": Ref("device-types", tslug), "name": "Loopback0", "type": "virtual"}))
    gslug = slugify(GENERIC_MANUFACTURER)
    node_kinds = sorted({n.kind for n in plan.nodes})
    speed = intent.fabric.host_port_speed_gbps * 1000
    for nk in node_kinds:
        _add(kinds, "manufacturers", Want(gslug, {}, {"name": GENERIC_MANUFACTURER, "slug": gslug}))
        tslug = node_type_slug(plan, nk)
        label = "GPU node" if nk == "gpu" else "appliance"
        _add(kinds, "device-types", Want(tslug, {}, {
            "model": f"hwaac {label} {d.rails}x{intent.fabric.host_port_speed_gbps}G {intent.host.nic_model}",
            "slug": tslug, "manufacturer": Ref("manufacturers", gslug), "u_height": 1}))
        for rail in range(d.rails):
            ifname = intent.host.interface_name.format(rail=rail, port=rail)
            _add(kinds, "interface-templates", Want((tslug, ifname), {}, {
                "device_type": Ref("device-types", tslug), "name": ifname, "type": iface_type(speed),
                "description": f"rail {rail} ({intent.host.nic_model})"}))

    for slug in dict.fromkeys([ROLE_SLUG[s.role] for s in plan.switches] + [ROLE_SLUG[n.kind] for n in plan.nodes]):
        _add(kinds, "device-roles", Want(slug, {}, {"name": slug, "slug": slug, "color": ROLE_COLOR[slug]}))

    # ASNs
    _add(kinds, "rirs", Want(RIR_SLUG, {}, {"name": "hwaac private", "slug": RIR_SLUG, "is_private": True,
                                            "description": "private ASNs (RFC 6996) planned by hwaac"}))
    ranges = {"leaf": (intent.asn.leaf.first, intent.asn.leaf.last),
              "spine": (intent.asn.spine.first, intent.asn.spine.last)}
    if any(s.role == "super_spine" for s in plan.switches):
        ranges["super_spine"] = (intent.asn.super_spine, intent.asn.super_spine)
    for role, (first, last) in ranges.items():
        name = f"hwaac-{fab}-{ROLE_SLUG[role]}"
        _add(kinds, "asn-ranges", Want(name, {"start": first, "end": last, "rir": Ref("rirs", RIR_SLUG)},
                                       {"name": name, "slug": name}))
    users: dict[int, list[str]] = {}
    for s in plan.switches:
        users.setdefault(s.asn, []).append(s.name)
    for asn, names in users.items():
        desc = ", ".join(names)
        desc = desc if len(desc) <= 200 else desc[:190] + f" +{len(names)} more"
        _add(kinds, "asns", Want(asn, {"description": desc, "sites": (Ref("sites", site),)},
                                 {"asn": asn, "rir": Ref("rirs", RIR_SLUG)}))

    # devices
    for s in plan.switches:
        _add(kinds, "devices", Want(s.name, {
            "device_type": Ref("device-types", type_of_role[s.role]), "role": Ref("device-roles", ROLE_SLUG[s.role]),
            "site": Ref("sites", site), f"custom_fields.{ASN_FIELD}": s.asn}, {"name": s.name, "status": "planned"}))
    for n in plan.nodes:
        _add(kinds, "devices", Want(n.name, {
            "device_type": Ref("device-types", node_type_slug(plan, n.kind)),
            "role": Ref("device-roles", ROLE_SLUG[n.kind]), "site": Ref("sites", site)},
            {"name": n.name, "status": "planned"}))

    # prefixes
    pools = plan.pools
    for pool in (pools.loopback_leaf, pools.loopback_spine, pools.loopback_super_spine, pools.leaf_spine,
                 pools.spine_super_spine, pools.host_links):
        if pool is not None:
            _add(kinds, "prefixes", Want(pool.cidr, {"status": "container", "scope": Ref("sites", site)},
                                         {"prefix": pool.cidr, "description": f"hwaac {fab}: {pool.path}"}))
    if intent.addressing.host_links.mode == "rail_subnet":
        for s in plan.switches_of("leaf"):
            net, plen, _gw = plan.rail_subnet(s)
            cidr = f"{ip_str(net)}/{plen}"
            _add(kinds, "prefixes", Want(cidr, {"status": "active", "scope": Ref("sites", site)},
                                         {"prefix": cidr, "description": f"hwaac {fab}: rail subnet of {s.name}"}))

    # cables and IP addresses
    rail_subnet = intent.addressing.host_links.mode == "rail_subnet"
    for s in plan.switches:
        _add(kinds, "ip-addresses", Want(ip_str(s.loopback), {
            "address": f"{ip_str(s.loopback)}/32", "interface": Ref("interfaces", (s.name, "Loopback0"))},
            {"status": "active", "role": "loopback", "description": f"{s.name} loopback"}))
    for link in plan.links:
        a, b = (link.a_device, link.a_port), (link.b_device, link.b_port)
        _add(kinds, "cables", Want(frozenset((a, b)), {"label": link.cable_id}, {
            "a": Ref("interfaces", a), "b": Ref("interfaces", b), "status": "connected"}))
        ends = [(link.a_ip, a)] + ([] if rail_subnet and link.kind == "host" else [(link.b_ip, b)])
        for addr, (dev, port) in ends:
            _add(kinds, "ip-addresses", Want(ip_str(addr), {
                "address": f"{ip_str(addr)}/{link.prefixlen}", "interface": Ref("interfaces", (dev, port))},
                {"status": "active", "description": link.cable_id}))
    return Desired(fab, (OWNER_TAG, ftag), kinds)
