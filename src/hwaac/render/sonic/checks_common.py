"""What the config_db checks of :mod:`hwaac.render.sonic.validate` share: table access, value parsing, error paths.

:class:`CheckerBase` holds the config, the intent, the SONiC release the config is for and the error list; the
check mixins (:mod:`hwaac.render.sonic.validate_bgp`, :mod:`hwaac.render.sonic.validate`) append to it.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from typing import Any

from hwaac.model.intent import Intent
from hwaac.model.sonic_releases import SonicRelease

_PLAIN_KEY = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")  # keys jsonschema writes as .key in a JSON path
# sonic-bgp-common.yang local_addr: the VLAN alternative is a pattern, not a leafref
VLAN_NAME = re.compile(r"Vlan(?:[0-9]{1,3}|[1-3][0-9]{3}|40[0-8][0-9]|409[0-4])")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


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


def table(cfg: dict, name: str) -> dict[str, Any]:
    t = cfg.get(name)
    return t if isinstance(t, dict) else {}


def entries(cfg: dict, name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for key, value in table(cfg, name).items():
        if isinstance(value, dict):
            yield key, value


def to_int(value: Any) -> int | None:
    """An integer as SONiC's sonic_yang reads a config_db string (``int(value, 10)``), else None."""
    try:
        return int(value, 10) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        return None


def prio_set(value: Any) -> set[int] | None:
    if not isinstance(value, str):
        return None
    try:
        return {int(p) for p in value.split(",") if p.strip()}
    except ValueError:
        return None


def joined(values: set[int]) -> str:
    return ",".join(str(v) for v in sorted(values))


def is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def pg_range(text: str) -> set[int] | None:
    """BUFFER_PG priority-group part ``3`` or ``3-4`` -> {3} / {3, 4}."""
    lo, sep, hi = text.partition("-")
    lo_n, hi_n = to_int(lo), to_int(hi) if sep else to_int(lo)
    if lo_n is None or hi_n is None or hi_n < lo_n:
        return None
    return set(range(lo_n, hi_n + 1))


class CheckerBase:
    """State shared by the check mixins; :meth:`err` records one problem at a JSON path."""

    def __init__(self, cfg: dict, intent: Intent | None, release: SonicRelease):
        self.cfg = cfg
        self.intent = intent
        self.release = release
        self.errors: list[str] = []
        self.ports = set(table(cfg, "PORT"))

    def err(self, path: tuple[Any, ...], problem: str) -> None:
        self.errors.append(f"{json_path(path)}: {problem}")

    def port(self, path: tuple[Any, ...], port: str, *also: str) -> None:
        """``port`` must be a PORT (or a key of one of the tables ``also``): the YANG leafref."""
        if port in self.ports or any(port in table(self.cfg, t) for t in also):
            return
        where = " or ".join(("PORT", *also))
        self.err(path, f"port {port!r} is not defined in {where}")
