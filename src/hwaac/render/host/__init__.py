"""Per-host files of a GPU node or appliance: rail networking, RDMA sysctls, NIC/RoCE state, NCCL env.

:func:`render_host_files` writes ``netplan/60-hwaac-rails.yaml`` (:mod:`.netplan`), ``sysctl.d/90-hwaac-rdma.conf``
(:mod:`.sysctl`), ``nic-roce.json`` (:mod:`.nic`) and, on GPU nodes, ``nccl.env`` (:mod:`.nccl`) and
``lustre-client.json`` (:mod:`.lustre`, with a ``storage`` section). NIC ports are in NIC order, ordinal = rail *
planes + plane; facts shared by all hosts are computed once per plan (:mod:`._context`); the plan is trusted as
validated. Shapes, units and sources: docs/render-host.md.
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
