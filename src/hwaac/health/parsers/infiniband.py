"""InfiniBand / RoCE port state from ``ibstat`` and port error counters from sysfs, with counter growth.

Two parsers and the growth arithmetic a later check needs (``burn-in-health.md`` §4):

- :func:`parse_ibstat` reads ``ibstat`` (rdma-core ``infiniband-diags/ibstat.c``): one block per CA, one sub-block
  per port. Output that ends in ``ibpanic: ... stat of IB device 'mlx5_8' failed`` (gpud#752) keeps the devices
  read before it and records the panic and the device it stopped at. It returns facts only: port states, rates and
  link layers are judged by :func:`hwaac.health.checks.check_ibstat` (:meth:`IbstatResult.up_ports` and
  :attr:`IbstatPort.working_rate_gbps` expose them; a port in ``Polling``, which prints ``Rate: 10`` or ``40``,
  gpud#482, never counts as a working link).
- :func:`parse_ib_counters` reads the output of
  ``grep -H . /sys/class/infiniband/*/ports/*/counters/* /sys/class/infiniband/*/ports/*/hw_counters/*``
  (lines ``path:value``). Legacy PortCounters fields are fixed-width and *stop at all ones* instead of wrapping
  (InfiniBand Architecture Specification Vol. 1, chapter 16.1 Performance Management, PortCounters attribute; the
  kernel prints them at those widths, ``drivers/infiniband/core/sysfs.c`` ``PORT_PMA_ATTR``). A counter at its
  maximum is therefore unknown, not a count: it becomes ``None`` and is listed in
  :attr:`IbCountersResult.saturated` (gpud#943 shows ``link_downed`` 255, ``port_xmit_discards`` 65535,
  ``port_xmit_wait`` 4294967295 and ``excessive_buffer_overrun_errors`` 15 on one port); a value that is not a
  count is listed in :attr:`IbCountersResult.unreadable`. Facts only: :func:`hwaac.health.checks.check_ib_counters`
  judges them.
- :func:`counter_growth` / :func:`port_counter_growth` turn two readings into per-counter deltas and rates per
  second, ``None`` where either side is unknown or the counter went backwards (reset), so a check can apply
  NVSentinel-style rules (any increase of ``link_downed``, ``symbol_error`` > 10/s ...). :func:`grown` and
  :func:`grown_by_port` say which counters grew, for the qualification gate ("links show no error growth").

No function here raises on bad tool output; what cannot be read is an ``unknown`` reason or a value that is None
with its reason.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Protocol

from hwaac.health.result import Status, ToolResult

# Port states and physical states as ibstat.c prints them (port_state_str, port_phy_state_str); "???" is what it
# prints for a value outside the tables.
PORT_STATES = ("Down", "Initializing", "Armed", "Active")
PHYSICAL_STATES = (
    "No state change",
    "Sleep",
    "Polling",
    "Disabled",
    "PortConfigurationTraining",
    "LinkUp",
    "LinkErrorRecovery",
    "PhyTest",
)
LINK_LAYERS = ("InfiniBand", "Ethernet")

_NODE_TYPES = ("CA", "Switch", "Router", "iWARP RNIC", "???")  # ibstat.c node_type_str
_CA_HEADER = re.compile(r"^(CA|Switch|Router|iWARP RNIC|\?\?\?):? '([^']+)'$")
_PORT_HEADER = re.compile(r"^Port (\d+):$")
_FIELD = re.compile(r"^([A-Za-z][A-Za-z ]*?):\s*(.*)$")
_RATE = re.compile(r"^(\d+(?:\.\d+)?)(?: \((FDR10)\))?$")  # "400", "2.5" (1x SDR), "40 (FDR10)"
_IBPANIC = re.compile(r"^ibpanic: ?(.*)$")  # IBPANIC() of infiniband-diags ibdiag_common.c
_STAT_FAILED = re.compile(r"stat of IB device '([^']+)' failed")
_IBWARN = re.compile(r"^ibwarn: ?(.*)$")

_CA_FIELDS = ("Number of ports", "Firmware version", "Hardware version", "Node GUID", "System image GUID")
_PORT_FIELDS = (
    "State",
    "Physical state",
    "Rate",
    "Base lid",
    "LMC",
    "SM lid",
    "Capability mask",
    "Port GUID",
    "Link layer",
)
_MAX_LINE_REASONS = 5  # garbage input would otherwise give one reason per line


@dataclass
class IbstatPort:
    """One port of one CA as ``ibstat`` printed it.

    Attributes:
        ca: the CA (RDMA device) name, e.g. ``mlx5_3``.
        number: the port number (1 on ConnectX HCAs).
        state: logical state, one of :data:`PORT_STATES` (None when missing or not one of them).
        physical_state: one of :data:`PHYSICAL_STATES` (None when missing or unknown).
        rate_gbps: the ``Rate:`` line in Gb/s as printed, also for a port that is down (a Polling port shows 10 or
            40); use :attr:`working_rate_gbps` to count links.
        fdr10: the rate was printed with ``(FDR10)``.
        base_lid, lmc, sm_lid: LIDs as printed (0 on RoCE ports).
        capability_mask: the port capability mask.
        port_guid: ``0x`` + 16 hex digits (0 on some RoCE ports).
        link_layer: ``InfiniBand`` or ``Ethernet`` (RoCE).
        evidence: the CA header line and the port's lines as recorded.
    """

    ca: str
    number: int
    state: str | None = None
    physical_state: str | None = None
    rate_gbps: float | None = None
    fdr10: bool = False
    base_lid: int | None = None
    lmc: int | None = None
    sm_lid: int | None = None
    capability_mask: int | None = None
    port_guid: str | None = None
    link_layer: str | None = None
    evidence: str = ""

    @property
    def subject(self) -> str:
        """``"<ca> port <n>"``, the subject of this port's findings."""
        return f"{self.ca} port {self.number}"

    @property
    def is_up(self) -> bool:
        """State ``Active`` and physical state ``LinkUp``: the only combination that carries traffic."""
        return self.state == "Active" and self.physical_state == "LinkUp"

    @property
    def working_rate_gbps(self) -> float | None:
        """The rate in Gb/s of a working link; None for a port that is not up, whatever ``Rate:`` says."""
        return self.rate_gbps if self.is_up else None


@dataclass
class IbstatCa:
    """One CA block: ``CA 'mlx5_0'`` and its attributes.

    Attributes:
        name: the RDMA device name.
        node_type: ``CA`` for an HCA (``Switch``, ``Router`` ... as ibstat.c names them).
        ca_type: the ``CA type:`` value, e.g. ``MT4129`` (ConnectX-7), ``MT4125`` (ConnectX-6 Dx), ``MT41692``
            (BlueField-3).
        number_of_ports: ports the CA declares.
        firmware_version, hardware_version: as printed.
        node_guid, system_image_guid: ``0x`` + 16 hex digits.
        ports: the port blocks, in the order printed.
    """

    name: str
    node_type: str = "CA"
    ca_type: str | None = None
    number_of_ports: int | None = None
    firmware_version: str | None = None
    hardware_version: str | None = None
    node_guid: str | None = None
    system_image_guid: str | None = None
    ports: list[IbstatPort] = field(default_factory=list)


@dataclass
class IbstatResult(ToolResult):
    """``ibstat`` read into CAs and ports.

    Attributes:
        cas: the CA blocks read, in output order (devices before an ``ibpanic`` are kept).
        failed_device: the device ibstat stopped at (``ibpanic: ... stat of IB device 'mlx5_8' failed``), else None.
        panic: the message of an ``ibpanic:`` line (ibstat stopped there; the devices after it were not read), else
            None; ``panic_line``: the line as printed.
    """

    tool: str = "ibstat"
    cas: list[IbstatCa] = field(default_factory=list)
    failed_device: str | None = None
    panic: str | None = None
    panic_line: str = ""

    def ports(self, link_layer: str | None = None) -> list[IbstatPort]:
        """Every port read, optionally only those of one link layer (``InfiniBand`` or ``Ethernet``)."""
        return [p for ca in self.cas for p in ca.ports if link_layer is None or p.link_layer == link_layer]

    def up_ports(self, link_layer: str | None = None) -> list[IbstatPort]:
        """Ports that are Active/LinkUp (the ones an expected-count check may count)."""
        return [p for p in self.ports(link_layer) if p.is_up]

    def port(self, ca: str, number: int = 1) -> IbstatPort | None:
        """The port ``number`` of CA ``ca``, or None when it was not read."""
        for p in self.ports():
            if p.ca == ca and p.number == number:
                return p
        return None


def _int(text: str, base: int = 10) -> int | None:
    try:
        return int(text, base)
    except ValueError:
        return None


class _LineReasons:
    """Collects 'line not understood' reasons, capped so garbage input stays readable."""

    def __init__(self, unknown: list[str]) -> None:
        self.unknown = unknown
        self.count = 0

    def add(self, number: int, line: str) -> None:
        self.count += 1
        if self.count <= _MAX_LINE_REASONS:
            self.unknown.append(f"line {number} not understood: {line.strip()[:120]!r}")

    def close(self) -> None:
        if self.count > _MAX_LINE_REASONS:
            self.unknown.append(f"{self.count - _MAX_LINE_REASONS} more lines not understood")


def parse_ibstat(raw: str, *, version: str | None = None) -> IbstatResult:
    """Read ``ibstat`` output (all CAs, or ``ibstat <ca> [port]``).

    Args:
        raw: the output as recorded (stdout and stderr together, so that an ``ibpanic`` line is seen).
        version: rdma-core version when known (ibstat prints none).

    Returns:
        An :class:`IbstatResult`: the CAs and ports read, ``panic``/``failed_device`` when the output ends in
        ``ibpanic``. ``unknown`` lists missing or unrecognised fields, truncated blocks and lines that are not
        ibstat's. No findings: :func:`hwaac.health.checks.check_ibstat` judges. Raises nothing.

    Sources: ``infiniband-diags/ibstat.c`` (line formats, state tables), ``burn-in-health.md`` §4, gpud#752 (partial
    output ending in ibpanic), gpud#482 (a Polling port prints a rate).
    """
    result = IbstatResult(version=version or "")
    if not raw.strip():
        result.unknown.append("no output")
        return result
    reasons = _LineReasons(result.unknown)
    ca: IbstatCa | None = None
    port: IbstatPort | None = None
    port_lines: list[str] = []
    seen: dict[tuple[str, int], set[str]] = {}
    ca_seen: dict[str, set[str]] = {}

    def close_port() -> None:
        nonlocal port, port_lines
        if port is not None and ca is not None:
            port.evidence = "\n".join([f"{ca.node_type} '{ca.name}'", *port_lines])
        port, port_lines = None, []

    for number, line in enumerate(raw.splitlines(), start=1):
        text = line.strip()
        if not text:
            continue
        if panic := _IBPANIC.match(text):
            close_port()
            failed = _STAT_FAILED.search(panic.group(1))
            result.failed_device = failed.group(1) if failed else None
            result.panic, result.panic_line = panic.group(1), text
            ca = None
            continue
        if warn := _IBWARN.match(text):
            result.unknown.append(f"ibstat warned: {warn.group(1)[:160]}")
            continue
        if header := _CA_HEADER.match(text):
            close_port()
            ca = IbstatCa(name=header.group(2), node_type=header.group(1).rstrip(":"))
            result.cas.append(ca)
            ca_seen[ca.name] = set()
            continue
        if (port_header := _PORT_HEADER.match(text)) and ca is not None:
            close_port()
            port = IbstatPort(ca=ca.name, number=int(port_header.group(1)))
            ca.ports.append(port)
            seen[(ca.name, port.number)] = set()
            port_lines = [line.rstrip()]
            continue
        kv = _FIELD.match(text)
        if kv is None or ca is None:
            reasons.add(number, line)
            continue
        key, value = kv.group(1), kv.group(2).strip()
        if port is not None and key in _PORT_FIELDS:
            port_lines.append(line.rstrip())
            seen[(ca.name, port.number)].add(key)
            _set_port_field(port, key, value, result.unknown)
        elif key in _CA_FIELDS or key == f"{ca.node_type} type":
            ca_seen[ca.name].add(key)
            _set_ca_field(ca, key, value, result.unknown)
        else:
            reasons.add(number, line)
    close_port()
    reasons.close()

    if not result.cas and result.panic is None:
        result.unknown.append("no CA block found: this is not ibstat output")
    for ca in result.cas:
        _check_ca(ca, ca_seen[ca.name], seen, result)
    return result


def _set_ca_field(ca: IbstatCa, key: str, value: str, unknown: list[str]) -> None:
    if key.endswith(" type"):
        ca.ca_type = value
    elif key == "Number of ports":
        ca.number_of_ports = _int(value)
        if ca.number_of_ports is None:
            unknown.append(f"{ca.name}: 'Number of ports' is not a number: {value!r}")
    elif key == "Firmware version":
        ca.firmware_version = value
    elif key == "Hardware version":
        ca.hardware_version = value
    elif key == "Node GUID":
        ca.node_guid = value
    elif key == "System image GUID":
        ca.system_image_guid = value


def _set_port_field(port: IbstatPort, key: str, value: str, unknown: list[str]) -> None:
    where = port.subject
    if key == "State":
        port.state = value if value in PORT_STATES else None
        if port.state is None:
            unknown.append(f"{where}: unrecognised State {value!r}")
    elif key == "Physical state":
        port.physical_state = value if value in PHYSICAL_STATES else None
        if port.physical_state is None:
            unknown.append(f"{where}: unrecognised Physical state {value!r}")
    elif key == "Rate":
        rate = _RATE.match(value)
        port.rate_gbps = float(rate.group(1)) if rate else None
        port.fdr10 = bool(rate and rate.group(2))
        if rate is None:
            unknown.append(f"{where}: Rate is not a number of Gb/s: {value!r}")
    elif key in ("Base lid", "LMC", "SM lid"):
        number = _int(value)
        if number is None:
            unknown.append(f"{where}: {key} is not a number: {value!r}")
        setattr(port, {"Base lid": "base_lid", "LMC": "lmc", "SM lid": "sm_lid"}[key], number)
    elif key == "Capability mask":
        port.capability_mask = _int(value, 16)
    elif key == "Port GUID":
        port.port_guid = value
    elif key == "Link layer":
        port.link_layer = value if value in LINK_LAYERS else None
        if port.link_layer is None:
            unknown.append(f"{where}: unrecognised Link layer {value!r}")


def _check_ca(
    ca: IbstatCa,
    ca_fields: set[str],
    seen: dict[tuple[str, int], set[str]],
    result: IbstatResult,
) -> None:
    missing = [f for f in (f"{ca.node_type} type", *_CA_FIELDS) if f not in ca_fields]
    # "ibstat <ca> <port>" prints only the header and the port, never the CA attributes: not a truncation.
    if missing and len(missing) < len(_CA_FIELDS) + 1:
        result.unknown.append(f"{ca.name}: missing {', '.join(missing)} (output truncated?)")
    if not ca.ports:
        result.unknown.append(f"{ca.name}: no port block (output truncated?)")
    elif ca.number_of_ports is not None and len(ca.ports) < ca.number_of_ports:
        result.unknown.append(f"{ca.name}: declares {ca.number_of_ports} ports but {len(ca.ports)} were printed")
    for port in ca.ports:
        absent = [f for f in _PORT_FIELDS if f not in seen[(ca.name, port.number)]]
        if absent:
            result.unknown.append(f"{port.subject}: missing {', '.join(absent)} (output truncated?)")


# --- sysfs port counters ------------------------------------------------------------------------------------------

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
_LEGACY_FILES = frozenset(LEGACY_COUNTER_BITS) | frozenset(DATA_COUNTERS_32_OR_64)

# Counters whose growth is a link or transport fault (burn-in-health.md §4: the PortCounters error set and the
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
        path, sep, value = text[at + len("infiniband/"):].partition(":")  # the prefix may hold colons (PCI paths)
        tail = path.split("/")
        if sep and len(tail) == 5 and tail[1] == "ports" and tail[2].isdigit() and tail[3] in _GROUPS \
                and tail[0] and tail[4]:
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
        input. No findings: :func:`hwaac.health.checks.check_ib_counters` judges. Raises nothing.

    Sources: kernel ``drivers/infiniband/core/sysfs.c`` (attribute names, widths, ``N/A (no PMA)``), gpud#943
    (saturated values), node_exporter#966 (``N/A (no PMA)``), ``burn-in-health.md`` §4.
    """
    result = IbCountersResult(version=version or "")
    if not raw.strip():
        result.unknown.append("no output")
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
        if key in seen_legacy and (missing := sorted(_LEGACY_FILES - present)):
            result.unknown.append(f"{key[0]} port {key[1]}: counters missing: {', '.join(missing)} (output truncated?)")
    if not result.ports and not result.unknown:
        result.unknown.append("no counter line found")
    return result


# a plain counter line after the path's prefix (the fast path of parse_ib_counters): no whitespace, no colon
_PLAIN_TAIL = r"([^/\s:]+)/ports/([0-9]+)/(counters|hw_counters)/([^/\s:]+):([0-9]+)$"
_PLAIN: dict[str, re.Pattern[str]] = {}
_SATURATED_AT = {**{n: 2**b - 1 for n, b in LEGACY_COUNTER_BITS.items()},
                 **{n: 2**32 - 1 for n in DATA_COUNTERS_32_OR_64}}  # _saturation_bits, by name
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
        if (len(set(names)) != len(names) or not counters.keys().isdisjoint(names)
                or any(map(int.__eq__, values, map(_SATURATED_AT.get, names, _NO_LIMIT)))):
            return False
        counters.update(zip(names, values, strict=True))
    return True


def _read_lines(raw: str, result: IbCountersResult, seen_legacy: set[PortKey]) -> None:
    """The line loop of :func:`parse_ib_counters`: every line form, grep's errors, saturated and unreadable values."""
    reasons = _LineReasons(result.unknown)
    for number, line in enumerate(raw.splitlines(), start=1):
        text = line.strip()
        if not text:
            continue
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


# --- growth ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CounterGrowth:
    """How one counter moved between two readings.

    Attributes:
        before, after: the two readings (None: not read or not trustworthy).
        delta: ``after - before`` in the counter's unit; None when either side is unknown or the counter went
            backwards (a reset or a wrap: the real increase cannot be known).
        per_second: ``delta / seconds``; None when delta is None or the interval is not positive.
        reason: why delta or per_second is None ("" when both are known).
    """

    before: int | None
    after: int | None
    delta: int | None
    per_second: float | None
    reason: str = ""


def counter_growth(
    before: Mapping[str, int | None], after: Mapping[str, int | None], seconds: float
) -> dict[str, CounterGrowth]:
    """Per counter name (the union of both readings): delta and rate per second between two readings.

    Works on any flat counter mapping (one sysfs port's counters, ``EthtoolStats.counters``). Raises nothing.
    """
    growth: dict[str, CounterGrowth] = {}
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name), after.get(name)
        if name not in before or name not in after:
            side = "first" if name not in before else "second"
            growth[name] = CounterGrowth(b, a, None, None, f"not in the {side} reading")
        elif b is None or a is None:
            growth[name] = CounterGrowth(b, a, None, None, "a reading is unknown (saturated or unreadable)")
        elif a < b:
            growth[name] = CounterGrowth(b, a, None, None, "went backwards: counters were reset or wrapped")
        elif seconds <= 0:
            growth[name] = CounterGrowth(b, a, a - b, None, f"interval {seconds} s is not positive")
        else:
            growth[name] = CounterGrowth(b, a, a - b, (a - b) / seconds)
    return growth


class PortCounterReading(Protocol):
    """A reading with per-port counters: :class:`IbCountersResult` (sysfs) or
    :class:`~hwaac.health.parsers.rdma.RdmaStatResult` (``rdma statistic show``)."""

    @property
    def ports(self) -> Mapping[PortKey, Mapping[str, int | None]]: ...


def port_counter_growth(
    before: PortCounterReading, after: PortCounterReading, seconds: float
) -> dict[PortKey, dict[str, CounterGrowth]]:
    """:func:`counter_growth` for every ``(device, port)`` in either reading (a port missing on one side has every
    counter unknown). Raises nothing."""
    return {
        key: counter_growth(before.ports.get(key, {}), after.ports.get(key, {}), seconds)
        for key in sorted(set(before.ports) | set(after.ports))
    }


def grown(growth: Mapping[str, CounterGrowth], names: Iterable[str] | None = None) -> list[str]:
    """Names (restricted to ``names`` when given, e.g. :data:`ERROR_COUNTERS`) whose delta is known and > 0."""
    wanted = set(growth) if names is None else set(names)
    return sorted(n for n, g in growth.items() if n in wanted and g.delta is not None and g.delta > 0)


def unknown_growth(growth: Mapping[str, CounterGrowth], names: Iterable[str] | None = None) -> list[str]:
    """Names (restricted to ``names`` when given) whose growth cannot be known: these are no evidence of health."""
    wanted = set(growth) if names is None else set(names)
    return sorted(n for n, g in growth.items() if n in wanted and g.delta is None)


def grown_by_port(
    growth: Mapping[PortKey, Mapping[str, CounterGrowth]], names: Iterable[str] = ERROR_COUNTERS
) -> dict[str, list[str]]:
    """Per port subject (``"mlx5_3 port 1"``) the error counters that grew; ports without growth are left out.

    The qualification gate wants this empty *and* :func:`unknown_growth` empty for every port.
    """
    names = tuple(names)
    out = {f"{dev} port {port}": grown(g, names) for (dev, port), g in growth.items()}
    return {subject: names_ for subject, names_ in out.items() if names_}
