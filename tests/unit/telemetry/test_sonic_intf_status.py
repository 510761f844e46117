"""show interfaces status (tests/fixtures/telemetry/sonic-interfaces-status)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.telemetry.parsers.sonic_intf_status import parse_interface_status

FIXTURES = Path(__file__).parents[2] / "fixtures" / "telemetry"
STATUS = FIXTURES / "sonic-interfaces-status"

# (file, interfaces, interface, state read from the fixture by eye)
CASES = [
    (
        "status_100g_portchannels.txt",
        8,
        "Ethernet28",
        {
            "lanes": "14,15",
            "speed": "100G",
            "mtu": "9100",
            "fec": "rs",
            "alias": "Ethernet8/1",
            "vlan": "PortChannel0011",
            "oper": "up",
            "admin": "up",
            "type": "QSFP28 or later",
            "asym_pfc": "off",
        },
    ),
    (
        "status_201811_no_fec_oper_na.txt",
        9,
        "Ethernet20",
        {
            "lanes": "97,98,99,100",
            "speed": "40G",
            "mtu": "1500",
            "alias": "hundredGigE6",
            "vlan": "VLAN3008",
            "admin": "up",
            "type": "QSFP+ or later",
            "asym_pfc": "N/A",
        },
    ),
    (
        "status_25g_fec_admin_down.txt",
        7,
        "Ethernet7",
        {
            "lanes": "62",
            "speed": "25G",
            "mtu": "9008",
            "fec": "rs",
            "alias": "twentyfiveGigE7",
            "vlan": "routed",
            "oper": "down",
            "admin": "down",
            "type": "N/A",
            "asym_pfc": "N/A",
        },
    ),
    (
        "status_400g_chassis_qsfpdd.txt",
        4,
        "Ethernet0",
        {
            "lanes": "72,73,74,75,76,77,78,79",
            "speed": "400G",
            "fec": "N/A",
            "vlan": "routed",
            "oper": "down",
            "type": "QSFP-DD Double Density 8X Pluggable Transceiver",
        },
    ),
    (
        "status_mock_master.txt",
        15,
        "Ethernet24",
        {
            "lanes": "24",
            "speed": "1G",
            "fec": "N/A",
            "alias": "etp6",
            "vlan": "trunk",
            "oper": "up",
            "type": "DPU-NPU Data Port",
        },
    ),
    ("status_mock_master.txt", 15, "PortChannel0001", {"lanes": "N/A", "speed": "40G", "oper": "down"}),
]


@pytest.mark.parametrize(("name", "count", "port", "state"), CASES)
def test_recorded_outputs(name: str, count: int, port: str, state: dict[str, str]) -> None:
    snap = parse_interface_status((STATUS / name).read_text())
    assert snap.tool == "show interfaces status" and len(snap.ports) == count
    sample = snap.ports[port]
    assert {k: sample.state.get(k) for k in state} == state
    assert sample.counters == {} and sample.gauges == {}


def test_oper_na_is_left_out_with_a_reason() -> None:
    snap = parse_interface_status((STATUS / "status_201811_no_fec_oper_na.txt").read_text())
    assert all("oper" not in s.state for s in snap.ports.values())
    assert any("Oper" in u and "'N/A'" in u and "9 port(s)" in u for u in snap.unknown)
    assert "fec" not in snap.ports["Ethernet0"].state  # no FEC column in that layout


def test_na_oper_and_admin_of_a_port_channel() -> None:
    snap = parse_interface_status((STATUS / "status_mock_master.txt").read_text())
    assert "oper" not in snap.ports["PortChannel1001"].state and "admin" not in snap.ports["PortChannel1001"].state
    assert sorted(u.split()[0] for u in snap.unknown) == ["Admin", "Oper"]


@pytest.mark.parametrize(
    "name", ["status_100g_portchannels.txt", "status_25g_fec_admin_down.txt", "status_400g_chassis_qsfpdd.txt"]
)
def test_complete_outputs_have_no_unknown(name: str) -> None:
    assert parse_interface_status((STATUS / name).read_text()).unknown == []


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "\n \n",
        "garbage",
        (FIXTURES / "sonic-portstat" / "counters_vs_na_rates.txt").read_text(),
        (FIXTURES / "sonic-interfaces-flap" / "flap_mock_master.txt").read_text(),
    ],
)
def test_other_output_is_unknown_not_empty(raw: str) -> None:
    snap = parse_interface_status(raw)
    assert snap.unknown and snap.ports == {}


@pytest.mark.parametrize("path", sorted(STATUS.glob("*.txt")), ids=lambda p: p.name)
def test_a_cut_last_row_is_named_and_prefixes_invent_nothing(path: Path) -> None:
    raw = path.read_text()
    full = parse_interface_status(raw)
    lines = raw.splitlines(keepends=True)
    for i in range(2, len(lines)):
        snap = parse_interface_status("".join(lines[:i]) + lines[i][: len(lines[i]) // 2])
        assert snap.unknown, (path.name, i)
        for port, sample in snap.ports.items():
            assert sample.state == full.ports[port].state


def test_a_second_table_is_named_not_read_as_ports() -> None:
    raw = (STATUS / "status_100g_portchannels.txt").read_text()
    snap = parse_interface_status(raw + raw)
    assert len(snap.ports) == 8 and "Interface" not in snap.ports
    assert snap.unknown == ["line 11: a second table starts; only the first is read"]
