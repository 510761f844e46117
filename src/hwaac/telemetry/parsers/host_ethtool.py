"""One mlx5 netdev's ``ethtool -S`` as a :class:`~hwaac.telemetry.model.Snapshot` with one port.

:func:`hwaac.health.parsers.ethtool.parse_ethtool_stats` reads the output; this module maps the mlx5 physical port,
per-priority and RoCE names (kernel ``Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst``)
onto canonical ones. ethtool does not print the interface, so the caller names the port. Mapping, versions and
what is left unread: ``docs/telemetry/host-nic.md``.
"""

from __future__ import annotations

from functools import lru_cache

from hwaac.health.parsers.ethtool import parse_ethtool_stats
from hwaac.telemetry.model import Snapshot
from hwaac.telemetry.parsers.host_rdma import RDMA_COUNTERS, Table, map_counters

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
    snap = Snapshot("ethtool -S", device=device, version=version or "")
    snap.unknown.extend(stats.unknown)
    counters = snap.port(port).counters
    values: dict[str, int | None] = ({**stats.counters, **dict.fromkeys(stats.unreadable)} if stats.unreadable
                                     else stats.counters)  # type: ignore[assignment]
    map_counters(values, TABLE, counters)
    for canonical, name in _numbered_names(tuple(values)):
        counters[canonical] = values[name]
    if not counters:
        del snap.ports[port]
        if stats.counters:
            snap.unknown.append(f"{port}: no mlx5 port counter among {len(stats.counters)} counters (not mlx5?)")
    return snap


__all__ = ["PORT_COUNTERS", "TABLE", "parse_mlx5_ethtool"]
