"""Validate a config_db dict against SONiC's YANG models (what hwaac models of them) and hwaac's cross-table checks.

``config_db.schema.json`` carries sonic-yang-models' per-field constraints for the tables hwaac writes; what
JSON Schema cannot express (leafrefs and must conditions, PFC against the lossless classes, buffers, the intent's
DSCP maps) is checked here and BGP in :mod:`hwaac.render.sonic.validate_bgp`. The list of checks:
docs/render-sonic.md, "Validation". Error paths are JSONPath: ``$.QUEUE['Ethernet0|3'].scheduler``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from hwaac.model.intent import Intent
from hwaac.model.sonic_releases import DEFAULT_RELEASE, RELEASES
from hwaac.render.sonic import yang_fields
from hwaac.render.sonic.checks_common import (
    entries,
    joined,
    json_path,
    pg_range,
    prio_set,
    table,
    to_int,
)
from hwaac.render.sonic.context import DEVICE_TYPE
from hwaac.render.sonic.validate_bgp import RoutingChecks

SCHEMA_FILE = "config_db.schema.json"

PORT_QOS_REFS = {
    "dscp_to_tc_map": "DSCP_TO_TC_MAP",
    "tc_to_queue_map": "TC_TO_QUEUE_MAP",
    "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP",
    "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE",
    "pfc_to_pg_map": "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
    "dot1p_to_tc_map": "DOT1P_TO_TC_MAP",
    "tc_to_dscp_map": "TC_TO_DSCP_MAP",
    "scheduler": "SCHEDULER",
}
QUEUE_REFS = {"scheduler": "SCHEDULER", "wred_profile": "WRED_PROFILE"}
ROLE_OF_TYPE = {v: k for k, v in DEVICE_TYPE.items()}

__all__ = ["config_db_schema", "json_path", "validate_config_db"]


def config_db_schema() -> dict[str, Any]:
    """A fresh copy of the JSON Schema shipped as ``hwaac/render/sonic/config_db.schema.json``, with every entry
    marked ``x-yang-table`` completed by the YANG fields of ``yang_fields.json`` it does not constrain itself."""
    schema = json.loads(resources.files(__package__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))
    fields = yang_fields.load()
    for node in _nodes(schema):
        name = node.get("x-yang-table")
        if isinstance(name, str):
            props = node.setdefault("properties", {})
            for field in fields.get(name, ()):
                props.setdefault(field, {})
    return schema


def _nodes(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _nodes(value)


def _yang_int(validator: Any, bounds: list[int], instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
    """``yangInt: [lo, hi]``: SONiC's sonic_yang passes ``int(value, 10)`` to libyang, which checks the range."""
    if not isinstance(instance, str):
        return
    lo, hi = bounds
    value = to_int(instance)
    if value is None or not lo <= value <= hi:
        yield ValidationError(f"{instance!r} is not an integer in {lo}..{hi}")


_Validator = validators.extend(Draft202012Validator, {"yangInt": _yang_int})


@cache
def _validator() -> Any:
    schema = config_db_schema()
    Draft202012Validator.check_schema(schema)
    return _Validator(schema)


def validate_config_db(cfg: dict, intent: Intent | None = None, release: str | None = None) -> list[str]:
    """Errors in ``cfg`` as ``"<json path>: <problem>"`` lines; an empty list means valid.

    Args:
        cfg: a config_db dict, e.g. from :func:`hwaac.render.sonic.render_config_db` or ``json.load``.
        intent: when given, PFC and DSCP settings are also checked against ``intent.qos``, and the release is
            the intent's for the switch's role (DEVICE_METADATA type) unless ``release`` is given.
        release: the SONiC release the config is for (``"202411"``); it decides which BGP admin_status values
            frrcfgd activates. Default: the intent's, else :data:`hwaac.model.sonic_releases.DEFAULT_RELEASE`.

    Raises:
        KeyError: ``release`` is not a known release.
    """
    rel = RELEASES[release or _release_of(cfg, intent)]
    errors = [_schema_message(e) for e in sorted(_validator().iter_errors(cfg), key=lambda e: (e.json_path, e.message))]
    if isinstance(cfg, dict):
        errors += _Checker(cfg, intent, rel).run()
    return errors


def _release_of(cfg: Any, intent: Intent | None) -> str:
    if intent is None or not isinstance(cfg, dict):
        return DEFAULT_RELEASE
    meta = table(cfg, "DEVICE_METADATA").get("localhost")
    kind = meta.get("type") if isinstance(meta, dict) else None
    role = ROLE_OF_TYPE.get(kind) if isinstance(kind, str) else None
    spec = getattr(intent.switches, role, None) if role else None
    return spec.sonic_release if spec is not None else DEFAULT_RELEASE


def _schema_message(e: ValidationError) -> str:
    """jsonschema's message, with the schema's description instead of a raw regex where there is one."""
    schema = e.schema if isinstance(e.schema, dict) else {}
    desc = schema.get("description")
    if desc and e.validator in ("pattern", "enum", "yangInt"):
        return f"{e.json_path}: {e.instance!r} is not {desc}"
    if e.validator == "additionalProperties" and isinstance(e.instance, dict):
        known, patterns = schema.get("properties", {}), list(schema.get("patternProperties", {}))
        bad = [k for k in e.instance if k not in known and not any(re.search(p, k) for p in patterns)]
        if patterns:
            expected = f": expected {desc}" if desc else ""
            return f"{e.json_path}: unexpected key(s) {', '.join(map(repr, bad))}{expected}"
        return f"{e.json_path}: field(s) {', '.join(map(repr, bad))} not defined in the SONiC YANG model"
    return f"{e.json_path}: {e.message}"


class _Checker(RoutingChecks):
    """The cross-table checks (module docstring); each method appends to ``self.errors``."""

    def run(self) -> list[str]:
        self.references()
        self.port_names()
        self.vlans()
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

    # --- references -----------------------------------------------------------------------------------------

    def references(self) -> None:
        for name, refs in (("PORT_QOS_MAP", PORT_QOS_REFS), ("QUEUE", QUEUE_REFS)):
            for key, entry in entries(self.cfg, name):
                for field, target in refs.items():
                    value = entry.get(field)
                    if value is not None and value not in table(self.cfg, target):
                        self.err((name, key, field), f"{value!r} is not defined in {target}")

    def port_names(self) -> None:
        cfg = self.cfg
        for key in table(cfg, "INTERFACE"):
            self.port(("INTERFACE", key), key.split("|", 1)[0])
        for key, entry in entries(cfg, "DEVICE_NEIGHBOR"):
            if isinstance(entry.get("local_port"), str):
                self.port(("DEVICE_NEIGHBOR", key, "local_port"), entry["local_port"])
        for key in table(cfg, "QUEUE"):
            if key.split("|", 1)[0] != "CPU":
                self.port(("QUEUE", key), key.split("|", 1)[0])
        for key in table(cfg, "PORT_QOS_MAP"):
            if key != "global":
                self.port(("PORT_QOS_MAP", key), key)
        for key in table(cfg, "PFC_WD"):
            if key != "GLOBAL":
                self.port(("PFC_WD", key), key)
        for key in table(cfg, "BUFFER_PG"):
            self.port(("BUFFER_PG", key), key.split("|", 1)[0])
        for profile, entry in entries(cfg, "CABLE_LENGTH"):
            for port in entry:
                self.port(("CABLE_LENGTH", profile, port), port)

    def vlans(self) -> None:
        cfg = self.cfg
        vlans = table(cfg, "VLAN")
        for name, entry in entries(cfg, "VLAN"):
            vid = entry.get("vlanid")
            if isinstance(vid, str) and to_int(vid) != to_int(name.removeprefix("Vlan")):
                self.err(("VLAN", name, "vlanid"), f"{vid!r} is not the number in the name {name!r}")
        routed = {key.split("|", 1)[0] for key in table(cfg, "INTERFACE")}
        untagged: dict[str, str] = {}
        for key, entry in entries(cfg, "VLAN_MEMBER"):
            vlan, _, port = key.partition("|")
            self.port(("VLAN_MEMBER", key), port, "PORTCHANNEL")
            if vlan not in vlans:
                self.err(("VLAN_MEMBER", key), f"VLAN {vlan!r} is not defined in VLAN")
            if port in routed:
                self.err(("VLAN_MEMBER", key), f"port {port!r} is also a routed port in INTERFACE")
            if entry.get("tagging_mode") == "untagged":
                other = untagged.setdefault(port, key)
                if other != key:
                    self.err(("VLAN_MEMBER", key), f"port {port!r} is also an untagged member in {other!r}")
        for key in table(cfg, "VLAN_INTERFACE"):
            vlan = key.split("|", 1)[0]
            if vlan not in vlans:
                self.err(("VLAN_INTERFACE", key), f"VLAN {vlan!r} is not defined in VLAN")

    # --- PFC ------------------------------------------------------------------------------------------------------

    def _derived_lossless(self, entry: dict) -> set[int] | None:
        pfc_name, tc_name = entry.get("pfc_to_pg_map"), entry.get("tc_to_pg_map")
        pfc_map = (
            table(self.cfg, "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP").get(pfc_name) if isinstance(pfc_name, str) else None
        )
        tc_map = table(self.cfg, "TC_TO_PRIORITY_GROUP_MAP").get(tc_name) if isinstance(tc_name, str) else None
        if not isinstance(pfc_map, dict) or not isinstance(tc_map, dict):
            return None
        pgs = set(pfc_map.values())
        return {tc for k, pg in tc_map.items() if pg in pgs and (tc := to_int(k)) is not None}

    def pfc(self) -> None:
        for key, entry in entries(self.cfg, "PORT_QOS_MAP"):
            if key == "global" or "pfc_enable" not in entry:
                continue
            actual = prio_set(entry.get("pfc_enable"))
            if actual is None:
                continue
            if self.intent is not None:
                expected: set[int] | None = set(self.intent.qos.pfc_priorities)
                source = "intent qos.pfc_priorities"
            else:
                expected = self._derived_lossless(entry)
                source = "traffic classes mapped to the PGs of the PFC priority map"
            if expected is not None and actual != expected:
                self.err(
                    ("PORT_QOS_MAP", key, "pfc_enable"),
                    f"{entry['pfc_enable']!r} but the lossless classes are {joined(expected)!r} ({source})",
                )
            wd = prio_set(entry.get("pfcwd_sw_enable"))
            if wd is not None and not wd <= actual:
                self.err(
                    ("PORT_QOS_MAP", key, "pfcwd_sw_enable"),
                    f"{entry['pfcwd_sw_enable']!r} names priorities without PFC (pfc_enable {entry['pfc_enable']!r})",
                )

    # --- buffers ----------------------------------------------------------------------------------------------------

    def buffers(self) -> None:
        cfg = self.cfg
        profiles = table(cfg, "BUFFER_PROFILE")
        pgs: dict[str, list[tuple[str, set[int], Any]]] = {}
        null_ports: list[str] = []
        for key, entry in entries(cfg, "BUFFER_PG"):
            port, _, rng = key.partition("|")
            prios = pg_range(rng)
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
        for key, entry in entries(cfg, "PORT_QOS_MAP"):
            if key == "global":
                continue
            prios = prio_set(entry.get("pfc_enable")) or set()
            for port in key.split(","):
                for prio in sorted(prios):
                    cover = [(k, p) for k, ps, p in pgs.get(port, ()) if prio in ps]
                    if not cover:
                        self.err(
                            ("BUFFER_PG", f"{port}|{prio}"),
                            f"missing: PFC priority {prio} of {port} "
                            "(pfc_enable) has no lossless priority group, so no headroom",
                        )
                        continue
                    pg_key, profile = cover[0]
                    if profile == "NULL":
                        continue
                    prof = profiles.get(profile)
                    if isinstance(prof, dict) and "xoff" not in prof:
                        self.err(
                            ("BUFFER_PG", pg_key, "profile"),
                            f"{profile!r} is a lossy profile (no xoff) on PFC priority {prio}",
                        )
        if not null_ports:
            return
        meta = table(cfg, "DEVICE_METADATA").get("localhost")
        model = meta.get("buffer_model") if isinstance(meta, dict) else None
        if model != "dynamic":
            self.err(
                ("DEVICE_METADATA", "localhost", "buffer_model"),
                f"{model!r}: BUFFER_PG profile NULL ({null_ports[0]!r}...) is computed only by the dynamic "
                "buffer model",
            )
        for name, field in (
            ("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "default_dynamic_th"),
            ("LOSSLESS_TRAFFIC_PATTERN", "mtu"),
        ):
            if not any(field in e for _, e in entries(cfg, name)):
                self.err(
                    (name,),
                    f"no entry with {field}: buffermgrd leaves the NULL (dynamic) lossless PGs pending without it",
                )
        cabled: set[str] = set()
        for _profile, entry in entries(cfg, "CABLE_LENGTH"):
            cabled.update(entry)
        for key in null_ports:
            port = key.split("|", 1)[0]
            if port not in cabled:
                self.err(("BUFFER_PG", key), f"port {port!r} has no CABLE_LENGTH: its headroom cannot be computed")

    def pfc_watchdog(self) -> None:
        glob = table(self.cfg, "PFC_WD").get("GLOBAL")
        poll = to_int(glob.get("POLL_INTERVAL")) if isinstance(glob, dict) else None
        if poll is None:
            return
        for key, entry in entries(self.cfg, "PFC_WD"):
            if key == "GLOBAL":
                continue
            for field in ("detection_time", "restoration_time"):
                value = to_int(entry.get(field))
                if value is not None and value < poll:
                    self.err(("PFC_WD", key, field), f"{value} ms is below GLOBAL POLL_INTERVAL {poll} ms")

    def wred(self) -> None:
        for name, entry in entries(self.cfg, "WRED_PROFILE"):
            for color in ("green", "yellow", "red"):
                lo, hi = to_int(entry.get(f"{color}_min_threshold")), to_int(entry.get(f"{color}_max_threshold"))
                if hi is not None and f"{color}_min_threshold" not in entry:
                    self.err(
                        ("WRED_PROFILE", name, f"{color}_max_threshold"),
                        f"given without {color}_min_threshold (the YANG must compares it with the min)",
                    )
                elif lo is not None and hi is not None and hi < lo:
                    self.err(
                        ("WRED_PROFILE", name, f"{color}_max_threshold"), f"{hi} is below {color}_min_threshold {lo}"
                    )

    def intent_qos(self) -> None:
        assert self.intent is not None
        q = self.intent.qos
        want = {d: q.lossless_priority for d in q.roce_dscp}
        want[q.cnp_dscp] = q.cnp_priority
        # a name that is not a string names no map (the table's keys are strings)
        used = {m for _, e in entries(self.cfg, "PORT_QOS_MAP") if isinstance(m := e.get("dscp_to_tc_map"), str)}
        dscp_maps = table(self.cfg, "DSCP_TO_TC_MAP")
        for name in sorted(used, key=str):
            m = dscp_maps.get(name)
            if not isinstance(m, dict):
                continue
            for dscp, tc in want.items():
                got = to_int(m.get(str(dscp)))
                if got != tc:
                    self.err(
                        ("DSCP_TO_TC_MAP", name, dscp),
                        f"DSCP {dscp} maps to TC {m.get(str(dscp))!r}, the intent's qos wants {tc}",
                    )
        if q.pfc_priorities:
            covered = set()
            for key in table(self.cfg, "PORT_QOS_MAP"):
                covered.update(key.split(","))
            for port in table(self.cfg, "DEVICE_NEIGHBOR"):
                if port not in covered:
                    self.err(("PORT_QOS_MAP",), f"active port {port!r} (in DEVICE_NEIGHBOR) has no entry: PFC off")
