"""``cabling.csv``: the cabling schedule, one row per cable, both ends.

Columns cable_id, kind, plane, a_device, a_port, b_device, b_port, speed_gbps, rail; rows in plan order (host
links, leaf-spine, spine-super-spine), ending with ``\\n``. Each column's meaning: docs/render.md, "cabling.csv".
"""

from __future__ import annotations

import csv
import io

from hwaac.plan.model import Plan

COLUMNS = ("cable_id", "kind", "plane", "a_device", "a_port", "b_device", "b_port", "speed_gbps", "rail")


def link_speeds(plan: Plan) -> dict[str, int]:
    """Speed in Gb/s of each link kind (see the module docstring)."""
    d = plan.design
    speeds: dict[str, int] = {
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
