"""netplan (v2) for a host's rail interfaces: addresses, MTU, one routing table and one source rule per NIC port.

Why per-port tables: with several NICs in the same aggregate, the main table sends everything out of one
interface (ARP flux, rp_filter drops). Each port gets its own table holding its link subnet and the host-link
aggregate via its own leaf, and a rule ``from <port address> table <T> priority <P>`` so traffic sourced from a
rail's address leaves on that rail. Numbers follow the AMD Instinct system acceptance guide (table 101..108,
``priority 1010 from <ip> table 101``); losslessnetwork.com "multi-rail source routing" explains the failure
modes (domain note section 5).

- table T = host.routing.table_base + ordinal; priority P = rule_priority_base + ordinal * rule_priority_step;
  ordinal = rail * planes + plane (NIC port order).
- Routes in T: the link subnet (scope link, so rail_subnet peers are reached directly) and the host-link
  block of its plane (``Plan.host_aggregate(plane)``) via the leaf address (p2p31) or leaf gateway
  (rail_subnet), with the port address as preferred source; then the switches' own pools (loopbacks and
  inter-switch links, ``HostContext.fabric_prefixes``) the same way, so that what switches send from those
  addresses (ICMP time exceeded to traceroute or hwaac's prober) passes the reverse-path filter, which drops a
  source the port's table has no route back to (Linux ``fib_validate_source``). Nothing is added to the main table.
- Storage routes (GPU nodes, when an LNet network of ``storage`` runs over this port's rail): each prefix of
  that network's ``routes`` via the same next hop as the host-link block, after it, in intent order (networks,
  then their routes; a prefix named by two networks on one rail once). LNet o2ib connects from the NI's own
  address, so RDMA CM looks the storage servers up in this table, not in main (o2iblnd_cb.c
  ``kiblnd_connect_peer``, Linux addr.c ``addr4_resolve``; hwaac.model.intent.LnetNetwork).
- ``dhcp4/dhcp6: false``, ``accept-ra: false`` and ``link-local: []``: rails are statically addressed and must
  not pick up IPv6 link-local or RA state; ``optional: true`` so boot does not wait for every rail cable.
- MTU = qos.host_mtu (bytes); RoCE then uses the largest IB MTU that fits (4096 needs >= 4200).
- All rails are in ONE file: a multi-file merge was observed to drop routes (gist iquiw/373a139e, domain note
  section 5). The management interface is never mentioned, so this file cannot break out-of-band access.

Written by string building, not a YAML dumper: ~12,500 hosts x 8 rails must render in about a second.
"""

from __future__ import annotations

import json
import re

from hwaac.model.intent import StorageSection
from hwaac.render.host._context import HostContext, Rail

PATH = "netplan/60-hwaac-rails.yaml"
_PLAIN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def _key(name: str) -> str:
    """An interface name as a YAML mapping key (double-quoted when it is not a plain safe scalar)."""
    return name if _PLAIN.match(name) else json.dumps(name)


def storage_routes(storage: StorageSection | None) -> dict[int, tuple[str, ...]]:
    """Rail (0-based) -> the prefixes its routing tables route for Lustre: the ``routes`` of every LNet network
    on ``rails`` that names it, in intent order, each prefix once per rail; ``{}`` without storage or routes.
    ``{0: ("10.20.0.0/16",), 1: ("10.20.0.0/16",)}`` for ``{net: o2ib0, rails: [0, 1], routes: [10.20.0.0/16]}``.
    """
    out: dict[int, dict[str, None]] = {}
    if storage is not None:
        for n in storage.lnet.networks:
            if n.rails is None or not n.routes:
                continue
            for rail in n.rails:
                out.setdefault(rail, {}).update(dict.fromkeys(n.routes))
    return {rail: tuple(prefixes) for rail, prefixes in out.items()}


def render_netplan(node_name: str, rails: list[Rail], ctx: HostContext,
                   storage: StorageSection | None = None) -> str:
    """The text of ``netplan/60-hwaac-rails.yaml`` for one host (``rails`` in NIC order).

    ``storage``: the intent's storage section for a GPU node (a Lustre client), None for appliances or a fabric
    without storage; its rails networks' ``routes`` join the tables of their rails (:func:`storage_routes`).
    """
    mtu = ctx.mtu
    extra = storage_routes(storage)
    parts = [
        f"# Rendered by hwaac for {node_name} (fabric {ctx.fabric}); do not edit, re-render from the intent.\n"
        "# Rail ports: one routing table and one source rule per NIC port (install mode 0600).\n"
        "network:\n"
        "  version: 2\n"
        "  ethernets:" + ("\n" if rails else " {}\n")
    ]
    for r in rails:
        a, t = r.address, r.table
        parts.append(
            f"    {_key(r.interface)}:\n"
            "      dhcp4: false\n"
            "      dhcp6: false\n"
            "      accept-ra: false\n"
            "      link-local: []\n"
            "      optional: true\n"
            f"      mtu: {mtu}\n"
            "      addresses:\n"
            f"        - {a}/{r.prefixlen}\n"
            "      routes:\n"
            f"        - to: {r.network}/{r.prefixlen}\n"
            "          scope: link\n"
            f"          from: {a}\n"
            f"          table: {t}\n"
            f"        - to: {ctx.aggregates[r.plane]}\n"
            f"          via: {r.peer}\n"
            f"          from: {a}\n"
            f"          table: {t}\n"
        )
        for prefix in (*ctx.fabric_prefixes, *extra.get(r.rail, ())):
            parts.append(
                f"        - to: {prefix}\n"
                f"          via: {r.peer}\n"
                f"          from: {a}\n"
                f"          table: {t}\n"
            )
        parts.append(
            "      routing-policy:\n"
            f"        - from: {a}\n"
            f"          table: {t}\n"
            f"          priority: {r.priority}\n"
        )
    return "".join(parts)
