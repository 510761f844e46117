"""show queue counters / wredcounters on recorded outputs (tests/fixtures/telemetry/queuestat, see its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.telemetry.model import canonical
from hwaac.telemetry.parsers.sonic_queuestat import parse_queue_counters

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "telemetry" / "queuestat"


def read(name: str) -> str:
    return (FIX / name).read_text()


# fixture, port, counter, value as printed
VALUES = [
    ("issue2393-uc1-drops-cut.txt", "Ethernet196", "q1_uc_pkts", 32025737389),
    ("issue2393-uc1-drops-cut.txt", "Ethernet196", "q1_uc_drop", 6841131615),
    ("issue2393-uc1-drops-cut.txt", "Ethernet196", "q3_uc_drop", 0),
    ("issue2393-uc1-drops-cut.txt", "Ethernet196", "q13_mc_pkts", 0),
    ("issue6290-td3-mc-drops-cut.txt", "Ethernet4", "q0_uc_pkts", 419),
    ("issue6290-td3-mc-drops-cut.txt", "Ethernet4", "q10_mc_drop", 48),
    ("issue6290-td3-mc-drops-cut.txt", "Ethernet4", "q11_mc_drop", 260),
    ("sonic-utilities-691b1bb-counters.txt", "Ethernet0", "q1_uc_pkts", 60),
    ("sonic-utilities-691b1bb-counters.txt", "Ethernet0", "q1_uc_drop", 39),
    ("sonic-utilities-691b1bb-counters.txt", "Ethernet4", "q19_mc_drop", 18),  # not Drop/bytes 99
    ("sonic-utilities-691b1bb-counters.txt", "Ethernet0", "q20_all_pkts", None),  # N/A
    ("sonic-utilities-d5f5382-counters.txt", "Ethernet0", "q0_uc_pkts", 68),  # no "For namespace :" lines
    ("sonic-utilities-d5f5382-counters.txt", "Ethernet0", "q0_uc_drop", 56),
    ("sonic-utilities-d5f5382-counters.txt", "Ethernet8", "q29_all_drop", None),
    ("sonic-utilities-691b1bb-counters.json", "Ethernet0", "q10_mc_pkts", 83),
    ("sonic-utilities-691b1bb-counters.json", "Ethernet0", "q10_mc_drop", 74),
    ("sonic-utilities-691b1bb-counters.json", "Ethernet0", "q20_all_drop", None),
    ("sonic-utilities-691b1bb-wredcounters.txt", "Ethernet0", "q3_ecn_marked", 19),
    ("sonic-utilities-691b1bb-wredcounters.txt", "Ethernet0", "q10_ecn_marked", 74),
    ("sonic-utilities-691b1bb-wredcounters.json", "Ethernet0", "q3_ecn_marked", 19),
]


@pytest.mark.parametrize(("name", "port", "counter", "value"), VALUES)
def test_values_as_printed(name: str, port: str, counter: str, value: int | None) -> None:
    assert parse_queue_counters(read(name)).ports[port].counters[counter] == value


# fixture, tool, ports, counters on the first port, a reason that must be among unknown
SHAPES = [
    ("issue2393-uc1-drops-cut.txt", "show queue counters", 1, 28, "line 18:"),
    ("issue6290-td3-mc-drops-cut.txt", "show queue counters", 1, 28, "line 18:"),
    ("sonic-utilities-691b1bb-counters.txt", "show queue counters", 3, 60, "q20_all_pkts=N/A"),
    ("sonic-utilities-d5f5382-counters.txt", "show queue counters", 3, 60, "q29_all_pkts=N/A"),
    ("sonic-utilities-691b1bb-counters.json", "show queue counters --json", 3, 60, "q20_all_pkts=N/A"),
    ("sonic-utilities-691b1bb-wredcounters.txt", "show queue wredcounters", 3, 30, "q20_ecn_marked=N/A"),
    ("sonic-utilities-691b1bb-wredcounters.json", "show queue wredcounters --json", 3, 30, "q20_ecn_marked=N/A"),
]


@pytest.mark.parametrize(("name", "tool", "ports", "first", "reason"), SHAPES)
def test_shapes(name: str, tool: str, ports: int, first: int, reason: str) -> None:
    snap = parse_queue_counters(read(name))
    assert snap.tool == tool and len(snap.ports) == ports
    assert len(next(iter(snap.ports.values())).counters) == first
    assert any(reason in u for u in snap.unknown), snap.unknown
    assert all(canonical(c) for p in snap.ports.values() for c in p.counters)


def test_no_bytes_and_no_wred_drops() -> None:
    counters = parse_queue_counters(read("sonic-utilities-691b1bb-wredcounters.txt")).ports["Ethernet0"].counters
    assert set(counters) == {f"q{q}_ecn_marked" for q in range(30)}


def test_a_voq_table_is_named_not_read() -> None:
    text = read("sonic-utilities-d5f5382-counters.txt").replace("  Port    TxQ  ", "  Port    Voq  ")
    snap = parse_queue_counters(text)
    assert snap.ports == {}
    assert any("VOQ counters are not read" in u for u in snap.unknown)


def test_a_queue_name_of_no_known_kind() -> None:
    text = read("issue6290-td3-mc-drops-cut.txt").replace("Ethernet4    UC1", "Ethernet4    XQ1")
    snap = parse_queue_counters(text)
    assert "q1_uc_pkts" not in snap.ports["Ethernet4"].counters
    assert any("queue 'XQ1' is not UCn, MCn or ALLn" in u for u in snap.unknown)


def test_counts_since_a_clear_carry_the_clear_time() -> None:
    # queuestat prints "Last cached time was <time>" and "For namespace :" above a port's table after a clear
    text = read("sonic-utilities-691b1bb-counters.txt")
    text = text.replace("For namespace :\n", "Last cached time was 2026-07-01 10:00:00.000001\nFor namespace :\n", 1)
    snap = parse_queue_counters(text)
    assert snap.ports["Ethernet0"].state == {"cleared_at": "2026-07-01 10:00:00.000001"}
    assert snap.ports["Ethernet4"].state == {}


def test_json_counts_since_a_clear_carry_the_clear_time() -> None:
    text = read("sonic-utilities-691b1bb-counters.json").replace(
        '"Ethernet4": {', '"Ethernet4": {\n    "cached_time": "2026-07-01T10:00:00.000001",', 1
    )
    snap = parse_queue_counters(text)
    assert snap.ports["Ethernet4"].state == {"cleared_at": "2026-07-01T10:00:00.000001"}
    assert snap.ports["Ethernet0"].state == {}
