"""Port samples attached to the planned links of a :class:`~hwaac.plan.model.Plan`.

:class:`LinkIndex` is built once per plan (dicts: device -> port -> link end), so attaching a sample costs one or
two dict look-ups. Names are normalised where tools differ (a switch port's SONiC alias ``etp1a``, a host port's HCA
``mlx5_3/1``); a sample the plan does not know is *unplanned*, a planned end without a sample *missing*.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter

import numpy as np

from hwaac.plan.model import Link, Plan
from hwaac.plan.ports import port_table
from hwaac.telemetry.end_table import EndTable
from hwaac.telemetry.ends import EndPart, Reading, correlate_part
from hwaac.telemetry.rates import Discontinuity

A, B = 0, 1  # link ends: code = 2 * link index + end
END_NAMES = ("a", "b")
LINK_KINDS = ("host", "leaf_spine", "spine_super_spine")  # LinkIndex.kinds: each link's position here
_HCA_PORT_SEPARATORS = ("/", ":", " port ")


class LinkIndex:
    """(device, port) -> link end of a plan, with each link's scope labels.

    Attributes:
        plan: the plan.
        links: ``plan.links``; a link is named by its position in it.
        ports: device -> port (as the plan names it) -> ``2 * link + end`` (end 0 is ``a``, 1 is ``b``).
        speed_bps: the planned speed of each link kind (host: the intent's host port speed; switch links: the lower
            end's switch model port speed).
    """

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.links: list[Link] = plan.links
        ports: dict[str, dict[str, int]] = {}
        for i, link in enumerate(self.links):
            code = i << 1
            ports.setdefault(link.a_device, {})[link.a_port] = code
            ports.setdefault(link.b_device, {})[link.b_port] = code | 1
        self.ports = ports
        d, intent = plan.design, plan.intent
        self._aliases: dict[str, dict[str, str]] = {}  # device -> other name -> the plan's port name
        # (the aliases' identity, a list of port names) -> each one's alias target: the devices of a model share both
        self._targets: dict[tuple[int, tuple[str, ...]], list[str | None]] = {}
        models = {"leaf": d.leaf_model, "spine": d.spine_model, "super_spine": d.super_spine_model}
        by_model = {role: {p.alias: p.name for p in port_table(m)} for role, m in models.items() if m is not None}
        for s in plan.switches:
            self._aliases[s.name] = by_model[s.role]
        host = _host_aliases(plan)
        for n in plan.nodes:
            self._aliases[n.name] = host
        self.speed_bps = {
            "host": intent.fabric.host_port_speed_gbps * 10**9,
            "leaf_spine": d.leaf_model.port_speed_gbps * 10**9,
            "spine_super_spine": d.spine_model.port_speed_gbps * 10**9,
        }

    def find(self, device: str, port: str) -> int | None:
        """The end code of ``port`` of ``device`` (any of the names below), or None when the plan has no such end.

        Names: the plan's (SONiC ``Ethernet0``, the Linux interface ``rail3``); a switch port's SONiC alias; a host
        port's HCA as ``mlx5_3``, ``mlx5_3/1``, ``mlx5_3:1`` or ``mlx5_3 port 1`` (port 1 only: one port per HCA).
        """
        ports = self.ports.get(device)
        if ports is None:
            return None
        code = ports.get(port)
        if code is None:
            name = _alias_target(self._aliases.get(device, {}), port)
            if name is not None:
                code = ports.get(name)
        return code

    def codes(self, device: str, ports: Sequence[str]) -> list[int | None]:
        """:meth:`find` of each of ``ports`` of ``device``: the plan's names looked up in one pass; the others
        through the device's aliases, resolved once per list of names for every device of its model."""
        known = self.ports.get(device)
        if known is None:
            return [None] * len(ports)
        codes = list(map(known.get, ports))
        if None in codes:
            other = self._aliases.get(device, {})
            key = (id(other), tuple(ports))
            names = self._targets.get(key)
            if names is None:
                names = [_alias_target(other, port) for port in ports]
                if len(self._targets) < 1024:
                    self._targets[key] = names
            codes = [known.get(n) if c is None and n is not None else c for c, n in zip(codes, names, strict=True)]
        return codes

    def labels(self, i: int) -> dict[str, str | int]:
        """The scope labels of link ``i``: cable, kind, plane, and where they apply rail, su, leaf, spine,
        super_spine, node and hca."""
        link = self.links[i]
        sw = self.plan.switch_by_name
        out: dict[str, str | int] = {"cable": link.cable_id, "kind": link.kind, "plane": link.plane}
        if link.kind == "host":
            leaf = sw[link.b_device]
            out.update(node=link.a_device, hca=link.hca or "", leaf=leaf.name)
        elif link.kind == "leaf_spine":
            leaf = sw[link.a_device]
            out.update(leaf=leaf.name, spine=link.b_device)
        else:
            out.update(spine=link.a_device, super_spine=link.b_device)
            return out
        assert leaf.rail is not None and leaf.su is not None  # a leaf has both (hwaac.plan.topology.leaves)
        out.update(rail=leaf.rail, su=leaf.su)
        return out

    @cached_property
    def leaf_of(self) -> list[str | None]:
        """Per link: the leaf it belongs to (host and leaf-spine links), else None."""
        return [
            link.b_device if link.kind == "host" else link.a_device if link.kind == "leaf_spine" else None
            for link in self.links
        ]

    @cached_property
    def kinds(self) -> np.ndarray:
        """Per link: its kind as its position in :data:`LINK_KINDS` (int8)."""
        code = {k: i for i, k in enumerate(LINK_KINDS)}
        return np.fromiter(map(code.__getitem__, map(_KIND, self.links)), np.int8, len(self.links))

    @cached_property
    def owners(self) -> tuple[list[str], np.ndarray]:
        """(the switches the links are gathered under, in the order of their first link in the plan; per link, its
        owner's position there, int64): a link's leaf (:attr:`leaf_of`), else its end ``a`` (a spine)."""
        names = [leaf or link.a_device for leaf, link in zip(self.leaf_of, self.links, strict=True)]
        ids = {name: i for i, name in enumerate(dict.fromkeys(names))}  # in the order of their first link
        return list(ids), np.fromiter(map(ids.__getitem__, names), np.int64, len(names))

    @cached_property
    def uplinks(self) -> dict[str, int]:
        """Per leaf: its planned uplinks (leaf-spine links), the ECMP width its routes should have."""
        out: dict[str, int] = {}
        for link in self.links:
            if link.kind == "leaf_spine":
                out[link.a_device] = out.get(link.a_device, 0) + 1
        return out

    @cached_property
    def leaf_prefixes(self) -> dict[str, str]:
        """Prefix as FRR prints it (``172.16.0.0/31``, ``10.0.0.1/32``) -> the leaf it lives behind: each leaf's host
        link networks and its loopback. Another leaf's prefixes are what a leaf reaches across every uplink."""
        out: dict[str, str] = {}
        for link in self.links:
            if link.kind == "host":
                out[f"{_dotted(link.network)}/{link.prefixlen}"] = link.b_device
        for sw in self.plan.switches:
            if sw.role == "leaf":
                out[f"{_dotted(sw.loopback)}/32"] = sw.name
        return out

    @cached_property
    def cabled_below(self) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """(device -> the GPU nodes cabled to it, switch -> the lower-tier switches cabled to it)."""
        gpu = {n.name for n in self.plan.nodes if n.kind == "gpu"}
        hosts: dict[str, set[str]] = {}
        below: dict[str, set[str]] = {}
        for link in self.links:
            if link.kind == "host":
                if link.a_device in gpu:
                    hosts.setdefault(link.b_device, set()).add(link.a_device)
            else:
                below.setdefault(link.b_device, set()).add(link.a_device)
        return hosts, below

    def build_lookups(self) -> None:
        """Build the lookups the judgement reads (:attr:`leaf_of`, :attr:`kinds`, :attr:`owners`, :attr:`uplinks`,
        :attr:`leaf_prefixes`, :attr:`cabled_below`) now rather than on first use:
        :func:`~hwaac.telemetry.rated.read_rated` has them built while its helper processes read."""
        for name in ("leaf_of", "kinds", "owners", "uplinks", "leaf_prefixes", "cabled_below"):
            getattr(self, name)  # a cached property: built once, kept

    def end_name(self, code: int) -> tuple[str, str]:
        """(device, port) of an end code."""
        link = self.links[code >> 1]
        return (link.b_device, link.b_port) if code & 1 else (link.a_device, link.a_port)


_KIND = attrgetter("kind")


def _dotted(address: int) -> str:
    """An IPv4 address as ``ipaddress.IPv4Address`` prints it (dotted decimal), without building the object."""
    return socket.inet_ntoa(address.to_bytes(4, "big"))


def _alias_target(other: dict[str, str], port: str) -> str | None:
    """The plan's name of ``port`` by a device's aliases ``other``: an alias, or an HCA's port 1 (``mlx5_3/1``,
    ``mlx5_3:1``, ``mlx5_3 port 1``); None when it is neither."""
    name = other.get(port)
    if name is None:
        for sep in _HCA_PORT_SEPARATORS:
            head, found, tail = port.partition(sep)
            if found and tail.strip() == "1":
                return other.get(head)
    return name


def _host_aliases(plan: Plan) -> dict[str, str]:
    """HCA name -> Linux interface, from the intent's templates (the same on every node)."""
    h, d = plan.intent.host, plan.design
    out = {}
    for rail in range(d.rails):
        for plane in range(d.planes):
            nic = rail * d.planes + plane
            out[h.hca_name.format(rail=rail, plane=plane, port=nic)] = h.interface_name.format(
                rail=rail, plane=plane, port=nic
            )
    return out


@dataclass(slots=True)
class Correlation:
    """Samples attached to link ends.

    Attributes:
        index: the plan's index.
        ends: per end code (``2 * link + end``): the port's rates, gauges and state (tools of one device merged), or
            None when no sample reached it; held as columns (:class:`~hwaac.telemetry.end_table.EndTable`), which also
            say per end whether an interval reached it and its seconds.
        unplanned: (device, port, tool) of samples the plan has no end for.
        missing: (device, port) of planned ends without a sample on devices that were sampled.
        missing_devices: planned devices with no sample at all (their ends are not listed in ``missing``).
        discontinuities / errors: of the intervals given, errors as ``device (tool): reason``.
    """

    index: LinkIndex
    ends: EndTable
    unplanned: list[tuple[str, str, str]] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)
    missing_devices: list[str] = field(default_factory=list)
    discontinuities: list[Discontinuity] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def correlate(index: LinkIndex, readings: Iterable[Reading]) -> Correlation:
    """Attach every port of ``readings`` (rated intervals and frames, or snapshots and frames read for state and
    gauges only, such as ``show interfaces status``) to its planned link end. Several readings of one port are
    merged, later ones winning per counter, gauge or state word."""
    return from_parts(index, [correlate_part(index, readings)])


def from_parts(index: LinkIndex, parts: Sequence[EndPart], table: EndTable | None = None) -> Correlation:
    """The correlation of parts correlated apart (:func:`~hwaac.telemetry.ends.correlate_part`, on reader
    processes), in their order; ``table``: their ends, already assembled (the parts then need only their facts)."""
    if table is None:
        table = EndTable.assemble(len(index.links) * 2, parts)
    out = Correlation(index, table)
    sampled: set[str] = set()
    for part in parts:
        sampled.update(part.sampled)
        out.unplanned.extend(part.unplanned)
        out.discontinuities.extend(part.discontinuities)
        out.errors.extend(part.errors)
    missing_devices: set[str] = set()
    for code in np.flatnonzero(~table.sampled).tolist():
        device, port = index.end_name(code)
        if device in sampled:
            out.missing.append((device, port))
        else:
            missing_devices.add(device)
    out.missing_devices = sorted(missing_devices)
    return out


__all__ = ["END_NAMES", "LINK_KINDS", "Correlation", "LinkIndex", "correlate", "from_parts"]
