"""mlxlink -c (text and --json) read into a port snapshot (fixtures shared with node health:
tests/fixtures/health/mlxlink)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hwaac.telemetry.model import canonical
from hwaac.telemetry.parsers.host_mlxlink import parse_mlxlink

HEALTH = Path(__file__).parents[2] / "fixtures" / "health"
BF3 = HEALTH / "mlxlink" / "mft-4.30.1-bluefield3"
HDR = HEALTH / "mlxlink" / "mft-4.24.0-connectx6-hdr"
LANE0 = HDR / "mlxlink-c-hdr-lane0_derived.txt"
NONE_COUNTED = 15e-255  # what mlxlink prints when it counted no error at all


@pytest.mark.parametrize(
    ("path", "counters", "gauges", "state"),
    [
        # ConnectX-6 InfiniBand HDR 2x (MFT 4.24, amBER 2.13): clean after FEC, lane 0 noisy before it
        (
            LANE0,
            {
                "phy_raw_errors_lane0": 32379149,
                "phy_raw_errors_lane1": 224947,
                "phy_effective_errors": 0,
                "rx_symbol_err": 0,
                "link_error_recovery": 0,
            },
            {"pre_fec_ber": 1e-7, "post_fec_ber": NONE_COUNTED},
            {"oper": "Active", "phys": "LinkUp", "speed": "IB-HDR", "width": "2x", "fec": "RS-FEC - (544,514) + PLR"},
        ),
        # BlueField-3 100G Ethernet (MFT 4.30.1, amBER 3.6): no error counted at all
        (
            BF3 / "mlxlink-m-c.txt",
            {
                "phy_raw_errors_lane0": 0,
                "phy_raw_errors_lane3": 0,
                "phy_effective_errors": 0,
                "link_down_events": 0,
                "link_error_recovery": 0,
            },
            {"pre_fec_ber": NONE_COUNTED, "post_fec_ber": NONE_COUNTED},
            {"oper": "Active", "speed": "100G", "width": "4x", "status_opcode": "0"},
        ),
        (
            BF3 / "mlxlink-c-json-opcode25-derived.json",
            {"link_down_events": 0},
            {"pre_fec_ber": NONE_COUNTED},
            {"status_opcode": "25", "recommendation": "Cable speed not enabled"},
        ),
    ],
)
def test_recorded_outputs(
    path: Path, counters: dict[str, int], gauges: dict[str, float], state: dict[str, str]
) -> None:
    snap = parse_mlxlink(path.read_text(), port="mlx5_3/1", device="gpu01")
    assert snap.unknown == [] and list(snap.ports) == ["mlx5_3/1"] and snap.device == "gpu01"
    sample = snap.ports["mlx5_3/1"]
    assert all(canonical(name) for name in (*sample.counters, *sample.gauges))
    assert {name: sample.counters.get(name) for name in counters} == counters
    assert {name: sample.gauges.get(name) for name in gauges} == pytest.approx(gauges)
    assert {word: sample.state.get(word) for word in state} == state


def test_versions_differ_in_what_they_print() -> None:
    hdr = parse_mlxlink(LANE0.read_text(), port="p").ports["p"]
    eth = parse_mlxlink((BF3 / "mlxlink-m-c.txt").read_text(), port="p").ports["p"]
    assert "rx_symbol_err" in hdr.counters and "rx_symbol_err" not in eth.counters  # Symbol Errors: InfiniBand only
    assert "link_down_events" not in hdr.counters  # the recording's grep dropped the line: absent, not 0
    assert parse_mlxlink(LANE0.read_text(), port="p").version == "mft 4.24.0-72"


def test_json_reads_as_the_text_does() -> None:
    text = parse_mlxlink((BF3 / "mlxlink-m-c.txt").read_text(), port="p")
    from_json = parse_mlxlink((BF3 / "mlxlink-c-json-derived.json").read_text(), port="p")
    assert from_json.unknown == [] and from_json.ports == text.ports


def test_raw_ber_per_lane_becomes_lane_gauges() -> None:
    doc = json.loads((BF3 / "mlxlink-c-json-derived.json").read_text())
    doc["result"]["output"]["Physical Counters and BER Info"]["Raw Physical BER Per Lane"] = {
        "values": ["1E-8", "2E-9", "N/A", "4E-8"]
    }  # written for this test: no recorded output prints it
    snap = parse_mlxlink(json.dumps(doc), port="p")
    gauges = snap.ports["p"].gauges
    assert [gauges[f"pre_fec_ber_lane{n}"] for n in range(4)] == [
        pytest.approx(1e-8),
        pytest.approx(2e-9),
        None,
        pytest.approx(4e-8),
    ]
    assert any("Raw Physical BER Per Lane is N/A" in reason for reason in snap.unknown)


def test_na_is_none_with_a_reason() -> None:
    raw = (
        (BF3 / "mlxlink-m-c.txt")
        .read_text()
        .replace("Link Down Counter                  : 0", "Link Down Counter                  : N/A")
    )
    snap = parse_mlxlink(raw, port="mlx5_0/1")
    assert snap.ports["mlx5_0/1"].counters["link_down_events"] is None
    assert "mlx5_0/1: Link Down Counter is N/A: unknown" in snap.unknown


def test_no_counters_section_keeps_the_state_and_is_unknown() -> None:
    snap = parse_mlxlink((HDR / "mlxlink-ber-monitor-unsupported.txt").read_text(), port="p")
    sample = snap.ports["p"]
    assert sample.state["oper"] == "Active" and sample.counters == {} and sample.gauges == {}
    assert any("-c" in reason for reason in snap.unknown) and any("-E-" in reason for reason in snap.unknown)


def test_a_cut_inside_the_lane_list_is_unknown_not_a_smaller_count() -> None:
    raw = LANE0.read_text()
    cut = raw.index("32379149,22") + len("32379149,22")  # lane 1 was 224947
    snap = parse_mlxlink(raw[:cut], port="p")
    counters = snap.ports["p"].counters
    assert counters["phy_raw_errors_lane0"] is None and counters["phy_raw_errors_lane1"] is None
    assert counters["phy_effective_errors"] == 0  # printed whole before the cut
    assert any("stops at 'Raw Physical Errors Per Lane'" in reason for reason in snap.unknown)


OTHER_OUTPUTS = [
    (HEALTH / "ethtool" / "mlnx-ofed-100g-lane3-errors" / "ethtool-S.txt").read_text(),
    (HEALTH / "rdma-statistic" / "mlnx-iproute2-4link.txt").read_text(),
    (HEALTH / "ibstat" / "rdma-core-47" / "h100-ib-ndr-8hca-active.txt").read_text(),
    (HDR / "mlxlink-c-grep.txt").read_text(),  # grep-filtered: no section underlines left
    '{"result": {"output": "nope"}}',
    "-E- Failed to open device: mlx5_9\n",
]


@pytest.mark.parametrize("raw", ["", " \n", "garbage \x00 ¯\\_(ツ)_/¯", *OTHER_OUTPUTS])
def test_empty_garbage_and_other_outputs_are_unknown_without_port_values(raw: str) -> None:
    snap = parse_mlxlink(raw, port="p")
    assert snap.unknown and all(not s.counters and not s.gauges for s in snap.ports.values())


FIXTURES = sorted(p for p in (HEALTH / "mlxlink").glob("*/*") if p.name != "README.md")


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_never_raises_and_no_cut_invents_a_value(path: Path) -> None:
    raw = path.read_text()
    full = parse_mlxlink(raw, port="p").ports.get("p")
    last_line = raw.rstrip("\n").rfind("\n") + 1
    for cut in range(1, len(raw)):  # every cut point: these outputs are small
        snap = parse_mlxlink(raw[:cut], port="p")
        for sample in snap.ports.values():
            assert full is not None
            changed = [
                name
                for name, value in (*sample.counters.items(), *sample.gauges.items())
                if value is not None and value != {**full.counters, **full.gauges}[name]
            ]
            # only a cut inside the very last value of a complete section cannot be seen (docs/telemetry/host-nic.md)
            assert not changed or cut > last_line, (cut, changed)
