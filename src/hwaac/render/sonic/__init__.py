"""SONiC config_db.json of a switch, rendered from the plan, and its validator.

Public functions:

- :func:`render_config_db` (plan, switch) -> the config_db as a dict, tables in the order of
  :data:`hwaac.render.sonic.generators.GENERATORS` (one generator class per table, named after it);
- :func:`hwaac.render.sonic.validate.validate_config_db` (config, intent=None, release=None) -> human-readable
  errors (``config_db.schema.json`` with SONiC's YANG constraints, plus cross-reference checks).

Conventions (see the generators' module and class docstrings for each field's meaning and source):

- the whole RoCE QoS is written explicitly (maps named ``ROCE``, WRED ``ROCE_LOSSLESS``, schedulers
  ``scheduler.lossy|lossless|cnp``), never relying on the SKU's qos.json.j2 defaults;
- "active" ports are the linked ones (those in DEVICE_NEIGHBOR); QUEUE, PORT_QOS_MAP, PFC_WD, CABLE_LENGTH
  and BUFFER_PG cover exactly those; PORT_QOS_MAP uses one key per port plus ``global``;
- BGP is written in frrcfgd's schema (``frr_mgmt_framework_config`` true): BGP_GLOBALS, BGP_NEIGHBOR
  ``default|<address>`` with BGP_NEIGHBOR_AF, and one network statement (BGP_GLOBALS_AF_NETWORK) per announced
  prefix: the loopback and a leaf's host links -- bgpcfgd's templates in unified mode would announce neither the
  host /31s nor anything but Loopback0 and VLAN_INTERFACE prefixes (sources in
  :mod:`hwaac.render.sonic.generators`);
- the switch role's SONiC release (``switches.<role>.sonic_release``) decides where SONiC's code paths disagree:
  BGP admin_status values, DEVICE_METADATA fields (:mod:`hwaac.model.sonic_releases`, docs/sonic-releases.md);
- rail_subnet host-link mode: every leaf has ``Vlan<1000 + rail>`` with the rail subnet's gateway on
  VLAN_INTERFACE, cabled host downlinks are its untagged members; fabric links are always routed /31s;
- buffers: buffer_model dynamic with BUFFER_PG ``<port>|<PFC priorities>`` profile NULL (headroom computed by
  buffermgrd), DEFAULT_LOSSLESS_BUFFER_PARAMETER and LOSSLESS_TRAFFIC_PATTERN; pools, profiles, queues and the
  lossy PG 0 stay with the SKU's buffer template.

Every dict and list in a rendered config is new; only immutable strings are shared between configs, so callers
may modify a result without affecting another switch's.
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
