"""zebra and bgpd per switch namespace, each pair in its own FRR path space.

``ip netns exec NS /usr/lib/frr/zebra -d -N NS -u frr -g frr -P 0 -f zebra.conf -i zebra.pid`` (and bgpd the
same): ``-N`` puts the vty and zserv sockets in ``/var/run/frr/NS/`` so ``vtysh -N NS`` (or ``--vty_socket``)
reaches this pair only; ``-P 0`` opens no TCP vty. FRR writes its pid file after dropping to ``frr``, so the
device folder belongs to ``frr``. No ``-F datacenter``: the rendered route maps satisfy ``bgp
ebgp-requires-policy`` as on a switch (docs/lab.md).
"""

from __future__ import annotations

import grp
import os
import pwd
import re
from pathlib import Path
from typing import Any

from hwaac.lab.errors import LabError
from hwaac.lab.frr_config import frr_config
from hwaac.lab.ksm import mark_mergeable
from hwaac.lab.layout import Layout, frr_socket_dir
from hwaac.lab.procs import ident, read_pidfile, run

FRR_DIR = Path("/usr/lib/frr")
VTYSH = "/usr/bin/vtysh"
DAEMONS = ("zebra", "bgpd")
MIN_VERSION = (8, 4)
BIG_LAB_SESSIONS = 2048  # above this many BGP sessions keepalive/hold are at least BIG_LAB_TIMERS (docs/lab.md)
BIG_LAB_TIMERS = (10, 30)
# the connect-retry timer of a big lab. A port coming up starts its session at once (NHT), so the timer only paces
# attempts towards peers whose port is still down: each one ends in bgp_stop wiping a 640 KiB buffer (docs/lab.md)
BIG_LAB_CONNECT = 30
# glibc malloc for the lab's daemons: a fixed mmap threshold (no dynamic growth after a large free), trimming
# from 128 KiB, two arenas; measured on the demo: bgpd -9 %, zebra -35 % PSS, routing unchanged (docs/lab.md)
MALLOC_TUNABLES = "glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072:glibc.malloc.arena_max=2"
INSTALL = "install frr (Debian package frr, >= 8.4)"


def version() -> str:
    """FRR's version (``bgpd --version``), checked for zebra, bgpd and vtysh.

    Raises:
        LabError: a part is missing or older than 8.4, saying what to install.
    """
    missing = [str(p) for p in (FRR_DIR / "zebra", FRR_DIR / "bgpd", Path(VTYSH)) if not p.exists()]
    if missing:
        raise LabError(f"FRR not found ({', '.join(missing)}): {INSTALL}; scripts/install-system-deps.sh does it")
    try:
        pwd.getpwnam("frr")
        grp.getgrnam("frr")
    except KeyError:
        raise LabError(f"no user/group 'frr': {INSTALL}") from None
    text = run([str(FRR_DIR / "bgpd"), "--version"], timeout=10).stdout
    m = re.search(r"version (\d+)\.(\d+)(\S*)", text)
    if not m or (int(m[1]), int(m[2])) < MIN_VERSION:
        raise LabError(f"FRR {m.group(0) if m else '?'} is too old: {INSTALL}")
    return f"{m[1]}.{m[2]}{m[3]}"


def write_configs(
    layout: Layout, device: str, config_db: dict[str, Any], timers_floor: tuple[int, int] | None = None
) -> None:
    """Write ``zebra.conf`` and ``bgpd.conf`` (from :func:`frr_config`) into the device folder, owned by frr."""
    folder = layout.dev_dir(device)
    folder.mkdir(parents=True, exist_ok=True)
    uid, gid = pwd.getpwnam("frr").pw_uid, grp.getgrnam("frr").gr_gid
    os.chown(folder, uid, gid)
    layout.conf(device, "zebra").write_text(f"hostname {device}\nlog file {layout.log(device, 'zebra')}\n!\n")
    text = frr_config(config_db, timers_floor=timers_floor, connect_retry=BIG_LAB_CONNECT if timers_floor else 2)
    layout.conf(device, "bgpd").write_text(f"log file {layout.log(device, 'bgpd')}\n" + text)


def timers_floor(sessions: int) -> tuple[int, int] | None:
    """The keepalive/hold floor for a lab of ``sessions`` BGP sessions (None: the config_db's timers)."""
    return BIG_LAB_TIMERS if sessions > BIG_LAB_SESSIONS else None


def start(layout: Layout, device: str, netns: str, daemons: tuple[str, ...] = DAEMONS) -> dict[str, dict[str, int]]:
    """Start the daemons (zebra first) of ``device`` in ``netns``; their process records.

    Raises:
        LabError: a daemon did not start (with its message).
    """
    out: dict[str, dict[str, int]] = {}
    mark_mergeable()  # KSM may merge their zero-filled pages: a big lab while up, compact at once (hwaac.lab.ksm)
    for daemon in daemons:
        pidfile = layout.pidfile(device, daemon)
        pidfile.unlink(missing_ok=True)
        run(
            [
                "ip",
                "netns",
                "exec",
                netns,
                str(FRR_DIR / daemon),
                "-d",
                "-N",
                netns,
                "-u",
                "frr",
                "-g",
                "frr",
                "-P",
                "0",
                "-f",
                str(layout.conf(device, daemon)),
                "-i",
                str(pidfile),
            ],
            timeout=60,
            env={**os.environ, "GLIBC_TUNABLES": MALLOC_TUNABLES},
        )
        out[daemon] = ident(read_pidfile(pidfile))
    return out


def vtysh_argv(netns: str, *commands: str) -> list[str]:
    """``vtysh`` on the daemons of path space ``netns``, with ``-c`` per command."""
    argv = [VTYSH, "--vty_socket", str(frr_socket_dir(netns))]
    for c in commands:
        argv += ["-c", c]
    return argv


def check_config(path: Path) -> str:
    """``vtysh -C -f path`` (FRR's offline syntax check): "" when it passes, else its message."""
    proc = run([VTYSH, "-C", "-f", str(path)], check=False, timeout=60)
    return "" if proc.returncode == 0 else (proc.stdout + proc.stderr).strip()
