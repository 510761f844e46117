"""The facts model of ``nvidia-smi`` output: placeholder rules, value conversion and the per-GPU dataclasses the
``-q -x`` XML reader (:mod:`.nvidia_smi_xml`) and the ``-q`` text reader (:mod:`.nvidia_smi_text`) return.

Placeholder rule. ``N/A``, ``[N/A]``, ``Not Supported``, ``[Not Supported]``, ``Unknown Error``, ``[Unknown Error]``
(and ``GPU is lost`` / ``GPU requires reset``) become ``None``; which of them leave the output incomplete is the
readers' business (``docs/health-gpu-parsers.md``), what they mean for the node the check layer's
(:mod:`hwaac.health.gpu_grading`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, get_args

from hwaac.health.result import Graded

NOT_THERE = {"n/a", "not supported", "requested functionality has been deprecated", "", "none found"}


READ_ERROR = {"unknown error", "gpu is lost", "gpu requires reset", "insufficient permissions", "not found"}


def placeholder(text: str | None) -> str | None:
    """The placeholder kind of ``text`` ("n/a", "unknown error", "gpu is lost"...) or None when it is a value."""
    if text is None:
        return "n/a"
    value = text.strip().strip("[]").strip().lower()
    if value in NOT_THERE:
        return "n/a"
    if value in READ_ERROR:
        return value
    return None


def lost_lines(raw: str) -> list[str]:
    """The lines where nvidia-smi says a GPU is lost or requires a reset instead of printing its data."""
    whole = raw.lower()
    if "gpu is lost" not in whole and "requires reset" not in whole and "requires a reset" not in whole:
        return []  # the usual case: one scan of the text instead of lowercasing every line
    return [
        line.strip()
        for line in raw.splitlines()
        if any(m in line.lower() for m in ("gpu is lost", "gpu requires reset", "requires a reset"))
    ]


INT_VALUE = re.compile(r"(0x[0-9a-fA-F]+|-?\d+)\s*(x|bank\(s\)|MiB|KB/s|%|W|MHz|C)?")


def to_int(text: str | None) -> int | None:
    """An integer from ``text`` ("16x", "5", "0x0000000000000001", "3072 bank(s)"); None for placeholders."""
    if text is None:
        return None
    if text.isascii() and text.isdigit():  # most values: a plain count, read without the placeholder test or regex
        return int(text)
    if placeholder(text):
        return None
    match = INT_VALUE.fullmatch(text.strip())
    if not match:
        return None
    number = match.group(1)
    return int(number, 16) if number[:2] in ("0x", "0X") else int(number)  # "05": base 10, not a base-0 error


def to_bool(text: str | None) -> bool | None:
    """True/False from Yes/No, 1/0, Active/Not Active, Enabled/Disabled; None otherwise."""
    if text is None:
        return None
    value = text.strip().lower()
    if value in {"yes", "1", "active", "enabled", "true"}:
        return True
    if value in {"no", "0", "not active", "disabled", "false"}:
        return False
    return None


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


# Clock event (throttle) reasons, canonical names; the XML tags are clocks_{event,throttle}_reason_<name> (the
# bitmask values: nvmlClocksEventReason*, nvml.h).
ClockReason = Literal[
    "gpu_idle",
    "applications_clocks_setting",
    "sw_power_cap",
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sync_boost",
    "sw_thermal_slowdown",
    "display_clocks_setting",
]
CLOCK_REASONS: tuple[str, ...] = get_args(ClockReason)


# Bitmask of clocks_event_reasons.active (nvml.h nvmlClocksEventReason*): only the reasons warned about.
REASON_BITS = {
    0x8: "hw_slowdown",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
}


@dataclass
class MigDevice:
    """One ``<mig_device>`` of a MIG-enabled GPU: its ids and its own volatile SRAM uncorrectable ECC count
    (``ecc_error_count/volatile_count/sram_uncorrectable``), which MIG mode reports per GPU instance while the whole
    GPU's volatile counts read N/A. None: not reported or a placeholder."""

    index: int | None = None
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None
    sram_uncorrectable_volatile: int | None = None


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
        mig_mode_current: ``Enabled`` / ``Disabled``; mig_devices: the :class:`MigDevice` entries in output order.
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
    mig_devices: list[MigDevice] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def subject(self) -> str:
        """How findings name this GPU: ``gpu0 00000000:18:00.0``."""
        prefix = f"gpu{self.index} " if self.index is not None else "gpu "
        return (prefix + self.pci_bus_id).strip()


@dataclass
class NvidiaSmiQuery(Graded):
    """``nvidia-smi -q -x``: the driver/CUDA versions and one :class:`GpuQuery` per GPU.

    Attributes:
        driver_version, cuda_version: from the log header ("" when absent).
        attached_gpus: the header's GPU count (None when absent).
        gpus: the GPUs in output order.
        lost: lines saying a GPU is lost or requires a reset (:func:`lost_lines`).
        graded: whether :func:`hwaac.health.gpu_grading.grade_query` has added its findings.
    """

    tool: str = "nvidia-smi -q -x"
    driver_version: str = ""
    cuda_version: str = ""
    attached_gpus: int | None = None
    gpus: list[GpuQuery] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    graded: bool = False
