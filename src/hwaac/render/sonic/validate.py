"""Validate a config_db dict: ``config_db.schema.json`` (JSON Schema 2020-12) plus cross-table checks.

The schema carries the per-field constraints of sonic-yang-models (mandatory lanes and speed, ranges, enums,
key patterns). What JSON Schema cannot express is checked here:

- every map, scheduler and WRED profile referenced from PORT_QOS_MAP or QUEUE is defined;
- every port named in INTERFACE, VLAN_MEMBER, DEVICE_NEIGHBOR, QUEUE, PORT_QOS_MAP, PFC_WD and CABLE_LENGTH
  (and a BGP local_addr given as a port name) exists in PORT; an address key has its bare interface key; a
  port is not both routed (INTERFACE) and a VLAN member; VLAN_MEMBER / VLAN_INTERFACE name a defined VLAN;
- pfc_enable on every port equals the lossless classes: ``intent.qos.pfc_priorities`` when an intent is
  given, otherwise the traffic classes that the port's tc_to_pg_map sends to a priority group named in its
  pfc_to_pg_map (the PGs that PFC-enabled priorities pause); pfcwd_sw_enable is a subset of pfc_enable;
- with an intent: the DSCP maps in use send qos.roce_dscp to the lossless priority and qos.cnp_dscp to the CNP
  priority, and every port in DEVICE_NEIGHBOR has a PORT_QOS_MAP entry;
- PFC_WD detection_time and restoration_time are at least GLOBAL POLL_INTERVAL; WRED max >= min thresholds;
- a BGP neighbour's local_addr is an address configured on an INTERFACE, in the same subnet as the neighbour.

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
        self.pfc()
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
        for neighbor, entry in _entries(self.cfg, "BGP_NEIGHBOR"):
            local = entry.get("local_addr")
            if not isinstance(local, str):
                continue
            path = ("BGP_NEIGHBOR", neighbor, "local_addr")
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
                self.err(("BGP_NEIGHBOR", neighbor),
                         f"neighbour {neighbor} is not a peer address on {iface} (local_addr {local})")

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
