"""``ip-plan.csv``: every address the plan assigns, one row per address.

Columns (header row first):

============== ===========================================================================================
device          the device holding the address
interface       ``Loopback0``; a port (SONiC port name on switches, Linux interface name on hosts); or, in
                ``rail_subnet`` mode, the leaf's gateway interface ``Vlan<1000 + rail>`` (:func:`rail_vlan_interface`)
address         address with the prefix length of its subnet, e.g. ``172.16.0.1/31``; loopbacks are ``/32``
role            ``node`` | ``appliance`` | ``leaf`` | ``spine`` | ``super_spine``
peer_device     the other end of the subnet: the /31 peer, or for a host in ``rail_subnet`` mode its gateway
                leaf; empty for loopbacks and gateways
peer_interface  the peer's interface (as in ``interface``); empty where ``peer_device`` is
kind            ``loopback``, or the link kind: ``host`` | ``leaf_spine`` | ``spine_super_spine``
                (gateways of rail subnets are ``host``)
plane           fabric plane, 0-based
cable_id        the cable of the link (as in ``cabling.csv``); empty for loopbacks and gateways
============== ===========================================================================================

Order: switch loopbacks (plan order of switches), then in ``rail_subnet`` mode one gateway row per leaf (leaf
order), then per link in plan order its lower-tier end then its upper-tier end. In ``rail_subnet`` mode the
leaf side of a host link is the leaf's single gateway, listed once, so host links give one row each.

Sources: :class:`hwaac.plan.model.Switch` (``loopback``), :class:`hwaac.plan.model.Link` (``a_ip``, ``b_ip``,
``prefixlen``) and, for gateways, :meth:`hwaac.plan.model.Plan.rail_subnet` (the leaf gateway is the first
address of its rail subnet). Rows end with ``\\n``.
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
    rows = []
    append = rows.append
    for ln in plan.links:
        kind, sfx = ln.kind, suffixes[ln.prefixlen]
        if kind == "host":
            a_role = node_role[ln.a_device]
            if rail_subnet:
                append((ln.a_device, ln.a_port, ip_str(ln.a_ip) + sfx, a_role, ln.b_device,
                        gateway_if[ln.b_device], kind, ln.plane, ln.cable_id))
                continue
        else:
            a_role = "leaf" if kind == "leaf_spine" else "spine"
        append((ln.a_device, ln.a_port, ip_str(ln.a_ip) + sfx, a_role, ln.b_device, ln.b_port, kind, ln.plane,
                ln.cable_id))
        append((ln.b_device, ln.b_port, ip_str(ln.b_ip) + sfx, _UPPER_ROLE[kind], ln.a_device, ln.a_port, kind,
                ln.plane, ln.cable_id))
    w.writerows(rows)
    return buf.getvalue()
