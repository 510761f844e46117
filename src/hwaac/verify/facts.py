"""Parsers of the raw outputs the catalog reads, one per format; they return facts and never judge.

Formats, as recorded in tests/fixtures/verify/ (FRR 8.4, lldpd 1.0.16, iproute2 6.1, iputils 20221126): vtysh's
failures (FRR's BGP and route JSON itself is read by :mod:`hwaac.telemetry.parsers.frr_bgp` and
:mod:`hwaac.telemetry.parsers.frr_routes`), ``lldpcli -f json0 show neighbors``, ``ip -j link show``, ``ip -j route
get`` and iputils ``ping``. Each format's shape and its source file (lldpd, iproute2, iputils, FRR):
docs/verify.md "The formats the parsers read".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from hwaac.telemetry.parsers.frr_bgp import BgpSummary
from hwaac.telemetry.parsers.frr_bgp import parse_bgp_summary as read_bgp_summary
from hwaac.telemetry.parsers.frr_routes import Route
from hwaac.telemetry.parsers.frr_routes import parse_routes as read_routes
from hwaac.verify import commands as C
from hwaac.verify.raw import Command, Outputs, Raw

VTYSH_DOWN = ("failed to connect to any daemons", "is not running")
TIMED_OUT = "timed out"  # how collectors start the error of a command that ran past its time limit


class FactError(Exception):
    """An output that gives no facts. ``kind``: ``missing`` (not collected), ``unreachable`` (the command could
    not be run), ``timeout`` (it ran past its limit: the device answers, slowly), ``daemon_down`` (vtysh reached
    no FRR daemon), ``failed`` (non-zero exit), ``malformed``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class LldpNeighbor:
    sysname: str
    port_id: str
    port_id_type: str
    port_descr: str


@dataclass(frozen=True, slots=True)
class Link:
    name: str
    admin_up: bool
    lower_up: bool
    operstate: str
    mtu: int | None
    flags: tuple[str, ...]

    @property
    def oper_up(self) -> bool:
        return self.operstate == "UP" or (self.operstate == "UNKNOWN" and self.lower_up)


@dataclass(frozen=True, slots=True)
class RouteGet:
    dev: str | None
    gateway: str | None
    table: str | None
    error: str | None  # "Network is unreachable" and the like (rc != 0)


@dataclass(frozen=True, slots=True)
class Ping:
    transmitted: int
    received: int
    frag_needed_mtu: int | None  # from an ICMP "Frag needed" a router sent
    local_mtu: int | None  # from "local error: message too long, mtu=N"
    error: str | None  # ping could not send at all (bind failure, unknown host, ...)

    @property
    def ok(self) -> bool:
        return self.received > 0


def _text(raw: Raw, what: str, allow_rc: tuple[int, ...] = (0,)) -> str:
    if raw.error is not None:
        kind = "timeout" if raw.error.startswith(TIMED_OUT) else "unreachable"
        raise FactError(kind, f"{what}: {raw.error}")
    if raw.argv and raw.argv[0] == "vtysh" and raw.rc != 0:
        err = (raw.stderr or raw.stdout).strip()
        kind = "daemon_down" if any(s in err for s in VTYSH_DOWN) else "failed"
        raise FactError(kind, f"{what}: rc {raw.rc}: {err.splitlines()[0] if err else 'no output'}")
    if raw.rc not in allow_rc:
        err = (raw.stderr or raw.stdout).strip()
        raise FactError("failed", f"{what}: rc {raw.rc}: {err.splitlines()[0] if err else 'no output'}")
    return raw.stdout


def _json(raw: Raw, what: str) -> Any:
    text = _text(raw, what)
    if raw.argv and raw.argv[0] == "vtysh" and any(s in text for s in VTYSH_DOWN):
        raise FactError("daemon_down", f"{what}: {text.strip().splitlines()[0]}")
    try:
        return orjson.loads(text) if text.strip() else None
    except orjson.JSONDecodeError:
        first = text.strip().splitlines()[0] if text.strip() else ""
        raise FactError("malformed", f"{what}: not JSON: {first[:160]!r}") from None


def _vtysh_text(raw: Raw, what: str) -> str:
    """The output of a vtysh ``... json`` command ("{}" when it printed nothing). Raises: FactError."""
    text = _text(raw, what)
    if raw.argv and raw.argv[0] == "vtysh" and any(s in text for s in VTYSH_DOWN):
        raise FactError("daemon_down", f"{what}: {text.strip().splitlines()[0]}")
    return text if text.strip() else "{}"


def parse_bgp_summary(raw: Raw) -> BgpSummary:
    """The peers (:func:`hwaac.telemetry.parsers.frr_bgp.parse_bgp_summary`). Raises: FactError."""
    what = "show bgp summary json"
    summary = read_bgp_summary(_vtysh_text(raw, what))
    if not summary.parsed:
        raise FactError("malformed", f"{what}: {summary.unknown[0]}")
    return summary


def parse_routes(raw: Raw) -> dict[str, Route]:
    """prefix -> the selected route, the first entry when none is selected
    (:func:`hwaac.telemetry.parsers.frr_routes.parse_routes`). Raises: FactError."""
    what = "show ip route json"
    table = read_routes(_vtysh_text(raw, what))
    if not table.parsed:
        raise FactError("malformed", f"{what}: {table.unknown[0]}")
    return table.routes


def parse_lldp(raw: Raw) -> dict[str, list[LldpNeighbor]]:
    """local interface -> its neighbours (usually one). Raises: FactError."""
    what = "lldpcli -f json0 show neighbors"
    data = _json(raw, what)
    try:
        blocks = data["lldp"] if data else []
        out: dict[str, list[LldpNeighbor]] = {}
        for block in blocks:
            for itf in block.get("interface", []):
                chassis = (itf.get("chassis") or [{}])[0]
                port = (itf.get("port") or [{}])[0]
                pid = (port.get("id") or [{}])[0]
                out.setdefault(itf["name"], []).append(
                    LldpNeighbor(
                        _value(chassis.get("name")),
                        str(pid.get("value", "")),
                        str(pid.get("type", "")),
                        _value(port.get("descr")),
                    )
                )
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        raise FactError("malformed", f"{what}: not the json0 shape ({type(exc).__name__}: {exc})") from None
    return out


def _value(items: Any) -> str:
    if isinstance(items, list) and items and isinstance(items[0], Mapping):
        return str(items[0].get("value", ""))
    return ""


def parse_links(raw: Raw) -> dict[str, Link]:
    """interface -> its state. Raises: FactError."""
    what = "ip -j link show"
    data = _json(raw, what)
    if not isinstance(data, list):
        raise FactError("malformed", f"{what}: expected a list of links")
    out = {}
    for link in data:
        flags = tuple(link.get("flags", []))
        name = str(link.get("ifname", ""))
        mtu = link.get("mtu")
        out[name] = Link(
            name,
            "UP" in flags,
            "LOWER_UP" in flags,
            str(link.get("operstate", "")),
            mtu if isinstance(mtu, int) else None,
            flags,
        )
    return out


def parse_route_get(raw: Raw) -> RouteGet:
    """Raises: FactError (only when the command did not run: an unroutable destination is a fact)."""
    what = "ip -j route get"
    text = _text(raw, what, allow_rc=(0, 1, 2))
    if raw.rc != 0:
        err = (raw.stderr or text).strip()
        return RouteGet(None, None, None, err.removeprefix("RTNETLINK answers: ") or f"rc {raw.rc}")
    try:
        data = orjson.loads(text)
        entry = data[0]
    except (orjson.JSONDecodeError, IndexError, KeyError, TypeError):
        raise FactError("malformed", f"{what}: not a JSON route: {text.strip()[:160]!r}") from None
    return RouteGet(entry.get("dev"), entry.get("gateway"), str(entry["table"]) if "table" in entry else None, None)


_SENT = re.compile(r"(\d+) packets transmitted, (\d+) (?:packets )?received")
_FRAG = re.compile(r"Frag needed and DF set \(mtu = (\d+)\)")
_LOCAL = re.compile(r"local error: message too long, mtu[= ](\d+)")


def parse_ping(raw: Raw) -> Ping:
    """Raises: FactError (the command did not run). rc 1 (no reply) is a fact; rc 2 without statistics is
    ping's own error (``error`` set)."""
    text = _text(raw, "ping", allow_rc=(0, 1, 2))
    both = f"{text}\n{raw.stderr}"
    m = _SENT.search(text)
    frag = _FRAG.search(both)
    local = _LOCAL.search(both)
    if m is None:
        err = (raw.stderr or text).strip().splitlines()
        return Ping(
            0,
            0,
            int(frag.group(1)) if frag else None,
            int(local.group(1)) if local else None,
            err[0] if err else f"rc {raw.rc}, no statistics",
        )
    return Ping(
        int(m.group(1)),
        int(m.group(2)),
        int(frag.group(1)) if frag else None,
        int(local.group(1)) if local else None,
        None,
    )


class Facts:
    """The parsed outputs of a collection, read lazily and each once; the checks ask this, never the raw."""

    def __init__(self, outputs: Outputs) -> None:
        self.outputs = outputs
        self._cache: dict[tuple[str, str], Any] = {}

    def raw(self, device: str, command: Command) -> Raw:
        """Raises: FactError("missing") when it was not collected."""
        raw = self.outputs.get(device, {}).get(command.key)
        if raw is None:
            raise FactError("missing", f"{command.key}: not collected on {device}")
        return raw

    def _parsed(self, device: str, command: Command, parser: Any) -> Any:
        key = (device, command.key)
        if key not in self._cache:
            try:
                self._cache[key] = parser(self.raw(device, command))
            except FactError as exc:
                self._cache[key] = exc
        value = self._cache[key]
        if isinstance(value, FactError):
            raise value
        return value

    def bgp(self, device: str) -> BgpSummary:
        return self._parsed(device, C.BGP_SUMMARY, parse_bgp_summary)

    def routes(self, device: str) -> dict[str, Route]:
        return self._parsed(device, C.ROUTES, parse_routes)

    def lldp(self, device: str) -> dict[str, list[LldpNeighbor]]:
        return self._parsed(device, C.LLDP, parse_lldp)

    def links(self, device: str) -> dict[str, Link]:
        return self._parsed(device, C.LINKS, parse_links)

    def route_get(self, device: str, dst: str, src: str) -> RouteGet:
        return self._parsed(device, C.route_get(dst, src), parse_route_get)

    def ping(self, device: str, dst: str, src: str) -> Ping:
        return self._parsed(device, C.ping(dst, src), parse_ping)

    def ping_df(self, device: str, dst: str, src: str, mtu: int) -> Ping:
        return self._parsed(device, C.ping_df(dst, src, mtu), parse_ping)

    def unreachable(self, device: str) -> str | None:
        """Why nothing could be run on ``device`` (no output at all, or every output a collector error), else None."""
        raws = self.outputs.get(device)
        if raws is None:
            return "no output gathered from it (the gathering did not reach it)"
        if not raws:
            return None
        errors = [r.error for r in raws.values()]
        if not all(errors) or all(e.startswith(TIMED_OUT) for e in errors):  # type: ignore[union-attr]
            return None  # something answered, or everything only ran late (an ERROR, not a device down)
        return next(e for e in errors if e and not e.startswith(TIMED_OUT))
