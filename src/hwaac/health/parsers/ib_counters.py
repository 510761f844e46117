"""InfiniBand port counters from sysfs, read by :func:`parse_ib_counters`: the output of ``grep -H .
/sys/class/infiniband/*/ports/*/counters/* /sys/class/infiniband/*/ports/*/hw_counters/*`` (``path:value`` lines).

Legacy PortCounters fields are fixed-width and *stop at all ones* instead of wrapping (InfiniBand Architecture
Specification Vol. 1, chapter 16.1, PortCounters; kernel ``drivers/infiniband/core/sysfs.c`` ``PORT_PMA_ATTR``):
a counter at its maximum is unknown, ``None``, and listed in :attr:`IbCountersResult.saturated` (gpud#943); a
value that is not a count is listed in :attr:`IbCountersResult.unreadable`. Facts only:
:func:`hwaac.health.checks_nic.check_ib_counters` judges them. Raises nothing on bad tool output.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from operator import itemgetter

from hwaac.health.parsers.base import LineReasons, no_output, text_lines
from hwaac.health.result import Status, ToolResult

# Width in bits of each legacy PortCounters field (IBA Vol. 1 §16.1 PortCounters; kernel sysfs.c PORT_PMA_ATTR
# width argument). These counters stop at 2**bits - 1 instead of wrapping, so that value is a floor, not a count.
LEGACY_COUNTER_BITS: dict[str, int] = {
    "symbol_error": 16,
    "link_error_recovery": 8,
    "link_downed": 8,
    "port_rcv_errors": 16,
    "port_rcv_remote_physical_errors": 16,
    "port_rcv_switch_relay_errors": 16,
    "port_xmit_discards": 16,
    "port_xmit_constraint_errors": 8,
    "port_rcv_constraint_errors": 8,
    "local_link_integrity_errors": 4,
    "excessive_buffer_overrun_errors": 4,
    "VL15_dropped": 16,
    "port_xmit_wait": 32,
}
# 32 bits in the legacy table, 64 bits when the PMA has extended counters (sysfs.c get_counter_table picks
# pma_group_ext); the sysfs file does not say which, so only an exact 2**32 - 1 is taken as saturated.
DATA_COUNTERS_32_OR_64 = ("port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets")
# hw_counters/lifespan is the driver's cache age in milliseconds, not a counter (sysfs.c show_stats_lifespan).
NOT_COUNTERS = frozenset({"lifespan"})
LEGACY_FILES = frozenset(LEGACY_COUNTER_BITS) | frozenset(DATA_COUNTERS_32_OR_64)

# Counters whose growth is a link or transport fault (the IBA PortCounters error set and the
# NVSentinel nic-health-monitor defaults). Data, packet and port_xmit_wait (congestion) counters are not faults.
ERROR_COUNTERS = (
    "symbol_error",
    "link_error_recovery",
    "link_downed",
    "port_rcv_errors",
    "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors",
    "port_xmit_discards",
    "port_xmit_constraint_errors",
    "port_rcv_constraint_errors",
    "local_link_integrity_errors",
    "excessive_buffer_overrun_errors",
    "VL15_dropped",
    "rnr_nak_retry_err",
    "local_ack_timeout_err",
    "out_of_sequence",
    "packet_seq_err",
    "out_of_buffer",
    "roce_slow_restart",
)

_COUNTER_LINE = re.compile(
    r"^(?P<path>(?:.*/)?infiniband/(?P<dev>[^/\s]+)/ports/(?P<port>\d+)/(?P<group>counters|hw_counters)/"
    r"(?P<name>[^/:\s]+)):(?P<value>.*)$"
)
_GREP_ERROR = re.compile(r"^grep: (?P<path>.+?): (?P<error>[^:]+)$")

PortKey = tuple[str, int]


Fields = tuple[str, str, str, str, str]  # device, port, group, counter name, value text
_GROUPS = frozenset({"counters", "hw_counters"})


def _fields(match: re.Match[str] | None) -> Fields | None:
    return match.group("dev", "port", "group", "name", "value") if match else None  # type: ignore[return-value]


def _counter_line(text: str) -> Fields | None:
    """What :data:`_COUNTER_LINE` captures, from plain string splits where the line is the usual ``.../infiniband/
    DEV/ports/N/GROUP/NAME:VALUE``: the regex's ``(?:.*/)?`` prefix backtracks on every one of the ~700 lines of a
    node, which made this the slowest parser of a burn-in."""
    at = text.find("infiniband/")
    if at < 0:
        return None
    if not at or text[at - 1] == "/":
        path, sep, value = text[at + len("infiniband/") :].partition(":")  # the prefix may hold colons (PCI paths)
        tail = path.split("/")
        if (
            sep
            and len(tail) == 5
            and tail[1] == "ports"
            and tail[2].isdigit()
            and tail[3] in _GROUPS
            and tail[0]
            and tail[4]
        ):
            both = tail[0] + tail[4]
            if both.split() == [both]:  # no whitespace in the device or counter name
                return tail[0], tail[2], tail[3], tail[4], value
    return _fields(_COUNTER_LINE.match(text))  # anything unusual: the full pattern decides


@dataclass
class IbCountersResult(ToolResult):
    """Port counters read from sysfs.

    Attributes:
        ports: per ``(device, port)`` the counters by file name (``counters/`` and ``hw_counters/`` together; a
            name present in both groups is kept as ``hw_counters/<name>`` for the second). A value is an int
            (events, or for ``port_xmit_data``/``port_rcv_data`` 4-octet words) or None when it cannot be trusted.
        none_reasons: per ``(device, port, name)`` why the value is None (saturated, unreadable).
        saturated: per port, in output order, the counters at the maximum of their field width: name -> the line
            as recorded (the evidence).
        unreadable: per port, in output order, the counters whose value is not a count (``N/A (no PMA)``) or whose
            file grep could not read: name -> the line as recorded (``path:value`` or ``grep: path: error``).
    """

    tool: str = "sysfs infiniband counters"
    ports: dict[PortKey, dict[str, int | None]] = field(default_factory=dict)
    none_reasons: dict[tuple[str, int, str], str] = field(default_factory=dict)
    saturated: dict[PortKey, dict[str, str]] = field(default_factory=dict)
    unreadable: dict[PortKey, dict[str, str]] = field(default_factory=dict)

    def counters(self, device: str, port: int = 1) -> dict[str, int | None]:
        """The counters of one port ({} when that port was not read)."""
        return self.ports.get((device, port), {})

    def status(self) -> Status:
        """UNKNOWN also when a counter is saturated or unreadable: a value that cannot be trusted is never healthy."""
        worst = super().status()
        return max(worst, Status.UNKNOWN) if self.saturated or self.unreadable else worst


def _saturation_bits(name: str, value: int) -> int | None:
    bits = LEGACY_COUNTER_BITS.get(name)
    if bits is not None and value == 2**bits - 1:
        return bits
    if name in DATA_COUNTERS_32_OR_64 and value == 2**32 - 1:
        return 32
    return None


def parse_ib_counters(raw: str, *, version: str | None = None) -> IbCountersResult:
    """Read ``grep -H . /sys/class/infiniband/*/ports/*/counters/* /sys/class/infiniband/*/ports/*/hw_counters/*``.

    Args:
        raw: the command's stdout and stderr together (``path:value`` lines; ``grep: path: error`` lines for files
            the kernel refused to read). Paths under ``/sys/devices/.../infiniband/`` are accepted too.
        version: kernel version when known.

    Returns:
        An :class:`IbCountersResult`: the counters, and as facts the ports' ``saturated`` counters (at their
        maximum) and ``unreadable`` ones (values that are not numbers, ``N/A (no PMA)``, or files grep could not
        read), each with its line. ``unknown`` lists lines that are not counter lines, ports cut short and empty
        input. No findings: :func:`hwaac.health.checks_nic.check_ib_counters` judges. Raises nothing.

    Sources: kernel ``drivers/infiniband/core/sysfs.c`` (attribute names, widths, ``N/A (no PMA)``), gpud#943
    (saturated values), node_exporter#966 (``N/A (no PMA)``).
    """
    result = IbCountersResult(version=version or "")
    if no_output(result, raw):
        return result
    seen_legacy: set[PortKey] = set()
    if not _read_plain(raw, result, seen_legacy):
        result.ports.clear()
        seen_legacy.clear()
        _read_lines(raw, result, seen_legacy)
    # The kernel creates every PortCounters file of the table it picked (sysfs.c pma_attrs / pma_attrs_ext) and grep
    # prints each (none is ever empty), so a port with some but not all of them was cut short.
    for key, counters in result.ports.items():
        present = {name.removeprefix("counters/") for name in counters}
        if key in seen_legacy and (missing := sorted(LEGACY_FILES - present)):
            result.unknown.append(f"{key[0]} port {key[1]}: counters missing: {', '.join(missing)} (output truncated?)")
    if not result.ports and not result.unknown:
        result.unknown.append("no counter line found")
    return result


# a plain counter line after the path's prefix (the fast path of parse_ib_counters): no whitespace, no colon
_PLAIN_TAIL = r"([^/\s:]+)/ports/([0-9]+)/(counters|hw_counters)/([^/\s:]+):([0-9]+)$"
_PLAIN: dict[str, re.Pattern[str]] = {}
SATURATED_AT = {
    **{n: 2**b - 1 for n, b in LEGACY_COUNTER_BITS.items()},
    **{n: 2**32 - 1 for n in DATA_COUNTERS_32_OR_64},
}  # _saturation_bits, by name
_NO_LIMIT = itertools.repeat(-1)


def _read_plain(raw: str, result: IbCountersResult, seen_legacy: set[PortKey]) -> bool:
    """Read ``raw`` in one regex pass when every line is ``PREFIX/infiniband/DEV/ports/N/GROUP/NAME:DIGITS`` with
    one prefix (``/sys/class/``), no value saturated and no name repeated within a port's group; False (with part
    of it read) otherwise, and the line loop reads it again. Each run of lines of one port and group is set in one
    pass, in output order, as the loop would set it."""
    at = raw.find("infiniband/")
    prefix = raw[:at]
    if at < 0 or (prefix and (prefix[-1] != "/" or prefix.split() != [prefix] or ":" in prefix)):
        return False
    pattern = _PLAIN.get(prefix)
    if pattern is None:
        pattern = re.compile("^" + re.escape(prefix + "infiniband/") + _PLAIN_TAIL, re.M)
        if len(_PLAIN) < 64:
            _PLAIN[prefix] = pattern
    found = pattern.findall(raw)
    if not found or len(found) != raw.count("\n") + (not raw.endswith("\n")):
        return False
    ports = result.ports
    for (dev, port, group), run in itertools.groupby(found, key=itemgetter(0, 1, 2)):
        _d, _p, _g, names, texts = zip(*run, strict=True)
        key = (dev, int(port))
        if group == "counters":
            seen_legacy.add(key)
        counters = ports.get(key)
        if counters is None:
            counters = ports[key] = {}
        if not NOT_COUNTERS.isdisjoint(names):  # not counters: passed over, as the loop does
            kept = [i for i, n in enumerate(names) if n not in NOT_COUNTERS]
            names, texts = tuple(names[i] for i in kept), tuple(texts[i] for i in kept)
        values = list(map(int, texts))
        if (
            len(set(names)) != len(names)
            or not counters.keys().isdisjoint(names)
            or any(map(int.__eq__, values, map(SATURATED_AT.get, names, _NO_LIMIT)))
        ):
            return False
        counters.update(zip(names, values, strict=True))
    return True


def _read_lines(raw: str, result: IbCountersResult, seen_legacy: set[PortKey]) -> None:
    """The line loop of :func:`parse_ib_counters`: every line form, grep's errors, saturated and unreadable values."""
    reasons = LineReasons(result.unknown, counted=True)
    for number, line, text in text_lines(raw):
        # before the counter pattern, which would also match it (only grep's own lines start so)
        grep_error = _GREP_ERROR.match(text) if text.startswith("grep:") else None
        match = None if grep_error is not None else _counter_line(text)
        if grep_error is not None:
            match = _fields(_COUNTER_LINE.match(grep_error.group("path") + ":"))
            if match is None or "*" in grep_error.group("path"):
                result.unknown.append(f"grep could not read {grep_error.group('path')}: {grep_error.group('error')}")
                continue
        if match is None:
            reasons.add(number, line)
            continue
        dev, port, group, name, value_text = match
        key = (dev, int(port))
        if group == "counters":
            seen_legacy.add(key)
        if name in NOT_COUNTERS:
            continue
        counters = result.ports.setdefault(key, {})
        if name in counters:
            name = f"{group}/{name}"
        value_text = value_text.strip()
        if grep_error is not None:
            value_text = ""
        value = int(value_text) if value_text.isascii() and value_text.isdigit() else None
        if value is None:
            why = grep_error.group("error") if grep_error else f"value {value_text!r} is not a count"
            counters[name] = None
            result.none_reasons[(*key, name)] = f"unreadable: {why}"
            result.unreadable.setdefault(key, {})[name] = text
            continue
        bits = _saturation_bits(name, value)
        if bits is not None:
            counters[name] = None
            result.none_reasons[(*key, name)] = f"saturated: {value} = 2^{bits}-1, the {bits}-bit counter stopped"
            result.saturated.setdefault(key, {})[name] = text
            continue
        counters[name] = value
    reasons.close()
