"""Readers of ``nvidia-smi --query-gpu`` and ``--query-remapped-rows`` CSV output.

CSV field names drift: ``clocks_throttle_reasons.*`` is answered under ``clocks_event_reasons.*``, ``clocks.sm``
under ``clocks.current.sm``, and ``nvidia-smi --help-query-gpu`` lists aliases; each is mapped to one canonical name
(:data:`CSV_ALIASES`). ``--query-remapped-rows`` prints pending/failure as ``0``/``1`` or ``No``/``Yes`` by driver.
Where the GPU's capabilities are not printed, remap and page-retirement state stand in for each other and ECC
Disabled excuses the volatile counts. Facts only: :mod:`hwaac.health.gpu_grading` grades them (both results are
UNKNOWN, never PASS, until then). Never raises.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

from hwaac.health.parsers.base import no_output
from hwaac.health.parsers.nvidia_smi_model import lost_lines, placeholder, to_bool
from hwaac.health.result import Graded, ToolResult

# alias -> canonical field name (nvidia-smi --help-query-gpu "a" or "b" pairs; renames across drivers).
CSV_ALIASES = {
    "gpu_name": "name",
    "gpu_serial": "serial",
    "gpu_uuid": "uuid",
    "gpu_bus_id": "pci.bus_id",
    "pcie.link.gen.current": "pcie.link.gen.gpucurrent",  # "Deprecated, use pcie.link.gen.gpucurrent instead"
    "clocks.gr": "clocks.current.graphics",
    "clocks.sm": "clocks.current.sm",
    "clocks.mem": "clocks.current.memory",
    "clocks.video": "clocks.current.video",
    "clocks.applications.gr": "clocks.applications.graphics",
    "clocks.applications.mem": "clocks.applications.memory",
    "clocks.default_applications.gr": "clocks.default_applications.graphics",
    "clocks.default_applications.mem": "clocks.default_applications.memory",
    "clocks.max.gr": "clocks.max.graphics",
    "clocks.max.mem": "clocks.max.memory",
    "retired_pages.sbe": "retired_pages.single_bit_ecc.count",
    "retired_pages.dbe": "retired_pages.double_bit.count",
    "remapped_rows.sbe": "remapped_rows.correctable",
    "remapped_rows.dbe": "remapped_rows.uncorrectable",
}


_UNIT = re.compile(r"^(-?\d+(?:\.\d+)?) ?(MiB|W|MHz|%|KiB|GiB|C|KB/s)$")


_FIELD = re.compile(r"^[a-z_][a-zA-Z0-9_.]*$")


_HEADER_CELL = re.compile(r"^(?P<name>[a-z_][a-zA-Z0-9_.]*)(?: \[(?P<unit>[^\]]+)\])?$")


CsvValue = int | float | str | bool | None


def canonical_field(name: str) -> str:
    """The canonical name of a ``--query-gpu`` field (``clocks_throttle_reasons.active`` ->
    ``clocks_event_reasons.active``, ``ecc.errors.*.device_memory`` -> ``...dram``, aliases of
    :data:`CSV_ALIASES`)."""
    name = name.strip()
    name = CSV_ALIASES.get(name, name)
    if name.startswith("clocks_throttle_reasons."):
        name = "clocks_event_reasons." + name.removeprefix("clocks_throttle_reasons.")
    if name.startswith("ecc.errors.") and name.endswith(".device_memory"):
        name = name.removesuffix(".device_memory") + ".dram"
    return name


# Identity fields stay text: a serial such as 0000000000001 is not the number 1.
_TEXT_FIELDS = {"name", "serial", "uuid", "pci.bus_id", "driver_version", "vbios_version", "inforom.img", "pstate"}


def _csv_value(text: str, name: str = "") -> CsvValue:
    value = text.strip()
    if placeholder(value):
        return None
    if name in _TEXT_FIELDS:
        return value
    unit = _UNIT.match(value)
    if unit:
        value = unit.group(1)
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    if re.fullmatch(r"0x[0-9a-fA-F]+", value):
        return int(value, 16)
    if re.fullmatch(r"-?\d+\.\d+", value):
        return float(value)
    flag = to_bool(value) if value in {"Yes", "No", "Active", "Not Active"} else None
    return flag if flag is not None else value


@dataclass
class NvidiaSmiCsv(Graded):
    """``nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]``.

    Attributes:
        fields: canonical field names in column order (a duplicate column keeps its name twice).
        rows: one dict per GPU: canonical field -> value. Numbers without units (MiB, W, MHz, %: the unit is in
            the header or the field's definition), hex bitmasks as int, Yes/No and Active/Not Active as bool,
            other text as str, placeholders as None.
        units: canonical field -> unit from the header (``MiB``), when there was a header with units.
        subjects: per row, the GPU it is about (``gpu0 00000000:00:06.0``, ``row 2`` without an index).
        evidence: per row, ``field=value`` pairs as printed.
        lost: the lines saying a GPU is lost or needs a reset.
        graded: whether :func:`hwaac.health.gpu_grading.grade_query_csv` has added its findings.
    """

    tool: str = "nvidia-smi --query-gpu"
    fields: list[str] = field(default_factory=list)
    rows: list[dict[str, CsvValue]] = field(default_factory=list)
    units: dict[str, str] = field(default_factory=dict)
    subjects: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    graded: bool = False


def _looks_like_header(cells: list[str]) -> bool:
    return all(_HEADER_CELL.match(c.strip()) and not c.strip().isdigit() for c in cells)


# Lines nvidia-smi prints instead of data (driver down, no GPU, a field this driver does not know).
_SMI_ERROR = re.compile(
    r"No devices were found|NVIDIA-SMI has failed|Failed to initialize NVML|is not a valid field to query|"
    r"Unable to determine the device handle|Driver/library version mismatch|"
    r"couldn't communicate with the NVIDIA driver",
    re.IGNORECASE,
)


def _smi_errors(raw: str, result: ToolResult) -> str:
    """``raw`` without nvidia-smi's error lines, each of which becomes an ``unknown`` reason."""
    kept = []
    for line in raw.splitlines():
        if _SMI_ERROR.search(line):
            result.unknown.append(f"nvidia-smi error: {line.strip()}")
        else:
            kept.append(line)
    return "\n".join(kept)


def _split_csv(raw: str) -> list[list[str]]:
    return [[c.strip() for c in row] for row in csv.reader(io.StringIO(raw), skipinitialspace=True) if row]


def _read_table(
    raw: str, result: NvidiaSmiCsv, fields: list[str] | None
) -> list[tuple[list[str], dict[str, CsvValue]]]:
    """Common CSV reading: header or ``fields``, column count checks. Returns (raw cells, row) pairs."""
    if no_output(result, raw, "empty output"):
        return []
    text = _smi_errors(raw, result).strip()
    if not text:
        return []
    rows = _split_csv(text)
    header: list[str] | None = None
    if _looks_like_header(rows[0]):
        header = rows.pop(0)
    if header is not None:
        names = []
        for cell in header:
            match = _HEADER_CELL.match(cell)
            assert match  # _looks_like_header checked every cell
            names.append(canonical_field(match.group("name")))
            if match.group("unit"):
                result.units[names[-1]] = match.group("unit")
        if fields is not None and len(fields) != len(names):
            result.unknown.append(f"{len(fields)} fields requested but the header has {len(names)} columns")
    elif fields is not None:
        names = [canonical_field(f) for f in fields]
    else:
        result.unknown.append("no header line and no field list given (noheader output needs fields=)")
        return []
    result.fields = names
    out = []
    for number, cells in enumerate(rows, start=1):
        if len(cells) != len(names):
            result.unknown.append(f"row {number} has {len(cells)} values for {len(names)} columns: {cells!r}")
            continue
        row: dict[str, CsvValue] = {}
        for name, cell in zip(names, cells, strict=True):
            value = _csv_value(cell, name)
            if name in row and row[name] != value:
                result.unknown.append(f"row {number}: column {name} appears twice with {row[name]!r} and {value!r}")
            row[name] = value
        out.append((cells, row))
    if not out:
        result.unknown.append("no data row")
    return out


# Health fields of --query-gpu whose [N/A] leaves a memory fault unreadable, and the partner whose value makes the
# placeholder acceptable: remapping (Ampere+) and page retirement (older) stand in for each other, and volatile ECC
# counts are N/A by right when ECC is disabled. An [N/A] clock reason, ECC mode or recovery action means "not
# supported here" and is simply None.
_HEALTH_FIELDS = {
    "remapped_rows.pending": "retired_pages.pending",
    "remapped_rows.failure": "retired_pages.pending",
    "retired_pages.pending": "remapped_rows.pending",
    "ecc.errors.uncorrected.volatile.total": "ecc.mode.current",
    "ecc.errors.uncorrected.volatile.dram": "ecc.mode.current",
    "ecc.errors.uncorrected.volatile.sram": "ecc.mode.current",
}


def _row_subject(number: int, row: dict[str, CsvValue]) -> str:
    subject = f"gpu{row['index']}" if isinstance(row.get("index"), int) else f"row {number}"
    if isinstance(row.get("pci.bus_id"), str):
        subject += f" {row['pci.bus_id']}"
    return subject


def _row_placeholders(
    subject: str, cells: list[str], names: list[str], row: dict[str, CsvValue], result: ToolResult
) -> None:
    """The ``unknown`` reasons of one row's placeholders (which make its health unreadable)."""
    placeholders = {n: placeholder(c) for n, c in zip(names, cells, strict=True) if placeholder(c)}
    # A row that is mostly placeholders is a GPU nvidia-smi could not read, whatever the fields were.
    if len(placeholders) * 2 > len(cells):
        result.unknown.append(f"{subject}: {len(placeholders)} of {len(cells)} values are placeholders")
    for name, kind in placeholders.items():
        if kind != "n/a":
            result.unknown.append(f"{subject}: {name} is {kind!r}")
        elif name in _HEALTH_FIELDS:
            excused = row.get(_HEALTH_FIELDS[name]) not in (None, "Enabled")
            if not excused:
                result.unknown.append(f"{subject}: {name} is N/A and nothing else answers for it")


def parse_query_gpu_csv(raw: str, *, fields: list[str] | None = None, version: str | None = None) -> NvidiaSmiCsv:
    """Parse ``nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]``.

    Args:
        raw: the output.
        fields: the requested field list; required for ``noheader`` output, optional (and checked for the column
            count) when there is a header. With a header the header's names win, since the driver may answer a
            legacy name under the new one.
        version: the driver version if known ("" otherwise; a ``driver_version`` column fills it).

    Returns:
        :class:`NvidiaSmiCsv` of facts, ungraded (:func:`hwaac.health.gpu_grading.grade_query_csv` grades the rows,
        called by :func:`hwaac.health.checks.check_query_gpu_csv`). ``unknown`` for empty or garbage output, rows of
        the wrong width, a row mostly of placeholders, ``[Unknown Error]`` anywhere, and ``[N/A]`` in a health field
        nothing else answers for (remap vs page retirement, ECC counts vs ECC mode). Never raises.
    """
    result = NvidiaSmiCsv(version=version or "", lost=lost_lines(raw))
    for number, (cells, row) in enumerate(_read_table(raw, result, fields), start=1):
        subject = _row_subject(number, row)
        result.rows.append(row)
        result.subjects.append(subject)
        result.evidence.append(", ".join(f"{n}={c}" for n, c in zip(result.fields, cells, strict=True)))
        _row_placeholders(subject, cells, result.fields, row, result)
        if not result.version and isinstance(row.get("driver_version"), str):
            result.version = str(row["driver_version"])
    return result


# Fields --query-remapped-rows answers besides remapped_rows.* (canonical names).
_REMAP_QUERY_FIELDS = {"pci.bus_id", "uuid", "name", "serial"}


@dataclass
class RemappedRow:
    """One GPU of ``--query-remapped-rows``: counts are rows; pending/failure True/False/None; ``evidence`` the row as
    printed."""

    bus_id: str | None = None
    uuid: str | None = None
    correctable: int | None = None
    uncorrectable: int | None = None
    pending: bool | None = None
    failure: bool | None = None
    evidence: str = ""


@dataclass
class RemappedRows(Graded):
    """``nvidia-smi --query-remapped-rows=...``: one :class:`RemappedRow` per GPU, and the lines saying a GPU is lost.
    Graded by :func:`hwaac.health.gpu_grading.grade_remapped`; UNKNOWN (never PASS) until then."""

    tool: str = "nvidia-smi --query-remapped-rows"
    rows: list[RemappedRow] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    graded: bool = False


def parse_remapped_rows_csv(raw: str, *, fields: list[str] | None = None, version: str | None = None) -> RemappedRows:
    """Parse ``nvidia-smi --query-remapped-rows=gpu_bus_id,...,remapped_rows.pending,remapped_rows.failure
    --format=csv``; pending/failure may be ``0``/``1`` (older drivers) or ``No``/``Yes``.

    Returns:
        :class:`RemappedRows` of facts (graded by :func:`hwaac.health.gpu_grading.grade_remapped`: a pending remap
        FAIL with reset, a failed one FAIL with RMA); ``unknown`` for empty output, no data row, a missing pending
        or failure column, or a placeholder in them (this query exists only for GPUs that remap rows, so they are
        always needed). Never raises.
    """
    table = NvidiaSmiCsv(tool="nvidia-smi --query-remapped-rows")
    pairs = _read_table(raw, table, fields)
    result = RemappedRows(version=version or "", unknown=table.unknown, lost=lost_lines(raw))
    for needed in ("remapped_rows.pending", "remapped_rows.failure"):
        if table.fields and needed not in table.fields:
            result.unknown.append(f"column {needed} missing")
    for name in table.fields:
        if name not in _REMAP_QUERY_FIELDS and not name.startswith("remapped_rows."):
            result.unknown.append(f"column {name} is not a --query-remapped-rows field: another query's output?")
    for number, (cells, row) in enumerate(pairs, start=1):
        entry = RemappedRow(
            bus_id=_str(row.get("pci.bus_id")),
            uuid=_str(row.get("uuid")),
            correctable=_as_int(row.get("remapped_rows.correctable")),
            uncorrectable=_as_int(row.get("remapped_rows.uncorrectable")),
            pending=_as_bool(row.get("remapped_rows.pending")),
            failure=_as_bool(row.get("remapped_rows.failure")),
        )
        entry.evidence = ", ".join(cells)
        result.rows.append(entry)
        subject = f"gpu {entry.bus_id or number}"
        for name, value in (("pending", entry.pending), ("failure", entry.failure)):
            if value is None and f"remapped_rows.{name}" in table.fields:
                result.unknown.append(f"{subject}: remapped_rows.{name} is {row.get(f'remapped_rows.{name}')!r}")
    return result


def _str(value: CsvValue) -> str | None:
    return value if isinstance(value, str) else None


def _as_int(value: CsvValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _as_bool(value: CsvValue) -> bool | None:
    """Yes/No arrive as bool, 0/1 as int (older drivers)."""
    if isinstance(value, bool):
        return value
    if value in (0, 1):
        return bool(value)
    return None


__all__ = [
    "CSV_ALIASES",
    "NvidiaSmiCsv",
    "RemappedRow",
    "RemappedRows",
    "canonical_field",
    "parse_query_gpu_csv",
    "parse_remapped_rows_csv",
]
