"""SONiC config_db.json of a switch, rendered from the plan, and its validator.

:func:`render_config_db` (plan, switch) gives the config_db as a dict, tables in the order of
:data:`hwaac.render.sonic.generators.GENERATORS`; :func:`hwaac.render.sonic.validate.validate_config_db` checks
one against SONiC's YANG constraints and hwaac's cross-table rules. Every dict and list of a result is new, so
callers may modify it. The conventions (explicit RoCE QoS, active ports, BGP in frrcfgd's schema, releases,
rail subnets, dynamic buffers): docs/render-sonic.md.
"""

from __future__ import annotations

from typing import Any

from hwaac.plan.model import Plan, Switch
from hwaac.render.sonic.context import SwitchContext
from hwaac.render.sonic.generators import GENERATORS
from hwaac.render.sonic.validate import validate_config_db

__all__ = ["GENERATORS", "render_config_db", "validate_config_db"]


def render_config_db(plan: Plan, switch: Switch) -> dict[str, Any]:
    """Render the config_db.json content of ``switch`` (a member of ``plan.switches``).

    Returns:
        ``{table: {key: {field: str | list[str]}}}`` with tables in a fixed order and keys in port order; tables
        that do not apply to the switch (VLAN outside rail_subnet mode, PFC_WD when the watchdog is off) are
        absent.
    """
    ctx = SwitchContext(plan, switch)
    cfg: dict[str, Any] = {}
    for gen in GENERATORS:
        table = gen.generate(ctx)
        if table:
            cfg[gen.table] = table
    return cfg
