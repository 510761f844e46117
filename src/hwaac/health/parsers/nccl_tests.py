"""Reader of nccl-tests stdout (``all_reduce_perf`` and the other ``*_perf`` binaries); the ``-J`` JSON files are read
by :mod:`.nccl_tests_json`, both into :mod:`.nccl_tests_model` with the verdicts of :mod:`.nccl_tests_verdicts`.

The formats, sources and rules in full: ``docs/health-modules.md``, section "nccl-tests stdout".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hwaac.health.parsers.base import no_output
from hwaac.health.parsers.nccl_tests_model import TOOL, NcclRank, NcclRow, NcclRun, NcclTestsResult
from hwaac.health.parsers.nccl_tests_verdicts import judge
from hwaac.health.parsers.numbers import finite_float

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
    if no_output(res, raw, "empty output"):
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
    judge(res, failures, traces, warns, launcher)
    return res
