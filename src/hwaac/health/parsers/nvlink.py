"""Readers of ``nvidia-smi nvlink -s`` (link speeds) and ``nvlink -e`` (error counters).

``nvlink -s`` prints per GPU a ``GPU n: <name> (UUID: ...)`` header and ``Link n: 26.562 GB/s`` or ``<inactive>``;
when every link is down NVML prints "Unable to retrieve NVLink information as all links are inActive"
(open-gpu-kernel-modules#1150). ``nvlink -e`` prints ``Link n: Replay|Recovery|CRC Errors: v``. A line that is not
understood (an elided ``[...]`` or ``...`` paste, a truncated line) makes the report incomplete. Facts only: whether
an inactive link or an error count is a fault depends on the SKU (:func:`hwaac.health.checks.check_nvlink`). Never
raises.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from hwaac.health.parsers.base import text_lines
from hwaac.health.parsers.nvidia_smi_model import to_int
from hwaac.health.result import Status, ToolResult

_GPU_HEADER = re.compile(r"^GPU (?P<index>\d+): (?P<name>.*?)(?: \(UUID: (?P<uuid>[^)]*)\))?$")


_ALL_INACTIVE = re.compile(r"unable to retrieve nvlink information as all links are inactive", re.IGNORECASE)


_LINK_RATE = re.compile(r"^Link (?P<link>\d+): (?:(?P<rate>\d+(?:\.\d+)?) GB/s|(?P<inactive><inactive>))$")


_LINK_COUNTER = re.compile(r"^Link (?P<link>\d+): (?P<name>[A-Za-z][A-Za-z ]*?): (?P<value>\S+)$")


@dataclass
class NvlinkGpu:
    """One GPU of ``nvidia-smi nvlink -s`` / ``-e``.

    Attributes:
        index, name, uuid: from the ``GPU n: <name> (UUID: ...)`` header.
        links: ``-s``: link -> rate in GB/s per direction, None for ``<inactive>``.
        all_inactive: ``-s``: NVML said every link is inactive.
        counters: ``-e``: link -> counter (``replay_errors``, ``recovery_errors``, ``crc_errors``...) -> count.
    """

    index: int | None = None
    name: str = ""
    uuid: str | None = None
    links: dict[int, float | None] = field(default_factory=dict)
    all_inactive: bool = False
    counters: dict[int, dict[str, int | None]] = field(default_factory=dict)

    @property
    def subject(self) -> str:
        return f"gpu{self.index}" if self.index is not None else "gpu"


@dataclass
class NvlinkReport(ToolResult):
    """``nvidia-smi nvlink -s`` or ``-e``: one :class:`NvlinkGpu` per GPU header. Facts only, judged against the SKU
    by :func:`hwaac.health.checks.check_nvlink`: alone the report is never PASS (UNKNOWN)."""

    tool: str = "nvidia-smi nvlink"
    gpus: list[NvlinkGpu] = field(default_factory=list)

    def status(self) -> Status:
        """UNKNOWN: the verdict on links and counters is the check's (:attr:`incomplete` says whether it was read)."""
        return max(super().status(), Status.UNKNOWN)


def _nvlink_lines(
    raw: str,
    result: NvlinkReport,
    handle: Callable[[NvlinkGpu, str], bool],
    *,
    read: Callable[[NvlinkGpu], object],
    missing: str,
) -> NvlinkReport:
    """Read every line into ``result`` (``handle`` reads a link line of a GPU), then give each GPU that is not all
    inactive and of which ``read`` finds nothing the reason ``<gpu>: <missing>``."""
    current: NvlinkGpu | None = None
    for number, _line, text in text_lines(raw):
        # the cheap tests first: a node's -e output is ~450 lines, nearly all of them link lines
        header = _GPU_HEADER.match(text) if text.startswith("GPU ") else None
        if header:
            current = NvlinkGpu(int(header.group("index")), header.group("name"), header.group("uuid"))
            result.gpus.append(current)
            continue
        if not text.startswith("Link ") and _ALL_INACTIVE.search(text):
            if current is None:
                current = NvlinkGpu()
                result.gpus.append(current)
            current.all_inactive = True
            continue
        if current is None or not handle(current, text):
            result.unknown.append(f"line {number} not understood: {text!r}")
    if not result.gpus:
        result.unknown.append("no GPU in the output" if raw.strip() else "empty output")
    for gpu in result.gpus:
        if not read(gpu) and not gpu.all_inactive:
            result.unknown.append(f"{gpu.subject}: {missing}")
    return result


def parse_nvlink_status(raw: str, *, version: str | None = None) -> NvlinkReport:
    """Parse ``nvidia-smi nvlink -s``.

    Returns:
        :class:`NvlinkReport` with ``links`` per GPU (GB/s, None = inactive) and ``all_inactive`` when NVML says
        every link is inactive; no findings (the SKU's link count and rate decide, in the check). ``unknown`` for
        empty output, no GPU header, a GPU without any link line, or a line that is not understood (an elided
        ``[...]`` paste, a truncated line). Never raises.
    """
    result = NvlinkReport(tool="nvidia-smi nvlink -s", version=version or "")

    def handle(gpu: NvlinkGpu, text: str) -> bool:
        match = _LINK_RATE.match(text)
        if not match:
            return False
        gpu.links[int(match.group("link"))] = None if match.group("inactive") else float(match.group("rate"))
        return True

    return _nvlink_lines(raw, result, handle, read=lambda gpu: gpu.links, missing="no link line")


@functools.lru_cache(maxsize=64)
def _counter_name(text: str) -> str:
    """``Replay Errors`` -> ``replay_errors`` (a handful of names, repeated on every link line)."""
    return re.sub(r"\W+", "_", text.strip().lower())


def parse_nvlink_errors(raw: str, *, version: str | None = None) -> NvlinkReport:
    """Parse ``nvidia-smi nvlink -e`` (``Link n: Replay Errors: v``, ``Recovery Errors``, ``CRC Errors``...).

    Returns:
        :class:`NvlinkReport` with ``counters`` per GPU and link (counter names in snake case, counts as int, None
        for a placeholder); no findings (the profile's limit decides, in the check; imbue warns at 5 summed).
        ``unknown`` for empty output, no GPU header, a GPU without counters, a non-numeric value, or an unreadable
        line. On Hopper the legacy error fields may read 0 whatever
        happened (DataDog PR#55966), so a clean result is weak evidence. Never raises.
    """
    result = NvlinkReport(tool="nvidia-smi nvlink -e", version=version or "")

    def handle(gpu: NvlinkGpu, text: str) -> bool:
        match = _LINK_COUNTER.match(text)
        if not match:
            return False
        name = _counter_name(match.group("name"))
        value = to_int(match.group("value"))
        if value is None:
            result.unknown.append(f"{gpu.subject} link {match.group('link')}: {name} is {match.group('value')!r}")
        gpu.counters.setdefault(int(match.group("link")), {})[name] = value
        return True

    return _nvlink_lines(raw, result, handle, read=lambda gpu: gpu.counters, missing="no counter line")


__all__ = ["NvlinkGpu", "NvlinkReport", "parse_nvlink_errors", "parse_nvlink_status"]
