"""netplan (v2) for a host's rail interfaces: addresses, MTU, one routing table and one source rule per NIC port.

Table T = host.routing.table_base + ordinal, rule ``from <port address> table T priority P``, so traffic sourced
from a rail's address leaves on that rail; T holds the link subnet, the plane's host-link block, the switches'
pools and (GPU nodes) the storage routes of the rail's LNet networks. All rails in one file, the management
interface never named; written by string building for speed. Why, with sources: docs/render-host.md.
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


def render_netplan(node_name: str, rails: list[Rail], ctx: HostContext, storage: StorageSection | None = None) -> str:
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
                f"        - to: {prefix}\n          via: {r.peer}\n          from: {a}\n          table: {t}\n"
            )
        parts.append(
            f"      routing-policy:\n        - from: {a}\n          table: {t}\n          priority: {r.priority}\n"
        )
    return "".join(parts)
