"""Link flaps as ``show interfaces flap`` prints them (sonic-utilities ``show/interfaces/__init__.py`` ``flap``):
the ``link_state_changes`` counter per port, with the last down and up times as state.

The count is orchagent's ``flap_count`` (sonic-swss ``orchagent/portsorch.cpp`` ``updateDbPortFlapCount``), raised
on every oper state change, up or down. ``Never`` is printed when the field is absent: the port has not changed
state since orchagent started, read as 0; on a port printed with ``Unknown`` admin and oper state (no APPL_DB
entry) the count is unknown (``docs/telemetry/sonic-ports.md``).
"""

from __future__ import annotations

from hwaac.telemetry.model import PortSample, Snapshot
from hwaac.telemetry.parsers.sonic_portstat import Unreadable
from hwaac.telemetry.parsers.sonic_table import find_layout, rows

_HEADER = ("Interface", "Flap Count", "Admin", "Oper", "Link Down TimeStamp(UTC)", "Link Up TimeStamp(UTC)")
_NEVER = "Never"
_UNKNOWN = "Unknown"
_STAMP = len("Sat Jan 17 00:04:42 2025")  # strftime "%a %b %d %H:%M:%S %Y" in updateDbPortFlapCount


def parse_interface_flap(raw: str, *, device: str = "", version: str | None = None) -> Snapshot:
    """Read ``show interfaces flap`` (the output as recorded; ``device`` and ``version``, the SONiC release or
    sonic-utilities version, when the caller knows them).

    Returns:
        A snapshot whose ports have the counter ``link_state_changes`` and ``state`` with ``admin``, ``oper``
        (lower case, as in ``show interfaces status``), ``last_down`` and ``last_up`` (UTC, as printed; absent when
        ``Never``). Never raises.
    """
    snap = Snapshot("show interfaces flap", device=device, version=version or "")
    lines = raw.splitlines()
    layout = find_layout(lines)
    if layout is None or layout.names != _HEADER:
        first = next((line.strip() for line in lines if line.strip()), "")
        what = f"table {' | '.join(layout.names)!r}" if layout else f"first line {first[:120]!r}" if first else ""
        snap.unknown.append(f"no interface flap table ({what})" if what else "empty output")
        return snap
    bad = Unreadable()
    for n, cells in rows(lines, layout, snap.unknown):
        port, count, admin, oper, down, up = (c.strip() for c in cells)
        if not all((port, count, admin, oper)) or any(w != _NEVER and len(w) != _STAMP for w in (down, up)):
            snap.unknown.append(f"line {n + 1}: row cut short or not a flap row: {lines[n].strip()!r}")
            continue
        if port in snap.ports:
            snap.unknown.append(f"line {n + 1}: {port} printed again; the first row is kept")
            continue
        sample = snap.ports[port] = PortSample(port)
        if admin == _UNKNOWN or oper == _UNKNOWN:
            sample.counters["link_state_changes"] = None
            bad.setdefault(("Admin/Oper", _UNKNOWN), []).append(port)
        elif count == _NEVER:
            sample.counters["link_state_changes"] = 0
        elif count.isdigit():
            sample.counters["link_state_changes"] = int(count)
        else:
            sample.counters["link_state_changes"] = None
            bad.setdefault(("Flap Count", count), []).append(port)
        for key, word in (("admin", admin), ("oper", oper)):
            if word != _UNKNOWN:
                sample.state[key] = word.lower()
        for key, when in (("last_down", down), ("last_up", up)):
            if when != _NEVER:
                sample.state[key] = when
    snap.unknown.extend(bad.reasons())
    if not snap.ports:
        snap.unknown.append("the table lists no port")
    return snap


__all__ = ["parse_interface_flap"]
