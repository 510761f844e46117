"""RoCE netdev counters from ``ethtool -S <netdev>`` on mlx5 (ConnectX-4 and later).

The formats, sources and rules in full: ``docs/health-modules.md``, section "ethtool -S".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from hwaac.health.parsers.base import MAX_LINE_REASONS, no_output
from hwaac.health.parsers.growth import CounterGrowth, counter_growth
from hwaac.health.result import ToolResult

_HEADER = "NIC statistics:"
# a whole ``name: count`` line (the fast path of parse_ethtool_stats): what the line loop reads as a count
_COUNT_LINE = re.compile(r"^[ \t]*([!-9;-~]+):[ \t]*([0-9]+)[ \t]*$", re.M)
_PRIO = re.compile(r"^(rx|tx)_prio(\d)_(pause|pause_duration|pause_transition|discards|buf_discard|cong_discard)$")
# Messages ethtool prints instead of statistics (ethtool.c do_gnicstats / netlink/stats.c).
_ERRORS = re.compile(r"(Cannot get|no stats available|Operation not supported|No such device|netlink error)", re.I)

# Counters whose growth means lost or damaged traffic or a failing link (mlx5 counters.rst type "Error", link and
# port level). rx_corrected_bits_phy and rx_err_lane_*_phy are left out: with RS-FEC they grow on healthy links, and
# a check compares their rate with rx_bits_phy instead.
ERROR_COUNTERS = (
    "rx_crc_errors_phy",
    "rx_symbol_err_phy",
    "rx_pcs_symbol_err_phy",
    "rx_discards_phy",
    "tx_discards_phy",
    "rx_out_of_buffer",
    "link_down_events_phy",
    "tx_pause_storm_error_events",
    "module_bus_stuck",
    "module_high_temp",
    "module_bad_shorted",
)


def _count(name: str, doc: str) -> Any:
    """A read-only attribute of :class:`EthtoolStats`: the counter ``name`` (None when the driver does not print it)."""
    return property(lambda stats: stats.counters.get(name), doc=doc)


def _by_prio(direction: str, kind: str, doc: str) -> Any:
    """A read-only attribute of :class:`EthtoolStats`: the ``<direction>_prioN_<kind>`` counters by priority N."""
    return property(lambda stats: stats._per_prio(direction, kind), doc=doc)


@dataclass
class EthtoolStats(ToolResult):
    """``ethtool -S`` counters of one netdev.

    Attributes:
        netdev: the interface name given by the caller ("" when not given; ethtool does not print it).
        counters: every counter by name as printed (events, packets or bytes as the name says; ``*_duration`` in
            microseconds; ``outbound_pci_stalled_rd``/``_wr`` are percentages, gauges rather than counters).
        unreadable: counters printed with a value that is not a count: name -> the value as printed (each also
            has its line in ``unknown``).
    """

    tool: str = "ethtool -S"
    netdev: str = ""
    counters: dict[str, int] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)

    def _per_prio(self, direction: str, kind: str) -> dict[int, int]:
        out: dict[int, int] = {}
        for name, value in self.counters.items():
            m = _PRIO.match(name)
            if m and m.group(1) == direction and m.group(3) == kind:
                out[int(m.group(2))] = value
        return out

    # the counters a check reads by name, as attributes
    rx_pause = _by_prio("rx", "pause", "PFC pause frames received (the network asks us to stop).")
    tx_pause = _by_prio("tx", "pause", "PFC pause frames sent (our receive side is congested).")
    rx_pause_duration_us = _by_prio("rx", "pause_duration", "Microseconds the port did not send on that priority.")
    tx_pause_duration_us = _by_prio("tx", "pause_duration", "Microseconds of pause requested from the peer.")
    rx_discards_phy = _count("rx_discards_phy", "Packets dropped at the physical port for lack of buffers.")
    tx_discards_phy = _count("tx_discards_phy", "Packets discarded on transmission (link down, HOL, pause).")
    rx_out_of_buffer = _count("rx_out_of_buffer", "Times a receive queue had no software buffer.")
    rx_crc_errors_phy = _count("rx_crc_errors_phy", "Packets with FCS errors (cable, optic or FEC trouble).")
    rx_symbol_err_phy = _count("rx_symbol_err_phy", "Packets dropped for physical coding (symbol) errors.")
    rx_pcs_symbol_err_phy = _count("rx_pcs_symbol_err_phy", "Symbol errors FEC did not correct (traffic lost).")
    rx_corrected_bits_phy = _count("rx_corrected_bits_phy", "Bits corrected by FEC (a rate against rx_bits_phy).")
    link_down_events_phy = _count("link_down_events_phy", "Times the link went down (flapping).")
    np_cnp_sent = _count("np_cnp_sent", "CNPs sent as notification point (when the driver prints it here).")
    rp_cnp_handled = _count("rp_cnp_handled", "CNPs handled as reaction point (when the driver prints it here).")


def _all_counts(raw: str) -> dict[str, int] | None:
    """The fast path of :func:`parse_ethtool_stats`: when every line after the optional header is ``name: digits``
    (ethtool's usual output), one regex pass reads them all; None when a line is anything else (blank, a message,
    a value that is not a count) or a name repeats, and the line loop reads the output."""
    lines = raw.count("\n") + (not raw.endswith("\n"))
    pairs = _COUNT_LINE.findall(raw)
    if not pairs or len(pairs) != lines - raw.lstrip(" \t").startswith(_HEADER + "\n"):
        return None
    names, values = zip(*pairs, strict=True)
    counters = dict(zip(names, map(int, values), strict=True))
    return counters if len(counters) == len(pairs) else None


def parse_ethtool_stats(raw: str, *, version: str | None = None, netdev: str = "") -> EthtoolStats:
    """Read ``ethtool -S <netdev>``.

    Args:
        raw: the output as recorded (the ``NIC statistics:`` header and the indentation are optional).
        version: ethtool or driver version when known.
        netdev: the interface the output belongs to.

    Returns:
        An :class:`EthtoolStats`; no findings (no thresholds here). ``unknown`` lists an empty output, ethtool's own
        error messages, lines that are not ``name: count`` and repeated names. Raises nothing.

    Sources: mlx5 ``counters.rst`` (names, units).
    """
    result = EthtoolStats(version=version or "", netdev=netdev)
    if no_output(result, raw):
        return result
    counters = _all_counts(raw)
    if counters is not None:
        result.counters = counters
        return result
    bad = 0
    for number, line in enumerate(raw.splitlines(), start=1):
        name, sep, value = line.rpartition(":")
        name, value = name.strip(), value.strip()
        is_count = bool(sep) and bool(name) and value.isascii() and value.isdigit()
        # ethtool's own messages never end in ": <digits>", so only other lines are searched for them (a regex
        # search on each of the ~750 counter lines was a fifth of the parse)
        if not is_count:
            text = line.strip()
            if not text or text == _HEADER:
                continue
            if _ERRORS.search(text):
                result.unknown.append(f"ethtool: {text[:160]}")
                continue
            if sep and name and value and " " not in name:
                result.unreadable.setdefault(name, value[:40])
            bad += 1
            if bad <= MAX_LINE_REASONS:
                result.unknown.append(f"line {number} is not 'name: count': {text[:120]!r}")
            continue
        if name in result.counters:
            result.unknown.append(f"counter {name!r} printed twice (line {number})")
            continue
        result.counters[name] = int(value)
    if bad > MAX_LINE_REASONS:
        result.unknown.append(f"{bad - MAX_LINE_REASONS} more lines are not 'name: count'")
    if not result.counters and not result.unknown:
        result.unknown.append("no counter found")
    return result


def ethtool_growth(before: EthtoolStats, after: EthtoolStats, seconds: float) -> dict[str, CounterGrowth]:
    """Per counter: delta and rate per second between two ``ethtool -S`` readings of the same netdev (None where a
    side is missing or the counter went backwards). Raises nothing."""
    return counter_growth(before.counters, after.counters, seconds)
