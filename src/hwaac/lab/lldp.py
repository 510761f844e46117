"""lldpd per device namespace, and its neighbours as facts.

Each instance has its own control socket, pid file and start-up commands (``lldpd -u SOCK -p PID -O CONF``,
lldpd(8)): the system name is the device name (namespaces share the host's UTS name), the port id is the
interface name (``configure lldp portidsubtype ifname``, comparable with the cabling plan), one frame a second
(every few seconds in labs of thousands of ports, :func:`tx_interval`).
``lldpcli -f json0 show neighbors`` output (lldpd ``src/client/json_writer.c``: every value in a list) is
read by :func:`parse_neighbors`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hwaac.lab.errors import LabError
from hwaac.lab.ksm import mark_mergeable
from hwaac.lab.layout import SUN_PATH_MAX, Layout
from hwaac.lab.procs import ident, read_pidfile, run

LLDPD = "/usr/sbin/lldpd"
LLDPCLI = "/usr/sbin/lldpcli"
MIN_VERSION = (1, 0)
INSTALL = "install lldpd (Debian package lldpd, >= 1.0)"
SMALL_LAB_ENDS = 2048
PORTS_PER_SECOND = 1024


@dataclass(frozen=True, slots=True)
class Neighbor:
    """What one local interface hears: the peer's system name and port id."""

    interface: str
    system: str
    port: str


def version() -> str:
    """lldpd's version (``lldpd -v``).

    Raises:
        LabError: lldpd is missing or older than 1.0, saying what to install.
    """
    if not Path(LLDPD).exists() or not Path(LLDPCLI).exists():
        raise LabError(f"lldpd not found ({LLDPD}, {LLDPCLI}): {INSTALL}; scripts/install-system-deps.sh does it")
    text = run([LLDPD, "-v"], timeout=10).stdout.strip()
    m = re.match(r"(\d+)\.(\d+)", text)
    if not m or (int(m[1]), int(m[2])) < MIN_VERSION:
        raise LabError(f"lldpd {text or '?'} is too old: {INSTALL}")
    return text


def tx_interval(link_ends: int) -> int:
    """Seconds between LLDP frames: 1 up to SMALL_LAB_ENDS link ends (the demo's 2,048), else one per
    PORTS_PER_SECOND ends. Every instance rescans its interfaces and sends on each port at every interval; at
    8,700 ends lldpd took a third of two cores at 1 s and still 15 % at 5 s (benchmarks/lab_scale.py, su16)."""
    return 1 if link_ends <= SMALL_LAB_ENDS else -(-link_ends // PORTS_PER_SECOND)


def config_text(device: str, interval: int = 1) -> str:
    """The commands lldpd runs at start for ``device``."""
    return (
        f"configure system hostname {device}\n"
        "configure lldp portidsubtype ifname\n"
        f"configure lldp tx-interval {interval}\n"
    )


def start(layout: Layout, device: str, netns: str, interfaces: Iterable[str], interval: int = 1) -> dict[str, int]:
    """Start lldpd for ``device`` in ``netns`` on ``interfaces`` (at ``nice`` 10: routing goes first); its process
    record.

    Raises:
        LabError: the socket path is too long for a unix socket, or lldpd did not start.
    """
    sock = layout.lldp_socket(device)
    if len(str(sock)) > SUN_PATH_MAX:
        raise LabError(
            f"{sock}: longer than a unix socket path may be ({SUN_PATH_MAX}); use a shorter HWAAC_LAB_STATE_DIR"
        )
    conf = layout.conf(device, "lldpd")
    conf.write_text(config_text(device, interval))
    pidfile = layout.pidfile(device, "lldpd")
    mark_mergeable()
    ifaces = ",".join(sorted(interfaces))
    run(
        [
            "ip",
            "netns",
            "exec",
            netns,
            "nice",
            "-n",
            "10",
            LLDPD,
            "-u",
            str(sock),
            "-p",
            str(pidfile),
            "-O",
            str(conf),
            *(["-I", ifaces] if ifaces else []),
        ],
        timeout=30,
    )
    return ident(read_pidfile(pidfile))


def wait_ready(layout: Layout, device: str, timeout: float = 30.0) -> None:
    """Return once ``device``'s lldpd answers on its control socket: it has then scanned its ports once, and its
    netlink socket is open (lldpd ``src/daemon/event.c``: ``levent_loop`` runs ``lldpd_loop`` before it accepts
    a client).

    Raises:
        LabError: it did not answer within ``timeout`` s.
    """
    run([LLDPCLI, "-u", str(layout.lldp_socket(device)), "show", "configuration"], timeout=timeout)


def parse_neighbors(text: str | Mapping[str, Any]) -> list[Neighbor]:
    """The neighbours in ``lldpcli -f json0 show neighbors`` output, sorted by interface.

    Raises:
        ValueError: not that output.
    """
    try:
        data = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError as exc:
        raise ValueError(f"not lldpcli json0 output: {str(text)[:120]!r}") from exc
    if not isinstance(data, Mapping) or not isinstance(data.get("lldp"), list):
        raise ValueError("not lldpcli json0 output: no 'lldp' list")
    out: list[Neighbor] = []
    for block in data["lldp"]:
        for iface in block.get("interface", []) if isinstance(block, Mapping) else []:
            chassis = (iface.get("chassis") or [{}])[0]
            port = (iface.get("port") or [{}])[0]
            out.append(
                Neighbor(
                    interface=str(iface.get("name", "")),
                    system=_first(chassis.get("name")),
                    port=_first(port.get("id")),
                )
            )
    return sorted(out, key=lambda n: n.interface)


def _first(values: Any) -> str:
    if isinstance(values, list) and values and isinstance(values[0], Mapping):
        return str(values[0].get("value", ""))
    return ""
