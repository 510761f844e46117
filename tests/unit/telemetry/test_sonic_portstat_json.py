"""portstat -j and portstat's JSON cache (tests/fixtures/telemetry/sonic-portstat/*.json)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hwaac.telemetry.parsers.sonic_portstat import parse_portstat
from hwaac.telemetry.parsers.sonic_portstat_json import parse_portstat_json

PORTSTAT = Path(__file__).parents[2] / "fixtures" / "telemetry" / "sonic-portstat"
JSON = sorted(PORTSTAT.glob("*.json"))


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("portstat_j_400g_derived.json", "counters_400g_util_over_100.txt"),
        ("portstat_fj_ber_max_derived.json", "fec_stats_ber_max.txt"),
    ],
)
def test_json_reads_as_the_table_it_was_printed_from(name: str, text: str) -> None:
    from_json = parse_portstat_json((PORTSTAT / name).read_text())
    from_text = parse_portstat((PORTSTAT / text).read_text())
    assert from_json.unknown == [] and from_json.ports
    assert {p: (s.counters, s.gauges, s.state) for p, s in from_json.ports.items()} == {
        p: (s.counters, s.gauges, s.state) for p, s in from_text.ports.items()
    }
    assert from_json.tool == f"{from_text.tool} -j"


def test_values_read_from_json() -> None:
    snap = parse_portstat_json((PORTSTAT / "portstat_j_400g_derived.json").read_text())
    eth12 = snap.ports["Ethernet12"]
    assert (eth12.counters["rx_ok"], eth12.counters["rx_drop"], eth12.counters["tx_ok"]) == (
        1_910_613_326,
        1,
        1_910_613_346,
    )
    assert eth12.state["last_cleared"] == "2024-02-27T22:49:51.688583" and snap.taken_at is None


def test_the_tool_s_own_json_with_no_counter_column() -> None:
    snap = parse_portstat_json((PORTSTAT / "trim_j_mock_master.json").read_text())
    assert snap.tool == "show interfaces counters trim -j"
    assert snap.ports["Ethernet0"].state["state"] == "D" and snap.ports["Ethernet0"].counters == {}
    assert any("no counter column" in u for u in snap.unknown)
    assert any("STATE" in u and "Ethernet4" in u and "Ethernet8" in u for u in snap.unknown)


def test_a_time_key_is_taken_at() -> None:
    doc = json.loads((PORTSTAT / "portstat_j_400g_derived.json").read_text().split("\n", 1)[1])
    doc["time"] = "2024-03-01T10:20:30.500000"
    snap = parse_portstat_json(json.dumps(doc))
    assert snap.taken_at == datetime(2024, 3, 1, 10, 20, 30, 500000, tzinfo=UTC).timestamp()
    assert "time" not in snap.ports and len(snap.ports) == 4 and snap.unknown == []


def test_the_cache_file_fields() -> None:
    # portstat -c writes NStats fields (utilities_common/portstat.py) as strings, N/A where the ASIC has no counter
    raw = json.dumps(
        {
            "time": "2024-03-01T10:20:30",
            "Ethernet0": {
                "rx_ok": "120",
                "rx_err": "0",
                "rx_drop": "3",
                "rx_ovr": "N/A",
                "tx_ok": "99",
                "rx_byt": "15360",
                "tx_byt": "12672",
                "rx_64": "7",
                "rx_uca": "120",
                "fec_corr": "41",
                "fec_uncorr": "0",
                "fec_bin2": "5",
                "wred_grn_drp_pkt": "0",
                "trim": "0",
            },
        }
    )
    snap = parse_portstat_json(raw)
    assert snap.ports["Ethernet0"].counters == {
        "rx_ok": 120,
        "rx_err": 0,
        "rx_drop": 3,
        "rx_ovr": None,
        "tx_ok": 99,
        "rx_octets": 15360,
        "tx_octets": 12672,
        "fec_corrected": 41,
        "fec_uncorrectable": 0,
        "fec_s2_codewords": 5,
    }
    assert snap.unknown == ["rx_ovr printed 'N/A' for 1 port(s), read as unknown: Ethernet0"]


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "  \n",
        "not json at all",
        "[1, 2, 3]",
        "{\"Ethernet0\": [1, 2]}",
        "{\"Ethernet0\": {\"RX_OK\": ",
        "{}",
        "{\"time\": \"yesterday\"}",
        (PORTSTAT / "counters_mock_master.txt").read_text(),
    ],
)
def test_bad_json_is_unknown_not_empty(raw: str) -> None:
    snap = parse_portstat_json(raw)
    assert snap.unknown and not any(s.counters for s in snap.ports.values())


def test_period_json_is_refused() -> None:
    raw = "The rates are calculated within 3 seconds period\n" + (PORTSTAT / "trim_j_mock_master.json").read_text()
    snap = parse_portstat_json(raw)
    assert snap.ports == {} and any("-p" in u for u in snap.unknown)


@pytest.mark.parametrize("path", JSON, ids=lambda p: p.name)
def test_a_cut_json_reads_no_port(path: Path) -> None:
    raw = path.read_text()
    for k in range(1, 8):
        part = parse_portstat_json(raw[: len(raw) * k // 8])
        assert part.unknown and part.ports == {}
