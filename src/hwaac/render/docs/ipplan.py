"""``ip-plan.csv``: every address the plan assigns, one row per address.

Columns device, interface, address, role, peer_device, peer_interface, kind, plane, cable_id; rows: switch
loopbacks, then (``rail_subnet`` mode) one gateway per leaf, then both ends of each link in plan order. Each
column's meaning and source: docs/render.md, "ip-plan.csv".
"""

from __future__ import annotations

import csv
import io

from hwaac.plan.model import Plan, ip_str, rail_vlan_id

COLUMNS = ("device", "interface", "address", "role", "peer_device", "peer_interface", "kind", "plane", "cable_id")

_UPPER_ROLE = {"host": "leaf", "leaf_spine": "spine", "spine_super_spine": "super_spine"}


def rail_vlan_interface(rail: int) -> str:
    """Name of a leaf's gateway interface for its rail subnet in ``rail_subnet`` mode (VLAN 1000 + rail)."""
    return f"Vlan{rail_vlan_id(rail)}"


def render_ip_plan_csv(plan: Plan) -> str:
    """The IP plan of ``plan`` as CSV text (columns and order in the module docstring)."""
    intent = plan.intent
    rail_subnet = intent.addressing.host_links.mode == "rail_subnet"
    node_role = {n.name: ("node" if n.kind == "gpu" else "appliance") for n in plan.nodes}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    w.writerows(
        (s.name, "Loopback0", ip_str(s.loopback) + "/32", s.role, "", "", "loopback", s.plane, "")
        for s in plan.switches
    )
    gateway_if: dict[str, str] = {}
    if rail_subnet:
        for s in plan.switches:
            if s.role != "leaf":
                continue
            _net, plen, gw = plan.rail_subnet(s)
            iface = gateway_if[s.name] = rail_vlan_interface(s.rail or 0)
            w.writerow((s.name, iface, f"{ip_str(gw)}/{plen}", "leaf", "", "", "host", s.plane, ""))

    suffixes = {n: f"/{n}" for n in range(33)}
    rows: list[tuple[object, ...]] = []
    append = rows.append
    for ln in plan.links:
        kind, sfx = ln.kind, suffixes[ln.prefixlen]
        if kind == "host":
            a_role = node_role[ln.a_device]
            if rail_subnet:
                append(
                    (
                        ln.a_device,
                        ln.a_port,
                        ip_str(ln.a_ip) + sfx,
                        a_role,
                        ln.b_device,
                        gateway_if[ln.b_device],
                        kind,
                        ln.plane,
                        ln.cable_id,
                    )
                )
                continue
        else:
            a_role = "leaf" if kind == "leaf_spine" else "spine"
        append(
            (ln.a_device, ln.a_port, ip_str(ln.a_ip) + sfx, a_role, ln.b_device, ln.b_port, kind, ln.plane, ln.cable_id)
        )
        append(
            (
                ln.b_device,
                ln.b_port,
                ip_str(ln.b_ip) + sfx,
                _UPPER_ROLE[kind],
                ln.a_device,
                ln.a_port,
                kind,
                ln.plane,
                ln.cable_id,
            )
        )
    w.writerows(rows)
    return buf.getvalue()
