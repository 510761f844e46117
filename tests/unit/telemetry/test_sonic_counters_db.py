"""COUNTERS_DB reader on recorded dumps (tests/fixtures/telemetry/counters-db, see its README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hwaac.telemetry.model import canonical
from hwaac.telemetry.parsers.sonic_counters_db import parse_counters_db
from hwaac.telemetry.parsers.sonic_sai_stats import PORT_STATS, count

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "telemetry" / "counters-db"
T1 = "sonic-utilities-b6af9f4-t1-dump-subset.json"
MOCK = "sonic-utilities-691b1bb-mock-tables-subset.json"
CLI = "sonic-db-cli-hgetall-t1_derived.txt"
GNMI = "grpc-telemetry-doc-gnmi-ethernet9_derived.json"
TTY = "issue8314-msn4600c-name-map-tty-cut.txt"


def read(name: str) -> str:
    return (FIX / name).read_text()


# fixture, port, counter, value read from the fixture's hash (rx_ok/tx_ok: UCAST + NON_UCAST, as portstat adds them)
COUNTERS = [
    (T1, "Ethernet0", "rx_drop", 38858),  # SAI_PORT_STAT_IF_IN_DISCARDS
    (T1, "Ethernet0", "rx_ok", 38882 + 1944),
    (T1, "Ethernet0", "rx_octets", 4295826),
    (T1, "Ethernet0", "q0_uc_pkts", 1958),  # Ethernet0:0 -> oid:0x15000000000099, SAI_QUEUE_TYPE_UNICAST
    (T1, "Ethernet4", "rx_drop", 7),
    (T1, "Ethernet20", "rx_drop", 8),
    (CLI, "Ethernet4", "rx_drop", 7),  # the same T1 values printed by sonic-db-cli
    (CLI, "Ethernet4", "tx_ok", 40800),
    (MOCK, "Ethernet0", "rx_err", 10),
    (MOCK, "Ethernet0", "rx_drop", 100),
    (MOCK, "Ethernet0", "fec_corrected", 130402),
    (MOCK, "Ethernet0", "fec_uncorrectable", 3),
    (MOCK, "Ethernet0", "fec_symbol_err", 4),
    (MOCK, "Ethernet0", "pfc0_rx", 1200),
    (MOCK, "Ethernet0", "pfc3_tx", 213),
    (MOCK, "Ethernet0", "pfc3_rx_duration_us", 20000003),  # EST_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US
    (MOCK, "Ethernet4", "rx_drop", 1000),
    (MOCK, "Ethernet4", "rx_ok", 4),
    (MOCK, "Ethernet0", "q3_uc_pkts", 52),  # oid:0x1500000000035a
    (MOCK, "Ethernet0", "q3_uc_drop", 19),
    (MOCK, "Ethernet0", "q3_ecn_marked", 19),  # SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS
    (MOCK, "Ethernet0", "q10_mc_pkts", 83),  # SAI_QUEUE_TYPE_MULTICAST
    (MOCK, "Ethernet0", "pfcwd3_storm_detected", 1),
    (MOCK, "Ethernet0", "pfcwd3_storm_restored", 0),
    (GNMI, "Ethernet9", "rx_crc", 0),  # SAI_PORT_STAT_ETHER_STATS_CRC_ALIGN_ERRORS, no DOT3 FCS counter then
    (GNMI, "Ethernet9", "pfc7_rx", 0),
]


@pytest.mark.parametrize(("name", "port", "counter", "value"), COUNTERS)
def test_counters_from_hashes(name: str, port: str, counter: str, value: int) -> None:
    snap = parse_counters_db(read(name), device="spine1")
    assert snap.ports[port].counters[counter] == value
    assert snap.tool == "COUNTERS_DB" and snap.device == "spine1"


# fixture, ports, reasons expected (substrings, in order)
SHAPES = [
    (T1, 4, []),
    (MOCK, 3, ["no COUNTERS hash for 30 of 90 queues"]),  # the ALL queues: queuestat prints N/A for them
    (CLI, 2, ["no COUNTERS hash for 2 of 4 ports in COUNTERS_PORT_NAME_MAP: Ethernet0, Ethernet20"]),
    (GNMI, 1, []),
    (
        TTY,
        0,
        ["'......' in place of lines of COUNTERS_PORT_NAME_MAP", "an odd number", "no COUNTERS hash for 9 of 9 ports"],
    ),
]


@pytest.mark.parametrize(("name", "ports", "reasons"), SHAPES)
def test_shapes(name: str, ports: int, reasons: list[str]) -> None:
    snap = parse_counters_db(read(name))
    assert len(snap.ports) == ports
    assert len(snap.unknown) == len(reasons)
    assert all(r in u for r, u in zip(reasons, snap.unknown, strict=True)), snap.unknown
    assert all(canonical(c) for p in snap.ports.values() for c in p.counters)


def test_pfc_watchdog_status_is_state() -> None:
    snap = parse_counters_db(read(MOCK))
    assert snap.ports["Ethernet0"].state == {"pfcwd3_status": "stormed"}
    assert snap.ports["Ethernet4"].state["pfcwd3_status"] == "operational"


def test_redis_cli_piped_lines_read_like_the_terminal_form() -> None:
    # redis-cli writes "N) \"value\"" on a terminal and the bare value when piped
    tty = read(TTY)
    piped = "\n".join(line.split(") ", 1)[1].strip('"') if ") " in line else line for line in tty.splitlines())
    a, b = parse_counters_db(tty), parse_counters_db(piped)
    assert a.unknown == b.unknown


def test_a_name_map_with_one_hash() -> None:
    doc = json.loads(read(T1))
    oid = doc["COUNTERS_PORT_NAME_MAP"]["value"]["Ethernet4"]
    text = (
        f'admin@sonic:~$ redis-cli -n 2 hgetall "COUNTERS_PORT_NAME_MAP"\n 1) "Ethernet4"\n 2) "{oid}"\n'
        f'admin@sonic:~$ redis-cli -n 2 hgetall "COUNTERS:{oid}"\n'
        + "".join(
            f' {2 * i + 1}) "{k}"\n {2 * i + 2}) "{v}"\n'
            for i, (k, v) in enumerate(doc[f"COUNTERS:{oid}"]["value"].items())
        )
    )
    snap = parse_counters_db(text)
    assert snap.unknown == []
    assert snap.ports["Ethernet4"].counters["rx_drop"] == 7


def test_a_sum_with_a_part_missing_is_none() -> None:
    doc = json.loads(read(MOCK))
    del doc["COUNTERS:oid:0x1000000000012"]["SAI_PORT_STAT_IF_IN_NON_UCAST_PKTS"]
    snap = parse_counters_db(json.dumps(doc))
    assert snap.ports["Ethernet0"].counters["rx_ok"] is None
    assert any("rx_ok: SAI_PORT_STAT_IF_IN_NON_UCAST_PKTS=None" in u for u in snap.unknown)


def test_a_value_that_is_not_a_count() -> None:
    doc = json.loads(read(MOCK))
    doc["COUNTERS:oid:0x1000000000012"]["SAI_PORT_STAT_IF_IN_ERRORS"] = "-1"
    snap = parse_counters_db(json.dumps(doc))
    assert snap.ports["Ethernet0"].counters["rx_err"] is None
    assert any("SAI_PORT_STAT_IF_IN_ERRORS: '-1' is not a count" in u for u in snap.unknown)


def test_queues_of_unknown_kind_keep_their_storms() -> None:
    doc = json.loads(read(MOCK))
    del doc["COUNTERS_QUEUE_TYPE_MAP"]
    counters = parse_counters_db(json.dumps(doc)).ports["Ethernet0"].counters
    assert "q3_uc_pkts" not in counters and counters["pfcwd3_storm_detected"] == 1 and counters["q3_ecn_marked"] == 19


def test_without_a_port_map_no_port_is_named() -> None:
    doc = json.loads(read(T1))
    del doc["COUNTERS_PORT_NAME_MAP"], doc["COUNTERS_QUEUE_NAME_MAP"]
    snap = parse_counters_db(json.dumps(doc))
    assert snap.ports == {}
    assert snap.unknown == ["no COUNTERS_PORT_NAME_MAP: port names unknown, port counters not read"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("38858", 38858),
        ("12.0", 12),
        ("-1", None),
        ("N/A", None),
        ("", None),
        (7, 7),
        (True, None),
        (None, None),
        ("1e400", None),
    ],
)
def test_count(text: object, value: int | None) -> None:
    assert count(text) == value


def test_every_mapped_name_is_canonical() -> None:
    assert all(canonical(name) for name, _ in PORT_STATS)
