"""One sweep of a lab's switches as a network-health samples folder: ``portstat -j`` from each switch port's kernel
counters, ``show bgp summary json`` and ``show ip route json`` from its FRR, and the hosts' active probes when given
(``docs/network-health.md`` "Samples folder"; ``hwaac health fabric`` reads it as it reads a real sweep).

The twin's stand-in for ``portstat -j`` prints sonic-utilities' columns from ``ip -s -j link show``, ``N/A`` where
a veth has no counter, and STATE from the running CONFIG_DB's admin state and the kernel's oper state: which column
comes from where, docs/lab.md "Network-health sweeps".
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from hwaac.fileio import atomic_folder
from hwaac.lab.api import Lab
from hwaac.lab.errors import LabError
from hwaac.lab.procs import run
from hwaac.lab.sonic_state import SwitchState
from hwaac.probe.model import ProbeResults, write_results

_NA = "N/A"
_RATES = ("RX_BPS", "RX_UTIL", "TX_BPS", "TX_UTIL")
VTY_TOOLS = {"bgp-summary": ("bgpd", "show bgp summary json"), "routes": ("zebra", "show ip route json")}


def _count(n: object) -> str:
    return f"{n:,}" if isinstance(n, int) else _NA


def port_state(admin_up: bool, kernel: dict[str, Any]) -> str:
    """portstat's STATE letter: X admin down, U oper up, D otherwise (``get_port_state``)."""
    if not admin_up:
        return "X"
    return "U" if kernel.get("operstate") == "UP" and "UP" in kernel.get("flags", ()) else "D"


def portstat_json(links: Iterable[dict[str, Any]], ports: Iterable[str], admin: dict[str, dict[str, Any]]) -> str:
    """``portstat -j`` text for ``ports`` from ``ip -s -j link show`` entries and the CONFIG_DB PORT table.

    A planned port the kernel does not list is left out (the reader then reports it as not sampled)."""
    by_name = {x.get("ifname"): x for x in links}
    out: dict[str, dict[str, str]] = {}
    for port in ports:
        k = by_name.get(port)
        if k is None:
            continue
        stats = k.get("stats64") or {}
        rx, tx = stats.get("rx") or {}, stats.get("tx") or {}
        row = {
            "STATE": port_state(str((admin.get(port) or {}).get("admin_status", "up")) == "up", k),
            "RX_OK": _count(rx.get("packets")),
            "RX_ERR": _count(rx.get("errors")),
            "RX_DRP": _count(rx.get("dropped")),
            "RX_OVR": _NA,
            "TX_OK": _count(tx.get("packets")),
            "TX_ERR": _count(tx.get("errors")),
            "TX_DRP": _count(tx.get("dropped")),
            "TX_OVR": _NA,
        }
        row.update(dict.fromkeys(_RATES, _NA))
        out[port] = dict(sorted(row.items()))
    return json.dumps(out, indent=4)


def switch_outputs(lab: Lab, device: str) -> dict[str, str]:
    """tool -> output of one switch: ``portstat-json`` and the FRR tools of :data:`VTY_TOOLS`.

    Raises:
        LabError: ip or a daemon failed (the message names which).
    """
    dev = lab.device(device)
    proc = run(["ip", "-n", dev.netns, "-s", "-j", "link", "show"], check=False)
    if proc.returncode != 0:
        raise LabError(f"{device}: ip -s -j link show failed: {(proc.stderr or proc.stdout).strip()[:200]}")
    try:
        links = json.loads(proc.stdout or "[]")
    except ValueError as exc:
        raise LabError(f"{device}: ip -s -j link show printed no JSON ({exc})") from None
    rendered = lab.render_dir / "switches" / device / "config_db.json"
    state = SwitchState(lab.layout.dev_dir(device), rendered if rendered.is_file() else None)
    admin = state.running().get("PORT") or {}
    out = {"portstat-json": portstat_json(links, dev.ports, admin)}
    for tool, (daemon, command) in VTY_TOOLS.items():
        out[tool] = lab.vty(device, daemon, command)
    return out


def write_sweep(lab: Lab, folder: Path, *, workers: int = 8, probes: Mapping[str, ProbeResults] | None = None) -> Path:
    """Write one sweep of every switch of ``lab`` into ``folder`` (created; must not hold a sweep already):
    ``<device>/<tool>.txt``, ``taken_at``, and with ``probes`` (:func:`hwaac.lab.probe.probe_lab`) each host's
    ``<host>/probe.json``. Written into a temporary sibling and renamed, so a failed sweep leaves nothing.

    Raises:
        LabError: ``folder`` exists and is not empty, or a switch could not be read.
    """
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise LabError(f"{folder}: not empty (a sweep goes into a new folder)")
    folder.parent.mkdir(parents=True, exist_ok=True)
    taken = time.time()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda d: (d, switch_outputs(lab, d)), lab.switches))
    with atomic_folder(folder) as tmp:
        for device, outputs in results:
            (tmp / device).mkdir()
            for tool, text in outputs.items():
                (tmp / device / f"{tool}.txt").write_text(text)
        for host, doc in (probes or {}).items():
            (tmp / host).mkdir(exist_ok=True)
            write_results(tmp / host / "probe.json", doc)
        (tmp / "taken_at").write_text(f"{taken:.3f}\n")
    return folder


__all__ = ["port_state", "portstat_json", "switch_outputs", "write_sweep"]
