"""Port state as ``show interfaces status`` prints it (sonic-utilities ``scripts/intfutil``, ``header_stat``):
one :class:`~hwaac.telemetry.model.PortSample` per interface with the row's words in ``state``.

Columns are found by header word, so the layout without ``FEC`` (201811) and the current one read alike; a column
this reader does not know is kept under its header in snake case. ``N/A`` under Oper or Admin (no state in
APPL_DB) is left out with a reason; under the other columns it is the tool's word for "none" (no FEC set, no
transceiver type) and is kept (``docs/telemetry/sonic-ports.md``).
"""

from __future__ import annotations

from collections.abc import Collection
from sys import intern

import numpy as np

from hwaac.telemetry.frames import Frame
from hwaac.telemetry.model import PortSample, Snapshot
from hwaac.telemetry.parsers.sonic_portstat import Unreadable
from hwaac.telemetry.parsers.sonic_table import find_layout, rows

# header word -> state key
STATE_KEYS: dict[str, str] = {
    "Lanes": "lanes",
    "Speed": "speed",
    "MTU": "mtu",
    "FEC": "fec",
    "Alias": "alias",
    "Vlan": "vlan",
    "Oper": "oper",
    "Admin": "admin",
    "Type": "type",
    "Asym PFC": "asym_pfc",
}
TOOL = "show interfaces status"
_TRUSTED_ONLY = ("oper", "admin")
_REQUIRED = frozenset({"Lanes", "Speed", "Oper", "Admin"})  # in every layout since 201811


def _row_state(keys: list[str], words: list[str], trusted: list[int]) -> dict[str, str] | None:
    """A row's state in one call when its Oper and Admin words are states (the usual row); None when one is
    ``N/A`` or empty, and the row is read word by word with its reason."""
    if all(words[i] and words[i] != "N/A" for i in trusted):
        return dict(zip(keys[1:], map(intern, words[1:]), strict=True))  # one string per word: rows repeat them
    return None


def parse_interface_status(raw: str, *, device: str = "", version: str | None = None) -> Snapshot:
    """Read ``show interfaces status``.

    Args:
        raw: the output as recorded.
        device: the switch, when the caller knows it.
        version: the SONiC release or sonic-utilities version, when known.

    Returns:
        A snapshot whose ports (Ethernet ports and PortChannels, as printed) carry the row in ``state``: ``lanes``,
        ``speed``, ``mtu``, ``fec``, ``alias``, ``vlan``, ``oper``, ``admin``, ``type``, ``asym_pfc``, words as
        printed. No counters. Never raises.
    """
    snap = Snapshot(TOOL, device=device, version=version or "")
    lines = raw.splitlines()
    layout = find_layout(lines, right_aligned=True)
    if layout is None or layout.names[0] != "Interface":
        first = next((line.strip() for line in lines if line.strip()), "")
        if layout is not None:
            snap.unknown.append(f"table starts with {layout.names[0]!r}, not Interface: not interface status")
        else:
            snap.unknown.append(f"no interface status table (first line: {first[:120]!r})" if first else "empty output")
        return snap
    if not set(layout.names) >= _REQUIRED:
        snap.unknown.append(f"columns {' | '.join(layout.names)!r} are not show interfaces status")
        return snap
    keys = [STATE_KEYS.get(name) or name.lower().replace(" ", "_") for name in layout.names]
    trusted = [i for i, key in enumerate(keys) if i and key in _TRUSTED_ONLY]
    bad = Unreadable()
    ports = snap.ports
    strip = str.strip
    for n, cells in rows(lines, layout, snap.unknown):
        words = list(map(strip, cells))
        port = words[0]
        if port in ports:
            snap.unknown.append(f"line {n + 1}: {port} printed again; the first row is kept")
            continue
        fast = _row_state(keys, words, trusted)
        if fast is not None:
            ports[port] = PortSample(port, {}, {}, fast)
            continue
        state: dict[str, str] = {}
        ports[port] = PortSample(port, {}, {}, state)
        for key, word in zip(keys[1:], words[1:], strict=True):
            if key in _TRUSTED_ONLY and (word == "N/A" or not word):
                bad.setdefault((key.capitalize(), word), []).append(port)
            else:
                state[key] = word
    snap.unknown.extend(bad.reasons())
    if not snap.ports:
        snap.unknown.append("the table lists no interface")
    return snap


def read_interface_status_frame(
    raw: str, *, device: str = "", version: str | None = None, keys: Collection[str] | None = None
) -> Frame | None:
    """``show interfaces status`` as the :class:`~hwaac.telemetry.frames.Frame` of the snapshot
    :func:`parse_interface_status` gives (no counters; each row's words as its state), when the table is plain:
    every line after it a row in the columns' spans with an Oper and Admin state, no interface twice. None for
    anything else, which the parser reads and says why. Never raises.

    ``keys``: only these state words (of :data:`STATE_KEYS`' values) are kept, and only their columns cut: what a
    caller that reads no other word needs (the network health ends keep ``oper`` and ``admin``)."""
    lines = raw.splitlines()
    layout = find_layout(lines, right_aligned=True)
    if layout is None or layout.names[0] != "Interface" or not set(layout.names) >= _REQUIRED:
        return None
    names = [STATE_KEYS.get(name) or name.lower().replace(" ", "_") for name in layout.names]
    trusted = [i for i, key in enumerate(names) if i and key in _TRUSTED_ONLY]
    kept = [i for i, key in enumerate(names) if i and (keys is None or key in keys)]
    keep_names = [names[i] for i in kept]
    columns = layout.plain_columns(lines, [0, *trusted, *kept]) if keys is not None else None
    if columns is not None:  # a few words a row: only their columns cut
        ports, checked = columns[0], columns[1 : 1 + len(trusted)]
        if any("N/A" in words or "" in words for words in checked) or len(set(ports)) != len(ports):
            return None
        rows = list(zip(*columns[1 + len(trusted) :], strict=True))
        # one dict for the rows of the same words (the ports share a few): read only, as frames are
        shared = {row: dict(zip(keep_names, map(intern, row), strict=True)) for row in set(rows)}
        return _state_frame(ports, list(map(shared.__getitem__, rows)), device, version)
    table = layout.plain_rows(lines)
    if not table:
        return None
    strip = str.strip
    ports = []
    states = []
    for cells in table:
        words = list(map(strip, cells))
        state = _row_state(names, words, trusted)
        if state is None:
            return None
        ports.append(words[0])
        states.append(state if keys is None else {k: w for k, w in state.items() if k in keys})
    if len(set(ports)) != len(ports):
        return None
    return _state_frame(ports, states, device, version)


def _state_frame(ports: list[str], states: list[dict[str, str]], device: str, version: str | None) -> Frame:
    """The frame of the table's rows: its ports with their state words, no counter."""
    return Frame(TOOL, device, None, version or "", ports, (), np.empty((len(ports), 0), dtype=np.uint64), states)


__all__ = ["STATE_KEYS", "TOOL", "parse_interface_status", "read_interface_status_frame"]
