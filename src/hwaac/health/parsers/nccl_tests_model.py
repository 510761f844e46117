"""The facts model of nccl-tests output: ranks, result rows and the run, as the stdout reader (:mod:`.nccl_tests`)
and the ``-J`` JSON reader (:mod:`.nccl_tests_json`) return them. Units: sizes in bytes, times in microseconds,
bandwidths in GB/s (10^9 bytes/s) as nccl-tests prints them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from hwaac.health.result import ToolResult

TOOL = "nccl-tests"


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
