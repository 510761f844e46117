"""Parsers of Lustre client tool output: target checks, LNet pings, the health_check flag, import states, LNet NI
health and the Lustre lines of ``/proc/mounts``.

Each parser is pure and follows :mod:`hwaac.health.result`: raw text (and the exit status) in, a typed result out;
what cannot be read is an ``unknown`` reason (UNKNOWN, never PASS), and an exit status only makes a result worse.
Samples and their sources: ``tests/fixtures/tools/lfs/`` and ``tests/fixtures/health/lustre/`` (README.md in each).

- :func:`parse_lfs_check`: ``lfs check servers|all|osts|mdts|mgts``. Printing code: lustre-release
  ``lustre/utils/liblustreapi.c`` ``do_target_check()``: ``"%s active.\\n"`` on stdout when the OBD's ``ping``
  file answers, ``"%s inactive.\\n"`` when it returned ``ENOTCONN`` (older releases, whose ``llapi_ping()``
  returned a positive errno), otherwise ``llapi_error(.., "error: check '%s'", name)`` on stderr, which
  ``error_callback_default`` prefixes with ``lfs check: `` and suffixes with ``: <strerror> (<errno>)``
  (``lfs check: error: check 'fs-OST0007-osc-ffff..': Transport endpoint is not connected (107)``). Since
  ``llapi_ping()`` returns ``-errno`` (current ``master``), a disconnected target prints the error line, never
  ``inactive.``; both forms are read. The exit status is 0 even when pings fail (``llapi_target_check()`` returns
  the iteration's status, not the pings'), so only the lines decide. No mounted client prints
  ``lfs check: cannot find mounted Lustre filesystem: No such device`` (``lustre/utils/lfs.c`` ``lfs_check()``;
  ``No suitable Lustre mount found`` before 2.12). ``servers`` is ``all``: ``osc``, ``mdc`` and ``mgc`` devices
  (``lfs.c``; ``osc`` and ``mdc`` only before 2.12).
- :func:`parse_lctl_ping`: ``lctl ping NID`` (``lnet/utils/portals.c`` ``jt_ptl_ping()``): one
  ``libcfs_id2str()`` per line (``12345-0@lo``, ``12345-10.20.0.1@o2ib``) on success; ``failed to ping NID:
  <strerror>`` on failure (stderr with the ioctl API, stdout with the Netlink API of 2.16+, which also prints the
  peer's NIDs without the ``12345-`` prefix).
- :func:`parse_health_check`: ``lctl get_param [-n] health_check``. ``lustre/obdclass/obd_sysfs.c``
  ``health_check_show()`` prints ``healthy``, ``NOT HEALTHY`` or ``LBUG`` (``libcfs_catastrophe``); 2.14+ also has
  a debugfs ``health_check`` (``health_check_seq_show()``) listing ``device <obd> reported unhealthy``, so
  ``lctl get_param`` prints both (whamcloud/lustrefs-exporter fixture ``valid_unhealthy_host.txt``); releases with
  the procfs file print ``LBUG``/``device ... reported unhealthy`` lines then ``NOT HEALTHY``
  (``obd_proc_read_health()``).
- :func:`parse_imports`: ``lctl get_param osc.*.import mdc.*.import``; ``lctl`` prints ``<param>=`` then the
  multi-line value (``lustre/utils/lustre_cfg.c`` ``read_param()``), the value is
  ``lprocfs_import_seq_show_locked()`` (``lustre/obdclass/lprocfs_status.c``): ``import:``, ``    name:``,
  ``    target:``, ``    state:`` (``ptlrpc_import_state_name()``: ``CLOSED NEW DISCONN CONNECTING REPLAY
  REPLAY_LOCKS REPLAY_WAIT RECOVER FULL EVICTED IDLE``), ``    import_flags: [ ... ]``, ``    connection:`` with
  ``failover_nids: [ ... ]`` (quoted NIDs since 2.15) and ``current_connection:``.
  :func:`parse_server_uuid` reads ``osc.*.ost_server_uuid`` / ``mdc.*.mds_server_uuid``
  (``lprocfs_server_uuid_seq_show()``: ``<target>\\t<state>[\\tDEACTIVATED]``).
- :func:`parse_lnet_net_show`: ``lnetctl net show -v`` with a YAML loader (both the <=2.15 cYAML and the 2.16+
  libyaml indentation load to the same data; ``lustre-client.md`` section 1.4): per NI ``status``,
  ``health stats: {health value, fatal_error}`` (1000 is full health; ``fatal_error`` 2.15+, LU-14114). LNet down:
  ``errno: -100`` / ``cannot get networks: Network is down`` (<=2.15) or ``LNet stack down`` (2.16+ Netlink).
- :func:`parse_lustre_mounts`: the ``lustre`` lines of ``/proc/mounts``
  (``<mgsnid>[,<nid>][:<failover>]:/<fsname>[/subdir] <dir> lustre <options> 0 0``, mount.lustre.8), fields
  decoded as the kernel escapes them (:func:`unescape_mount_field`); :func:`normalise_nid` for comparing NIDs.

The parsers return facts (states, errors, flags, health values) and ``unknown`` reasons only; what they mean for
the node (FAIL, WARN, the action) is judged in :mod:`hwaac.health.checks_lustre`. No function here raises on bad
tool output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

from hwaac.health.parsers.lustre_formats import (  # noqa: F401  # unescape_mount_field: re-exported
    LustreError,
    lnet_down_text,
    lnet_nets,
    mount_lines,
    normalise_nid,
    split_source,
    unescape_mount_field,
)
from hwaac.health.result import ToolResult

_MAX_LINE_REASONS = 5

# Lustre fsnames are 1-8 characters [A-Za-z0-9_] (mkfs.lustre.8; contract.md). Target names: <fs>-OSTxxxx / MDTxxxx.
_CLIENT_OBD = re.compile(
    r"^(?P<fs>[A-Za-z0-9_]{1,8})-(?P<target>(?:OST|MDT)[0-9a-fA-F]{4})-(?P<kind>osc|mdc)-(?P<instance>[^\s.]+)$"
)
_MGC_OBD = re.compile(r"^MGC(?P<nid>\S+@\S+)$")

ENOTCONN = 107  # Linux errno; "Transport endpoint is not connected"


def _reasons(unknown: list[str]):
    count = 0

    def add(number: int, line: str) -> None:
        """Record line ``number`` (1-based) as not understood; after five, one "more lines" reason."""
        nonlocal count
        count += 1
        if count <= _MAX_LINE_REASONS:
            unknown.append(f"line {number} not understood: {line.strip()[:120]!r}")
        elif count == _MAX_LINE_REASONS + 1:
            unknown.append("more lines not understood")

    return add


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
_CHECK_ERROR = re.compile(
    r"^(?:lfs(?: check)?: )?error: check '?(?P<name>[^':\s]+)'?(?::\s*(?P<msg>.*?))?\s*$"
)
_ERRNO_SUFFIX = re.compile(r"^(?P<text>.*?)\s*\((?P<errno>-?\d+)\)$")
_NOT_MOUNTED = re.compile(r"cannot find mounted Lustre filesystem|No suitable Lustre mount found")
_PING_OPEN = re.compile(r"^(?:lfs(?: check)?: )?error opening \S+")  # llapi_ping(): the check line follows
_CHECK_FAILED = re.compile(r"^(?:lfs(?: check)?: )?cannot check target '(?P<what>[^']*)': (?P<msg>.*)$")


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


def parse_lfs_check(stdout: str, stderr: str = "", *, exit_code: int | None = None,
                    version: str | None = None) -> LfsCheckResult:
    """Read ``lfs check servers`` (stdout and stderr as captured; see the module docstring for the formats).

    Returns:
        An :class:`LfsCheckResult`: a :class:`TargetState` per device line (``active``, ``inactive``, or ``error``
        with its text and errno), ``not_mounted`` when lfs found no mounted client. ``unknown``: empty output,
        lines that are not lfs's, ``cannot check target``, or a failing exit status without an error line.
        :func:`hwaac.health.checks_lustre.lfs_check_findings` judges it.
    """
    result = LfsCheckResult(version=version or "")
    lines = [*stdout.splitlines(), *stderr.splitlines()]
    if not any(line.strip() for line in lines):
        result.unknown.append("no output")
        return result
    not_understood = _reasons(result.unknown)
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
        if m := _CHECK_ERROR.match(text):
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


# --- lctl ping ----------------------------------------------------------------------------------------------------

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
    not_understood = _reasons(result.unknown)
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
    not_understood = _reasons(result.unknown)
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


# --- import states ------------------------------------------------------------------------------------------------

IMPORT_STATES_OK = ("FULL", "IDLE")  # IDLE: idle_timeout disconnected an unused import (2.12+); reconnects on use
IMPORT_STATES_RECOVERING = ("NEW", "CONNECTING", "REPLAY", "REPLAY_LOCKS", "REPLAY_WAIT", "RECOVER")
IMPORT_STATES_DOWN = ("DISCONN", "CLOSED", "EVICTED")
IMPORT_STATES = (*IMPORT_STATES_OK, *IMPORT_STATES_RECOVERING, *IMPORT_STATES_DOWN)

_PARAM_HEADER = re.compile(r"^(?P<type>[a-z]+)\.(?P<obd>\S+)\.(?P<param>import|ost_server_uuid|mds_server_uuid)="
                           r"(?P<rest>.*)$")
_IMPORT_FIELD = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z_][\w\-]*):\s*(?P<value>.*)$")


@dataclass
class ImportState:
    """One client import (the connection of an ``osc``/``mdc``/``mgc`` to its target).

    Attributes:
        obd: the device (:class:`ObdName`).
        target: the target UUID (``lfs1-OST0000_UUID``).
        state: one of :data:`IMPORT_STATES` as printed ("" when missing).
        current_connection: the NID in use (``10.20.0.11@o2ib``; ``<none>``), "" when not printed.
        failover_nids: the target's NIDs in failover order.
        flags: ``import_flags`` (``replayable``, ``pingable``, ``invalid``, ``deactivate``...).
        deactivated: the administrator deactivated the target on this client (``DEACTIVATED`` /
            ``deactivate`` flag), None when the output does not say.
        evidence: the lines it was read from.
    """

    obd: ObdName
    target: str = ""
    state: str = ""
    current_connection: str = ""
    failover_nids: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    deactivated: bool | None = None
    evidence: str = ""

    @property
    def ok(self) -> bool:
        """True for FULL and IDLE (:data:`IMPORT_STATES_OK`)."""
        return self.state in IMPORT_STATES_OK


@dataclass
class ImportsResult(ToolResult):
    """Import states read from ``osc.*.import`` / ``mdc.*.import`` (or ``*_server_uuid``).

    Attributes:
        imports: in output order.
        missing_params: parameter patterns ``lctl`` found nothing for (``osc/*/import``: no client of that type).
    """

    tool: str = "lctl get_param osc.*.import mdc.*.import"
    imports: list[ImportState] = field(default_factory=list)
    missing_params: list[str] = field(default_factory=list)

    def of_fs(self, fsname: str) -> list[ImportState]:
        """The ``osc``/``mdc`` imports of one file system, in output order."""
        return [i for i in self.imports if i.obd.fsname == fsname]


_MISSING_PARAM = re.compile(r"^error: (?:get_param|list_param): (?:param_path )?'(?P<path>[^']+)': "
                            r"No such file or directory$")


def _flow_list(text: str) -> list[str]:
    inner = text.strip()
    if not (inner.startswith("[") and inner.endswith("]")):
        return []
    return [item.strip().strip('"') for item in inner[1:-1].split(",") if item.strip()]


def _import_state_unknown(result: ImportsResult, imp: ImportState) -> None:
    if imp.state and imp.state not in IMPORT_STATES:
        result.unknown.append(f"{imp.obd.name}: import state {imp.state!r} is not one of {', '.join(IMPORT_STATES)}")
    elif not imp.state:
        result.unknown.append(f"{imp.obd.name}: no import state printed")


def _read_import_block(obd_name: str, kind: str, lines: list[str]) -> ImportState | None:
    fields: dict[str, str] = {}
    section = ""
    for line in lines:
        m = _IMPORT_FIELD.match(line)
        if not m:
            continue
        key, value, indent = m["key"], m["value"].strip(), len(m["indent"])
        if indent <= 4 and not value:
            section = key
        elif indent <= 4:
            section = ""
            fields.setdefault(key, value)
        else:
            fields.setdefault(f"{section}.{key}", value)
    if not any(line.strip() == "import:" for line in lines):
        return None
    name = fields.get("name") or obd_name
    obd = split_obd_name(name)
    if not obd.kind and kind:
        obd = ObdName(name, kind)
    flags = _flow_list(fields.get("import_flags", ""))
    current = fields.get("connection.current_connection", "").strip().strip('"')
    return ImportState(obd, fields.get("target", ""), fields.get("state", ""), current,
                       _flow_list(fields.get("connection.failover_nids", "")), flags,
                       True if any(f.startswith("deactiv") for f in flags) else None, "\n".join(lines[:12]))


def parse_imports(raw: str, *, exit_code: int | None = None) -> ImportsResult:
    """Read ``lctl get_param osc.*.import mdc.*.import`` (with or without ``-n``; stdout and stderr together).

    Returns:
        An :class:`ImportsResult`: per import its state, connection, failover NIDs, flags and whether the target
        is deactivated on this client. ``unknown``: empty output, a block without a known state, other lines.
        ``lctl``'s ``No such file or directory`` for a pattern is recorded in ``missing_params`` (no client of
        that kind), not unknown.
    """
    result = ImportsResult()
    if not raw.strip():
        result.unknown.append("no output")
        return result
    blocks: list[tuple[str, str, list[str]]] = []  # (obd, kind, lines)
    current: tuple[str, str, list[str]] | None = None
    not_understood = _reasons(result.unknown)
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        if m := _MISSING_PARAM.match(line.strip()):
            result.missing_params.append(m["path"])
            current = None
            continue
        if (m := _PARAM_HEADER.match(line)) and m["param"] == "import":
            current = (m["obd"], m["type"], [])
            blocks.append(current)
            if m["rest"].strip():
                current[2].append(m["rest"])
            continue
        if line.strip() == "import:" and (current is None or any(x.strip() == "import:" for x in current[2])):
            current = ("", "", [line])  # -n output: a block starts at each "import:"
            blocks.append(current)
            continue
        if current is None:
            not_understood(number, line)
            continue
        current[2].append(line)
    for obd_name, kind, lines in blocks:
        imp = _read_import_block(obd_name, kind, lines)
        if imp is None:
            result.unknown.append(f"{obd_name or 'block'}: no 'import:' block in the value")
            continue
        result.imports.append(imp)
        _import_state_unknown(result, imp)
    if not result.imports and not result.missing_params and not result.unknown:
        result.unknown.append("no import block")
    if exit_code and not result.missing_params and not result.unknown:
        result.unknown.append(f"exit status {exit_code}")
    return result


_SERVER_UUID_VALUE = re.compile(r"^(?P<target>\S+)\t(?P<state>[A-Z_<>]+)(?:\t(?P<deact>DEACTIVATED))?$")


def parse_server_uuid(raw: str, *, exit_code: int | None = None) -> ImportsResult:
    """Read ``lctl get_param osc.*.ost_server_uuid mdc.*.mds_server_uuid`` (``<target>\\t<state>
    [\\tDEACTIVATED]``, names shown or ``-n``), into the same :class:`ImportsResult` as :func:`parse_imports`."""
    result = ImportsResult(tool="lctl get_param osc.*.ost_server_uuid mdc.*.mds_server_uuid")
    if not raw.strip():
        result.unknown.append("no output")
        return result
    not_understood = _reasons(result.unknown)
    for number, line in enumerate(raw.splitlines(), start=1):
        text = line.rstrip("\n")
        if not text.strip():
            continue
        if m := _MISSING_PARAM.match(text.strip()):
            result.missing_params.append(m["path"])
            continue
        obd, kind, value = "", "", text
        if h := _PARAM_HEADER.match(text):
            obd, kind, value = h["obd"], h["type"], h["rest"]
        m = _SERVER_UUID_VALUE.match(value.strip(" "))
        if not m:
            not_understood(number, text)
            continue
        name = obd or m["target"]
        split = split_obd_name(name)
        if not split.fsname and (t := re.match(r"^(?P<fs>[A-Za-z0-9_]{1,8})-(?P<tg>(?:OST|MDT)[0-9a-fA-F]{4})_UUID$",
                                                m["target"])):
            split = ObdName(name, kind or ("osc" if t["tg"].startswith("OST") else "mdc"), t["fs"], t["tg"].upper())
        imp = ImportState(split, m["target"], m["state"], deactivated=bool(m["deact"]), evidence=text)
        result.imports.append(imp)
        _import_state_unknown(result, imp)
    if not result.imports and not result.missing_params and not result.unknown:
        result.unknown.append("no server_uuid line")
    return result


# --- lnetctl net show -v ------------------------------------------------------------------------------------------

FULL_HEALTH = 1000  # LNet health value of a healthy NI (lnet/include/lnet/lib-types.h LNET_MAX_HEALTH_VALUE)


@dataclass
class LnetNi:
    """One local NI of ``lnetctl net show -v``.

    Attributes:
        net: the net type (``o2ib``, ``tcp``; LNet prints ``o2ib`` for ``o2ib0``).
        nid: ``10.20.0.5@o2ib``. status: ``up``/``down`` (None when missing). interface: ``interfaces: {0: ...}``.
        health_value: ``health stats: health value`` (1000 = full), None when not printed (no ``-v``, < 2.12).
        fatal_error: ``health stats: fatal_error`` (2.15+), None when not printed.
    """

    net: str
    nid: str
    status: str | None = None
    interface: str | None = None
    health_value: int | None = None
    fatal_error: int | None = None


@dataclass
class LnetNetsResult(ToolResult):
    """``lnetctl net show -v``: the local NIs (``lo`` left out) and whether LNet is down (``down_text``: what
    lnetctl printed then)."""

    tool: str = "lnetctl net show -v"
    nis: list[LnetNi] = field(default_factory=list)
    lnet_down: bool = False
    down_text: str = ""

    def faulty(self) -> list[LnetNi]:
        """NIs that are not up, have a fatal error, or a health value below :data:`FULL_HEALTH`."""
        return [ni for ni in self.nis if (ni.status is not None and ni.status != "up") or ni.fatal_error
                or (ni.health_value is not None and ni.health_value < FULL_HEALTH)]


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def parse_lnet_net_show(raw: str, *, stderr: str = "", exit_code: int | None = None) -> LnetNetsResult:
    """Read ``lnetctl net show -v`` (either layout) with PyYAML ``safe_load``.

    Returns:
        An :class:`LnetNetsResult`: ``lnet_down`` when LNet is not running, else per NI its status, health value
        and ``fatal_error``. ``unknown``: empty or non-YAML output, no ``net:`` list, an NI without a NID, a value
        that is not a number, a failing exit status with every NI healthy.
    """
    result = LnetNetsResult()
    if lnet_down_text(raw) or lnet_down_text(stderr):
        result.lnet_down = True
        result.down_text = (stderr or raw).strip()[:400]
        return result
    if not raw.strip():
        result.unknown.append("no output" + (f" ({stderr.strip()[:160]})" if stderr.strip() else ""))
        return result
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        result.unknown.append(f"not YAML: {str(exc).splitlines()[0]}")
        return result
    if not isinstance(data, dict) or not isinstance(data.get("net"), list):
        result.unknown.append("no 'net:' list")
        return result
    try:
        nets = lnet_nets(data)  # lustre_formats: the one reader of lnetctl's net entries (host and controller)
    except LustreError as exc:
        result.unknown.append(str(exc)[:200])
        return result
    for net in nets:
        net_type = net["net"]
        if net_type == "lo":
            continue
        for ni in net["nis"]:
            if not ni["nid"]:
                result.unknown.append(f"{net_type}: NI without a nid")
                continue
            health = ni["health stats"] or {}
            entry = LnetNi(net_type, str(ni["nid"]), str(ni["status"]) if ni["status"] is not None else None,
                           ni["interface"])
            if isinstance(health, dict):
                if "health value" in health:
                    entry.health_value = _int(health["health value"])
                    if entry.health_value is None:
                        result.unknown.append(f"{entry.nid}: health value {health['health value']!r} is not a "
                                              "number")
                if "fatal_error" in health:
                    entry.fatal_error = _int(health["fatal_error"])
            result.nis.append(entry)
            if entry.status is None:
                result.unknown.append(f"{entry.nid}: no status")
    if not result.nis and not result.unknown:
        result.unknown.append("no NI besides lo")
    if exit_code and not result.faulty() and not result.unknown:
        result.unknown.append(f"exit status {exit_code}")
    return result


# --- /proc/mounts -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LustreMount:
    """A Lustre client mount from ``/proc/mounts``.

    Attributes:
        source: as printed (``10.20.0.1@o2ib,10.20.0.2@o2ib:10.20.0.3@o2ib:/lfs1``).
        fsname: ``lfs1`` (a subdirectory mount ``/lfs1/sub`` keeps ``lfs1``).
        mount_point: the directory (octal escapes such as ``\\040`` decoded).
        options: the mount options in order (octal escapes decoded).
        mgs: failover MGS nodes, each a tuple of its NIDs as printed (``:`` separates nodes, ``,`` NIDs of one
            node; compare them through :func:`normalise_nid`).
    """

    source: str
    fsname: str
    mount_point: str
    options: tuple[str, ...]
    mgs: tuple[tuple[str, ...], ...]


def parse_lustre_mounts(raw: str) -> list[LustreMount]:
    """The ``lustre`` mounts of a ``/proc/mounts`` text.

    Args:
        raw: the file's text (``SOURCE MOUNT_POINT TYPE OPTIONS 0 0`` per line, fields separated by one space).

    Returns:
        One :class:`LustreMount` per Lustre client line, in file order, every field decoded with
        :func:`unescape_mount_field` (the kernel escapes space, tab, newline and backslash, so splitting on
        whitespace before decoding is exact). Lines of other file systems and malformed lines are skipped: a line
        that is not Lustre's is no evidence about Lustre. Never raises.
    """
    mounts = []
    for source, mount_point, fstype, options in mount_lines(raw):  # lustre_formats: one reader, host and controller
        split = split_source(source) if fstype == "lustre" else None
        if split is None:
            continue
        nodes, fsname, _subdir = split
        mounts.append(LustreMount(source, fsname, mount_point, tuple(options), tuple(tuple(n) for n in nodes)))
    return mounts
