"""``show interfaces transceiver eeprom --dom`` (sonic-utilities ``scripts/sfpshow``) and ``sfputil show eeprom
-d`` as a :class:`~hwaac.telemetry.model.Snapshot` of DOM gauges per port and lane, for SFPs, SFF-8636 QSFPs and
CMIS QSFP-DD/OSFP modules. Port headers are found with ``str.find`` and monitor lines with one regular expression,
so indentation and the other EEPROM lines do not matter. ``docs/telemetry/sonic-qos.md``.
"""

from __future__ import annotations

import math
import re

from hwaac.telemetry.model import Snapshot

_MONITOR = re.compile(
    r"\n[ \t]*([RT]X\d*Power|TX\d*Bias|Temperature|Vcc|Identifier|Vendor (?:Name|PN|SN))"
    r"[ \t]*:[ \t]*([^\n]*)"
)
_HEADS = ("SFP EEPROM", "SFP detected", "SFP not detected")
_STATE = {"Identifier": "identifier", "Vendor Name": "vendor_name", "Vendor PN": "vendor_pn", "Vendor SN": "vendor_sn"}
_MODULE = {"Temperature": ("temperature_c", "C"), "Vcc": ("voltage_v", "Volts")}


def _headers(text: str) -> list[tuple[int, str, str]]:
    """``PORT: SFP EEPROM detected`` lines (``0/0 : ...``, ``PORT: SFP detected`` of 2017) as (position, port,
    the words after the colon), found by ``str.find`` since they are few."""
    found = []
    at = text.find(": SFP ")
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        head = text[at + 2 : end if end >= 0 else len(text)].strip()
        port = text[start:at].strip()
        if head.startswith(_HEADS) and port and ":" not in port:
            found.append((start, port, head))
        at = text.find(": SFP ", at + 6)
    return found


_SPECS: dict[str, tuple[str, str]] = {}


def _gauge(key: str) -> tuple[str, str]:
    """The canonical gauge and the printed unit of a monitor key: ``RX3Power`` -> ``rx_power_dbm_lane3``; an SFP's
    one lane (``RXPower``) is lane 1."""
    spec = _SPECS.get(key)
    if spec is None:
        if key in _MODULE:
            spec = _MODULE[key]
        elif key.endswith("Bias"):
            spec = f"tx_bias_ma_lane{key[2:-4] or 1}", "mA"
        else:
            spec = f"{'rx' if key[0] == 'R' else 'tx'}_power_dbm_lane{key[2:-5] or 1}", "dBm"
        _SPECS[key] = spec
    return spec


def _value(text: str, unit: str) -> float | None:
    """``-1.785dBm`` -> -1.785; None for ``-inf``, ``N/A``, ``Unknown``, a number without its unit (a line cut
    short) or anything else that is not a finite number in ``unit``."""
    if not text.endswith(unit):
        return None
    try:
        value = float(text[: -len(unit)])
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _why(text: str, unit: str) -> str:
    """Why a monitor value is None, in words."""
    if text.startswith("-inf"):
        return "no light or an unused lane"
    if not text.endswith(unit) and text[-1:].isdigit():
        return f"no unit {unit}: the line is cut short?"
    return "not a number"


def parse_transceiver_dom(raw: str, *, device: str = "", version: str | None = None) -> Snapshot:
    """Read ``show interfaces transceiver eeprom --dom`` for one port or all: gauges ``rx_power_dbm_lane{n}``,
    ``tx_power_dbm_lane{n}``, ``tx_bias_ma_lane{n}``, ``temperature_c``, ``voltage_v``; state ``eeprom`` (the
    header as printed: ``SFP EEPROM detected``, ``SFP EEPROM Not detected``...), ``identifier``, ``vendor_name``,
    ``vendor_pn``, ``vendor_sn``.

    ``unknown`` names: no port header, a value that is not a number (``-inf`` where a lane sees no light or is
    unused, ``Unknown``, ``N/A``: the gauge is None), lane values without the module's Vcc after them (output
    cut), modules printed without DOM (``--dom`` missing). Never raises."""
    snap = Snapshot("show interfaces transceiver eeprom --dom", device=device, version=version or "")
    if not isinstance(raw, str):
        snap.unknown.append(f"input is {type(raw).__name__}, not text")
        return snap
    text = "\n" + raw
    headers = _headers(text)
    sample = None
    orphans = 0
    following = 0  # index of the next header
    next_at = headers[0][0] if headers else len(text)
    for match in _MONITOR.finditer(text):
        if match.start() > next_at:
            while following < len(headers) and headers[following][0] < match.start():
                sample = snap.port(headers[following][1])
                sample.state["eeprom"] = headers[following][2]
                following += 1
            next_at = headers[following][0] if following < len(headers) else len(text)
        if sample is None:
            orphans += 1
            continue
        key, value = match[1], match[2].rstrip()
        if key in _STATE:
            sample.state[_STATE[key]] = value
            continue
        name, unit = _gauge(key)
        reading = sample.gauges[name] = _value(value, unit)
        if reading is None:
            snap.unknown.append(f"{sample.port} {key}: {value!r} ({_why(value, unit)})")
    for _, port, head in headers[following:]:
        snap.port(port).state["eeprom"] = head
    if orphans:
        snap.unknown.append(f"{orphans} monitor or identity lines before any 'PORT: SFP EEPROM detected' header")
    if not snap.ports:
        snap.unknown.append("no 'PORT: SFP EEPROM ...' header: not transceiver EEPROM output")
    no_dom = []
    for sample in snap.ports.values():
        if not sample.gauges:
            if sample.state["eeprom"].endswith("detected") and "ot detected" not in sample.state["eeprom"]:
                no_dom.append(sample.port)
        elif "voltage_v" not in sample.gauges and "temperature_c" not in sample.gauges:
            snap.unknown.append(f"{sample.port}: lane values without the module's temperature and Vcc (output cut?)")
    if no_dom:
        shown = ", ".join(no_dom[:5]) + (f" and {len(no_dom) - 5} more" if len(no_dom) > 5 else "")
        snap.unknown.append(f"no DOM values for {shown} (eeprom without --dom, or a module without DOM)")
    return snap


__all__ = ["parse_transceiver_dom"]
