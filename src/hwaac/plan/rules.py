"""Semantic rules that need the derived fabric: switch fit, pools, ASNs and device names.

The checks themselves sit beside what they check (:func:`hwaac.plan.design.derive`,
:func:`hwaac.plan.ipam.check_pools`, :func:`hwaac.plan.asn.check_asns`); this module runs them in order and
lists their ids in :data:`RULES`.
"""

from __future__ import annotations

from hwaac.errors import IntentIssue
from hwaac.model.intent import Intent
from hwaac.plan.asn import check_asns
from hwaac.plan.design import Design, DesignError, derive
from hwaac.plan.ipam import check_pools
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
    "bad-naming-field": "naming patterns use only plane, rail, su, slot, pod, index",
}


def check_fabric(intent: Intent) -> list[IntentIssue]:
    """Issues of the derived fabric (empty when none). Pools and ASNs are checked only when the switches fit,
    and names only when everything else holds (they need a consistent topology)."""
    try:
        design = derive(intent)
    except DesignError as err:
        return err.issues
    issues = check_pools(intent, design) + check_asns(intent, design)
    if not issues:
        issues += check_names(intent, design)
    return issues


def check_names(intent: Intent, design: Design) -> list[IntentIssue]:
    """Two devices with one name: a naming pattern that misses a field, or an appliance named like a device."""
    issues: list[IntentIssue] = []
    seen: dict[str, str] = {}
    try:
        for role, name in device_names(intent, design):
            if name not in seen:
                seen[name] = role
                continue
            path = "fabric.appliances" if role == "appliance" else f"naming.{role}"
            issues.append(IntentIssue(path, f"duplicate name {name!r} (also a {seen[name]})",
                                      getattr(intent.naming, role, name),
                                      "a pattern whose fields make every name unique", rule="duplicate-names"))
            if len(issues) >= 5:
                break
    except (KeyError, IndexError, ValueError) as exc:
        issues.append(IntentIssue("naming", f"bad naming pattern ({exc})", None,
                                  "format strings using plane, rail, su, slot, pod, index", rule="bad-naming-field"))
    return issues
