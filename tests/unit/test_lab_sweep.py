"""The twin's ``portstat -j``: kernel link stats (a recorded ``ip -s -j link show`` of a lab leaf, iproute2 6.1, with
Ethernet128's cable failed by ``hwaac lab fail link``) and the switch's PORT table become what the SONiC reader
reads: counts, and STATE from the CONFIG_DB admin state and the kernel oper state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hwaac.lab.sweep import portstat_json
from hwaac.telemetry.parsers.sonic_portstat_json import parse_portstat_json

LINKS = json.loads((Path(__file__).parents[1] / "fixtures" / "lab" / "ip_s_j_link_leaf.json").read_text())
PORTS = ("Ethernet0", "Ethernet128", "Ethernet132")

# (case, PORT table, port, STATE, oper/admin state as read, rx_ok, tx_ok) -- counts read by eye from the fixture
CASES = [
    ("up", {}, "Ethernet0", "U", {"oper": "up", "admin": "up"}, 68, 75),
    (
        "cable failed: admin up in CONFIG_DB, kernel down",
        {},
        "Ethernet128",
        "D",
        {"oper": "down", "admin": "up"},
        87,
        78,
    ),
    ("shut in CONFIG_DB", {"Ethernet132": {"admin_status": "down"}}, "Ethernet132", "X", {"admin": "down"}, 137, 119),
    (
        "admin_status up written out",
        {"Ethernet132": {"admin_status": "up"}},
        "Ethernet132",
        "U",
        {"oper": "up", "admin": "up"},
        137,
        119,
    ),
]


@pytest.mark.parametrize(("case", "table", "port", "letter", "state", "rx", "tx"), CASES, ids=[c[0] for c in CASES])
def test_portstat_json_reads_back(
    case: str, table: dict, port: str, letter: str, state: dict, rx: int, tx: int
) -> None:
    text = portstat_json(LINKS, PORTS, table)
    assert json.loads(text)[port]["STATE"] == letter
    snap = parse_portstat_json(text, device="leaf-p0-su01-r0")
    sample = snap.ports[port]
    assert {k: sample.state[k] for k in state} == state and "oper" not in sample.state.keys() - state.keys()
    assert (sample.counters["rx_ok"], sample.counters["tx_ok"]) == (rx, tx)
    assert sample.counters["rx_err"] == 0 and sample.counters["rx_drop"] == 0


def test_a_port_the_kernel_does_not_list_is_left_out() -> None:
    text = portstat_json(LINKS, (*PORTS, "Ethernet4"), {})
    assert set(json.loads(text)) == set(PORTS)
    assert "lo" not in json.loads(text)


def test_the_columns_the_veths_lack_are_not_invented() -> None:
    row = json.loads(portstat_json(LINKS, PORTS, {}))["Ethernet0"]
    assert {k for k, v in row.items() if v == "N/A"} == {"RX_OVR", "TX_OVR", "RX_BPS", "RX_UTIL", "TX_BPS", "TX_UTIL"}
    snap = parse_portstat_json(json.dumps({"Ethernet0": row}))
    counters = snap.ports["Ethernet0"].counters
    assert counters["rx_ovr"] is None and counters["tx_ovr"] is None
    assert any("RX_OVR" in u and "N/A" in u for u in snap.unknown)
