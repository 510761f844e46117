"""Parser of nvbandwidth's plain-text output (NVIDIA/nvbandwidth ``output.cpp``, ``testcase.cpp``, README).

The formats, sources and rules in full: ``docs/health-modules.md``, section "nvbandwidth".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hwaac.health.result import GradedResult

_VERSION = re.compile(r"^nvbandwidth Version:\s*(\S+)")
_GIT = re.compile(r"^Built from Git version:\s*(.*)$")
_CUDA_RT = re.compile(r"^CUDA Runtime Version:\s*(\d+)")
_CUDA_DRV = re.compile(r"^CUDA Driver Version:\s*(\d+)")
_DRIVER = re.compile(r"^Driver Version:\s*(\S+)")
_DEVICE = re.compile(r"^Device (\d+):\s*(.+?)\s*$")
_RUNNING = re.compile(r"^Running (\S+?)\.?\s*$")
_WAIVING = re.compile(r"^Waiving (\S+?)\.?\s*$")
_WAIVED = re.compile(r"^Waived:\s*(.*)$")
_DESCRIPTION = re.compile(r"\((?P<unit>GB/s|ns|us|MB/s)\)\s*$")
_HEADER = re.compile(r"^\s*\d+(\s+\d+)*\s*$")
_ROW = re.compile(r"^\s*(\d+)\s+(.*\S)\s*$")
_SUM = re.compile(r"^SUM\s+(\S+)\s+(\S+)\s*$")
_STAT = re.compile(r"^([A-Z][A-Z0-9_]+)\s+(\S+)\s+(\S+)\s*$")
_ERROR = re.compile(
    r"(Invalid value when checking the pattern|ASSERT in expression|CUDA_ERROR_\w+|cuda\w* failed)", re.IGNORECASE
)
_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$")
_STATUS_ERROR = re.compile(r"^ERROR:\s*(.*)$")  # Output::addTestcase / setTestcaseStatusAndAddIfNeeded
# Output::printInfo, printed last (v0.6+): both lines whole, so that output cut inside them does not count as finished.
_CLOSING_NOTE = (
    "NOTE: The reported results may not reflect the full capabilities of the platform.",
    "Performance can vary with software drivers, hardware clocks, and system topology.",
)


@dataclass
class NvbwTest:
    """One testcase.

    Attributes:
        name: the testcase (``"host_to_device_memcpy_ce"``), ``""`` when only the description was printed.
        description: the line naming the direction and unit (``"memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)"``).
        unit: ``"GB/s"`` for bandwidth, ``"ns"`` for latency (the description's last parentheses).
        columns: the column indices of the matrix header.
        rows: row index -> values per column (GB/s or ns; None = ``N/A`` or an unmeasured diagonal).
        sum: the ``SUM`` value in ``unit``, None when not printed.
        stats: other statistics of the test (``{"COEFFICIENT_OF_VARIATION": 0.3}``), as printed.
        waived: the test was waived (nothing measured).
        errors: error lines printed inside the test.
    """

    name: str
    description: str = ""
    unit: str = ""
    columns: list[int] = field(default_factory=list)
    rows: dict[int, list[float | None]] = field(default_factory=dict)
    sum: float | None = None
    stats: dict[str, float] = field(default_factory=dict)
    waived: bool = False
    errors: list[str] = field(default_factory=list)

    def values(self) -> list[float]:
        """Every measured value of the matrix (``N/A`` and unmeasured diagonals left out)."""
        return [v for row in self.rows.values() for v in row if v is not None]

    def minimum(self) -> float | None:
        """The lowest measured value (GB/s or ns), None when nothing was measured."""
        return min(self.values(), default=None)


@dataclass
class NvbandwidthResult(GradedResult):
    """nvbandwidth output parsed.

    Attributes:
        git_version: ``Built from Git version``.
        cuda_runtime_version / cuda_driver_version: as printed (``12040`` = CUDA 12.4).
        driver_version: the NVIDIA driver version.
        devices: GPU index -> description (``"NVIDIA A100-SXM4-80GB (00000000:34:00)"``).
        tests: the testcases in order.
        waived: names of waived tests (``""`` for an anonymous ``Waived:`` line).
        notes: lines that were skipped (the ``...`` of an elided paste) and other observations.
        finished: both lines of the closing ``NOTE: The reported results may not reflect ...`` were printed whole (the
            run reached its end; nvbandwidth prints them last since v0.6, ``nvbandwidth.cpp`` ``main``).
    """

    tool: str = "nvbandwidth"
    git_version: str | None = None
    cuda_runtime_version: int | None = None
    cuda_driver_version: int | None = None
    driver_version: str | None = None
    devices: dict[int, str] = field(default_factory=dict)
    tests: list[NvbwTest] = field(default_factory=list)
    waived: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    finished: bool = False

    def test(self, name: str) -> NvbwTest | None:
        """The testcase named ``name``, None when absent."""
        return next((t for t in self.tests if t.name == name), None)


def _cell(text: str) -> float | str | None:
    """A matrix cell: float, None for N/A, or the text when unreadable."""
    if text.upper() == "N/A":
        return None
    return float(text) if _NUMBER.match(text) else text


class _Reader:
    """Line-by-line state: the current test and whether its matrix is still open."""

    def __init__(self, out: NvbandwidthResult) -> None:
        self.out = out
        self.current: NvbwTest | None = None
        self.closing = False  # the first closing NOTE line was read

    def start(self, name: str) -> NvbwTest:
        self.current = NvbwTest(name)
        self.out.tests.append(self.current)
        return self.current

    def line(self, number: int, line: str) -> None:
        stripped = line.strip()
        if not stripped:
            return
        if self._header_line(stripped) or self._test_line(stripped, line, number):
            return
        if stripped == _CLOSING_NOTE[0]:
            self.closing = True
            return
        if stripped == _CLOSING_NOTE[1] and self.closing:
            self.out.finished = True
            return
        if (
            stripped.startswith("NOTE:")
            or stripped.startswith("Performance can vary")
            or stripped.startswith("Additional system-specific")
        ):
            return
        if stripped == "..." or stripped == "…":
            self.out.notes.append(f"line {number}: '...' (lines elided in the recorded output)")
            return
        self.out.notes.append(f"line {number}: not read: {stripped[:160]!r}")

    def _header_line(self, s: str) -> bool:
        out = self.out
        if m := _VERSION.match(s):
            out.version = m.group(1)
        elif m := _GIT.match(s):
            out.git_version = m.group(1).strip() or None
        elif m := _CUDA_RT.match(s):
            out.cuda_runtime_version = int(m.group(1))
        elif m := _CUDA_DRV.match(s):
            out.cuda_driver_version = int(m.group(1))
        elif m := _DRIVER.match(s):
            out.driver_version = m.group(1)
        elif m := _DEVICE.match(s):
            out.devices[int(m.group(1))] = m.group(2)
        else:
            return False
        return True

    def _test_line(self, s: str, line: str, number: int) -> bool:
        out, cur = self.out, self.current
        if m := _RUNNING.match(s):
            self.start(m.group(1))
        elif m := _WAIVING.match(s):
            self.start(m.group(1)).waived = True
            out.waived.append(m.group(1))
            self.current = None
        elif m := _WAIVED.match(s):
            if cur is not None and not cur.rows and not cur.description:
                cur.waived = True
                out.waived.append(cur.name)
                self.current = None
            else:
                out.waived.append("")
        elif _DESCRIPTION.search(s) and ("(row)" in s or "bandwidth" in s or "latency" in s):
            if cur is None or cur.description:
                cur = self.start("")  # a matrix without its Running line (an elided paste)
            cur.description, cur.unit = s, _DESCRIPTION.search(s).group("unit")  # type: ignore[union-attr]
        elif m := _SUM.match(s):
            self._sum(m.group(1), m.group(2), number)
        elif _ERROR.search(s) or _STATUS_ERROR.match(s):
            if cur is None:
                cur = self.start("")
            cur.errors.append(s)
        elif cur is not None and cur.description and not cur.columns and _HEADER.match(line):
            cur.columns = [int(c) for c in s.split()]
        elif cur is not None and cur.columns and (m := _ROW.match(line)) and cur.sum is None:
            self._row(cur, int(m.group(1)), m.group(2).split(), number)
        elif cur is not None and (m := _STAT.match(s)) and m.group(2) == (cur.name or m.group(2)):
            value = _cell(m.group(3))
            if isinstance(value, float):
                cur.stats[m.group(1)] = value
            else:
                out.unknown.append(f"line {number}: statistic {m.group(1)} of {m.group(2)} is not a number: {s!r}")
        else:
            return False
        return True

    def _sum(self, name: str, value: str, number: int) -> None:
        cur = self.current
        if cur is None or (cur.name and cur.name != name):
            cur = self.start(name)
        cur.name = cur.name or name
        parsed = _cell(value)
        if isinstance(parsed, float):
            cur.sum = parsed
        else:
            self.out.unknown.append(f"line {number}: SUM of {name} is not a number: {value!r}")

    def _row(self, cur: NvbwTest, index: int, cells: list[str], number: int) -> None:
        values: list[float | None] = []
        for text in cells:
            value = _cell(text)
            if isinstance(value, str):
                self.out.unknown.append(f"line {number}: test {cur.name or '?'} row {index}: unreadable value {text!r}")
                value = None
            values.append(value)
        if len(values) != len(cur.columns):
            self.out.unknown.append(
                f"line {number}: test {cur.name or '?'} row {index} has {len(values)} values for "
                f"{len(cur.columns)} columns (truncated?)"
            )
        cur.rows[index] = values


def _finish(out: NvbandwidthResult) -> None:
    for test in out.tests:
        label = test.name or "a test without its name"
        if test.name.startswith("device_to_device"):
            # Before v0.8 the self-copy diagonal printed 0.00: not a measurement.
            for row, values in test.rows.items():
                col = test.columns.index(row) if row in test.columns else len(values)
                if col < len(values) and values[col] == 0.0:
                    values[col] = None
        if test.errors:  # graded by hwaac.health.nvbandwidth_grading; an errored test measured nothing
            continue
        if test.waived:
            continue
        if not test.rows:
            out.unknown.append(f"test {label} printed no matrix (killed or truncated)")
        elif test.sum is None:
            out.unknown.append(f"test {label} has no SUM line (truncated?)")
        elif not test.values():
            out.unknown.append(f"test {label} measured nothing (every value N/A)")


def parse_nvbandwidth(raw: str, *, version: str | None = None) -> NvbandwidthResult:
    """Parse nvbandwidth's plain-text output.

    Args:
        raw: stdout (with stderr merged, so that ASSERT lines are seen).
        version: the nvbandwidth version when known; otherwise read from ``nvbandwidth Version:``.

    Returns:
        A :class:`NvbandwidthResult` with each test's matrix (GB/s or ns) and SUM, ungraded
        (:func:`hwaac.health.nvbandwidth_grading.grade_nvbandwidth` grades the errored tests). ``unknown`` reasons
        when nothing was measured (empty, every test waived, not nvbandwidth output), when a test has no matrix or
        no SUM or an unreadable row, when the version block is missing, or (v0.6+) when the closing NOTE is missing
        (the run did not finish). Never raises.
    """
    out = NvbandwidthResult()
    try:
        _read(raw, out, version)
    except Exception as exc:  # the parsers' contract: bad tool output never raises
        out.unknown.append(f"unexpected input shape ({type(exc).__name__}: {exc})"[:300])
    return out


def _read(raw: str, out: NvbandwidthResult, version: str | None) -> None:
    reader = _Reader(out)
    for number, line in enumerate((raw or "").replace("\r", "\n").splitlines(), start=1):
        reader.line(number, line)
    _finish(out)
    if version:
        out.version = version
    if not out.tests:
        out.unknown.append("no testcase in the output: empty or not nvbandwidth output")
        return
    if not any(line.strip().startswith("nvbandwidth Version:") for line in (raw or "").splitlines()[:5]):
        out.unknown.append("the output does not start with 'nvbandwidth Version:': its head is missing")
    parsed = re.match(r"v?(\d+)\.(\d+)", out.version or "")
    if parsed and (int(parsed[1]), int(parsed[2])) >= (0, 6) and not out.finished:
        out.unknown.append(
            "no closing 'NOTE: The reported results ...' line: the run did not finish or the output is truncated"
        )
    if all(t.waived for t in out.tests):
        out.unknown.append(f"every test was waived ({', '.join(t.name for t in out.tests)}): nothing was measured")
