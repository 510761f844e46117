"""sysctl.d drop-in for multi-rail RDMA hosts: ``sysctl.d/90-hwaac-rdma.conf``.

``intent.host.sysctl`` as written (ARP and rp_filter on ``conf.all``: the kernel applies the larger of
``conf/all`` and ``conf/<iface>``), then neighbour-table sizing from the design capacity
(:func:`hwaac.render.host._context.neighbour_thresholds`) unless the intent sets it. The same for every host of
a plan. Why and sources: docs/render-host.md.
"""

from __future__ import annotations

from hwaac.render.host._context import HostContext, Rail

PATH = "sysctl.d/90-hwaac-rdma.conf"


def render_sysctl(node_name: str, rails: list[Rail], ctx: HostContext) -> str:
    """The text of ``sysctl.d/90-hwaac-rdma.conf`` for one host (independent of ``rails``, see module docstring)."""
    del rails  # conf.all covers every interface (kernel max rule); the signature matches the other renderers
    key = ("sysctl",)
    body = ctx.memo.get(key)
    if body is None:
        lines = [
            "# Multi-rail RDMA host settings (intent host.sysctl). conf.all covers every rail: for arp_ignore,\n",
            "# arp_announce and rp_filter the kernel uses max(conf.all, conf.<iface>) (ip-sysctl.rst).\n",
        ]
        lines += [f"{k} = {v}\n" for k, v in ctx.sysctl_base]
        if ctx.neighbour:
            capacity, per_su, nodes, nics = ctx.neighbour_basis
            lines.append(
                f"# Neighbour tables: gc_thresh1 = nodes x NICs^2 = {nodes} x {nics}^2, nodes at capacity "
                f"({capacity} SUs x {per_su}) (HPE Slingshot/Cray ARP settings), capped at 65536; "
                "gc_thresh2/3 = 2x/4x gc_thresh1.\n"
            )
            lines += [f"{k} = {v}\n" for k, v in ctx.neighbour]
        body = "".join(lines)
        ctx.memo[key] = body
    return f"# Rendered by hwaac for {node_name} (fabric {ctx.fabric}); do not edit, re-render from the intent.\n{body}"
