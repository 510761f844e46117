"""A host's per-port RDMA counters as :class:`~hwaac.telemetry.model.Snapshot`: ``rdma statistic show`` (iproute2
``rdma/stat.c``) and the sysfs port counters, ``grep -H . /sys/class/infiniband/*/ports/*/{counters,hw_counters}/*``.

The node-health parsers read both formats (:func:`hwaac.health.parsers.rdma.parse_rdma_statistic`,
:func:`hwaac.health.parsers.ib_counters.parse_ib_counters`); this module only maps their facts onto canonical names.
Ports are named ``<device>/<port>`` (``mlx5_0/1``) as ``rdma`` prints them. Names, versions and what is left
unread: ``docs/telemetry/host-nic.md``. :func:`read_ib_sysfs_frame` reads the usual sysfs output straight into
columns (:class:`~hwaac.telemetry.frames.Frame`).
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import itemgetter

from hwaac.health.parsers.ib_counters import SATURATED_AT, parse_ib_counters
from hwaac.health.parsers.rdma import parse_rdma_statistic as _health_rdma_statistic
from hwaac.telemetry.frames import PROBE_BASE, Frame, Layout, Layouts
from hwaac.telemetry.model import Snapshot

Table = Mapping[str, tuple[str, int]]  # tool name -> (canonical name, rank: the lowest rank present wins)
SYSFS_TOOL = "sysfs infiniband counters"

# mlx5 RDMA hw counters (kernel drivers/infiniband/hw/mlx5/counters.c; ethtool -S prints some of them on some
# drivers). The optional cc_* counters (counters.c basic_op_cnts / rdma*_cnp_op_cnts, enabled with `rdma statistic
# set ... optional-counters`) count the same events and stand in only when the always-on one is absent.
RDMA_COUNTERS: Table = {
    "np_ecn_marked_roce_packets": ("ecn_marked", 0),
    "cc_rx_ce_pkts": ("ecn_marked", 1),
    "np_cnp_sent": ("cnp_sent", 0),
    "cc_tx_cnp_pkts": ("cnp_sent", 1),
    "rp_cnp_handled": ("cnp_handled", 0),
    "rp_cnp_ignored": ("cnp_ignored", 0),
    "out_of_sequence": ("out_of_sequence", 0),
    "packet_seq_err": ("packet_seq_err", 0),
    "local_ack_timeout_err": ("local_ack_timeout_err", 0),
    "out_of_buffer": ("rx_out_of_buffer", 0),
    "rnr_nak_retry_err": ("rnr_nak_retry_err", 0),
    "duplicate_request": ("duplicate_request", 0),
    "implied_nak_seq_err": ("implied_nak_seq_err", 0),
    "req_cqe_error": ("req_cqe_err", 0),
    "resp_cqe_error": ("resp_cqe_err", 0),
    "req_transport_retries_exceeded": ("req_retries_exceeded", 0),
    "roce_adp_retrans": ("adp_retrans", 0),
    "roce_adp_retrans_to": ("adp_retrans_timeout", 0),
    "rx_icrc_encapsulated": ("icrc_err", 0),
}

# InfiniBand PortCounters in sysfs counters/ (kernel drivers/infiniband/core/sysfs.c; IBA Vol. 1 §16.1.3.5).
# port_rcv_packets is left out: it counts packets received with errors too, so it is not rx_ok.
PORT_COUNTERS: Table = {
    "symbol_error": ("rx_symbol_err", 0),
    "port_rcv_errors": ("rx_err", 0),
    "link_downed": ("link_down_events", 0),
    "link_error_recovery": ("link_error_recovery", 0),
    "port_xmit_discards": ("tx_drop", 0),
    "excessive_buffer_overrun_errors": ("rx_ovr", 0),
    "port_xmit_wait": ("tx_wait", 0),
    "port_xmit_packets": ("tx_ok", 0),
    "port_xmit_data": ("tx_octets", 0),
    "port_rcv_data": ("rx_octets", 0),
}
# PortXmitData / PortRcvData count 4-octet words (IBA Vol. 1 §16.1.3.5).
_OCTETS_PER_WORD = {"port_xmit_data": 4, "port_rcv_data": 4}


def map_counters(values: Mapping[str, int | None], table: Table, out: dict[str, int | None]) -> dict[str, str]:
    """Copy the values ``table`` knows into ``out`` under their canonical names; where several tool names give one
    canonical name, the lowest rank wins. Returns canonical name -> the tool name it was taken from.

    Which name wins depends only on the names present and their order, so the choice is made once per list of
    names (:func:`_choice`, cached) and each call copies the values in one pass."""
    taken = _choice(tuple(values), table)
    if len(taken) > 1:
        out.update(zip(taken, itemgetter(*taken.values())(values), strict=True))
    elif taken:
        canonical, name = next(iter(taken.items()))
        out[canonical] = values[name]
    return dict(taken)


_CHOICES: dict[tuple[int, tuple[str, ...]], tuple[Table, dict[str, str]]] = {}


def _choice(names: tuple[str, ...], table: Table) -> dict[str, str]:
    """canonical -> the tool name :func:`_map_loop` takes it from, for a reading that lists ``names`` in order (in
    the order the loop first sets each canonical name)."""
    key = (id(table), names)
    hit = _CHOICES.get(key)
    if hit is not None and hit[0] is table:
        return hit[1]
    taken = _map_loop(dict.fromkeys(names), table, {})
    if len(_CHOICES) < 4096:  # a few layouts per driver; the cap keeps odd inputs from growing it
        _CHOICES[key] = (table, taken)
    return taken


def _map_loop(values: Mapping[str, int | None], table: Table, out: dict[str, int | None]) -> dict[str, str]:
    taken: dict[str, str] = {}
    ranks: dict[str, int] = {}
    for name, value in values.items():
        hit = table.get(name)
        if hit is None:
            continue
        canonical, rank = hit
        if ranks.get(canonical, rank + 1) <= rank:
            continue
        ranks[canonical] = rank
        out[canonical] = value
        taken[canonical] = name
    return taken


def cut_short(names: list[str], others: list[list[str]]) -> bool:
    """Whether ``names`` (the last port's counters, in output order) are only the start of another port's list: the
    same driver prints the same counters in the same order for every port, so the output stopped inside it."""
    return any(len(other) > len(names) and other[: len(names)] == names for other in others)


def _distrust_last(snap: Snapshot, port: str, last: str | None, taken: Mapping[str, str]) -> None:
    """The output was cut after ``last`` (a tool name): its value may have lost digits, so it becomes None."""
    for canonical, name in taken.items():
        if name == last:
            snap.ports[port].counters[canonical] = None
            snap.unknown.append(f"{port}: {name} is the last value before the cut, it may be cut short: unknown")


def parse_rdma_statistic(raw: str, *, device: str = "", version: str | None = None) -> Snapshot:
    """Read ``rdma statistic show [link DEV/PORT]``, plain or ``-p``, into one port per ``DEV/PORT``.

    Returns a snapshot whose ``unknown`` holds the health parser's reasons (unreadable lines and values, names
    without a value) and a last port that stopped early compared with another port (its last value is then None).
    Never raises.
    """
    result = _health_rdma_statistic(raw, version=version)
    snap = Snapshot("rdma statistic show", device=device, version=version or "")
    snap.unknown.extend(result.unknown)
    lists = [list(counters) for counters in result.ports.values()]
    for index, ((dev, number), counters) in enumerate(result.ports.items()):
        port = f"{dev}/{number}"
        taken = map_counters(counters, RDMA_COUNTERS, snap.port(port).counters)
        if index == len(lists) - 1 and cut_short(lists[-1], lists[:-1]):
            snap.unknown.append(f"{port}: fewer counters than another port of the same list (output cut?)")
            _distrust_last(snap, port, lists[-1][-1] if lists[-1] else None, taken)
    return snap


def parse_ib_sysfs_counters(raw: str, *, device: str = "", version: str | None = None) -> Snapshot:
    """Read ``grep -H .`` of ``/sys/class/infiniband/*/ports/*/counters/*`` and ``.../hw_counters/*``.

    ``port_xmit_data``/``port_rcv_data`` become octets (4 per word). A saturated legacy counter (it stopped at its
    field's maximum) or an unreadable one (``N/A (no PMA)``) is None with its reason in ``unknown``; so is the last
    value of a last port whose counters stop early compared with another port's. Never raises.
    """
    result = parse_ib_counters(raw, version=version)
    snap = Snapshot(SYSFS_TOOL, device=device, version=version or "")
    snap.unknown.extend(result.unknown)
    taken: dict[str, str] = {}
    for (dev, number), counters in result.ports.items():
        port = f"{dev}/{number}"
        out = snap.port(port).counters
        taken = map_counters(counters, PORT_COUNTERS, out)
        for canonical, name in taken.items():
            value = out[canonical]
            if value is not None and name in _OCTETS_PER_WORD:
                out[canonical] = value * _OCTETS_PER_WORD[name]
        taken |= map_counters(counters, RDMA_COUNTERS, out)
        for canonical, name in taken.items():
            if out[canonical] is None:
                why = result.none_reasons.get((dev, number, name), "unreadable")
                snap.unknown.append(f"{port}: {name} {why}")
    # grep lists every port's counters/ and then every port's hw_counters/ in the same port order, so the output's
    # last line is the last name of the last port.
    lists = [list(counters) for counters in result.ports.values()]
    if lists and lists[-1] and cut_short(lists[-1], lists[:-1]):
        last = next(reversed(snap.ports))
        snap.unknown.append(f"{last}: fewer counters than another port (output cut?)")
        _distrust_last(snap, last, lists[-1][-1], taken)
    return snap


# --- frame reader -----------------------------------------------------------------------------------------------------

_NOT_SEPARATORS = bytes(c for c in range(256) if c not in b":\n")
_SYSFS_LAYOUTS = Layouts(256)  # by an output's paths


def _sysfs_layout(paths: list[str], key: str) -> Layout | None:
    """The layout of an output with ``paths``, learnt from the parser's reading of its probe, with the value at
    which each counter's file saturates (the parser reads a saturated value as unknown)."""

    def learn() -> Layout | None:
        probe = "".join(f"{path}:{PROBE_BASE + i}\n" for i, path in enumerate(paths))
        return Layout.learn(
            parse_ib_sysfs_counters(probe), len(paths), lambda i: SATURATED_AT.get(paths[i].rpartition("/")[2], 0)
        )

    return _SYSFS_LAYOUTS.get(key, learn)


def read_ib_sysfs_frame(raw: str, *, device: str = "", version: str | None = None) -> Frame | None:
    """:func:`parse_ib_sysfs_counters`'s reading of ``raw`` as a :class:`~hwaac.telemetry.frames.Frame`, when every
    line is ``PATH:VALUE`` (no other colon), every value read a count below 2**64 (and not at its file's saturation)
    and the parser reads it plain; None for anything else, which the parser reads and says why. Never raises.

    The ports, names and order come from the parser itself: its reading of a probe, the output with every value
    replaced by a distinct one (:meth:`~hwaac.telemetry.frames.Layout.learn`), once per list of paths."""
    if type(raw) is not str or not raw.isascii():
        return None
    if not raw.endswith("\n"):
        raw += "\n"
    tokens = raw.replace("\n", ":").split(":")
    lines = len(tokens) // 2
    if not lines or raw.encode().translate(None, _NOT_SEPARATORS) != b":\n" * lines:
        return None  # not one colon a line (a grep error, a PCI path, a blank line)
    paths, texts = tokens[0:-1:2], tokens[1::2]
    layout = _sysfs_layout(paths, "\n".join(paths))
    if layout is None:
        return None
    values = layout.values(texts)  # only those read: the parser passes over the rest
    if values is None:
        return None
    return Frame(SYSFS_TOOL, device, None, version or "", list(layout.ports), layout.names, values, None)


__all__ = [
    "PORT_COUNTERS",
    "RDMA_COUNTERS",
    "SYSFS_TOOL",
    "cut_short",
    "map_counters",
    "parse_ib_sysfs_counters",
    "parse_rdma_statistic",
    "read_ib_sysfs_frame",
]
