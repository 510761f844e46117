"""Fabric planes as Terraform's ``hwaac_fabric_plane`` shows them: what a plane's plan puts in NetBox, and what
NetBox holds for it, summarised the same way so that a difference is a visible change in a Terraform plan.

A summary (:class:`PlaneState`) holds object counts per type, the pools the plan used, each switch's loopback
and ASN, and the drift lines (objects where NetBox differs from the plan). :func:`planned_state` is pure;
:func:`netbox_state` reads NetBox (GET only) through the sync engine, which is also what writes the plane
(:func:`hwaac.netbox.sync.sync_plan` with ``planes=``). Planes are 0-based, as device names count them
(``leaf-p0-su01-r0`` is in plane 0).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hwaac.model.intent import NetBoxPrefixRef
from hwaac.netbox.sync.client import ReadCache
from hwaac.netbox.sync.desired import ROLE_SLUG, desired_state
from hwaac.netbox.sync.engine import Sync, read_plan_state
from hwaac.netbox.sync.readback import drift
from hwaac.netbox.sync.records import iface_of, slug_of, tags_of
from hwaac.plan import build_plan
from hwaac.plan.model import Plan, ip_str
from hwaac.validate import PoolLookup, PoolLookupError, load_intent_source

COUNT_KINDS = ("devices", "switches", "gpu_nodes", "cables", "ip_addresses", "prefixes", "asns", "asn_ranges")
SWITCH_ROLES = frozenset(ROLE_SLUG[r] for r in ("leaf", "spine", "super_spine"))
MAX_DRIFT_LINES = 200  # a plan shows at most this many drift lines per plane (then "... and N more")


@dataclass
class PlaneState:
    """One plane (or the whole fabric) summarised.

    ``counts``: objects per type (keys :data:`COUNT_KINDS`); ``pools_used``: intent field path -> CIDR;
    ``devices``: switch name -> ``{"loopback": "10.0.0.1", "asn": 4200000001}``; ``drift``: one line per object
    where NetBox differs from the plan (empty for a plan).
    """

    fabric: str
    site: str
    counts: dict[str, int]
    pools_used: dict[str, str]
    devices: dict[str, dict[str, Any]]
    drift: list[str] = field(default_factory=list)


def intent_sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def pool_lookup_from(pools: Mapping[str, str] | None, fallback: PoolLookup | None) -> PoolLookup | None:
    """A pool lookup that answers NetBox prefix roles from ``pools`` (role slug -> CIDR) first, then asks
    ``fallback`` (NetBox); None when neither is given."""
    if not pools and fallback is None:
        return None

    def lookup(ref: NetBoxPrefixRef, site: str) -> str:
        if pools and ref.netbox_role in pools:
            return pools[ref.netbox_role]
        if fallback is None:
            raise PoolLookupError(
                f"no pool for the NetBox prefix role {ref.netbox_role!r}",
                f"one of the roles given in pools: {', '.join(sorted(pools or {})) or '(none)'}",
            )
        return fallback(ref, site)

    return lookup


def plan_from_text(text: str, source: str, lookup: PoolLookup | None = None) -> Plan:
    """Validate intent YAML ``text`` (``source`` names it in errors) and plan it.

    Raises: IntentError (every problem, with file and line), NetBoxError (lookup could not reach NetBox)."""
    return build_plan(load_intent_source(text, source, lookup))


def scope(plan: Plan, plane: int | None) -> list[int] | None:
    """The sync scope of ``plane`` (None: the whole fabric). Raises ValueError outside the plan."""
    if plane is None:
        return None
    if not 0 <= plane < plan.design.planes:
        raise ValueError(
            f"plane {plane} is not in fabric {plan.intent.fabric.name}, which has planes 0..{plan.design.planes - 1}"
        )
    return [plane]


def _pools_used(plan: Plan) -> dict[str, str]:
    return {x.path: x.cidr for x in plan.pools.present()}


def planned_state(plan: Plan, plane: int | None = None) -> PlaneState:
    """What NetBox holds for ``plane`` (0-based; None: every plane) once the plan is synced. Pure."""
    planes = scope(plan, plane)
    d = desired_state(plan, planes)
    devices = d.kinds.get("devices", {})
    switches = {k for k, w in devices.items() if w.fields["role"].key in SWITCH_ROLES}
    counts = {
        "devices": len(devices),
        "switches": len(switches),
        "gpu_nodes": sum(1 for w in devices.values() if w.fields["role"].key == ROLE_SLUG["gpu"]),
        "cables": d.count("cables"),
        "ip_addresses": d.count("ip-addresses"),
        "prefixes": d.count("prefixes"),
        "asns": d.count("asns"),
        "asn_ranges": d.count("asn-ranges"),
    }
    sw = {s.name: {"loopback": ip_str(s.loopback), "asn": s.asn} for s in plan.switches if s.name in switches}
    return PlaneState(plan.intent.fabric.name, plan.intent.fabric.site, counts, _pools_used(plan), sw)


def _in_scope(s: Sync, r: dict) -> bool:
    tags = tags_of(r)
    if s.ftag not in tags:
        return False
    return s.d.scope is None or bool(s._claims(tags) & {s.d.plane_tags[p] for p in s.d.scope})


def netbox_state(
    plan: Plan,
    url: str,
    token: str,
    plane: int | None = None,
    log: Callable[[str], None] | None = None,
    cache: ReadCache | None = None,
) -> PlaneState:
    """What NetBox holds for ``plane`` of ``plan`` (0-based; None: the whole fabric), read only, and the drift
    from the plan. Counts cover the objects the fabric owns (its tag) that the plane claims (its plane tag).
    ``cache``: reads shared with other planes read at the same time (:class:`~hwaac.netbox.sync.client.ReadCache`).

    Raises: SyncError (unreachable, token refused, unsupported version; one line, no token), ValueError (plane
    outside the plan)."""
    s = read_plan_state(plan, url, token, scope(plan, plane), cache=cache)
    owned = {
        k: [r for r in s.existing.get(k, {}).values() if _in_scope(s, r)] + s.dupes.get(k, [])
        for k in ("devices", "cables", "ip-addresses", "prefixes", "asns", "asn-ranges")
    }
    # the plan's role of a planned device: an adopted one keeps its person's role (hwaac.netbox.sync.ownership)
    planned_role = {k: w.fields["role"].key for k, w in s.d.kinds.get("devices", {}).items()}

    def role(r: dict) -> str | None:
        return planned_role.get(r["name"]) or slug_of(r.get("role"))

    roles = [role(r) for r in owned["devices"]]
    counts = {
        "devices": len(owned["devices"]),
        "switches": sum(1 for r in roles if r in SWITCH_ROLES),
        "gpu_nodes": sum(1 for r in roles if r == ROLE_SLUG["gpu"]),
        "cables": len(owned["cables"]),
        "ip_addresses": len(owned["ip-addresses"]),
        "prefixes": len(owned["prefixes"]),
        "asns": len(owned["asns"]),
        "asn_ranges": len(owned["asn-ranges"]),
    }
    loopbacks = {}
    for r in owned["ip-addresses"]:
        end = iface_of(r.get("assigned_object"))
        if end is not None and end[1] == "Loopback0":
            loopbacks[end[0]] = r["address"].split("/")[0]
    devices = {
        r["name"]: {"loopback": loopbacks.get(r["name"], ""), "asn": (r.get("custom_fields") or {}).get("hwaac_asn")}
        for r in owned["devices"]
        if role(r) in SWITCH_ROLES
    }
    rep = drift(s, s.c, 0.0)
    lines = [f"{i.kind}: {i.line()}" for i in rep.items]
    if len(lines) > MAX_DRIFT_LINES:
        lines = [*lines[:MAX_DRIFT_LINES], f"... and {len(lines) - MAX_DRIFT_LINES} more"]
    return PlaneState(plan.intent.fabric.name, plan.intent.fabric.site, counts, _pools_used(plan), devices, lines)
