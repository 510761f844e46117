"""The plan: every device, port-level link, address and ASN of a fabric, computed from the intent.

Addresses are kept as 32-bit integers (IPv4) and formatted only when rendered; a 100k-GPU fabric holds about
300,000 links, so the records are slotted dataclasses and strings (device and port names) are shared.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from hwaac.model.intent import Intent
from hwaac.plan.design import Design
from hwaac.plan.ipam import Pools, host_link_addresses, plane_block, rail_subnet_prefixlen

Role = Literal["leaf", "spine", "super_spine"]
LinkKind = Literal["host", "leaf_spine", "spine_super_spine"]


def ip_str(addr: int) -> str:
    """Dotted-quad text of an IPv4 address held as an int (stdlib inet_ntoa: ~6x faster than netaddr here,
    which matters when formatting 600,000 addresses; pools themselves are parsed and checked with netaddr)."""
    return socket.inet_ntoa(addr.to_bytes(4, "big"))


RAIL_VLAN_BASE = 1000


def rail_vlan_id(rail: int) -> int:
    """VLAN id of a leaf's rail subnet in ``rail_subnet`` host-link mode: 1000 + rail (0-based).

    VLAN ids are local to a switch; one id per rail keeps a rail's leaves alike across SUs.
    """
    return RAIL_VLAN_BASE + rail


@dataclass(slots=True)
class Switch:
    """A switch. ``ordinal`` is its growth-stable index within its role (the basis of its loopback)."""

    name: str
    role: Role
    plane: int  # 0-based
    ordinal: int
    model: str  # switch model name (the intent's switches.<role>.model); resolved in Plan.design
    asn: int
    loopback: int  # IPv4 as int, /32
    su: int | None = None  # leaves: 1-based SU
    rail: int | None = None  # leaves: 0-based rail
    pod: int | None = None  # 3 tiers: 1-based pod of leaves and spines
    group: int | None = None  # spines: index within plane/pod; super-spines: the spine index they serve


@dataclass(slots=True)
class Node:
    """A GPU node or an appliance in an SU slot. ``ports`` lists (plane, rail) pairs it is cabled on."""

    name: str
    kind: Literal["gpu", "appliance"]
    su: int  # 1-based
    slot: int  # 1-based; leaf downlink port index slot-1
    rails: tuple[int, ...]


@dataclass(slots=True)
class Link:
    """One cable. ``a`` is the lower tier end (host NIC, leaf or spine), ``b`` the upper (leaf, spine, super-spine).

    ``network`` / ``prefixlen`` is the link subnet (a /31, or the rail subnet in rail_subnet mode);
    ``a_ip`` and ``b_ip`` are the two ends' addresses as ints (``b_ip`` is the leaf gateway in rail_subnet mode).
    For host links ``a_port`` is the Linux interface name and ``hca`` the RDMA device.
    """

    kind: LinkKind
    cable_id: str
    a_device: str
    a_port: str
    b_device: str
    b_port: str
    network: int
    prefixlen: int
    a_ip: int
    b_ip: int
    plane: int
    rail: int | None = None
    hca: str | None = None


@dataclass
class Plan:
    """A complete fabric plan (see module docstring)."""

    intent: Intent
    design: Design
    switches: list[Switch]
    nodes: list[Node]
    links: list[Link]
    pools: Pools

    def host_aggregate(self, plane: int) -> tuple[int, int]:
        """(network, prefixlen) of the host-link block of ``plane``: what a host routes through that plane's rails."""
        return plane_block(self.pools.host_links, self.design.planes, plane)

    def rail_subnet(self, leaf: Switch) -> tuple[int, int, int]:
        """rail_subnet mode: (network, prefixlen, gateway) of a leaf's subnet, whether or not hosts are cabled yet."""
        d = self.design
        assert leaf.su is not None and leaf.rail is not None  # a leaf has both
        net, plen, _host, gateway = host_link_addresses(
            self.intent,
            self.pools.host_links,
            leaf.plane,
            (leaf.su - 1) * d.rails + leaf.rail,
            d.leaf_downlinks,
            0,
            rail_subnet_prefixlen(self.intent, d),
        )
        return net, plen, gateway

    @cached_property
    def links_by_device(self) -> dict[str, list[Link]]:
        """Links of each device (switch or node), in plan order."""
        out: dict[str, list[Link]] = {}
        for link in self.links:
            out.setdefault(link.a_device, []).append(link)
            out.setdefault(link.b_device, []).append(link)
        return out

    @cached_property
    def switch_by_name(self) -> dict[str, Switch]:
        return {s.name: s for s in self.switches}

    def switches_of(self, role: Role) -> list[Switch]:
        return [s for s in self.switches if s.role == role]

    @property
    def gpu_count(self) -> int:
        return sum(len(n.rails) for n in self.nodes if n.kind == "gpu")
