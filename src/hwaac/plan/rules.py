"""Semantic rules that need the derived fabric: switch fit, pools, ASNs and device names.

The checks themselves sit beside what they check (:func:`hwaac.plan.design.derive`,
:func:`hwaac.plan.ipam.check_pools`, :func:`hwaac.plan.asn.check_asns`); this module runs them in order and
lists their ids in :data:`RULES`.
"""

from __future__ import annotations

from hwaac.errors import IntentIssue
from hwaac.model.intent import Intent, NamingSection
from hwaac.model.limits import FILES_PER_NODE, MAX_DEVICES, MAX_FILES, MAX_LINKS
from hwaac.model.patterns import HOSTNAME_VALID, IFNAME_VALID, hostname_problem, ifname_problem, pattern_problem
from hwaac.plan.asn import check_asns
from hwaac.plan.design import Design, DesignError, derive
from hwaac.plan.ipam import check_pools
from hwaac.plan.ports import port_names
from hwaac.plan.topology import device_names

RULES: dict[str, str] = {
    "unknown-switch-model": "switch models exist in switch_models or the catalog",
    "three-tier-without-super-spine": "3 tiers need switches.super_spine",
    "capacity-below-count": "su_capacity >= su_count",
    "too-few-downlinks": "leaf downlinks >= nodes per SU",
    "leaf-speed-vs-host": "leaf ports run at the host NIC speed",
    "spine-speed-mismatch": "spine and super-spine ports run at the leaf port speed",
    "too-few-leaf-ports": "leaf downlinks + uplinks fit the leaf",
    "spines-do-not-fit": "2 tiers: the spines take every leaf uplink, equally per spine",
    "spine-downlinks-leave-no-uplinks": "3 tiers: spines keep ports for super-spines",
    "spine-count-not-divisor": "3 tiers: spines per pod divide the leaf uplinks",
    "pod-too-large": "3 tiers: a pod's leaves fit the spine downlinks",
    "super-spines-do-not-fit": "3 tiers: super-spines take every spine uplink",
    "not-a-prefix": "pools are IP prefixes",
    "netbox-pool-unresolved": "a pool naming a NetBox prefix role is resolved against NetBox",
    "netbox-pool-missing": "a NetBox prefix role names exactly one prefix (at the site, in the VRF)",
    "ipv6-pool": "pools are IPv4 (IPv6 comes later)",
    "host-bits-set": "pools are written as their network address",
    "three-tier-missing-pools": "3 tiers need super-spine loopbacks and spine-super-spine links",
    "pool-too-small": "each pool holds what su_capacity needs",
    "pools-overlap": "pools share no address",
    "rail-subnet-too-small": "a rail subnet holds its hosts, gateway, network and broadcast",
    "asn-range-reversed": "ASN ranges end after they start",
    "asn-exhausted": "ASN ranges hold what su_capacity needs",
    "asn-overlap": "leaf and spine ASN ranges are disjoint",
    "super-spine-asn-in-range": "the super-spine ASN lies outside the leaf and spine ranges",
    "duplicate-names": "every device has its own name",
    "bad-naming-field": "naming patterns use only their role's fields, with at most a zero-padded width ({su:02d})",
    "fabric-too-large": "the fabric has at most 65,536 devices, 1,048,576 links and 262,144 rendered files",
    "bad-device-name": "every device name is a host name (RFC 1123 label, lower case)",
    "bad-port-name": "switch models' port names are Linux interface names; their patterns use only {n} (alias: "
    "{cage}, {sub}, {n})",
}

# the fields each naming pattern is filled in with (hwaac.plan.topology)
NAMING_FIELDS: dict[str, tuple[str, ...]] = {
    "node": ("su", "slot", "pod"),
    "leaf": ("plane", "su", "rail", "pod", "index"),
    "spine": ("plane", "pod", "index"),
    "super_spine": ("plane", "index"),
}
# the fields of a switch model's port name and alias patterns (hwaac.plan.ports)
PORT_FIELDS: dict[str, tuple[str, ...]] = {"port_name": ("n",), "alias": ("cage", "sub", "n")}


def check_fabric(intent: Intent) -> list[IntentIssue]:
    """Issues of the derived fabric (empty when none). Name patterns are checked first, pools and ASNs only when
    the switches fit, and names only when everything else holds (they need a consistent topology)."""
    issues = check_patterns(intent)
    if issues:
        return issues
    try:
        design = derive(intent)
    except DesignError as err:
        return err.issues
    issues = check_size(intent, design)
    if issues:
        return issues  # pools, ASNs and names would enumerate every device
    issues = check_pools(intent, design) + check_asns(intent, design)
    if not issues:
        issues += check_names(intent, design)
    return issues


def fabric_size(intent: Intent, design: Design) -> dict[str, int]:
    """Devices, links and rendered files of the fabric, counted from its dimensions (nothing is enumerated);
    nodes are counted as every slot plus the appliances, an upper bound."""
    leaves = design.su_count * design.planes * design.rails
    spines = design.spines_per_plane * design.planes
    switches = leaves + spines + design.super_spines_per_plane * design.planes
    nodes = design.su_count * design.nodes_per_su + len(intent.fabric.appliances)
    links = nodes * design.rails * design.planes + leaves * design.leaf_uplinks + spines * design.spine_uplinks
    return {"devices": switches + nodes, "links": links, "files": switches + nodes * FILES_PER_NODE + 5}


def check_size(intent: Intent, design: Design) -> list[IntentIssue]:
    """The fabric stays within :data:`~hwaac.model.limits.MAX_DEVICES`, ``MAX_LINKS`` and ``MAX_FILES``, checked
    from its dimensions before anything is enumerated, so that a huge intent fails at once."""
    size = fabric_size(intent, design)
    limits = {"devices": MAX_DEVICES, "links": MAX_LINKS, "files": MAX_FILES}
    over = [f"{size[k]:,} {k} (limit {limits[k]:,})" for k in limits if size[k] > limits[k]]
    if not over:
        return []
    return [
        IntentIssue(
            "fabric.su_count",
            f"the fabric is too large to plan: {', '.join(over)}",
            intent.fabric.su_count,
            f"at most {MAX_DEVICES:,} devices, {MAX_LINKS:,} links and {MAX_FILES:,} rendered files "
            "(docs/intent-limits.md): fewer SUs or nodes per SU, or split the fabric",
            rule="fabric-too-large",
        )
    ]


def check_patterns(intent: Intent) -> list[IntentIssue]:
    """Naming patterns use only their role's fields (:data:`NAMING_FIELDS`), switch models' port and alias
    patterns only theirs, and every port name a switch model makes is a Linux interface name."""
    issues: list[IntentIssue] = []
    for role, fields in NAMING_FIELDS.items():
        pattern = getattr(intent.naming, role)
        problem = pattern_problem(pattern, fields)
        if problem is not None:
            issues.append(
                IntentIssue(
                    f"naming.{role}",
                    f"bad naming pattern: {problem}",
                    pattern,
                    "a format string using "
                    + ", ".join("{" + f + "}" for f in fields)
                    + f", e.g. {getattr(NamingSection(), role)}",
                    rule="bad-naming-field",
                )
            )
    for key, model in intent.switch_models.items():
        for field, fields in PORT_FIELDS.items():
            problem = pattern_problem(getattr(model, field), fields, text_fields=("sub",))
            if problem is not None:
                issues.append(
                    IntentIssue(
                        f"switch_models.{key}.{field}",
                        f"bad pattern: {problem}",
                        getattr(model, field),
                        "a format string using " + ", ".join("{" + f + "}" for f in fields) + ", e.g. Ethernet{n}",
                        rule="bad-port-name",
                    )
                )
        if issues:
            continue
        for i, name in enumerate(port_names(model)):
            why = ifname_problem(name)
            if why is not None:
                extra = i >= model.ports
                issues.append(
                    IntentIssue(
                        f"switch_models.{key}." + (f"extra_ports[{i - model.ports}].name" if extra else "port_name"),
                        f"port {i} is named {name!r}: {why}",
                        name if extra else model.port_name,
                        IFNAME_VALID,
                        rule="bad-port-name",
                    )
                )
                break
    return issues


def check_names(intent: Intent, design: Design) -> list[IntentIssue]:
    """Every device name is a host name, and no two devices share one (a naming pattern that misses a field, or
    an appliance named like a device)."""
    issues: list[IntentIssue] = []
    seen: dict[str, str] = {}
    bad_roles: set[str] = set()
    for role, name in device_names(intent, design):
        path = "fabric.appliances" if role == "appliance" else f"naming.{role}"
        if role not in bad_roles and (why := hostname_problem(name)) is not None:
            bad_roles.add(role)
            issues.append(
                IntentIssue(
                    path,
                    f"makes the device name {name!r}: {why}",
                    getattr(intent.naming, role, name),
                    HOSTNAME_VALID,
                    rule="bad-device-name",
                )
            )
        if name not in seen:
            seen[name] = role
            continue
        issues.append(
            IntentIssue(
                path,
                f"duplicate name {name!r} (also a {seen[name]})",
                getattr(intent.naming, role, name),
                "a pattern whose fields make every name unique",
                rule="duplicate-names",
            )
        )
        if len(issues) >= 5:
            break
    return issues
