"""Lustre client import states: ``lctl get_param osc.*.import mdc.*.import`` and ``*_server_uuid``.

The formats, sources and rules in full: ``docs/health-modules.md``, section "Lustre imports".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hwaac.health.parsers.base import MAX_LINE_REASONS, LineReasons, no_output
from hwaac.health.parsers.lustre import ObdName, split_obd_name
from hwaac.health.result import ToolResult

IMPORT_STATES_OK = ("FULL", "IDLE")  # IDLE: idle_timeout disconnected an unused import (2.12+); reconnects on use
IMPORT_STATES_RECOVERING = ("NEW", "CONNECTING", "REPLAY", "REPLAY_LOCKS", "REPLAY_WAIT", "RECOVER")
IMPORT_STATES_DOWN = ("DISCONN", "CLOSED", "EVICTED")
IMPORT_STATES = (*IMPORT_STATES_OK, *IMPORT_STATES_RECOVERING, *IMPORT_STATES_DOWN)

_PARAM_HEADER = re.compile(
    r"^(?P<type>[a-z]+)\.(?P<obd>\S+)\.(?P<param>import|ost_server_uuid|mds_server_uuid)="
    r"(?P<rest>.*)$"
)
_IMPORT_FIELD = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z_][\w\-]*|\"[^\"]+\"):(?:\s+(?P<value>.*))?$")


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


_MISSING_PARAM = re.compile(
    r"^error: (?:get_param|list_param): (?:param_path )?'(?P<path>[^']+)': "
    r"No such file or directory$"
)


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


def _read_import_block(obd_name: str, kind: str, lines: list[str]) -> tuple[ImportState | None, set[str], list[str]]:
    """The import, the keys seen (``section.key`` below a section) and the lines that are not ``key: value``."""
    fields: dict[str, str] = {}
    section = ""
    odd = []
    for line in lines:
        m = _IMPORT_FIELD.match(line)
        if not m:
            if line.strip() != "import:":
                odd.append(line)
            continue
        key, value, indent = m["key"], (m["value"] or "").strip(), len(m["indent"])
        if indent <= 4 and not value:
            section = key
            fields.setdefault(key, "")
        elif indent <= 4:
            section = ""
            fields.setdefault(key, value)
        else:
            fields.setdefault(f"{section}.{key}", value)
    if not any(line.strip() == "import:" for line in lines):
        return None, set(fields), odd
    name = fields.get("name") or obd_name
    obd = split_obd_name(name)
    if not obd.kind and kind:
        obd = ObdName(name, kind)
    flags = _flow_list(fields.get("import_flags", ""))
    current = fields.get("connection.current_connection", "").strip().strip('"')
    return (
        ImportState(
            obd,
            fields.get("target", ""),
            fields.get("state", ""),
            current,
            _flow_list(fields.get("connection.failover_nids", "")),
            flags,
            True if any(f.startswith("deactiv") for f in flags) else None,
            "\n".join(lines[:12]),
        ),
        set(fields),
        odd,
    )


# What every import value holds (lprocfs_import_seq_show_locked(), lustre/obdclass/lprocfs_status.c, 2.5 to master):
# it prints name ... "connection:" up to "in-progress_invalidations" (then "idle", 2.12+), and stops there when the
# device keeps no RPC statistics (``if (!obd->obd_svc_stats) return``); otherwise "rpcs:", "service_estimates:" and
# "transactions:" follow, "transactions" ending with "last_checked", then only the optional *_data_averages.
_IMPORT_KEYS = (
    "name",
    "target",
    "state",
    "connect_flags",
    "import_flags",
    "connection.failover_nids",
    "connection.current_connection",
    "connection.in-progress_invalidations",
)
_STATS_KEYS = ("rpcs", "service_estimates", "transactions.last_checked")


def _cut_reason(keys: set[str], stats_elsewhere: bool) -> str | None:
    """Why an import value looks cut short (it lacks what lprocfs_import_seq_show_locked() prints), or None."""
    want = [k for k in _IMPORT_KEYS if k not in keys]
    if "rpcs" in keys or stats_elsewhere:  # every import of a client keeps RPC statistics, or none does
        want += [k for k in _STATS_KEYS if k not in keys]
    return f"no {', '.join(want)} (output cut short?)" if want else None


def parse_imports(raw: str, *, exit_code: int | None = None) -> ImportsResult:
    """Read ``lctl get_param osc.*.import mdc.*.import`` (with or without ``-n``; stdout and stderr together).

    Returns:
        An :class:`ImportsResult`: per import its state, connection, failover NIDs, flags and whether the target
        is deactivated on this client. ``unknown``: empty output, a block without a known state, other lines, a
        value cut short (it lacks a key ``lprocfs_import_seq_show_locked()`` prints for every import: ``lctl``
        prints no count, so an output cut right after a complete value reads as fewer imports).
        ``lctl``'s ``No such file or directory`` for a pattern is recorded in ``missing_params`` (no client of
        that kind), not unknown.
    """
    result = ImportsResult()
    if no_output(result, raw):
        return result
    blocks: list[tuple[str, str, list[str]]] = []  # (obd, kind, lines)
    current: tuple[str, str, list[str]] | None = None
    not_understood = LineReasons(result.unknown).add
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
    read = [(obd_name, *_read_import_block(obd_name, kind, lines)) for obd_name, kind, lines in blocks]
    with_stats = any("rpcs" in keys for _name, _imp, keys, _odd in read)
    for obd_name, imp, keys, odd in read:
        for line in odd[:MAX_LINE_REASONS]:
            result.unknown.append(f"{obd_name or 'import'}: line not understood: {line.strip()[:120]!r}")
        if imp is None:
            result.unknown.append(f"{obd_name or 'block'}: no 'import:' block in the value")
            continue
        result.imports.append(imp)
        _import_state_unknown(result, imp)
        if cut := _cut_reason(keys, with_stats):
            result.unknown.append(f"{imp.obd.name}: {cut}")
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
    if no_output(result, raw):
        return result
    not_understood = LineReasons(result.unknown).add
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
        if not split.fsname and (
            t := re.match(r"^(?P<fs>[A-Za-z0-9_]{1,8})-(?P<tg>(?:OST|MDT)[0-9a-fA-F]{4})_UUID$", m["target"])
        ):
            split = ObdName(name, kind or ("osc" if t["tg"].startswith("OST") else "mdc"), t["fs"], t["tg"].upper())
        imp = ImportState(split, m["target"], m["state"], deactivated=bool(m["deact"]), evidence=text)
        result.imports.append(imp)
        _import_state_unknown(result, imp)
    if not result.imports and not result.missing_params and not result.unknown:
        result.unknown.append("no server_uuid line")
    return result
