"""``cabling.csv``: the cabling schedule, one row per cable, both ends.

Columns (header row first; rows in plan order: host links, then leaf-spine, then spine-super-spine):

======== ==========================================================================================
cable_id  the plan's unique cable id (``H``/``L``/``S`` + ordinal, :mod:`hwaac.plan.cabling`)
kind      ``host`` | ``leaf_spine`` | ``spine_super_spine``
plane     fabric plane, 0-based
a_device  lower-tier end: GPU node or appliance (host links), leaf, or spine
a_port    its port: the Linux interface name on hosts (``host.interface_name``), the SONiC port on switches
b_device  upper-tier end: leaf, spine or super-spine
b_port    its SONiC port name
speed_gbps  link speed in Gb/s: ``fabric.host_port_speed_gbps`` for host links; for switch-to-switch links
            the port speed of the two ends' switch models (``port_speed_gbps`` of the catalog or
            ``switch_models``), the lower one if they differ
rail      0-based rail of host links; empty for switch-to-switch links
======== ==========================================================================================

Rows end with ``\\n`` (not the RFC 4180 ``\\r\\n``) so the files diff cleanly under version control.
"""

from __future__ import annotations

import csv
import io

from hwaac.plan.model import Plan

COLUMNS = ("cable_id", "kind", "plane", "a_device", "a_port", "b_device", "b_port", "speed_gbps", "rail")


def link_speeds(plan: Plan) -> dict[str, int]:
    """Speed in Gb/s of each link kind (see the module docstring)."""
    d = plan.design
    speeds = {
        "host": plan.intent.fabric.host_port_speed_gbps,
        "leaf_spine": min(d.leaf_model.port_speed_gbps, d.spine_model.port_speed_gbps),
    }
    if d.super_spine_model is not None:
        speeds["spine_super_spine"] = min(d.spine_model.port_speed_gbps, d.super_spine_model.port_speed_gbps)
    return speeds


def render_cabling_csv(plan: Plan) -> str:
    """The cabling schedule of ``plan`` as CSV text (columns in the module docstring)."""
    speeds = link_speeds(plan)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    w.writerows(
        (ln.cable_id, ln.kind, ln.plane, ln.a_device, ln.a_port, ln.b_device, ln.b_port, speeds[ln.kind], ln.rail)
        for ln in plan.links
    )
    return buf.getvalue()
