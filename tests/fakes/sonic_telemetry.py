"""State of one simulated SONiC switch's telemetry, shared by the fakes ``bin/show`` and ``bin/sonic-db-dump``.

Both print recorded real output (``tests/fixtures/telemetry/``, sources in each folder's README) for the
commands of the network telemetry tool table (``plugins/module_utils/telemetry_tools.py``):

- ``show ...``: the fixture named in :data:`SHOW`, or ``$HWAAC_FAKE_STATE/show/<words joined by _>.txt`` when a
  test put one there (``show/interfaces_status.txt``).
- ``sonic-db-dump -n COUNTERS_DB -k PATTERN [-y]``: the COUNTERS_DB dump of sonic-utilities' T1 mock tables
  (``counters-db/sonic-utilities-b6af9f4-t1-dump-subset.json``, or ``$HWAAC_FAKE_STATE/counters_db.json``), keys
  filtered by the pattern as redis ``KEYS`` does (glob). Counters advance between calls: every port's unicast
  packets by ``telemetry.json`` ``frames_per_call`` (default 1,000,000) each way and its octets by 1,000 times
  that, and ``telemetry.json`` ``add_per_call`` ``{port: {SAI field: n}}`` adds n per call (an error counter
  rising). The call count is kept in ``telemetry_calls``.

Every call is appended to ``calls.log``. Standard library only (the fakes load this file by path).
"""

from __future__ import annotations

import fnmatch
import json
import os
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "telemetry"
SHOW = {
    ("interfaces", "counters"): "sonic-portstat/counters_mock_master.txt",
    ("interfaces", "status"): "sonic-interfaces-status/status_mock_master.txt",
    ("interfaces", "flap"): "sonic-interfaces-flap/flap_mock_master.txt",
    ("interfaces", "transceiver", "eeprom", "--dom"): "sfpshow/sonic-utilities-691b1bb-dom-all.txt",
    ("pfc", "counters"): "pfcstat/command-reference-691b1bb-example.txt",
    ("pfcwd", "stats"): "pfcwd/sonic-utilities-691b1bb-stats.txt",
    ("queue", "counters"): "queuestat/sonic-utilities-691b1bb-counters.txt",
    ("interfaces", "counters", "fec-histogram"): "sonic-fec-histogram/fec_histogram_mock_master.txt",
}
DUMP = FIXTURES / "counters-db" / "sonic-utilities-b6af9f4-t1-dump-subset.json"
PACKETS = ("SAI_PORT_STAT_IF_IN_UCAST_PKTS", "SAI_PORT_STAT_IF_OUT_UCAST_PKTS")
OCTETS = ("SAI_PORT_STAT_IF_IN_OCTETS", "SAI_PORT_STAT_IF_OUT_OCTETS")


def state_dir(tool: str) -> Path:
    path = os.environ.get("HWAAC_FAKE_STATE")
    if not path:
        sys.stderr.write(f"{tool} (fake): HWAAC_FAKE_STATE is not set\n")
        sys.exit(1)
    state = Path(path)
    state.mkdir(parents=True, exist_ok=True)
    with open(state / "calls.log", "a", encoding="utf-8") as log:
        log.write(" ".join([tool, *sys.argv[1:]]) + "\n")
    return state


def show(argv: list[str]) -> int:
    state = state_dir("show")
    words = tuple(argv)
    override = state / "show" / ("_".join(words) + ".txt")
    if override.is_file():
        sys.stdout.write(override.read_text())
        return 0
    key = words[:3] if words[:3] == ("interfaces", "counters", "fec-histogram") and len(words) == 4 else words
    if key not in SHOW:
        # click's usage error for a command it does not have (show is a click group)
        sys.stderr.write(
            f"Usage: show [OPTIONS] COMMAND [ARGS]...\nTry \"show -h\" for help.\n\n"
            f"Error: No such command \"{' '.join(words)}\".\n"
        )
        return 2
    sys.stdout.write((FIXTURES / SHOW[key]).read_text())
    return 0


def sonic_db_dump(argv: list[str]) -> int:
    state = state_dir("sonic-db-dump")
    opts = dict(zip(argv[::2], argv[1::2], strict=False))
    if opts.get("-n") != "COUNTERS_DB":
        sys.stderr.write("sonic-db-dump (fake): only -n COUNTERS_DB is simulated\n")
        return 2
    pattern = opts.get("-k", "*")
    source = state / "counters_db.json"
    dump = json.loads((source if source.is_file() else DUMP).read_text())
    knobs_file = state / "telemetry.json"
    knobs = json.loads(knobs_file.read_text()) if knobs_file.is_file() else {}
    calls_file = state / "telemetry_calls"
    calls = int(calls_file.read_text()) if calls_file.is_file() else 0
    calls_file.write_text(str(calls + 1))
    frames = int(knobs.get("frames_per_call", 1_000_000))
    names = dump.get("COUNTERS_PORT_NAME_MAP", {}).get("value", {})
    for port, oid in names.items():
        fields = dump.get(f"COUNTERS:{oid}", {}).get("value")
        if fields is None:
            continue
        adds = {
            **{f: frames for f in PACKETS},
            **{f: frames * 1000 for f in OCTETS},
            **knobs.get("add_per_call", {}).get(port, {}),
        }
        for field, n in adds.items():
            if field in fields:
                fields[field] = str(int(fields[field]) + calls * int(n))
    out = {k: v for k, v in dump.items() if fnmatch.fnmatchcase(k, pattern)}
    sys.stdout.write(json.dumps(out, indent=4 if "-y" in argv else None) + "\n")
    return 0
