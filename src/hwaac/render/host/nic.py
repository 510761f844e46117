"""Desired ConnectX firmware and RoCE runtime state of a host's NIC ports: ``nic-roce.json``.

Shape (keys sorted, 2-space indent, trailing newline)::

    {"node": "gpu-su01-h01",
     "ports": [                                  # NIC order: ordinal = rail * planes + plane
       {"port": 0, "rail": 0, "plane": 0,
        "interface": "rail0",                    # Linux netdev
        "hca": "mlx5_0",                         # RDMA device (mlxconfig -d / cma_roce_tos -d target)
        "mlxconfig": {"LINK_TYPE_P1": 2, ...},   # firmware params, mlxconfig names and values (next boot)
        "trust": "dscp",                         # mlnx_qos --trust
        "pfc": "0,0,0,1,0,0,0,0",                # mlnx_qos --pfc, priority 0..7, from qos.pfc_priorities
        "dscp2prio": {"26": 3, "48": 6},         # mlnx_qos --dscp2prio set,<dscp>,<prio> (explicit, not dscp>>3)
        "roce_tos": 106,                         # ToS byte: cma_roce_tos -t and tc/1/traffic_class
        "ecn": {"np_priorities": [3], "rp_priorities": [3]},   # /sys/class/net/<if>/ecn/roce_{np,rp}/enable/<p>
        "cnp": {"dscp": 48, "priority": 6},      # congestion notification packets (qos.cnp_*)
        "mtu": 9000}]}                           # netdev MTU in bytes (qos.host_mtu)

Sources (domain note section 4): nvconfig parameters from Mellanox/nic-configuration-operator
(LINK_TYPE_P1=2 ETH, ROCE_CC_PRIO_MASK_P1, CNP_DSCP_P1, CNP_802P_PRIO_P1, ATS_ENABLED=0 for GPUDirect); the
runtime QoS commands from MLNX_OFED/DOCA (mlnx_qos, "Explicit Congestion Notification" sysfs); ToS 106 =
DSCP 26 << 2 | ECT(0). Firmware values land in "Next Boot" and need a reboot or mlxfwreset; the rest is
runtime state that the apply side re-asserts after every boot.
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
