"""SONiC port counters as portstat prints them: ``show interfaces counters`` (and ``-a``, ``errors``, ``rates``,
``fec-stats``, ``portstat -fh``), read into a :class:`~hwaac.telemetry.model.Snapshot`.

Columns are found by their header word (:data:`COUNTER_COLUMNS`, :data:`GAUGE_COLUMNS`), so the layouts of 2017 to
today read with the same code; the tool's own rates (``*_BPS``, ``*_PPS``, ``*_UTIL``) are not read. Printing code:
sonic-utilities ``utilities_common/portstat.py`` ``cnstat_diff_print``; layouts, N/A and the counters-since-clear
caveat in ``docs/telemetry/sonic-ports.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hwaac.telemetry.model import PortSample, Snapshot
from hwaac.telemetry.parsers.sonic_table import find_layout, rows

# portstat column -> canonical counter. The lower-case names are the fields of portstat's own cache file (NStats in
# utilities_common/portstat.py), which ``portstat -c`` writes as JSON next to a "time" key.
COUNTER_COLUMNS: dict[str, str] = {
    "RX_OK": "rx_ok",
    "RX_ERR": "rx_err",
    "RX_DRP": "rx_drop",
    "RX_OVR": "rx_ovr",
    "TX_OK": "tx_ok",
    "TX_ERR": "tx_err",
    "TX_DRP": "tx_drop",
    "TX_OVR": "tx_ovr",
    "FEC_CORR": "fec_corrected",
    "FEC_UNCORR": "fec_uncorrectable",
    "FEC_SYMBOL_ERR": "fec_symbol_err",
    **{f"BIN{s}": f"fec_s{s}_codewords" for s in range(16)},
    "rx_ok": "rx_ok",
    "rx_err": "rx_err",
    "rx_drop": "rx_drop",
    "rx_ovr": "rx_ovr",
    "tx_ok": "tx_ok",
    "tx_err": "tx_err",
    "tx_drop": "tx_drop",
    "tx_ovr": "tx_ovr",
    "rx_byt": "rx_octets",
    "tx_byt": "tx_octets",
    "fec_corr": "fec_corrected",
    "fec_uncorr": "fec_uncorrectable",
    "fec_symbol_err": "fec_symbol_err",
    **{f"fec_bin{s}": f"fec_s{s}_codewords" for s in range(16)},
}
# portstat column -> canonical gauge: values swss port_rates.lua computes per poll interval (COUNTERS_DB RATES).
GAUGE_COLUMNS: dict[str, str] = {
    "FEC_PRE_BER": "pre_fec_ber",
    "FEC_POST_BER": "post_fec_ber",
    "FEC_PRE_BER_MAX": "pre_fec_ber_max",
    "FLR(O)": "fec_flr",
    "FLR(P) (Accuracy)": "fec_flr_predicted",
    "FEC_MAX_T": "fec_max_t",
}
# The tool's own rates: never read, but a cell that is not shaped like a rate shows a row that does not line up
# with its header (portstat -a of 201911 printed the standard row under the -a header).
RATE_COLUMNS = frozenset({"RX_BPS", "RX_PPS", "RX_UTIL", "TX_BPS", "TX_PPS", "Tx_PPS", "TX_UTIL"})
_RATE_ENDS = ("/s", "%", "N/A")
_RATE_LAST = frozenset("s%A")
_NA = "N/A"
# Printed, deliberately not read: packet trimming (not used by RoCE fabrics), a vendor description column, and the
# NStats fields health does not need (frame size buckets, unicast/multicast/broadcast splits, jabbers, WRED).
NOT_READ = frozenset({"TRIM", "TRIM_TX", "TRIM_DRP", "TRIM_PKTS", "TRIM_TX_PKTS", "TRIM_DRP_PKTS", "DESC"})
_NSTATS_NOT_READ = ("rx_", "tx_", "wred_", "trim")
# STATE (utilities_common/portstat.py get_port_state): U admin and oper up, D admin up and oper down, X admin down.
_STATE_WORDS = {"U": {"admin": "up", "oper": "up"}, "D": {"admin": "up", "oper": "down"}, "X": {"admin": "down"}}
_REMINDER = "Reminder:"
_PERIOD = "The rates are calculated within"
_CACHED = "Last cached time was"
_MAX_NAMED = 8


@dataclass(slots=True)
class Plan:
    """Which cell of a row goes where: (index, canonical name, column) triples per kind."""

    counters: list[tuple[int, str, str]]
    gauges: list[tuple[int, str, str]]
    rates: list[tuple[int, str]]
    state: int | None
    unread: list[str]


def plan_columns(names: Sequence[str]) -> Plan:
    """The reading plan for a row of ``names`` (``names[0]`` is the port)."""
    plan = Plan([], [], [], None, [])
    for i, col in enumerate(names):
        if i == 0:
            continue
        if col in COUNTER_COLUMNS:
            plan.counters.append((i, COUNTER_COLUMNS[col], col))
        elif col in GAUGE_COLUMNS:
            plan.gauges.append((i, GAUGE_COLUMNS[col], col))
        elif col in RATE_COLUMNS:
            plan.rates.append((i, col))
        elif col in ("STATE", "state"):
            plan.state = i
        elif col not in NOT_READ and not (col.islower() and col.startswith(_NSTATS_NOT_READ)):
            plan.unread.append(col)
    return plan


class Unreadable(dict[tuple[str, str], list[str]]):
    """Cells that gave no value, by (column, printed text) -> ports, so one reason names every port of a kind."""

    def reasons(self) -> list[str]:
        out = []
        for (col, text), ports in self.items():
            named = ", ".join(ports[:_MAX_NAMED]) + (
                f" and {len(ports) - _MAX_NAMED} more" if len(ports) > _MAX_NAMED else ""
            )
            out.append(f"{col} printed {text!r} for {len(ports)} port(s), read as unknown: {named}")
        return out


def misaligned(plan: Plan, cells: Sequence[str]) -> str | None:
    """The first rate column whose cell is not shaped like a rate, as ``COLUMN 'text'``; None when all are."""
    for i, col in plan.rates:
        cell = cells[i]
        if cell[-1:] not in _RATE_LAST:  # right aligned: the last character tells, most of the time
            cell = cell.rstrip()
            if not cell.endswith(_RATE_ENDS):
                return f"{col} {cell.strip()!r}"
    return None


def read_row(plan: Plan, cells: Sequence[str], sample: PortSample, bad: Unreadable) -> None:
    """Store the cells of one port's row in ``sample``; cells that give no value become None and an entry of
    ``bad``."""
    counters = sample.counters
    for i, name, col in plan.counters:
        cell = cells[i]
        if not cell.endswith(_NA):  # N/A is common on some ASICs: spare it the exception
            try:
                counters[name] = int(cell.replace(",", ""))
                continue
            except ValueError:
                pass
        counters[name] = None
        bad.setdefault((col, cell.strip()), []).append(sample.port)
    gauges = sample.gauges
    for i, name, col in plan.gauges:
        cell = cells[i]
        if not cell.endswith(_NA):
            try:
                gauges[name] = float(cell.split(" (", 1)[0])  # FLR(P) "7.81e-10 (89%)": the accuracy is dropped
                continue
            except ValueError:
                pass
        gauges[name] = None
        bad.setdefault((col, cell.strip()), []).append(sample.port)
    if plan.state is not None:
        word = cells[plan.state].strip()
        if word == "N/A" or not word:
            bad.setdefault(("STATE", word), []).append(sample.port)
        else:
            sample.state["state"] = word
            sample.state.update(_STATE_WORDS.get(word, {}))


def view_of(names: Sequence[str]) -> str:
    """The show command a portstat table's columns belong to."""
    cols = set(names)
    if "FEC_CORR" in cols:
        return "show interfaces counters fec-stats"
    if "BIN0" in cols:
        return "portstat -fh"
    if "RX_OK" in cols and "RX_ERR" in cols:
        return "show interfaces counters -a" if "RX_PPS" in cols else "show interfaces counters"
    if "RX_ERR" in cols:
        return "show interfaces counters errors"
    if "RX_OK" in cols:
        return "show interfaces counters rates"
    if "TRIM_PKTS" in cols:
        return "show interfaces counters trim"
    return "portstat"


def preamble(line: str, snap: Snapshot, cleared: list[str]) -> bool:
    """Read one of portstat's lines before its table into ``snap``/``cleared``; False when it says the numbers
    that follow are not counters (``-p``: counts over a period)."""
    text = line.strip()
    if text.startswith(_CACHED):
        cleared.append(text[len(_CACHED) :].strip())
    elif text.startswith(_PERIOD):
        snap.unknown.append(f"{text!r}: portstat -p prints counts over a period, not counters; run it without -p")
        return False
    return True


def parse_portstat(raw: str, *, device: str = "", version: str | None = None) -> Snapshot:
    """Read a portstat text table (``show interfaces counters [-a|errors|rates|fec-stats]``, ``portstat -fh``).

    Args:
        raw: the output as recorded; lines before the table (``Last cached time was ...``) and the multi-ASIC
            ``Reminder:`` after it are allowed.
        device: the switch, when the caller knows it.
        version: the SONiC release or sonic-utilities version, when known.

    Returns:
        A snapshot whose ports hold the counters and gauges of the columns read and ``state`` (the STATE letter as
        printed, with ``admin``/``oper`` decoded from U/D/X, and ``last_cleared``: the time printed by ``Last cached
        time was``, since when the counters count). Never raises.
    """
    snap = Snapshot("portstat", device=device, version=version or "")
    lines = raw.splitlines()
    layout = find_layout(lines, right_aligned=True)
    if layout is None:
        first = next((line.strip() for line in lines if line.strip()), "")
        snap.unknown.append(f"no portstat table (first line: {first[:120]!r})" if first else "empty output")
        return snap
    names = layout.names
    if names[0] != "IFACE":
        snap.unknown.append(f"table starts with {names[0]!r}, not IFACE: not portstat output")
        return snap
    snap.tool = view_of(names)
    cleared: list[str] = []
    for line in lines[: layout.header_at]:
        if not preamble(line, snap, cleared):
            return snap
    plan = plan_columns(names)
    if plan.unread:
        snap.unknown.append(f"columns not read (unknown to this reader): {', '.join(plan.unread)}")
    if not plan.counters and not plan.gauges:
        snap.unknown.append(f"no counter column in {' '.join(names)}")
    bad = Unreadable()
    stamp = {"last_cleared": cleared[-1]} if cleared else {}
    ports = snap.ports
    for n, cells in rows(lines, layout, snap.unknown, skip=(_REMINDER,)):
        port = cells[0].strip()
        if not port:
            snap.unknown.append(f"line {n + 1}: no port name: {lines[n].strip()!r}")
            continue
        if port in ports:
            snap.unknown.append(f"line {n + 1}: {port} printed again; the first row is kept")
            continue
        off = misaligned(plan, cells)
        if off is not None:
            snap.unknown.append(f"line {n + 1}: {port} {off} is not a rate: the row does not line up with the header")
            continue
        sample = ports[port] = PortSample(port)
        if stamp:
            sample.state.update(stamp)
        read_row(plan, cells, sample, bad)
    snap.unknown.extend(bad.reasons())
    if not ports:
        snap.unknown.append("the table lists no port")
    return snap


__all__ = [
    "COUNTER_COLUMNS",
    "GAUGE_COLUMNS",
    "NOT_READ",
    "RATE_COLUMNS",
    "Plan",
    "Unreadable",
    "misaligned",
    "parse_portstat",
    "plan_columns",
    "preamble",
    "read_row",
    "view_of",
]
