"""SONiC port readers: milliseconds per parse of a 64-port output, microseconds per port (target: <= 10 us a port, so
a sweep of 200,000 switch ports parses in about 2 s on one core).

Inputs: the recorded 64-port ``show interfaces counters`` and 64-row tables built from the other recorded outputs'
rows; timed in process CPU time. Method and figures: benchmarks/README.md.

    .venv/bin/python benchmarks/sonic_port_parsers.py [--number 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path

from hwaac.telemetry.parsers.sonic_intf_flap import parse_interface_flap
from hwaac.telemetry.parsers.sonic_intf_status import parse_interface_status
from hwaac.telemetry.parsers.sonic_lldp_table import parse_lldp_table
from hwaac.telemetry.parsers.sonic_portstat import parse_portstat
from hwaac.telemetry.parsers.sonic_portstat_json import parse_portstat_json

FIX = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "telemetry"
PORTS = 64
TARGET_US = 10.0


def widen(path: Path, *, left: bool = False) -> str:
    """The table of ``path`` with its rows repeated to 64, port column rewritten to Ethernet0..Ethernet252."""
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    dash = next(i for i, line in enumerate(lines) if not line.strip().strip("- ") and "--" in line)
    width = len(lines[dash].split()[0])
    rows = [line for line in lines[dash + 1 :] if not line.startswith(("-", "Total"))]
    out = lines[: dash + 1]
    for i in range(PORTS):
        name = f"Ethernet{4 * i}"
        out.append((name.ljust(width) if left else name.rjust(width)) + rows[i % len(rows)][width:])
    return "\n".join(out) + "\n"


def as_json(table: str) -> str:
    """``table`` as ``portstat -j`` prints it (utilities_common/netstat.py table_as_json)."""
    lines = table.splitlines()
    dash = next(i for i, line in enumerate(lines) if line.startswith("--"))
    header = re.split(r"\s{2,}", lines[dash - 1].strip())
    doc = {}
    for line in lines[dash + 1 :]:
        cells = re.split(r"\s{2,}", line.strip())
        doc[cells[0]] = {header[i]: cells[i] for i in range(1, len(header))}
    return json.dumps(doc, indent=4, sort_keys=True)


def main() -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--number", type=int, default=1000)
    args.add_argument("--repeat", type=int, default=5)
    opts = args.parse_args()
    counters = widen(FIX / "sonic-portstat" / "counters_400g_util_over_100.txt")
    cases: list[tuple[str, Callable[[str], object], str]] = [
        (
            "show interfaces counters (recorded, 64 ports)",
            parse_portstat,
            (FIX / "sonic-portstat" / "counters_vs_na_rates.txt").read_text(),
        ),
        ("show interfaces counters (400G rows)", parse_portstat, counters),
        (
            "show interfaces counters -a (mock rows, N/A)",
            parse_portstat,
            widen(FIX / "sonic-portstat" / "counters_all_mock_master.txt"),
        ),
        ("show interfaces counters fec-stats", parse_portstat, widen(FIX / "sonic-portstat" / "fec_stats_ber_max.txt")),
        ("portstat -j", parse_portstat_json, as_json(counters)),
        (
            "show interfaces status",
            parse_interface_status,
            widen(FIX / "sonic-interfaces-status" / "status_100g_portchannels.txt"),
        ),
        (
            "show lldp table",
            parse_lldp_table,
            widen(FIX / "sonic-lldp-table" / "lldp_table_missing_sysname.txt", left=True)
            + "--------------------------------------------------\nTotal entries displayed:  64\n",
        ),
        (
            "show interfaces flap",
            parse_interface_flap,
            widen(FIX / "sonic-interfaces-flap" / "flap_multi_asic_mock_master.txt", left=True),
        ),
    ]
    worst = 0.0
    print(f"{'reader':48} {'ms/parse':>9} {'us/port':>8}  ports")
    for name, reader, raw in cases:
        result = reader(raw)
        read = len(getattr(result, "ports", None) or getattr(result, "neighbors", {}))
        best = min(
            timeit.repeat(lambda r=raw, f=reader: f(r), timer=time.process_time, number=opts.number, repeat=opts.repeat)
        )
        ms = best / opts.number * 1e3
        per_port = ms * 1e3 / PORTS
        worst = max(worst, per_port)
        print(f"{name:48} {ms:9.3f} {per_port:8.2f}  {read}")
    met = worst <= TARGET_US
    print(f"slowest {worst:.2f} us/port; target <= {TARGET_US:.0f} us/port: {'met' if met else 'missed'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
