"""The CONFIG_DB changes that drain a link or a switch gracefully, and undrain it, on each switch involved.

A drain works on BGP sessions at both ends (the link's pair, or every session of a switch and its peers' ends): first
the session's outbound route map gets RFC 8326's GRACEFUL_SHUTDOWN community (the peer lowers the routes' local
preference and moves traffic away while the session still carries it), then the session is shut. An undrain opens
the session still marked, then restores the rendered route map. Each step is a partial CONFIG_DB that the rollout's
patch path merges (``owned_tables`` empty). Why and how: ``docs/mitigation.md``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hwaac.plan.model import Link, Plan

Config = dict[str, dict[str, dict[str, Any]]]
GSHUT_COMMUNITY = "graceful-shutdown"  # RFC 8326 GRACEFUL_SHUTDOWN, 65535:0; FRR's keyword for it
GSHUT_PREFIX = "HWAAC_GSHUT"
GRACEFUL, SHUT, OPEN, RESTORE = "graceful", "shut", "open", "restore"


class DrainError(ValueError):
    """The rendered configs do not hold the sessions a drain needs (names the device and what is missing)."""


@dataclass(frozen=True, slots=True)
class Session:
    """One end of a BGP session: ``device``'s neighbour ``neighbor`` (an address) in ``vrf``, its address families
    and the outbound route maps the rendered config gives each family."""

    device: str
    vrf: str
    neighbor: str
    route_maps_out: tuple[tuple[str, tuple[str, ...]], ...]  # (family, its rendered route_map_out)

    @property
    def key(self) -> str:
        return f"{self.vrf}|{self.neighbor}"


@dataclass(frozen=True, slots=True)
class Step:
    """One change on one switch: ``stage`` (graceful, shut, open, restore) and the partial CONFIG_DB to merge."""

    device: str
    stage: str
    config: Config = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "stage": self.stage, "config": self.config}


def gshut_map(route_maps: tuple[str, ...]) -> str:
    """The route map a drained session sends through: GRACEFUL_SHUTDOWN added, then the rendered map called."""
    return GSHUT_PREFIX if not route_maps else f"{GSHUT_PREFIX}_{route_maps[-1]}"


def _sessions_to(config: Mapping[str, Any], device: str, neighbors: Iterable[str]) -> list[Session]:
    wanted = set(neighbors)
    out = []
    nbrs = config.get("BGP_NEIGHBOR", {})
    afs = config.get("BGP_NEIGHBOR_AF", {})
    for key in nbrs:
        vrf, _, addr = key.partition("|")
        if addr not in wanted:
            continue
        maps = tuple(
            sorted(
                (k.split("|")[2], tuple(v.get("route_map_out", ())))
                for k, v in afs.items()
                if k.startswith(f"{key}|") and k.count("|") == 2
            )
        )
        out.append(Session(device, vrf, addr, maps))
        wanted.discard(addr)
    if wanted:
        raise DrainError(f"{device}: no BGP_NEIGHBOR for {', '.join(sorted(wanted))} in its rendered config_db")
    return out


def link_sessions(link: Link, rendered: Mapping[str, Mapping[str, Any]]) -> list[Session]:
    """Both ends of the BGP session on ``link`` (a switch-to-switch link)."""
    if link.kind == "host":
        raise DrainError(f"cable {link.cable_id} is a host link: it has no BGP session to drain")
    out = []
    for device, far in ((link.a_device, link.b_ip), (link.b_device, link.a_ip)):
        if device not in rendered:
            raise DrainError(f"{device}: no rendered config_db")
        out += _sessions_to(rendered[device], device, [str(ipaddress.IPv4Address(far))])
    return out


def switch_sessions(plan: Plan, switch: str, rendered: Mapping[str, Mapping[str, Any]]) -> list[Session]:
    """Every BGP session of ``switch`` with its switch peers, at both ends."""
    out = []
    for link in plan.links:
        if link.kind != "host" and switch in (link.a_device, link.b_device):
            out += link_sessions(link, rendered)
    if not out:
        raise DrainError(f"{switch}: no switch-to-switch link in the plan")
    return out


def _by_device(sessions: Iterable[Session]) -> dict[str, list[Session]]:
    out: dict[str, list[Session]] = {}
    for s in sessions:
        out.setdefault(s.device, []).append(s)
    return out


def _marked(sessions: list[Session], *, gshut: bool) -> Config:
    """Each session's families with their outbound map marked (GRACEFUL_SHUTDOWN) or as rendered; the marking
    maps themselves when marked."""
    cfg: Config = {}
    for s in sessions:
        for family, maps in s.route_maps_out:
            name = gshut_map(maps)
            if gshut:
                entry: dict[str, Any] = {
                    "route_operation": "permit",
                    "set_community_inline": [GSHUT_COMMUNITY, "additive"],
                }
                if maps:
                    entry["call_route_map"] = maps[-1]
                cfg.setdefault("ROUTE_MAP_SET", {})[name] = {}
                cfg.setdefault("ROUTE_MAP", {})[f"{name}|10"] = entry
            cfg.setdefault("BGP_NEIGHBOR_AF", {})[f"{s.key}|{family}"] = {
                "route_map_out": [name] if gshut else list(maps)
            }
    return cfg


def _admin(sessions: list[Session], status: str) -> Config:
    return {"BGP_NEIGHBOR": {s.key: {"admin_status": status} for s in sessions}}


def drain_steps(sessions: Iterable[Session]) -> list[Step]:
    """Mark every session graceful (all devices), then shut every session (all devices)."""
    by = _by_device(sessions)
    return [Step(d, GRACEFUL, _marked(ss, gshut=True)) for d, ss in by.items()] + [
        Step(d, SHUT, _admin(ss, "down")) for d, ss in by.items()
    ]


def undrain_steps(sessions: Iterable[Session]) -> list[Step]:
    """Open every session still marked (all devices), then restore the rendered outbound maps (all devices)."""
    by = _by_device(sessions)
    return [Step(d, OPEN, _merge(_admin(ss, "up"), _marked(ss, gshut=True))) for d, ss in by.items()] + [
        Step(d, RESTORE, _marked(ss, gshut=False)) for d, ss in by.items()
    ]


def _merge(a: Config, b: Config) -> Config:
    out: Config = {t: dict(v) for t, v in a.items()}
    for table, entries in b.items():
        out.setdefault(table, {}).update(entries)
    return out


def _marked_map(entry: Mapping[str, Any]) -> bool:
    return any(str(m).startswith(GSHUT_PREFIX) for m in entry.get("route_map_out", ()) or ())


def keep_drains(running: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
    """``desired`` (a rendered CONFIG_DB a rollout pushes) with the drains ``running`` holds carried over, so that
    a rollout does not undrain what mitigation drained: each session ``desired`` keeps whose outbound map is one of
    the marking maps keeps that map and its admin status, and the marking maps stay. ``desired`` itself when
    nothing is drained."""
    afs = {k: v for k, v in running.get("BGP_NEIGHBOR_AF", {}).items() if _marked_map(v)}
    if not afs:
        return dict(desired)
    out: dict[str, Any] = {t: dict(v) if isinstance(v, Mapping) else v for t, v in desired.items()}
    want_afs, want_nbrs = out.get("BGP_NEIGHBOR_AF", {}), out.get("BGP_NEIGHBOR", {})
    run_nbrs = running.get("BGP_NEIGHBOR", {})
    kept = False
    for key, entry in afs.items():
        if key not in want_afs:
            continue
        kept = True
        want_afs[key] = {**want_afs[key], "route_map_out": list(entry["route_map_out"])}
        nbr = key.rsplit("|", 1)[0]
        status = run_nbrs.get(nbr, {}).get("admin_status")
        if nbr in want_nbrs and status is not None:
            want_nbrs[nbr] = {**want_nbrs[nbr], "admin_status": status}
    if kept:
        for table in ("ROUTE_MAP_SET", "ROUTE_MAP"):
            marking = {k: v for k, v in running.get(table, {}).items() if k.startswith(GSHUT_PREFIX)}
            if marking:
                out[table] = {**out.get(table, {}), **marking}
    return out


__all__ = [
    "GRACEFUL",
    "GSHUT_COMMUNITY",
    "OPEN",
    "RESTORE",
    "SHUT",
    "DrainError",
    "Session",
    "Step",
    "drain_steps",
    "gshut_map",
    "keep_drains",
    "link_sessions",
    "switch_sessions",
    "undrain_steps",
]
