"""Parser of gpu-burn output (wilicc/gpu-burn, ``gpu_burn-drv.cpp``).

The formats, sources and rules in full: ``docs/health-modules.md``, section "gpu-burn output".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hwaac.health.parsers.base import no_output
from hwaac.health.result import GradedResult

_GPU_LINE = re.compile(r"^GPU (\d+): (.+?) \(UUID: (GPU-[0-9A-Za-z-]+)\)\s*$", re.MULTILINE)
_BURNING = re.compile(r"Burning for (\d+) s(?:ec(?:ond)?s?)?\b")
_INIT = re.compile(
    r"Initialized device (\d+) with (\d+) MB of memory \((\d+) MB available, using (\d+) MB of it\), "
    r"using (FLOATS|DOUBLES)(, using Tensor Cores)?"
)
_RECORD_START = re.compile(r"(\d{1,3}(?:\.\d+)?)%\s+proc'd:")
_RECORD = re.compile(r"proc'd:\s*(?P<proc>.*?)\s+errors:\s*(?P<err>.*?)\s+temps:\s*(?P<temps>.*)", re.DOTALL)
_PROC_ITEM = re.compile(r"(-?\d+) \((-?\d+(?:\.\d+)?) Gflop/s\)")
_ERR_ITEM = re.compile(r"(-?\d+)\s*(\((?:WARNING|DIED)!\))?")
_TEMP_ITEM = re.compile(r"(\d+) C|--")
_TESTED = re.compile(r"^Tested (\d+) GPUs:\s*$", re.MULTILINE)
_SUMMARY_LINE = re.compile(r"^\s*GPU (\d+):\s*(\S*)\s*$", re.MULTILINE)
NO_CLIENTS = "No clients are alive!"
_FAILURE_LINES = re.compile(
    r"^.*(?:Couldn't init a GPU test|Failure during compute|read\[\d+\] error).*$", re.MULTILINE
)


@dataclass
class GpuBurnProgress:
    """One progress record.

    Attributes:
        percent: run progress in percent (0-100).
        iterations: per GPU, iterations processed so far (-1 = the worker died).
        gflops: per GPU, Gflop/s over the last interval.
        errors: per GPU, errors counted since the last 10 % summary (may be negative: the counter overflowed).
        flags: per GPU, ``""``, ``"WARNING!"`` or ``"DIED!"``.
        temps_c: per GPU, temperature in °C (None where gpu-burn printed ``--``).
    """

    percent: float
    iterations: list[int]
    gflops: list[float]
    errors: list[int]
    flags: list[str]
    temps_c: list[int | None]


@dataclass
class GpuBurnGpu:
    """One GPU's outcome.

    Attributes:
        index: the GPU index.
        name: the product name from the ``nvidia-smi -L`` line, None when not printed.
        uuid: the GPU UUID, None when not printed.
        summary: ``"OK"`` or ``"FAULTY"`` from the final summary, None when the summary does not name it.
        iterations: iterations processed in the last progress record (-1 = died), None without a record.
        gflops_last: Gflop/s in the last progress record, None without a record.
        gflops_max: the highest Gflop/s seen, None without a record.
        error_records: how many progress records showed errors for it.
        died: a record marked it ``(DIED!)`` or ``proc'd: -1``.
        max_temp_c: the highest temperature seen in °C, None when never read.
    """

    index: int
    name: str | None = None
    uuid: str | None = None
    summary: str | None = None
    iterations: int | None = None
    gflops_last: float | None = None
    gflops_max: float | None = None
    error_records: int = 0
    died: bool = False
    max_temp_c: int | None = None


@dataclass
class GpuBurnResult(GradedResult):
    """gpu-burn output parsed.

    Attributes:
        run_seconds: the requested run length in seconds (``Burning for N seconds``), None when not printed.
        precision: ``"FLOATS"`` or ``"DOUBLES"``; ``tensor_cores`` whether tensor cores were used.
        tested_gpus: N of ``Tested N GPUs:``, None without the summary.
        aborted: ``No clients are alive!  Aborting`` was printed.
        gpus: per GPU outcome, by index.
        progress: every progress record, in order.
        exit_code: the exit status given by the caller.
        failure_lines: gpu-burn's own error lines (``Couldn't init a GPU test: ...``, ``Failure during compute: ...``).
    """

    tool: str = "gpu_burn"
    run_seconds: int | None = None
    precision: str | None = None
    tensor_cores: bool = False
    tested_gpus: int | None = None
    aborted: bool = False
    gpus: list[GpuBurnGpu] = field(default_factory=list)
    progress: list[GpuBurnProgress] = field(default_factory=list)
    exit_code: int | None = None
    failure_lines: list[str] = field(default_factory=list)


def _records(text: str) -> list[tuple[str, str]]:
    """(percent, record text) for each progress record; a record ends at the next one or at a line end."""
    starts = list(_RECORD_START.finditer(text))
    out = []
    for i, match in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        chunk = text[match.start() : end]
        out.append((match.group(1), re.split(r"[\r\n]", chunk, maxsplit=1)[0]))
    return out


def _parse_record(percent: str, chunk: str, out: GpuBurnResult) -> GpuBurnProgress | None:
    match = _RECORD.search(chunk)
    if not match:
        out.unknown.append(f"unreadable progress record: {chunk[:160]!r}")
        return None
    procs = _PROC_ITEM.findall(match.group("proc"))
    errs = _ERR_ITEM.findall(match.group("err"))
    temps = _TEMP_ITEM.findall(match.group("temps"))
    record = GpuBurnProgress(
        float(percent),
        [int(p) for p, _ in procs],
        [float(g) for _, g in procs],
        [int(e) for e, _ in errs],
        [flag.strip("()") for _, flag in errs],
        [int(t) if t else None for t in temps],
    )
    if not procs or len(errs) != len(procs):
        counts = f"{len(procs)} GPU counters and {len(errs)} error counters"
        out.unknown.append(f"progress record with {counts}: {chunk[:160]!r}")
        return None
    return record


def _gpu(out: GpuBurnResult, index: int) -> GpuBurnGpu:
    for gpu in out.gpus:
        if gpu.index == index:
            return gpu
    gpu = GpuBurnGpu(index)
    out.gpus.append(gpu)
    out.gpus.sort(key=lambda g: g.index)
    return gpu


def _fold_progress(record: GpuBurnProgress, out: GpuBurnResult) -> None:
    for i, iters in enumerate(record.iterations):
        gpu = _gpu(out, i)
        gpu.iterations, gpu.gflops_last = iters, record.gflops[i]
        gpu.gflops_max = max(gpu.gflops_max or 0.0, record.gflops[i])
        if iters == -1 or record.flags[i] == "DIED!":
            # A dead worker's error count is whatever the failed pipe read left: not a compare result.
            gpu.died = True
        elif record.errors[i] != 0 or record.flags[i] == "WARNING!":
            gpu.error_records += 1
        if i < len(record.temps_c) and record.temps_c[i] is not None:
            gpu.max_temp_c = max(gpu.max_temp_c or 0, record.temps_c[i] or 0)


def _read_summary(text: str, out: GpuBurnResult) -> None:
    tested = list(_TESTED.finditer(text))
    if not tested:
        out.unknown.append("no 'Tested N GPUs:' summary: the run was killed, timed out or the output is truncated")
        return
    out.tested_gpus = int(tested[-1].group(1))
    for match in _SUMMARY_LINE.finditer(text[tested[-1].end() :]):
        word = match.group(2)
        if word not in ("OK", "FAULTY"):
            out.unknown.append(f"summary line for GPU {match.group(1)} is unreadable: {match.group(0).strip()!r}")
            continue
        _gpu(out, int(match.group(1))).summary = word
    named = sum(1 for g in out.gpus if g.summary)
    if named < out.tested_gpus:
        out.unknown.append(f"the summary names {named} of the {out.tested_gpus} tested GPUs: truncated output")


def parse_gpu_burn(raw: str, *, exit_code: int | None = None) -> GpuBurnResult:
    """Parse gpu-burn's stdout (and stderr, if merged).

    Args:
        raw: the output.
        exit_code: the exit status when known (or -signal as Python reports it).

    Returns:
        A :class:`GpuBurnResult` of facts, ungraded (:func:`hwaac.health.gpu_burn_grading.grade_gpu_burn` adds the
        findings). ``unknown`` reasons without the ``Tested N GPUs`` summary or when the summary names fewer GPUs
        than it tested. Never raises.
    """
    out = GpuBurnResult(exit_code=exit_code)
    try:
        _read(raw, out)
    except Exception as exc:  # the parsers' contract: bad tool output never raises
        out.unknown.append(f"unexpected input shape ({type(exc).__name__}: {exc})"[:300])
    return out


def _read(raw: str, out: GpuBurnResult) -> None:
    if no_output(out, raw, "empty output"):
        return
    text = raw.replace("\r\n", "\n")
    for match in _GPU_LINE.finditer(text):
        gpu = _gpu(out, int(match.group(1)))
        gpu.name, gpu.uuid = match.group(2).strip(), match.group(3)
    if burning := _BURNING.search(text):
        out.run_seconds = int(burning.group(1))
    if init := _INIT.search(text):
        out.precision, out.tensor_cores = init.group(5), bool(init.group(6))
    out.failure_lines = [line.strip() for line in _FAILURE_LINES.findall(text)][:20]
    for percent, chunk in _records(text):
        if (record := _parse_record(percent, chunk, out)) is not None:
            out.progress.append(record)
            _fold_progress(record, out)
    out.aborted = NO_CLIENTS in text
    if not out.aborted:
        _read_summary(text, out)
    if not out.gpus and not out.unknown:
        out.unknown.append("no GPU named in the output: not gpu-burn output")
