"""Desired ConnectX firmware and RoCE runtime state of a host's NIC ports: ``nic-roce.json``.

Per NIC port: interface, HCA, mlxconfig parameters (next boot), trust, PFC, DSCP-to-priority map, ToS, ECN,
CNP and MTU; keys sorted, 2-space indent. The shape with each field's tool and the sources (nic-configuration-
operator, MLNX_OFED/DOCA): docs/render-host.md.
"""

from __future__ import annotations

import orjson

from hwaac.render.host._context import HostContext, Rail

PATH = "nic-roce.json"


def nic_port(r: Rail, ctx: HostContext) -> dict[str, object]:
    """Desired state of one NIC port (shape in the module docstring)."""
    return {
        "port": r.ordinal,
        "rail": r.rail,
        "plane": r.plane,
        "interface": r.interface,
        "hca": r.hca,
        "mlxconfig": dict(ctx.mlxconfig),
        "trust": ctx.trust,
        "pfc": ctx.pfc,
        "dscp2prio": dict(ctx.dscp2prio),
        "roce_tos": ctx.tos,
        "ecn": {"np_priorities": list(ctx.ecn_priorities), "rp_priorities": list(ctx.ecn_priorities)},
        "cnp": dict(ctx.cnp),
        "mtu": ctx.mtu,
    }


def render_nic_roce(node_name: str, rails: list[Rail], ctx: HostContext) -> str:
    """The text of ``nic-roce.json`` for one host (``rails`` in NIC order)."""
    key = ("nic", tuple((r.ordinal, r.rail, r.plane, r.interface, r.hca) for r in rails))
    ports = ctx.memo.get(key)
    if ports is None:
        text = orjson.dumps([nic_port(r, ctx) for r in rails], option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        ports = text.decode().replace("\n", "\n  ")  # nested one level under the top-level object
        ctx.memo[key] = ports
    # Same bytes as orjson.dumps({"node": ..., "ports": [...]}, OPT_INDENT_2 | OPT_SORT_KEYS) plus "\n",
    # with the ports text shared by every host that has the same NIC ports.
    return f'{{\n  "node": {orjson.dumps(node_name).decode()},\n  "ports": {ports}\n}}\n'
