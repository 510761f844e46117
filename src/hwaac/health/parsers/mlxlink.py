"""Link state, troubleshooting status and BER from ``mlxlink`` (MFT / mstflint).

The formats, sources and rules in full: ``docs/health-modules.md``, section "mlxlink".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from hwaac.health.parsers.base import MAX_LINE_REASONS, no_output
from hwaac.health.result import GradedResult

OPERATIONAL = "Operational Info"
TROUBLESHOOTING = "Troubleshooting Info"
COUNTERS = "Physical Counters and BER Info"
TOOL_INFO = "Tool Information"

# Gb/s per lane of the InfiniBand speed names mlxlink prints as "IB-<name>" (IBTA rates).
IB_LANE_GBPS = {"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR10": 10, "FDR": 14, "EDR": 25, "HDR": 50, "NDR": 100, "XDR": 200}

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_BER = re.compile(r"^\d+(?:\.\d+)?(?:[Ee][-+]?\d+)?$", re.ASCII)
_ETH_SPEED = re.compile(r"^(\d+(?:\.\d+)?)G(?:_(\d+)X)?$")  # "100G", "400G", "200G_4X"
_WIDTH = re.compile(r"^(\d+)x$")
_DASHES = re.compile(r"^-{3,}$")
# Keys printed as comma-separated per-lane lists (``setPrintVal(..., arrayValue=true)``).
LANE_KEYS = frozenset({"Raw Physical Errors Per Lane", "Raw Physical BER Per Lane"})

Value = str | list[str]


@dataclass
class MlxlinkResult(GradedResult):
    """One port as ``mlxlink`` reported it.

    Attributes:
        device: the device the caller queried (``mlx5_0``, ``/dev/mst/...``); "" when not given.
        sections: every section as read, key -> string or list of strings (e.g. "Module Info", "Supported Info").
        state: "Operational Info" State, e.g. ``Active``, ``Polling``, ``Disable``.
        physical_state: e.g. ``LinkUp`` (InfiniBand, and Ethernet on recent firmware) or ``ETH_AN_FSM_ENABLE``.
        speed: as printed, e.g. ``IB-NDR``, ``400G``, ``100G``.
        width_lanes: active lanes from Width (``4x`` -> 4).
        fec: the active FEC mode as printed.
        status_opcode: Troubleshooting Status Opcode (0: no issue).
        group_opcode: e.g. ``N/A``, ``PHY FW``.
        recommendation: mlxlink's recommendation, e.g. ``No issue was observed``.
        time_since_last_clear_min: minutes the counters below have been counting.
        effective_physical_errors: errors left after FEC.
        effective_physical_ber: bit error rate after FEC (a float; 15E-255 means none counted).
        raw_physical_ber: bit error rate before FEC.
        raw_physical_errors_per_lane: errors before FEC per lane (None for a lane printed as N/A).
        raw_physical_ber_per_lane: BER before FEC per lane, printed by newer mlxlink where the device supports it
            (``MlxlinkCommander::prepareBerInfo``); empty when not printed.
        symbol_errors: "Symbol Errors", printed for InfiniBand links by the 16nm-and-later layout.
        link_down_counter, link_error_recovery_counter: as counted by the port.
        firmware_version, mft_version: from "Tool Information".
    """

    tool: str = "mlxlink"
    device: str = ""
    sections: dict[str, dict[str, Value]] = field(default_factory=dict)
    state: str | None = None
    physical_state: str | None = None
    speed: str | None = None
    width_lanes: int | None = None
    fec: str | None = None
    status_opcode: int | None = None
    group_opcode: str | None = None
    recommendation: str | None = None
    time_since_last_clear_min: float | None = None
    effective_physical_errors: int | None = None
    effective_physical_ber: float | None = None
    raw_physical_ber: float | None = None
    raw_physical_errors_per_lane: list[int | None] = field(default_factory=list)
    raw_physical_ber_per_lane: list[float | None] = field(default_factory=list)
    symbol_errors: int | None = None
    link_down_counter: int | None = None
    link_error_recovery_counter: int | None = None
    firmware_version: str | None = None
    mft_version: str | None = None

    @property
    def speed_gbps(self) -> float | None:
        """Link speed in Gb/s: ``400G`` -> 400; ``IB-NDR`` with 4 lanes -> 400; None when not derivable."""
        if self.speed is None:
            return None
        eth = _ETH_SPEED.match(self.speed)
        if eth:
            return float(eth.group(1))
        name = self.speed.removeprefix("IB-")
        if name in IB_LANE_GBPS and self.speed.startswith("IB-") and self.width_lanes:
            return IB_LANE_GBPS[name] * self.width_lanes
        return None

    @property
    def is_active(self) -> bool:
        """State ``Active`` (the link carries traffic)."""
        return self.state == "Active"


def _clean(value: object) -> str | None:
    """A scalar value as a stripped string, None for N/A or empty."""
    if value is None:
        return None
    text = _ANSI.sub("", str(value)).strip()
    return None if text in ("", "N/A") else text


def _int(value: object, what: str, unknown: list[str]) -> int | None:
    text = _clean(value)
    if text is None:
        return None
    if text.isascii() and text.isdigit():
        return int(text)
    unknown.append(f"{what} is not a count: {text!r}")
    return None


def _float(value: object, what: str, unknown: list[str]) -> float | None:
    text = _clean(value)
    if text is None:
        return None
    if _BER.match(text):
        return float(text)
    unknown.append(f"{what} is not a number: {text!r}")
    return None


def _lanes(value: Value | None, unknown: list[str]) -> list[int | None]:
    if value is None:
        return []
    items = value if isinstance(value, list) else str(value).split(",")
    out: list[int | None] = []
    for item in items:
        text = _clean(item)
        if text is not None and not (text.isascii() and text.isdigit()):
            unknown.append(f"Raw Physical Errors Per Lane has a value that is not a count: {text!r}")
            text = None
        out.append(int(text) if text is not None else None)
    return out


def _ber_lanes(value: Value | None, unknown: list[str]) -> list[float | None]:
    if value is None:
        return []
    items = value if isinstance(value, list) else str(value).split(",")
    return [_float(item, "Raw Physical BER Per Lane", unknown) for item in items]


def _from_sections(
    result: MlxlinkResult, sections: dict[str, dict[str, Value]], *, counters_expected: bool
) -> MlxlinkResult:
    result.sections = sections
    unknown = result.unknown
    op = sections.get(OPERATIONAL)
    if op is None:
        unknown.append(f"no '{OPERATIONAL}' section: the link state is unknown")
    else:
        result.state = _clean(op.get("State"))
        result.physical_state = _clean(op.get("Physical state"))
        result.speed = _clean(op.get("Speed"))
        result.fec = _clean(op.get("FEC"))
        width = _WIDTH.match(_clean(op.get("Width")) or "")
        result.width_lanes = int(width.group(1)) if width else None
        if result.state is None:
            unknown.append(f"'{OPERATIONAL}' has no State")
    trouble = sections.get(TROUBLESHOOTING)
    if trouble is None:
        unknown.append(f"no '{TROUBLESHOOTING}' section: the status opcode is unknown")
    else:
        result.status_opcode = _int(trouble.get("Status Opcode"), "Status Opcode", unknown)
        result.group_opcode = _clean(trouble.get("Group Opcode"))
        result.recommendation = _clean(trouble.get("Recommendation"))
        if result.status_opcode is None:
            unknown.append(f"'{TROUBLESHOOTING}' has no Status Opcode")
    tool = sections.get(TOOL_INFO, {})
    result.firmware_version = _clean(tool.get("Firmware Version"))
    result.mft_version = _clean(tool.get("MFT Version"))
    if not result.version and result.mft_version:
        result.version = result.mft_version
    ber = sections.get(COUNTERS)
    if ber is None:
        if counters_expected:
            unknown.append(f"no '{COUNTERS}' section (run mlxlink with -c): BER and error counters are unknown")
    else:
        result.time_since_last_clear_min = _float(ber.get(key := "Time Since Last Clear [Min]"), key, unknown)
        result.effective_physical_errors = _int(ber.get(key := "Effective Physical Errors"), key, unknown)
        result.effective_physical_ber = _float(ber.get(key := "Effective Physical BER"), key, unknown)
        result.raw_physical_ber = _float(ber.get(key := "Raw Physical BER"), key, unknown)
        result.raw_physical_errors_per_lane = _lanes(ber.get("Raw Physical Errors Per Lane"), unknown)
        result.raw_physical_ber_per_lane = _ber_lanes(ber.get("Raw Physical BER Per Lane"), unknown)
        result.symbol_errors = _int(ber.get(key := "Symbol Errors"), key, unknown)
        result.link_down_counter = _int(ber.get(key := "Link Down Counter"), key, unknown)
        result.link_error_recovery_counter = _int(ber.get(key := "Link Error Recovery Counter"), key, unknown)
        for what, value in (
            ("Effective Physical Errors", result.effective_physical_errors),
            ("Effective Physical BER", result.effective_physical_ber),
            ("Raw Physical BER", result.raw_physical_ber),
        ):
            if value is None and result.is_active:
                unknown.append(f"'{COUNTERS}' has no usable {what}")
    return result


def parse_mlxlink_json(
    raw: str, *, version: str | None = None, device: str = "", counters_expected: bool = True
) -> MlxlinkResult:
    """Read ``mlxlink -d <dev> -c --json``.

    Args:
        raw: stdout as recorded (text before the first ``{``, such as an ``Error:`` line, is kept as an unknown
            reason and the JSON after it is still read).
        version: MFT version when known (else taken from "Tool Information").
        device: the device queried, used as the findings' subject.
        counters_expected: the command ran with ``-c``, so a missing BER section is an UNKNOWN.

    Returns:
        An :class:`MlxlinkResult` of facts, ungraded (:func:`hwaac.health.mlxlink_grading.grade_mlxlink` adds the
        findings). Raises nothing.

    Sources: mstflint ``mlxlink_cmd_print.cpp`` / ``mlxlink_record.h`` (JSON layout).
    """
    result = MlxlinkResult(version=version or "", device=device)
    if no_output(result, raw):
        return result
    text = raw.strip()
    start = text.find("{")
    if start < 0:
        result.unknown.append(f"no JSON object in the output: {text[:160]!r}")
        return result
    if start > 0:
        result.unknown.append(f"text before the JSON: {text[:start].strip()[:160]!r}")
    try:
        data = json.loads(text[start:])
    except json.JSONDecodeError as exc:
        result.unknown.append(f"output is not valid JSON ({exc.msg} at line {exc.lineno})")
        return result
    if not isinstance(data, dict):
        result.unknown.append("JSON root is not an object")
        return result
    status = data.get("status")
    if isinstance(status, dict) and str(status.get("code", "0")) not in ("0", ""):
        result.unknown.append(f"mlxlink status {status.get('code')}: {status.get('message', '')}")
    output = data.get("result", {}).get("output") if isinstance(data.get("result"), dict) else None
    if not isinstance(output, dict):
        result.unknown.append("no result.output object: not mlxlink --json output")
        return result
    sections: dict[str, dict[str, Value]] = {}
    for title, body in output.items():
        if not isinstance(body, dict):
            result.unknown.append(f"section {title!r} is not an object")
            continue
        section: dict[str, Value] = {}
        for key, value in body.items():
            if isinstance(value, dict) and isinstance(value.get("values"), list):
                section[key] = [str(v) for v in value["values"]]
            elif isinstance(value, list):
                section[key] = [str(v) for v in value]
            else:
                section[key] = str(value)
        sections[title] = section
    return _from_sections(result, sections, counters_expected=counters_expected)


def parse_mlxlink_text(
    raw: str, *, version: str | None = None, device: str = "", counters_expected: bool = True
) -> MlxlinkResult:
    """Read the text output of ``mlxlink -d <dev> [-m] -c`` into the same :class:`MlxlinkResult`.

    Per-lane values printed comma-separated ("Raw Physical Errors Per Lane : 0,0,0,0") become lists; ANSI colour
    codes (mlxlink colours values on a terminal) are removed. Arguments and result as
    :func:`parse_mlxlink_json`. Raises nothing.
    """
    result = MlxlinkResult(version=version or "", device=device)
    if no_output(result, raw):
        return result
    lines = [_ANSI.sub("", line).rstrip() for line in raw.splitlines()]
    sections: dict[str, dict[str, Value]] = {}
    current: dict[str, Value] | None = None
    bad = 0
    for i, line in enumerate(lines):
        text = line.strip()
        if not text or _DASHES.match(text):
            continue
        if i + 1 < len(lines) and _DASHES.match(lines[i + 1].strip()) and ":" not in text:
            current = sections.setdefault(text, {})
            continue
        key, sep, value = text.partition(":")
        if not sep or current is None:
            bad += 1
            if bad <= MAX_LINE_REASONS:
                result.unknown.append(f"line {i + 1} not understood: {text[:120]!r}")
            continue
        value = value.strip()
        current[key.strip()] = value.split(",") if key.strip() in LANE_KEYS else value
    if not sections:
        result.unknown.append("no mlxlink section found")
        return result
    return _from_sections(result, sections, counters_expected=counters_expected)
