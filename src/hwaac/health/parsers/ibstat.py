"""InfiniBand / RoCE port state from ``ibstat`` (rdma-core ``infiniband-diags/ibstat.c``).

:func:`parse_ibstat` reads one block per CA, one sub-block per port. Output that ends in ``ibpanic: ... stat of IB
device 'mlx5_8' failed`` (gpud#752) keeps the devices read before it and records the panic and the device it stopped
at. Facts only: port states, rates and link layers are judged by :func:`hwaac.health.checks_nic.check_ibstat`
(:meth:`IbstatResult.up_ports` and :attr:`IbstatPort.working_rate_gbps` expose them; a port in ``Polling``, which
prints ``Rate: 10`` or ``40``, gpud#482, never counts as a working link). Raises nothing on bad tool output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hwaac.health.parsers.base import LineReasons, no_output, text_lines
from hwaac.health.result import ToolResult

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


def parse_ibstat(raw: str, *, version: str | None = None) -> IbstatResult:
    """Read ``ibstat`` output (all CAs, or ``ibstat <ca> [port]``).

    Args:
        raw: the output as recorded (stdout and stderr together, so that an ``ibpanic`` line is seen).
        version: rdma-core version when known (ibstat prints none).

    Returns:
        An :class:`IbstatResult`: the CAs and ports read, ``panic``/``failed_device`` when the output ends in
        ``ibpanic``. ``unknown`` lists missing or unrecognised fields, truncated blocks and lines that are not
        ibstat's. No findings: :func:`hwaac.health.checks_nic.check_ibstat` judges. Raises nothing.

    Sources: ``infiniband-diags/ibstat.c`` (line formats, state tables), gpud#752 (partial
    output ending in ibpanic), gpud#482 (a Polling port prints a rate).
    """
    result = IbstatResult(version=version or "")
    if no_output(result, raw):
        return result
    reasons = LineReasons(result.unknown, counted=True)
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

    for number, line, text in text_lines(raw):
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
