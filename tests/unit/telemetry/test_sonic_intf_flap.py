"""show interfaces flap (tests/fixtures/telemetry/sonic-interfaces-flap)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.telemetry.parsers.sonic_intf_flap import parse_interface_flap

FIXTURES = Path(__file__).parents[2] / "fixtures" / "telemetry"
FLAP = FIXTURES / "sonic-interfaces-flap"

# (file, ports, port, flap count, state), read from the fixture by eye
CASES = [
    (
        "flap_mock_master.txt",
        32,
        "Ethernet0",
        3,
        {"admin": "up", "oper": "down", "last_down": "Sat Jan 17 00:04:42 2025", "last_up": "Sat Jan 18 00:08:42 2025"},
    ),
    ("flap_mock_master.txt", 32, "Ethernet36", 7, {"admin": "up", "oper": "up", "last_up": "Sat Jan 20 00:04:42 2025"}),
    ("flap_mock_master.txt", 32, "Ethernet24", 0, {"admin": "up", "oper": "up"}),
    ("flap_mock_master.txt", 32, "Ethernet4", None, {}),
    ("flap_multi_asic_mock_master.txt", 9, "Ethernet-BP256", 0, {"oper": "up"}),
    ("flap_multi_asic_mock_master.txt", 9, "Ethernet64", 2, {"last_down": "Thu Feb 12 23:03:40 2026"}),
    ("flap_one_port_mock_master.txt", 1, "Ethernet64", 2, {"last_up": "Thu Feb 12 23:25:31 2026"}),
]


@pytest.mark.parametrize(("name", "count", "port", "flaps", "state"), CASES)
def test_recorded_outputs(name: str, count: int, port: str, flaps: int | None, state: dict[str, str]) -> None:
    snap = parse_interface_flap((FLAP / name).read_text())
    assert snap.tool == "show interfaces flap" and len(snap.ports) == count
    sample = snap.ports[port]
    assert sample.counters == {"link_state_changes": flaps}
    assert {k: sample.state.get(k) for k in state} == state
    if "last_down" not in state and flaps == 0:
        assert "last_down" not in sample.state and "last_up" not in sample.state  # "Never" is no time


def test_unknown_admin_and_oper_make_the_count_unknown() -> None:
    snap = parse_interface_flap((FLAP / "flap_mock_master.txt").read_text())
    unknown = [p for p, s in snap.ports.items() if s.counters["link_state_changes"] is None]
    assert len(unknown) == 22 and "Ethernet112" not in unknown
    assert any("'Unknown'" in u and "22 port(s)" in u for u in snap.unknown)
    assert parse_interface_flap((FLAP / "flap_one_port_mock_master.txt").read_text()).unknown == []


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "garbage",
        "Error: Invalid interface name Ethernet999\n",
        (FIXTURES / "sonic-interfaces-status" / "status_mock_master.txt").read_text(),
    ],
)
def test_other_output_is_unknown_not_empty(raw: str) -> None:
    snap = parse_interface_flap(raw)
    assert snap.unknown and snap.ports == {}


@pytest.mark.parametrize("path", sorted(FLAP.glob("*.txt")), ids=lambda p: p.name)
def test_a_cut_row_invents_nothing(path: Path) -> None:
    raw = path.read_text()
    full = parse_interface_flap(raw)
    lines = raw.splitlines(keepends=True)
    for i in range(2, len(lines)):
        for cut in (6, 14, 40, 80):  # inside the name, the count, the state, the last time
            part = parse_interface_flap("".join(lines[:i]) + lines[i][:cut])
            assert part.unknown, (path.name, i, cut)
            for port, sample in part.ports.items():
                assert (
                    sample.counters == full.ports[port].counters
                    and sample.state.items() <= full.ports[port].state.items()
                )
