"""Fabric documents rendered from a plan: cabling and IP CSVs, a Markdown report and a topology picture.

Public function: :func:`render_docs`. Every document is a pure function of the plan (no timestamps, no random
ids), so rendering the same plan twice gives byte-identical files. Each module's docstring states its columns,
units and sources.
"""

from __future__ import annotations

from hwaac.plan.model import Plan
from hwaac.render.docs.cabling import render_cabling_csv
from hwaac.render.docs.ipplan import rail_vlan_interface, render_ip_plan_csv
from hwaac.render.docs.report import render_report
from hwaac.render.docs.topology import render_topology_svg

__all__ = [
    "rail_vlan_interface",
    "render_cabling_csv",
    "render_docs",
    "render_ip_plan_csv",
    "render_report",
    "render_topology_svg",
]


def render_docs(plan: Plan) -> dict[str, str]:
    """Render the fabric documents of ``plan``.

    Returns:
        File name -> text content, in this order:

        - ``cabling.csv``: one row per cable (:func:`render_cabling_csv`);
        - ``ip-plan.csv``: one row per assigned address (:func:`render_ip_plan_csv`);
        - ``report.md``: counts, port usage, oversubscription, sizing, pools, ASNs, QoS (:func:`render_report`);
        - ``topology.svg``: SU 1 with its leaves, spines and nodes, per plane (:func:`render_topology_svg`).
    """
    return {
        "cabling.csv": render_cabling_csv(plan),
        "ip-plan.csv": render_ip_plan_csv(plan),
        "report.md": render_report(plan),
        "topology.svg": render_topology_svg(plan),
    }
