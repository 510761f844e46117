"""Reader of the ``dcgmi diag -r N`` table (no ``-j``): the same facts as :mod:`.dcgm` reads from the JSON.

The layouts (DCGM 4.x: a summary status and one ``GPUn: <status>`` line per entity; older: ``<status> - GPUs: ids``
per test), drawn from the recorded tables, and what makes a read incomplete: ``docs/health-dcgm-table.md``. The
table carries no error ids or severities, so its warnings are graded as DCGM 2.x string warnings are
(:mod:`hwaac.health.dcgm_grading`). Never raises.
"""

from __future__ import annotations

import re

from hwaac.health.parsers.base import no_output
from hwaac.health.parsers.dcgm_model import (
    STATUS_WORDS,
    DcgmDiagResult,
    DcgmTestResult,
    DcgmWarning,
    guarded,
    severity_enum_for,
)

_ROW = re.compile(r"^\|(?P<name>[^|]*)\|(?P<value>.*)\|$")
_CATEGORY = re.compile(r"^[|+]-{3,}\s+(?P<cat>[A-Za-z][\w ]*?)\s+-+\+-+[|+]$")
_BORDER = re.compile(r"^\+[-=]+\+[-=]+\+$")
_STATUS = "|".join(re.escape(w.title()) for w in STATUS_WORDS)
_SUMMARY = re.compile(rf"^(?P<status>{_STATUS}|Not Run)(?: - (?:(?P<all>All)|GPUs?: (?P<ids>\d+(?:, *\d+)*)))?$", re.I)
_ENTITY = re.compile(rf"^(?P<group>[A-Za-z]+)(?P<id>\d+): (?P<status>{_STATUS}|Not Run)$", re.I)
_ATTRIBUTES = ("Info", "Warning", "Error")
_NOTES = ("Successfully ran diagnostic for group.",)


class _Reader:
    def __init__(self, out: DcgmDiagResult):
        self.out = out
        self.category = ""
        self.test: list[DcgmTestResult] = []  # the results of the test being read (one per status line)
        self.summary: DcgmTestResult | None = None  # 4.x: the node-wide summary, replaced by its entity lines
        self.attribute: tuple[str, list[str]] | None = None  # Info/Warning/Error and its wrapped chunks
        self.header = self.closed = False

    def line(self, number: int, text: str) -> None:
        if not text.strip():
            return
        stripped = text.strip()
        if (cat := _CATEGORY.match(stripped)) is not None:
            self.flush()
            self.category, self.test, self.summary = cat["cat"].strip(), [], None
            return
        if _BORDER.match(stripped):
            self.flush()
            self.closed = self.header and bool(self.out.results or self.category)
            return
        row = _ROW.match(stripped)
        if row is None:
            self.flush()
            if stripped in _NOTES:
                self.out.notes.append(stripped)
            elif self.attribute is None and not self.closed:
                self.out.unknown.append(f"line {number} is not a table row: {stripped[:120]!r}")
            return
        self.closed = False
        name, cell = row["name"].strip(), row["value"][1:-1] if len(row["value"]) > 1 else row["value"]
        if name == "Diagnostic" and cell.strip() == "Result":
            self.header = True
        elif name:
            self.named(number, name, cell)
        else:
            self.continued(number, cell)

    def named(self, number: int, name: str, cell: str) -> None:
        self.flush()
        value = cell.strip()
        if self.category == "Metadata":
            if name == "DCGM Version":
                self.out.version = self.out.version or value
            elif name == "Driver Version Detected":
                self.out.driver_version = value or None
            else:
                self.out.notes.append(f"{name}: {value}")
            return
        if name in _ATTRIBUTES:
            self.attribute = (name, [cell])
            return
        self.test, self.summary = [], None
        summary = _SUMMARY.match(value)
        if summary is None:
            self.out.unknown.append(f"line {number}: test {name!r}: unrecognised status {value!r}")
            self.add(DcgmTestResult(name, self.category, "", [], "", None))
            return
        ids = [int(i) for i in summary["ids"].split(",")] if summary["ids"] else []
        result = self.add(
            DcgmTestResult(
                name, self.category, "GPU" if ids else "", ids, STATUS_WORDS[summary["status"].lower()], None
            )
        )
        if not summary["all"] and not ids:
            self.summary = result  # 4.x: entity lines may follow

    def continued(self, number: int, cell: str) -> None:
        value = cell.strip()
        if self.attribute is not None:
            self.attribute[1].append(cell)
            return
        summary, entity = _SUMMARY.match(value), _ENTITY.match(value)
        if self.test and summary is not None and summary["ids"]:
            first = self.test[0]
            ids = [int(i) for i in summary["ids"].split(",")]
            self.add(
                DcgmTestResult(first.test, first.category, "GPU", ids, STATUS_WORDS[summary["status"].lower()], None)
            )
        elif self.test and entity is not None:
            first = self.test[0]
            if self.summary is not None:  # the entity lines replace the node-wide summary
                self.out.results.remove(self.summary)
                self.test.remove(self.summary)
                self.summary = None
            group = entity["group"].upper() if entity["group"].upper() == "GPU" else entity["group"]
            self.add(
                DcgmTestResult(
                    first.test, first.category, group, [int(entity["id"])], STATUS_WORDS[entity["status"].lower()], None
                )
            )
        else:
            self.out.unknown.append(f"line {number}: a continuation with nothing to continue: {value[:120]!r}")

    def add(self, result: DcgmTestResult) -> DcgmTestResult:
        self.out.results.append(result)
        self.test.append(result)
        return result

    def flush(self) -> None:
        """Attach a finished Info/Warning/Error block to the test above it."""
        if self.attribute is None:
            return
        kind, chunks = self.attribute
        self.attribute = None
        text = " ".join("".join(chunks).split())
        if not self.test:  # an Error with no test above it: a failed node-wide result
            self.add(DcgmTestResult(kind, self.category, "", [], "Fail" if kind == "Error" else "Pass", None))
        if kind == "Info":
            for result in self.test:
                result.info.append(text)
            return
        failing = [r for r in self.test if r.status in ("Fail", "Warn")] or self.test
        for result in failing:
            result.warnings.append(DcgmWarning(message=text, severity_name="UNGRADED"))


def parse_diag_table(raw: str, *, exit_code: int | None = None, version: str | None = None) -> DcgmDiagResult:
    """Read the ``dcgmi diag -r N`` table into the facts :func:`hwaac.health.parsers.dcgm.parse_diag_json` returns.

    Args:
        raw: the command's stdout. exit_code: its exit status when known. version: the DCGM version when known (it
            wins over the table's ``DCGM Version``).

    Returns:
        A :class:`DcgmDiagResult` (tool ``dcgmi diag (table)``, layout ``3.x`` or ``4.x`` by the DCGM version, 3.x
        when the table names none), ungraded: :func:`hwaac.health.checks.check_dcgm` grades it. Never raises.
    """
    out = DcgmDiagResult(tool="dcgmi diag (table)", exit_code=exit_code)
    guarded(out, _read, raw, out, version)
    return out


def _read(raw: str, out: DcgmDiagResult, version: str | None) -> None:
    if no_output(out, raw, "empty output"):
        return
    reader = _Reader(out)
    for number, text in enumerate(raw.splitlines(), start=1):
        reader.line(number, text)
    reader.flush()
    if version:
        out.version = version
    major = re.match(r"\s*(\d+)", out.version or "")
    out.layout = "4.x" if major and int(major.group(1)) >= 4 else "3.x"
    out.severity_enum = severity_enum_for(out.version or None, out.layout)
    if not reader.header:
        out.unknown.append("no '| Diagnostic | Result |' header row: not the whole table")
    if not reader.closed:
        out.unknown.append("no closing border after the last row: the output is cut")
    if not out.results:
        out.unknown.append("the table holds no test result")
    elif not any(r.status in ("Pass", "Fail", "Warn") for r in out.results):
        out.unknown.append("no test passed: every result is Skip or Not Run, so nothing was verified")


__all__ = ["parse_diag_table"]
