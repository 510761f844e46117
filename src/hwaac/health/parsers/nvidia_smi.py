"""Parsers of ``nvidia-smi`` output: ``-q -x`` XML, ``--query-gpu`` and ``--query-remapped-rows`` CSV, ``nvlink -s``
and ``nvlink -e``.

Domain facts (``burn-in-health.md`` section 2 unless named otherwise):

- XML layouts drift: ECC counters are ``sram_uncorrectable`` on older drivers and ``sram_uncorrectable_parity`` +
  ``sram_uncorrectable_secded`` on newer ones (H200 580.159.04 fixture); pre-Ampere drivers write
  ``single_bit``/``double_bit`` blocks with ``device_memory`` and ``total`` (microsoft/pai V100 410.104 fixture,
  microsoft/pai#2534); clock reasons are ``clocks_throttle_reasons`` before driver 535 and ``clocks_event_reasons``
  after (Azure switches at 535.54.03); retired pages say ``pending_blacklist`` or ``pending_retirement``; the GPU
  recovery action is ``gpu_recovery_action`` on newer drivers and ``gpu_reset_status/{reset_required,
  drain_and_reset_recommended}`` on 535 (Checkmk A100 535.54.03 fixture).
- CSV field names drift: ``clocks_throttle_reasons.*`` is answered under ``clocks_event_reasons.*`` (our H200
  recording), ``clocks.sm`` under ``clocks.current.sm``, and ``nvidia-smi --help-query-gpu`` lists aliases
  (``gpu_name``/``name``, ``retired_pages.sbe``/``retired_pages.single_bit_ecc.count``...). Each is mapped to one
  canonical name (:data:`CSV_ALIASES`).
- ``--query-remapped-rows`` prints pending/failure as ``0``/``1`` or ``No``/``Yes`` depending on the driver (OCI's
  checker accepts both).
- ``nvlink -s`` prints per GPU a ``GPU n: <name> (UUID: ...)`` header and ``Link n: 26.562 GB/s`` or
  ``<inactive>``; when every link is down NVML prints "Unable to retrieve NVLink information as all links are
  inActive" (open-gpu-kernel-modules#1150). ``nvlink -e`` prints ``Link n: Replay|Recovery|CRC Errors: v``.

Placeholder rule. ``N/A``, ``[N/A]``, ``Not Supported``, ``[Not Supported]``, ``Unknown Error``, ``[Unknown Error]``
(and ``GPU is lost`` / ``GPU requires reset``) become ``None``. A reason is added to ``unknown`` only when the value
is needed to judge health: an ``Unknown Error`` always (the tool failed to read a field it supports); ``N/A`` in
remap pending/failure on a GPU that supports row remapping; in volatile uncorrectable ECC counts while ECC mode is
Enabled (except under MIG, which prints N/A for the whole GPU's volatile counts: noted, not unknown); in
retired-pages pending on a GPU without row remapping and with ECC Enabled; in the XML's ECC mode (MIG or not). In
CSV, where the GPU's capabilities are not printed, remap and page-retirement state stand in for each other and ECC
Disabled excuses the counts. An ``N/A`` elsewhere (fan speed on an SXM board, retired pages on an H200 that remaps
rows, a clock reason or recovery action a GPU does not support) is simply not there.
``GPU is lost`` is a finding (GPU_LOST, FAIL, reboot per XID 79); ``GPU requires reset`` is GPU_RESET_REQUIRED.

Every parser returns a result whose ``status()`` is UNKNOWN for empty, garbage or truncated input; none raises.
"""

from __future__ import annotations

import csv
import functools
import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field

from hwaac.health.result import Action, Finding, Status, ToolResult
from hwaac.health.xid import recovery_action

# -- placeholders -------------------------------------------------------------------------------------------------

_NOT_THERE = {"n/a", "not supported", "requested functionality has been deprecated", "", "none found"}
_READ_ERROR = {"unknown error", "gpu is lost", "gpu requires reset", "insufficient permissions", "not found"}


def _placeholder(text: str | None) -> str | None:
    """The placeholder kind of ``text`` ("n/a", "unknown error", "gpu is lost"...) or None when it is a value."""
    if text is None:
        return "n/a"
    value = text.strip().strip("[]").strip().lower()
    if value in _NOT_THERE:
        return "n/a"
    if value in _READ_ERROR:
        return value
    return None


def _lost_findings(raw: str) -> list[Finding]:
    """GPU_LOST / GPU_RESET_REQUIRED findings for the error lines nvidia-smi prints instead of data."""
    findings: list[Finding] = []
    whole = raw.lower()
    if "gpu is lost" not in whole and "requires reset" not in whole and "requires a reset" not in whole:
        return findings  # the usual case: one scan of the text instead of lowercasing every line
    for line in raw.splitlines():
        low = line.lower()
        if "gpu is lost" in low:
            findings.append(
                Finding(
                    "GPU_LOST",
                    Status.FAIL,
                    "nvidia-smi reports the GPU as lost (as XID 79): reboot the node; RMA if it recurs",
                    evidence=line.strip(),
                    action=Action.REBOOT,
                )
            )
        elif "gpu requires reset" in low or "requires a reset" in low:
            findings.append(
                Finding(
                    "GPU_RESET_REQUIRED",
                    Status.FAIL,
                    "nvidia-smi reports that the GPU requires a reset",
                    evidence=line.strip(),
                    action=Action.RESET_GPU,
                )
            )
    return findings


_INT = re.compile(r"(0x[0-9a-fA-F]+|-?\d+)\s*(x|bank\(s\)|MiB|KB/s|%|W|MHz|C)?")


def _int(text: str | None) -> int | None:
    """An integer from ``text`` ("16x", "5", "0x0000000000000001", "3072 bank(s)"); None for placeholders."""
    if text is None or _placeholder(text):
        return None
    value = text.strip()
    match = _INT.fullmatch(value)
    if not match:
        return None
    return int(match.group(1), 0)


def _bool(text: str | None) -> bool | None:
    """True/False from Yes/No, 1/0, Active/Not Active, Enabled/Disabled; None otherwise."""
    if text is None:
        return None
    value = text.strip().lower()
    if value in {"yes", "1", "active", "enabled", "true"}:
        return True
    if value in {"no", "0", "not active", "disabled", "false"}:
        return False
    return None


# -- -q -x XML ----------------------------------------------------------------------------------------------------


@dataclass
class EccCounts:
    """ECC error counts of one scope: ``volatile`` (since the driver loaded or the GPU was reset) or ``aggregate``
    (lifetime, in the InfoROM). Every count is a number of errors; None = not reported or a placeholder.

    Attributes:
        sram_correctable / sram_uncorrectable: SRAM (on-chip) errors; ``sram_uncorrectable`` is the single value of
            older drivers or parity + SEC-DED of newer ones.
        sram_uncorrectable_parity / sram_uncorrectable_secded: the newer split (None on older drivers).
        dram_correctable / dram_uncorrectable: HBM/GDDR errors; on the pre-Ampere layout these are
            ``single_bit/device_memory`` and ``double_bit/device_memory``.
        corrected_total / uncorrected_total: all locations; SRAM + DRAM, or ``single_bit/total`` and
            ``double_bit/total`` on the pre-Ampere layout.
        layout: ``sram_dram`` (single SRAM uncorrectable), ``sram_dram_split`` (parity + SEC-DED),
            ``single_double_bit`` (pre-Ampere) or ``absent``.
    """

    sram_correctable: int | None = None
    sram_uncorrectable: int | None = None
    sram_uncorrectable_parity: int | None = None
    sram_uncorrectable_secded: int | None = None
    dram_correctable: int | None = None
    dram_uncorrectable: int | None = None
    corrected_total: int | None = None
    uncorrected_total: int | None = None
    layout: str = "absent"


# Clock event (throttle) reasons, canonical names; the XML tags are clocks_{event,throttle}_reason_<name>.
CLOCK_REASONS = (
    "gpu_idle",
    "applications_clocks_setting",
    "sw_power_cap",
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sync_boost",
    "sw_thermal_slowdown",
    "display_clocks_setting",
)
# Reasons the parser itself warns about (hardware or thermal slowdowns); the rest is for the threshold module.
_WARN_REASONS = {
    "hw_slowdown": "GPU_CLOCKS_HW_SLOWDOWN",
    "hw_thermal_slowdown": "GPU_CLOCKS_HW_THERMAL_SLOWDOWN",
    "hw_power_brake_slowdown": "GPU_CLOCKS_HW_POWER_BRAKE",
    "sw_thermal_slowdown": "GPU_CLOCKS_SW_THERMAL_SLOWDOWN",
}
# Bitmask of clocks_event_reasons.active (nvml.h nvmlClocksEventReason*): only the reasons warned about.
_REASON_BITS = {
    0x8: "hw_slowdown",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
}


@dataclass
class GpuQuery:
    """One ``<gpu>`` of ``nvidia-smi -q -x``. None means not reported or a placeholder (see the module docstring).

    Attributes:
        index: ``minor_number`` (the /dev/nvidiaN number).
        pci_bus_id: ``00000000:18:00.0`` as nvidia-smi writes it.
        serial, uuid, product_name, product_architecture: identity.
        ecc_mode_current, ecc_mode_pending: ``Enabled`` / ``Disabled``.
        ecc_volatile, ecc_aggregate: :class:`EccCounts`.
        sram_threshold_exceeded: aggregate SRAM uncorrectable count past NVIDIA's RMA threshold (newer drivers).
        channel_repair_pending, tpc_repair_pending, unrepairable_memory: newer repair flags.
        remap_supported: the GPU reports row remapping (Ampere and later, not inside MIG-less VMs that hide it).
        remapped_rows_correctable, remapped_rows_uncorrectable: rows remapped for correctable / uncorrectable errors.
        remap_pending: a remap waits for a GPU reset; remap_failure: a remap failed.
        remap_histogram_banks: ``max/high/partial/low/none`` -> number of banks.
        retired_pages_sbe, retired_pages_dbe: pages retired for single / double bit errors (pre-Ampere).
        retired_pages_pending: a page waits for a reboot to be retired.
        clock_reasons: canonical reason -> active (:data:`CLOCK_REASONS`); clock_reasons_tag: the XML block used.
        pcie_gen_current / pcie_gen_max: ``current_link_gen`` / ``max_link_gen`` (the link: GPU and host);
        pcie_gen_device_current / pcie_gen_device_max / pcie_gen_host_max: the newer per-side values;
        pcie_width_current / pcie_width_max: lanes; pcie_replay_counter: PCIe replays.
        recovery_action: ``gpu_recovery_action`` as written (``None``, ``Reset``, ``Node Reboot``, ``Drain P2P``,
            ``Drain and Reset``); reset_required / drain_and_reset_recommended: the 535 ``gpu_reset_status``.
        mig_mode_current: ``Enabled`` / ``Disabled``.
        notes: placeholders accepted because the GPU's mode explains them (MIG's N/A volatile ECC counts).
    """

    index: int | None = None
    pci_bus_id: str = ""
    serial: str | None = None
    uuid: str | None = None
    product_name: str | None = None
    product_architecture: str | None = None
    ecc_mode_current: str | None = None
    ecc_mode_pending: str | None = None
    ecc_volatile: EccCounts = field(default_factory=EccCounts)
    ecc_aggregate: EccCounts = field(default_factory=EccCounts)
    sram_threshold_exceeded: bool | None = None
    channel_repair_pending: bool | None = None
    tpc_repair_pending: bool | None = None
    unrepairable_memory: bool | None = None
    remap_supported: bool = False
    remapped_rows_correctable: int | None = None
    remapped_rows_uncorrectable: int | None = None
    remap_pending: bool | None = None
    remap_failure: bool | None = None
    remap_histogram_banks: dict[str, int | None] = field(default_factory=dict)
    retired_pages_sbe: int | None = None
    retired_pages_dbe: int | None = None
    retired_pages_pending: bool | None = None
    clock_reasons: dict[str, bool | None] = field(default_factory=dict)
    clock_reasons_tag: str = ""
    pcie_gen_current: int | None = None
    pcie_gen_max: int | None = None
    pcie_gen_device_current: int | None = None
    pcie_gen_device_max: int | None = None
    pcie_gen_host_max: int | None = None
    pcie_width_current: int | None = None
    pcie_width_max: int | None = None
    pcie_replay_counter: int | None = None
    recovery_action: str | None = None
    reset_required: bool | None = None
    drain_and_reset_recommended: bool | None = None
    mig_mode_current: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def subject(self) -> str:
        """How findings name this GPU: ``gpu0 00000000:18:00.0``."""
        prefix = f"gpu{self.index} " if self.index is not None else "gpu "
        return (prefix + self.pci_bus_id).strip()


@dataclass
class NvidiaSmiQuery(ToolResult):
    """``nvidia-smi -q -x``: the driver/CUDA versions and one :class:`GpuQuery` per GPU.

    Attributes:
        driver_version, cuda_version: from the log header ("" when absent).
        attached_gpus: the header's GPU count (None when absent).
        gpus: the GPUs in output order.
    """

    tool: str = "nvidia-smi -q -x"
    driver_version: str = ""
    cuda_version: str = ""
    attached_gpus: int | None = None
    gpus: list[GpuQuery] = field(default_factory=list)


def _path_index(elem: ET.Element) -> dict[str, ET.Element]:
    """Every descendant of ``elem`` by its ``a/b/c`` path (the first one of a path, as ``find`` returns): one walk
    instead of ~500 ``find`` calls per GPU, which dominated parsing an 8-GPU document."""
    index: dict[str, ET.Element] = {}

    def walk(node: ET.Element, prefix: str) -> None:
        for child in node:
            path = prefix + child.tag
            if path not in index:
                index[path] = child
            if len(child):
                walk(child, path + "/")

    walk(elem, "")
    return index


class _Reader:
    """Text of child elements by path, with placeholder handling and unknown reasons collected per GPU."""

    def __init__(self, elem: ET.Element, where: str, unknown: list[str]):
        self.elem, self.where, self.unknown = elem, where, unknown
        self.index = _path_index(elem)

    def find(self, path: str) -> ET.Element | None:
        return self.index.get(path)

    def text(self, path: str) -> str | None:
        node = self.index.get(path)
        if node is None or node.text is None:
            return None
        value = node.text.strip()
        return None if _placeholder(value) else value

    def raw(self, path: str) -> str | None:
        node = self.index.get(path)
        return None if node is None or node.text is None else node.text.strip()

    def needed(self, path: str, why: str) -> None:
        """Record a reason when ``path`` is missing or a placeholder although health depends on it."""
        raw = self.raw(path)
        if raw is None or _placeholder(raw):
            self.unknown.append(f"{self.where}: {path} is {raw if raw is not None else 'missing'} ({why})")

    def read_error(self, path: str) -> None:
        raw = self.raw(path)
        if raw is not None and _placeholder(raw) not in (None, "n/a"):
            self.unknown.append(f"{self.where}: {path} is {raw!r}")


def _ecc_counts(r: _Reader, scope: str) -> EccCounts:
    base = f"ecc_errors/{scope}"
    counts = EccCounts()
    if r.find(f"{base}/single_bit") is not None:
        counts.layout = "single_double_bit"
        counts.dram_correctable = _int(r.raw(f"{base}/single_bit/device_memory"))
        counts.dram_uncorrectable = _int(r.raw(f"{base}/double_bit/device_memory"))
        counts.corrected_total = _int(r.raw(f"{base}/single_bit/total"))
        counts.uncorrected_total = _int(r.raw(f"{base}/double_bit/total"))
        return counts
    if r.find(base) is None:
        return counts
    counts.sram_correctable = _int(r.raw(f"{base}/sram_correctable"))
    counts.dram_correctable = _int(r.raw(f"{base}/dram_correctable"))
    counts.dram_uncorrectable = _int(r.raw(f"{base}/dram_uncorrectable"))
    if r.find(f"{base}/sram_uncorrectable_parity") is not None:
        counts.layout = "sram_dram_split"
        counts.sram_uncorrectable_parity = _int(r.raw(f"{base}/sram_uncorrectable_parity"))
        counts.sram_uncorrectable_secded = _int(r.raw(f"{base}/sram_uncorrectable_secded"))
        if counts.sram_uncorrectable_parity is not None and counts.sram_uncorrectable_secded is not None:
            counts.sram_uncorrectable = counts.sram_uncorrectable_parity + counts.sram_uncorrectable_secded
    else:
        counts.layout = "sram_dram"
        counts.sram_uncorrectable = _int(r.raw(f"{base}/sram_uncorrectable"))
    if counts.sram_correctable is not None and counts.dram_correctable is not None:
        counts.corrected_total = counts.sram_correctable + counts.dram_correctable
    if counts.sram_uncorrectable is not None and counts.dram_uncorrectable is not None:
        counts.uncorrected_total = counts.sram_uncorrectable + counts.dram_uncorrectable
    return counts


def _volatile_dram(gpu: GpuQuery) -> str:
    if gpu.ecc_volatile.layout == "single_double_bit":
        return "ecc_errors/volatile/double_bit/total"
    return "ecc_errors/volatile/dram_uncorrectable"


def _read_gpu(elem: ET.Element, position: int, unknown: list[str]) -> GpuQuery:
    gpu = GpuQuery(pci_bus_id=elem.get("id", "") or "")
    r = _Reader(elem, f"gpu {gpu.pci_bus_id or position}", unknown)
    gpu.index = _int(r.raw("minor_number"))
    gpu.pci_bus_id = gpu.pci_bus_id or (r.text("pci/pci_bus_id") or "")
    gpu.serial, gpu.uuid = r.text("serial"), r.text("uuid")
    gpu.product_name, gpu.product_architecture = r.text("product_name"), r.text("product_architecture")
    gpu.mig_mode_current = r.text("mig_mode/current_mig")

    gpu.ecc_mode_current, gpu.ecc_mode_pending = r.text("ecc_mode/current_ecc"), r.text("ecc_mode/pending_ecc")
    r.needed("ecc_mode/current_ecc", "ECC mode decides whether the error counts mean anything")
    gpu.ecc_volatile, gpu.ecc_aggregate = _ecc_counts(r, "volatile"), _ecc_counts(r, "aggregate")
    ecc_on = gpu.ecc_mode_current == "Enabled"
    if ecc_on and gpu.mig_mode_current == "Enabled" and _placeholder(r.raw(_volatile_dram(gpu))) == "n/a":
        # MIG mode: the driver reports volatile ECC per GPU instance and prints N/A for the whole GPU (recorded in
        # NVIDIA/nvidia-docker#1473, A100 with MIG); the aggregate counts and ECC mode still carry the GPU's health
        gpu.notes.append("MIG is enabled: volatile ECC counts are N/A by design; aggregate counts are judged")
    elif ecc_on:
        if gpu.ecc_volatile.layout == "single_double_bit":
            r.needed("ecc_errors/volatile/double_bit/total", "volatile uncorrectable ECC count")
        elif gpu.ecc_volatile.layout == "absent":
            unknown.append(f"{r.where}: ECC is Enabled but ecc_errors/volatile is missing")
        else:
            r.needed("ecc_errors/volatile/dram_uncorrectable", "volatile uncorrectable DRAM ECC count")
    for path in ("ecc_errors/volatile/dram_uncorrectable", "ecc_errors/volatile/sram_uncorrectable"):
        r.read_error(path)
    gpu.sram_threshold_exceeded = _bool(r.text("ecc_errors/aggregate/sram_threshold_exceeded"))
    gpu.channel_repair_pending = _bool(r.text("ecc_errors/channel_repair_pending"))
    gpu.tpc_repair_pending = _bool(r.text("ecc_errors/tpc_repair_pending"))
    gpu.unrepairable_memory = _bool(r.text("ecc_errors/unrepairable_memory"))

    remap = elem.find("remapped_rows")
    # <remapped_rows>N/A</remapped_rows> (no children) on GPUs or modes without row remapping.
    gpu.remap_supported = remap is not None and len(remap) > 0
    if gpu.remap_supported:
        gpu.remapped_rows_correctable = _int(r.raw("remapped_rows/remapped_row_corr"))
        gpu.remapped_rows_uncorrectable = _int(r.raw("remapped_rows/remapped_row_unc"))
        gpu.remap_pending = _bool(r.text("remapped_rows/remapped_row_pending"))
        gpu.remap_failure = _bool(r.text("remapped_rows/remapped_row_failure"))
        r.needed("remapped_rows/remapped_row_pending", "the GPU remaps rows")
        r.needed("remapped_rows/remapped_row_failure", "the GPU remaps rows")
        for bucket in ("max", "high", "partial", "low", "none"):
            value = r.raw(f"remapped_rows/row_remapper_histogram/row_remapper_histogram_{bucket}")
            if value is not None:
                gpu.remap_histogram_banks[bucket] = _int(value)

    gpu.retired_pages_sbe = _int(r.raw("retired_pages/multiple_single_bit_retirement/retired_count"))
    gpu.retired_pages_dbe = _int(r.raw("retired_pages/double_bit_retirement/retired_count"))
    pending_tag = next(
        (t for t in ("retired_pages/pending_retirement", "retired_pages/pending_blacklist") if r.text(t) is not None),
        "retired_pages/pending_retirement",
    )
    gpu.retired_pages_pending = _bool(r.text(pending_tag))
    if not gpu.remap_supported and ecc_on and elem.find("retired_pages") is not None:
        r.needed(pending_tag, "no row-remapping state either, so pending memory repairs cannot be read")

    for tag in ("clocks_event_reasons", "clocks_throttle_reasons"):
        block = elem.find(tag)
        if block is not None and len(block):
            gpu.clock_reasons_tag = tag
            prefix = tag[:-1] + "_"  # clocks_event_reason_ / clocks_throttle_reason_
            for name in CLOCK_REASONS:
                gpu.clock_reasons[name] = _bool(r.text(f"{tag}/{prefix}{name}"))
            break

    link = "pci/pci_gpu_link_info"
    gpu.pcie_gen_current = _int(r.raw(f"{link}/pcie_gen/current_link_gen"))
    gpu.pcie_gen_max = _int(r.raw(f"{link}/pcie_gen/max_link_gen"))
    gpu.pcie_gen_device_current = _int(r.raw(f"{link}/pcie_gen/device_current_link_gen"))
    gpu.pcie_gen_device_max = _int(r.raw(f"{link}/pcie_gen/max_device_link_gen"))
    gpu.pcie_gen_host_max = _int(r.raw(f"{link}/pcie_gen/max_host_link_gen"))
    gpu.pcie_width_current = _int(r.raw(f"{link}/link_widths/current_link_width"))
    gpu.pcie_width_max = _int(r.raw(f"{link}/link_widths/max_link_width"))
    gpu.pcie_replay_counter = _int(r.raw("pci/replay_counter"))

    gpu.recovery_action = r.text("gpu_recovery_action")
    r.read_error("gpu_recovery_action")
    gpu.reset_required = _bool(r.text("gpu_reset_status/reset_required"))
    gpu.drain_and_reset_recommended = _bool(r.text("gpu_reset_status/drain_and_reset_recommended"))
    return gpu


def _evidence(gpu: GpuQuery, *pairs: tuple[str, object]) -> str:
    return f"{gpu.pci_bus_id}: " + ", ".join(f"{k}={v}" for k, v in pairs)


def _gpu_findings(gpu: GpuQuery) -> list[Finding]:
    out: list[Finding] = []
    subject = gpu.subject

    def add(code: str, status: Status, message: str, action: Action, *pairs: tuple[str, object]) -> None:
        out.append(Finding(code, status, message, subject, _evidence(gpu, *pairs), action))

    if gpu.remap_pending:
        add(
            "GPU_ROW_REMAP_PENDING",
            Status.FAIL,
            f"{subject}: a row remap is pending ({gpu.remapped_rows_uncorrectable} uncorrectable rows remapped): "
            "reset the GPU (or reboot) to activate it, then re-run the checks",
            Action.RESET_GPU,
            ("remapped_row_pending", "Yes"),
            ("remapped_row_unc", gpu.remapped_rows_uncorrectable),
        )
    if gpu.remap_failure:
        add(
            "GPU_ROW_REMAP_FAILURE",
            Status.FAIL,
            f"{subject}: row remapping failed: the memory can no longer be repaired, RMA the GPU",
            Action.RMA,
            ("remapped_row_failure", "Yes"),
        )
    vol = gpu.ecc_volatile
    if vol.layout == "single_double_bit":
        if vol.uncorrected_total:
            add(
                "GPU_ECC_UNCORRECTABLE_VOLATILE",
                Status.FAIL,
                f"{subject}: {vol.uncorrected_total} volatile double-bit (uncorrectable) ECC errors since the driver "
                "loaded: reset the GPU",
                Action.RESET_GPU,
                ("volatile/double_bit/total", vol.uncorrected_total),
            )
    else:
        if vol.dram_uncorrectable:
            add(
                "GPU_ECC_DRAM_UNCORRECTABLE_VOLATILE",
                Status.FAIL,
                f"{subject}: {vol.dram_uncorrectable} volatile uncorrectable DRAM ECC errors: reset the GPU",
                Action.RESET_GPU,
                ("volatile/dram_uncorrectable", vol.dram_uncorrectable),
            )
        if vol.sram_uncorrectable:
            add(
                "GPU_ECC_SRAM_UNCORRECTABLE_VOLATILE",
                Status.FAIL,
                f"{subject}: {vol.sram_uncorrectable} volatile uncorrectable SRAM ECC errors: reset the GPU",
                Action.RESET_GPU,
                ("volatile/sram_uncorrectable", vol.sram_uncorrectable),
            )
    if gpu.sram_threshold_exceeded:
        add(
            "GPU_ECC_SRAM_THRESHOLD_EXCEEDED",
            Status.FAIL,
            f"{subject}: aggregate uncorrectable SRAM errors exceeded NVIDIA's threshold: RMA the GPU",
            Action.RMA,
            ("sram_threshold_exceeded", "Yes"),
        )
    if gpu.unrepairable_memory:
        add(
            "GPU_UNREPAIRABLE_MEMORY",
            Status.FAIL,
            f"{subject}: the driver reports unrepairable memory: RMA the GPU",
            Action.RMA,
            ("unrepairable_memory", "Yes"),
        )
    for flag, name in ((gpu.channel_repair_pending, "CHANNEL"), (gpu.tpc_repair_pending, "TPC")):
        if flag:
            add(
                f"GPU_{name}_REPAIR_PENDING",
                Status.FAIL,
                f"{subject}: a {name.lower()} repair is pending: reset the GPU to apply it",
                Action.RESET_GPU,
                (f"{name.lower()}_repair_pending", "Yes"),
            )
    if gpu.retired_pages_pending:
        add(
            "GPU_RETIRED_PAGES_PENDING",
            Status.FAIL,
            f"{subject}: a page is pending retirement (retired: {gpu.retired_pages_sbe} single-bit, "
            f"{gpu.retired_pages_dbe} double-bit): reboot to retire it",
            Action.REBOOT,
            ("pending_retirement", "Yes"),
            ("double_bit_retirement", gpu.retired_pages_dbe),
        )
    if gpu.recovery_action is not None:
        action = recovery_action(gpu.recovery_action)
        if action is None:
            add(
                "GPU_RECOVERY_ACTION",
                Status.UNKNOWN,
                f"{subject}: unrecognised GPU recovery action {gpu.recovery_action!r}",
                Action.RETEST,
                ("gpu_recovery_action", gpu.recovery_action),
            )
        elif action is not Action.NONE:
            add(
                "GPU_RECOVERY_ACTION",
                Status.FAIL,
                f"{subject}: the driver asks for recovery action {gpu.recovery_action!r}",
                action,
                ("gpu_recovery_action", gpu.recovery_action),
            )
    if gpu.reset_required or gpu.drain_and_reset_recommended:
        add(
            "GPU_RESET_REQUIRED",
            Status.FAIL,
            f"{subject}: the driver asks for a GPU reset (reset_required={gpu.reset_required}, "
            f"drain_and_reset_recommended={gpu.drain_and_reset_recommended})",
            Action.RESET_GPU,
            ("reset_required", gpu.reset_required),
            ("drain_and_reset_recommended", gpu.drain_and_reset_recommended),
        )
    if gpu.ecc_mode_current == "Disabled":
        add(
            "GPU_ECC_DISABLED",
            Status.WARN,
            f"{subject}: ECC is disabled, so memory errors go uncounted",
            Action.NONE,
            ("current_ecc", "Disabled"),
        )
    for name, code in _WARN_REASONS.items():
        if gpu.clock_reasons.get(name):
            add(
                code,
                Status.WARN,
                f"{subject}: clock event reason {name} is active",
                Action.NONE,
                (f"{gpu.clock_reasons_tag}/{name}", "Active"),
            )
    return out


def parse_query_xml(raw: str, *, version: str | None = None) -> NvidiaSmiQuery:
    """Parse ``nvidia-smi -q -x``.

    Args:
        raw: the XML as printed (a leading blank line and a DOCTYPE are fine; the DTD is never fetched).
        version: the driver version if known; otherwise read from ``<driver_version>``.

    Returns:
        :class:`NvidiaSmiQuery`; findings as listed in the module docstring (remap pending/failure, volatile
        uncorrectable ECC, SRAM threshold, repair flags, retired pages pending, recovery action, HW/thermal clock
        reasons, ECC disabled). UNKNOWN for empty, non-XML or truncated output, for no ``<gpu>`` element, for fewer
        ``<gpu>`` elements than ``attached_gpus``, and for needed placeholders. Never raises.
    """
    result = NvidiaSmiQuery(version=version or "")
    result.findings.extend(_lost_findings(raw))
    text = raw.strip()
    if not text:
        result.unknown.append("empty output")
        return result
    try:
        # ElementTree never resolves external DTDs or entities, so the DOCTYPE line is harmless.
        root = ET.fromstring(text)
    except ET.ParseError as err:
        result.unknown.append(f"not well-formed XML ({err})")
        return result
    if root.tag != "nvidia_smi_log":
        result.unknown.append(f"root element is <{root.tag}>, not <nvidia_smi_log>")
        return result
    result.driver_version = (root.findtext("driver_version") or "").strip()
    result.cuda_version = (root.findtext("cuda_version") or "").strip()
    result.version = result.version or result.driver_version
    result.attached_gpus = _int(root.findtext("attached_gpus"))
    for position, elem in enumerate(root.findall("gpu")):
        gpu = _read_gpu(elem, position, result.unknown)
        result.gpus.append(gpu)
        result.findings.extend(_gpu_findings(gpu))
    if not result.gpus:
        result.unknown.append("no <gpu> element")
    elif result.attached_gpus is not None and result.attached_gpus != len(result.gpus):
        result.unknown.append(f"attached_gpus is {result.attached_gpus} but the log has {len(result.gpus)} <gpu>")
    return result


# -- CSV ----------------------------------------------------------------------------------------------------------

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
    if _placeholder(value):
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
    flag = _bool(value) if value in {"Yes", "No", "Active", "Not Active"} else None
    return flag if flag is not None else value


@dataclass
class NvidiaSmiCsv(ToolResult):
    """``nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]``.

    Attributes:
        fields: canonical field names in column order (a duplicate column keeps its name twice).
        rows: one dict per GPU: canonical field -> value. Numbers without units (MiB, W, MHz, %: the unit is in
            the header or the field's definition), hex bitmasks as int, Yes/No and Active/Not Active as bool,
            other text as str, placeholders as None.
        units: canonical field -> unit from the header (``MiB``), when there was a header with units.
    """

    tool: str = "nvidia-smi --query-gpu"
    fields: list[str] = field(default_factory=list)
    rows: list[dict[str, CsvValue]] = field(default_factory=list)
    units: dict[str, str] = field(default_factory=dict)


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
    if not raw.strip():
        result.unknown.append("empty output")
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


def _csv_row_checks(
    number: int, cells: list[str], names: list[str], row: dict[str, CsvValue], result: ToolResult
) -> None:
    subject = f"gpu{row['index']}" if isinstance(row.get("index"), int) else f"row {number}"
    if isinstance(row.get("pci.bus_id"), str):
        subject += f" {row['pci.bus_id']}"
    placeholders = {n: _placeholder(c) for n, c in zip(names, cells, strict=True) if _placeholder(c)}
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
    evidence = ", ".join(f"{n}={c}" for n, c in zip(names, cells, strict=True))

    def add(code: str, status: Status, message: str, action: Action) -> None:
        result.findings.append(Finding(code, status, f"{subject}: {message}", subject, evidence, action))

    if row.get("remapped_rows.pending") is True:
        add("GPU_ROW_REMAP_PENDING", Status.FAIL, "a row remap is pending: reset the GPU (or reboot)", Action.RESET_GPU)
    if row.get("remapped_rows.failure") is True:
        add("GPU_ROW_REMAP_FAILURE", Status.FAIL, "row remapping failed: RMA the GPU", Action.RMA)
    if row.get("retired_pages.pending") is True:
        add("GPU_RETIRED_PAGES_PENDING", Status.FAIL, "a page is pending retirement: reboot", Action.REBOOT)
    for name in ("ecc.errors.uncorrected.volatile.total", "ecc.errors.uncorrected.volatile.dram"):
        value = row.get(name)
        if isinstance(value, int) and value > 0:
            add("GPU_ECC_UNCORRECTABLE_VOLATILE", Status.FAIL, f"{name} = {value}: reset the GPU", Action.RESET_GPU)
            break
    if row.get("ecc.mode.current") == "Disabled":
        add("GPU_ECC_DISABLED", Status.WARN, "ECC is disabled", Action.NONE)
    active = {r for r in _WARN_REASONS if row.get(f"clocks_event_reasons.{r}") is True}
    mask = row.get("clocks_event_reasons.active")
    if isinstance(mask, int):
        active |= {reason for bit, reason in _REASON_BITS.items() if mask & bit}
    for reason in sorted(active):
        add(_WARN_REASONS[reason], Status.WARN, f"clock event reason {reason} is active", Action.NONE)
    recovery = row.get("gpu_recovery_action")
    if isinstance(recovery, str):
        action = recovery_action(recovery)
        if action is None:
            add("GPU_RECOVERY_ACTION", Status.UNKNOWN, f"unrecognised recovery action {recovery!r}", Action.RETEST)
        elif action is not Action.NONE:
            add("GPU_RECOVERY_ACTION", Status.FAIL, f"the driver asks for recovery action {recovery!r}", action)


def parse_query_gpu_csv(raw: str, *, fields: list[str] | None = None, version: str | None = None) -> NvidiaSmiCsv:
    """Parse ``nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]``.

    Args:
        raw: the output.
        fields: the requested field list; required for ``noheader`` output, optional (and checked for the column
            count) when there is a header. With a header the header's names win, since the driver may answer a
            legacy name under the new one.
        version: the driver version if known ("" otherwise; a ``driver_version`` column fills it).

    Returns:
        :class:`NvidiaSmiCsv`. Findings: remap pending (FAIL, reset) / failure (FAIL, RMA), retired pages pending
        (FAIL, reboot), volatile uncorrectable ECC > 0 (FAIL, reset), ECC disabled (WARN), HW/thermal clock reasons
        active by name or bitmask (WARN), a recovery action other than None. UNKNOWN for empty or garbage output,
        rows of the wrong width, a row mostly of placeholders, ``[Unknown Error]`` anywhere, and ``[N/A]`` in a
        health field nothing else answers for (remap vs page retirement, ECC counts vs ECC mode). Never raises.
    """
    result = NvidiaSmiCsv(version=version or "")
    result.findings.extend(_lost_findings(raw))
    for number, (cells, row) in enumerate(_read_table(raw, result, fields), start=1):
        result.rows.append(row)
        _csv_row_checks(number, cells, result.fields, row, result)
        if not result.version and isinstance(row.get("driver_version"), str):
            result.version = str(row["driver_version"])
    return result


# Fields --query-remapped-rows answers besides remapped_rows.* (canonical names).
_REMAP_QUERY_FIELDS = {"pci.bus_id", "uuid", "name", "serial"}


@dataclass
class RemappedRow:
    """One GPU of ``--query-remapped-rows``: counts are rows; pending/failure True/False/None."""

    bus_id: str | None = None
    uuid: str | None = None
    correctable: int | None = None
    uncorrectable: int | None = None
    pending: bool | None = None
    failure: bool | None = None


@dataclass
class RemappedRows(ToolResult):
    """``nvidia-smi --query-remapped-rows=...``: one :class:`RemappedRow` per GPU."""

    tool: str = "nvidia-smi --query-remapped-rows"
    rows: list[RemappedRow] = field(default_factory=list)


def parse_remapped_rows_csv(raw: str, *, fields: list[str] | None = None, version: str | None = None) -> RemappedRows:
    """Parse ``nvidia-smi --query-remapped-rows=gpu_bus_id,...,remapped_rows.pending,remapped_rows.failure
    --format=csv``; pending/failure may be ``0``/``1`` (older drivers) or ``No``/``Yes``.

    Returns:
        :class:`RemappedRows` with GPU_ROW_REMAP_PENDING (FAIL, reset) and GPU_ROW_REMAP_FAILURE (FAIL, RMA)
        findings; UNKNOWN for empty output, no data row, a missing pending or failure column, or a placeholder in
        them (this query exists only for GPUs that remap rows, so they are always needed). Never raises.
    """
    table = NvidiaSmiCsv(tool="nvidia-smi --query-remapped-rows")
    pairs = _read_table(raw, table, fields)
    result = RemappedRows(version=version or "", unknown=table.unknown, findings=_lost_findings(raw))
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
        result.rows.append(entry)
        subject = f"gpu {entry.bus_id or number}"
        evidence = ", ".join(cells)
        for name, value in (("pending", entry.pending), ("failure", entry.failure)):
            if value is None and f"remapped_rows.{name}" in table.fields:
                result.unknown.append(f"{subject}: remapped_rows.{name} is {row.get(f'remapped_rows.{name}')!r}")
        if entry.pending:
            result.findings.append(
                Finding(
                    "GPU_ROW_REMAP_PENDING",
                    Status.FAIL,
                    f"{subject}: a row remap is pending ({entry.uncorrectable} uncorrectable rows): reset the GPU",
                    subject,
                    evidence,
                    Action.RESET_GPU,
                )
            )
        if entry.failure:
            result.findings.append(
                Finding(
                    "GPU_ROW_REMAP_FAILURE",
                    Status.FAIL,
                    f"{subject}: row remapping failed: RMA the GPU",
                    subject,
                    evidence,
                    Action.RMA,
                )
            )
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


# -- nvlink -s / -e -----------------------------------------------------------------------------------------------

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
    """``nvidia-smi nvlink -s`` or ``-e``: one :class:`NvlinkGpu` per GPU header."""

    tool: str = "nvidia-smi nvlink"
    gpus: list[NvlinkGpu] = field(default_factory=list)


def _nvlink_lines(raw: str, result: NvlinkReport, handle: Callable[[NvlinkGpu, str], bool]) -> None:
    current: NvlinkGpu | None = None
    for number, line in enumerate(raw.splitlines(), start=1):
        text = line.strip()
        if not text:
            continue
        header = _GPU_HEADER.match(text)
        if header:
            current = NvlinkGpu(int(header.group("index")), header.group("name"), header.group("uuid"))
            result.gpus.append(current)
            continue
        if _ALL_INACTIVE.search(text):
            if current is None:
                current = NvlinkGpu()
                result.gpus.append(current)
            current.all_inactive = True
            continue
        if current is None or not handle(current, text):
            result.unknown.append(f"line {number} not understood: {text!r}")
    if not result.gpus:
        result.unknown.append("no GPU in the output" if raw.strip() else "empty output")


def parse_nvlink_status(raw: str, *, version: str | None = None) -> NvlinkReport:
    """Parse ``nvidia-smi nvlink -s``.

    Returns:
        :class:`NvlinkReport` with ``links`` per GPU (GB/s, None = inactive). Findings: NVLINK_LINK_INACTIVE
        (WARN) per GPU with inactive links and NVLINK_ALL_INACTIVE (WARN) when NVML says all are inactive; whether
        that is a fault depends on the SKU's expected link count and rate (threshold module). UNKNOWN for empty
        output, no GPU header, a GPU without any link line, or a line that is not understood (an elided ``[...]``
        paste, a truncated line). Never raises.
    """
    result = NvlinkReport(tool="nvidia-smi nvlink -s", version=version or "")

    def handle(gpu: NvlinkGpu, text: str) -> bool:
        match = _LINK_RATE.match(text)
        if not match:
            return False
        gpu.links[int(match.group("link"))] = None if match.group("inactive") else float(match.group("rate"))
        return True

    _nvlink_lines(raw, result, handle)
    for gpu in result.gpus:
        if gpu.all_inactive:
            result.findings.append(
                Finding(
                    "NVLINK_ALL_INACTIVE",
                    Status.WARN,
                    f"{gpu.subject}: NVML reports all NVLink links inactive",
                    gpu.subject,
                    "Unable to retrieve NVLink information as all links are inActive",
                )
            )
            continue
        if not gpu.links:
            result.unknown.append(f"{gpu.subject}: no link line")
            continue
        inactive = sorted(link for link, rate in gpu.links.items() if rate is None)
        if inactive:
            result.findings.append(
                Finding(
                    "NVLINK_LINK_INACTIVE",
                    Status.WARN,
                    f"{gpu.subject}: {len(inactive)} of {len(gpu.links)} NVLink links inactive: {inactive}",
                    gpu.subject,
                    "; ".join(f"Link {link}: <inactive>" for link in inactive),
                )
            )
    return result


@functools.lru_cache(maxsize=64)
def _counter_name(text: str) -> str:
    """``Replay Errors`` -> ``replay_errors`` (a handful of names, repeated on every link line)."""
    return re.sub(r"\W+", "_", text.strip().lower())


def parse_nvlink_errors(raw: str, *, version: str | None = None) -> NvlinkReport:
    """Parse ``nvidia-smi nvlink -e`` (``Link n: Replay Errors: v``, ``Recovery Errors``, ``CRC Errors``...).

    Returns:
        :class:`NvlinkReport` with ``counters`` per GPU and link (counter names in snake case, counts as int, None
        for a placeholder). Finding NVLINK_ERROR_COUNTERS (WARN) per GPU with any non-zero counter; limits are for
        the threshold module (imbue warns at 5 summed). UNKNOWN for empty output, no GPU header, a GPU without
        counters, a non-numeric value, or an unreadable line. On Hopper the legacy error fields may read 0 whatever
        happened (DataDog PR#55966), so a clean result is weak evidence. Never raises.
    """
    result = NvlinkReport(tool="nvidia-smi nvlink -e", version=version or "")

    def handle(gpu: NvlinkGpu, text: str) -> bool:
        match = _LINK_COUNTER.match(text)
        if not match:
            return False
        name = _counter_name(match.group("name"))
        value = _int(match.group("value"))
        if value is None:
            result.unknown.append(f"{gpu.subject} link {match.group('link')}: {name} is {match.group('value')!r}")
        gpu.counters.setdefault(int(match.group("link")), {})[name] = value
        return True

    _nvlink_lines(raw, result, handle)
    for gpu in result.gpus:
        if not gpu.counters and not gpu.all_inactive:
            result.unknown.append(f"{gpu.subject}: no counter line")
            continue
        nonzero = [
            f"Link {link}: {name} {value}"
            for link, counters in sorted(gpu.counters.items())
            for name, value in counters.items()
            if value
        ]
        if nonzero:
            result.findings.append(
                Finding(
                    "NVLINK_ERROR_COUNTERS",
                    Status.WARN,
                    f"{gpu.subject}: non-zero NVLink error counters: {', '.join(nonzero)}",
                    gpu.subject,
                    "; ".join(nonzero),
                )
            )
    return result


__all__ = [
    "CLOCK_REASONS",
    "CSV_ALIASES",
    "EccCounts",
    "GpuQuery",
    "NvidiaSmiCsv",
    "NvidiaSmiQuery",
    "NvlinkGpu",
    "NvlinkReport",
    "RemappedRow",
    "RemappedRows",
    "canonical_field",
    "parse_nvlink_errors",
    "parse_nvlink_status",
    "parse_query_gpu_csv",
    "parse_query_xml",
    "parse_remapped_rows_csv",
]
