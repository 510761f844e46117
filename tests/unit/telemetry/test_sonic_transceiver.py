"""show interfaces transceiver eeprom --dom on recorded outputs (tests/fixtures/telemetry/sfpshow, see its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.telemetry.model import canonical
from hwaac.telemetry.parsers.sonic_transceiver import parse_transceiver_dom

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "telemetry" / "sfpshow"


def read(name: str) -> str:
    return (FIX / name).read_text()


# fixture, port, gauge, value as printed (None: -inf, Unknown)
GAUGES = [
    ("asternos-qsfp28-sr4.txt", "0/0", "rx_power_dbm_lane3", 1.6414),
    ("asternos-qsfp28-sr4.txt", "0/0", "tx_bias_ma_lane4", 6.51),
    ("asternos-qsfp28-sr4.txt", "0/0", "temperature_c", 32.957),
    ("asternos-qsfp28-sr4.txt", "0/0", "voltage_v", 3.2961),
    ("asternos-qsfp28-sr4-lane3-dark_derived.txt", "0/0", "rx_power_dbm_lane3", None),
    ("asternos-qsfp28-sr4-lane3-dark_derived.txt", "0/0", "tx_bias_ma_lane3", 0.0),
    ("asternos-qsfp28-sr4-lane3-dark_derived.txt", "0/0", "voltage_v", None),
    ("asternos-qsfp28-sr4-lane3-dark_derived.txt", "0/0", "rx_power_dbm_lane2", 0.6971),
    ("command-reference-691b1bb-qsfp-old-layout.txt", "Ethernet0", "rx_power_dbm_lane1", -1.1936),
    ("command-reference-691b1bb-qsfp-old-layout.txt", "Ethernet0", "temperature_c", 1.1111),  # "Temperature : "
    ("command-reference-691b1bb-qsfp-old-layout.txt", "Ethernet0", "voltage_v", 0.0),
    ("command-reference-691b1bb-400zr-qsfp-dd.txt", "Ethernet0", "rx_power_dbm_lane1", -8.729),
    ("command-reference-691b1bb-400zr-qsfp-dd.txt", "Ethernet0", "rx_power_dbm_lane8", None),  # -infdBm
    ("command-reference-691b1bb-400zr-qsfp-dd.txt", "Ethernet0", "tx_power_dbm_lane1", -8.492),
    ("command-reference-691b1bb-400zr-qsfp-dd.txt", "Ethernet0", "tx_bias_ma_lane1", 208.0),
    ("command-reference-691b1bb-400zr-qsfp-dd.txt", "Ethernet0", "temperature_c", 51.055),
    ("command-reference-691b1bb-cpo-8lane.txt", "Ethernet0", "rx_power_dbm_lane5", 0.9),
    ("command-reference-691b1bb-cpo-8lane.txt", "Ethernet0", "tx_bias_ma_lane2", 57.22),
    ("command-reference-691b1bb-cpo-8lane.txt", "Ethernet0", "tx_power_dbm_lane8", 2.037),
    ("command-reference-691b1bb-cpo-8lane.txt", "Ethernet0", "temperature_c", 81.363),  # not ELS Temperature 25.027
    ("command-reference-691b1bb-cpo-8lane.txt", "Ethernet0", "voltage_v", 3.311),  # not ELS Vcc 3.365
    ("pr3950-sfp-monitordata-cut.txt", "Ethernet256", "rx_power_dbm_lane1", -1.785),  # SFP "RXPower"
    ("pr3950-sfp-monitordata-cut.txt", "Ethernet256", "tx_power_dbm_lane1", -2.857),
    ("pr3950-sfp-monitordata-cut.txt", "Ethernet256", "tx_bias_ma_lane1", 7.058),
    ("pr3950-sfp-monitordata-cut.txt", "Ethernet256", "voltage_v", 3.374),
    ("sonic-utilities-691b1bb-dom-all.txt", "Ethernet64", "rx_power_dbm_lane2", -0.4871),
    ("sonic-utilities-691b1bb-osfp-8lane.txt", "Ethernet72", "tx_power_dbm_lane6", 0.1),
    ("sonic-utilities-691b1bb-osfp-8lane.txt", "Ethernet72", "tx_bias_ma_lane8", 6.1),
]


@pytest.mark.parametrize(("name", "port", "gauge", "value"), GAUGES)
def test_gauges_as_printed(name: str, port: str, gauge: str, value: float | None) -> None:
    assert parse_transceiver_dom(read(name)).ports[port].gauges[gauge] == value


# fixture, ports, gauges on the first port, state of the first port
SHAPES = [
    ("asternos-qsfp28-sr4.txt", 1, 10, {"identifier": "QSFP28 or later", "vendor_pn": "TSQ885S101T1"}),
    ("command-reference-691b1bb-qsfp-old-layout.txt", 1, 10, {"eeprom": "SFP detected", "identifier": "QSFP+"}),
    ("command-reference-691b1bb-400zr-qsfp-dd.txt", 1, 26, {"eeprom": "SFP EEPROM detected"}),
    ("command-reference-691b1bb-cpo-8lane.txt", 1, 26, {"identifier": "CPO Bailly", "vendor_name": "BROADCOM"}),
    ("pr3950-sfp-monitordata-cut.txt", 1, 5, {"vendor_name": "FINISAR CORP.", "identifier": "SFP/SFP+/SFP28"}),
    ("sonic-utilities-691b1bb-dom-all.txt", 3, 10, {"vendor_sn": "MT1706FT02064"}),
    ("sonic-utilities-691b1bb-osfp-8lane.txt", 1, 26, {"vendor_pn": "some-model"}),  # trailing spaces dropped
]


@pytest.mark.parametrize(("name", "ports", "gauges", "state"), SHAPES)
def test_shapes(name: str, ports: int, gauges: int, state: dict[str, str]) -> None:
    snap = parse_transceiver_dom(read(name))
    first = next(iter(snap.ports.values()))
    assert len(snap.ports) == ports and len(first.gauges) == gauges
    assert state.items() <= first.state.items()
    assert all(canonical(g) for p in snap.ports.values() for g in p.gauges)


def test_dark_lane_and_unknown_vcc_are_none_with_reasons() -> None:
    snap = parse_transceiver_dom(read("asternos-qsfp28-sr4-lane3-dark_derived.txt"))
    assert snap.unknown == ["0/0 RX3Power: '-infdBm' (no light or an unused lane)", "0/0 Vcc: 'Unknown' (not a number)"]


def test_a_400zr_reports_its_seven_unused_lanes() -> None:
    snap = parse_transceiver_dom(read("command-reference-691b1bb-400zr-qsfp-dd.txt"))
    assert len(snap.unknown) == 14  # RX2..RX8 and TX2..TX8 power: -infdBm
    assert all("no light or an unused lane" in u for u in snap.unknown)


def test_a_port_without_a_module_has_no_gauges_and_no_reason() -> None:
    snap = parse_transceiver_dom(read("sonic-utilities-691b1bb-dom-all.txt"))
    assert snap.ports["Ethernet4"].gauges == {}
    assert snap.ports["Ethernet4"].state == {"eeprom": "SFP EEPROM Not detected"}
    assert snap.unknown == []


def test_eeprom_without_dom_is_named() -> None:
    text = read("sonic-utilities-691b1bb-dom-all.txt")
    snap = parse_transceiver_dom(text[: text.index("        ChannelMonitorValues:")])
    assert snap.ports["Ethernet0"].gauges == {}
    assert snap.unknown == ["no DOM values for Ethernet0 (eeprom without --dom, or a module without DOM)"]


def test_lanes_cut_before_the_module_values() -> None:
    text = read("asternos-qsfp28-sr4.txt")
    snap = parse_transceiver_dom(text[: text.index("ChannelThresholdValues:")])
    assert snap.ports["0/0"].gauges["tx_bias_ma_lane4"] == 6.51
    assert snap.unknown == ["0/0: lane values without the module's temperature and Vcc (output cut?)"]


def test_a_value_cut_before_its_unit_is_none() -> None:
    text = read("asternos-qsfp28-sr4.txt")
    snap = parse_transceiver_dom(text.replace("Vcc: 3.2961Volts", "Vcc: 3.29"))
    assert snap.ports["0/0"].gauges["voltage_v"] is None
    assert snap.unknown == ["0/0 Vcc: '3.29' (no unit Volts: the line is cut short?)"]
