"""The BGP and routing checks of :func:`hwaac.render.sonic.validate.validate_config_db` (frrcfgd's tables).

YANG leafrefs and must conditions of the routing tables (sonic-bgp-global, -neighbor, -peergroup, sonic-route-map,
sonic-routing-policy-sets, sonic-route-common), what frrcfgd needs to configure FRR from them (its mode, the local
ASN of a VRF, an activated address family per neighbour, with the admin_status values the release's frrcfgd
maps), and what BGP announces: network statements (BGP_GLOBALS_AF_NETWORK) and ``redistribute connected`` through
its route map and prefix lists, evaluated as FRR does.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from hwaac.render.sonic.checks_common import (
    VLAN_NAME,
    CheckerBase,
    Network,
    entries,
    is_ip,
    json_path,
    table,
    to_int,
)

# frrcfgd's per-VRF tables (the VRF is the first part of their keys): leafrefs to BGP_GLOBALS in YANG, and
# frrcfgd ignores an entry whose VRF has no local ASN
VRF_TABLES = ("BGP_GLOBALS_AF", "BGP_GLOBALS_AF_NETWORK", "ROUTE_REDISTRIBUTE", "BGP_NEIGHBOR", "BGP_NEIGHBOR_AF")
ROUTING_TABLES = ("BGP_GLOBALS", *VRF_TABLES)
# YANG leafrefs to ROUTE_MAP_SET (sonic-bgp-common, sonic-bgp-global, sonic-route-common, sonic-route-map)
ROUTE_MAP_REFS = (
    ("BGP_NEIGHBOR_AF", "route_map_in"),
    ("BGP_NEIGHBOR_AF", "route_map_out"),
    ("ROUTE_REDISTRIBUTE", "route_map"),
    ("BGP_GLOBALS_AF_NETWORK", "policy"),
)
# ROUTE_MAP fields that are leafrefs to PREFIX_SET (sonic-route-map.yang)
PREFIX_SET_REFS = ("match_prefix_set", "match_ipv6_prefix_set", "match_next_hop_set")

Prefixes = dict[str, list[tuple[int, Network, int | None, int | None, str]]]


def parse_prefix(key: str) -> tuple[int | None, Network, int | None, int | None] | None:
    """PREFIX key ``set|seq|prefix|range`` (or ``set|prefix|range``) -> (seq, network, ge, le); ge/le None = exact."""
    parts = key.split("|")
    if len(parts) == 4:
        seq: int | None = to_int(parts[1])
        if seq is None:
            return None
    elif len(parts) == 3:
        seq = None
    else:
        return None
    try:
        net = ipaddress.ip_network(parts[-2])
    except ValueError:
        return None
    rng = parts[-1]
    if rng == "exact":
        return seq, net, None, None
    lo, sep, hi = rng.partition("..")
    lo_n, hi_n = to_int(lo), to_int(hi)
    if not sep or lo_n is None or hi_n is None:
        return None
    return seq, net, lo_n, hi_n


def _subnet_of(route: Network, net: Network) -> bool:
    """``route`` lies within ``net`` (False across IP versions)."""
    if isinstance(route, ipaddress.IPv4Network) and isinstance(net, ipaddress.IPv4Network):
        return route.subnet_of(net)
    if isinstance(route, ipaddress.IPv6Network) and isinstance(net, ipaddress.IPv6Network):
        return route.subnet_of(net)
    return False


def prefix_list_permits(entries_: list[tuple[int, Network, int | None, int | None, str]], route: Network) -> bool:
    """FRR prefix-list semantics: the first entry that matches decides; no match is a deny."""
    for _seq, net, lo, hi, action in entries_:
        if not _subnet_of(route, net):
            continue
        plen = route.prefixlen
        if (plen == net.prefixlen) if lo is None or hi is None else (lo <= plen <= hi):
            return action == "permit"
    return False


def names(value: Any) -> list[str]:
    """A route map reference: a leaf-list (JSON list) or SONiC's comma-joined form of it."""
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, str):
        return [v for v in value.split(",") if v]
    return []


class RoutingChecks(CheckerBase):
    """Addresses, BGP neighbours, frrcfgd's tables and what BGP announces (module docstring)."""

    @property
    def active_values(self) -> tuple[str, ...]:
        """BGP_NEIGHBOR_AF admin_status values frrcfgd of this release turns into ``neighbor X activate``."""
        return ("true", "up") if self.release.frrcfgd_up_down else ("true",)

    def addresses(self, name: str) -> dict[ipaddress.IPv4Address | ipaddress.IPv6Address, Any]:
        """Addresses configured in table ``name`` -> their interface (address/prefix); checks the bare key exists
        (YANG: the IPPREFIX list's name is a leafref to the interface list)."""
        out: dict[Any, Any] = {}
        t = table(self.cfg, name)
        for key in t:
            iface_name, sep, addr = key.partition("|")
            if not sep:
                continue
            if iface_name not in t:
                self.err((name, key), f"address without the interface key {iface_name!r}")
            try:
                iface = ipaddress.ip_interface(addr)
            except ValueError:
                continue  # the schema reports the key pattern
            out[iface.ip] = iface
        return out

    def interfaces_and_bgp(self) -> None:
        on_interface = self.addresses("INTERFACE")
        self.addresses("LOOPBACK_INTERFACE")
        self.addresses("VLAN_INTERFACE")
        for key, entry in entries(self.cfg, "BGP_NEIGHBOR"):
            local = entry.get("local_addr")
            if not isinstance(local, str) or "|" not in key:
                continue
            neighbor = key.rpartition("|")[2]
            path = ("BGP_NEIGHBOR", key, "local_addr")
            try:
                local_ip = ipaddress.ip_address(local)
            except ValueError:
                if not VLAN_NAME.fullmatch(local):
                    self.port(path, local, "PORTCHANNEL", "LOOPBACK_INTERFACE")
                continue
            iface = on_interface.get(local_ip)
            if iface is None:
                self.err(path, f"{local} is not an address configured on an INTERFACE")
                continue
            try:
                peer = ipaddress.ip_address(neighbor)
            except ValueError:
                continue
            if peer == local_ip or peer not in iface.network:
                self.err(
                    ("BGP_NEIGHBOR", key), f"neighbour {neighbor} is not a peer address on {iface} (local_addr {local})"
                )

    # --- frrcfgd's tables and their references ------------------------------------------------------------------

    def routing(self) -> None:
        cfg = self.cfg
        if not any(table(cfg, t) for t in ROUTING_TABLES):
            return
        meta = table(cfg, "DEVICE_METADATA").get("localhost")
        meta = meta if isinstance(meta, dict) else {}
        if meta.get("frr_mgmt_framework_config") != "true":
            self.err(
                ("DEVICE_METADATA", "localhost", "frr_mgmt_framework_config"),
                f"{meta.get('frr_mgmt_framework_config')!r}: frrcfgd, which reads BGP_GLOBALS, BGP_NEIGHBOR "
                "'vrf|address' and the route maps, runs only when it is 'true'",
            )
        if meta.get("docker_routing_config_mode") != "unified":
            self.err(
                ("DEVICE_METADATA", "localhost", "docker_routing_config_mode"),
                f"{meta.get('docker_routing_config_mode')!r}: frrcfgd replays CONFIG_DB into FRR at start only "
                "in 'unified' mode (it assumes 'separated' when the field is absent)",
            )
        globals_ = table(cfg, "BGP_GLOBALS")
        default = globals_.get("default")
        if isinstance(default, dict) and "bgp_asn" in meta and default.get("local_asn") != meta["bgp_asn"]:
            self.err(
                ("BGP_GLOBALS", "default", "local_asn"),
                f"{default.get('local_asn')!r} differs from DEVICE_METADATA bgp_asn {meta['bgp_asn']!r}",
            )
        vrfs = table(cfg, "VRF")
        for vrf in globals_:
            if vrf != "default" and vrf not in vrfs:
                self.err(("BGP_GLOBALS", vrf), f"VRF {vrf!r} is not 'default' and not defined in VRF")
        for name in VRF_TABLES:
            for key in table(cfg, name):
                vrf, sep, _rest = key.partition("|")
                if sep and vrf not in globals_:
                    self.err((name, key), f"VRF {vrf!r} has no BGP_GLOBALS entry (no local_asn): frrcfgd ignores it")
        self._neighbors(globals_)
        self._policy_references()

    def _neighbors(self, globals_: dict[str, Any]) -> None:
        cfg = self.cfg
        neighbors = table(cfg, "BGP_NEIGHBOR")
        groups = table(cfg, "BGP_PEER_GROUP")
        for key, entry in entries(cfg, "BGP_NEIGHBOR"):
            group = entry.get("peer_group_name")
            if isinstance(group, str) and "|" in key and f"{key.split('|', 1)[0]}|{group}" not in groups:
                self.err(
                    ("BGP_NEIGHBOR", key, "peer_group_name"),
                    f"peer group {group!r} is not defined in BGP_PEER_GROUP for VRF {key.split('|', 1)[0]!r}",
                )
        activated: dict[str, list[tuple[str, dict]]] = {}
        active = self.active_values
        for key, entry in entries(cfg, "BGP_NEIGHBOR_AF"):
            nbr = key.rpartition("|")[0]
            if nbr not in neighbors:
                self.err(("BGP_NEIGHBOR_AF", key), f"neighbour {nbr!r} is not defined in BGP_NEIGHBOR")
            elif entry.get("admin_status") in active:
                activated.setdefault(nbr, []).append((key, entry))
        for nbr, entry in entries(cfg, "BGP_NEIGHBOR"):
            if "|" not in nbr:
                continue  # bgpcfgd's shape: not frrcfgd's
            afs = activated.get(nbr)
            if not afs:
                self.err(
                    ("BGP_NEIGHBOR", nbr),
                    f"no BGP_NEIGHBOR_AF activates it (frrcfgd of SONiC {self.release.name} activates with "
                    f"admin_status {' or '.join(map(repr, active))}): frrcfgd sets 'no bgp default "
                    "ipv4-unicast', so the session would exchange no routes",
                )
                continue
            vrf_globals = globals_.get(nbr.split("|", 1)[0])
            local = vrf_globals.get("local_asn") if isinstance(vrf_globals, dict) else None
            if local is not None and entry.get("asn") == local:
                continue  # iBGP: ebgp-requires-policy does not apply
            for key, af in afs:
                for field in ("route_map_in", "route_map_out"):
                    if not names(af.get(field)):
                        self.err(
                            ("BGP_NEIGHBOR_AF", key),
                            f"no {field}: FRR's 'bgp ebgp-requires-policy' lets no route "
                            f"{'in' if field.endswith('in') else 'out'} on an eBGP session without a policy",
                        )

    def _policy_references(self) -> None:
        cfg = self.cfg
        route_maps = {key.split("|", 1)[0] for key in table(cfg, "ROUTE_MAP")}
        map_set = table(cfg, "ROUTE_MAP_SET")
        unlisted: dict[str, tuple[str, str, str]] = {}
        for name, field in ROUTE_MAP_REFS:
            for key, entry in entries(cfg, name):
                for rmap in names(entry.get(field)):
                    if rmap not in route_maps:
                        self.err((name, key, field), f"route map {rmap!r} has no statement in ROUTE_MAP")
                    elif rmap not in map_set:
                        unlisted.setdefault(rmap, (name, key, field))
        for rmap, path in unlisted.items():
            self.err(
                ("ROUTE_MAP_SET",),
                f"route map {rmap!r} (used by {json_path(path)}) is not defined here, the target of the YANG leafref",
            )
        prefix_sets = table(cfg, "PREFIX_SET")
        for key, entry in entries(cfg, "ROUTE_MAP"):
            for field in PREFIX_SET_REFS:
                ref = entry.get(field)
                if ref is not None and ref not in prefix_sets:
                    self.err(("ROUTE_MAP", key, field), f"{ref!r} is not defined in PREFIX_SET")
            called = entry.get("call_route_map")
            if called is not None and called not in map_set:
                self.err(("ROUTE_MAP", key, "call_route_map"), f"{called!r} is not defined in ROUTE_MAP_SET")
        seqs: dict[tuple[str, str], str] = {}
        for key in table(cfg, "PREFIX"):
            parts = key.split("|")
            if parts[0] not in prefix_sets:
                self.err(("PREFIX", key), f"prefix set {parts[0]!r} is not defined in PREFIX_SET")
            if len(parts) == 4:
                other = seqs.setdefault((parts[0], parts[1]), key)
                if other != key:
                    self.err(("PREFIX", key), f"sequence number {parts[1]} is also used by {other!r}")
            parsed = parse_prefix(key)
            if parsed is None:
                continue  # the schema reports the key pattern
            _seq, net, lo, hi = parsed
            if lo is not None and hi is not None and not (net.prefixlen < lo <= hi <= net.max_prefixlen):
                self.err(
                    ("PREFIX", key),
                    f"length range {lo}..{hi} does not fit {net}: FRR needs len < ge <= le <= {net.max_prefixlen}",
                )

    # --- what BGP announces ---------------------------------------------------------------------------------------

    def _prefix_lists(self) -> Prefixes:
        lists: Prefixes = {}
        for n, (key, entry) in enumerate(entries(self.cfg, "PREFIX")):
            parsed = parse_prefix(key)
            if parsed is None:
                continue
            seq, net, lo, hi = parsed
            # a key without sequence number gets FRR's automatic one: after every numbered entry
            lists.setdefault(key.split("|", 1)[0], []).append(
                (seq if seq is not None else (1 << 33) + n, net, lo, hi, str(entry.get("action")))
            )
        for items in lists.values():
            items.sort(key=lambda e: e[0])
        return lists

    def _route_map_permits(self, name: str, route: Network, lists: Prefixes) -> bool | None:
        """FRR's verdict for ``route`` under route map ``name``: True permit, False deny, None undecidable here."""
        stmts = []
        for key, entry in entries(self.cfg, "ROUTE_MAP"):
            map_name, _, seq = key.partition("|")
            if map_name == name and (n := to_int(seq)) is not None:
                stmts.append((n, entry))
        for _seq, entry in sorted(stmts, key=lambda s: s[0]):
            matches = [k for k in entry if k.startswith("match_")]
            if any(k != "match_prefix_set" for k in matches):
                return None
            pset = entry.get("match_prefix_set")
            if pset is None or prefix_list_permits(lists.get(pset, []), route):
                return entry.get("route_operation") == "permit"
        return False  # implicit deny

    def _network_statements(self) -> set[Network]:
        out: set[Network] = set()
        for key in table(self.cfg, "BGP_GLOBALS_AF_NETWORK"):
            vrf, afi, prefix = [*key.split("|"), "", "", ""][:3]
            if vrf != "default" or afi != "ipv4_unicast":
                continue
            try:
                out.add(ipaddress.ip_network(prefix, strict=False))
            except ValueError:
                continue
        return out

    def advertised(self) -> None:
        """The Loopback0 /32, VLAN subnets and host-link subnets are announced; fabric-link subnets are not."""
        cfg = self.cfg
        if not table(cfg, "BGP_NEIGHBOR") and not table(cfg, "BGP_GLOBALS"):
            return
        peers = [
            ipaddress.ip_address(k.rpartition("|")[2])
            for k in table(cfg, "BGP_NEIGHBOR")
            if is_ip(k.rpartition("|")[2])
        ]
        want: list[tuple[tuple[str, str], Network, str]] = []
        avoid: list[tuple[tuple[str, str], Network, str]] = []
        for name, key, iface in self._networks("LOOPBACK_INTERFACE"):
            if key.startswith("Loopback0|") and iface.version == 4:
                want.append(((name, key), iface.network, "the Loopback0 address"))
        for name, key, iface in self._networks("VLAN_INTERFACE"):
            if iface.version == 4:
                want.append(((name, key), iface.network, "VLAN subnet"))
        for name, key, iface in self._networks("INTERFACE"):
            if iface.version != 4:
                continue
            if any(p in iface.network for p in peers):
                avoid.append(((name, key), iface.network, "fabric link subnet (it carries a BGP session)"))
            else:
                want.append(((name, key), iface.network, "host-link subnet"))
        statements = self._network_statements()
        redist = table(cfg, "ROUTE_REDISTRIBUTE").get("default|connected|bgp|ipv4")
        if not statements and not isinstance(redist, dict):
            if want:
                self.err(
                    ("BGP_GLOBALS_AF_NETWORK",),
                    f"nothing announces the {len(want)} connected subnet(s) incl. "
                    f"{want[0][1]} ({want[0][2]}): no network statement ('default|ipv4_unicast|<prefix>') and "
                    "no ROUTE_REDISTRIBUTE 'default|connected|bgp|ipv4'",
                )
            return
        maps = names(redist.get("route_map")) if isinstance(redist, dict) else []
        lists = self._prefix_lists() if maps else {}

        def redistributed(net: Network) -> bool | None:
            if not isinstance(redist, dict):
                return False
            if not maps:
                return True
            return self._route_map_permits(maps[0], net, lists)

        for path, net, what in want:
            if net not in statements and redistributed(net) is False:
                how = (
                    f"route map {maps[0]!r} of redistribute connected denies it"
                    if maps
                    else "no redistribute connected"
                )
                self.err(
                    path, f"{what} {net} is not announced: no network statement 'default|ipv4_unicast|{net}' and {how}"
                )
        for path, net, what in avoid:
            if net in statements:
                self.err(path, f"{what} {net} is announced by the network statement 'default|ipv4_unicast|{net}'")
            elif redistributed(net) is True:
                how = (
                    f"route map {maps[0]!r} of redistribute connected"
                    if maps
                    else "redistribute connected, which has no route map"
                )
                self.err(path, f"{what} {net} is announced by {how}")

    def _networks(self, name: str):
        for key in table(self.cfg, name):
            _iface, sep, addr = key.partition("|")
            if not sep:
                continue
            try:
                yield name, key, ipaddress.ip_interface(addr)
            except ValueError:
                continue
