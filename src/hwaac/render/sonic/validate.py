"""Validate a config_db dict: ``config_db.schema.json`` (JSON Schema 2020-12) plus cross-table checks.

The schema carries the per-field constraints of sonic-yang-models (mandatory lanes and speed, ranges, enums,
key patterns). What JSON Schema cannot express is checked here:

- every map, scheduler and WRED profile referenced from PORT_QOS_MAP or QUEUE is defined;
- every port named in INTERFACE, VLAN_MEMBER, DEVICE_NEIGHBOR, QUEUE, PORT_QOS_MAP, PFC_WD, CABLE_LENGTH and
  BUFFER_PG (and a BGP local_addr given as a port name) exists in PORT; an address key has its bare interface
  key; a port is not both routed (INTERFACE) and a VLAN member; VLAN_MEMBER / VLAN_INTERFACE name a defined VLAN;
- pfc_enable on every port equals the lossless classes: ``intent.qos.pfc_priorities`` when an intent is
  given, otherwise the traffic classes that the port's tc_to_pg_map sends to a priority group named in its
  pfc_to_pg_map (the PGs that PFC-enabled priorities pause); pfcwd_sw_enable is a subset of pfc_enable;
- buffers: every pfc_enable priority of a port has exactly one BUFFER_PG entry with profile NULL (headroom
  computed by buffermgrd) or a lossless BUFFER_PROFILE (one with xoff); PG ranges of a port do not overlap;
  another profile named in BUFFER_PG is defined; NULL profiles need buffer_model dynamic,
  DEFAULT_LOSSLESS_BUFFER_PARAMETER, LOSSLESS_TRAFFIC_PATTERN and the port's CABLE_LENGTH;
- with an intent: the DSCP maps in use send qos.roce_dscp to the lossless priority and qos.cnp_dscp to the CNP
  priority, and every port in DEVICE_NEIGHBOR has a PORT_QOS_MAP entry;
- PFC_WD detection_time and restoration_time are at least GLOBAL POLL_INTERVAL; WRED max >= min thresholds;
- BGP (frrcfgd tables): DEVICE_METADATA enables frrcfgd (frr_mgmt_framework_config true, routing mode
  unified); BGP_GLOBALS local_asn equals DEVICE_METADATA bgp_asn; every per-VRF table names a VRF of
  BGP_GLOBALS; every BGP_NEIGHBOR_AF key has its BGP_NEIGHBOR, and every neighbour an activated address family
  with an in and out route map (FRR's ebgp-requires-policy); every route map referenced exists in ROUTE_MAP
  and ROUTE_MAP_SET, every prefix set in PREFIX_SET; PREFIX lengths ranges fit their prefix;
- a BGP neighbour's local_addr is an address configured on an INTERFACE, in the same subnet as the neighbour;
- what ``redistribute connected`` announces, by evaluating its route map and prefix lists: the Loopback0 /32,
  every VLAN_INTERFACE subnet and every INTERFACE subnet without a BGP session (host links) are permitted;
  every INTERFACE subnet that carries a BGP session (fabric links) is not.

Error paths use jsonschema's JSONPath form: ``$.PORT.Ethernet0.speed``, ``$.QUEUE['Ethernet0|3'].scheduler``.
"""

from __future__ import annotations

import ipaddress
import json
import re
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from hwaac.model.intent import Intent

SCHEMA_FILE = "config_db.schema.json"
_PLAIN_KEY = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")  # keys jsonschema writes as .key in a JSON path

PORT_QOS_REFS = {
    "dscp_to_tc_map": "DSCP_TO_TC_MAP",
    "tc_to_queue_map": "TC_TO_QUEUE_MAP",
    "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP",
    "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE",
    "pfc_to_pg_map": "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
    "scheduler": "SCHEDULER",
}
QUEUE_REFS = {"scheduler": "SCHEDULER", "wred_profile": "WRED_PROFILE"}
# frrcfgd's per-VRF tables and the position of the VRF in their keys (always first).
VRF_TABLES = ("BGP_GLOBALS_AF", "ROUTE_REDISTRIBUTE", "BGP_NEIGHBOR", "BGP_NEIGHBOR_AF")
ROUTING_TABLES = ("BGP_GLOBALS", *VRF_TABLES)
ROUTE_MAP_REFS = (("BGP_NEIGHBOR_AF", "route_map_in"), ("BGP_NEIGHBOR_AF", "route_map_out"),
                  ("ROUTE_REDISTRIBUTE", "route_map"))
ACTIVE = ("true", "up")  # admin_status values that activate (frrcfgd maps both in current versions)


def config_db_schema() -> dict[str, Any]:
    """A fresh copy of the JSON Schema shipped as ``hwaac/render/sonic/config_db.schema.json``."""
    return json.loads(resources.files(__package__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))


@cache
def _validator() -> Draft202012Validator:
    schema = config_db_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def validate_config_db(cfg: dict, intent: Intent | None = None) -> list[str]:
    """Errors in ``cfg`` as ``"<json path>: <problem>"`` lines; an empty list means valid.

    Args:
        cfg: a config_db dict, e.g. from :func:`hwaac.render.sonic.render_config_db` or ``json.load``.
        intent: when given, PFC and DSCP settings are also checked against ``intent.qos``.
    """
    errors = [_schema_message(e) for e in sorted(_validator().iter_errors(cfg),
                                                 key=lambda e: (e.json_path, e.message))]
    if isinstance(cfg, dict):
        errors += _Checker(cfg, intent).run()
    return errors


def _schema_message(e: ValidationError) -> str:
    """jsonschema's message, with the schema's description instead of a raw regex where there is one."""
    schema = e.schema if isinstance(e.schema, dict) else {}
    desc = schema.get("description")
    if desc and e.validator in ("pattern", "enum"):
        return f"{e.json_path}: {e.instance!r} is not {desc}"
    if e.validator == "additionalProperties" and "patternProperties" in schema and isinstance(e.instance, dict):
        known, patterns = schema.get("properties", {}), list(schema["patternProperties"])
        bad = [k for k in e.instance if k not in known and not any(re.search(p, k) for p in patterns)]
        expected = f": expected {desc}" if desc else ""
        return f"{e.json_path}: unexpected key(s) {', '.join(map(repr, bad))}{expected}"
    return f"{e.json_path}: {e.message}"


def json_path(elems: tuple[Any, ...]) -> str:
    """``("QUEUE", "Ethernet0|3", "scheduler")`` -> ``$.QUEUE['Ethernet0|3'].scheduler`` (jsonschema's form)."""
    out = "$"
    for e in elems:
        e = str(e)
        if _PLAIN_KEY.match(e):
            out += "." + e
        else:
            out += "['" + e.replace("\\", "\\\\").replace("'", "\\'") + "']"
    return out


def _table(cfg: dict, name: str) -> dict[str, Any]:
    t = cfg.get(name)
    return t if isinstance(t, dict) else {}


def _entries(cfg: dict, name: str):
    for key, value in _table(cfg, name).items():
        if isinstance(value, dict):
            yield key, value


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _prio_set(value: Any) -> set[int] | None:
    if not isinstance(value, str):
        return None
    try:
        return {int(p) for p in value.split(",") if p.strip()}
    except ValueError:
        return None


def _joined(values: set[int]) -> str:
    return ",".join(str(v) for v in sorted(values))


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _parse_prefix(key: str) -> tuple[int | None, Network, int | None, int | None] | None:
    """PREFIX key ``set|seq|prefix|range`` (or ``set|prefix|range``) -> (seq, network, ge, le); ge/le None = exact."""
    parts = key.split("|")
    if len(parts) == 4:
        seq: int | None = _int(parts[1])
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
    lo_n, hi_n = _int(lo), _int(hi)
    if not sep or lo_n is None or hi_n is None:
        return None
    return seq, net, lo_n, hi_n


def _prefix_list_permits(entries: list[tuple[int, Network, int | None, int | None, str]], route: Network) -> bool:
    """FRR prefix-list semantics: the first entry that matches decides; no match is a deny."""
    for _seq, net, lo, hi, action in entries:
        if route.version != net.version or not route.subnet_of(net):  # type: ignore[arg-type]
            continue
        plen = route.prefixlen
        if (plen == net.prefixlen) if lo is None else (lo <= plen <= hi):  # type: ignore[operator]
            return action == "permit"
    return False


def _pg_range(text: str) -> set[int] | None:
    """BUFFER_PG priority-group part ``3`` or ``3-4`` -> {3} / {3, 4}."""
    lo, sep, hi = text.partition("-")
    lo_n, hi_n = _int(lo), _int(hi) if sep else _int(lo)
    if lo_n is None or hi_n is None or hi_n < lo_n:
        return None
    return set(range(lo_n, hi_n + 1))


class _Checker:
    """The cross-table checks (module docstring); each method appends to ``self.errors``."""

    def __init__(self, cfg: dict, intent: Intent | None):
        self.cfg = cfg
        self.intent = intent
        self.errors: list[str] = []
        self.ports = set(_table(cfg, "PORT"))

    def run(self) -> list[str]:
        self.references()
        self.port_names()
        self.interfaces_and_bgp()
        self.routing()
        self.advertised()
        self.pfc()
        self.buffers()
        self.pfc_watchdog()
        self.wred()
        if self.intent is not None:
            self.intent_qos()
        return self.errors

    def err(self, path: tuple[Any, ...], problem: str) -> None:
        self.errors.append(f"{json_path(path)}: {problem}")

    # --- references -----------------------------------------------------------------------------------------

    def references(self) -> None:
        for table, refs in (("PORT_QOS_MAP", PORT_QOS_REFS), ("QUEUE", QUEUE_REFS)):
            for key, entry in _entries(self.cfg, table):
                for field, target in refs.items():
                    name = entry.get(field)
                    if name is not None and name not in _table(self.cfg, target):
                        self.err((table, key, field), f"{name!r} is not defined in {target}")

    def _port(self, path: tuple[Any, ...], port: str) -> None:
        if port not in self.ports:
            self.err(path, f"port {port!r} is not defined in PORT")

    def port_names(self) -> None:
        cfg = self.cfg
        for key in _table(cfg, "INTERFACE"):
            self._port(("INTERFACE", key), key.split("|", 1)[0])
        for key in _table(cfg, "DEVICE_NEIGHBOR"):
            self._port(("DEVICE_NEIGHBOR", key), key)
        for key in _table(cfg, "QUEUE"):
            self._port(("QUEUE", key), key.split("|", 1)[0])
        for key in _table(cfg, "PORT_QOS_MAP"):
            if key != "global":
                for port in key.split(","):
                    self._port(("PORT_QOS_MAP", key), port)
        for key in _table(cfg, "PFC_WD"):
            if key != "GLOBAL":
                self._port(("PFC_WD", key), key)
        for key in _table(cfg, "BUFFER_PG"):
            self._port(("BUFFER_PG", key), key.split("|", 1)[0])
        for profile, entry in _entries(cfg, "CABLE_LENGTH"):
            for port in entry:
                self._port(("CABLE_LENGTH", profile, port), port)
        vlans = set(_table(cfg, "VLAN"))
        routed = {key.split("|", 1)[0] for key in _table(cfg, "INTERFACE")}
        for key in _table(cfg, "VLAN_MEMBER"):
            vlan, _, port = key.partition("|")
            self._port(("VLAN_MEMBER", key), port)
            if vlan not in vlans:
                self.err(("VLAN_MEMBER", key), f"VLAN {vlan!r} is not defined in VLAN")
            if port in routed:
                self.err(("VLAN_MEMBER", key), f"port {port!r} is also a routed port in INTERFACE")
        for key in _table(cfg, "VLAN_INTERFACE"):
            vlan = key.split("|", 1)[0]
            if vlan not in vlans:
                self.err(("VLAN_INTERFACE", key), f"VLAN {vlan!r} is not defined in VLAN")

    # --- addresses and BGP ------------------------------------------------------------------------------------

    def _addresses(self, table: str) -> dict[ipaddress.IPv4Address | ipaddress.IPv6Address, Any]:
        """Addresses configured in ``table`` -> their interface (address/prefix); checks the bare key exists."""
        out: dict[Any, Any] = {}
        t = _table(self.cfg, table)
        for key in t:
            name, sep, addr = key.partition("|")
            if not sep:
                continue
            if name not in t:
                self.err((table, key), f"address without the interface key {name!r}")
            try:
                iface = ipaddress.ip_interface(addr)
            except ValueError:
                continue  # the schema reports the key pattern
            out[iface.ip] = iface
        return out

    def interfaces_and_bgp(self) -> None:
        on_interface = self._addresses("INTERFACE")
        self._addresses("LOOPBACK_INTERFACE")
        self._addresses("VLAN_INTERFACE")
        for key, entry in _entries(self.cfg, "BGP_NEIGHBOR"):
            local = entry.get("local_addr")
            if not isinstance(local, str):
                continue
            neighbor = key.rpartition("|")[2]
            path = ("BGP_NEIGHBOR", key, "local_addr")
            try:
                local_ip = ipaddress.ip_address(local)
            except ValueError:
                self._port(path, local)
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
                self.err(("BGP_NEIGHBOR", key),
                         f"neighbour {neighbor} is not a peer address on {iface} (local_addr {local})")

    # --- frrcfgd routing tables --------------------------------------------------------------------------------

    def _names(self, value: Any) -> list[str]:
        """A route map reference: a leaf-list (JSON list) or SONiC's comma-joined form of it."""
        if isinstance(value, list):
            return [v for v in value if isinstance(v, str)]
        if isinstance(value, str):
            return [v for v in value.split(",") if v]
        return []

    def routing(self) -> None:
        cfg = self.cfg
        if not any(_table(cfg, t) for t in ROUTING_TABLES):
            return
        meta = _table(cfg, "DEVICE_METADATA").get("localhost")
        meta = meta if isinstance(meta, dict) else {}
        if meta.get("frr_mgmt_framework_config") != "true":
            self.err(("DEVICE_METADATA", "localhost", "frr_mgmt_framework_config"),
                     f"{meta.get('frr_mgmt_framework_config')!r}: frrcfgd, which reads BGP_GLOBALS, BGP_NEIGHBOR "
                     "'vrf|address' and the route maps, runs only when it is 'true'")
        if meta.get("docker_routing_config_mode") != "unified":
            self.err(("DEVICE_METADATA", "localhost", "docker_routing_config_mode"),
                     f"{meta.get('docker_routing_config_mode')!r}: frrcfgd replays CONFIG_DB into FRR at start only "
                     "in 'unified' mode (it assumes 'separated' when the field is absent)")
        globals_ = _table(cfg, "BGP_GLOBALS")
        default = globals_.get("default")
        if isinstance(default, dict) and "bgp_asn" in meta and default.get("local_asn") != meta["bgp_asn"]:
            self.err(("BGP_GLOBALS", "default", "local_asn"),
                     f"{default.get('local_asn')!r} differs from DEVICE_METADATA bgp_asn {meta['bgp_asn']!r}")
        for table in VRF_TABLES:
            for key in _table(cfg, table):
                vrf, sep, _rest = key.partition("|")
                if sep and vrf not in globals_:
                    self.err((table, key), f"VRF {vrf!r} has no BGP_GLOBALS entry (no local_asn): frrcfgd ignores it")
        neighbors = _table(cfg, "BGP_NEIGHBOR")
        activated: dict[str, list[tuple[str, dict]]] = {}
        for key, entry in _entries(cfg, "BGP_NEIGHBOR_AF"):
            nbr = key.rpartition("|")[0]
            if nbr not in neighbors:
                self.err(("BGP_NEIGHBOR_AF", key), f"neighbour {nbr!r} is not defined in BGP_NEIGHBOR")
            elif entry.get("admin_status") in ACTIVE:
                activated.setdefault(nbr, []).append((key, entry))
        for nbr, entry in _entries(cfg, "BGP_NEIGHBOR"):
            if "|" not in nbr:
                continue  # bgpcfgd's shape: the schema reports the key
            afs = activated.get(nbr)
            if not afs:
                self.err(("BGP_NEIGHBOR", nbr), "no BGP_NEIGHBOR_AF activates it: frrcfgd sets 'no bgp default "
                         "ipv4-unicast', so the session would exchange no routes")
                continue
            vrf_globals = globals_.get(nbr.split("|", 1)[0])
            local = vrf_globals.get("local_asn") if isinstance(vrf_globals, dict) else None
            if local is not None and entry.get("asn") == local:
                continue  # iBGP: ebgp-requires-policy does not apply
            for key, af in afs:
                for field in ("route_map_in", "route_map_out"):
                    if not self._names(af.get(field)):
                        self.err(("BGP_NEIGHBOR_AF", key),
                                 f"no {field}: FRR's 'bgp ebgp-requires-policy' lets no route "
                                 f"{'in' if field.endswith('in') else 'out'} on an eBGP session without a policy")
        route_maps = {key.split("|", 1)[0] for key in _table(cfg, "ROUTE_MAP")}
        map_set = _table(cfg, "ROUTE_MAP_SET")
        unlisted: dict[str, tuple[str, str, str]] = {}
        for table, field in ROUTE_MAP_REFS:
            for key, entry in _entries(cfg, table):
                for name in self._names(entry.get(field)):
                    if name not in route_maps:
                        self.err((table, key, field), f"route map {name!r} has no statement in ROUTE_MAP")
                    elif name not in map_set:
                        unlisted.setdefault(name, (table, key, field))
        for name, path in unlisted.items():
            self.err(("ROUTE_MAP_SET",), f"route map {name!r} (used by {json_path(path)}) is not defined here, "
                     "the target of the YANG leafref")
        prefix_sets = _table(cfg, "PREFIX_SET")
        for key, entry in _entries(cfg, "ROUTE_MAP"):
            for field in ("match_prefix_set", "match_ipv6_prefix_set"):
                name = entry.get(field)
                if name is not None and name not in prefix_sets:
                    self.err(("ROUTE_MAP", key, field), f"{name!r} is not defined in PREFIX_SET")
        seqs: dict[tuple[str, str], str] = {}
        for key in _table(cfg, "PREFIX"):
            parts = key.split("|")
            if parts[0] not in prefix_sets:
                self.err(("PREFIX", key), f"prefix set {parts[0]!r} is not defined in PREFIX_SET")
            if len(parts) == 4:
                other = seqs.setdefault((parts[0], parts[1]), key)
                if other != key:
                    self.err(("PREFIX", key), f"sequence number {parts[1]} is also used by {other!r}")
            entry = _parse_prefix(key)
            if entry is None:
                continue  # the schema reports the key pattern
            _seq, net, lo, hi = entry
            if lo is not None and not (net.prefixlen < lo <= hi <= net.max_prefixlen):  # type: ignore[operator]
                self.err(("PREFIX", key), f"length range {lo}..{hi} does not fit {net}: FRR needs "
                         f"len < ge <= le <= {net.max_prefixlen}")

    # --- what redistribute connected announces ---------------------------------------------------------------

    def _prefix_lists(self) -> dict[str, list[tuple[int, Network, int | None, int | None, str]]]:
        lists: dict[str, list[tuple[int, Network, int | None, int | None, str]]] = {}
        for n, (key, entry) in enumerate(_entries(self.cfg, "PREFIX")):
            parsed = _parse_prefix(key)
            if parsed is None:
                continue
            seq, net, lo, hi = parsed
            # a key without sequence number gets FRR's automatic one: after every numbered entry
            lists.setdefault(key.split("|", 1)[0], []).append(
                (seq if seq is not None else (1 << 33) + n, net, lo, hi, str(entry.get("action"))))
        for entries in lists.values():
            entries.sort(key=lambda e: e[0])
        return lists

    def _route_map_permits(self, name: str, route: Network,
                           lists: dict[str, list[tuple[int, Network, int | None, int | None, str]]]) -> bool | None:
        """FRR's verdict for ``route`` under route map ``name``: True permit, False deny, None undecidable here."""
        stmts = []
        for key, entry in _entries(self.cfg, "ROUTE_MAP"):
            map_name, _, seq = key.partition("|")
            if map_name == name and (n := _int(seq)) is not None:
                stmts.append((n, entry))
        for _seq, entry in sorted(stmts, key=lambda s: s[0]):
            matches = [k for k in entry if k.startswith("match_")]
            if any(k != "match_prefix_set" for k in matches):
                return None
            pset = entry.get("match_prefix_set")
            if pset is None or _prefix_list_permits(lists.get(pset, []), route):
                return entry.get("route_operation") == "permit"
        return False  # implicit deny

    def advertised(self) -> None:
        cfg = self.cfg
        if not _table(cfg, "BGP_NEIGHBOR") and not _table(cfg, "BGP_GLOBALS"):
            return
        peers = [ipaddress.ip_address(k.rpartition("|")[2]) for k in _table(cfg, "BGP_NEIGHBOR")
                 if _is_ip(k.rpartition("|")[2])]
        want: list[tuple[tuple[str, str], Network, str]] = []  # (path, network, what), True = must be announced
        avoid: list[tuple[tuple[str, str], Network, str]] = []
        for table, key, iface in self._networks("LOOPBACK_INTERFACE"):
            if key.startswith("Loopback0|") and iface.version == 4:
                want.append(((table, key), iface.network, "the Loopback0 address"))
        for table, key, iface in self._networks("VLAN_INTERFACE"):
            if iface.version == 4:
                want.append(((table, key), iface.network, "VLAN subnet"))
        for table, key, iface in self._networks("INTERFACE"):
            if iface.version != 4:
                continue
            if any(p in iface.network for p in peers):
                avoid.append(((table, key), iface.network, "fabric link subnet (it carries a BGP session)"))
            else:
                want.append(((table, key), iface.network, "host-link subnet"))
        redist = _table(cfg, "ROUTE_REDISTRIBUTE")
        entry = redist.get("default|connected|bgp|ipv4")
        if not isinstance(entry, dict):
            if want:
                self.err(("ROUTE_REDISTRIBUTE",), f"no 'default|connected|bgp|ipv4' entry: {len(want)} connected "
                         f"subnet(s) incl. {want[0][1]} ({want[0][2]}) are never announced")
            return
        maps = self._names(entry.get("route_map"))
        if not maps:
            for path, net, what in avoid:
                self.err(path, f"{what} {net} is announced: redistribute connected has no route map")
            return
        lists = self._prefix_lists()
        for path, net, what in want:
            if self._route_map_permits(maps[0], net, lists) is False:
                self.err(path, f"{what} {net} is not announced: route map {maps[0]!r} of redistribute connected "
                         "denies it")
        for path, net, what in avoid:
            if self._route_map_permits(maps[0], net, lists) is True:
                self.err(path, f"{what} {net} is announced by route map {maps[0]!r} of redistribute connected")

    def _networks(self, table: str):
        for key in _table(self.cfg, table):
            _name, sep, addr = key.partition("|")
            if not sep:
                continue
            try:
                yield table, key, ipaddress.ip_interface(addr)
            except ValueError:
                continue

    # --- PFC ------------------------------------------------------------------------------------------------------

    def _derived_lossless(self, entry: dict) -> set[int] | None:
        pfc_map = _table(self.cfg, "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP").get(entry.get("pfc_to_pg_map"))
        tc_map = _table(self.cfg, "TC_TO_PRIORITY_GROUP_MAP").get(entry.get("tc_to_pg_map"))
        if not isinstance(pfc_map, dict) or not isinstance(tc_map, dict):
            return None
        pgs = set(pfc_map.values())
        return {tc for k, pg in tc_map.items() if pg in pgs and (tc := _int(k)) is not None}

    def pfc(self) -> None:
        for key, entry in _entries(self.cfg, "PORT_QOS_MAP"):
            if key == "global" or "pfc_enable" not in entry:
                continue
            actual = _prio_set(entry.get("pfc_enable"))
            if actual is None:
                continue
            if self.intent is not None:
                expected: set[int] | None = set(self.intent.qos.pfc_priorities)
                source = "intent qos.pfc_priorities"
            else:
                expected = self._derived_lossless(entry)
                source = "traffic classes mapped to the PGs of the PFC priority map"
            if expected is not None and actual != expected:
                self.err(("PORT_QOS_MAP", key, "pfc_enable"),
                         f"{entry['pfc_enable']!r} but the lossless classes are {_joined(expected)!r} ({source})")
            wd = _prio_set(entry.get("pfcwd_sw_enable"))
            if wd is not None and not wd <= actual:
                self.err(("PORT_QOS_MAP", key, "pfcwd_sw_enable"),
                         f"{entry['pfcwd_sw_enable']!r} names priorities without PFC (pfc_enable "
                         f"{entry['pfc_enable']!r})")

    # --- buffers ----------------------------------------------------------------------------------------------------

    def buffers(self) -> None:
        cfg = self.cfg
        profiles = _table(cfg, "BUFFER_PROFILE")
        pgs: dict[str, list[tuple[str, set[int], Any]]] = {}
        null_ports: list[str] = []
        for key, entry in _entries(cfg, "BUFFER_PG"):
            port, _, rng = key.partition("|")
            prios = _pg_range(rng)
            if prios is None:
                continue  # the schema reports the key pattern
            for other, other_prios, _p in pgs.get(port, ()):
                if prios & other_prios:
                    self.err(("BUFFER_PG", key), f"overlaps {other!r}")
            profile = entry.get("profile")
            pgs.setdefault(port, []).append((key, prios, profile))
            if profile == "NULL":
                null_ports.append(key)
            elif isinstance(profile, str) and profile not in profiles:
                self.err(("BUFFER_PG", key, "profile"), f"{profile!r} is not defined in BUFFER_PROFILE")
        for key, entry in _entries(cfg, "PORT_QOS_MAP"):
            if key == "global":
                continue
            prios = _prio_set(entry.get("pfc_enable")) or set()
            for port in key.split(","):
                for prio in sorted(prios):
                    cover = [(k, p) for k, ps, p in pgs.get(port, ()) if prio in ps]
                    if not cover:
                        self.err(("BUFFER_PG", f"{port}|{prio}"), f"missing: PFC priority {prio} of {port} "
                                 "(pfc_enable) has no lossless priority group, so no headroom")
                        continue
                    pg_key, profile = cover[0]
                    if profile == "NULL":
                        continue
                    prof = profiles.get(profile)
                    if isinstance(prof, dict) and "xoff" not in prof:
                        self.err(("BUFFER_PG", pg_key, "profile"), f"{profile!r} is a lossy profile (no xoff) on "
                                 f"PFC priority {prio}")
        if not null_ports:
            return
        meta = _table(cfg, "DEVICE_METADATA").get("localhost")
        model = meta.get("buffer_model") if isinstance(meta, dict) else None
        if model != "dynamic":
            self.err(("DEVICE_METADATA", "localhost", "buffer_model"),
                     f"{model!r}: BUFFER_PG profile NULL ({null_ports[0]!r}...) is computed only by the dynamic "
                     "buffer model")
        for table, field in (("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "default_dynamic_th"),
                             ("LOSSLESS_TRAFFIC_PATTERN", "mtu")):
            if not any(field in e for _, e in _entries(cfg, table)):
                self.err((table,), f"no entry with {field}: buffermgrd leaves the NULL (dynamic) lossless "
                         "PGs pending without it")
        cabled = set()
        for _profile, entry in _entries(cfg, "CABLE_LENGTH"):
            cabled.update(entry)
        for key in null_ports:
            port = key.split("|", 1)[0]
            if port not in cabled:
                self.err(("BUFFER_PG", key), f"port {port!r} has no CABLE_LENGTH: its headroom cannot be computed")

    def pfc_watchdog(self) -> None:
        table = _table(self.cfg, "PFC_WD")
        glob = table.get("GLOBAL")
        poll = _int(glob.get("POLL_INTERVAL")) if isinstance(glob, dict) else None
        if poll is None:
            return
        for key, entry in _entries(self.cfg, "PFC_WD"):
            if key == "GLOBAL":
                continue
            for field in ("detection_time", "restoration_time"):
                value = _int(entry.get(field))
                if value is not None and value < poll:
                    self.err(("PFC_WD", key, field), f"{value} ms is below GLOBAL POLL_INTERVAL {poll} ms")

    def wred(self) -> None:
        for name, entry in _entries(self.cfg, "WRED_PROFILE"):
            for color in ("green", "yellow", "red"):
                lo, hi = _int(entry.get(f"{color}_min_threshold")), _int(entry.get(f"{color}_max_threshold"))
                if lo is not None and hi is not None and hi < lo:
                    self.err(("WRED_PROFILE", name, f"{color}_max_threshold"),
                             f"{hi} is below {color}_min_threshold {lo}")

    def intent_qos(self) -> None:
        assert self.intent is not None
        q = self.intent.qos
        want = {d: q.lossless_priority for d in q.roce_dscp}
        want[q.cnp_dscp] = q.cnp_priority
        used = {e.get("dscp_to_tc_map") for _, e in _entries(self.cfg, "PORT_QOS_MAP")} - {None}
        dscp_maps = _table(self.cfg, "DSCP_TO_TC_MAP")
        for name in sorted(used, key=str):
            m = dscp_maps.get(name)
            if not isinstance(m, dict):
                continue
            for dscp, tc in want.items():
                got = _int(m.get(str(dscp)))
                if got != tc:
                    self.err(("DSCP_TO_TC_MAP", name, dscp),
                             f"DSCP {dscp} maps to TC {m.get(str(dscp))!r}, the intent's qos wants {tc}")
        if q.pfc_priorities:
            covered = set()
            for key in _table(self.cfg, "PORT_QOS_MAP"):
                covered.update(key.split(","))
            for port in _table(self.cfg, "DEVICE_NEIGHBOR"):
                if port not in covered:
                    self.err(("PORT_QOS_MAP",), f"active port {port!r} (in DEVICE_NEIGHBOR) has no entry: PFC off")
