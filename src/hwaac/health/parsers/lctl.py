"""``lctl`` outputs of a Lustre client: ``lctl ping NID`` and the ``health_check`` flag.

The formats, sources and rules in full: ``docs/health-modules.md``, section "lctl ping and health_check".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hwaac.health.parsers.base import LineReasons
from hwaac.health.result import ToolResult

_PING_ID = re.compile(r"^(?:(?:U?\d+)-)?(?P<nid>[^\s@]+@[A-Za-z][A-Za-z0-9]*)$")
_PING_FAILED = re.compile(r"^failed to ping (?P<nid>\S+): (?P<msg>.*)$")
_PING_TRUNCATED = re.compile(r"^\d+ out of \d+ ids listed$")


@dataclass
class LctlPingResult(ToolResult):
    """``lctl ping NID``.

    Attributes:
        nid: the NID pinged (as asked).
        reachable: True when the peer answered with its NIDs, False on ``failed to ping``, None when unreadable.
        peer_nids: the NIDs the peer listed (``0@lo`` left out), without the ``12345-`` process id.
        error: the failure text (``Input/output error``), "" otherwise; ``error_line``: the line it was read from.
    """

    tool: str = "lctl ping"
    nid: str = ""
    reachable: bool | None = None
    peer_nids: list[str] = field(default_factory=list)
    error: str = ""
    error_line: str = ""


def parse_lctl_ping(raw: str, *, nid: str, exit_code: int | None = None) -> LctlPingResult:
    """Read ``lctl ping NID`` (stdout and stderr together).

    Returns:
        An :class:`LctlPingResult`: ``reachable`` False with the ``error`` for a ``failed to ping`` line (whatever
        the exit status: the Netlink API prints it on stdout). ``unknown``: empty output, other lines, no NID
        besides ``0@lo``, or a failing exit status with NIDs listed and no failure line.
    """
    result = LctlPingResult(nid=nid)
    lines = [line.strip() for line in raw.splitlines() if line.strip()]
    if not lines:
        result.unknown.append("no output")
        return result
    not_understood = LineReasons(result.unknown).add
    for number, text in enumerate(lines, start=1):
        if m := _PING_FAILED.match(text):
            result.reachable = False
            result.error = m["msg"].strip()
            result.error_line = text
            continue
        if m := _PING_ID.match(text):
            if m["nid"] != "0@lo":
                result.peer_nids.append(m["nid"])
            continue
        if _PING_TRUNCATED.match(text):
            continue
        not_understood(number, text)
    if result.reachable is None and not result.unknown:
        if not result.peer_nids:
            result.unknown.append("the peer listed no NID besides 0@lo")
        elif exit_code:
            result.unknown.append(f"exit status {exit_code} with NIDs listed and no failure line")
        else:
            result.reachable = True
    return result


# --- health_check -------------------------------------------------------------------------------------------------

_DEVICE_UNHEALTHY = re.compile(r"^device (?P<obd>\S+) reported unhealthy$")
_GET_PARAM_ERROR = re.compile(r"^error: (?:get_param|read_param)\b.*$")


@dataclass
class HealthCheckResult(ToolResult):
    """``lctl get_param [-n] health_check``.

    Attributes:
        healthy: True for ``healthy``, False for ``NOT HEALTHY`` / ``LBUG`` / a device line, None when unread.
        lbug: the node hit an LBUG (``libcfs_catastrophe``). not_healthy: ``NOT HEALTHY`` was printed.
        unhealthy_devices: OBD devices listed as ``device <obd> reported unhealthy``.
        lines: the non-empty lines read (stripped), the evidence of a verdict.
    """

    tool: str = "lctl get_param health_check"
    healthy: bool | None = None
    lbug: bool = False
    not_healthy: bool = False
    unhealthy_devices: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


def parse_health_check(raw: str, *, exit_code: int | None = None) -> HealthCheckResult:
    """Read ``lctl get_param [-n] health_check`` (``health_check=`` prefixes allowed; stdout and stderr together).

    Returns:
        A :class:`HealthCheckResult`: ``healthy`` (False for ``NOT HEALTHY``, ``LBUG`` or a device line), ``lbug``,
        the ``unhealthy_devices``. ``unknown``: empty output, a ``get_param`` error (Lustre not loaded), other
        lines, no verdict word, a failing exit status with ``healthy``.
    """
    result = HealthCheckResult()
    lines = [line.strip() for line in raw.splitlines() if line.strip()]
    result.lines = lines
    if not lines:
        result.unknown.append("no output")
        return result
    not_understood = LineReasons(result.unknown).add
    words: set[str] = set()
    for number, text in enumerate(lines, start=1):
        value = text.removeprefix("health_check=").strip()
        if not value:
            continue  # "health_check=" before the debugfs file's device lines
        if value in ("healthy", "NOT HEALTHY", "LBUG"):
            words.add(value)
        elif m := _DEVICE_UNHEALTHY.match(value):
            result.unhealthy_devices.append(m["obd"])
        elif _GET_PARAM_ERROR.match(value):
            result.unknown.append(f"health_check not readable (are the Lustre modules loaded?): {value[:160]}")
        else:
            not_understood(number, text)
    result.lbug, result.not_healthy = "LBUG" in words, "NOT HEALTHY" in words
    if result.lbug or result.not_healthy or result.unhealthy_devices:
        result.healthy = False
    elif "healthy" in words:
        result.healthy = True
    if result.healthy is None and not result.unknown:
        result.unknown.append("no healthy / NOT HEALTHY / LBUG in the output")
    if exit_code and result.healthy is True:
        result.healthy = None
        result.unknown.append(f"exit status {exit_code}")
    return result
