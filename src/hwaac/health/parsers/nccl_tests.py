"""nccl-tests output (``all_reduce_perf`` and the other ``*_perf`` binaries): stdout tables and ``-J`` JSON files.

Shapes (``burn-in-health.md`` §3; NVIDIA/nccl-tests ``src/util.cu`` ``writeDeviceReport``, ``writeResultHeader``,
``writeBenchmarkLine*``, ``writeResultFooter``; ``src/common.cu``):

- a header ``# nThread 1 nGpus 8 minBytes .. maxBytes .. step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1
  validation: 1 graph: 0 [unalign: 0]`` (older releases stop after ``validation``), since 2.17 preceded by
  ``# nccl-tests version X nccl-headers=N nccl-library=N`` and ``# Collective test starting: all_reduce_perf``;
- one ``#  Rank  0 Group  0 Pid 1234 on node01 device  0 [0x18] NVIDIA H100 80GB HBM3`` line per rank (older
  releases: no ``Group``);
- a column header read by name, never by position: ``size count type redop root`` then one block per run
  (out-of-place, then in-place) of ``time algbw busbw #wrong``; older releases print ``error`` (a float, the
  largest deviation) instead of ``#wrong`` and no ``root`` (nccl#318, nccl#527); ``all_gather`` had no ``redop``
  and ``broadcast`` no ``redop`` but ``root``; ``-S 1`` appends a ``timestamp`` column (two tokens,
  ``YYYY-MM-DD HH:MM:SS``); ``-I 1`` adds ``i_min i_max i_p99 i_cv%`` to each block; ``-C 1`` says ``cputime``;
- rows whose numbers the formatter prints with fewer decimals as they grow and in ``e`` notation when too wide
  (``getFloatStr``); ``#wrong`` is ``N/A`` with ``-c 0`` (``reportErrors`` off) and ``%g`` (``2.09715e+06``);
- the footer ``# Out of bounds values : N OK|FAILED`` and ``# Avg bus bandwidth : X [OK|FAILED]`` (OK/FAILED only
  with env ``NCCL_TESTS_MIN_BW``, FAILED when X < 0.9 x that), ``# Collective test concluded: NAME``;
- failures: ``host: Test NCCL failure common.cu:N '...'``, ``host: Test CUDA failure ...``, `` .. host pid N: Test
  failure ...``, ``NCCL WARN`` lines with ``NCCL_DEBUG=WARN|INFO``, and launcher lines (``mpirun`` "exited on
  signal", ``srun: error:``); Open MPI's "There are not enough slots available in the system to satisfy the N
  slots" (no rank started: MPI_NOT_ENOUGH_SLOTS, UNKNOWN and RETEST, a launch configuration problem).

Launcher prefixes are stripped and remembered: ``mpirun --tag-output`` writes ``[1,0]<stdout>:`` (job, rank,
stream; aws-k8s-tester#503), SkyPilot adds ``(head, rank=0, pid=N)`` before it, and ``srun -l`` writes `` 0: ``.

Units: sizes in bytes, times in microseconds, bandwidths in GB/s (10^9 bytes/s) as nccl-tests prints them
(``doc/PERFORMANCE.md``). busbw = algbw x 2(n-1)/n for all-reduce. Thresholds are applied elsewhere, by message
size (:meth:`NcclTestsResult.busbw_at`), never here; "Avg bus bandwidth" averages every size and both runs, so a
sweep's average is far below the plateau (``burn-in-health.md`` §3).

Parsers never raise on bad output: what cannot be read is a reason in ``unknown`` (status UNKNOWN).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from hwaac.health.parsers.numbers import finite_float
from hwaac.health.result import Action, Finding, Status, ToolResult

TOOL = "nccl-tests"

# Launcher prefixes. mpirun --tag-output: "[job,rank]<stdout>:"; SkyPilot puts "(head, rank=0, pid=N) " first.
_MPI_TAG = re.compile(r"^(?:\([^)]*\)\s*)?\[(?P<job>\d+),(?P<rank>\d+)\]<(?P<stream>stdout|stderr|stddiag)>:")
# srun --label: " 0: " (task id, right-aligned); only applied when most lines carry it (see _strip_prefixes).
_SRUN_LABEL = re.compile(r"^\s*(?P<rank>\d+):(?: |$)")

_VERSION = re.compile(
    r"nccl-tests version (?P<v>\S+)(?: \([^)]*\))?\s+nccl-headers=(?P<h>\d+)\s+nccl-library=(?P<l>\d+)"
)
_STARTING = re.compile(r"Collective test starting:\s*(?P<name>\S+)")
_CONCLUDED = re.compile(r"Collective test concluded:\s*(?P<name>\S+)")
_HEADER = re.compile(
    r"nThread\s+(?P<nthread>\d+)\s+nGpus\s+(?P<ngpus>\d+)\s+minBytes\s+(?P<min>\d+)\s+maxBytes\s+(?P<max>\d+)"
    r"\s+step:\s*(?P<step>\d+)\((?P<steptype>factor|bytes)\)"
)
_HEADER_INTS = {
    "warmup_iters": re.compile(r"\bwarmup iters:\s*(\d+)"),
    "iters": re.compile(r"(?<!warmup )(?<!agg )\biters:\s*(\d+)"),
    "agg_iters": re.compile(r"\bagg iters:\s*(\d+)"),
    "validation": re.compile(r"\bvalidation:\s*(\d+)"),
    "graph": re.compile(r"\bgraph:\s*(\d+)"),
    "unalign": re.compile(r"\bunalign:\s*(\d+)"),
}
_RANK = re.compile(
    r"^#\s*Rank\s+(?P<rank>\d+)\s+(?:Group\s+(?P<group>\d+)\s+)?Pid\s+(?P<pid>\d+)\s+on\s+(?P<host>\S+)\s+"
    r"device\s+(?P<dev>\d+)\s+\[(?P<bus>[^\]]*)\]\s*(?P<name>.*?)\s*$"
)
_NCCL_VERSION = re.compile(r"\bNCCL version (?P<v>\d+\.\d+\.\d+\S*)")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<n>\d+)\s*(?P<verdict>OK|FAILED)?")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<bw>\S+)\s*(?P<verdict>OK|FAILED)?")
_ALGO_ENV = re.compile(r"\bNCCL_ALGO set by environment to (?P<algo>\S+)")
_TEST_FAILURE = re.compile(r"Test (?P<kind>NCCL|CUDA) failure")
_TEST_FAILURE_TRACE = re.compile(r"\bTest failure\b")
_TIMEOUT = re.compile(r"\bTest timeout\b")
_NCCL_WARN = re.compile(r"\bNCCL WARN\b")
# Open MPI's help-orte-rmaps-base.txt / prte "not enough slots" message (the count and "slots" may wrap).
_MPI_SLOTS = re.compile(r"not enough slots available in the system to satisfy the\s+(?P<n>\d+|N)\s+slots", re.I)
_LAUNCHER_FAIL = re.compile(r"exited on signal \d+|\bsrun: error:|Invalid number of GPUs")

_BLOCK_START = ("time", "cputime")
_PREFIX_COLUMNS = ("size", "count", "type", "redop", "root")
_ITER_COLUMNS = ("i_min", "i_max", "i_p99", "i_cv%")


@dataclass(frozen=True, slots=True)
class NcclRank:
    """One ``#  Rank`` line: which process and GPU held a rank.

    Attributes:
        rank: global rank. group: ``-g``/``Group`` index, None on releases that did not print it.
        pid: process id. host: host name as printed. device: CUDA device ordinal on that host.
        bus_id: PCI id as printed (``0x18`` on old releases, ``0000:18:00`` since 2.13).
        gpu_name: the CUDA device name, e.g. ``NVIDIA H100 80GB HBM3``.
    """

    rank: int
    group: int | None
    pid: int
    host: str
    device: int
    bus_id: str
    gpu_name: str


@dataclass(frozen=True, slots=True)
class NcclRun:
    """One block of a row: the out-of-place or the in-place run of one size.

    Attributes:
        time_us: time per operation, microseconds (CPU time with ``-C 1``). None when unreadable.
        algbw_gbytes_per_s: algorithm bandwidth, GB/s (10^9 bytes/s).
        busbw_gbytes_per_s: bus bandwidth, GB/s -- what thresholds compare.
        wrong: ``#wrong`` elements; None when printed ``N/A`` (validation off, ``-c 0``) or in the old layout.
        error: the old layout's ``error`` column (largest deviation, a float); None in the new layout.
        per_iter_us: ``-I 1`` columns ``i_min``/``i_max``/``i_p99`` in microseconds and ``i_cv%`` in percent.
    """

    time_us: float | None
    algbw_gbytes_per_s: float | None
    busbw_gbytes_per_s: float | None
    wrong: int | None = None
    error: float | None = None
    per_iter_us: dict[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class NcclRow:
    """One result row (one message size).

    Attributes:
        size_bytes: message size, bytes. count: elements. dtype: ``float``, ``half``... redop: ``sum``...,
            None when the layout had no ``redop``. root: root rank (-1 = none), None when not printed.
        out_of_place, in_place: the two runs (None when that block is absent).
        timestamp: ``-S 1`` wall-clock time as printed, else None.
        printed_by: the launcher's rank tag of the line (``[1,0]`` -> 0, ``srun -l`` label), None without one.
        line: the row as printed (launcher prefix removed).
    """

    size_bytes: int
    count: int
    dtype: str
    redop: str | None
    root: int | None
    out_of_place: NcclRun | None
    in_place: NcclRun | None
    timestamp: str | None = None
    printed_by: int | None = None
    line: str = ""

    def runs(self) -> list[NcclRun]:
        """The runs present, out-of-place first."""
        return [r for r in (self.out_of_place, self.in_place) if r is not None]


@dataclass
class NcclTestsResult(ToolResult):
    """A parsed nccl-tests run (stdout or ``-J`` JSON).

    Attributes (None = not printed by this release or unreadable; the reason is in ``unknown`` when it matters):
        collective: the binary, e.g. ``all_reduce_perf`` (from "Collective test starting/concluded" or the JSON
            args), None when not printed (releases before 2.17 do not print it).
        nccl_tests_version: e.g. ``2.18.0``. nccl_headers / nccl_library: NCCL version codes (22907 = 2.29.7).
        nccl_version: from ``NCCL version 2.26.2+cuda12.8`` lines.
        n_threads, n_gpus: ``-t`` and ``-g``. min_bytes, max_bytes: the sweep, bytes. step_factor / step_bytes.
        warmup_iters, iters, agg_iters, validation (1 = results checked, 0 = ``-c 0``), graph, unalign.
        ranks: the ``#  Rank`` lines. columns: the column header as printed (names), layout ``wrong`` (``#wrong``
            column) or ``error`` (old ``error`` column).
        rows: the result rows. out_of_bounds: the footer count; out_of_bounds_ok: its OK/FAILED.
        avg_busbw_gbytes_per_s: "Avg bus bandwidth", GB/s, the mean over every size and both runs.
        avg_busbw_verdict: ``OK``/``FAILED`` when ``NCCL_TESTS_MIN_BW`` was set, else None.
        algorithms: NCCL_ALGO values seen (``NCCL_DEBUG=INFO`` "NCCL_ALGO set by environment to X", JSON env).
        printing_ranks: launcher rank tags seen on any line (which ranks printed).
        notes: lines kept for people (``Blocking Enabled``, skipped JSON output...), not judged.
        exit_code: the process exit code given by the caller.
        launch_refused: why the launcher started no rank (Open MPI "not enough slots"), "" when it did not refuse.
        slots_requested: the slot count Open MPI names in that message (None when it printed ``N`` or nothing).
    """

    collective: str | None = None
    nccl_tests_version: str | None = None
    nccl_headers: int | None = None
    nccl_library: int | None = None
    nccl_version: str | None = None
    n_threads: int | None = None
    n_gpus: int | None = None
    min_bytes: int | None = None
    max_bytes: int | None = None
    step_factor: int | None = None
    step_bytes: int | None = None
    warmup_iters: int | None = None
    iters: int | None = None
    agg_iters: int | None = None
    validation: int | None = None
    graph: int | None = None
    unalign: int | None = None
    ranks: list[NcclRank] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    layout: Literal["wrong", "error"] | None = None
    rows: list[NcclRow] = field(default_factory=list)
    out_of_bounds: int | None = None
    out_of_bounds_ok: bool | None = None
    avg_busbw_gbytes_per_s: float | None = None
    avg_busbw_verdict: str | None = None
    algorithms: list[str] = field(default_factory=list)
    printing_ranks: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    exit_code: int | None = None
    launch_refused: str = ""
    slots_requested: int | None = None

    @property
    def hosts(self) -> list[str]:
        """Distinct host names of the ranks, in rank order (the node count is its length)."""
        return list(dict.fromkeys(r.host for r in self.ranks))

    @property
    def largest_size_bytes(self) -> int | None:
        """The largest message size with a row, bytes."""
        return max((r.size_bytes for r in self.rows), default=None)

    def busbw_at(self, size_bytes: int, run: Literal["best", "out_of_place", "in_place"] = "best") -> float | None:
        """Bus bandwidth (GB/s) at exactly ``size_bytes``: the better of both runs by default; None if not run."""
        values: list[float] = []
        for row in self.rows:
            if row.size_bytes != size_bytes:
                continue
            picked = row.runs() if run == "best" else [getattr(row, run)]
            values += [r.busbw_gbytes_per_s for r in picked if r is not None and r.busbw_gbytes_per_s is not None]
        return max(values, default=None)

    @property
    def busbw_at_largest_gbytes_per_s(self) -> float | None:
        """The better busbw (GB/s) of both runs at the largest size -- the plateau figure thresholds want."""
        size = self.largest_size_bytes
        return None if size is None else self.busbw_at(size)

    @property
    def peak_busbw_gbytes_per_s(self) -> float | None:
        """The highest busbw (GB/s) of any row and run."""
        values = [r.busbw_gbytes_per_s for row in self.rows for r in row.runs() if r.busbw_gbytes_per_s is not None]
        return max(values, default=None)

    @property
    def wrong_total(self) -> int | None:
        """Sum of ``#wrong`` over all rows; None when no row reported it (``N/A`` or the old layout)."""
        counts = [r.wrong for row in self.rows for r in row.runs() if r.wrong is not None]
        return sum(counts) if counts else None


# ---------------------------------------------------------------------------------------------------------------
# stdout


@dataclass(slots=True)
class _Line:
    text: str
    rank: int | None
    stream: str


def _strip_prefixes(raw: str) -> list[_Line]:
    """Split into lines, removing launcher prefixes and remembering the rank each carried."""
    lines = raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    non_blank = [ln for ln in lines if ln.strip()]
    # srun -l labels look like the start of other lines (" 0: ..."), so only strip them when most lines have one.
    srun = bool(non_blank) and sum(1 for ln in non_blank if _SRUN_LABEL.match(ln)) * 2 > len(non_blank)
    out: list[_Line] = []
    for ln in lines:
        m = _MPI_TAG.match(ln)
        if m:
            out.append(_Line(ln[m.end() :], int(m["rank"]), m["stream"]))
            continue
        if srun:
            m = _SRUN_LABEL.match(ln)
            if m:
                out.append(_Line(ln[m.end() :], int(m["rank"]), "stdout"))
                continue
        out.append(_Line(ln, None, "stdout"))
    return out


@dataclass(slots=True)
class _Table:
    """The column layout read from the header line."""

    columns: list[str]
    prefix: list[str]
    blocks: list[list[str]]
    timestamp: bool

    @property
    def width(self) -> int:
        # The timestamp prints as two tokens ("2026-01-01 10:00:00").
        return len(self.prefix) + sum(len(b) for b in self.blocks) + (2 if self.timestamp else 0)


def _table_from_header(text: str) -> _Table | None:
    """Read the column header (``#  size  count  type ...``); None when the line is not one."""
    body = text.lstrip()
    if not body.startswith("#"):
        return None
    tokens = body[1:].split()
    if len(tokens) < 4 or tokens[0] != "size" or "count" not in tokens[:3]:
        return None
    if not any(t in _BLOCK_START for t in tokens):
        return None
    timestamp = tokens[-1] == "timestamp"
    cols = tokens[:-1] if timestamp else tokens
    first = next(i for i, t in enumerate(cols) if t in _BLOCK_START)
    prefix, blocks = cols[:first], []
    for tok in cols[first:]:
        if tok in _BLOCK_START:
            blocks.append([tok])
        else:
            blocks[-1].append(tok)
    if not set(prefix) <= set(_PREFIX_COLUMNS) or len(blocks) > 2:
        return None
    return _Table(columns=tokens, prefix=prefix, blocks=blocks, timestamp=timestamp)


def _run_from(block: list[str], values: list[str], unknown: list[str], line: str) -> NcclRun:
    got = dict(zip(block, values, strict=True))
    nums = {k: finite_float(v) for k, v in got.items()}
    for key in ("time", "cputime", "algbw", "busbw"):
        if key in got and nums[key] is None:
            unknown.append(f"{key} {got[key]!r} is not a number in row: {line.strip()}")
    wrong: int | None = None
    if "#wrong" in got and got["#wrong"] != "N/A":
        if nums["#wrong"] is None:
            unknown.append(f"#wrong {got['#wrong']!r} is not a number in row: {line.strip()}")
        else:
            wrong = int(nums["#wrong"])
    error = nums.get("error") if "error" in got else None
    if "error" in got and error is None:
        unknown.append(f"error {got['error']!r} is not a number in row: {line.strip()}")
    return NcclRun(
        time_us=nums.get("time", nums.get("cputime")),
        algbw_gbytes_per_s=nums.get("algbw"),
        busbw_gbytes_per_s=nums.get("busbw"),
        wrong=wrong,
        error=error,
        per_iter_us={k: nums[k] for k in _ITER_COLUMNS if k in got},
    )


def _row_from(table: _Table, line: _Line, unknown: list[str]) -> NcclRow | None:
    """A data row per the header, or None when the line is not one (an interleaved log line)."""
    tokens = line.text.split()
    if len(tokens) < 3 or not tokens[0].isdigit() or not tokens[1].isdigit():
        return None
    if len(tokens) != table.width:
        unknown.append(f"row has {len(tokens)} fields, the header {table.width}: {line.text.strip()}")
        return None
    pre = dict(zip(table.prefix, tokens[: len(table.prefix)], strict=True))
    pos = len(table.prefix)
    runs: list[NcclRun] = []
    for block in table.blocks:
        runs.append(_run_from(block, tokens[pos : pos + len(block)], unknown, line.text))
        pos += len(block)
    root = pre.get("root")
    if root is not None and not re.fullmatch(r"-?\d+", root):
        unknown.append(f"root {root!r} is not a number in row: {line.text.strip()}")
        root = None
    return NcclRow(
        size_bytes=int(pre["size"]),
        count=int(pre["count"]),
        dtype=pre.get("type", ""),
        redop=pre.get("redop"),
        root=None if root is None else int(root),
        out_of_place=runs[0] if runs else None,
        in_place=runs[1] if len(runs) > 1 else None,
        timestamp=" ".join(tokens[pos:]) if table.timestamp else None,
        printed_by=line.rank,
        line=line.text.rstrip(),
    )


def _read_header(text: str, res: NcclTestsResult) -> None:
    m = _HEADER.search(text)
    if m is None:
        return
    res.n_threads, res.n_gpus = int(m["nthread"]), int(m["ngpus"])
    res.min_bytes, res.max_bytes = int(m["min"]), int(m["max"])
    if m["steptype"] == "factor":
        res.step_factor = int(m["step"])
    else:
        res.step_bytes = int(m["step"])
    for name, rx in _HEADER_INTS.items():
        found = rx.search(text)
        if found:
            setattr(res, name, int(found.group(1)))


def parse_nccl_tests(raw: str, *, version: str | None = None, exit_code: int | None = None) -> NcclTestsResult:
    """Parse the stdout (and stderr, if merged) of an nccl-tests ``*_perf`` binary.

    Args:
        raw: the output as captured; launcher prefixes (mpirun ``--tag-output``, SkyPilot, ``srun -l``) are fine.
        version: the nccl-tests version when the caller knows it (the output's own version line wins).
        exit_code: the process exit code, when known; it only ever makes the result worse.

    Returns:
        :class:`NcclTestsResult`. Status FAIL on ``#wrong`` > 0, out-of-bounds FAILED, ``Avg bus bandwidth ...
        FAILED`` (``NCCL_TESTS_MIN_BW``), "Test NCCL/CUDA failure", a killed rank, or NCCL WARN lines in a run that
        did not finish; WARN when results were not checked (``-c 0``) or NCCL warned in a finished run; UNKNOWN
        when the header, table, rows, out-of-bounds or average line is missing or unreadable.

    Raises:
        Nothing: bad output becomes ``unknown`` reasons.
    """
    res = NcclTestsResult(tool=TOOL, version=version or "", exit_code=exit_code)
    if not isinstance(raw, str) or not raw.strip():
        res.unknown.append("empty output")
        return res
    lines = _strip_prefixes(raw)
    res.printing_ranks = sorted({ln.rank for ln in lines if ln.rank is not None})

    table: _Table | None = None
    tables = headers = 0
    started = concluded = False
    failures: list[str] = []
    warns: list[str] = []
    launcher: list[str] = []
    traces: list[str] = []
    for ln in lines:
        text = ln.text
        stripped = text.strip()
        if not stripped:
            continue
        if m := _VERSION.search(text):
            res.nccl_tests_version = m["v"]
            res.version = m["v"]
            res.nccl_headers, res.nccl_library = int(m["h"]), int(m["l"])
        if m := _STARTING.search(text):
            res.collective = res.collective or m["name"]
            started = True
        if m := _CONCLUDED.search(text):
            res.collective = res.collective or m["name"]
            concluded = True
        if _HEADER.search(text):
            headers += 1
            _read_header(text, res)
            continue
        if m := _RANK.match(stripped):
            res.ranks.append(
                NcclRank(
                    rank=int(m["rank"]),
                    group=None if m["group"] is None else int(m["group"]),
                    pid=int(m["pid"]),
                    host=m["host"],
                    device=int(m["dev"]),
                    bus_id=m["bus"],
                    gpu_name=m["name"],
                )
            )
            continue
        if m := _NCCL_VERSION.search(text):
            res.nccl_version = res.nccl_version or m["v"]
        if (m := _ALGO_ENV.search(text)) and m["algo"] not in res.algorithms:
            res.algorithms.append(m["algo"])
        if stripped.startswith("# Blocking Enabled") or "Writing JSON output" in text or "skipping json" in text:
            res.notes.append(stripped)
        if (new := _table_from_header(text)) is not None:
            tables += 1
            table = new
            res.columns = new.columns
            res.layout = "error" if any("error" in b for b in new.blocks) else "wrong"
            continue
        if m := _OOB.match(stripped):
            res.out_of_bounds = int(m["n"])
            res.out_of_bounds_ok = None if m["verdict"] is None else m["verdict"] == "OK"
            continue
        if m := _AVG.match(stripped):
            res.avg_busbw_gbytes_per_s = finite_float(m["bw"])
            if res.avg_busbw_gbytes_per_s is None:
                res.unknown.append(f"Avg bus bandwidth {m['bw']!r} is not a number")
            res.avg_busbw_verdict = m["verdict"]
            continue
        if _TEST_FAILURE.search(text) or _TIMEOUT.search(text):
            failures.append(stripped)
            continue
        if _TEST_FAILURE_TRACE.search(text):
            traces.append(stripped)
            continue
        if _NCCL_WARN.search(text):
            warns.append(stripped)
            continue
        if _LAUNCHER_FAIL.search(text):
            launcher.append(stripped)
            continue
        if table is not None and not stripped.startswith("#"):
            row = _row_from(table, ln, res.unknown)
            if row is not None:
                res.rows.append(row)

    if headers > 1 or tables > 1:
        res.unknown.append(f"output holds {max(headers, tables)} runs; parse one run at a time")
    # Releases that announce the test (2.17+) also conclude it; a missing last line means the output was cut.
    if started and not concluded and res.avg_busbw_gbytes_per_s is not None:
        res.unknown.append("no '# Collective test concluded' line although the test was announced: output cut short")
    if m := _MPI_SLOTS.search(raw):
        res.launch_refused = "not enough slots"
        res.slots_requested = int(m["n"]) if m["n"].isdigit() else None
    _judge(res, failures, traces, warns, launcher)
    return res


def _judge(
    res: NcclTestsResult,
    failures: list[str],
    traces: list[str],
    warns: list[str],
    launcher: list[str],
    *,
    json_errors: list[str] | None = None,
) -> None:
    """Turn what was read into findings and UNKNOWN reasons (the tool's own verdicts only, no thresholds).

    ``json_errors`` is None for stdout and the ``errors`` list of a ``-J`` file otherwise.
    """
    finished = res.avg_busbw_gbytes_per_s is not None
    from_json = json_errors is not None
    if res.launch_refused and not res.rows:
        asked = f"the {res.slots_requested} slots" if res.slots_requested else "the slots"
        res.findings.append(
            Finding(
                "MPI_NOT_ENOUGH_SLOTS",
                Status.UNKNOWN,
                f"mpirun started no rank: Open MPI has fewer slots than {asked} requested (give each host its GPU "
                "count: hostfile 'slots=N' or '--host host:N'): a launch configuration problem, not a hardware "
                "verdict; fix the run and retest",
                evidence="not enough slots available in the system to satisfy "
                + (f"the {res.slots_requested} slots" if res.slots_requested else "the requested slots"),
                action=Action.RETEST,
            )
        )
        return
    if failures:
        kind = "NCCL" if any("NCCL failure" in f for f in failures) else "CUDA"
        code = "NCCL_TEST_TIMEOUT" if all("Test timeout" in f for f in failures) else f"NCCL_TEST_{kind}_FAILURE"
        res.findings.append(
            Finding(
                code,
                Status.FAIL,
                f"nccl-tests stopped: {failures[0]}",
                evidence="\n".join(failures + traces),
                action=Action.RETEST,
            )
        )
    if launcher:
        res.findings.append(
            Finding(
                "NCCL_LAUNCHER_FAILURE",
                Status.FAIL,
                f"a rank of the run failed: {launcher[0]}",
                evidence="\n".join(launcher),
                action=Action.RETEST,
            )
        )
    wrong_rows = [row for row in res.rows if any((r.wrong or 0) > 0 for r in row.runs())]
    if wrong_rows:
        total = res.wrong_total
        res.findings.append(
            Finding(
                "NCCL_WRONG_RESULTS",
                Status.FAIL,
                f"{total} wrong elements in {len(wrong_rows)} message size(s): the collective returned bad data",
                evidence="\n".join(r.line for r in wrong_rows),
                action=Action.REBOOT,
            )
        )
    if (res.out_of_bounds_ok is False or (res.out_of_bounds or 0) > 0) and not wrong_rows:
        res.findings.append(
            Finding(
                "NCCL_OUT_OF_BOUNDS",
                Status.FAIL,
                f"{res.out_of_bounds} result(s) out of bounds: the collective returned bad data",
                evidence=f"# Out of bounds values : {res.out_of_bounds} FAILED",
                action=Action.REBOOT,
            )
        )
    if res.avg_busbw_verdict == "FAILED":
        res.findings.append(
            Finding(
                "NCCL_AVG_BUSBW_BELOW_MIN",
                Status.FAIL,
                f"Avg bus bandwidth {res.avg_busbw_gbytes_per_s} GB/s is below 0.9 x NCCL_TESTS_MIN_BW",
                evidence=f"# Avg bus bandwidth : {res.avg_busbw_gbytes_per_s} FAILED",
                action=Action.RETEST,
            )
        )
    if traces and not failures and not any(f.status == Status.FAIL for f in res.findings):
        res.findings.append(
            Finding(
                "NCCL_TEST_FAILURE",
                Status.FAIL,
                f"nccl-tests reported a failure: {traces[0]}",
                evidence="\n".join(traces),
                action=Action.RETEST,
            )
        )
    if warns:
        # NCCL WARN also covers benign fallbacks; it decides only when the run did not finish.
        # In a run that stopped, the last warning is the one closest to the failure.
        status = Status.WARN if finished and not failures else Status.FAIL
        shown = warns[0] if status == Status.WARN else warns[-1]
        res.findings.append(
            Finding("NCCL_WARN", status, f"NCCL warned: {shown}", evidence="\n".join(warns), action=Action.RETEST)
        )
    if json_errors:
        res.findings.append(
            Finding(
                "NCCL_ERROR_REPORTED",
                Status.WARN if finished else Status.FAIL,
                f"nccl-tests recorded an NCCL error: {json_errors[0]}",
                evidence="\n".join(json_errors),
                action=Action.RETEST,
            )
        )
    checked = [r.wrong for row in res.rows for r in row.runs()]
    if res.layout == "wrong" and res.rows and all(w is None for w in checked):
        res.findings.append(
            Finding(
                "NCCL_VALIDATION_DISABLED",
                Status.WARN,
                "results were not checked (#wrong is N/A, nccl-tests ran with -c 0): bandwidth only",
                evidence=res.rows[0].line,
            )
        )
    failed = any(f.status == Status.FAIL for f in res.findings)
    if from_json:
        if not res.rows:
            res.unknown.append("'results' holds no readable result")
        if res.out_of_bounds is None:
            res.unknown.append("no 'out_of_bounds' count")
        if not finished:
            res.unknown.append("no 'average_bus_bandwidth' figure")
    else:
        if res.n_gpus is None and not failed and not res.unknown:
            res.unknown.append("no '# nThread ... nGpus ...' header line")
        if not res.columns:
            if not failed:
                res.unknown.append("no results table header ('#  size  count  type ...')")
        elif not res.rows and not failed:
            res.unknown.append("no result rows under the table header")
        if res.columns and res.out_of_bounds is None and not failed:
            res.unknown.append("no '# Out of bounds values' line: the run did not finish or the output is truncated")
        if res.columns and not finished and not failed:
            res.unknown.append("no '# Avg bus bandwidth' line: the run did not finish or the output is truncated")
    if res.exit_code not in (None, 0) and res.status() < Status.UNKNOWN:
        res.findings.append(
            Finding(
                "NCCL_EXIT_NONZERO",
                Status.FAIL,
                f"nccl-tests exited with code {res.exit_code} although its output shows no failure",
                action=Action.RETEST,
            )
        )


# ---------------------------------------------------------------------------------------------------------------
# -J JSON (util.cu, JSON_FILE_VERSION 2)


def _json_num(value: Any, what: str, unknown: list[str]) -> float | None:
    """A JSON number; util.cu writes NaN as the string "nan" (jsonDouble) -- that and anything else is None."""
    if isinstance(value, bool) or value is None:
        if value is not None:
            unknown.append(f"{what} is a boolean")
        return None
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    unknown.append(f"{what} {value!r} is not a finite number")
    return None


def _json_bool(value: Any) -> bool | None:
    """util.cu's jsonBool writes the strings "true"/"false"; accept real booleans too."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


def _json_run(obj: Any, where: str, unknown: list[str]) -> NcclRun | None:
    if obj is None:
        return None
    if not isinstance(obj, dict):
        unknown.append(f"{where} is not an object")
        return None
    time_key = "time" if "time" in obj else "cpu_time"
    wrong_raw = obj.get("nwrong")
    wrong = _json_num(wrong_raw, f"{where}.nwrong", unknown) if wrong_raw is not None else None
    return NcclRun(
        time_us=_json_num(obj.get(time_key), f"{where}.{time_key}", unknown),
        algbw_gbytes_per_s=_json_num(obj.get("alg_bw"), f"{where}.alg_bw", unknown),
        busbw_gbytes_per_s=_json_num(obj.get("bus_bw"), f"{where}.bus_bw", unknown),
        wrong=None if wrong is None else int(wrong),
    )


def _json_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)  # root is written as the string "%6i" ("    -1")
    return None


def parse_nccl_tests_json(raw: str, *, version: str | None = None, exit_code: int | None = None) -> NcclTestsResult:
    """Parse the file nccl-tests writes with ``-J out.json`` into the same :class:`NcclTestsResult`.

    Keys (``util.cu``, JSON_FILE_VERSION 2): ``config`` {nthreads, ngpus, minimum_bytes, maximum_bytes,
    step_factor | step_bytes, warmup_iters, iterations, aggregated_iterations, validation, graph, ...},
    ``devices`` [{rank, group, pid, hostname, device, device_hex, device_info}], ``results`` [{size, count, type,
    redop, root (a string), out_of_place {time | cpu_time, alg_bw, bus_bw, nwrong (null with -c 0)}, in_place
    {...}}], ``out_of_bounds`` {count, okay}, ``average_bus_bandwidth`` {bandwidth, okay: bool | "unchecked"},
    ``errors`` [..], ``args``, ``env``, ``nccl_version``. util.cu writes booleans as the strings "true"/"false"
    and NaN as "nan"; both are handled.

    Raises:
        Nothing: invalid JSON or missing keys become ``unknown`` reasons.
    """
    res = NcclTestsResult(tool=f"{TOOL} -J", version=version or "", exit_code=exit_code)
    try:
        doc = json.loads(raw) if isinstance(raw, str) and raw.strip() else None
    except ValueError as exc:
        res.unknown.append(f"not valid JSON: {exc}")
        doc = None
    if not isinstance(doc, dict):
        if not res.unknown:
            res.unknown.append("empty output" if not (isinstance(raw, str) and raw.strip()) else "not a JSON object")
        return res

    args = doc.get("args")
    if isinstance(args, list) and args and isinstance(args[0], str):
        res.collective = args[0].rsplit("/", 1)[-1]
    env = doc.get("env")
    if isinstance(env, list):
        for item in env:
            if isinstance(item, str) and item.startswith("NCCL_ALGO="):
                res.algorithms.append(item.split("=", 1)[1])
    if isinstance(doc.get("nccl_version"), int):
        res.nccl_library = doc["nccl_version"]

    cfg = doc.get("config")
    if isinstance(cfg, dict):
        for attr, key in (
            ("n_threads", "nthreads"),
            ("n_gpus", "ngpus"),
            ("min_bytes", "minimum_bytes"),
            ("max_bytes", "maximum_bytes"),
            ("step_factor", "step_factor"),
            ("step_bytes", "step_bytes"),
            ("warmup_iters", "warmup_iters"),
            ("iters", "iterations"),
            ("agg_iters", "aggregated_iterations"),
            ("validation", "validation"),
            ("graph", "graph"),
        ):
            setattr(res, attr, _json_int(cfg.get(key)))
    else:
        res.unknown.append("no 'config' object")

    # util.cu writes "devices" inside "config" (writeDeviceReport closes config after the device list).
    devices = (cfg.get("devices") if isinstance(cfg, dict) else None) or doc.get("devices") or []
    for i, dev in enumerate(devices if isinstance(devices, list) else []):
        if not isinstance(dev, dict) or _json_int(dev.get("rank")) is None:
            res.unknown.append(f"devices[{i}] is unreadable")
            continue
        res.ranks.append(
            NcclRank(
                rank=_json_int(dev.get("rank")) or 0,
                group=_json_int(dev.get("group")),
                pid=_json_int(dev.get("pid")) or 0,
                host=str(dev.get("hostname", "")),
                device=_json_int(dev.get("device")) or 0,
                bus_id=str(dev.get("device_hex", "")),
                gpu_name=str(dev.get("device_info", "")),
            )
        )

    results = doc.get("results")
    if not isinstance(results, list):
        res.unknown.append("no 'results' list")
        results = []
    for i, item in enumerate(results):
        if not isinstance(item, dict) or _json_int(item.get("size")) is None:
            res.unknown.append(f"results[{i}] has no size")
            continue
        oop = _json_run(item.get("out_of_place"), f"results[{i}].out_of_place", res.unknown)
        inp = _json_run(item.get("in_place"), f"results[{i}].in_place", res.unknown)
        res.rows.append(
            NcclRow(
                size_bytes=_json_int(item.get("size")) or 0,
                count=_json_int(item.get("count")) or 0,
                dtype=str(item.get("type", "")),
                redop=item.get("redop"),
                root=_json_int(item.get("root")),
                out_of_place=oop,
                in_place=inp,
                line=json.dumps(item, separators=(",", ":")),
            )
        )
    res.layout = "wrong"

    oob = doc.get("out_of_bounds")
    if isinstance(oob, dict):
        res.out_of_bounds = _json_int(oob.get("count"))
        res.out_of_bounds_ok = _json_bool(oob.get("okay"))
    avg = doc.get("average_bus_bandwidth")
    if isinstance(avg, dict):
        res.avg_busbw_gbytes_per_s = _json_num(avg.get("bandwidth"), "average_bus_bandwidth.bandwidth", res.unknown)
        okay = avg.get("okay")
        res.avg_busbw_verdict = None if okay == "unchecked" else {True: "OK", False: "FAILED"}.get(_json_bool(okay))
    errors = [e for e in doc.get("errors") or [] if isinstance(e, str) and e.strip()]
    _judge(res, [], [], [], [], json_errors=errors)
    return res
