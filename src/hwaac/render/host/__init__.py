"""Per-host files of a GPU node or appliance: rail networking, RDMA sysctls, NIC/RoCE state, NCCL env.

Public function: :func:`render_host_files`. Each file's module documents its shape, units and sources:

- ``netplan/60-hwaac-rails.yaml`` (:mod:`.netplan`): rail addresses, MTU, one table + source rule per NIC port
  (on GPU nodes, plus the storage servers' prefixes of ``storage.lnet.networks[].routes`` on their rails);
- ``sysctl.d/90-hwaac-rdma.conf`` (:mod:`.sysctl`): ARP/rp_filter settings (conf.all), neighbour tables;
- ``nic-roce.json`` (:mod:`.nic`): desired mlxconfig, trust/PFC/DSCP map, ToS, ECN and CNP per NIC port;
- ``nccl.env`` (:mod:`.nccl`, GPU nodes only): NCCL_IB_HCA, NCCL_IB_GID_INDEX, NCCL_IB_TC and extras;
- ``lustre-client.json`` (:mod:`.lustre`, GPU nodes only, when the intent has a ``storage`` section): LNet
  networks on the node's rail interfaces, the Lustre file systems, their mounts and scoped tunables.

A node's NIC ports are its host links (``Plan.links_by_device[node.name]`` of kind ``host``) in NIC order,
ordinal = rail * planes + plane; the same ordinal picks the routing table and rule priority. Facts shared by all
hosts of a plan are computed once per plan (:mod:`._context`), so a 12,500-host fabric renders in about a second.
The plan is expected to come from a validated intent (``build_plan`` with validation on): the intent rules, not
the renderers, refuse reserved routing tables, late source rules and unusable NCCL variables.
"""

from __future__ import annotations

from hwaac.plan.model import Node, Plan
from hwaac.render.host import lustre, nccl, netplan, nic, sysctl
from hwaac.render.host._context import context, rails_of

__all__ = ["render_host_files"]


def render_host_files(plan: Plan, node: Node) -> dict[str, str]:
    """Render the files of one host.

    Args:
        plan: the fabric plan (``hwaac.plan.build_plan``).
        node: one of ``plan.nodes``.

    Returns:
        Relative path -> file text (each ends with a newline), in this order: ``netplan/60-hwaac-rails.yaml``,
        ``sysctl.d/90-hwaac-rdma.conf``, ``nic-roce.json`` and, for GPU nodes (``node.kind == "gpu"``) only,
        ``nccl.env`` and, when the intent has a ``storage`` section, ``lustre-client.json``. The netplan file
        should be installed as /etc/netplan/60-hwaac-rails.yaml with mode 0600.
    """
    ctx = context(plan)
    rails = rails_of(plan, node, ctx)
    name = node.name
    storage = plan.intent.storage if node.kind == "gpu" else None  # GPU nodes are the Lustre clients
    files = {
        netplan.PATH: netplan.render_netplan(name, rails, ctx, storage),
        sysctl.PATH: sysctl.render_sysctl(name, rails, ctx),
        nic.PATH: nic.render_nic_roce(name, rails, ctx),
    }
    if node.kind == "gpu":
        files[nccl.PATH] = nccl.render_nccl_env(name, rails, ctx)
        if storage is not None:
            files[lustre.PATH] = lustre.render_lustre_client(name, rails, storage, ctx)
    return files
