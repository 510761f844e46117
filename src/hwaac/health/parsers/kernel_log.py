"""Parser of kernel logs (dmesg or journald) for GPU, NVSwitch and NIC faults: NVRM Xid, NVSwitch SXid, "fallen off
the bus", and "available PCIe bandwidth, limited by" lines.

The formats, sources and rules in full: ``docs/health-modules.md``, section "Kernel log lines".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypedDict, Unpack

from hwaac.health.result import GradedResult

# -- line prefixes ------------------------------------------------------------------------------------------------

_UPTIME = re.compile(r"^\[\s*(?P<up>\d+\.\d+)\](?:\s*\[\s*[TC]\d+\])?\s?(?P<msg>.*)$")
_CTIME = re.compile(
    r"^\[(?P<ts>(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})\]\s?(?P<msg>.*)$"
)
_ISO = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
_SHORT = r"[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}(?:\.\d+)?"
_JOURNAL = re.compile(rf"^(?P<ts>{_ISO}|{_SHORT})\s+(?P<host>\S+)\s+(?P<ident>[\w.@-]+(?:\[\d+\])?):\s?(?P<msg>.*)$")
_DMESG_ISO = re.compile(rf"^(?P<ts>{_ISO})\s(?P<msg>.*)$")
_IDENT_ONLY = re.compile(r"^kernel:\s(?P<msg>.*)$")
# dmesg -x/--decode (util-linux dmesg.c: facility and level names, padded to 6 and 6 characters): "kern  :warn  : "
_FACILITIES = "kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|res0|res1|res2|res3|local[0-7]"
_LEVELS = ("emerg", "alert", "crit", "err", "warn", "notice", "info", "debug")
_FACILITY_NAMES = _FACILITIES.replace("local[0-7]", "|".join(f"local{n}" for n in range(8))).split("|")
_DECODE = re.compile(rf"^(?P<fac>{_FACILITIES})\s*:(?P<lvl>{'|'.join(_LEVELS)})\s*:\s?(?P<rest>.*)$")
_RAW_PRIORITY = re.compile(r"^<(?P<pri>\d{1,3})>(?P<rest>.*)$")  # dmesg -r: facility * 8 + level
_JOURNAL_HEADER = re.compile(r"^-- (?:Logs begin|Journal begins|No entries|Boot |Reboot)")

# -- messages -----------------------------------------------------------------------------------------------------

_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)"
    r"(?: GPU-I:(?P<gi>\d+))?\):? (?P<xid>\d+),\s*"
    r"(?:pid=(?P<pid>'<unknown>'|<unknown>|\d+),\s*)?(?:name=(?P<name>[^,]*),\s*)?(?P<msg>.*)$"
)
_SXID = re.compile(
    r"(?P<switch>nvidia-nvswitch\d+): SXid \(PCI:(?P<pci>[0-9a-fA-F:.]+)\): (?P<code>\d+),\s*(?P<msg>.*)$"
)
_GPU_AT = re.compile(r"NVRM: GPU at (?:PCI:)?(?P<pci>[0-9a-fA-F:.]+): (?P<uuid>GPU-\S+)")
_SERIAL = re.compile(r"NVRM: GPU Board Serial Number: (?P<serial>\S+)")
_FALLEN_AT = re.compile(r"NVRM: GPU (?:at )?(?:PCI:)?(?P<pci>[0-9a-fA-F:.]+?):? (?:GPU )?has fallen off the bus")
_FALLEN_HEAD = re.compile(r"NVRM: The NVIDIA GPU (?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])")
_PCIE_LIMITED = re.compile(
    r"(?P<driver>[\w-]+) (?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])(?: [\w-]+)?: "
    r"(?P<avail>\d+(?:\.\d+)?) Gb/s available PCIe bandwidth, limited by (?P<speed>\d+(?:\.\d+)?) GT/s PCIe "
    r"x(?P<width>\d+) link at (?P<at>[0-9a-fA-F:.]+) \(capable of (?P<cap>\d+(?:\.\d+)?) Gb/s with "
    r"(?P<cspeed>\d+(?:\.\d+)?) GT/s PCIe x(?P<cwidth>\d+) link\)"
)
_CAUSED_BY = re.compile(r"caused by previous Xid (?P<cause>\d+)", re.IGNORECASE)
_RECOVERY_TO = re.compile(r"to (?P<to>0x[0-9a-fA-F]+ \([^)]*\)|\S+)\s*$")  # XID 154: "... from 0x0 (None) to 0x4 (...)"
# Text that only the messages above contain: seen without a full match, the line was cut or mangled.
_MARKERS = ("NVRM: Xid", ": SXid", "available PCIe bandwidth, limited by", "fallen off the bus")
_KNOWN_BARE = re.compile(r"^(?:NVRM: |nvidia-nvswitch\d+: |mlx5_core |pci |nvidia |nvidia-peermem |kernel: )")


@dataclass
class PcieLimit:
    """A ``limited by`` line: bandwidths in Gb/s, speeds in GT/s, widths in lanes; ``at`` is the limiting port."""

    driver: str
    available_gbps: float
    speed_gts: float
    width: int
    at: str
    capable_gbps: float
    capable_speed_gts: float
    capable_width: int


@dataclass
class KernelEvent:
    """One event from the log.

    Attributes:
        kind: ``xid``, ``sxid``, ``fallen_off_bus`` or ``pcie_limited``.
        line: the raw line (with continuation lines joined by newlines).
        time: wall-clock time when the format has one (dmesg -T, journald; aware when it carries a zone).
        time_text: the stamp as written ("" for none).
        uptime_s: seconds since boot (dmesg ``[  123.456]``).
        pci: the PCI address as written, lower case (``0000:52:00`` for XIDs, ``0000:b3:00.0`` elsewhere).
        code: the XID or SXid number (None for other kinds).
        message: the text after the number (XID/SXid) or the whole message.
        pid, process: the XID's ``pid=`` / ``name=`` (None when absent or ``<unknown>``).
        gpu_instance: MIG ``GPU-I:n``.
        caused_by: for a secondary XID, the XID its message names as the cause ("... caused by previous Xid 149").
        recovery_action: for XID 154, the action it changed to as written (``0x4 (Drain and Reset)``), None when
            the line names none.
        level: the printk level when the format carries one (``dmesg -x``'s ``warn``, ``dmesg -r``'s ``<4>``).
        facility: the syslog facility when the format carries one (``kern`` for printk; another name, such as
            ``user`` or ``syslog``, for a line a process wrote into the kernel log through ``/dev/kmsg``).
        switch: ``nvidia-nvswitchN`` for SXids.
        details: SXid ``Severity``/``Data`` lines that belong to this event.
        pcie: the :class:`PcieLimit` of a ``pcie_limited`` event.
    """

    kind: str
    line: str
    time: datetime | None = None
    time_text: str = ""
    uptime_s: float | None = None
    pci: str = ""
    code: int | None = None
    message: str = ""
    pid: int | None = None
    process: str | None = None
    gpu_instance: int | None = None
    caused_by: int | None = None
    recovery_action: str | None = None
    level: str = ""
    facility: str = ""
    switch: str = ""
    details: list[str] = field(default_factory=list)
    pcie: PcieLimit | None = None


@dataclass
class KernelLog(GradedResult):
    """A kernel log's GPU/NVSwitch/NIC events.

    Attributes:
        events: in log order.
        gpu_ids: PCI address -> ``{"uuid", "serial"}`` from ``NVRM: GPU at PCI:...: GPU-...`` and the board serial
            line after it (evidence for an RMA).
        lines_read: lines recognised as kernel-log lines; lines_unrecognised: the others (blank lines excluded).
        history: events before the ``since`` window (kept, never graded).
    """

    tool: str = "kernel log"
    events: list[KernelEvent] = field(default_factory=list)
    gpu_ids: dict[str, dict[str, str]] = field(default_factory=dict)
    lines_read: int = 0
    lines_unrecognised: int = 0
    history: list[KernelEvent] = field(default_factory=list)


@dataclass
class _Line:
    raw: str
    msg: str
    time: datetime | None
    time_text: str
    uptime: float | None
    continuation: bool = False
    level: str = ""
    facility: str = ""


def _short_time(text: str, year: int | None) -> datetime | None:
    if year is None:
        return None
    fmt = "%Y %b %d %H:%M:%S.%f" if "." in text else "%Y %b %d %H:%M:%S"
    try:
        return datetime.strptime(f"{year} {' '.join(text.split())}", fmt)
    except ValueError:
        return None


def _iso_time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _split(raw_line: str, year: int | None) -> _Line | None:
    """The message and time of one line, or None when the line does not look like a kernel-log line."""
    line = raw_line.rstrip()
    decoded = _DECODE.match(line) or _RAW_PRIORITY.match(line)
    if decoded:
        parsed = _split_stamp(raw_line, decoded.group("rest"), year) or _Line(
            raw_line, decoded.group("rest"), None, "", None
        )
        if "lvl" in decoded.groupdict():
            parsed.level, parsed.facility = decoded.group("lvl"), decoded.group("fac")
        else:
            priority = int(decoded.group("pri"))
            parsed.level = _LEVELS[priority % 8]
            parsed.facility = _FACILITY_NAMES[priority // 8] if priority // 8 < len(_FACILITY_NAMES) else ""
        return parsed
    return _split_stamp(raw_line, line, year)


def _split_stamp(raw_line: str, line: str, year: int | None) -> _Line | None:
    match = _CTIME.match(line)
    if match:
        try:
            when = datetime.strptime(" ".join(match.group("ts").split()), "%a %b %d %H:%M:%S %Y")
        except ValueError:
            when = None
        return _Line(raw_line, match.group("msg"), when, match.group("ts"), None)
    match = _UPTIME.match(line)
    if match:
        return _Line(raw_line, match.group("msg"), None, "", float(match.group("up")))
    match = _JOURNAL.match(line)
    if match:
        stamp = match.group("ts")
        when = _iso_time(stamp) if stamp[:4].isdigit() else _short_time(stamp, year)
        parsed = _Line(raw_line, match.group("msg"), when, stamp, None)
        inner = _UPTIME.match(parsed.msg)  # syslog keeps the dmesg stamp: "kernel: [21584690.529862] msg"
        if inner:
            parsed.msg, parsed.uptime = inner.group("msg"), float(inner.group("up"))
        return parsed
    match = _DMESG_ISO.match(line)
    if match:
        return _Line(raw_line, match.group("msg"), _iso_time(match.group("ts")), match.group("ts"), None)
    match = _IDENT_ONLY.match(line)
    if match:
        return _Line(raw_line, match.group("msg"), None, "", None)
    if _KNOWN_BARE.match(line):
        return _Line(raw_line, line, None, "", None)
    return None


def _lines(raw: str, year: int | None, result: KernelLog) -> list[_Line]:
    out: list[_Line] = []
    for raw_line in raw.splitlines():
        if not raw_line.strip() or _JOURNAL_HEADER.match(raw_line):
            continue
        parsed = _split(raw_line, year)
        # A continuation line of a multi-line printk is indented and carries its subsystem tag again.
        if parsed is None and raw_line[:1] in (" ", "\t") and out and _KNOWN_BARE.match(raw_line.strip()):
            prev = out[-1]
            parsed = _Line(raw_line, raw_line.strip(), prev.time, prev.time_text, prev.uptime, continuation=True)
        if parsed is None:
            result.lines_unrecognised += 1
            continue
        result.lines_read += 1
        out.append(parsed)
    return out


class _EventFields(TypedDict, total=False):
    """The :class:`KernelEvent` fields a parser sets from the message (the rest come from its line)."""

    pci: str
    code: int | None
    message: str
    pid: int | None
    process: str | None
    gpu_instance: int | None
    caused_by: int | None
    recovery_action: str | None
    switch: str
    details: list[str]
    pcie: PcieLimit | None


def _event(kind: str, line: _Line, **kw: Unpack[_EventFields]) -> KernelEvent:
    return KernelEvent(
        kind, line.raw.rstrip(), line.time, line.time_text, line.uptime, level=line.level, facility=line.facility, **kw
    )


def _pid(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


def _scan(lines: list[_Line], result: KernelLog) -> None:
    last_sxid: KernelEvent | None = None
    fallen_head: tuple[str, int, _Line] | None = None  # PCI, index of the line, the line
    last_gpu_at = ""
    for index, line in enumerate(lines):
        msg = line.msg
        gpu_at = _GPU_AT.search(msg)
        if gpu_at:
            last_gpu_at = gpu_at.group("pci").lower()
            result.gpu_ids.setdefault(last_gpu_at, {})["uuid"] = gpu_at.group("uuid")
        serial = _SERIAL.search(msg)
        if serial and last_gpu_at:
            result.gpu_ids.setdefault(last_gpu_at, {})["serial"] = serial.group("serial")
        xid = _XID.search(msg)
        if xid:
            name = xid.group("name")
            cause = _CAUSED_BY.search(xid.group("msg"))
            target = _RECOVERY_TO.search(xid.group("msg")) if xid.group("xid") == "154" else None
            result.events.append(
                _event(
                    "xid",
                    line,
                    pci=xid.group("pci").lower(),
                    code=int(xid.group("xid")),
                    message=xid.group("msg").strip(),
                    pid=_pid(xid.group("pid")),
                    process=None if name is None or "unknown" in name else name.strip(),
                    gpu_instance=int(xid.group("gi")) if xid.group("gi") else None,
                    caused_by=int(cause.group("cause")) if cause else None,
                    recovery_action=target.group("to") if target else None,
                )
            )
            continue
        sxid = _SXID.search(msg)
        if sxid:
            code, text = int(sxid.group("code")), sxid.group("msg").strip()
            pci = sxid.group("pci").lower()
            detail = re.match(r"(Severity \d|Data \{)", text)
            if detail and last_sxid is not None and (last_sxid.code, last_sxid.pci) == (code, pci):
                last_sxid.details.append(text)
                last_sxid.line += "\n" + line.raw.rstrip()
                continue
            last_sxid = _event("sxid", line, pci=pci, code=code, message=text, switch=sxid.group("switch"))
            result.events.append(last_sxid)
            continue
        fallen = _FALLEN_AT.search(msg)
        if fallen:
            result.events.append(_event("fallen_off_bus", line, pci=fallen.group("pci").lower(), message=msg))
            continue
        head = _FALLEN_HEAD.search(msg)
        if head:
            fallen_head = (head.group("pci").lower(), index, line)
            continue
        if "fallen off the bus" in msg and fallen_head is not None and index - fallen_head[1] <= 3:
            pci, start, first = fallen_head
            block = "\n".join(item.raw.rstrip() for item in lines[start : index + 1])
            text = " ".join(item.msg.removeprefix("NVRM: ") for item in lines[start : index + 1])
            event = _event("fallen_off_bus", first, pci=pci, message=text)
            event.line = block
            result.events.append(event)
            fallen_head = None
            continue
        limited = _PCIE_LIMITED.search(msg)
        if not limited:
            partial = next((m for m in _MARKERS if m in msg), None)
            if partial:  # the message we look for, but cut or mangled: the log is not complete
                result.unknown.append(f"line not readable although it holds {partial!r}: {line.raw.strip()!r}")
            continue
        result.events.append(
            _event(
                "pcie_limited",
                line,
                pci=limited.group("pci").lower(),
                message=msg,
                pcie=PcieLimit(
                    driver=limited.group("driver"),
                    available_gbps=float(limited.group("avail")),
                    speed_gts=float(limited.group("speed")),
                    width=int(limited.group("width")),
                    at=limited.group("at").lower(),
                    capable_gbps=float(limited.group("cap")),
                    capable_speed_gts=float(limited.group("cspeed")),
                    capable_width=int(limited.group("cwidth")),
                ),
            )
        )


def _is_history(event: KernelEvent, since: datetime | None, since_uptime_s: float | None) -> bool:
    if since is not None and event.time is not None:
        # a stamp without a zone (dmesg -T, short journald) is compared as the caller's zone, else UTC
        zone = since.tzinfo or UTC
        at = event.time if event.time.tzinfo else event.time.replace(tzinfo=zone)
        return at < (since if since.tzinfo else since.replace(tzinfo=UTC))
    if since_uptime_s is not None and event.uptime_s is not None:
        return event.uptime_s < since_uptime_s
    return False  # no time to compare: it counts (a fault of unknown age is not history)


def parse_kernel_log(
    raw: str,
    *,
    year: int | None = None,
    version: str | None = None,
    since: datetime | None = None,
    since_uptime_s: float | None = None,
) -> KernelLog:
    """Parse ``dmesg`` (any time format) or ``journalctl -k`` (short, short-precise, short-iso) output.

    Args:
        raw: the log text.
        year: the year of short/short-precise journald stamps (they carry none); without it their ``time`` is None.
        version: the driver version if known (the log's ``NVRM: loading ... Kernel Module <version>`` fills it).
        since / since_uptime_s: events before this time (wall clock, or seconds since boot for ``dmesg``'s
            ``[  123.456]`` stamps) are history: kept in ``history``, not in ``events``, and are never graded
            (Azure's azurehpc-health-checks counts XIDs of the last 2 h only). An event whose time cannot be
            compared counts.

    Returns:
        :class:`KernelLog` of events, ungraded (see the module docstring). Never raises.
    """
    result = KernelLog(version=version or "")
    if not raw.strip():
        result.unknown.append("empty log")
        return result
    lines = _lines(raw, year, result)
    if result.lines_read == 0:
        result.unknown.append(f"none of the {result.lines_unrecognised} line(s) looks like a kernel log line")
        return result
    if result.lines_unrecognised > result.lines_read:
        result.unknown.append(
            f"{result.lines_unrecognised} of {result.lines_read + result.lines_unrecognised} lines are not "
            "kernel log lines: not a kernel log, or a mangled one"
        )
    if not result.version:
        loaded = re.search(r"NVRM: loading NVIDIA UNIX .*?Kernel Module (?:for \w+ )?\s*(\d+\.\d+(?:\.\d+)?)", raw)
        result.version = loaded.group(1) if loaded else ""
    _scan(lines, result)
    if since is not None or since_uptime_s is not None:
        result.history = [e for e in result.events if _is_history(e, since, since_uptime_s)]
        result.events = [e for e in result.events if not _is_history(e, since, since_uptime_s)]
    return result


__all__ = ["KernelEvent", "KernelLog", "PcieLimit", "parse_kernel_log"]
