"""portstat text tables (tests/fixtures/telemetry/sonic-portstat): show interfaces counters, -a, errors, fec-stats."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.telemetry.model import canonical
from hwaac.telemetry.parsers.sonic_portstat import parse_portstat

FIXTURES = Path(__file__).parents[2] / "fixtures" / "telemetry"
PORTSTAT = FIXTURES / "sonic-portstat"
TEXT = sorted(PORTSTAT.glob("*.txt"))

# (file, tool, ports read, port, counters and gauges, state): values read from the fixture by eye
CASES = [
    (
        "counters_vs_na_rates.txt",
        "show interfaces counters",
        64,
        "Ethernet252",
        {"rx_ok": 0, "rx_err": 0, "rx_drop": 0, "rx_ovr": 0, "tx_ok": 0, "tx_err": 0, "tx_drop": 0, "tx_ovr": 0},
        {"state": "D", "admin": "up", "oper": "down"},
    ),
    (
        "counters_400g_util_over_100.txt",
        "show interfaces counters",
        4,
        "Ethernet4",
        {"rx_ok": 1_910_616_855, "rx_drop": 1, "tx_ok": 1_910_616_871, "tx_drop": 0},
        {"state": "U", "last_cleared": "2024-02-27T22:49:51.688583"},
    ),
    (
        "counters_breakout_na.txt",
        "show interfaces counters",
        6,
        "Eth1",
        {"rx_ok": 71_775_781_039, "rx_drop": 3_446_984, "tx_ok": 152_117_161_724},
        {"oper": "up"},
    ),
    ("counters_breakout_na.txt", "show interfaces counters", 6, "Eth5", {"rx_ok": 0}, {"state": "X", "admin": "down"}),
    (
        "counters_breakout_na.txt",
        "show interfaces counters",
        6,
        "Eth6/1",
        {"rx_ok": None, "rx_err": None, "tx_ok": None, "tx_ovr": None},
        {"state": "U"},
    ),
    (
        "counters_na_after_early_clear.txt",
        "show interfaces counters",
        1,
        "Ethernet0",
        {"rx_ok": None, "rx_drop": None, "tx_ok": None},
        {"last_cleared": "2020-10-16 21:50:34.591645"},
    ),
    (
        "counters_2017_state_words.txt",
        "show interfaces counters",
        6,
        "Ethernet8",
        {"rx_ok": 2192, "rx_drop": 1, "tx_ok": 24982},
        {"state": "UP"},
    ),
    (
        "counters_errors_s6000.txt",
        "show interfaces counters errors",
        7,
        "Ethernet0",
        {"rx_err": 0, "rx_drop": 4, "rx_ovr": 0, "tx_err": 0, "tx_drop": 0, "tx_ovr": 0},
        {"oper": "up"},
    ),
    ("counters_multi_asic_hld.txt", "show interfaces counters", 32, "Ethernet68", {"rx_ok": 39, "tx_ok": 38}, {}),
    (
        "counters_multi_asic_hld.txt",
        "show interfaces counters",
        32,
        "Ethernet100",
        {"rx_ok": 0, "tx_ovr": 0},
        {"state": "X"},
    ),
    (
        "counters_collapsed_whitespace.txt",
        "show interfaces counters",
        1,
        "Ethernet4",
        {"rx_ok": 97_200_545_412, "tx_ok": 68_112_590_505, "rx_drop": 0},
        {"state": "U"},
    ),
    (
        "counters_mock_master.txt",
        "show interfaces counters",
        4,
        "Ethernet4",
        {"rx_ok": 4, "rx_drop": 1000, "rx_ovr": None, "tx_ok": 40, "tx_err": None},
        {},
    ),
    (
        "counters_all_mock_master.txt",
        "show interfaces counters -a",
        4,
        "Ethernet8",
        {"rx_ok": 6, "rx_err": 100, "rx_drop": 10, "tx_ok": 60},
        {},
    ),
    ("counters_all_mock_202012.txt", "show interfaces counters -a", 3, "Ethernet4", {"rx_drop": 1000, "tx_ok": 40}, {}),
    (
        "counters_multi_asic_reminder_mock_master.txt",
        "show interfaces counters -a",
        6,
        "Ethernet-BP256",
        {"rx_ok": 8, "rx_err": 10, "rx_drop": 100, "tx_ok": 10},
        {"state": "U"},
    ),
    (
        "counters_on_sup_na_mock_master.txt",
        "show interfaces counters",
        4,
        "Ethernet11/1",
        {"rx_ok": None, "tx_ovr": None},
        {},
    ),
    (
        "counters_on_sup_na_mock_master.txt",
        "show interfaces counters",
        4,
        "Ethernet1/1",
        {"rx_ok": 100, "tx_ok": 100, "rx_ovr": 0},
        {"state": "U"},
    ),
    (
        "fec_stats_3col_s6000.txt",
        "show interfaces counters fec-stats",
        2,
        "Ethernet0",
        {"fec_corrected": 136_403, "fec_uncorrectable": 34, "fec_symbol_err": 40},
        {"state": "U"},
    ),
    (
        "fec_stats_ber_hld.txt",
        "show interfaces counters fec-stats",
        12,
        "Ethernet56",
        {"fec_corrected": 0, "pre_fec_ber": 1.48e-55, "post_fec_ber": 0.0},
        {},
    ),
    (
        "fec_stats_ber_hld.txt",
        "show interfaces counters fec-stats",
        12,
        "Ethernet40",
        {"fec_corrected": 1, "fec_symbol_err": 1, "pre_fec_ber": 2.77e-18},
        {},
    ),
    (
        "fec_stats_ber_max.txt",
        "show interfaces counters fec-stats",
        7,
        "Ethernet48",
        {
            "fec_corrected": 48_315_381,
            "fec_uncorrectable": 0,
            "fec_symbol_err": 48_308_608,
            "pre_fec_ber": 7.24e-10,
            "pre_fec_ber_max": 2.35e-09,
        },
        {},
    ),
    (
        "fec_stats_flr_hld.txt",
        "show interfaces counters fec-stats",
        14,
        "Ethernet104",
        {"fec_corrected": 21_141, "fec_symbol_err": 7, "fec_flr": 0.0, "fec_flr_predicted": 7.08e-09},
        {},
    ),
    (
        "fec_stats_flr_202505.txt",
        "show interfaces counters fec-stats",
        5,
        "Ethernet3",
        {"fec_uncorrectable": 4, "fec_symbol_err": 152, "fec_flr": None, "fec_flr_predicted": None},
        {},
    ),
    (
        "fec_stats_uncorrectable.txt",
        "show interfaces counters fec-stats",
        5,
        "Ethernet0",
        {
            "fec_corrected": 1147,
            "fec_uncorrectable": 785,
            "fec_symbol_err": 0,
            "pre_fec_ber": 0.0,
            "pre_fec_ber_max": 3.94e-08,
        },
        {},
    ),
    (
        "fec_stats_uncorrectable.txt",
        "show interfaces counters fec-stats",
        5,
        "Ethernet8",
        {"fec_corrected": 0, "pre_fec_ber_max": None},
        {"state": "D"},
    ),
    (
        "fec_stats_mock_master.txt",
        "show interfaces counters fec-stats",
        4,
        "Ethernet0",
        {
            "fec_corrected": 130_402,
            "fec_uncorrectable": 3,
            "fec_symbol_err": 4,
            "pre_fec_ber": None,
            "fec_flr": 4.21e-10,
            "fec_flr_predicted": 7.81e-10,
            "fec_max_t": -1.0,
        },
        {"state": "D"},
    ),
    (
        "fec_stats_mock_master.txt",
        "show interfaces counters fec-stats",
        4,
        "Ethernet8",
        {"fec_corrected": 100_317, "fec_flr": 0.0, "fec_max_t": 3.0},
        {},
    ),
    (
        "fec_stats_mock_202205.txt",
        "show interfaces counters fec-stats",
        3,
        "Ethernet4",
        {"fec_corrected": 110_412, "fec_uncorrectable": 1, "fec_symbol_err": 0},
        {},
    ),
    (
        "fec_stats_mock_202411.txt",
        "show interfaces counters fec-stats",
        3,
        "Ethernet0",
        {"fec_corrected": 130_402, "pre_fec_ber": None, "post_fec_ber": None},
        {},
    ),
]


@pytest.mark.parametrize(("name", "tool", "count", "port", "values", "state"), CASES)
def test_recorded_outputs(name: str, tool: str, count: int, port: str, values: dict, state: dict) -> None:
    snap = parse_portstat((PORTSTAT / name).read_text())
    assert snap.tool == tool and len(snap.ports) == count
    sample = snap.ports[port]
    assert_values({**sample.counters, **sample.gauges}, values)
    assert {k: sample.state.get(k) for k in state} == state


def assert_values(read: dict, expected: dict) -> None:
    """Each expected value is read: None as None, an int exactly (and as an int), a float to 1e-9 relative."""
    for name, want in expected.items():
        got = read[name]
        if want is None or isinstance(want, int):
            assert got == want and type(got) is type(want), (name, got, want)
        else:
            assert got == pytest.approx(want, rel=1e-9), (name, got, want)


@pytest.mark.parametrize(
    "name",
    [
        "counters_vs_na_rates.txt",
        "counters_400g_util_over_100.txt",
        "counters_2017_state_words.txt",
        "counters_errors_s6000.txt",
        "fec_stats_3col_s6000.txt",
        "fec_stats_ber_max.txt",
        "fec_stats_flr_hld.txt",
    ],
)
def test_complete_outputs_have_no_unknown(name: str) -> None:
    snap = parse_portstat((PORTSTAT / name).read_text())
    assert snap.unknown == [] and not snap.incomplete


# (file, words every one of which a reason must hold): the faulty and partial outputs say what they lack
REASONS = [
    ("counters_breakout_na.txt", ["RX_OK", "'N/A'", "Eth6/1"]),
    ("counters_na_after_early_clear.txt", ["TX_DRP", "'N/A'", "Ethernet0"]),
    ("counters_all_201911_misaligned.txt", ["Ethernet0", "RX_UTIL", "not a rate"]),
    ("counters_multi_asic_hld.txt", ["line 20", "Ethernet64", "printed again"]),
    ("counters_collapsed_whitespace.txt", ["Ethernet8", "do not line up"]),
    ("counters_collapsed_whitespace.txt", ["Ethernet0", "not a rate"]),
    ("counters_on_sup_na_mock_master.txt", ["STATE", "Ethernet11/1", "Ethernet12/1"]),
    ("counters_on_sup_no_counters_mock_master.txt", ["Linecard Counter Table is not available"]),
    ("counters_period_mock_master.txt", ["-p", "not counters"]),
    ("fec_stats_period_mock_master.txt", ["-p", "not counters"]),
    ("fec_stats_flr_202505.txt", ["FLR(O)", "'N/A'", "5 port(s)"]),
    # hand-edited BER cells: the last row ends short of the right edge, as a cut row would (the others are read)
    ("fec_stats_ber_hld.txt", ["line 15", "Ethernet96", "output cut?"]),
    ("fec_stats_uncorrectable.txt", ["FEC_PRE_BER_MAX", "Ethernet8", "Ethernet12"]),
]


@pytest.mark.parametrize(("name", "words"), REASONS)
def test_faulty_outputs_say_what_they_lack(name: str, words: list[str]) -> None:
    snap = parse_portstat((PORTSTAT / name).read_text())
    assert any(all(w in reason for w in words) for reason in snap.unknown), snap.unknown


def test_a_misaligned_201911_table_reads_no_value() -> None:
    # the -a header over standard rows: RX_OVR would read TX_OK's 2906; no row may be read at all
    snap = parse_portstat((PORTSTAT / "counters_all_201911_misaligned.txt").read_text())
    assert snap.ports == {} and len(snap.unknown) >= 5


def test_period_output_reads_no_counter() -> None:
    snap = parse_portstat((PORTSTAT / "counters_period_mock_master.txt").read_text())
    assert snap.ports == {} and snap.tool == "show interfaces counters"


def test_rate_and_trim_columns_are_not_read() -> None:
    snap = parse_portstat((PORTSTAT / "counters_all_mock_master.txt").read_text())
    sample = snap.ports["Ethernet8"]
    assert set(sample.counters) == {"rx_ok", "rx_err", "rx_drop", "rx_ovr", "tx_ok", "tx_err", "tx_drop", "tx_ovr"}
    assert sample.gauges == {} and not any("TRIM" in u or "BPS" in u for u in snap.unknown)


def test_every_name_read_is_canonical() -> None:
    for path in TEXT:
        for sample in parse_portstat(path.read_text()).ports.values():
            assert all(canonical(n) for n in (*sample.counters, *sample.gauges)), (path.name, sample)


def test_an_unknown_column_is_named() -> None:
    raw = (PORTSTAT / "counters_errors_s6000.txt").read_text().replace("TX_OVR", "TX_XYZ")
    snap = parse_portstat(raw)
    assert any("TX_XYZ" in u for u in snap.unknown) and "tx_ovr" not in snap.ports["Ethernet0"].counters


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   \n\n",
        "garbage\x00\xff line",
        "Cleared counters\n",
        "No non-zero statistics found for the specified interfaces.\n",
        "{\"Ethernet0\": {\"RX_OK\": \"5\"}}",
        (FIXTURES / "sonic-interfaces-status" / "status_mock_master.txt").read_text(),
        (FIXTURES / "sonic-lldp-table" / "lldp_table_two_macs_mock_master.txt").read_text(),
        (FIXTURES / "sonic-fec-histogram" / "fec_histogram_ethernet48.txt").read_text(),
    ],
)
def test_other_output_is_unknown_not_empty(raw: str) -> None:
    snap = parse_portstat(raw)
    assert snap.unknown and snap.ports == {}


def _row_middles(raw: str) -> list[int]:
    """Offsets in the middle of each table row after the dash line (a cut there leaves a partial row)."""
    lines = raw.splitlines(keepends=True)
    dash = next(i for i, line in enumerate(lines) if line.strip() and not line.strip().strip("- "))
    offsets, pos = [], sum(len(line) for line in lines[: dash + 1])
    for line in lines[dash + 1 :]:
        if len(line.strip()) > 10:
            offsets.append(pos + len(line) // 2)
        pos += len(line)
    return offsets


@pytest.mark.parametrize("path", [p for p in TEXT if "_mock_" not in p.name or "fec" in p.name], ids=lambda p: p.name)
def test_a_cut_row_is_named_and_invents_no_value(path: Path) -> None:
    raw = path.read_text()
    full = parse_portstat(raw)
    for cut in _row_middles(raw)[:6]:
        part = parse_portstat(raw[:cut])
        assert part.unknown, (path.name, cut)
        for port, sample in part.ports.items():
            whole = full.ports[port]
            for name, value in sample.counters.items():
                assert value is None or value == whole.counters[name], (path.name, cut, port, name)
            for name, gauge in sample.gauges.items():
                assert gauge is None or gauge == whole.gauges[name], (path.name, cut, port, name)


@pytest.mark.parametrize("path", TEXT, ids=lambda p: p.name)
def test_never_raises_on_any_prefix(path: Path) -> None:
    raw = path.read_text()
    for k in range(1, 8):
        snap = parse_portstat(raw[: len(raw) * k // 8])
        assert isinstance(snap.unknown, list)


def test_a_second_table_is_named_not_read_as_ports() -> None:
    raw = (PORTSTAT / "counters_errors_s6000.txt").read_text()
    snap = parse_portstat(raw + "\n" + raw.replace("         4  ", "        99  "))
    assert len(snap.ports) == 7 and snap.ports["Ethernet0"].counters["rx_drop"] == 4
    assert snap.unknown == ["line 11: a second table starts; only the first is read"]
