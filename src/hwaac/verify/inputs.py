"""What the checks expect, derived from the plan (``plan.json``) and the rendered files next to it.

``switches/<sw>/config_db.json`` gives the BGP neighbours each switch is configured with (``BGP_NEIGHBOR``) and
its port MTUs (``PORT``); ``hosts/<node>/netplan/60-hwaac-rails.yaml`` each rail's MTU. Without a rendered file the
plan's links stand in (sessions over every switch-to-switch link; MTUs unknown). Nothing here reads a device.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from hwaac.plan.serialize import read_plan

NETPLAN_FILE = "60-hwaac-rails.yaml"


class InputError(ValueError):
    """The plan or a rendered file cannot be used: names the file, the field and what is valid."""


@dataclass(frozen=True, slots=True)
class End:
    """One end of a cable: device, port and its planned address."""

    device: str
    port: str
    ip: str

    def __str__(self) -> str:
        return f"{self.device} {self.port}"


@dataclass(frozen=True, slots=True)
class Cable:
    """A planned cable; ``a`` is the lower tier (host NIC, leaf), ``b`` the upper."""

    id: str
    kind: str
    a: End
    b: End
    prefixlen: int

    @property
    def label(self) -> str:
        return f"{self.a} <-> {self.b}"

    @property
    def network(self) -> str:
        return str(ipaddress.ip_interface(f"{self.a.ip}/{self.prefixlen}").network)

    def ends(self) -> tuple[End, End]:
        return (self.a, self.b)

    def other(self, device: str, port: str) -> End:
        return self.b if (self.a.device, self.a.port) == (device, port) else self.a


@dataclass(frozen=True, slots=True)
class Switch:
    name: str
    role: str
    asn: int
    loopback: str  # "10.0.0.1/32"
    plane: int = 0
    su: int | None = None
    rail: int | None = None


@dataclass(frozen=True, slots=True)
class Rail:
    """A host's NIC port on one rail: interface, address, its leaf and the MTU the host sets."""

    host: str
    iface: str
    address: str
    plane: int
    rail: int
    cable: str
    leaf: str
    leaf_port: str
    mtu: int | None


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    su: int
    slot: int
    rails: tuple[Rail, ...]


@dataclass(frozen=True, slots=True)
class Peer:
    """One side of a BGP session: the device, its address and the ASN it has (its peer configures)."""

    device: str
    ip: str
    asn: int


@dataclass(frozen=True, slots=True)
class Session:
    """A planned eBGP session; ``cable`` is the link it runs over (None for a neighbour with no planned link)."""

    cable: str | None
    a: Peer
    b: Peer

    @property
    def id(self) -> str:
        return self.cable or f"{self.a.device}:{self.b.ip}"

    def side(self, device: str) -> tuple[Peer, Peer]:
        """``(local, remote)`` seen from ``device``."""
        return (self.a, self.b) if self.a.device == device else (self.b, self.a)


@dataclass(frozen=True, slots=True)
class Probe:
    """A rail probe: from ``src`` (a host's rail address) to the same rail of a host in another SU."""

    host: str
    iface: str
    src: str
    dst_host: str
    dst_iface: str
    dst: str
    mtu: int | None  # the planned path MTU (the smaller host MTU), None when a netplan file is missing
    cables: tuple[str, str]  # the source's and the destination's host cables

    @property
    def label(self) -> str:
        return f"{self.host} {self.iface} {self.src} -> {self.dst_host} {self.dst_iface} {self.dst}"


@dataclass(frozen=True)
class Inputs:
    """Everything the catalog expects of one fabric."""

    fabric: str
    switches: dict[str, Switch]
    hosts: dict[str, Host]
    cables: dict[str, Cable]
    sessions: tuple[Session, ...]
    port_mtu: dict[tuple[str, str], int] = field(default_factory=dict)
    probes: tuple[Probe, ...] = ()
    max_paths: dict[str, int] = field(default_factory=dict)  # switch -> BGP maximum-paths (max_ebgp_paths)
    port_alias: dict[tuple[str, str], str] = field(default_factory=dict)  # SONiC PORT alias (lldpd's port id)

    @cached_property
    def cable_at(self) -> dict[tuple[str, str], str]:
        """(device, port) -> cable id."""
        return {(e.device, e.port): c.id for c in self.cables.values() for e in c.ends()}

    @cached_property
    def cables_of(self) -> dict[str, list[Cable]]:
        out: dict[str, list[Cable]] = {}
        for c in self.cables.values():
            for e in c.ends():
                out.setdefault(e.device, []).append(c)
        return out

    @cached_property
    def sessions_of(self) -> dict[str, list[Session]]:
        out: dict[str, list[Session]] = {}
        for s in self.sessions:
            out.setdefault(s.a.device, []).append(s)
            out.setdefault(s.b.device, []).append(s)
        return out

    @cached_property
    def session_by_cable(self) -> dict[str, Session]:
        return {s.cable: s for s in self.sessions if s.cable}

    @cached_property
    def host_prefixes(self) -> dict[str, dict[str, list[str]]]:
        """leaf -> host prefix (a /31 per port, or the rail subnet) -> the host cables in it."""
        out: dict[str, dict[str, list[str]]] = {}
        for c in self.cables.values():
            if c.kind == "host":
                out.setdefault(c.b.device, {}).setdefault(c.network, []).append(c.id)
        return out

    @cached_property
    def prefix_cables(self) -> dict[str, tuple[str, list[str]]]:
        """host prefix -> (its leaf, its cables)."""
        return {p: (leaf, cs) for leaf, ps in self.host_prefixes.items() for p, cs in ps.items()}

    def devices(self) -> list[str]:
        return sorted(self.switches) + sorted(self.hosts)

    def within(self, devices: Iterable[str]) -> Inputs:
        """The fabric as far as ``devices`` reach (a twin built with some nodes per SU): the other devices, every
        cable, session and probe with an end outside, and so the host prefixes behind those cables, are gone."""
        keep = set(devices)
        if keep >= set(self.switches) | set(self.hosts):
            return self
        return replace(
            self,
            switches={n: s for n, s in self.switches.items() if n in keep},
            hosts={n: h for n, h in self.hosts.items() if n in keep},
            cables={c: cab for c, cab in self.cables.items() if all(e.device in keep for e in cab.ends())},
            sessions=tuple(s for s in self.sessions if s.a.device in keep and s.b.device in keep),
            probes=tuple(p for p in self.probes if p.host in keep and p.dst_host in keep),
        )

    def kind_of(self, device: str) -> str:
        return "switch" if device in self.switches else "host" if device in self.hosts else ""


def load_inputs(plan_dir: str | Path, *, config_dbs: bool = True, netplan_hosts: Iterable[str] | None = None) -> Inputs:
    """The inputs of the fabric planned into ``plan_dir`` (``plan.json`` and the rendered files beside it).

    ``config_dbs`` False skips the switches' files (sessions then come from the plan's links, MTUs are unknown);
    ``netplan_hosts`` limits the netplan files read to those hosts (the others' MTUs are unknown): what a
    per-device command list needs, read in milliseconds.

    Raises:
        InputError: no plan there, or a rendered file is malformed (naming it and the field).
    """
    base = Path(plan_dir)
    if base.is_file():
        base = base.parent
    try:
        doc = read_plan(base)
    except FileNotFoundError:
        raise InputError(f"{base}: no plan.json (write one with `hwaac plan FABRIC -o {base}`)") from None
    except ValueError as exc:
        raise InputError(str(exc)) from None
    return inputs_from_plan(doc, base, config_dbs=config_dbs, netplan_hosts=netplan_hosts)


def inputs_from_plan(
    doc: dict[str, Any],
    render_dir: Path | None = None,
    *,
    config_dbs: bool = True,
    netplan_hosts: Iterable[str] | None = None,
) -> Inputs:
    """:func:`load_inputs` for an already loaded plan document; rendered files are read from ``render_dir``."""
    netplans = None if netplan_hosts is None else set(netplan_hosts)
    where = "plan.json"
    try:
        switches = {
            name: Switch(
                name, s["role"], int(s["asn"]), s["loopback"], int(s.get("plane", 0)), s.get("su"), s.get("rail")
            )
            for name, s in doc["switches"].items()
        }
        cables = {
            cid: Cable(cid, link["kind"], End(*link["a"]), End(*link["b"]), int(link["prefixlen"]))
            for cid, link in doc["links"].items()
        }
        nodes = doc["nodes"]
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(
            f"{where}: malformed plan ({type(exc).__name__}: {exc}); expected the format of hwaac.plan.serialize"
        ) from None
    port_mtu: dict[tuple[str, str], int] = {}
    port_alias: dict[tuple[str, str], str] = {}
    max_paths: dict[str, int] = {}
    neighbours: dict[str, dict[str, dict[str, Any]] | None] = {}
    for name in switches:
        cdb = _config_db(render_dir, name) if config_dbs else None
        neighbours[name] = None if cdb is None else _bgp_neighbours(cdb, render_dir, name)
        if cdb is not None:
            port_mtu.update(_port_mtus(cdb, name))
            port_alias.update(
                {
                    (name, p): str(e["alias"])
                    for p, e in (cdb.get("PORT") or {}).items()
                    if isinstance(e, dict) and e.get("alias")
                }
            )
            af = (cdb.get("BGP_GLOBALS_AF") or {}).get("default|ipv4_unicast") or {}
            if str(af.get("max_ebgp_paths", "")).isdigit():
                max_paths[name] = int(af["max_ebgp_paths"])
    sessions = _sessions(switches, cables, neighbours)
    hosts = {}
    host_cables: dict[str, list[Cable]] = {}
    for c in cables.values():
        if c.kind == "host":
            host_cables.setdefault(c.a.device, []).append(c)
    for name, n in sorted(nodes.items()):
        mtus = _netplan_mtus(render_dir, name) if netplans is None or name in netplans else {}
        rails: list[Rail] = []
        for c in sorted(host_cables.get(name, []), key=lambda c: (c.a.port, c.id)):
            leaf = switches.get(c.b.device)
            rail = leaf.rail if leaf is not None and leaf.rail is not None else len(rails)
            plane = leaf.plane if leaf is not None else 0
            rails.append(Rail(name, c.a.port, c.a.ip, plane, rail, c.id, c.b.device, c.b.port, mtus.get(c.a.port)))
        hosts[name] = Host(name, int(n["su"]), int(n["slot"]), tuple(rails))
    inputs = Inputs(doc.get("fabric", ""), switches, hosts, cables, tuple(sessions), port_mtu)
    return Inputs(
        inputs.fabric, switches, hosts, cables, inputs.sessions, port_mtu, tuple(_probes(inputs)), max_paths, port_alias
    )


def _config_db(render_dir: Path | None, switch: str) -> dict[str, Any] | None:
    if render_dir is None:
        return None
    path = render_dir / "switches" / switch / "config_db.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: unreadable config_db ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: top level must be an object of tables")
    return data


def _bgp_neighbours(cdb: dict[str, Any], render_dir: Path | None, switch: str) -> dict[str, dict[str, Any]]:
    """peer address -> the BGP_NEIGHBOR entry (default VRF)."""
    out = {}
    for key, entry in (cdb.get("BGP_NEIGHBOR") or {}).items():
        vrf, _, peer = key.rpartition("|") if "|" in key else ("default", "", key)
        if vrf != "default":
            continue
        if not isinstance(entry, dict) or not str(entry.get("asn", "")).isdigit():
            raise InputError(
                f"{render_dir}/switches/{switch}/config_db.json: BGP_NEIGHBOR {key!r}: asn must be a "
                f"number, got {entry.get('asn') if isinstance(entry, dict) else entry!r}"
            )
        out[peer] = entry
    return out


def _port_mtus(cdb: dict[str, Any], switch: str) -> dict[tuple[str, str], int]:
    out = {}
    for port, entry in (cdb.get("PORT") or {}).items():
        mtu = entry.get("mtu") if isinstance(entry, dict) else None
        if mtu is not None and str(mtu).isdigit():
            out[(switch, port)] = int(mtu)
    return out


def _sessions(
    switches: dict[str, Switch], cables: dict[str, Cable], neighbours: dict[str, dict[str, dict[str, Any]] | None]
) -> list[Session]:
    """One session per switch-to-switch cable; neighbours configured without such a cable are sessions too."""
    by_pair = {}
    for c in cables.values():
        if c.a.device in switches and c.b.device in switches:
            by_pair[(c.a.device, c.b.ip)] = c
            by_pair[(c.b.device, c.a.ip)] = c
    seen: set[str] = set()
    out: list[Session] = []
    for c in sorted(cables.values(), key=lambda c: c.id):
        if not (c.a.device in switches and c.b.device in switches):
            continue
        conf_a, conf_b = neighbours.get(c.a.device), neighbours.get(c.b.device)
        configured = (conf_a is None or c.b.ip in conf_a) or (conf_b is None or c.a.ip in conf_b)
        if not configured:  # rendered files leave this link without BGP: no session expected
            continue
        asn_b = int(conf_a[c.b.ip]["asn"]) if conf_a and c.b.ip in conf_a else switches[c.b.device].asn
        asn_a = int(conf_b[c.a.ip]["asn"]) if conf_b and c.a.ip in conf_b else switches[c.a.device].asn
        out.append(Session(c.id, Peer(c.a.device, c.a.ip, asn_a), Peer(c.b.device, c.b.ip, asn_b)))
        seen.add(c.id)
    for dev, conf in sorted(neighbours.items()):
        for peer_ip, entry in sorted((conf or {}).items()):
            if (dev, peer_ip) in by_pair:
                continue
            name = str(entry.get("name", "")) or peer_ip
            local = str(entry.get("local_addr", ""))
            out.append(Session(None, Peer(dev, local, switches[dev].asn), Peer(name, peer_ip, int(entry["asn"]))))
    return out


def _netplan_mtus(render_dir: Path | None, host: str) -> dict[str, int]:
    """interface -> mtu of the host's rendered rail netplan ({} when there is none)."""
    if render_dir is None:
        return {}
    path = render_dir / "hosts" / host / "netplan" / NETPLAN_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    import yaml  # PyYAML's libyaml loader: ruamel's pure-Python one takes 0.1 s per file, 8 s for 64 nodes

    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not YAML ({str(exc).splitlines()[0]})") from None
    eths = ((doc or {}).get("network") or {}).get("ethernets") or {}
    out = {}
    for iface, conf in eths.items():
        mtu = conf.get("mtu") if isinstance(conf, dict) else None
        if mtu is not None:
            if not isinstance(mtu, int) or mtu < 576:
                raise InputError(f"{path}: network.ethernets.{iface}.mtu must be an integer >= 576, got {mtu!r}")
            out[iface] = mtu
    return out


def _probes(inputs: Inputs) -> Iterable[Probe]:
    """Every host rail to the same (plane, rail) of the same slot in the next SU (the next slot in a one-SU
    fabric), so every rail of every host is a source once and crosses the spines."""
    by_su: dict[int, dict[int, Host]] = {}
    for h in inputs.hosts.values():
        by_su.setdefault(h.su, {})[h.slot] = h
    sus = sorted(by_su)
    for h in sorted(inputs.hosts.values(), key=lambda h: (h.su, h.slot)):
        peer = _peer_host(h, sus, by_su)
        if peer is None:
            continue
        theirs = {(r.plane, r.rail): r for r in peer.rails}
        for r in h.rails:
            d = theirs.get((r.plane, r.rail))
            if d is None:
                continue
            mtus = [m for m in (r.mtu, d.mtu) if m is not None]
            yield Probe(
                h.name,
                r.iface,
                r.address,
                peer.name,
                d.iface,
                d.address,
                min(mtus) if len(mtus) == 2 else None,
                (r.cable, d.cable),
            )


def _peer_host(h: Host, sus: list[int], by_su: dict[int, dict[int, Host]]) -> Host | None:
    if len(sus) > 1:
        other = sus[(sus.index(h.su) + 1) % len(sus)]
        slots = by_su[other]
        if h.slot in slots:
            return slots[h.slot]
        return slots[min(slots)] if slots else None
    order = sorted(by_su[h.su])
    if len(order) < 2:
        return None
    return by_su[h.su][order[(order.index(h.slot) + 1) % len(order)]]
