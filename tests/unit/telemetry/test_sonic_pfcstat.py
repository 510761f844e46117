"""show pfc counters (pfcstat) on recorded outputs (tests/fixtures/telemetry/pfcstat, see its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.telemetry.model import canonical
from hwaac.telemetry.parsers.sonic_pfcstat import parse_pfc_counters

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "telemetry" / "pfcstat"


def read(name: str) -> str:
    return (FIX / name).read_text()


# fixture, port, counter, value as printed in the fixture
VALUES = [
    ("sonic-utilities-691b1bb-all-na.txt", "Ethernet0", "pfc0_rx", 1200),  # "1,200"
    ("sonic-utilities-691b1bb-all-na.txt", "Ethernet0", "pfc7_rx", 207),
    ("sonic-utilities-691b1bb-all-na.txt", "Ethernet-BP4", "pfc3_tx", 813),
    ("sonic-utilities-691b1bb-all-na.txt", "Ethernet4", "pfc0_tx", 1410),
    ("sonic-utilities-691b1bb-all-na.txt", "Ethernet-BP256", "pfc3_rx", None),  # N/A
    ("sonic-utilities-691b1bb-all-na.txt", "Ethernet-BP260", "pfc0_tx", None),
    ("pr1755-rx-before-no-commas.txt", "Ethernet124", "pfc0_rx", 137407),
    ("pr1755-rx-before-no-commas.txt", "Ethernet124", "pfc5_rx", 45662),
    ("pr1755-rx-after-commas.txt", "Ethernet124", "pfc0_rx", 137407),  # "137,407" with one space before it
    ("pr1755-rx-after-commas.txt", "Ethernet124", "pfc3_rx", 45660),
    ("pr1755-rx-after-commas.txt", "Ethernet116", "pfc3_rx", 0),
    ("issue9430-tx-grep-cut.txt", "Ethernet6", "pfc3_tx", 15437),
    ("issue9430-tx-grep-cut.txt", "Ethernet10", "pfc3_tx", 0),
    ("command-reference-691b1bb-example.txt", "Ethernet12", "pfc4_tx", 0),
    ("sonic-utilities-691b1bb-history.txt", "Ethernet0", "pfc0_rx_duration_us", 12_000_000),
    ("sonic-utilities-691b1bb-history.txt", "Ethernet4", "pfc3_rx_duration_us", 40_000_003),
    ("sonic-utilities-691b1bb-history.txt", "Ethernet8", "pfc7_rx_duration_us", 80_000_007),
]


@pytest.mark.parametrize(("name", "port", "counter", "value"), VALUES)
def test_values_as_printed(name: str, port: str, counter: str, value: int | None) -> None:
    snap = parse_pfc_counters(read(name), device="leaf1")
    assert snap.ports[port].counters[counter] == value
    assert snap.device == "leaf1" and snap.tool == "show pfc counters"


# fixture, ports read, a reason that must be among unknown ("" = complete)
SHAPES = [
    ("sonic-utilities-691b1bb-all-na.txt", 6, "Ethernet-BP256 pfc0_rx=N/A"),
    ("sonic-utilities-691b1bb-history.txt", 3, ""),
    ("pr1755-rx-before-no-commas.txt", 3, "no 'Port Tx' table"),
    ("pr1755-rx-after-commas.txt", 3, "no 'Port Tx' table"),
    ("issue9430-tx-grep-cut.txt", 6, "line 10:"),  # the Ethernet12 row is cut mid-row
    ("command-reference-691b1bb-example.txt", 4, "'...' in place of rows"),
]


@pytest.mark.parametrize(("name", "ports", "reason"), SHAPES)
def test_ports_and_reasons(name: str, ports: int, reason: str) -> None:
    snap = parse_pfc_counters(read(name))
    assert len(snap.ports) == ports
    if reason:
        assert any(reason in u for u in snap.unknown), snap.unknown
    else:
        assert snap.unknown == []
    assert all(canonical(c) for p in snap.ports.values() for c in p.counters)


def test_the_cut_row_invents_no_port() -> None:
    snap = parse_pfc_counters(read("issue9430-tx-grep-cut.txt"))
    assert "Ethernet12" not in snap.ports
    assert any("no 'Port Rx' table" in u for u in snap.unknown)


def test_both_tables_fill_one_port_each() -> None:
    snap = parse_pfc_counters(read("sonic-utilities-691b1bb-all-na.txt"))
    assert len(snap.ports["Ethernet0"].counters) == 16  # 8 priorities, rx and tx


def test_a_port_missing_from_one_table_is_named() -> None:
    text = read("sonic-utilities-691b1bb-all-na.txt").replace("     Ethernet4   1,410", "     Ethernet5   1,410")
    snap = parse_pfc_counters(text)
    assert "Ethernet4: in the 'Port Rx' table, not in 'Port Tx'" in snap.unknown
    assert "Ethernet5: in the 'Port Tx' table, not in 'Port Rx'" in snap.unknown


def test_counts_since_a_clear_carry_the_clear_time() -> None:
    snap = parse_pfc_counters(read("issue5540-cached-rx-cut.txt"))
    assert snap.ports["Ethernet4"].counters["pfc3_rx"] == 0
    assert snap.ports["Ethernet0"].state == {"cleared_at": "2020-10-01 13:15:55.420247"}
    assert "Ethernet8" not in snap.ports
    assert snap.unknown == [
        "line 7: 'Ethernet8       0' has 2 of 9 columns (cut short or elided)",
        "no 'Port Tx' table (output cut or filtered)",
    ]


def test_counts_without_a_clear_have_no_clear_time() -> None:
    assert parse_pfc_counters(read("sonic-utilities-691b1bb-all-na.txt")).ports["Ethernet0"].state == {}
