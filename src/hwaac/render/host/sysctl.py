"""sysctl.d drop-in for multi-rail RDMA hosts: ``sysctl.d/90-hwaac-rdma.conf``.

Contents, in this order (``key = value`` lines, sysctl.d(5) syntax):

1. ``intent.host.sysctl`` as written. Defaults: ``net.ipv4.conf.all.arp_ignore = 1`` (answer ARP only on the
   interface that owns the address), ``arp_announce = 2`` (use the best local source in ARP requests),
   ``rp_filter = 2`` (loose: strict reverse-path filtering "can cause the RDMA v2 packets to be silently
   dropped", IBM Linux-on-Z SMC-R high-availability considerations; AMD Instinct guide and losslessnetwork.com
   for the ARP pair; domain note section 5).
2. Neighbour-table sizing ``net.ipv4.neigh.default.gc_thresh1/2/3`` (entries), from the node count at the
   design capacity (``su_capacity x nodes_per_su``) and the NIC ports per node, see
   :func:`hwaac.render.host._context.neighbour_thresholds` (HPE/Cray: gc_thresh1 = nodes x NICs^2, capped).
   Sized for the capacity, so adding SUs does not change existing hosts' files. Left out for any threshold the
   intent sets itself.

No per-rail ``net.ipv4.conf.<iface>.*`` copies: for these three keys the kernel applies the larger of
``conf/all`` and ``conf/<iface>`` (Documentation/networking/ip-sysctl.rst: arp_ignore and arp_announce "The max
value from conf/{all,interface}/... is used"; rp_filter "The max value from conf/{all,interface}/rp_filter is
used"), so ``conf.all`` alone already holds on every rail, including NICs that appear after boot. Per-interface
keys would also make ``systemd-sysctl`` fail at boot when it runs before the rail interfaces exist. Because it
is a maximum, ``conf.all`` is a floor: a rail can only be stricter than it, and rp_filter = 2 (loose) is the
highest mode, so a rail cannot fall back to strict filtering. This file is the same for every host of a plan.
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
    return (f"# Rendered by hwaac for {node_name} (fabric {ctx.fabric}); do not edit, re-render from the "
            f"intent.\n{body}")
