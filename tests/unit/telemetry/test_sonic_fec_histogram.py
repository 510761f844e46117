"""show interfaces counters fec-histogram (tests/fixtures/telemetry/sonic-fec-histogram)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.telemetry.model import canonical
from hwaac.telemetry.parsers.sonic_fec_histogram import parse_fec_histogram

FIXTURES = Path(__file__).parents[2] / "fixtures" / "telemetry"
HIST = FIXTURES / "sonic-fec-histogram"


@pytest.mark.parametrize(
    ("name", "bins"),
    [
        ("fec_histogram_ethernet48.txt", {0: 78_924_019_231, 1: 118_358, 2: 279, 3: 0, 15: 0}),
        ("fec_histogram_mock_master.txt", {0: 1_000_000, 1: 900_000, 7: 300_000, 8: 0, 15: 0}),
    ],
)
def test_recorded_histograms(name: str, bins: dict[int, int]) -> None:
    snap = parse_fec_histogram((HIST / name).read_text(), port="Ethernet48", device="leaf01")
    assert snap.unknown == [] and list(snap.ports) == ["Ethernet48"] and snap.device == "leaf01"
    counters = snap.ports["Ethernet48"].counters
    assert len(counters) == 16 and all(canonical(n) for n in counters)
    assert {s: counters[f"fec_s{s}_codewords"] for s in bins} == bins


def test_a_cut_histogram_names_the_missing_bins_and_invents_none() -> None:
    raw = (HIST / "fec_histogram_ethernet48.txt").read_text()
    cut = raw.index("BIN1 ") + 30  # inside BIN1's count: "118358" cut to "11"
    snap = parse_fec_histogram(raw[:cut], port="Ethernet48")
    counters = snap.ports["Ethernet48"].counters
    assert counters == {"fec_s0_codewords": 78_924_019_231}
    assert any("BIN1" in u and "BIN15" in u for u in snap.unknown)


def test_an_unreadable_count_is_none_with_a_reason() -> None:
    raw = (
        (HIST / "fec_histogram_ethernet48.txt")
        .read_text()
        .replace("                                  279", "                                  N/A")
    )
    snap = parse_fec_histogram(raw, port="Ethernet48")
    assert snap.ports["Ethernet48"].counters["fec_s2_codewords"] is None
    assert any("BIN2" in u and "'N/A'" in u for u in snap.unknown)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "Port Ethernet999 not found in COUNTERS_PORT_NAME_MAP\nAborted!\n",
        "garbage \x00",
        (FIXTURES / "sonic-portstat" / "fec_stats_mock_master.txt").read_text(),
        (FIXTURES / "sonic-lldp-table" / "lldp_table_mgmt_neighbor.txt").read_text(),
    ],
)
def test_other_output_is_unknown_not_empty(raw: str) -> None:
    snap = parse_fec_histogram(raw, port="Ethernet0")
    assert snap.unknown and snap.ports == {}


@pytest.mark.parametrize("path", sorted(HIST.glob("*.txt")), ids=lambda p: p.name)
def test_never_raises_and_prefixes_invent_nothing(path: Path) -> None:
    raw = path.read_text()
    full = parse_fec_histogram(raw, port="Ethernet0").ports["Ethernet0"].counters
    for k in range(1, 8):
        snap = parse_fec_histogram(raw[: len(raw) * k // 8], port="Ethernet0")
        assert snap.unknown
        for name, value in snap.ports["Ethernet0"].counters.items() if snap.ports else ():
            assert value is None or value == full[name]
