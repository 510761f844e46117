"""The one table from SAI statistic names in SONiC's COUNTERS_DB to the canonical counter names, and the reading of
one port's or one queue's hash with it. Used by :mod:`hwaac.telemetry.parsers.sonic_counters_db`; the names are
those orchagent asks syncd to poll (sonic-swss ``orchagent/portsorch.cpp`` ``port_stat_ids``, ``queue_stat_ids``,
``wred_queue_stat_ids``; PFC watchdog fields from ``orchagent/pfcactionhandler.cpp``) and that sonic-utilities
reads for ``show interfaces counters`` (``utilities_common/portstat.py`` ``counter_bucket_dict``), ``pfcstat``,
``queuestat`` and ``pfcwd``. Why each one: ``docs/telemetry/sonic-qos.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import Enum
from operator import itemgetter
from typing import Any, Final

from hwaac.telemetry.model import all_known

# canonical name, SAI names whose values are added (all must be present, as portstat does for RX_OK/TX_OK). A
# canonical name listed twice takes the first entry whose names are present: the second is the older spelling.
PORT_STATS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("rx_ok", ("SAI_PORT_STAT_IF_IN_UCAST_PKTS", "SAI_PORT_STAT_IF_IN_NON_UCAST_PKTS")),
    ("rx_err", ("SAI_PORT_STAT_IF_IN_ERRORS",)),
    ("rx_drop", ("SAI_PORT_STAT_IF_IN_DISCARDS",)),
    ("rx_ovr", ("SAI_PORT_STAT_ETHER_RX_OVERSIZE_PKTS",)),
    ("tx_ok", ("SAI_PORT_STAT_IF_OUT_UCAST_PKTS", "SAI_PORT_STAT_IF_OUT_NON_UCAST_PKTS")),
    ("tx_err", ("SAI_PORT_STAT_IF_OUT_ERRORS",)),
    ("tx_drop", ("SAI_PORT_STAT_IF_OUT_DISCARDS",)),
    ("tx_ovr", ("SAI_PORT_STAT_ETHER_TX_OVERSIZE_PKTS",)),
    ("rx_octets", ("SAI_PORT_STAT_IF_IN_OCTETS",)),
    ("tx_octets", ("SAI_PORT_STAT_IF_OUT_OCTETS",)),
    ("rx_crc", ("SAI_PORT_STAT_DOT3_STATS_FCS_ERRORS",)),
    ("rx_crc", ("SAI_PORT_STAT_ETHER_STATS_CRC_ALIGN_ERRORS",)),
    ("rx_symbol_err", ("SAI_PORT_STAT_DOT3_STATS_SYMBOL_ERRORS",)),
    ("fec_corrected", ("SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES",)),
    ("fec_uncorrectable", ("SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES",)),
    ("fec_symbol_err", ("SAI_PORT_STAT_IF_IN_FEC_SYMBOL_ERRORS",)),
    ("pause_rx", ("SAI_PORT_STAT_PAUSE_RX_PKTS",)),
    ("pause_tx", ("SAI_PORT_STAT_PAUSE_TX_PKTS",)),
    *(
        entry
        for p in range(8)
        for entry in (
            (f"pfc{p}_rx", (f"SAI_PORT_STAT_PFC_{p}_RX_PKTS",)),
            (f"pfc{p}_tx", (f"SAI_PORT_STAT_PFC_{p}_TX_PKTS",)),
            (f"pfc{p}_rx_duration_us", (f"SAI_PORT_STAT_PFC_{p}_RX_PAUSE_DURATION_US",)),
            # estimated by the PFC watchdog's history script where the ASIC has no duration counter (pfcstat --history)
            (f"pfc{p}_rx_duration_us", (f"EST_PORT_STAT_PFC_{p}_RX_PAUSE_DURATION_US",)),
            (f"pfc{p}_tx_duration_us", (f"SAI_PORT_STAT_PFC_{p}_TX_PAUSE_DURATION_US",)),
        )
    ),
)

# queue hash field -> canonical suffix after "q{q}_"; "{k}" is the queue kind from COUNTERS_QUEUE_TYPE_MAP
QUEUE_STATS: tuple[tuple[str, str], ...] = (
    ("SAI_QUEUE_STAT_PACKETS", "{k}_pkts"),
    ("SAI_QUEUE_STAT_DROPPED_PACKETS", "{k}_drop"),
    ("SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", "ecn_marked"),
)
QUEUE_KINDS = {"SAI_QUEUE_TYPE_UNICAST": "uc", "SAI_QUEUE_TYPE_MULTICAST": "mc", "SAI_QUEUE_TYPE_ALL": "all"}

# PFC watchdog fields of a queue hash -> canonical suffix after "pfcwd{q}_"; the status is a state word
PFCWD_STATS: tuple[tuple[str, str], ...] = (
    ("PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED", "storm_detected"),
    ("PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED", "storm_restored"),
)
PFCWD_STATUS = "PFC_WD_STATUS"


def count(text: object) -> int | None:
    """A COUNTERS_DB value as an int (``"38858"``; ``"12.0"``); None for anything else, negative numbers too."""
    if type(text) is str:
        if text.isdigit():
            return int(text)
    elif type(text) is int:
        return text if text >= 0 else None
    elif type(text) is not float:
        return None
    try:
        value = float(text)
    except (ValueError, OverflowError):
        return None
    return int(value) if value.is_integer() and value >= 0 else None


# PORT_STATS in the order read_port takes it: the sums, then single names (a repeated name after its first)
_SUMS = tuple((name, stats) for name, stats in PORT_STATS if len(stats) > 1)
_SINGLE = tuple((name, stats[0]) for name, stats in PORT_STATS if len(stats) == 1)
_QUEUE_NAMES: dict[tuple[str, str | None], tuple[tuple[str, str], ...]] = {}


class PortPlan:
    """How :func:`read_port` reads hashes with one set of fields, in their order: the SAI fields it takes (the sums'
    parts first, then the singles), and the canonical names in the order the general loop sets them. The names
    depend on which fields are present, not on their order; :func:`~hwaac.telemetry.parsers.sonic_counters_db.
    read_counters_db_frame` reads a whole dump's ports with one plan. :func:`port_plan` makes plans of two fields
    or more, so that ``get`` gives a tuple."""

    __slots__ = ("canonical", "get", "names", "stats", "sums", "width")

    def __init__(self, sums: list[tuple[str, int]], names: list[str], stats: list[str]) -> None:
        self.sums = sums  # canonical name, how many parts
        self.names = names
        # the values of the fields taken, in their order (not checked: JSON may give numbers)
        self.get: Callable[[Mapping[str, object]], tuple[Any, ...]] = itemgetter(*stats)
        self.stats = tuple(stats)  # the fields taken, in the order get returns them
        self.width = len(stats)
        self.canonical = (*(name for name, _ in self.sums), *self.names)  # the counters set, in their order


def _taken(present: set[str]) -> tuple[list[tuple[str, int]], list[str], list[str]]:
    """The sums (canonical name, how many parts), the single names and the SAI fields :func:`read_port` takes of
    hashes with the fields ``present``."""
    stats: list[str] = []
    sums: list[tuple[str, int]] = []
    for name, parts in _SUMS:
        if any(p in present for p in parts):
            sums.append((name, len(parts)))
            stats.extend(parts)
    taken = {name for name, _ in sums}
    names: list[str] = []
    for name, stat in _SINGLE:
        if stat in present and name not in taken:
            taken.add(name)
            names.append(name)
            stats.append(stat)
    return sums, names, stats


class _Unseen(Enum):
    """A set of fields not planned yet: a type of its own, so that ``is`` narrows it away."""

    UNSEEN = 0


_UNSEEN: Final = _Unseen.UNSEEN
_PLANS: dict[tuple[str, ...], PortPlan | None] = {}


def port_plan(fields: Mapping[str, object]) -> PortPlan | None:
    """The reading plan of hashes with ``fields``'s keys; None where the general loop must run (a sum with a part
    missing, fewer than two fields)."""
    keys = tuple(fields)
    plan = _PLANS.get(keys, _UNSEEN)
    if plan is _UNSEEN:
        present = set(keys)
        whole = all(all(p in present for p in parts) or not any(p in present for p in parts) for _, parts in _SUMS)
        sums, names, stats = _taken(present) if whole else ([], [], [])
        plan = PortPlan(sums, names, stats) if len(stats) > 1 else None
        if len(_PLANS) < 1024:  # a handful of layouts per fabric; a cap keeps odd inputs from growing it
            _PLANS[keys] = plan
    return plan


def _read_port_fast(fields: Mapping[str, object], counters: dict[str, int | None]) -> bool:
    """:func:`read_port`'s fast path: whether it set ``counters`` (every field it reads a string of ASCII digits)."""
    plan = port_plan(fields)
    if plan is None:
        return False
    texts = plan.get(fields)
    try:
        joined = "".join(texts)
    except TypeError:  # a value that is not text (JSON numbers): the general loop
        return False
    if not (joined.isdigit() and joined.isascii()) or "" in texts:
        return False
    values = list(map(int, texts))
    n = 0
    for name, width in plan.sums:
        counters[name] = sum(values[n : n + width])
        n += width
    counters.update(zip(plan.names, values[n:], strict=True))
    return True


def read_port(fields: Mapping[str, object], counters: dict[str, int | None], where: str, unknown: list[str]) -> None:
    """Set ``counters`` from a port's COUNTERS hash. A sum with a part missing is None (portstat prints N/A).

    Fast path: when every field it reads is a string of ASCII digits (the usual hash), the values are converted in
    one pass by a plan cached per set of fields; anything else takes the general loop below, which gives the same
    counters and the reasons."""
    if not counters and _read_port_fast(fields, counters):
        return
    get = fields.get
    for name, stats in _SUMS:
        texts = [get(stat) for stat in stats]
        if texts.count(None) == len(texts):
            continue
        values = [None if text is None else count(text) for text in texts]
        if all_known(values):
            counters[name] = sum(values)
        else:
            counters[name] = None
            bad = [f"{stat}={text!r}" for stat, text, value in zip(stats, texts, values, strict=True) if value is None]
            unknown.append(f"{where} {name}: {', '.join(bad)} (missing or not a count)")
    for name, stat in _SINGLE:
        text = get(stat)
        if text is None or name in counters:
            continue
        if type(text) is str and text.isdigit():
            counters[name] = int(text)
            continue
        value = counters[name] = count(text)
        if value is None:
            unknown.append(f"{where} {stat}: {text!r} is not a count")


def queue_names(index: str, kind: str | None) -> tuple[tuple[str, str], ...]:
    """(hash field, canonical name) for queue ``index`` of ``kind``; packets and drops only when the kind is known."""
    names = _QUEUE_NAMES.get((index, kind))
    if names is None:
        names = _QUEUE_NAMES[(index, kind)] = (
            *(
                (stat, f"q{index}_{suffix.format(k=kind)}")
                for stat, suffix in QUEUE_STATS
                if kind is not None or "{k}" not in suffix
            ),
            *((stat, f"pfcwd{index}_{suffix}") for stat, suffix in PFCWD_STATS),
        )
    return names


def read_queue(
    fields: Mapping[str, object],
    kind: str | None,
    index: str,
    sample_counters: dict[str, int | None],
    state: dict[str, str],
    where: str,
    unknown: list[str],
) -> None:
    """Set a queue's packets, drops and ECN marks (packets and drops only when its ``kind`` is known) and its PFC
    watchdog storms and status."""
    get = fields.get
    for stat, name in queue_names(index, kind):
        text = get(stat)
        if text is None:
            continue
        if type(text) is str and text.isdigit():
            sample_counters[name] = int(text)
            continue
        value = sample_counters[name] = count(text)
        if value is None:
            unknown.append(f"{where} {stat}: {text!r} is not a count")
    status = get(PFCWD_STATUS)
    if status is not None:
        state[f"pfcwd{index}_status"] = str(status)


__all__ = [
    "PFCWD_STATS",
    "PFCWD_STATUS",
    "PORT_STATS",
    "QUEUE_KINDS",
    "QUEUE_STATS",
    "PortPlan",
    "count",
    "port_plan",
    "queue_names",
    "read_port",
    "read_queue",
]
