"""The NetBox objects a plan asks for, keyed by natural key (pure: no NetBox access).

Tags (``hwaac``, ``hwaac-fabric-F``, ``hwaac-plane-F-<n>``, ``hwaac-adopted``), site, the shared catalogue
(manufacturers, roles, device types with interface templates), devices, cables, prefixes, IP addresses and ASNs:
what each carries, which fields are set on create only, and which objects planes share are described in
docs/netbox-sync.md "The object model".
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from hwaac.plan.model import Plan, ip_str
from hwaac.plan.ports import port_table

OWNER_TAG = "hwaac"
ADOPTED_TAG = "hwaac-adopted"  # beside the ownership tags on an object a person made and hwaac adopted
ASN_FIELD = "hwaac_asn"
RIR_SLUG = "hwaac-private"
GENERIC_MANUFACTURER = "Generic"
OWNED_KINDS = ("asn-ranges", "asns", "devices", "prefixes", "cables", "ip-addresses")  # see records.OWNED

ROLE_SLUG = {
    "leaf": "leaf",
    "spine": "spine",
    "super_spine": "super-spine",
    "gpu": "gpu-node",
    "appliance": "appliance",
}
ROLE_COLOR = {"leaf": "2196f3", "spine": "3f51b5", "super-spine": "673ab7", "gpu-node": "4caf50", "appliance": "ff9800"}

# NetBox interface type by port speed in Mb/s (dcim/choices.py InterfaceTypeChoices)
IFACE_TYPE = {
    10_000: "10gbase-x-sfpp",
    25_000: "25gbase-x-sfp28",
    50_000: "50gbase-x-sfp56",
    100_000: "100gbase-x-qsfp28",
    200_000: "200gbase-x-qsfp56",
    400_000: "400gbase-x-osfp",
    800_000: "800gbase-x-osfp",
}


def fabric_tag(plan: Plan) -> str:
    return f"hwaac-fabric-{plan.intent.fabric.name}"


def plane_tag(fabric: str, plane: int) -> str:
    """The tag of ``plane`` (0-based, as in device names ``leaf-p0-...``) of ``fabric``:
    ``hwaac-plane-<fabric>-<plane>``."""
    return f"hwaac-plane-{fabric}-{plane}"


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
    adopted ones), ``create_only`` are set on create only; ``planes`` (0-based) are the planes that use an owned
    object (empty for catalogue objects)."""

    key: Hashable
    fields: dict[str, Any]
    create_only: dict[str, Any] = field(default_factory=dict)
    planes: frozenset[int] = frozenset()


@dataclass
class Desired:
    """Desired objects per kind, in dependency order.

    ``tags`` are the ownership tags (``hwaac``, fabric tag); ``plane_tags`` maps every plane of the plan (0-based)
    to its tag; ``scope`` holds the planes this sync acts for, or is None for the whole fabric (every plane,
    including plane tags of planes that left the plan).
    """

    fabric: str
    tags: tuple[str, str]
    kinds: dict[str, dict[Hashable, Want]]
    plane_tags: dict[int, str] = field(default_factory=dict)
    scope: frozenset[int] | None = None

    def count(self, kind: str) -> int:
        return len(self.kinds.get(kind, {}))

    @property
    def plane_tag_prefix(self) -> str:
        return f"hwaac-plane-{self.fabric}-"

    def is_plane_tag(self, slug: str) -> bool:
        p = self.plane_tag_prefix
        return slug.startswith(p) and slug[len(p) :].isdigit()

    def claim_tags(self, want: Want) -> frozenset[str]:
        """The plane tags this sync puts on ``want``: its planes within the scope."""
        planes = want.planes if self.scope is None else want.planes & self.scope
        return frozenset(self.plane_tags[p] for p in planes)


def _add(kinds: dict[str, dict[Hashable, Want]], kind: str, want: Want) -> None:
    kinds.setdefault(kind, {}).setdefault(want.key, want)


def _node_ports(plan: Plan) -> tuple[int, str]:
    """(NIC ports per node, a suffix telling the port naming apart from the default ``rail{rail}``): device types
    are shared by slug across fabrics, so two namings must not share one."""
    template = plan.intent.host.interface_name
    suffix = "" if template == "rail{rail}" else "-" + hashlib.sha1(template.encode()).hexdigest()[:6]
    return plan.design.rails * plan.design.planes, suffix


def node_type_slug(plan: Plan, kind: str) -> str:
    ports, suffix = _node_ports(plan)
    speed = plan.intent.fabric.host_port_speed_gbps
    return f"hwaac-{'node' if kind == 'gpu' else 'appliance'}-{ports}x{speed}g{suffix}"


def desired_state(plan: Plan, planes: Iterable[int] | None = None, *, owned: bool = True) -> Desired:
    """Everything the plan asks NetBox to hold: catalogue objects, and the owned objects of ``planes`` (0-based;
    None: the whole fabric). ``owned=False`` asks for no owned object at all (what destroying the planes means).

    Raises:
        ValueError: a plane outside the plan (``0 <= plane < design.planes``).
    """
    intent, d = plan.intent, plan.design
    fab, ftag = intent.fabric.name, fabric_tag(plan)
    site = intent.fabric.site
    kinds: dict[str, dict[Hashable, Want]] = {}
    all_planes = frozenset(range(d.planes))
    scope = None if planes is None else frozenset(planes)
    if scope is not None and not scope <= all_planes:
        bad = sorted(scope - all_planes)
        raise ValueError(f"plane {', '.join(map(str, bad))} is not in fabric {fab}, which has planes 0..{d.planes - 1}")
    node_planes: dict[str, set[int]] = {}
    for link in plan.links:
        if link.kind == "host":
            node_planes.setdefault(link.a_device, set()).add(link.plane)

    _add(
        kinds,
        "tags",
        Want(
            OWNER_TAG,
            {},
            {
                "name": OWNER_TAG,
                "slug": OWNER_TAG,
                "color": "9e9e9e",
                "description": "owned by hwaac (Hardware-as-Code)",
            },
        ),
    )
    _add(
        kinds,
        "tags",
        Want(
            ADOPTED_TAG,
            {},
            {
                "name": ADOPTED_TAG,
                "slug": ADOPTED_TAG,
                "color": "ffc107",
                "description": "made by a person, adopted by hwaac: released, never deleted",
            },
        ),
    )
    _add(
        kinds,
        "tags",
        Want(ftag, {}, {"name": ftag, "slug": ftag, "color": "607d8b", "description": f"hwaac fabric {fab}"}),
    )
    plane_tags = {p: plane_tag(fab, p) for p in sorted(all_planes)}
    for p in sorted(all_planes if scope is None else scope):
        t = plane_tags[p]
        _add(
            kinds,
            "tags",
            Want(t, {}, {"name": t, "slug": t, "color": "78909c", "description": f"hwaac fabric {fab}, plane {p}"}),
        )
    _add(
        kinds,
        "custom-fields",
        Want(
            ASN_FIELD,
            {},
            {
                "name": ASN_FIELD,
                "label": "BGP ASN (hwaac)",
                "type": "integer",
                "object_types": ["dcim.device"],
                "description": "The device's BGP ASN as planned by hwaac",
                "group_name": "hwaac",
            },
        ),
    )
    _add(kinds, "sites", Want(site, {}, {"name": site, "slug": site, "status": "active"}))

    # device types: switch models, then the node types
    models = {"leaf": (intent.switches.leaf.model, d.leaf_model), "spine": (intent.switches.spine.model, d.spine_model)}
    if d.super_spine_model is not None and intent.switches.super_spine is not None:
        models["super_spine"] = (intent.switches.super_spine.model, d.super_spine_model)
    type_of_role: dict[str, str] = {}
    for role, (name, model) in models.items():
        mslug = slugify(model.manufacturer or GENERIC_MANUFACTURER)
        _add(
            kinds, "manufacturers", Want(mslug, {}, {"name": model.manufacturer or GENERIC_MANUFACTURER, "slug": mslug})
        )
        tslug = slugify(name)
        type_of_role[role] = tslug
        _add(
            kinds,
            "device-types",
            Want(
                tslug,
                {},
                {
                    "model": name,
                    "slug": tslug,
                    "part_number": model.hwsku,
                    "manufacturer": Ref("manufacturers", mslug),
                    "u_height": 1,
                },
            ),
        )
        for port_info in port_table(model):
            _add(
                kinds,
                "interface-templates",
                Want(
                    (tslug, port_info.name),
                    {},
                    {
                        "device_type": Ref("device-types", tslug),
                        "name": port_info.name,
                        "type": iface_type(port_info.speed_mbps),
                        "label": port_info.alias,
                    },
                ),
            )
        _add(
            kinds,
            "interface-templates",
            Want(
                (tslug, "Loopback0"),
                {},
                {"device_type": Ref("device-types", tslug), "name": "Loopback0", "type": "virtual"},
            ),
        )
    gslug = slugify(GENERIC_MANUFACTURER)
    node_kinds = sorted({n.kind for n in plan.nodes})
    speed = intent.fabric.host_port_speed_gbps * 1000
    for nk in node_kinds:
        _add(kinds, "manufacturers", Want(gslug, {}, {"name": GENERIC_MANUFACTURER, "slug": gslug}))
        tslug = node_type_slug(plan, nk)
        label = "GPU node" if nk == "gpu" else "appliance"
        _add(
            kinds,
            "device-types",
            Want(
                tslug,
                {},
                {
                    "model": f"hwaac {label} {_node_ports(plan)[0]}x{intent.fabric.host_port_speed_gbps}G "
                    f"{intent.host.nic_model}{_node_ports(plan)[1]}",
                    "slug": tslug,
                    "manufacturer": Ref("manufacturers", gslug),
                    "u_height": 1,
                },
            ),
        )
        for rail in range(d.rails):
            for plane in range(d.planes):  # NIC port numbering as the cabling plans it (plan/cabling.py)
                nic = rail * d.planes + plane
                ifname = intent.host.interface_name.format(rail=rail, plane=plane, port=nic)
                _add(
                    kinds,
                    "interface-templates",
                    Want(
                        (tslug, ifname),
                        {},
                        {
                            "device_type": Ref("device-types", tslug),
                            "name": ifname,
                            "type": iface_type(speed),
                            "description": f"rail {rail}"
                            + (f" plane {plane}" if d.planes > 1 else "")
                            + f" ({intent.host.nic_model})",
                        },
                    ),
                )

    for slug in dict.fromkeys([ROLE_SLUG[s.role] for s in plan.switches] + [ROLE_SLUG[n.kind] for n in plan.nodes]):
        _add(kinds, "device-roles", Want(slug, {}, {"name": slug, "slug": slug, "color": ROLE_COLOR[slug]}))

    # ASNs
    _add(
        kinds,
        "rirs",
        Want(
            RIR_SLUG,
            {},
            {
                "name": "hwaac private",
                "slug": RIR_SLUG,
                "is_private": True,
                "description": "private ASNs (RFC 6996) planned by hwaac",
            },
        ),
    )
    ranges = {
        "leaf": (intent.asn.leaf.first, intent.asn.leaf.last),
        "spine": (intent.asn.spine.first, intent.asn.spine.last),
    }
    if any(s.role == "super_spine" for s in plan.switches):
        ranges["super_spine"] = (intent.asn.super_spine, intent.asn.super_spine)
    role_planes: dict[str, frozenset[int]] = {}
    for s in plan.switches:
        role_planes[s.role] = role_planes.get(s.role, frozenset()) | {s.plane}
    for role, (first, last) in ranges.items():
        name = f"hwaac-{fab}-{ROLE_SLUG[role]}"
        _add(
            kinds,
            "asn-ranges",
            Want(
                name,
                {"start": first, "end": last, "rir": Ref("rirs", RIR_SLUG)},
                {"name": name, "slug": name},
                role_planes.get(role, all_planes),
            ),
        )
    users: dict[int, list[str]] = {}
    asn_planes: dict[int, set[int]] = {}
    for s in plan.switches:
        users.setdefault(s.asn, []).append(s.name)
        asn_planes.setdefault(s.asn, set()).add(s.plane)
    for asn, names in users.items():
        desc = ", ".join(names)
        desc = desc if len(desc) <= 200 else desc[:190] + f" +{len(names)} more"
        _add(
            kinds,
            "asns",
            Want(
                asn,
                {"description": desc, "sites": (Ref("sites", site),)},
                {"asn": asn, "rir": Ref("rirs", RIR_SLUG)},
                frozenset(asn_planes[asn]),
            ),
        )

    # devices
    for s in plan.switches:
        _add(
            kinds,
            "devices",
            Want(
                s.name,
                {
                    "device_type": Ref("device-types", type_of_role[s.role]),
                    "role": Ref("device-roles", ROLE_SLUG[s.role]),
                    "site": Ref("sites", site),
                    f"custom_fields.{ASN_FIELD}": s.asn,
                },
                {"name": s.name, "status": "planned"},
                frozenset({s.plane}),
            ),
        )
    for n in plan.nodes:
        _add(
            kinds,
            "devices",
            Want(
                n.name,
                {
                    "device_type": Ref("device-types", node_type_slug(plan, n.kind)),
                    "role": Ref("device-roles", ROLE_SLUG[n.kind]),
                    "site": Ref("sites", site),
                },
                {"name": n.name, "status": "planned"},
                frozenset(node_planes.get(n.name, all_planes)),
            ),
        )

    # prefixes
    pools = plan.pools
    from_netbox = intent.netbox_pools
    for pool in pools.present():
        if pool.path not in from_netbox:
            _add(
                kinds,
                "prefixes",
                Want(
                    pool.cidr,
                    {"status": "container", "scope": Ref("sites", site)},
                    {"prefix": pool.cidr, "description": f"hwaac {fab}: {pool.path}"},
                    all_planes,
                ),
            )
    if intent.addressing.host_links.mode == "rail_subnet":
        for s in plan.switches_of("leaf"):
            net, plen, _gw = plan.rail_subnet(s)
            cidr = f"{ip_str(net)}/{plen}"
            _add(
                kinds,
                "prefixes",
                Want(
                    cidr,
                    {"status": "active", "scope": Ref("sites", site)},
                    {"prefix": cidr, "description": f"hwaac {fab}: rail subnet of {s.name}"},
                    frozenset({s.plane}),
                ),
            )

    # cables and IP addresses
    rail_subnet = intent.addressing.host_links.mode == "rail_subnet"
    for s in plan.switches:
        _add(
            kinds,
            "ip-addresses",
            Want(
                ip_str(s.loopback),
                {"address": f"{ip_str(s.loopback)}/32", "interface": Ref("interfaces", (s.name, "Loopback0"))},
                {"status": "active", "role": "loopback", "description": f"{s.name} loopback"},
                frozenset({s.plane}),
            ),
        )
    for link in plan.links:
        a, b = (link.a_device, link.a_port), (link.b_device, link.b_port)
        lp = frozenset({link.plane})
        _add(
            kinds,
            "cables",
            Want(
                frozenset((a, b)),
                {"label": link.cable_id},
                {"a": Ref("interfaces", a), "b": Ref("interfaces", b), "status": "connected"},
                lp,
            ),
        )
        ends = [(link.a_ip, a)] + ([] if rail_subnet and link.kind == "host" else [(link.b_ip, b)])
        for addr, (dev, port) in ends:
            _add(
                kinds,
                "ip-addresses",
                Want(
                    ip_str(addr),
                    {"address": f"{ip_str(addr)}/{link.prefixlen}", "interface": Ref("interfaces", (dev, port))},
                    {"status": "active", "description": link.cable_id},
                    lp,
                ),
            )
    for kind in OWNED_KINDS:
        have = kinds.get(kind, {})
        kinds[kind] = (
            {} if not owned else have if scope is None else {k: w for k, w in have.items() if w.planes & scope}
        )
    return Desired(fab, (OWNER_TAG, ftag), kinds, plane_tags, scope)
