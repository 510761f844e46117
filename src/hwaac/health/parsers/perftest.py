"""perftest output (``ib_write_bw``, ``ib_read_bw``, ``ib_send_bw``, ``ib_atomic_bw`` and the ``_lat`` variants).

The formats, sources and rules in full: ``docs/health-modules.md``, section "perftest".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hwaac.health.parsers.base import no_output
from hwaac.health.parsers.numbers import finite_float
from hwaac.health.result import GradedResult

TOOL = "perftest"

# Gb/s per printed unit: Gb/sec is 10^9 bits/s (125000000 bytes/s); MB/sec and MiB/sec are 2^20 bytes/s.
GBITS_PER_UNIT = {"Gb/sec": 1.0, "MB/sec": 2**20 * 8 / 1e9, "MiB/sec": 2**20 * 8 / 1e9}

_DASHES = re.compile(r"^\s*-{20,}\s*$")
_TITLE = re.compile(r"^\s*(?P<title>\S.*?\b(?:BW|Latency)(?: Test)?)\s*$")
_BANNER_PAIR = re.compile(r"(?:^|\t|\s{2,})\s*(?P<key>[A-Za-z][A-Za-z0-9 .*/()_\-]*?)\s*:\s*(?P<value>\S+)")
_ADDRESS = re.compile(r"^\s*(?:local|remote) address:|^\s*M?GID:")
_COLUMN = re.compile(
    r"#bytes|#iterations|#sl|BW peak\[[^\]]+\]|BW average\[[^\]]+\]|MsgRate(?: Port\d)?\[Mpps\]|BW Port\d\[[^\]]+\]"
    r"|t_\w+\[(?:usec|cycles)\]|99(?:\.9)?% percentile\[(?:usec|cycles)\]|tps average|CPU_Util\[%\]"
)
_DURATION = re.compile(r"BW peak won't be measured")
_CPU_FREQ = re.compile(r"Conflicting CPU frequency values detected|CPU Frequency is not max|Test integrity may be")
_GPU = re.compile(
    r"\bCUDA\b|cuMemAlloc|GPU buffer|ROCm|use_cuda|use_rocm|device name = \[|Picking device No|Listing all CUDA"
)
_GPU_NAME = re.compile(r"device name = \[(?P<name>[^\]]+)\]|Name: (?P<rocm>[^,]+),")

# (code, pattern): the first match wins for each line; the code's severity is perftest_grading's.
ERROR_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "PERFTEST_CONNECT_FAILED",
        re.compile(
            r"Couldn't connect to|Unable to open file descriptor for socket connection|Unable to init the socket"
            r"|Unable to set up socket connection|rdma_bind_addr failed|Unable to create RDMA_CM resources"
            r"|Failed to exchange dat|Couldn't read remote address|Couldn't resolve"
        ),
    ),
    (
        "PERFTEST_LINK_DOWN",
        re.compile(r"state is Down|Couldn't set the link layer|Unable to Connect the HCA's through the link"),
    ),
    (
        "PERFTEST_COMPLETION_ERROR",
        re.compile(r"Completion with error|Failed status \d+|transport retry counter exceeded|Problems with warm up"),
    ),
    (
        "PERFTEST_DEVICE_ERROR",
        re.compile(
            r"Couldn't get context for the device|Couldn't create IB resources|No IB devices found"
            r"|IB device \S+ not found|Couldn't allocate|Couldn't create"
        ),
    ),
    (
        "PERFTEST_ERROR",
        re.compile(r"^\s*(?:Failed to|Couldn't|Unable to|Error\b|ERROR\b)|\bfailed\b"),
    ),
]


@dataclass(frozen=True, slots=True)
class PerftestBwRow:
    """One bandwidth row.

    Attributes:
        size_bytes: message size, bytes. iterations: iterations (in duration mode, the messages completed).
        bw_peak_gbits_per_s: peak bandwidth, Gb/s; None when not measured (duration mode or ``--noPeak``
            prints 0.00) or unreadable.
        bw_average_gbits_per_s: average bandwidth, Gb/s (both directions summed with ``-b``).
        msg_rate_mpps: message rate, Mpps.
        bw_peak_printed, bw_average_printed: the values as printed, in ``unit``. unit: ``Gb/sec``, ``MB/sec``
            or ``MiB/sec``.
        extra: other columns by header name (``#sl``, per-port figures, ``CPU_Util[%]``).
        line: the row as printed.
    """

    size_bytes: int
    iterations: int
    bw_peak_gbits_per_s: float | None
    bw_average_gbits_per_s: float | None
    msg_rate_mpps: float | None
    bw_peak_printed: float | None
    bw_average_printed: float | None
    unit: str
    extra: dict[str, float | None] = field(default_factory=dict)
    line: str = ""


@dataclass(frozen=True, slots=True)
class PerftestLatRow:
    """One latency row; times in microseconds (None when the release did not print the column).

    Attributes:
        size_bytes, iterations; t_min_us, t_max_us, t_typical_us (median), t_avg_us, t_stdev_us, p99_us, p999_us;
        tps_average: transactions per second (duration mode); line: the row as printed.
    """

    size_bytes: int
    iterations: int
    t_min_us: float | None = None
    t_max_us: float | None = None
    t_typical_us: float | None = None
    t_avg_us: float | None = None
    t_stdev_us: float | None = None
    p99_us: float | None = None
    p999_us: float | None = None
    tps_average: float | None = None
    line: str = ""


@dataclass
class PerftestResult(GradedResult):
    """A parsed perftest run (one side: client or server).

    Attributes:
        test: the banner title, e.g. ``RDMA_Write BW Test``. kind: ``bw`` or ``lat``. verb: ``write``, ``read``,
            ``send``, ``atomic`` (None when the title is unknown). bidirectional: ``-b`` (title says
            Bidirectional).
        banner: every ``Key : value`` of the banner as printed (keys stripped), e.g. ``{"Device": "mlx5_0"}``.
        device, num_qps, transport, connection_type, link_type, mtu_bytes, gid_index, tx_depth, cq_moderation,
            max_inline_bytes, outstand_reads, data_exchange, tos, using_srq, dual_port, rdma_cm_qps: typed views
            of the banner (None when not printed).
        duration_mode: the ``-D`` warning was printed (peak not measured).
        gpudirect: GPU memory was used (``--use_cuda``/``--use_rocm`` lines); gpu_name: the GPU it named.
        unit: the bandwidth unit printed. bw_rows / lat_rows: the table. notes: lines inside or around the table
            that are not rows (CPU-frequency warnings, MTU changes...). exit_code: given by the caller.
        errors: ``(code, line)`` for each error line, by :data:`ERROR_PATTERNS`.
    """

    test: str | None = None
    kind: str | None = None
    verb: str | None = None
    bidirectional: bool = False
    banner: dict[str, str] = field(default_factory=dict)
    device: str | None = None
    num_qps: int | None = None
    transport: str | None = None
    connection_type: str | None = None
    link_type: str | None = None
    mtu_bytes: int | None = None
    gid_index: int | None = None
    tx_depth: int | None = None
    cq_moderation: int | None = None
    max_inline_bytes: int | None = None
    outstand_reads: int | None = None
    data_exchange: str | None = None
    tos: int | None = None
    using_srq: bool | None = None
    dual_port: bool | None = None
    rdma_cm_qps: bool | None = None
    duration_mode: bool = False
    gpudirect: bool = False
    gpu_name: str | None = None
    unit: str | None = None
    columns: list[str] = field(default_factory=list)
    bw_rows: list[PerftestBwRow] = field(default_factory=list)
    lat_rows: list[PerftestLatRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    exit_code: int | None = None
    errors: list[tuple[str, str]] = field(default_factory=list)

    def _largest(self, rows: list) -> object | None:
        return max(rows, key=lambda r: r.size_bytes, default=None)

    @property
    def message_bytes(self) -> int | None:
        """The largest message size measured, bytes (the single size without ``-a``)."""
        row = self._largest(self.bw_rows) or self._largest(self.lat_rows)
        return None if row is None else row.size_bytes  # type: ignore[attr-defined]

    @property
    def bw_average_gbits_per_s(self) -> float | None:
        """Average bandwidth (Gb/s) at the largest message size -- the figure per-port thresholds compare."""
        row = self._largest(self.bw_rows)
        return None if row is None else row.bw_average_gbits_per_s  # type: ignore[attr-defined]

    @property
    def bw_peak_gbits_per_s(self) -> float | None:
        """Peak bandwidth (Gb/s) at the largest message size; None in duration mode."""
        row = self._largest(self.bw_rows)
        return None if row is None else row.bw_peak_gbits_per_s  # type: ignore[attr-defined]

    def bw_at(self, size_bytes: int) -> float | None:
        """Average bandwidth (Gb/s) at exactly ``size_bytes``; None if not measured."""
        return next((r.bw_average_gbits_per_s for r in self.bw_rows if r.size_bytes == size_bytes), None)

    @property
    def latency(self) -> PerftestLatRow | None:
        """The latency row of the largest message size (the single size without ``-a``)."""
        return self._largest(self.lat_rows)  # type: ignore[return-value]


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    m = re.match(r"-?\d+", text)
    return int(m.group(0)) if m else None


def _onoff(text: str | None) -> bool | None:
    return None if text is None else {"ON": True, "OFF": False}.get(text.upper())


def _title_facts(res: PerftestResult, title: str) -> None:
    res.test = title
    res.kind = "lat" if "Latency" in title else "bw"
    res.bidirectional = "Bidirectional" in title
    lowered = title.lower()
    for verb in ("write", "read", "send", "atomic"):
        if verb in lowered:
            res.verb = verb
            break


def _banner_facts(res: PerftestResult) -> None:
    b = res.banner
    res.device = b.get("Device")
    res.num_qps = _int(b.get("Number of qps"))
    res.transport = b.get("Transport type")
    res.connection_type = b.get("Connection type")
    res.link_type = b.get("Link type")
    res.mtu_bytes = _int(b.get("Mtu"))
    res.gid_index = _int(b.get("GID index", b.get("Gid index")))
    res.tx_depth = _int(b.get("TX depth"))
    res.cq_moderation = _int(b.get("CQ Moderation"))
    res.max_inline_bytes = _int(b.get("Max inline data"))
    res.outstand_reads = _int(b.get("Outstand reads"))
    res.data_exchange = b.get("Data ex. method")
    res.tos = _int(b.get("TOS"))
    res.using_srq = _onoff(b.get("Using SRQ"))
    res.dual_port = _onoff(b.get("Dual-port"))
    res.rdma_cm_qps = _onoff(b.get("rdma_cm QPs"))
    # Newer releases say so in the banner ("Use ROCm memory : ON", "Use CUDA memory : ON").
    if any(("CUDA" in k or "ROCm" in k) and _onoff(v) for k, v in b.items()):
        res.gpudirect = True


def _bw_row(cols: list[str], tokens: list[str], res: PerftestResult, line: str) -> PerftestBwRow:
    got = dict(zip(cols, tokens, strict=True))
    nums = {k: finite_float(v) for k, v in got.items()}
    for k, v in got.items():
        if nums[k] is None:
            res.unknown.append(f"{k} {v!r} is not a number in row: {line.strip()}")
    unit = res.unit or ""
    factor = GBITS_PER_UNIT.get(unit)
    peak_key = next((c for c in cols if c.startswith("BW peak")), None)
    avg_key = next((c for c in cols if c.startswith("BW average")), None)
    peak = nums.get(peak_key) if peak_key else None
    avg = nums.get(avg_key) if avg_key else None
    peak_gb = None if peak is None or factor is None else peak * factor
    avg_gb = None if avg is None or factor is None else avg * factor
    # perftest prints 0.00 for a peak it did not measure (duration mode, --noPeak): that is "none", not zero.
    if peak == 0 and (res.duration_mode or (avg or 0) > 0):
        peak_gb = None
    skip = {"#bytes", "#iterations", peak_key, avg_key, "MsgRate[Mpps]"}
    return PerftestBwRow(
        size_bytes=int(nums["#bytes"] or 0),
        iterations=int(nums["#iterations"] or 0),
        bw_peak_gbits_per_s=peak_gb,
        bw_average_gbits_per_s=avg_gb,
        msg_rate_mpps=nums.get("MsgRate[Mpps]"),
        bw_peak_printed=peak,
        bw_average_printed=avg,
        unit=unit,
        extra={k: v for k, v in nums.items() if k not in skip},
        line=line.rstrip(),
    )


_LAT_FIELDS = {
    "t_min": "t_min_us",
    "t_max": "t_max_us",
    "t_typical": "t_typical_us",
    "t_avg": "t_avg_us",
    "t_stdev": "t_stdev_us",
    "99%": "p99_us",
    "99.9%": "p999_us",
    "tps": "tps_average",
}


def _lat_row(cols: list[str], tokens: list[str], res: PerftestResult, line: str) -> PerftestLatRow:
    got = dict(zip(cols, tokens, strict=True))
    values: dict[str, float | None] = {}
    for col, tok in got.items():
        value = finite_float(tok)
        if value is None:
            res.unknown.append(f"{col} {tok!r} is not a number in row: {line.strip()}")
        name = _LAT_FIELDS.get(col.split("[")[0].split()[0])
        if name is None:
            continue
        if "[cycles]" in col:
            # -C/--report-cycles prints CPU cycles; without the clock rate they are not microseconds.
            res.unknown.append(f"{col} is in CPU cycles, not microseconds")
            value = None
        values[name] = value
    return PerftestLatRow(
        size_bytes=int(finite_float(got["#bytes"]) or 0),
        iterations=int(finite_float(got["#iterations"]) or 0),
        line=line.rstrip(),
        **values,
    )


def parse_perftest(raw: str, *, version: str | None = None, exit_code: int | None = None) -> PerftestResult:
    """Parse the output of one side (client or server) of a perftest bandwidth or latency run.

    Args:
        raw: stdout and stderr as captured.
        version: the perftest version when the caller knows it (perftest does not print it in a run).
        exit_code: the process exit code, when known; it only ever makes the result worse.

    Returns:
        :class:`PerftestResult` of facts, ungraded (:func:`hwaac.health.perftest_grading.grade_perftest` adds the
        findings of its error lines and exit code); ``unknown`` reasons when no table or no row was printed, or
        when the table is cut short.

    Raises:
        Nothing: bad output becomes ``unknown`` reasons.
    """
    res = PerftestResult(tool=TOOL, version=version or "", exit_code=exit_code)
    if no_output(res, raw, "empty output"):
        return res
    lines = raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")

    state = "pre"  # pre -> banner -> addresses -> table -> done
    titles = 0
    cols: list[str] = []
    closed = False
    for line in lines:
        text = line.strip()
        if not text:
            continue
        if _DURATION.search(text):
            res.duration_mode = True
            res.notes.append(text)
            continue
        if _CPU_FREQ.search(text):
            res.notes.append(text)
            continue
        if _DASHES.match(line):
            if state == "banner":
                state = "addresses"
            elif state == "table":
                closed = True
                state = "done"
            continue
        if state in ("pre", "done") and (m := _TITLE.match(line)) and ":" not in text:
            titles += 1
            _title_facts(res, m["title"])
            state = "banner"
            continue
        if state == "banner":
            for pair in _BANNER_PAIR.finditer(line):
                res.banner[pair["key"].strip()] = pair["value"]
            continue
        if _GPU.search(text):
            res.gpudirect = True
            if (m := _GPU_NAME.search(text)) and res.gpu_name is None:
                res.gpu_name = (m["name"] or m["rocm"]).strip()
            continue
        if "#bytes" in text and "#iterations" in text:
            cols = _COLUMN.findall(text)
            res.columns = cols
            units = {u for c in cols if (u := re.search(r"\[([^\]]+/sec)\]", c))}
            res.unit = next(iter(units)).group(1) if units else None
            state = "table"
            continue
        for code, rx in ERROR_PATTERNS:
            if rx.search(text):
                res.errors.append((code, text))
                break
        else:
            if state == "table":
                tokens = text.split()
                if cols and len(tokens) == len(cols) and tokens[0].isdigit():
                    row_kind = "lat" if any(c.startswith(("t_", "99")) for c in cols) else "bw"
                    if row_kind == "bw":
                        res.bw_rows.append(_bw_row(cols, tokens, res, line))
                    else:
                        res.lat_rows.append(_lat_row(cols, tokens, res, line))
                else:
                    res.notes.append(text)  # a warning printed inside the table
            elif state != "addresses" and not _ADDRESS.match(line):
                res.notes.append(text)

    _banner_facts(res)
    if titles > 1:
        res.unknown.append(f"output holds {titles} runs; parse one run at a time")
    _incomplete(res, closed)
    return res


def _incomplete(res: PerftestResult, closed: bool) -> None:
    """The ``unknown`` reasons of a table missing, cut short or in a unit perftest does not print (an error line
    explains a missing table or row)."""
    has_error = bool(res.errors)
    if not res.columns:
        if not has_error:
            res.unknown.append("no results table ('#bytes #iterations ...')")
    elif res.unit is None and res.kind == "bw":
        res.unknown.append(f"bandwidth unit not recognised in the table header: {' '.join(res.columns)}")
    elif res.unit is not None and res.unit not in GBITS_PER_UNIT:
        res.unknown.append(f"bandwidth unit {res.unit!r} is not one perftest prints")
    elif not res.bw_rows and not res.lat_rows:
        if not has_error:
            res.unknown.append("no result rows in the table")
    elif not closed and not has_error:
        res.unknown.append("the results table is not closed by a dashed line: output cut short")
