"""Which reader reads each file of a samples folder (:mod:`hwaac.telemetry.samples`): by file stem, the parser of
the tool's output and the command that printed it, and for the outputs a large sweep is made of, the frame reader
of the format (:mod:`hwaac.telemetry.frames`). The commands are the table of ``hwaac/telemetry/tools.py``.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from functools import partial

from hwaac.telemetry.frames import Frame
from hwaac.telemetry.model import END_STATE_WORDS, Snapshot
from hwaac.telemetry.parsers.frr_bgp_frame import read_bgp_summary_frame
from hwaac.telemetry.parsers.host_ethtool import parse_mlx5_ethtool, read_mlx5_ethtool_frame
from hwaac.telemetry.parsers.host_mlxlink import parse_mlxlink
from hwaac.telemetry.parsers.host_rdma import parse_ib_sysfs_counters, parse_rdma_statistic, read_ib_sysfs_frame
from hwaac.telemetry.parsers.sonic_counters_db import parse_counters_db, read_counters_db_frame
from hwaac.telemetry.parsers.sonic_fec_histogram import parse_fec_histogram
from hwaac.telemetry.parsers.sonic_intf_flap import parse_interface_flap
from hwaac.telemetry.parsers.sonic_intf_status import parse_interface_status, read_interface_status_frame
from hwaac.telemetry.parsers.sonic_pfcstat import parse_pfc_counters
from hwaac.telemetry.parsers.sonic_pfcwd import parse_pfcwd_stats
from hwaac.telemetry.parsers.sonic_portstat import parse_portstat
from hwaac.telemetry.parsers.sonic_portstat_json import parse_portstat_json
from hwaac.telemetry.parsers.sonic_queuestat import parse_queue_counters
from hwaac.telemetry.parsers.sonic_transceiver import parse_transceiver_dom
from hwaac.telemetry.tools import PORT, TOOLS

Reader = Callable[..., Snapshot]
FrameReader = Callable[..., Frame | None]
# tool (file stem) -> reader; the command each tool runs is in TOOLS (hwaac/telemetry/tools.py, the same file as the
# collection's plugins/module_utils/telemetry_tools.py: one table for the host module and these readers)
_WHOLE: dict[str, Reader] = {
    "portstat": parse_portstat,
    "portstat-json": parse_portstat_json,
    "pfcstat": parse_pfc_counters,
    "pfcwd": parse_pfcwd_stats,
    "queuestat": parse_queue_counters,
    "intf-status": parse_interface_status,
    "intf-flap": parse_interface_flap,
    "transceiver-dom": parse_transceiver_dom,
    "counters-db": parse_counters_db,
    "rdma-statistic": parse_rdma_statistic,
    "ib-counters": parse_ib_sysfs_counters,
}
_PER_PORT: dict[str, Reader] = {
    "ethtool": parse_mlx5_ethtool,
    "mlxlink": parse_mlxlink,
    "fec-histogram": parse_fec_histogram,
}


def _command(tool: str) -> str:
    spec = TOOLS[tool]
    return shlex.join(spec["argv"]).replace(PORT, "PORT")


# tool -> the frame reader of its format (its usual output straight into columns; None for anything else, which the
# reader above then reads with its reasons): the outputs a large sweep is made of
FRAME_READERS: dict[str, FrameReader] = {
    "counters-db": read_counters_db_frame,
    "ethtool": read_mlx5_ethtool_frame,
    "ib-counters": read_ib_sysfs_frame,
    "intf-status": partial(read_interface_status_frame, keys=END_STATE_WORDS),  # the words an end keeps
    "bgp-summary": read_bgp_summary_frame,
}

# file stem -> (reader, the command whose output the file holds); readers marked with a port take it from @PORT
READERS: dict[str, tuple[Reader, str]] = {k: (r, _command(k)) for k, r in _WHOLE.items()}
PORT_READERS: dict[str, tuple[Reader, str]] = {k: (r, _command(k)) for k, r in _PER_PORT.items()}
BGP, ROUTES = "bgp-summary", "routes"  # FRR: show bgp summary json, show ip route json
PROBE = "probe"  # hwaac probe send: a host's active probe results (hwaac.probe.model, JSON)
EXTENSIONS = (".txt", ".json", ".out")


__all__ = [
    "BGP",
    "EXTENSIONS",
    "FRAME_READERS",
    "PORT_READERS",
    "PROBE",
    "READERS",
    "ROUTES",
    "FrameReader",
    "Reader",
]
