"""show lldp table (tests/fixtures/telemetry/sonic-lldp-table)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.telemetry.parsers.sonic_lldp_table import LldpNeighbor, parse_lldp_table

FIXTURES = Path(__file__).parents[2] / "fixtures" / "telemetry"
LLDP = FIXTURES / "sonic-lldp-table"


def test_a_complete_table_with_the_management_port() -> None:
    table = parse_lldp_table((LLDP / "lldp_table_mgmt_neighbor.txt").read_text(), device="t0-01")
    assert table.unknown == [] and table.total == 5 and table.count() == 5 and table.device == "t0-01"
    assert list(table.neighbors) == ["Ethernet224", "Ethernet232", "Ethernet240", "Ethernet248", "eth0"]
    assert table.neighbors["Ethernet240"] == [LldpNeighbor("Ethernet240", "ARISTA03T1", "Ethernet1", "BR", "")]
    assert table.neighbors["eth0"] == [LldpNeighbor("eth0", "oob-mgmt-switch-0000001", "35", "B", "35")]


def test_two_neighbours_on_one_port() -> None:
    table = parse_lldp_table((LLDP / "lldp_table_two_macs_mock_master.txt").read_text())
    assert table.unknown == [] and table.total == 2
    assert table.neighbors == {
        "Ethernet0": [
            LldpNeighbor("Ethernet0", "dummy", "00:00:00:00:00:01", "BR", "First MAC"),
            LldpNeighbor("Ethernet0", "dummy", "00:00:00:00:00:02", "R", "Second MAC"),
        ]
    }


def test_neighbours_without_a_system_name_and_no_trailer() -> None:
    table = parse_lldp_table((LLDP / "lldp_table_missing_sysname.txt").read_text())
    assert table.count() == 8 and table.total is None
    assert table.neighbors["Ethernet4"] == [LldpNeighbor("Ethernet4", "", "fortyGigE0/0", "", "Ethernet1")]
    assert table.neighbors["Ethernet21"] == [
        LldpNeighbor("Ethernet21", "ARISTA04T1", "fortyGigE0/4", "BR", "Ethernet2")
    ]
    assert table.incomplete and any("Total entries displayed" in u and "8 row(s)" in u for u in table.unknown)


def test_a_trailer_that_disagrees_is_named() -> None:
    raw = (LLDP / "lldp_table_mgmt_neighbor.txt").read_text().replace("displayed:  5", "displayed:  6")
    table = parse_lldp_table(raw)
    assert table.total == 6 and any("6 entries" in u and "5 row(s)" in u for u in table.unknown)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "garbage\n",
        "Error: lldpctl: command not found\n",
        (FIXTURES / "sonic-interfaces-status" / "status_mock_master.txt").read_text(),
        (FIXTURES / "sonic-portstat" / "counters_vs_na_rates.txt").read_text(),
    ],
)
def test_other_output_is_unknown_not_empty(raw: str) -> None:
    table = parse_lldp_table(raw)
    assert table.unknown and table.neighbors == {}


def test_the_lldpshow_error_is_kept() -> None:
    assert parse_lldp_table("Error: Permission denied\n").unknown == ["lldpshow reported 'Error: Permission denied'"]


@pytest.mark.parametrize("path", sorted(LLDP.glob("*.txt")), ids=lambda p: p.name)
def test_a_cut_table_is_named(path: Path) -> None:
    raw = path.read_text()
    for k in range(1, 8):
        table = parse_lldp_table(raw[: len(raw) * k // 8])
        assert table.unknown, (path.name, k)


def test_a_second_table_is_named_not_read_as_neighbours() -> None:
    raw = (LLDP / "lldp_table_missing_sysname.txt").read_text()
    table = parse_lldp_table(raw + raw)
    assert table.count() == 8 and "LocalPort" not in table.neighbors
    assert any("line 12: a second table starts" in u for u in table.unknown)
