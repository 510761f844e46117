"""Planning: intent -> devices, port-level cabling, addresses and ASNs. Pure and deterministic.

Public functions: :func:`build_plan`, :func:`hwaac.plan.diff.diff_plans`.
"""

from __future__ import annotations

from hwaac.errors import IntentError
from hwaac.model.intent import Intent
from hwaac.model.rules import check_intent
from hwaac.plan.cabling import host_links, leaf_spine_links, spine_super_spine_links
from hwaac.plan.design import derive
from hwaac.plan.ipam import parse_pools
from hwaac.plan.model import Link, Node, Plan, Switch
from hwaac.plan.rules import check_fabric
from hwaac.plan.topology import leaves, nodes, spines, super_spines

__all__ = ["Link", "Node", "Plan", "Switch", "build_plan"]


def build_plan(intent: Intent, *, validate: bool = True) -> Plan:
    """Compute the full plan of ``intent``.

    Args:
        intent: a schema-valid intent (from :func:`hwaac.validate.load_intent` or built in code).
        validate: run the semantic rules first (skip only when the caller just did).

    Returns:
        A :class:`Plan`; the same intent always gives the same plan, in the same order.

    Raises:
        IntentError: the intent breaks a semantic rule.
    """
    if validate:
        issues = check_intent(intent) + check_fabric(intent)
        if issues:
            raise IntentError(issues)
    design = derive(intent)
    pools, issues = parse_pools(intent)
    if pools is None:
        raise IntentError(issues)
    leaf_list = list(leaves(intent, design, pools))
    spine_list = list(spines(intent, design, pools))
    ss_list = list(super_spines(intent, design, pools))
    node_list = list(nodes(intent, design))
    leaf_by_ordinal = {s.ordinal: s for s in leaf_list}
    spine_index = {((s.pod or 1) - 1, s.plane, s.group): s for s in spine_list}
    ss_index = {(s.plane, s.group, s.ordinal % design.super_spines_per_group): s for s in ss_list}
    links: list[Link] = []
    links.extend(host_links(intent, design, pools, node_list, leaf_by_ordinal))
    links.extend(leaf_spine_links(design, pools, leaf_list, spine_index))
    links.extend(spine_super_spine_links(design, pools, spine_list, ss_index))
    return Plan(
        intent=intent,
        design=design,
        switches=leaf_list + spine_list + ss_list,
        nodes=node_list,
        links=links,
        pools=pools,
    )
