"""RDMA port state from ``ibstatus`` and ``ibv_devinfo``, per-port hw counters from ``rdma statistic show``.

Facts only: these parsers report what the tools printed (ports, states, rates, counters) and why a part could not be
read (``unknown``); they record no findings. :mod:`hwaac.health.checks_rdma` judges them against a SKU profile.
Formats, versions seen and sources: ``docs/health-parsers.md`` and the READMEs under
``tests/fixtures/health/{ibstatus,ibv_devinfo,rdma-statistic}/``. No function here raises on bad tool output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hwaac.health.parsers.base import LineReasons, no_output, text_lines
from hwaac.health.result import ToolResult

# IBA Vol. 1 PortInfo: PortState 4 = Active; PortPhysicalState 5 = LinkUp (the codes both tools print).
STATE_ACTIVE = 4
PHYS_LINK_UP = 5


@dataclass
class RdmaPort:
    """One port of one RDMA device as ``ibstatus`` or ``ibv_devinfo`` printed it.

    Attributes:
        device: the RDMA device (``mlx5_3``). port: the port number.
        state, state_code: logical state name and code (``ACTIVE``, 4); None when not printed or not readable.
        phys_state, phys_code: physical state (``LinkUp``/``LINK_UP``, 5); None when not printed (``ibv_devinfo``
            without ``-v``) or not readable.
        rate_gbps: the port rate in Gb/s (``ibstatus`` ``rate``; ``ibv_devinfo -v`` width x speed), None otherwise.
        link_layer: ``InfiniBand`` or ``Ethernet`` as printed (None when missing).
        fields: every ``key: value`` of the port as printed.
    """

    device: str
    port: int
    state: str | None = None
    state_code: int | None = None
    phys_state: str | None = None
    phys_code: int | None = None
    rate_gbps: float | None = None
    link_layer: str | None = None
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def subject(self) -> str:
        """``"<device> port <n>"``."""
        return f"{self.device} port {self.port}"

    @property
    def is_up(self) -> bool:
        """Active, and LinkUp where the physical state was printed (an Active port always has a physical link)."""
        return self.state_code == STATE_ACTIVE and self.phys_code in (PHYS_LINK_UP, None)

    @property
    def evidence(self) -> str:
        return f"{self.subject}: " + ", ".join(f"{k}: {v}" for k, v in self.fields.items())


@dataclass
class RdmaPortsResult(ToolResult):
    """Ports read from ``ibstatus`` or ``ibv_devinfo``; ``devices`` holds device attributes (``ibv_devinfo``)."""

    tool: str = "ibstatus"
    ports: list[RdmaPort] = field(default_factory=list)
    devices: dict[str, dict[str, str]] = field(default_factory=dict)
    no_devices: bool = False

    def port(self, device: str, number: int = 1) -> RdmaPort | None:
        return next((p for p in self.ports if p.device == device and p.port == number), None)


def _int(text: str) -> int | None:
    try:
        return int(text, 0)
    except ValueError:
        return None


# --- ibstatus -----------------------------------------------------------------------------------------------------

_IBSTATUS_HEADER = re.compile(r"^Infiniband device '(?P<dev>[^']+)' port (?P<port>\d+) status:$")
_IBSTATUS_FIELD = re.compile(r"^(?P<key>[a-z][a-z_ ]*):\s*(?P<value>.*)$")
_CODED = re.compile(r"^(?P<code>\d+): (?P<name>\S+)$")  # "4: ACTIVE", "5: LinkUp"
_IBSTATUS_RATE = re.compile(r"^(?P<rate>\d+(?:\.\d+)?) Gb/sec(?: \(.*\))?$")
# Every block prints these (link_layer since infiniband-diags 2010, "IB" when sysfs has no link_layer file): a block
# without one was cut short.
IBSTATUS_REQUIRED = ("state", "phys state", "rate", "link_layer")
IBSTATUS_LINK_LAYERS = ("InfiniBand", "Ethernet", "IB")


def parse_ibstatus(raw: str, *, version: str | None = None) -> RdmaPortsResult:
    """Read ``ibstatus`` (rdma-core ``infiniband-diags/scripts/ibstatus``): one block per port.

    Returns the ports read; ``unknown`` names lines that are not ibstatus's (its ``Fatal error`` lines included),
    values that cannot be read and blocks without ``state``, ``phys state``, ``rate`` or ``link_layer`` (cut short:
    the script prints each line of a block, ``link_layer`` last). ibstatus prints no count, so an output cut right
    after a complete block reads as fewer ports.
    """
    result = RdmaPortsResult(tool="ibstatus", version=version or "")
    if no_output(result, raw):
        return result
    reasons = LineReasons(result.unknown)
    current: RdmaPort | None = None
    for number, line, text in text_lines(raw):
        if m := _IBSTATUS_HEADER.match(text):
            current = RdmaPort(m["dev"], int(m["port"]))
            result.ports.append(current)
            continue
        m = _IBSTATUS_FIELD.match(text)
        if m is None or current is None:
            reasons.add(number, line)
            continue
        key, value = m["key"], m["value"].strip()
        current.fields[key] = value
        if key in ("state", "phys state"):
            coded = _CODED.match(value)
            if coded is None:
                result.unknown.append(f"{current.subject}: {key} {value!r} is not 'CODE: NAME'")
            elif key == "state":
                current.state, current.state_code = coded["name"], int(coded["code"])
            else:
                current.phys_state, current.phys_code = coded["name"], int(coded["code"])
        elif key == "rate":
            rate = _IBSTATUS_RATE.match(value)
            current.rate_gbps = float(rate["rate"]) if rate else None
            if rate is None:
                result.unknown.append(f"{current.subject}: rate {value!r} is not 'N Gb/sec'")
        elif key == "link_layer":
            current.link_layer = value
            if value not in IBSTATUS_LINK_LAYERS:
                result.unknown.append(
                    f"{current.subject}: link_layer {value!r} is not one of {', '.join(IBSTATUS_LINK_LAYERS)}"
                )
    for port in result.ports:
        if missing := [k for k in IBSTATUS_REQUIRED if k not in port.fields]:
            result.unknown.append(f"{port.subject}: missing {', '.join(missing)} (output truncated?)")
    if not result.ports and not result.unknown:
        result.unknown.append("no 'Infiniband device' block")
    return result


# --- ibv_devinfo --------------------------------------------------------------------------------------------------

_HCA = re.compile(r"^hca_id:\s*(?P<dev>\S+)$")
_PORT = re.compile(r"^port:\s*(?P<port>\d+)$")
_KV = re.compile(r"^(?P<key>[A-Za-z_][\w\[\] ]*?):\s*(?P<value>.*)$")
_PORT_STATE = re.compile(r"^PORT_(?P<name>\w+) \((?P<code>\d+)\)$")  # "PORT_ACTIVE (4)"
_PHYS_STATE = re.compile(r"^(?P<name>\w+) \((?P<code>\d+)\)$")  # "LINK_UP (5)", "POLLING (2)"
_WIDTH = re.compile(r"^(?P<lanes>\d+)X \(\d+\)$")  # "4X (2)"
_SPEED = re.compile(r"^(?P<gbps>\d+(?:\.\d+)?) Gbps \(\d+\)$")  # "25.0 Gbps (32)"
_DEVINFO_ERRORS = ("Failed to", "failed to", "Couldn't", "IB device", "No IB devices found")
IBV_PORT_REQUIRED = ("state", "link_layer")
# with -v (the device then prints max_mr_size ...) every port also prints these; phys_state only on an InfiniBand
# transport device (devinfo.c print_hca_cap())
IBV_PORT_REQUIRED_VERBOSE = ("active_width", "active_speed")
IBV_LINK_LAYERS = ("InfiniBand", "Ethernet", "Unspecified", "Unknown")  # devinfo.c link_layer_str()


def parse_ibv_devinfo(raw: str, *, port: int | None = None, version: str | None = None) -> RdmaPortsResult:
    """Read ``ibv_devinfo [-d DEV] [-i PORT] [-v]`` (rdma-core ``libibverbs/examples/devinfo.c``; also the MLNX OFED
    layout with ``Device ports:``).

    Args:
        raw: stdout and stderr together. port: the ``-i`` the command ran with (then each device prints only that
            port); None: every port of a device must be printed (``phys_port_cnt``).

    Returns the devices' attributes and ports. ``no_devices`` when it printed ``No IB devices found``. ``unknown``:
    error lines, unreadable states, a port without ``state`` or ``link_layer`` (with ``-v`` also without
    ``active_width``, ``active_speed`` and, on an InfiniBand transport device, ``phys_state``), a link layer
    ``link_layer_str()`` does not print, a device with fewer ports than ``phys_port_cnt``. Capability lines of
    ``-v`` that are not ``key: value`` are skipped (they describe the device, not the port's health).
    """
    result = RdmaPortsResult(tool="ibv_devinfo", version=version or "")
    if no_output(result, raw):
        return result
    reasons = LineReasons(result.unknown)
    device: str | None = None
    current: RdmaPort | None = None
    for number, line, text in text_lines(raw):
        if text.startswith("No IB devices found"):
            result.no_devices = True
            continue
        if text.startswith(_DEVINFO_ERRORS):
            result.unknown.append(f"ibv_devinfo: {text[:160]}")
            continue
        if m := _HCA.match(text):
            device, current = m["dev"], None
            result.devices[device] = {}
            continue
        if device is None:
            reasons.add(number, line)
            continue
        if m := _PORT.match(text):
            current = RdmaPort(device, int(m["port"]))
            result.ports.append(current)
            continue
        m = _KV.match(text)
        if current is None:
            if m is not None and m["value"]:
                result.devices[device][m["key"]] = m["value"].strip()
            continue  # -v capability lists, "tag matching not supported" ...: device attributes, not port state
        if m is None:
            reasons.add(number, line)
            continue
        _set_ibv_field(current, m["key"], m["value"].strip(), result.unknown)
    for dev, attrs in result.devices.items():
        printed = [p for p in result.ports if p.device == dev]
        declared = _int(attrs.get("phys_port_cnt", ""))
        if declared is None:
            result.unknown.append(f"{dev}: no phys_port_cnt")
        elif port is None and len(printed) < declared:
            result.unknown.append(
                f"{dev}: declares {declared} ports but {len(printed)} were printed (output truncated?)"
            )
        elif port is not None and not printed:
            result.unknown.append(f"{dev}: port {port} was not printed")
    for p in result.ports:
        attrs = result.devices.get(p.device, {})
        want = list(IBV_PORT_REQUIRED)
        if "max_mr_size" in attrs:  # -v
            want += [
                *IBV_PORT_REQUIRED_VERBOSE,
                *(["phys_state"] if attrs.get("transport", "").startswith("InfiniBand") else []),
            ]
        if missing := [k for k in want if k not in p.fields]:
            result.unknown.append(f"{p.subject}: missing {', '.join(missing)} (output truncated?)")
        elif p.link_layer not in IBV_LINK_LAYERS:
            result.unknown.append(
                f"{p.subject}: link_layer {p.link_layer!r} is not one of {', '.join(IBV_LINK_LAYERS)}"
            )
    if not result.devices and not result.no_devices and not result.unknown:
        result.unknown.append("no 'hca_id' block")
    return result


# ibv_devinfo's coded fields: key -> (its pattern, the form named in a reason, the name and code attributes)
_CODED_FIELDS = {
    "state": (_PORT_STATE, "PORT_NAME (CODE)", "state", "state_code"),
    "phys_state": (_PHYS_STATE, "NAME (CODE)", "phys_state", "phys_code"),
}


def _set_ibv_field(port: RdmaPort, key: str, value: str, unknown: list[str]) -> None:
    port.fields[key] = value
    if key in _CODED_FIELDS:
        pattern, form, name, code = _CODED_FIELDS[key]
        m = pattern.match(value)
        if m is None:
            unknown.append(f"{port.subject}: {key} {value!r} is not '{form}'")
        else:
            setattr(port, name, m["name"])
            setattr(port, code, int(m["code"]))
    elif key == "link_layer":
        port.link_layer = value
    elif key in ("active_width", "active_speed"):
        width = _WIDTH.match(port.fields.get("active_width", ""))
        speed = _SPEED.match(port.fields.get("active_speed", ""))
        if width and speed:
            port.rate_gbps = int(width["lanes"]) * float(speed["gbps"])


# --- rdma statistic show ------------------------------------------------------------------------------------------

_LINK = re.compile(r"^link (?P<dev>[^/\s]+)/(?P<port>\d+)(?P<rest>(?:\s.*)?)$")
_PAIR_LINE = re.compile(r"^(?P<name>[A-Za-z_][\w]*) (?P<value>\S+)$")

PortKey = tuple[str, int]


@dataclass
class RdmaStatResult(ToolResult):
    """``rdma statistic show``: per ``(device, port)`` the counters by name (None: not a number)."""

    tool: str = "rdma statistic show"
    ports: dict[PortKey, dict[str, int | None]] = field(default_factory=dict)

    def counters(self, device: str, port: int = 1) -> dict[str, int | None]:
        return self.ports.get((device, port), {})


def parse_rdma_statistic(raw: str, *, version: str | None = None) -> RdmaStatResult:
    """Read ``rdma statistic show [link DEV/PORT]`` (iproute2 ``rdma/stat.c``), plain (``link DEV/PORT NAME VALUE
    ...`` on one line) or pretty (``-p``: one ``NAME VALUE`` a line under ``link DEV/PORT``).

    ``unknown``: lines that are neither, a name without its value (a line cut short), values that are not counts
    (the counter becomes None), a port listed twice, empty output.
    """
    result = RdmaStatResult(version=version or "")
    if no_output(result, raw):
        return result
    reasons = LineReasons(result.unknown)
    current: dict[str, int | None] | None = None
    key: PortKey | None = None
    for number, line, text in text_lines(raw):
        if m := _LINK.match(text):
            key = (m["dev"], int(m["port"]))
            if key in result.ports:
                result.unknown.append(f"{key[0]} port {key[1]} listed twice")
            current = result.ports.setdefault(key, {})
            tokens = m["rest"].split()
            if len(tokens) % 2:
                result.unknown.append(f"{key[0]} port {key[1]}: {tokens[-1]!r} has no value (line cut short?)")
                tokens = tokens[:-1]
            if _set_counts(current, tokens):
                continue
            for name, value in zip(tokens[::2], tokens[1::2], strict=True):
                _set_counter(result, key, current, name, value)
            continue
        if current is not None and key is not None and line[:1] in ("\t", " ") and (p := _PAIR_LINE.match(text)):
            _set_counter(result, key, current, p["name"], p["value"])
            continue
        if current is not None and key is not None and line[:1] in ("\t", " ") and " " not in text:
            result.unknown.append(f"{key[0]} port {key[1]}: {text!r} has no value (line cut short?)")
            continue
        reasons.add(number, line)
    for (dev, port), counters in result.ports.items():
        if not counters:
            result.unknown.append(f"{dev} port {port}: no counter")
    if not result.ports and not result.unknown:
        result.unknown.append("no 'link' line")
    return result


def _set_counts(counters: dict[str, int | None], tokens: list[str]) -> bool:
    """Set ``NAME VALUE`` pairs in one pass when every value is a count (the usual line); False when one is not,
    and :func:`_set_counter` takes them one by one."""
    values = tokens[1::2]
    joined = "".join(values)
    if not (joined.isdigit() and joined.isascii()):
        return False
    counters.update(zip(tokens[::2], map(int, values), strict=True))
    return True


def _set_counter(result: RdmaStatResult, key: PortKey, counters: dict[str, int | None], name: str, value: str) -> None:
    if value.isascii() and value.isdigit():
        counters[name] = int(value)
        return
    counters[name] = None
    result.unknown.append(f"{key[0]} port {key[1]}: {name} {value!r} is not a count")
