"""show pfcwd stats on recorded outputs (tests/fixtures/telemetry/pfcwd, see its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.telemetry.parsers.sonic_pfcwd import parse_pfcwd_stats

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "telemetry" / "pfcwd"


def read(name: str) -> str:
    return (FIX / name).read_text()


# fixture, port, queue, detected, restored, status: read from the fixture's row
ROWS = [
    ("issue8483-z9332-stormed.txt", "Ethernet4", 3, 1, 0, "stormed"),
    ("issue8483-z9332-restored.txt", "Ethernet4", 3, 1, 1, "operational"),
    ("issue9430-z9332-operational.txt", "Ethernet6", 3, 2, 2, "operational"),
    ("issue19067-operational.txt", "Ethernet24", 3, 2, 2, "operational"),
    ("pr682-operational.txt", "Ethernet96", 4, 5, 5, "operational"),
    ("pr682-operational.txt", "Ethernet36", 4, 1, 1, "operational"),
    ("pr682-stopped-na.txt", "Ethernet96", 3, 1, 1, "N/A"),
    ("sonic-utilities-691b1bb-stats.txt", "Ethernet0", 3, 1, 0, "stormed"),
    ("sonic-utilities-691b1bb-stats.txt", "Ethernet8", 4, 3, 2, "stormed"),
]


@pytest.mark.parametrize(("name", "port", "queue", "detected", "restored", "status"), ROWS)
def test_rows(name: str, port: str, queue: int, detected: int, restored: int, status: str) -> None:
    snap = parse_pfcwd_stats(read(name))
    sample = snap.ports[port]
    assert sample.counters[f"pfcwd{queue}_storm_detected"] == detected
    assert sample.counters[f"pfcwd{queue}_storm_restored"] == restored
    assert sample.state[f"pfcwd{queue}_status"] == status
    assert snap.unknown == []


def test_two_queues_of_one_port() -> None:
    sample = parse_pfcwd_stats(read("pr682-operational.txt")).ports["Ethernet96"]
    assert sorted(sample.counters) == [
        "pfcwd3_storm_detected",
        "pfcwd3_storm_restored",
        "pfcwd4_storm_detected",
        "pfcwd4_storm_restored",
    ]


def test_a_row_cut_after_its_status_is_unknown_not_a_storm() -> None:
    snap = parse_pfcwd_stats(read("issue17434-voq-stormed-cut.txt"))
    assert snap.ports == {}
    assert snap.unknown == ["line 4: 'Ethernet0:3   stormed' has 2 of 7 columns (cut short or elided)"]


def test_an_empty_table_is_a_complete_reading() -> None:
    # the tool prints only queues with a nonzero statistic: no row means no storm, not an unreadable output
    header = read("pr682-operational.txt").splitlines()[:3]
    snap = parse_pfcwd_stats("\n".join(header) + "\n")
    assert snap.ports == {} and snap.unknown == []


def test_a_storm_pair_that_is_not_numbers() -> None:
    text = read("issue8483-z9332-stormed.txt").replace("   1/0  ", "   1/x  ")
    snap = parse_pfcwd_stats(text)
    assert snap.ports["Ethernet4"].counters["pfcwd3_storm_detected"] == 1
    assert snap.ports["Ethernet4"].counters["pfcwd3_storm_restored"] is None
    assert any("'1/x'" in u for u in snap.unknown)
