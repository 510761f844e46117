"""mlxlink text and --json output (tests/fixtures/health/mlxlink): link state, troubleshooting opcode, BER."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hwaac.health.mlxlink_grading import read_mlxlink_json, read_mlxlink_text
from hwaac.health.parsers.mlxlink import COUNTERS
from hwaac.health.result import Action, Status

FIXTURES = Path(__file__).parents[2] / "fixtures" / "health"
BF3 = FIXTURES / "mlxlink" / "mft-4.30.1-bluefield3"
TEXT = BF3 / "mlxlink-m-c.txt"
JSON = BF3 / "mlxlink-c-json-derived.json"
OPCODE25 = BF3 / "mlxlink-c-json-opcode25-derived.json"

FIELDS = (
    "state",
    "physical_state",
    "speed",
    "width_lanes",
    "fec",
    "status_opcode",
    "group_opcode",
    "recommendation",
    "time_since_last_clear_min",
    "effective_physical_errors",
    "effective_physical_ber",
    "raw_physical_ber",
    "raw_physical_errors_per_lane",
    "link_down_counter",
    "link_error_recovery_counter",
    "firmware_version",
    "mft_version",
)


def test_recorded_text_output() -> None:
    result = read_mlxlink_text(TEXT.read_text(), device="mlx5_0")
    assert result.status() == Status.PASS and not result.unknown and not result.findings
    assert (result.state, result.physical_state, result.speed, result.width_lanes) == ("Active", "LinkUp", "100G", 4)
    assert result.speed_gbps == 100.0 and result.fec == "Standard RS-FEC - RS(528,514)"
    assert (result.status_opcode, result.group_opcode, result.recommendation) == (0, None, "No issue was observed")
    # "15E-255" is what mlxlink prints when it counted no error: a float far below any BER threshold
    assert result.effective_physical_ber == pytest.approx(15e-255) and result.raw_physical_ber == pytest.approx(15e-255)
    assert result.effective_physical_errors == 0 and result.raw_physical_errors_per_lane == [0, 0, 0, 0]
    assert (result.link_down_counter, result.link_error_recovery_counter) == (0, 0)
    assert result.time_since_last_clear_min == 25074.8
    assert (result.firmware_version, result.mft_version) == ("32.43.2402", "mft 4.30.1-8")
    assert result.version == "mft 4.30.1-8"  # taken from "Tool Information" when the caller gave none
    assert result.sections["Module Info"]["Identifier"] == "QSFP28"  # other sections are kept as read


def test_json_gives_the_same_result_as_the_text() -> None:
    from_json = read_mlxlink_json(JSON.read_text(), device="mlx5_0")
    from_text = read_mlxlink_text(TEXT.read_text(), device="mlx5_0")
    assert from_json.status() == Status.PASS and not from_json.unknown
    assert {f: getattr(from_json, f) for f in FIELDS} == {f: getattr(from_text, f) for f in FIELDS}


def test_nonzero_status_opcode_warns_with_the_recommendation() -> None:
    result = read_mlxlink_json(OPCODE25.read_text(), device="mlx5_0")
    assert result.status() == Status.WARN
    [finding] = result.findings
    assert (finding.code, finding.status, finding.subject, finding.action) == (
        "NIC_LINK_TROUBLESHOOTING",
        Status.WARN,
        "mlx5_0",
        Action.CHECK_LINK,
    )
    assert "opcode 25" in finding.message and "Cable speed not enabled" in finding.message
    assert "Recommendation : Cable speed not enabled" in finding.evidence


def _mutated(**operational: str) -> str:
    doc = json.loads(JSON.read_text())
    doc["result"]["output"]["Operational Info"].update(operational)
    return json.dumps(doc)


def test_link_not_active_fails() -> None:
    # the derived JSON with the link state changed, written here: mlxlink prints e.g. "Polling" for a link
    # that does not come up
    result = read_mlxlink_json(_mutated(State="Polling", **{"Physical state": "Polling"}), device="mlx5_3")
    assert result.status() == Status.FAIL
    assert [(f.code, f.subject, f.action) for f in result.findings] == [("NIC_LINK_DOWN", "mlx5_3", Action.CHECK_LINK)]
    assert "State : Polling" in result.findings[0].evidence


def test_infiniband_speed_in_gbps() -> None:
    result = read_mlxlink_json(_mutated(Speed="IB-NDR"))
    assert result.speed == "IB-NDR" and result.speed_gbps == 400.0  # 100 Gb/s per lane x 4 lanes
    assert read_mlxlink_json(_mutated(Speed="NVLink-XDR")).speed_gbps is None


def test_missing_counters_section_is_unknown_unless_not_asked_for() -> None:
    doc = json.loads(JSON.read_text())
    del doc["result"]["output"][COUNTERS]
    raw = json.dumps(doc)
    assert read_mlxlink_json(raw).status() == Status.UNKNOWN
    assert read_mlxlink_json(raw, counters_expected=False).status() == Status.PASS


def test_older_string_lane_list_and_bad_ber() -> None:
    doc = json.loads(JSON.read_text())
    ber = doc["result"]["output"][COUNTERS]
    ber["Raw Physical Errors Per Lane"] = "3946476397,5120336064,N/A,3026261414"  # plain string, older mstflint
    ber["Raw Physical BER"] = "2E-9"
    result = read_mlxlink_json(json.dumps(doc))
    assert result.raw_physical_errors_per_lane == [3946476397, 5120336064, None, 3026261414]
    assert result.raw_physical_ber == pytest.approx(2e-9) and result.status() == Status.PASS
    ber["Effective Physical BER"] = "garbage"
    assert read_mlxlink_json(json.dumps(doc)).status() == Status.UNKNOWN


def test_error_text_before_json_and_error_status() -> None:
    raw = "-E- Failed to identify the device\n" + JSON.read_text()
    result = read_mlxlink_json(raw)
    assert result.status() == Status.UNKNOWN and "text before the JSON" in result.unknown[0]
    doc = json.loads(JSON.read_text())
    doc["status"] = {"code": 1, "message": "Failed to send access register"}
    assert read_mlxlink_json(json.dumps(doc)).status() == Status.UNKNOWN


def test_ansi_colours_in_text_are_removed() -> None:
    raw = TEXT.read_text().replace("15E-255", "\x1b[32m15E-255\x1b[0m")
    assert read_mlxlink_text(raw).effective_physical_ber == pytest.approx(15e-255)


OTHER_TOOLS = [
    (FIXTURES / "ibstat" / "rdma-core-47" / "h100-ib-ndr-8hca-active.txt").read_text(),
    (FIXTURES / "ethtool" / "mlx5-connectx4-kernel-4.15" / "ethtool-S.txt").read_text(),
    '{"result": {"output": "nope"}}',
    "[1, 2, 3]",
    TEXT.read_text().replace("Link Down Counter                  : 0", "Link Down Counter                  : \u00b2"),
]


def _truncated(path: Path) -> str:
    text = path.read_text()
    return text[: len(text) // 2]


@pytest.mark.parametrize("parser", [read_mlxlink_json, read_mlxlink_text])
@pytest.mark.parametrize(
    "raw",
    [
        "",
        " \n",
        "garbage \x00 ### ¯\\_(ツ)_/¯",
        _truncated(TEXT),
        _truncated(JSON),
        _truncated(OPCODE25),
        *OTHER_TOOLS,
    ],
)
def test_never_passes_bad_input(parser, raw: str) -> None:  # type: ignore[no-untyped-def]
    assert parser(raw).status() != Status.PASS


HDR = FIXTURES / "mlxlink" / "mft-4.24.0-connectx6-hdr"


def test_infiniband_layout_with_symbol_errors_and_one_noisy_lane() -> None:
    result = read_mlxlink_text((HDR / "mlxlink-c-hdr-lane0_derived.txt").read_text(), device="mlx5_3")
    assert (result.state, result.speed, result.width_lanes, result.speed_gbps) == ("Active", "IB-HDR", 2, 100.0)
    assert result.fec == "RS-FEC - (544,514) + PLR" and result.mft_version == "mft 4.24.0-72"
    assert result.symbol_errors == 0 and result.effective_physical_errors == 0
    assert result.raw_physical_errors_per_lane == [32379149, 224947]  # lane 0 ~144 times lane 1
    assert result.raw_physical_ber == pytest.approx(1e-7) and result.effective_physical_ber == pytest.approx(15e-255)
    assert result.link_error_recovery_counter == 0 and result.link_down_counter is None  # grep dropped its line
    assert result.raw_physical_ber_per_lane == [] and not result.unknown


def test_raw_ber_per_lane_where_mlxlink_prints_it() -> None:
    # Written for this test (no recorded output prints it): the key and its comma-separated "<coef>E-<mag>" lane
    # values follow MlxlinkCommander::prepareBerInfo ("Raw Physical BER Per Lane", arrayValue=true).
    raw = TEXT.read_text() + "Raw Physical BER Per Lane          : 1E-8,2E-9,N/A,x\n"
    result = read_mlxlink_text(raw)
    assert result.raw_physical_ber_per_lane == [pytest.approx(1e-8), pytest.approx(2e-9), None, None]
    assert any("Raw Physical BER Per Lane is not a number: 'x'" in u for u in result.unknown)
    doc = json.loads(JSON.read_text())
    doc["result"]["output"][COUNTERS]["Raw Physical BER Per Lane"] = {"values": ["3E-8", "4E-8", "5E-8", "6E-8"]}
    assert read_mlxlink_json(json.dumps(doc)).raw_physical_ber_per_lane == pytest.approx([3e-8, 4e-8, 5e-8, 6e-8])


def test_an_option_the_device_refuses_leaves_the_counters_unknown() -> None:
    result = read_mlxlink_text((HDR / "mlxlink-ber-monitor-unsupported.txt").read_text())
    assert result.state == "Active" and result.status() == Status.UNKNOWN
    assert any("-E-" in u for u in result.unknown) and any("run mlxlink with -c" in u for u in result.unknown)
