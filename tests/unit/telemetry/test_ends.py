"""Link ends as columns (hwaac.telemetry.ends): an end read back is the merged reading, names in order, None rates
with their reasons; parts correlated apart give the table one part gives; a part survives marshal."""

from __future__ import annotations

import marshal
import math
from pathlib import Path

import numpy as np
import pytest

from hwaac.plan import build_plan
from hwaac.telemetry.end_table import EndTable
from hwaac.telemetry.ends import EndPart, correlate_part
from hwaac.telemetry.framed import RatedFrame
from hwaac.telemetry.model import PortSample, Snapshot, judged_word
from hwaac.telemetry.rates import Interval, PortRates, interval
from hwaac.telemetry.topology import LinkIndex, from_parts
from hwaac.validate import load_intent

DEMO = Path(__file__).parents[3] / "inventory" / "demo"
LEAF, SPINE = "leaf-p0-su01-r0", "spine-p0-01"


@pytest.fixture(scope="module")
def index() -> LinkIndex:
    return LinkIndex(build_plan(load_intent(DEMO)))


def _counters(device: str, tool: str, values: dict[str, dict[str, int | None]], t0: float = 0.0) -> Interval:
    a, b = Snapshot(tool, device, t0), Snapshot(tool, device, t0 + 10.0)
    for port, counters in values.items():
        a.ports[port] = PortSample(port, {k: 0 for k in counters})
        b.ports[port] = PortSample(port, dict(counters))
    return interval(a, b)


def _status(device: str, ports: dict[str, str]) -> Snapshot:
    s = Snapshot("show interfaces status", device)
    for port, oper in ports.items():
        s.ports[port] = PortSample(port, state={"oper": oper, "admin": "up"})
    s.ports[next(iter(ports))].gauges["rx_power_dbm"] = None  # printed but unreadable
    return s


def _words(device: str, ports: dict[str, str]) -> Snapshot:
    """State words only (intf-status as the frame reader keeps it, no gauge)."""
    s = Snapshot("show interfaces status", device)
    for port, oper in ports.items():
        s.ports[port] = PortSample(port, state={"oper": oper, "admin": "up", "speed": "400G"})
    return s


def _readings() -> list[Interval | Snapshot]:
    return [
        _counters(
            LEAF,
            "portstat",
            {
                "Ethernet0": {"rx_ok": 100, "rx_err": 5, "rx_drop": None},
                "Ethernet4": {"rx_ok": 50, "rx_err": 0, "rx_drop": 0},
                "Ethernet999": {"rx_ok": 1},
            },
        ),  # no such planned port
        _counters(LEAF, "pfcstat", {"Ethernet0": {"pfc3_rx": 20, "rx_ok": 200}}),  # later: rx_ok 20/s wins
        _status(LEAF, {"Ethernet0": "up", "Ethernet8": "down"}),
        _counters(SPINE, "portstat", {"Ethernet0": {"tx_ok": 30}}, t0=5.0),
    ]


def test_an_end_read_back_is_the_merged_reading(index: LinkIndex) -> None:
    table = from_parts(index, [correlate_part(index, _readings())]).ends
    code = index.find(LEAF, "Ethernet0")
    assert code is not None
    end = table[code]
    assert end == PortRates(
        "Ethernet0",
        {"rx_ok": 20.0, "rx_err": 0.5, "rx_drop": None, "pfc3_rx": 2.0},
        {"rx_drop": "unreadable (N/A) in the later sample"},
        {"rx_power_dbm": None},
        {"oper": "up", "admin": "up"},
    )
    assert list(end.rates) == ["rx_ok", "rx_err", "rx_drop", "pfc3_rx"]  # the readings' order
    assert math.isnan(table.rate("rx_drop")[code]) and table.rate("pfc3_rx")[code] == 2.0
    assert np.isnan(table.rate("no_such_counter")).all()
    status_only = index.find(LEAF, "Ethernet8")
    assert table[status_only].rates == {} and table.interval_seconds(status_only) == (False, None)  # type: ignore
    assert table.interval_seconds(code) == (True, 10.0)
    assert table[index.find(LEAF, "Ethernet12")] is None  # type: ignore[index]
    assert int(table.sampled.sum()) == 4 and len(table) == 2 * len(index.links)
    with pytest.raises(IndexError):
        table[len(table)]


def test_the_correlation_lists_unplanned_and_missing_ends(index: LinkIndex) -> None:
    corr = from_parts(index, [correlate_part(index, _readings())])
    assert corr.unplanned == [(LEAF, "Ethernet999", "portstat")]
    assert (LEAF, "Ethernet12") in corr.missing and (SPINE, "Ethernet4") in corr.missing
    assert "gpu-su01-h01" in corr.missing_devices and LEAF not in corr.missing_devices
    assert corr.errors == []  # a None rate is the port's, with its reason, not a reader error


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_parts_correlated_apart_give_the_table_of_one_part(index: LinkIndex, cut: int) -> None:
    """Readings cut into two parts (an end of the leaf in both when the cut is inside its readings) assemble to
    the ends one part gives."""
    readings = _readings()
    whole = from_parts(index, [correlate_part(index, readings)])
    parts = [correlate_part(index, readings[:cut]), correlate_part(index, readings[cut:])]
    apart = from_parts(index, [EndPart.from_plain(marshal.loads(marshal.dumps(p.plain()))) for p in parts])
    assert list(apart.ends) == list(whole.ends)
    assert [list(apart.ends[c].rates) for c in range(len(whole.ends)) if whole.ends[c] is not None] == [
        list(whole.ends[c].rates) for c in range(len(whole.ends)) if whole.ends[c] is not None
    ]  # type: ignore
    assert apart.missing == whole.missing and apart.unplanned == whole.unplanned
    assert [apart.ends.interval_seconds(c) for c in range(len(whole.ends))] == [
        whole.ends.interval_seconds(c) for c in range(len(whole.ends))
    ]


def test_an_interval_without_seconds_reached_the_end(index: LinkIndex) -> None:
    a, b = Snapshot("portstat", LEAF, 10.0), Snapshot("portstat", LEAF, 10.0)  # the same time: no seconds
    for s in (a, b):
        s.ports["Ethernet0"] = PortSample("Ethernet0", {"rx_ok": 1})
    table = EndTable.assemble(2 * len(index.links), [correlate_part(index, [interval(a, b)])])
    code = index.find(LEAF, "Ethernet0")
    assert table.interval_seconds(code) == (True, None)  # type: ignore[arg-type]
    assert table[code].rates == {"rx_ok": None}  # type: ignore[index,union-attr]


def _frame(
    device: str,
    tool: str,
    rows: list[str],
    names: tuple[str, ...],
    base: int,
    state: list[dict[str, str]] | None = None,
) -> RatedFrame:
    rates = np.arange(base, base + len(rows) * len(names), dtype=np.float64).reshape(len(rows), len(names))
    return RatedFrame(device, tool, 0.0, 10.0, 10.0, "taken_at", rows, names, rates, state)


def _dom(device: str, port: str) -> Snapshot:
    s = Snapshot("transceiver", device)
    s.ports[port] = PortSample(port, gauges={"rx_power_dbm": -2.5}, state={"eeprom": "detected"})
    return s


NIC = "gpu-su01-h01"
# readings of one NIC port (rail0, its HCA mlx5_0/1) and a leaf port, in reading order
MERGE_CASES = [
    (
        "two frames",
        [
            _frame(NIC, "ethtool", ["rail0"], ("rx_ok", "rx_crc"), 1),
            _frame(NIC, "ib", ["mlx5_0/1", "mlx5_1/1"], ("rx_crc", "cnp_sent"), 100),
        ],
    ),
    (
        "two frames, then state",
        [
            _frame(NIC, "ethtool", ["rail0"], ("rx_ok", "rx_crc"), 1, [{"oper": "up"}]),
            _frame(NIC, "ib", ["mlx5_0/1"], ("cnp_sent",), 100, [{"oper": "down"}]),
            _status(NIC, {"rail0": "up"}),
        ],
    ),
    (
        "state between two frames",
        [
            _frame(NIC, "ethtool", ["rail0"], ("rx_ok",), 1, [{"oper": "down"}]),
            _status(NIC, {"rail0": "up"}),
            _frame(NIC, "ib", ["mlx5_0/1"], ("rx_ok", "cnp_sent"), 100, [{"oper": "x"}]),
        ],
    ),
    ("gauges, then a frame", [_dom(NIC, "rail0"), _frame(NIC, "ethtool", ["rail0"], ("rx_ok",), 1)]),
    ("a frame, then gauges", [_frame(NIC, "ethtool", ["rail0"], ("rx_ok",), 1), _dom(NIC, "rail0")]),
    (
        "a frame, then an interval",
        [
            _frame(LEAF, "counters", ["Ethernet0"], ("rx_ok", "tx_ok"), 1),
            _counters(LEAF, "pfcstat", {"Ethernet0": {"pfc3_rx": 20, "rx_ok": None}}),
        ],
    ),
    (
        "an interval, then a frame",
        [
            _counters(LEAF, "pfcstat", {"Ethernet0": {"pfc3_rx": 20, "rx_ok": None}}),
            _frame(LEAF, "counters", ["Ethernet0", "Ethernet4"], ("rx_ok", "tx_ok"), 1),
        ],
    ),
    (
        "a switch's frame, then its state",
        [
            _frame(LEAF, "counters", ["Ethernet0", "Ethernet4"], ("rx_ok",), 1, [{"pfcwd3_status": "stormed"}, {}]),
            _words(LEAF, {"Ethernet0": "up", "Ethernet4": "down"}),
        ],
    ),
    (
        "a switch's frame, then the state of one port",
        [
            _frame(LEAF, "counters", ["Ethernet0", "Ethernet4"], ("rx_ok", "tx_ok"), 1),
            _words(LEAF, {"Ethernet4": "down"}),
        ],
    ),
    (
        "a switch's frame, then state and gauges",
        [
            _frame(LEAF, "counters", ["Ethernet0", "Ethernet4"], ("rx_ok",), 1),
            _status(LEAF, {"Ethernet0": "up", "Ethernet4": "down"}),
        ],
    ),
]


def _reference(index: LinkIndex, readings: list) -> dict[int, PortRates]:
    """Each reading's ports as PortRates, merged end by end in reading order: what a correlation must hold."""
    out: dict[int, PortRates] = {}
    for r in readings:
        if isinstance(r, RatedFrame):
            ports = [r.port_rates(i) for i in range(len(r.rows))]
        elif isinstance(r, Interval):
            ports = list(r.ports.values())
        else:
            ports = [PortRates(s.port, {}, {}, s.gauges, s.state) for s in r.ports.values()]
        for pr in ports:
            code = index.find(r.device, pr.port)
            if code is not None:
                old = out.get(code)
                out[code] = (
                    pr
                    if old is None
                    else PortRates(
                        old.port, old.rates | pr.rates, old.why | pr.why, old.gauges | pr.gauges, old.state | pr.state
                    )
                )
    for code, pr in out.items():  # an end keeps the state words the judgement reads
        out[code] = PortRates(
            pr.port, pr.rates, pr.why, pr.gauges, {k: w for k, w in pr.state.items() if judged_word(k)}
        )
    return out


@pytest.mark.parametrize(("case", "readings"), MERGE_CASES, ids=[c[0] for c in MERGE_CASES])
def test_frame_rows_merge_as_their_readings(index: LinkIndex, case: str, readings: list) -> None:
    want = _reference(index, readings)
    table = from_parts(index, [correlate_part(index, readings)]).ends
    got = {c: table[c] for c in range(len(table)) if table[c] is not None}
    assert got == want
    assert [list(got[c].rates) for c in want] == [list(want[c].rates) for c in want]  # names in reading order
    assert [list(got[c].state) for c in want] == [list(want[c].state) for c in want]


def test_an_end_keeps_the_state_words_the_judgement_reads(index: LinkIndex) -> None:
    """Of a port's words (intf-status prints ten a port), an end keeps its oper and admin state and its PFC
    watchdog statuses, whether they come in a snapshot or in a frame's rows."""
    words = {"oper": "up", "admin": "up", "speed": "400G", "alias": "etp1", "pfcwd3_status": "stormed"}
    for reading in (_frame(NIC, "ethtool", ["rail0"], ("rx_ok",), 1, [dict(words)]), _status(NIC, {"rail0": "up"})):
        if not isinstance(reading, RatedFrame):
            reading.ports["rail0"].state.update(words)
        end = from_parts(index, [correlate_part(index, [reading])]).ends[index.find(NIC, "rail0")]
        assert end is not None and end.state == {"oper": "up", "admin": "up", "pfcwd3_status": "stormed"}
