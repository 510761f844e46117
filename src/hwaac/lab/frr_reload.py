"""A lab switch's FRR follows its CONFIG_DB: bgpd's config derived again and applied incrementally, as frrcfgd does.

:func:`check` refuses a config before anything changes (what the lab cannot run, or what FRR's own parser refuses,
``vtysh -C``). :func:`apply` writes ``bgpd.conf`` (:func:`hwaac.lab.frr.write_configs`) and runs FRR's
``frr-reload.py --reload`` on it, which diffs it against bgpd's running config and sends only the difference
(sessions that do not change stay up). The options FRR 8.4's frr-reload.py needs in a path space, and why:
docs/lab-deploy.md "A lab switch".
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hwaac.lab import frr
from hwaac.lab.errors import LabError
from hwaac.lab.frr_config import frr_config, neighbors
from hwaac.lab.layout import Layout, frr_socket_dir
from hwaac.lab.manifest import locked, read_state, write_state
from hwaac.lab.procs import run
from hwaac.lab.vty import query

FRR_RELOAD = Path("/usr/lib/frr/frr-reload.py")
RELOAD_TIMEOUT_S = 120.0


def check(config_db: Mapping[str, Any]) -> str:
    """bgpd's config for ``config_db``, after FRR's own parser accepted it.

    Raises:
        LabError: the lab cannot run the config (:func:`hwaac.lab.frr_config.frr_config`), or ``vtysh -C``
            refuses the derived config (its message).
    """
    text = frr_config(config_db)
    with tempfile.NamedTemporaryFile("w", prefix="hwaac-frr-", suffix=".conf") as fh:
        fh.write(text)
        fh.flush()
        refused = frr.check_config(Path(fh.name))
    if refused:
        raise LabError(f"FRR {frr.version()} refuses the bgpd config derived from this CONFIG_DB: {refused}")
    return text


def bgpd_running(netns: str) -> bool:
    """Whether the bgpd of path space ``netns`` answers on its vty socket."""
    try:
        query(netns, "bgpd", "show version", timeout=10)
    except LabError:
        return False
    return True


def apply(layout: Layout, device: str, netns: str, config_db: Mapping[str, Any]) -> str:
    """Make ``device``'s FRR run ``config_db``; what was done, in words.

    bgpd.conf is written in any case (a bgpd started later reads it); a bgpd that runs is reloaded.

    Raises:
        LabError: the config is refused (:func:`check`), or frr-reload.py failed (its output).
    """
    text = check(config_db)
    floor = read_state(layout.folder).get("bgp_timers_floor")  # a big lab's timers stay through every reload
    frr.write_configs(layout, device, dict(config_db), tuple(floor) if floor else None)
    if not bgpd_running(netns):
        return f"bgpd of {device} is not running: bgpd.conf written, read when it starts"
    work = layout.dev_dir(device) / "frr-reload"
    work.mkdir(parents=True, exist_ok=True)
    (work / "vtysh.conf").write_text(f"hostname {_hostname(text) or device}\n")
    argv = [
        str(FRR_RELOAD),
        "--reload",
        "--stdout",
        "--log-level",
        "warning",
        "--vty_socket",
        str(frr_socket_dir(netns)),
        "--confdir",
        str(work),
        "--rundir",
        str(work),
        "--daemon",
        "bgpd",
        str(layout.conf(device, "bgpd")),
    ]
    if not FRR_RELOAD.exists():
        raise LabError(f"{FRR_RELOAD} not found: install frr-pythontools (scripts/install-system-deps.sh does it)")
    proc = run(argv, check=False, timeout=RELOAD_TIMEOUT_S)
    if proc.returncode != 0:
        out = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-12:])
        raise LabError(f"frr-reload.py on {device} failed (exit {proc.returncode}): {out}")
    return f"FRR of {device} reloaded (frr-reload.py, bgpd)"


def record_neighbors(folder: Path, device: str, config_db: Mapping[str, Any]) -> None:
    """Note in the lab's state which BGP sessions ``device`` now should have (``hwaac lab status`` expects
    them)."""
    want = {addr: nbr["enabled"] for addr, nbr in neighbors(config_db).items()}
    with locked(folder):
        state = read_state(folder)
        if state.get("bgp_neighbors", {}).get(device) == want:
            return
        state.setdefault("bgp_neighbors", {})[device] = want
        write_state(folder, state)


def _hostname(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("hostname "):
            return line.split(None, 1)[1].strip()
    return ""
