"""sysctl.d drop-in for multi-rail RDMA hosts: ``sysctl.d/90-hwaac-rdma.conf``.

Contents, in this order (``key = value`` lines, sysctl.d(5) syntax):

1. ``intent.host.sysctl`` as written. Defaults: ``net.ipv4.conf.all.arp_ignore = 1`` (answer ARP only on the
   interface that owns the address), ``arp_announce = 2`` (use the best local source in ARP requests),
   ``rp_filter = 2`` (loose: strict reverse-path filtering "can cause the RDMA v2 packets to be silently
   dropped", IBM Linux-on-Z SMC-R high-availability considerations; AMD Instinct guide and losslessnetwork.com
   for the ARP pair; domain note section 5).
2. A per-rail copy of every ``net.ipv4.conf.all.*`` key (``net.ipv4.conf.<iface>.<key>``), so a later change to
   ``all`` cannot weaken the rails. systemd-udevd re-applies ``net/ipv4/conf/<iface>`` keys when the interface
   appears (99-systemd.rules runs systemd-sysctl --prefix for it), so they hold for NICs that probe late.
   Interface names containing a dot (VLANs) use the slash form, where dots stay part of the name.
3. Neighbour-table sizing ``net.ipv4.neigh.default.gc_thresh1/2/3`` (entries), from the fabric's node count and
   NIC ports per node, see :func:`hwaac.render.host._context.neighbour_thresholds` (HPE/Cray: gc_thresh1 =
   nodes x NICs^2, capped). Left out for any threshold the intent sets itself.
"""

from __future__ import annotations

from hwaac.render.host._context import HostContext, Rail

PATH = "sysctl.d/90-hwaac-rdma.conf"


def _iface_key(iface: str, leaf: str) -> str:
    if "." in iface:
        return f"net/ipv4/conf/{iface}/{leaf}"
    return f"net.ipv4.conf.{iface}.{leaf}"


def render_sysctl(node_name: str, rails: list[Rail], ctx: HostContext) -> str:
    """The text of ``sysctl.d/90-hwaac-rdma.conf`` for one host (``rails`` in NIC order)."""
    key = ("sysctl", tuple(r.interface for r in rails))
    body = ctx.memo.get(key)
    if body is None:
        lines = ["# Multi-rail RDMA host settings (intent host.sysctl).\n"]
        lines += [f"{k} = {v}\n" for k, v in ctx.sysctl_base]
        if ctx.conf_all_keys and rails:
            lines.append("# Per-rail copies of the net.ipv4.conf.all keys.\n")
            for r in rails:
                lines += [f"{_iface_key(r.interface, leaf)} = {v}\n" for leaf, v in ctx.conf_all_keys]
        if ctx.neighbour:
            nodes, nics = ctx.neighbour_basis
            lines.append(
                f"# Neighbour tables: gc_thresh1 = nodes x NICs^2 = {nodes} x {nics}^2 (HPE Slingshot/Cray ARP "
                "settings), capped at 65536; gc_thresh2/3 = 2x/4x gc_thresh1.\n"
            )
            lines += [f"{k} = {v}\n" for k, v in ctx.neighbour]
        body = "".join(lines)
        ctx.memo[key] = body
    return (f"# Rendered by hwaac for {node_name} (fabric {ctx.fabric}); do not edit, re-render from the "
            f"intent.\n{body}")
