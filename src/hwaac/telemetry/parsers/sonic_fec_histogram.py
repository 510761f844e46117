"""One port's FEC histogram as ``show interfaces counters fec-histogram <port>`` prints it (sonic-utilities
``show/interfaces/__init__.py`` ``fetch_fec_histogram``): codewords received with 0 to 15 symbol errors, read into
the ``fec_s{s}_codewords`` counters of a :class:`~hwaac.telemetry.model.Snapshot`.

The output does not name the port: the caller passes the one it asked for. The same bins for every port come from
``portstat -fh`` (:mod:`.sonic_portstat`).
"""

from __future__ import annotations

from hwaac.telemetry.model import PortSample, Snapshot
from hwaac.telemetry.parsers.sonic_table import find_layout, rows

_HEADER = ("Symbol Errors Per Codeword", "Codewords")
BINS = 16  # SAI_PORT_STAT_IF_IN_FEC_CODEWORD_ERRORS_S0..S15


def parse_fec_histogram(raw: str, *, port: str, device: str = "", version: str | None = None) -> Snapshot:
    """Read ``show interfaces counters fec-histogram <port>``.

    Args:
        raw: the output as recorded.
        port: the port the command was run for (the output does not print it).
        device: the switch, when the caller knows it.
        version: the SONiC release or sonic-utilities version, when known.

    Returns:
        A snapshot with one port whose counters are ``fec_s0_codewords`` .. ``fec_s15_codewords``. Bins the output
        lacks or cannot be read are named in ``unknown`` (an unreadable bin is None). Never raises.
    """
    snap = Snapshot("show interfaces counters fec-histogram", device=device, version=version or "")
    lines = raw.splitlines()
    layout = find_layout(lines, right_aligned=True)
    if layout is None or layout.names != _HEADER:
        first = next((line.strip() for line in lines if line.strip()), "")
        what = f"table {' | '.join(layout.names)!r}" if layout else f"first line {first[:120]!r}" if first else ""
        snap.unknown.append(f"no FEC histogram ({what})" if what else "empty output")
        return snap
    sample = PortSample(port)
    counters = sample.counters
    for n, cells in rows(lines, layout, snap.unknown):
        label = cells[0].strip()
        if not label.startswith("BIN") or not label[3:].isdigit() or int(label[3:]) >= BINS:
            snap.unknown.append(f"line {n + 1} not read: {lines[n].strip()!r}")
            continue
        name = f"fec_s{int(label[3:])}_codewords"
        if name in counters:
            snap.unknown.append(f"line {n + 1}: {label} printed again; the first is kept")
            continue
        try:
            counters[name] = int(cells[1].replace(",", ""))
        except ValueError:
            counters[name] = None
            snap.unknown.append(f"{port} {label}: {cells[1].strip()!r} is not a count, read as unknown")
    missing = [f"BIN{s}" for s in range(BINS) if f"fec_s{s}_codewords" not in counters]
    if missing:
        snap.unknown.append(f"{port}: {', '.join(missing)} not printed (output cut?)")
    if counters:
        snap.ports[port] = sample
    return snap


__all__ = ["BINS", "parse_fec_histogram"]
