"""Reader of FRR's ``show ip route [vrf NAME|all] json`` and ``show ipv6 route ... json``: per prefix the selected
route and its next hops, hence the ECMP width (zebra ``zebra_vty.c`` ``vty_show_ip_route``; next hops
``show_nexthop_json_helper``, in ``lib/nexthop.c`` since 10.x).

The one place this format is read (:mod:`hwaac.verify.facts` calls it). A leaf of a large fabric holds thousands
of prefixes with up to 64 next hops each: the loop keeps per next hop a small tuple. Shapes per FRR version and
what is not read: ``docs/telemetry/frr.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from hwaac.telemetry.parsers.frr_json import read_documents

TOOL = "show ip route json"
DEFAULT_VRF = "default"
_new = tuple.__new__  # builds a Nexthop without the NamedTuple's Python-level __new__ (a third of the cost)


class Nexthop(NamedTuple):
    """One next hop as zebra lists it: ``ip`` "" for a connected route, ``interface`` "" for a recursive one;
    ``active`` and ``fib`` as flagged (zebra prints only true flags)."""

    ip: str
    interface: str
    active: bool
    fib: bool


@dataclass(slots=True)
class Route:
    """The route zebra selected for a prefix (the first entry when none is selected).

    Attributes:
        prefix: as printed (``10.0.0.0/24``, ``2001:db8::/64``).
        vrf: ``vrfName`` (FRR >= 7.3), else the VRF the output is keyed by, else "default".
        table: the kernel table (``table``, FRR >= 7.2), None when not printed.
        protocol: ``bgp``, ``connected``, ``static``, ``kernel``, ``local``...
        selected: zebra's best route for the prefix (``selected``).
        installed: in the kernel (``installed``); None from FRR 7.0, which does not print it.
        distance / metric: as printed, None when not.
        nexthops: every next hop listed, in order, recursive ones and their resolvers included.
        fib: the distinct next hops both active and in the FIB, each as its gateway address (a link-local one as
            ``fe80::1%swp1``: the same address may be reached over several interfaces) or, for a connected route,
            its interface.
        entries: how many route entries the prefix has (one per protocol that offers it).
    """

    prefix: str
    vrf: str = DEFAULT_VRF
    table: int | None = None
    protocol: str = ""
    selected: bool = False
    installed: bool | None = None
    distance: int | None = None
    metric: int | None = None
    nexthops: tuple[Nexthop, ...] = ()
    fib: tuple[str, ...] = ()
    entries: int = 1

    @property
    def ecmp(self) -> int:
        """The ECMP width: next hops both active and in the FIB (distinct address and interface)."""
        return len(self.fib)


@dataclass(slots=True)
class RouteTable:
    """The routes of one ``show ip|ipv6 route ... json``.

    Attributes:
        device / version: as the caller gave them.
        routes: by prefix for the default VRF, ``VRF/prefix`` for another VRF.
        parsed: the output was FRR's JSON of this command (``{}`` included); False for other text.
        unknown: what could not be read, each naming the prefix or field.
    """

    device: str = ""
    version: str = ""
    routes: dict[str, Route] = field(default_factory=dict)
    parsed: bool = False
    unknown: list[str] = field(default_factory=list)

    def ecmp(self) -> dict[str, int]:
        """Prefix (as keyed in :attr:`routes`) -> ECMP width of its selected, installed route (0 otherwise)."""
        return {k: r.ecmp if r.selected and r.installed else 0 for k, r in self.routes.items()}


def parse_routes(raw: str | bytes | Mapping[str, Any], *, device: str = "", version: str | None = None) -> RouteTable:
    """Read ``show ip route json`` / ``show ipv6 route json`` (the text, or the document decoded). Never raises."""
    out = RouteTable(device=device, version=version or "")
    read_documents(
        out, raw, lambda doc: _container(out, doc, "", 0), "prefixes", "no prefix in the document: not a route table"
    )
    return out


def _container(out: RouteTable, doc: Mapping[str, Any], vrf: str, depth: int) -> int:
    """Prefix -> entries; or VRF name (``vrf all``, FRR >= 10.1) or table id (``table all``) -> such objects.
    Returns the number of prefixes met."""
    seen = 0
    for key, value in doc.items():
        if type(value) is list:
            _prefix(out, key, value, vrf)
            seen += 1
        elif isinstance(value, Mapping) and depth < 2:
            seen += _container(out, value, vrf if key.isdigit() else key, depth + 1)
        else:
            out.unknown.append(f"{key}: not a list of route entries ({_short(value)})")
    return seen


def _prefix(out: RouteTable, prefix: str, entries: list[Any], vrf_hint: str) -> None:
    e = None
    for entry in entries:
        if type(entry) is dict and entry.get("selected") is True:
            e = entry
            break
    if e is None:
        e = entries[0] if entries else None
        if type(e) is not dict:
            out.unknown.append(f"{prefix}: no route entry ({_short(entries)})")
            return
    vrf = e.get("vrfName")
    if type(vrf) is not str or not vrf:
        vrf = vrf_hint or DEFAULT_VRF
    hops: list[Nexthop] = []
    fib: list[str] = []
    raw_hops = e.get("nexthops", ())
    if type(raw_hops) is not list:
        out.unknown.append(f"{prefix}: nexthops is not a list ({_short(raw_hops)})")
        raw_hops = ()
    for nh in raw_hops:
        if type(nh) is not dict:
            out.unknown.append(f"{prefix}: a next hop is not an object ({_short(nh)})")
            continue
        get = nh.get
        ip = get("ip") or ""
        itf = get("interfaceName") or ""
        active = get("active") is True
        in_fib = get("fib") is True
        hops.append(_new(Nexthop, (ip, itf, active, in_fib)))
        if active and in_fib:
            fib.append((f"{ip}%{itf}" if itf and ip.startswith("fe80:") else ip) if ip else itf)
    installed: bool | None = True if e.get("installed") is True else None
    if installed is None and ("destSelected" in e or "internalNextHopNum" in e or "table" in e):
        installed = False  # FRR >= 7.1 prints "installed" only when true
    protocol = e.get("protocol")
    if type(protocol) is not str:
        out.unknown.append(f"{prefix}: no protocol ({_short(protocol)})")
        protocol = ""
    key = prefix if vrf == DEFAULT_VRF else f"{vrf}/{prefix}"
    old = out.routes.get(key)
    if old is not None and old.selected:
        return  # table all: the prefix again in another table of the VRF; the first selected one is kept
    table, distance, metric = e.get("table"), e.get("distance"), e.get("metric")
    out.routes[key] = Route(
        prefix,
        vrf,
        table if type(table) is int else None,
        protocol,
        e.get("selected") is True,
        installed,
        distance if type(distance) is int else None,
        metric if type(metric) is int else None,
        tuple(hops),
        tuple(dict.fromkeys(fib)),
        len(entries),
    )


def _short(value: Any) -> str:
    if isinstance(value, (list, dict)) and len(value) > 3:
        return f"a {type(value).__name__} of {len(value)}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["Nexthop", "Route", "RouteTable", "parse_routes"]
