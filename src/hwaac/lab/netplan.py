"""Read a rendered netplan file: per interface its MTU, addresses, routes (with their table) and source rules.

Netplan's YAML reference (netplan.io, "Netplan YAML configuration reference": ``ethernets``, ``mtu``,
``addresses``, ``routes`` with ``to``/``via``/``from``/``scope``/``table``/``metric``/``on-link``,
``routing-policy`` with ``from``/``to``/``table``/``priority``, ``link-local``). A route's ``from`` is the
preferred source address (``ip route ... src``). Only what a lab host needs is read; a device type other than
``ethernets`` or a route type other than unicast is refused.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from hwaac.lab.errors import LabError

DEVICE_TYPES = (
    "ethernets",
    "bonds",
    "bridges",
    "vlans",
    "tunnels",
    "wifis",
    "vrfs",
    "modems",
    "dummy-devices",
    "virtual-ethernets",
)


@dataclass(frozen=True, slots=True)
class Route:
    """One route: ``to`` (a prefix or "default"), and what netplan says of it."""

    to: str
    via: str | None = None
    source: str | None = None
    table: int | None = None
    scope: str | None = None
    metric: int | None = None
    on_link: bool = False


@dataclass(frozen=True, slots=True)
class Rule:
    """One ``routing-policy`` entry."""

    table: int
    source: str | None = None
    to: str | None = None
    priority: int | None = None


@dataclass(frozen=True, slots=True)
class Interface:
    """One ``ethernets`` entry. ``link_local`` is None when the file does not say (netplan's default: IPv6)."""

    name: str
    mtu: int | None
    addresses: tuple[str, ...]
    routes: tuple[Route, ...]
    rules: tuple[Rule, ...]
    link_local: tuple[str, ...] | None = None


def read_netplan(text: str, *, source: str = "netplan") -> dict[str, Interface]:
    """The interfaces of one netplan document, by name, in file order.

    Raises:
        LabError: not YAML, not a netplan v2 document, or a value the lab cannot apply (naming file and field).
    """
    try:
        doc = YAML(typ="safe", pure=True).load(io.StringIO(text))
    except YAMLError as exc:
        raise LabError(f"{source}: not YAML ({str(exc).splitlines()[0]})") from None
    net = doc.get("network") if isinstance(doc, Mapping) else None
    if not isinstance(net, Mapping):
        raise LabError(f"{source}: no 'network' mapping (not a netplan file)")
    if net.get("version", 2) != 2:
        raise LabError(f"{source}: network.version {net.get('version')!r} is not valid: 2")
    other = [t for t in DEVICE_TYPES if t != "ethernets" and net.get(t)]
    if other:
        raise LabError(f"{source}: network.{other[0]} is not modelled by the lab (valid: ethernets)")
    eths = net.get("ethernets") or {}
    if not isinstance(eths, Mapping):
        raise LabError(f"{source}: network.ethernets is not a mapping")
    return {
        str(name): _interface(str(name), conf or {}, f"{source}: network.ethernets.{name}")
        for name, conf in eths.items()
    }


def _interface(name: str, conf: Mapping[str, Any], where: str) -> Interface:
    if not isinstance(conf, Mapping):
        raise LabError(f"{where}: not a mapping")
    mtu = conf.get("mtu")
    if mtu is not None and (not isinstance(mtu, int) or isinstance(mtu, bool) or not 68 <= mtu <= 65535):
        raise LabError(f"{where}.mtu: {mtu!r} is not valid: an integer 68..65535")
    addresses = conf.get("addresses") or []
    if not isinstance(addresses, list) or not all(isinstance(a, str) and "/" in a for a in addresses):
        raise LabError(f"{where}.addresses: {addresses!r} is not valid: a list of ADDRESS/PREFIXLEN")
    routes = tuple(_route(r, f"{where}.routes[{i}]") for i, r in enumerate(conf.get("routes") or []))
    rules = tuple(_rule(r, f"{where}.routing-policy[{i}]") for i, r in enumerate(conf.get("routing-policy") or []))
    ll = conf.get("link-local")
    return Interface(
        name=name,
        mtu=mtu,
        addresses=tuple(addresses),
        routes=routes,
        rules=rules,
        link_local=None if ll is None else tuple(str(x) for x in ll),
    )


def _route(r: Any, where: str) -> Route:
    if not isinstance(r, Mapping) or "to" not in r:
        raise LabError(f"{where}: a route needs 'to'")
    if r.get("type", "unicast") != "unicast":
        raise LabError(f"{where}.type: {r.get('type')!r} is not modelled by the lab (valid: unicast)")
    return Route(
        to=str(r["to"]),
        via=_opt(r.get("via")),
        source=_opt(r.get("from")),
        table=_int(r.get("table"), f"{where}.table"),
        scope=_opt(r.get("scope")),
        metric=_int(r.get("metric"), f"{where}.metric"),
        on_link=bool(r.get("on-link", False)),
    )


def _rule(r: Any, where: str) -> Rule:
    if not isinstance(r, Mapping) or "table" not in r:
        raise LabError(f"{where}: a routing-policy entry needs 'table'")
    table = _int(r.get("table"), f"{where}.table")
    assert table is not None
    return Rule(
        table=table,
        source=_opt(r.get("from")),
        to=_opt(r.get("to")),
        priority=_int(r.get("priority"), f"{where}.priority"),
    )


def _opt(value: Any) -> str | None:
    return None if value is None else str(value)


def _int(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LabError(f"{where}: {value!r} is not valid: a non-negative integer")
    return value


def ip_commands(iface: Interface) -> list[str]:
    """``ip -batch`` lines that give an existing link what netplan would: MTU, no IPv6 link-local when
    ``link-local: []`` (networkd's LinkLocalAddressing=no), addresses, up, then routes and rules in file order."""
    n = iface.name
    out: list[str] = []
    if iface.mtu is not None:
        out.append(f"link set dev {n} mtu {iface.mtu}")
    if iface.link_local is not None and "ipv6" not in iface.link_local:
        out.append(f"link set dev {n} addrgenmode none")
    out += [f"address add {a} dev {n}" for a in iface.addresses]
    out.append(f"link set dev {n} up")
    for r in iface.routes:
        line = f"route add {r.to}" + (f" via {r.via}" if r.via else "") + f" dev {n}"
        line += "".join(
            f" {k} {v}"
            for k, v in (("scope", r.scope), ("src", r.source), ("table", r.table), ("metric", r.metric))
            if v is not None
        )
        out.append(line + (" onlink" if r.on_link else ""))
    for rule in iface.rules:
        line = "rule add" + (f" from {rule.source}" if rule.source else "") + (f" to {rule.to}" if rule.to else "")
        out.append(line + f" table {rule.table}" + (f" priority {rule.priority}" if rule.priority is not None else ""))
    return out
