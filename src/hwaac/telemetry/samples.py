"""A samples folder: one sweep of tool outputs, ``DIR/<device>/<tool>[@<port>].<ext>``, read with the readers of
:mod:`hwaac.telemetry.parsers`; the sweep's time from ``DIR/taken_at`` (Unix seconds or ISO 8601), else each
file's modification time. The layout and the file names: ``docs/network-health.md`` "Samples folder".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from hwaac.telemetry.model import Snapshot
from hwaac.telemetry.parsers.frr_bgp import parse_bgp_summary
from hwaac.telemetry.parsers.frr_routes import RouteTable, parse_routes
from hwaac.telemetry.parsers.host_ethtool import parse_mlx5_ethtool
from hwaac.telemetry.parsers.host_mlxlink import parse_mlxlink
from hwaac.telemetry.parsers.host_rdma import parse_ib_sysfs_counters, parse_rdma_statistic
from hwaac.telemetry.parsers.sonic_counters_db import parse_counters_db
from hwaac.telemetry.parsers.sonic_fec_histogram import parse_fec_histogram
from hwaac.telemetry.parsers.sonic_intf_flap import parse_interface_flap
from hwaac.telemetry.parsers.sonic_intf_status import parse_interface_status
from hwaac.telemetry.parsers.sonic_pfcstat import parse_pfc_counters
from hwaac.telemetry.parsers.sonic_pfcwd import parse_pfcwd_stats
from hwaac.telemetry.parsers.sonic_portstat import parse_portstat
from hwaac.telemetry.parsers.sonic_portstat_json import parse_portstat_json
from hwaac.telemetry.parsers.sonic_queuestat import parse_queue_counters
from hwaac.telemetry.parsers.sonic_transceiver import parse_transceiver_dom

Reader = Callable[..., Snapshot]
# file stem -> (reader, the command whose output the file holds); readers marked with a port take it from @PORT
READERS: dict[str, tuple[Reader, str]] = {
    "portstat": (parse_portstat, "portstat / show interfaces counters"),
    "portstat-json": (parse_portstat_json, "portstat -j"),
    "pfcstat": (parse_pfc_counters, "show pfc counters"),
    "pfcwd": (parse_pfcwd_stats, "show pfcwd stats"),
    "queuestat": (parse_queue_counters, "show queue counters"),
    "intf-status": (parse_interface_status, "show interfaces status"),
    "intf-flap": (parse_interface_flap, "show interfaces flap"),
    "transceiver-dom": (parse_transceiver_dom, "show interfaces transceiver eeprom --dom"),
    "counters-db": (parse_counters_db, "sonic-db-dump -n COUNTERS_DB / sonic-db-cli / gNMI JSON"),
    "rdma-statistic": (parse_rdma_statistic, "rdma statistic show"),
    "ib-counters": (parse_ib_sysfs_counters, "grep . /sys/class/infiniband/*/ports/*/*counters/*"),
}
PORT_READERS: dict[str, tuple[Reader, str]] = {
    "ethtool": (parse_mlx5_ethtool, "ethtool -S PORT (mlx5)"),
    "mlxlink": (parse_mlxlink, "mlxlink -d DEV -c (--json or text)"),
    "fec-histogram": (parse_fec_histogram, "show interfaces counters fec-histogram PORT"),
}
BGP, ROUTES = "bgp-summary", "routes"  # FRR: show bgp summary json, show ip route json
EXTENSIONS = (".txt", ".json", ".out")
TIME_FILE = "taken_at"


@dataclass(slots=True)
class Sweep:
    """One samples folder read.

    Attributes:
        path: the folder.
        time: the sweep's time (``taken_at`` file), None when it has none (each file's mtime is used then).
        snapshots: by (device, file stem with its port) -> the snapshot and the file's time.
        bgp: by device, the BGP summary as a snapshot (one "port" per peer).
        routes: by device, the FRR route table.
        skipped: files not read, each with the reason.
    """

    path: Path
    time: float | None = None
    snapshots: dict[tuple[str, str], tuple[Snapshot, float]] = field(default_factory=dict)
    bgp: dict[str, tuple[Snapshot, float]] = field(default_factory=dict)
    routes: dict[str, RouteTable] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


class SamplesError(ValueError):
    """A samples folder that cannot be used at all (missing, no device folder, a bad ``taken_at``)."""


def valid_names() -> str:
    """The file names a device folder may hold, for error messages."""
    names = [*READERS, *(f"{k}@PORT" for k in PORT_READERS), BGP, ROUTES]
    return ", ".join(names) + " (each .txt, .json or .out)"


def _time(path: Path) -> float:
    text = path.read_text().strip()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise SamplesError(f"{path}: {text[:40]!r} is neither Unix seconds nor an ISO 8601 time") from None


def read_sweep(folder: str | Path) -> Sweep:
    """Read one samples folder. Raises :class:`SamplesError` when it is not a folder, holds no device folder, or
    its ``taken_at`` is not a time; a file it cannot read is listed in ``skipped`` (a reader's own ``unknown``
    stays in the snapshot)."""
    root = Path(folder)
    if not root.is_dir():
        raise SamplesError(f"{root}: not a folder (expected DIR/<device>/<tool>.txt)")
    sweep = Sweep(root)
    tf = root / TIME_FILE
    if tf.is_file():
        sweep.time = _time(tf)
    devices = sorted(p for p in root.iterdir() if p.is_dir())
    if not devices:
        raise SamplesError(f"{root}: no device folder (expected DIR/<device>/<tool>.txt with tool one of "
                           f"{valid_names()})")
    for dev in devices:
        device = dev.name
        for f in sorted(dev.iterdir()):
            if f.suffix not in EXTENSIONS or not f.is_file():
                sweep.skipped.append(f"{f}: not a .txt, .json or .out file")
                continue
            stem = f.stem
            when = sweep.time if sweep.time is not None else f.stat().st_mtime
            raw = f.read_text(errors="replace")
            tool, at, port = stem.partition("@")
            if tool == BGP:
                sweep.bgp[device] = (parse_bgp_summary(raw, device=device).snapshot(), when)
            elif tool == ROUTES:
                sweep.routes[device] = parse_routes(raw, device=device)
            elif tool in PORT_READERS and at and port:
                sweep.snapshots[(device, stem)] = (PORT_READERS[tool][0](raw, port=port, device=device), when)
            elif tool == "portstat" and f.suffix == ".json":
                sweep.snapshots[(device, "portstat-json")] = (parse_portstat_json(raw, device=device), when)
            elif tool in READERS and not at:
                sweep.snapshots[(device, stem)] = (READERS[tool][0](raw, device=device), when)
            else:
                sweep.skipped.append(f"{f}: {stem!r} is no tool hwaac reads; valid: {valid_names()}")
    return sweep


__all__ = ["BGP", "PORT_READERS", "READERS", "ROUTES", "TIME_FILE", "SamplesError", "Sweep", "read_sweep",
           "valid_names"]
