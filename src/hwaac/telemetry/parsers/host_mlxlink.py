"""One port's ``mlxlink -d <dev> [-p <port>] -c`` (text or ``--json``) as a :class:`~hwaac.telemetry.model.Snapshot`.

:mod:`hwaac.health.parsers.mlxlink` reads the output; this module maps its "Physical Counters and BER Info" onto
canonical gauges (``pre_fec_ber``: Raw Physical BER, ``post_fec_ber``: Effective Physical BER, per lane where
printed) and counters (raw errors per lane, effective errors, link down and recovery counts), and the "Operational
Info" words onto the port's state. Layouts per mlxlink version: ``docs/telemetry/host-nic.md``.
"""

from __future__ import annotations

from hwaac.health.parsers.mlxlink import COUNTERS, MlxlinkResult, parse_mlxlink_json, parse_mlxlink_text
from hwaac.telemetry.model import Snapshot

# mlxlink key -> (canonical name, MlxlinkResult field); all in the counters section.
_COUNTERS = (
    ("Effective Physical Errors", "phy_effective_errors", "effective_physical_errors"),
    ("Symbol Errors", "rx_symbol_err", "symbol_errors"),
    ("Link Down Counter", "link_down_events", "link_down_counter"),
    ("Link Error Recovery Counter", "link_error_recovery", "link_error_recovery_counter"),
)
_GAUGES = (
    ("Raw Physical BER", "pre_fec_ber", "raw_physical_ber"),
    ("Effective Physical BER", "post_fec_ber", "effective_physical_ber"),
)
_LANES = (("Raw Physical Errors Per Lane", "phy_raw_errors"), ("Raw Physical BER Per Lane", "pre_fec_ber"))
_MAPPED = {key: canonical for key, canonical, *_ in (*_COUNTERS, *_GAUGES, *_LANES)}
# How a counters section ends (mstflint mlxlink_commander.cpp showBer, prepareBerInfo, prepareBerInfoEDR): with
# "Link Error Recovery Counter", except the 16nm-and-later Ethernet layout, which prints "Raw Physical BER" after it.
_RECOVERY, _RAW_BER = "Link Error Recovery Counter", "Raw Physical BER"
_STATE = (
    ("oper", "state"),
    ("phys", "physical_state"),
    ("speed", "speed"),
    ("fec", "fec"),
    ("recommendation", "recommendation"),
)


def _read(raw: str, version: str | None, device: str) -> tuple[MlxlinkResult, str | None]:
    """The health parser's result, and the key of the counters section where a text output stops short of the
    section's end (None: JSON, or the section ends as its layout does, or the output goes on after it)."""
    text = raw.lstrip()
    if text.startswith("{") or '"result"' in raw:
        return parse_mlxlink_json(raw, version=version, device=device), None
    result = parse_mlxlink_text(raw, version=version, device=device)
    keys = list(result.sections.get(COUNTERS, {}))
    tail = [line for line in raw.splitlines() if line.strip()][-1:]
    if not keys or not tail or tail[0].split(":", 1)[0].strip() != keys[-1]:
        return result, None
    ethernet_end = keys[-1] == _RAW_BER and _RECOVERY in keys and not (result.speed or "").startswith("IB-")
    return result, None if keys[-1] == _RECOVERY or ethernet_end else keys[-1]


def parse_mlxlink(raw: str, *, port: str, device: str = "", version: str | None = None) -> Snapshot:
    """Read ``mlxlink -c`` of one port, text or JSON (told apart by the output itself).

    Args:
        raw: the output as recorded.
        port: the port the command was run for, e.g. ``mlx5_0/1`` (mlxlink does not print it).
        device: the host, when the caller knows it.
        version: MFT version when known (else taken from "Tool Information").

    Returns:
        A snapshot with one port: BER gauges, error counters and state words. A value printed as ``N/A`` is None
        with a reason; so is the last value of a counters section that stops before its last key (a cut output).
        ``unknown`` also holds the health parser's reasons (no counters section, unreadable values, text that is
        not mlxlink's). The health parser's findings are judgement and are not carried over. Never raises.
    """
    result, cut_key = _read(raw, version, device)
    snap = Snapshot("mlxlink -c", device=device, version=result.version)
    snap.unknown.extend(result.unknown)
    printed = result.sections.get(COUNTERS, {})
    if not result.sections:
        return snap
    sample = snap.port(port)
    for word, attr in _STATE:
        if (value := getattr(result, attr)) is not None:
            sample.state[word] = value
    if result.width_lanes is not None:
        sample.state["width"] = f"{result.width_lanes}x"
    if result.status_opcode is not None:
        sample.state["status_opcode"] = str(result.status_opcode)
    for key, canonical, attr in _COUNTERS:
        if key in printed:
            sample.counters[canonical] = getattr(result, attr)
    for key, canonical, attr in _GAUGES:
        if key in printed:
            sample.gauges[canonical] = getattr(result, attr)
    for lane, count in enumerate(result.raw_physical_errors_per_lane):
        sample.counters[f"phy_raw_errors_lane{lane}"] = count
    for lane, ber in enumerate(result.raw_physical_ber_per_lane):
        sample.gauges[f"pre_fec_ber_lane{lane}"] = ber
    if cut_key is not None:
        snap.unknown.append(f"{port}: the counters section stops at {cut_key!r} (output cut?): its value is unknown")
        canonical = _MAPPED.get(cut_key, "")
        for values in (sample.counters, sample.gauges):
            for name in [n for n in values if canonical and (n == canonical or n.startswith(canonical + "_lane"))]:
                values[name] = None
    for key, value in printed.items():
        lanes = value if isinstance(value, list) else [value]
        if key in _MAPPED and "N/A" in (v.strip() for v in lanes):
            snap.unknown.append(f"{port}: {key} is N/A: unknown")
    return snap


__all__ = ["parse_mlxlink"]
