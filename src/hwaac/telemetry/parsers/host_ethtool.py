"""One mlx5 netdev's ``ethtool -S`` as a :class:`~hwaac.telemetry.model.Snapshot` with one port.

:func:`hwaac.health.parsers.ethtool.parse_ethtool_stats` reads the output; this module maps the mlx5 physical port,
per-priority and RoCE names (kernel ``Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst``)
onto canonical ones. ethtool does not print the interface, so the caller names the port. Mapping, versions and
what is left unread: ``docs/telemetry/host-nic.md``. :func:`read_mlx5_ethtool_frame` (and, for a host's ports
together, :func:`read_mlx5_ethtool_frames`) reads ethtool's usual print straight into columns
(:class:`~hwaac.telemetry.frames.Frame`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np

from hwaac.health.parsers.ethtool import parse_ethtool_stats
from hwaac.telemetry.frames import PROBE_BASE, Frame, Layout, Layouts, counts, split_ports
from hwaac.telemetry.model import Snapshot
from hwaac.telemetry.parsers.host_rdma import RDMA_COUNTERS, Table, map_counters

TOOL = "ethtool -S"

# Physical port counters (counters.rst "Physical Port Counters"). Where two names count one thing the lowest rank
# present wins: the 802.3 pause frame counters before the global-pause group (printed only with global pause on).
PORT_COUNTERS: Table = {
    "rx_packets_phy": ("rx_ok", 0),
    "tx_packets_phy": ("tx_ok", 0),
    "rx_bytes_phy": ("rx_octets", 0),
    "tx_bytes_phy": ("tx_octets", 0),
    "rx_crc_errors_phy": ("rx_crc", 0),
    "rx_symbol_err_phy": ("rx_symbol_err", 0),
    "rx_oversize_pkts_phy": ("rx_ovr", 0),
    "rx_discards_phy": ("rx_discards_phy", 0),
    "tx_discards_phy": ("tx_drop", 0),
    "tx_errors_phy": ("tx_err", 0),
    "rx_out_of_buffer": ("rx_out_of_buffer", 0),
    "link_down_events_phy": ("link_down_events", 0),
    "rx_pause_ctrl_phy": ("pause_rx", 0),
    "tx_pause_ctrl_phy": ("pause_tx", 0),
    "rx_global_pause": ("pause_rx", 1),
    "tx_global_pause": ("pause_tx", 1),
    "rx_global_pause_duration": ("pause_rx_duration_us", 0),
    "tx_global_pause_duration": ("pause_tx_duration_us", 0),
    "tx_pause_storm_warning_events": ("tx_pause_storm_warning", 0),
    "tx_pause_storm_error_events": ("tx_pause_storm_error", 0),
    "rx_bits_phy": ("rx_bits", 0),
    "rx_corrected_bits_phy": ("fec_corrected_bits", 0),
    "rx_pcs_symbol_err_phy": ("phy_effective_errors", 0),
    # netdev rings only (RoCE traffic bypasses them): stands in when no RoCE CE counter is printed
    "rx_ecn_mark": ("ecn_marked", 9),
}
TABLE: Table = {**RDMA_COUNTERS, **PORT_COUNTERS}

# rx_prio<p>_<kind> / tx_prio<p>_<kind> (counters.rst "Priority Port Counters") -> canonical with the priority.
_PRIO = {
    ("rx", "pause"): "pfc{}_rx",
    ("tx", "pause"): "pfc{}_tx",
    ("rx", "pause_duration"): "pfc{}_rx_duration_us",
    ("tx", "pause_duration"): "pfc{}_tx_duration_us",
    ("rx", "discards"): "pfc{}_rx_discards",
}


_NUMBERED_PREFIXES = ("rx_prio", "tx_prio", "rx_err_lane_")


def _numbered(name: str) -> str | None:
    """The canonical name of a per-priority (``rx_prio3_pause``) or per-lane (``rx_err_lane_2_phy``) counter."""
    if name.startswith(("rx_prio", "tx_prio")):
        number, _, kind = name[7:].partition("_")
        form = _PRIO.get((name[:2], kind))
        return form.format(number) if form and number.isdigit() and len(number) == 1 else None
    if name.startswith("rx_err_lane_") and name.endswith("_phy"):
        lane = name[12:-4]
        return f"phy_raw_errors_lane{lane}" if lane.isdigit() else None
    return None


@lru_cache(maxsize=256)
def _numbered_names(names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(canonical, name) of the per-priority and per-lane counters among ``names``, in their order (one list per
    driver layout, so it is worked out once)."""
    return tuple((c, n) for n in names if n.startswith(_NUMBERED_PREFIXES) and (c := _numbered(n)) is not None)


def parse_mlx5_ethtool(raw: str, *, port: str, device: str = "", version: str | None = None) -> Snapshot:
    """Read ``ethtool -S <netdev>`` of an mlx5 port, whole or grep-filtered.

    Args:
        raw: the output as recorded.
        port: the netdev the command was run for (ethtool does not print it).
        device: the host, when the caller knows it.
        version: driver or ethtool version, when known.

    Returns:
        A snapshot with the port's mapped counters (a counter printed with a value that is not a count is None).
        ``unknown`` holds the health parser's reasons (ethtool's own errors, lines that are not ``name: count``,
        repeated names) and says so when no counter known to this mapping was printed. A cut inside the digits of
        the last line cannot be told from a shorter number. Never raises.
    """
    stats = parse_ethtool_stats(raw, version=version, netdev=port)
    snap = Snapshot(TOOL, device=device, version=version or "")
    snap.unknown.extend(stats.unknown)
    counters = snap.port(port).counters
    values: Mapping[str, int | None] = (
        {**stats.counters, **dict.fromkeys(stats.unreadable)} if stats.unreadable else stats.counters
    )
    map_counters(values, TABLE, counters)
    for canonical, name in _numbered_names(tuple(values)):
        counters[canonical] = values[name]
    if not counters:
        del snap.ports[port]
        if stats.counters:
            snap.unknown.append(f"{port}: no mlx5 port counter among {len(stats.counters)} counters (not mlx5?)")
    return snap


_HEADER = "NIC statistics:\n"
_LAYOUTS = Layouts(256)  # by the names of an output (colons kept)
_FORMATS: dict[tuple[bool, str, int, bool, int], str] = {}  # (header, indent, lines, newline, copies) -> the print


def _form(header: bool, indent: str, lines: int, newline: bool, copies: int = 1) -> str:
    """The %-format of ethtool's print with ``lines`` counters, ``copies`` times (a token each for the header's two
    words, each name with its colon and each value)."""
    key = (header, indent, lines, newline, copies)
    form = _FORMATS.get(key)
    if form is None:
        form = ("%s %s\n" if header else "") + (indent + "%s %s\n") * lines
        form = (form if newline else form[:-1]) * copies
        if len(_FORMATS) < 64:
            _FORMATS[key] = form
    return form


def _layout(names: list[str], head: str, indent: str, port: str) -> Layout | None:
    """The layout of an output of ``names`` (colons kept), learnt from the parser's reading of its probe once."""

    def learn() -> Layout | None:
        probe = head + "".join(f"{indent}{name} {PROBE_BASE + i}\n" for i, name in enumerate(names))
        return Layout.learn(parse_mlx5_ethtool(probe, port=port), len(names))

    return _LAYOUTS.get(tuple(names), learn)


def _values(layout: Layout, texts: list[str], joined: str, lines: int) -> np.ndarray | None:
    """What ``layout`` reads of outputs whose values are ``texts`` (``lines`` an output, ``joined`` by commas), a row
    an output; None when a value is not a count, or one read does not fit in 64 bits."""
    counted = counts(joined, len(texts))  # every value: one that is not a count makes the parser say why
    if counted is not None:  # (the parser takes each value as it is: no factor, no limit)
        rows = counted.reshape(-1, lines)
        return rows if layout.whole else rows[:, layout.index]
    if joined.encode().translate(None, b"0123456789,") or len(texts) != lines:
        return None
    return layout.values(texts)  # one past 2**64 - 1, perhaps of a counter not read


def read_mlx5_ethtool_frame(raw: str, *, port: str, device: str = "", version: str | None = None) -> Frame | None:
    """:func:`parse_mlx5_ethtool`'s reading of ``raw`` as a :class:`~hwaac.telemetry.frames.Frame` of one port, when
    ``raw`` is as ethtool prints it (ethtool.c ``"     %s: %llu\n"``, the header optional, any one indentation) and
    the parser reads it plain; None for anything else, which the parser reads and says why. Never raises.

    The names and order come from the parser itself: its reading of a probe, the output with every value replaced
    by a distinct one (:meth:`~hwaac.telemetry.frames.Layout.learn`), once per list of names."""
    if type(raw) is not str:
        return None
    tokens = raw.split()
    header = raw.startswith(_HEADER)
    lines = len(tokens) // 2 - header
    if len(tokens) % 2 or lines < 1:
        return None
    at = len(_HEADER) if header else 0
    indent = raw[at : raw.find(tokens[2 * header], at)]
    if raw != _form(header, indent, lines, raw.endswith("\n")) % tuple(tokens):
        return None  # not one "name: value" a line
    texts = tokens[2 * header + 1 :: 2]
    layout = _layout(tokens[2 * header :: 2], raw[:at], indent, port)
    if layout is None:
        return None
    values = _values(layout, texts, ",".join(texts), lines)
    return None if values is None else Frame(TOOL, device, None, version or "", [port], layout.names, values, None)


def read_mlx5_ethtool_frames(
    outputs: Sequence[tuple[str, str]], *, device: str = "", version: str | None = None
) -> list[Frame | None]:
    """:func:`read_mlx5_ethtool_frame` of each ``(port, raw)`` of one host, the same frames, read together where the
    outputs print the same names the same way (a host's ports, one driver): one split, one check and one conversion
    for them all, as for one output of every port. Otherwise, and for a value that is no count, one by one."""
    stack = read_mlx5_ethtool_stack(outputs, device=device, version=version)
    if stack is not None:
        return [*split_ports(stack)]  # a list[Frame | None] (list is invariant)
    return [read_mlx5_ethtool_frame(raw, port=port, device=device, version=version) for port, raw in outputs]


def read_mlx5_ethtool_stack(
    outputs: Sequence[tuple[str, str]], *, device: str = "", version: str | None = None
) -> Frame | None:
    """The frames :func:`read_mlx5_ethtool_frames` reads together, as one frame of every port (a row each, in
    ``outputs`` order): what a host's ports are rated as. None when they are not read together (two or more
    outputs that print the same names the same way, every value a count)."""
    raws = [raw for _, raw in outputs]
    first = raws[0] if raws and type(raws[0]) is str else ""
    header = first.startswith(_HEADER)
    at = len(_HEADER) if header else 0
    if len(raws) < 2 or not all(type(r) is str and r.endswith("\n") and r.startswith(_HEADER) == header for r in raws):
        return None
    text = "".join([r[at:] for r in raws]) if header else "".join(raws)
    tokens = text.split()
    lines = len(tokens) // (2 * len(raws))
    if not lines or len(tokens) != 2 * lines * len(raws) or any(r.count("\n") != lines + header for r in raws):
        return None
    indent = first[at : first.find(tokens[0], at)]
    names, texts = tokens[0::2], tokens[1::2]
    if text != _form(False, indent, lines, True, len(raws)) % tuple(tokens) or names != names[:lines] * len(raws):
        return None
    layout = _layout(names[:lines], first[:at], indent, outputs[0][0])
    values = None if layout is None else _values(layout, texts, ",".join(texts), lines)
    if layout is None or values is None:
        return None
    return Frame(TOOL, device, None, version or "", [port for port, _ in outputs], layout.names, values, None)


__all__ = [
    "PORT_COUNTERS",
    "TABLE",
    "TOOL",
    "parse_mlx5_ethtool",
    "read_mlx5_ethtool_frame",
    "read_mlx5_ethtool_frames",
    "read_mlx5_ethtool_stack",
]
