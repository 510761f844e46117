"""``lfs df`` and ``lfs df -i``: per mounted Lustre file system its MDT/OST rows and ``filesystem_summary:``.

Facts only (no findings): rows with their numbers, state letters and the error a target printed instead of numbers
(``inactive device`` with ``-v``, a strerror); :func:`hwaac.health.lustre_targets.df_findings` judges them.
Printing code: lustre-release ``lustre/utils/lfs.c`` ``mntdf()``/``showdf()``; formats and sources in
``docs/health-parsers.md`` and ``tests/fixtures/tools/lfs/README.md``. Never raises on bad tool output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hwaac.health.parsers.base import LineReasons, no_output, text_lines
from hwaac.health.result import ToolResult

_HEADER = re.compile(
    r"^UUID\s+(?P<size>1K-blocks|bytes|Inodes)\s+(?:Used|IUsed)\s+(?:Available|IFree)\s+"
    r"(?:Use%|IUse%)\s+Mounted on$"
)
_NUM = r"(?:\d+(?:\.\d+)?[KMGTPEZYkmgtpezy]?|-)"
_ROW = re.compile(
    rf"^(?P<uuid>\S+)\s+(?P<total>{_NUM})\s+(?P<used>{_NUM})\s+(?P<avail>{_NUM})\s+"
    rf"(?P<pct>\d+%|-)\s+(?P<mount>\S.*?)\[(?P<type>MDT|OST):(?P<index>\d+)\](?:\s+(?P<state>\S+))?$"
)
_SUMMARY = re.compile(
    rf"^filesystem[_ ]summary:\s+(?P<total>{_NUM})\s+(?P<used>{_NUM})\s+(?P<avail>{_NUM})\s+"
    r"(?P<pct>\d+%|-)\s+(?P<mount>\S.*?)(?:\s+(?P<state>[A-Za-z?]+))?$"
)
_ERROR_ROW = re.compile(r"^(?P<uuid>\S+?)\s*: (?P<error>.+)$")  # showdf(): UUF": %s\n"
_TARGET_UUID = re.compile(r"^(?P<fs>[A-Za-z0-9_]{1,8})-(?P<type>MDT|OST)(?P<index>[0-9a-fA-F]{4})_UUID$")
_UNITS = "KMGTPEZY"
INACTIVE = "inactive device"


@dataclass
class DfRow:
    """One MDT/OST row (or the summary, ``kind`` "summary").

    Attributes:
        uuid: ``lfs1-OST0003_UUID`` (``filesystem_summary:`` for the summary). fsname, kind (``MDT``/``OST``),
            index: from the UUID or the ``[OST:N]`` suffix.
        total, used, available: KiB (``lfs df``), bytes (``-h``: rounded as printed) or inodes (``-i``); None when
            the row printed an error instead.
        use_pct: ``Use%``/``IUse%``. mount_point: the client mount point. state: state letters after the row
            (``D`` degraded, ``R`` read-only, ``N`` no create, ``S`` no space, ``I`` no inodes; "" when none).
        error: what the target printed instead of numbers (``inactive device``, ``Input/output error``), else "".
    """

    uuid: str
    fsname: str = ""
    kind: str = ""
    index: int | None = None
    total: float | None = None
    used: float | None = None
    available: float | None = None
    use_pct: int | None = None
    mount_point: str = ""
    state: str = ""
    error: str = ""
    evidence: str = ""

    @property
    def inactive(self) -> bool:
        return self.error == INACTIVE


@dataclass
class DfFilesystem:
    """One mounted file system's table: its rows and its summary (None when the output stopped before it)."""

    mount_point: str = ""
    rows: list[DfRow] = field(default_factory=list)
    summary: DfRow | None = None

    @property
    def fsname(self) -> str:
        return next((r.fsname for r in self.rows if r.fsname), "")


@dataclass
class LfsDfResult(ToolResult):
    """``lfs df``: ``inodes`` (``-i``) and ``human`` (``-h``/``-H``) as the header said, the file systems in order."""

    tool: str = "lfs df"
    inodes: bool | None = None
    human: bool = False
    filesystems: list[DfFilesystem] = field(default_factory=list)

    def filesystem(self, fsname: str) -> DfFilesystem | None:
        return next((f for f in self.filesystems if f.fsname == fsname), None)


def _number(text: str, human: bool) -> float | None:
    if text == "-":
        return None
    if text[-1].upper() in _UNITS:
        if not human:
            return None
        return float(text[:-1]) * 1024 ** (_UNITS.index(text[-1].upper()) + 1)
    return float(text) if "." in text else int(text)


def parse_lfs_df(raw: str, *, version: str | None = None) -> LfsDfResult:
    """Read ``lfs df [-i] [-h|-H] [-v] [PATH]`` (stdout and stderr together).

    ``unknown``: empty output, lines that are none of header/row/error row/summary (``lfs df: cannot open ...``
    included), a table without ``filesystem_summary:`` (cut short), numbers that do not read.
    """
    result = LfsDfResult(version=version or "")
    if no_output(result, raw):
        return result
    reasons = LineReasons(result.unknown)
    current: DfFilesystem | None = None
    for number, line, text in text_lines(raw):
        if m := _HEADER.match(text):
            current = DfFilesystem()
            result.filesystems.append(current)
            result.inodes = m["size"] == "Inodes"
            result.human = m["size"] == "bytes"
            continue
        if current is not None and (m := _SUMMARY.match(text)):
            current.summary = _row(m, "filesystem_summary:", result)
            current.summary.kind = "summary"
            current.mount_point = current.summary.mount_point
            current = None  # the next table starts at its header
            continue
        if current is not None and (m := _ROW.match(text)):
            row = _row(m, m["uuid"], result)
            row.kind, row.index = m["type"], int(m["index"])
            if t := _TARGET_UUID.match(row.uuid):
                row.fsname = t["fs"]
            current.rows.append(row)
            continue
        if current is not None and (m := _ERROR_ROW.match(text)) and (t := _TARGET_UUID.match(m["uuid"])):
            current.rows.append(
                DfRow(m["uuid"], t["fs"], t["type"], int(t["index"], 16), error=m["error"].strip(), evidence=text)
            )
            continue
        reasons.add(number, line)
    for fs in result.filesystems:
        if fs.summary is None:
            last = fs.rows[-1].uuid if fs.rows else "the header"
            result.unknown.append(f"table ends after {last} without filesystem_summary (output truncated?)")
        if not fs.rows:
            result.unknown.append(f"{fs.mount_point or 'a table'}: no MDT or OST row")
    if not result.filesystems and not result.unknown:
        result.unknown.append("no 'UUID ... Mounted on' header")
    return result


def _row(m: re.Match[str], uuid: str, result: LfsDfResult) -> DfRow:
    row = DfRow(uuid, mount_point=m["mount"], state=m["state"] or "", evidence=m.string)
    row.total, row.used, row.available = (_number(m[k], result.human) for k in ("total", "used", "avail"))
    row.use_pct = int(m["pct"][:-1]) if m["pct"] != "-" else None
    if None in (row.total, row.used, row.available) and "-" not in (m["total"], m["used"], m["avail"]):
        result.unknown.append(f"{uuid}: a number does not read: {m.string[:120]!r}")
    return row
