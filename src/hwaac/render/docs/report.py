"""``report.md``: a Markdown report of the fabric, for reviews and change tickets.

Summary, devices, cables, port usage, oversubscription, spine sizing, address pools, ASNs and QoS, each counted
from the plan and its design; no timestamp, so the same plan always gives the same text. Each section's
sources and units: docs/render.md, "report.md".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from hwaac.plan.ipam import Pool, Pools, pool_needs, rail_subnet_prefixlen
from hwaac.plan.model import LinkKind, Plan, Role
from hwaac.render.docs.cabling import link_speeds

ROLES: tuple[Role, ...] = ("leaf", "spine", "super_spine")
KINDS: tuple[LinkKind, ...] = ("host", "leaf_spine", "spine_super_spine")
# (lower-tier role, upper-tier role) of each link kind; host links have a node, not a switch, below.
KIND_ENDS: dict[LinkKind, tuple[Role | None, Role]] = {
    "host": (None, "leaf"),
    "leaf_spine": ("leaf", "spine"),
    "spine_super_spine": ("spine", "super_spine"),
}


def _table(header: Sequence[str], rows: Iterable[Sequence[object]], align: str = "") -> list[str]:
    """Markdown table lines; ``align`` has one letter per column (l or r), default left then right."""
    align = align or "l" + "r" * (len(header) - 1)
    sep = ["---:" if a == "r" else "---" for a in align]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.2f}" if whole else "-"


def pool_usage(plan: Plan) -> list[tuple[str, Pool, int, int]]:
    """(pool key, pool, addresses in use now, addresses reserved at su_capacity) for each configured pool."""
    pools = plan.pools
    needs = pool_needs(plan.intent, plan.design)
    roles = Counter(s.role for s in plan.switches)
    kinds = Counter(ln.kind for ln in plan.links)
    if plan.intent.addressing.host_links.mode == "rail_subnet":
        host_used = roles["leaf"] * (1 << (32 - rail_subnet_prefixlen(plan.intent, plan.design)))
    else:
        host_used = 2 * kinds["host"]
    used = {
        "loopback_leaf": roles["leaf"],
        "loopback_spine": roles["spine"],
        "loopback_super_spine": roles["super_spine"],
        "leaf_spine": 2 * kinds["leaf_spine"],
        "spine_super_spine": 2 * kinds["spine_super_spine"],
        "host_links": host_used,
    }
    out = []
    for key in Pools.__slots__:
        pool: Pool | None = getattr(pools, key)
        if pool is not None:
            out.append((key, pool, used[key], needs.get(key, 0)))
    return out


def render_report(plan: Plan) -> str:
    """The Markdown report of ``plan`` (sections and sources in the module docstring)."""
    intent, d = plan.intent, plan.design
    f = intent.fabric
    lines: list[str] = [f"# Fabric report: {f.name}", ""]
    roles_present = [r for r in ROLES if r != "super_spine" or d.tiers == 3]
    kinds = Counter(ln.kind for ln in plan.links)
    kinds_present = [k for k in KINDS if k != "spine_super_spine" or d.tiers == 3]
    speeds = link_speeds(plan)
    gpu_nodes = [n for n in plan.nodes if n.kind == "gpu"]
    appliances = [n for n in plan.nodes if n.kind == "appliance"]

    # 1. summary
    lines += ["## Summary", ""]
    lines += _table(
        ("item", "value"),
        [
            ("fabric", f.name),
            ("site", f.site),
            ("tiers", d.tiers),
            ("planes", d.planes),
            ("rails", d.rails),
            ("scalable units (built)", d.su_count),
            ("scalable units (capacity)", d.su_capacity),
            ("node slots per SU", d.nodes_per_su),
            ("GPU nodes", len(gpu_nodes)),
            ("GPUs", plan.gpu_count),
            ("appliances", len(appliances)),
            ("host port speed (Gb/s)", f.host_port_speed_gbps),
            ("host link addressing", intent.addressing.host_links.mode),
        ],
        "ll",
    )
    if appliances:
        lines += [
            "",
            "Appliances: "
            + ", ".join(
                f"{a.name} (SU {a.su}, slot {a.slot}, rails {','.join(map(str, a.rails))})" for a in appliances
            ),
        ]

    # 2. devices
    per = Counter((s.role, s.plane) for s in plan.switches)
    models = {
        "leaf": intent.switches.leaf.model,
        "spine": intent.switches.spine.model,
        "super_spine": intent.switches.super_spine.model if intent.switches.super_spine else "",
    }
    planes = range(d.planes)
    lines += ["", "## Devices", "", "Switches per tier and plane.", ""]
    rows: list[Sequence[object]] = []
    for r in roles_present:
        rows.append([r, models[r], *(per[r, p] for p in planes), sum(per[r, p] for p in planes)])
    rows.append(["all switches", "", *(sum(per[r, p] for r in roles_present) for p in planes), len(plan.switches)])
    lines += _table(["role", "model", *(f"plane {p}" for p in planes), "total"], rows, "ll" + "r" * (d.planes + 1))

    # 3. cables
    lines += ["", "## Cables", ""]
    lines += _table(
        ("kind", "cables", "speed (Gb/s)"),
        [*((k, kinds[k], speeds[k]) for k in kinds_present), ("all", len(plan.links), "")],
    )

    # 4. port usage
    n_role = Counter(s.role for s in plan.switches)
    used: Counter[str] = Counter()
    for k in kinds_present:
        lo, hi = KIND_ENDS[k]
        used[hi] += kinds[k]
        if lo is not None:
            used[lo] += kinds[k]
    role_model = {"leaf": d.leaf_model, "spine": d.spine_model, "super_spine": d.super_spine_model}
    lines += ["", "## Port usage", "", "Used = link ends on switches of the role; total = front-panel ports.", ""]
    rows = []
    for r in roles_present:
        model = role_model[r]
        assert model is not None  # super_spine is present with 3 tiers, which have its model
        ports = model.ports
        total = n_role[r] * ports
        rows.append((r, n_role[r], ports, used[r], total, _pct(used[r], total)))
    lines += _table(("role", "switches", "ports per switch", "used", "total", "used %"), rows)

    # 5. oversubscription
    lsp = d.leaf_model.port_speed_gbps
    lines += [
        "",
        "## Oversubscription",
        "",
        f"Leaf downlink:uplink bandwidth = {d.oversubscription:.2f}:1 (1.00 is non-blocking).",
        "",
    ]
    rows = [
        ("leaf downlinks (to nodes)", d.leaf_downlinks, lsp, d.leaf_downlinks * lsp),
        ("leaf uplinks (to spines)", d.leaf_uplinks, lsp, d.leaf_uplinks * lsp),
    ]
    if d.tiers == 3:
        ssp = d.spine_model.port_speed_gbps
        rows += [
            ("spine downlinks (to leaves)", d.spine_downlinks, ssp, d.spine_downlinks * ssp),
            ("spine uplinks (to super-spines)", d.spine_uplinks, ssp, d.spine_uplinks * ssp),
        ]
    lines += _table(("per switch", "ports", "port speed (Gb/s)", "bandwidth (Gb/s)"), rows)
    if d.tiers == 3:
        lines += ["", f"Spine downlink:uplink bandwidth = {d.spine_downlinks / d.spine_uplinks:.2f}:1."]

    # 6. sizing
    lines += [
        "",
        "## Spine sizing",
        "",
        f"Spines{' and super-spines' if d.tiers == 3 else ''} are sized for su_capacity = {d.su_capacity} "
        f"SUs ({d.su_count} built): growing to {d.su_capacity} SUs adds leaves, cables and addresses and "
        "moves none.",
        "",
    ]
    if d.tiers == 2:
        rows = [
            ("spines per plane", d.spines_per_group),
            ("uplinks per leaf", d.leaf_uplinks),
            ("links per leaf-spine pair", d.links_per_leaf_spine),
            ("spine ports per spine", d.spine_model.ports),
            ("spine ports to leaves per spine, used now", d.su_count * d.rails * d.links_per_leaf_spine),
            ("spine ports to leaves per spine, at capacity", d.su_capacity * d.rails * d.links_per_leaf_spine),
        ]
    else:
        ss_ports = d.super_spine_model.ports if d.super_spine_model else 0
        rows = [
            ("SUs per pod", d.sus_per_pod),
            ("pods built / at capacity", f"{d.pods} / {d.pod_capacity}"),
            ("spines per pod and plane", d.spines_per_group),
            ("spines per plane (built)", d.spines_per_plane),
            ("links per leaf-spine pair", d.links_per_leaf_spine),
            (
                "spine ports to leaves per spine (full pod) / downlinks",
                f"{d.sus_per_pod * d.rails * d.links_per_leaf_spine} / {d.spine_downlinks}",
            ),
            ("super-spines per plane", d.super_spines_per_plane),
            ("super-spines per spine group", d.super_spines_per_group),
            ("links per spine-super-spine pair", d.links_per_spine_super_spine),
            ("ports per super-spine", ss_ports),
            ("super-spine ports used per super-spine, now", d.pods * d.links_per_spine_super_spine),
            ("super-spine ports used per super-spine, at capacity", d.pod_capacity * d.links_per_spine_super_spine),
        ]
    lines += _table(("item", "value"), rows)

    # 7. pools
    lines += [
        "",
        "## Address pools",
        "",
        "In use = addresses taken by the plan now (a loopback 1, a /31 link 2, a rail subnet its block); "
        "reserved = addresses needed at su_capacity (pool_needs).",
        "",
    ]
    rows = []
    for key, pool, in_use, reserved in pool_usage(plan):
        rows.append((key, pool.cidr, in_use, reserved, pool.size, _pct(in_use, pool.size), _pct(reserved, pool.size)))
    lines += _table(
        ("pool", "prefix", "in use", "reserved at capacity", "size", "in use %", "reserved %"), rows, "llrrrrr"
    )

    # 8. ASNs
    lines += ["", "## ASNs", ""]
    a = intent.asn
    configured = {
        "leaf": f"{a.leaf.first}-{a.leaf.last}",
        "spine": f"{a.spine.first}-{a.spine.last}",
        "super_spine": str(a.super_spine),
    }
    rows = []
    for r in roles_present:
        asns = [s.asn for s in plan.switches if s.role == r]
        if asns:
            rows.append((r, f"{min(asns)}-{max(asns)}", len(set(asns)), configured[r]))
    lines += _table(("role", "assigned (first-last)", "distinct", "configured"), rows, "llrl")

    # 9. QoS
    q = intent.qos
    tos = intent.host.roce_tos if intent.host.roce_tos is not None else (q.roce_dscp[0] << 2) | 2
    wd = q.pfc_watchdog
    lines += ["", "## QoS (RoCE)", ""]
    lines += _table(
        ("item", "value"),
        [
            ("trust", intent.host.trust),
            ("DSCP -> priority (RoCE, lossless)", ", ".join(f"{x} -> {q.lossless_priority}" for x in q.roce_dscp)),
            ("DSCP -> priority (CNP, strict)", f"{q.cnp_dscp} -> {q.cnp_priority}"),
            ("PFC priorities", ", ".join(map(str, q.pfc_priorities))),
            ("ECN min threshold (bytes)", q.ecn.min_threshold_bytes),
            ("ECN max threshold (bytes)", q.ecn.max_threshold_bytes),
            ("ECN mark probability at max (%)", q.ecn.mark_probability_percent),
            (
                "PFC watchdog",
                f"{wd.action}, poll {wd.poll_interval_ms} ms, detect {wd.detection_time_ms} ms, restore "
                f"{wd.restoration_time_ms} ms"
                if wd.enabled
                else "off",
            ),
            ("DWRR weights (lossless / lossy)", f"{q.lossless_weight} / {q.lossy_weight}"),
            ("switch MTU (bytes)", q.switch_mtu),
            ("host MTU (bytes)", q.host_mtu),
            ("host RoCE ToS (RDMA-CM)", tos),
        ],
        "ll",
    )
    lines.append("")
    return "\n".join(lines)
