"""``lfs check servers`` of a Lustre client, and the client OBD device names every Lustre parser splits.

:func:`parse_lfs_check`: ``lfs check servers|all|osts|mdts|mgts`` (lustre-release ``lustre/utils/liblustreapi.c``
``do_target_check()``): ``<obd> active.``, ``<obd> inactive.`` (older releases) or an ``lfs check: error: check
'<obd>': <strerror> (<errno>)`` line per target; the exit status is 0 even when pings fail, so only the lines
decide. How each release prints, and the other Lustre client parsers: ``docs/health-lustre.md``. Each is pure and
follows :mod:`hwaac.health.result` (facts and ``unknown`` reasons; :mod:`hwaac.health.checks_lustre` judges).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hwaac.health.parsers.base import LineReasons
from hwaac.health.result import ToolResult

# Lustre fsnames are 1-8 characters [A-Za-z0-9_] (mkfs.lustre.8). Target names: <fs>-OSTxxxx / MDTxxxx.
_CLIENT_OBD = re.compile(
    r"^(?P<fs>[A-Za-z0-9_]{1,8})-(?P<target>(?:OST|MDT)[0-9a-fA-F]{4})-(?P<kind>osc|mdc)-(?P<instance>[^\s.]+)$"
)
_MGC_OBD = re.compile(r"^MGC(?P<nid>\S+@\S+)$")

ENOTCONN = 107  # Linux errno; "Transport endpoint is not connected"


@dataclass(frozen=True)
class ObdName:
    """A client OBD device name split into its parts.

    Attributes:
        name: as printed (``lfs1-OST0003-osc-ffff9c2a4e1b8000``, ``MGC10.20.0.1@o2ib``).
        kind: ``osc``, ``mdc`` or ``mgc`` ("" when the name is not one of these forms).
        fsname: the file system (``lfs1``; "" for an MGC, which serves every file system of its MGS).
        target: ``OST0003`` / ``MDT0000`` ("" for an MGC).
        mgs_nid: the MGC's MGS NID ("" otherwise).
    """

    name: str
    kind: str = ""
    fsname: str = ""
    target: str = ""
    mgs_nid: str = ""


def split_obd_name(name: str) -> ObdName:
    """Split a client OBD name (``<fs>-<OST|MDT>xxxx-<osc|mdc>-<instance>`` or ``MGC<nid>``); unknown forms keep
    only ``name``."""
    if m := _CLIENT_OBD.match(name):
        return ObdName(name, m["kind"], m["fs"], m["target"].upper())
    if m := _MGC_OBD.match(name):
        return ObdName(name, "mgc", mgs_nid=m["nid"])
    return ObdName(name)


# --- lfs check ----------------------------------------------------------------------------------------------------

_ACTIVE = re.compile(r"^(?P<name>\S+) active\.$")
_INACTIVE = re.compile(r"^(?P<name>\S+) inactive\.$")
# "lfs check: error: check 'X': Transport endpoint is not connected (107)"; older: "error: check 'X'" or
# "error: check X: <strerror>" (no quotes)
_CHECK_ERROR = re.compile(r"^(?:lfs(?: check)?: )?error: check '?(?P<name>[^':\s]+)'?(?::\s*(?P<msg>.*?))?\s*$")
_ERRNO_SUFFIX = re.compile(r"^(?P<text>.*?)\s*\((?P<errno>-?\d+)\)$")
_NOT_MOUNTED = re.compile(r"cannot find mounted Lustre filesystem|No suitable Lustre mount found")
_PING_OPEN = re.compile(r"^(?:lfs(?: check)?: )?error opening \S+")  # llapi_ping(): the check line follows
_CHECK_FAILED = re.compile(r"^(?:lfs(?: check)?: )?cannot check target '(?P<what>[^']*)': (?P<msg>.*)$")


def _error_line_cut(text: str) -> str | None:
    """Why an ``error: check`` line looks cut short, or None: a quoted device name is closed, and llapi_error()'s
    line (``lfs check: `` first) ends in ``: <strerror> (<errno>)`` (``error_callback_default()`` in
    ``lustre/utils/liblustreapi.c``)."""
    name = text.partition("error: check ")[2]
    if name.startswith("'") and "'" not in name[1:]:
        return "has no closing quote (cut short?)"
    if text.startswith("lfs") and not _ERRNO_SUFFIX.match(text):
        return "does not end in lfs's '(errno)' (cut short?)"
    return None


@dataclass
class TargetState:
    """One device line of ``lfs check``.

    Attributes:
        obd: the device name split (:class:`ObdName`).
        state: ``active``, ``inactive`` or ``error``.
        error: the error text for ``error`` (``Transport endpoint is not connected``), else "".
        errno: the errno printed after it (107), or None.
        evidence: the line as printed.
    """

    obd: ObdName
    state: str
    error: str = ""
    errno: int | None = None
    evidence: str = ""

    @property
    def ok(self) -> bool:
        """True when the device answered its ping (``active.``)."""
        return self.state == "active"


@dataclass
class LfsCheckResult(ToolResult):
    """``lfs check`` read into device states.

    Attributes:
        targets: one entry per device line, in output order (stdout lines, then stderr lines).
        not_mounted: lfs said no Lustre client is mounted (``not_mounted_line``: the line that said so).
    """

    tool: str = "lfs check servers"
    targets: list[TargetState] = field(default_factory=list)
    not_mounted: bool = False
    not_mounted_line: str = ""

    def of_fs(self, fsname: str) -> list[TargetState]:
        """The ``osc``/``mdc`` devices of one file system."""
        return [t for t in self.targets if t.obd.fsname == fsname]


def parse_lfs_check(
    stdout: str, stderr: str = "", *, exit_code: int | None = None, version: str | None = None
) -> LfsCheckResult:
    """Read ``lfs check servers`` (stdout and stderr as captured; see the module docstring for the formats).

    Returns:
        An :class:`LfsCheckResult`: a :class:`TargetState` per device line (``active``, ``inactive``, or ``error``
        with its text and errno), ``not_mounted`` when lfs found no mounted client. ``unknown``: empty output,
        lines that are not lfs's, an error line cut short, ``cannot check target``, or a failing exit status without
        an error line. lfs prints no count: an output cut right after a complete line reads as fewer devices.
        :func:`hwaac.health.checks_lustre.lfs_check_findings` judges it.
    """
    result = LfsCheckResult(version=version or "")
    lines = [*stdout.splitlines(), *stderr.splitlines()]
    if not any(line.strip() for line in lines):
        result.unknown.append("no output")
        return result
    not_understood = LineReasons(result.unknown).add
    errors = 0
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        if _NOT_MOUNTED.search(text):
            result.not_mounted = True
            result.not_mounted_line = text
            continue
        if m := _ACTIVE.match(text):
            result.targets.append(TargetState(split_obd_name(m["name"]), "active", evidence=text))
            continue
        if m := _INACTIVE.match(text):
            result.targets.append(TargetState(split_obd_name(m["name"]), "inactive", evidence=text))
            errors += 1
            continue
        if (m := _CHECK_ERROR.match(text)) and (why := _error_line_cut(text)):
            result.unknown.append(f"line {number} {why}: {text[:120]!r}")
            continue
        if m:
            msg = (m["msg"] or "").strip()
            errno = None
            if e := _ERRNO_SUFFIX.match(msg):
                msg, errno = e["text"], abs(int(e["errno"]))
            result.targets.append(TargetState(split_obd_name(m["name"]), "error", msg or "error", errno, text))
            errors += 1
            continue
        if _PING_OPEN.match(text):
            continue
        if m := _CHECK_FAILED.match(text):
            result.unknown.append(f"lfs could not check {m['what']!r}: {m['msg']}")
            continue
        not_understood(number, text)
    if exit_code and not errors and not result.not_mounted and not result.unknown:
        result.unknown.append(f"exit status {exit_code} without an error line")
    if not result.targets and not result.not_mounted and not result.unknown:
        result.unknown.append("no device line")
    return result
