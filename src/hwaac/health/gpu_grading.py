"""What ``nvidia-smi`` facts mean for a GPU: the findings and actions of the per-GPU health fields.

The readers (:mod:`hwaac.health.parsers.nvidia_smi_xml`, :mod:`hwaac.health.parsers.nvidia_smi_text`,
:mod:`hwaac.health.parsers.nvidia_smi_csv`) return facts; here :func:`grade_query` (``-q``, ``-q -x``) and
:func:`grade_query_csv` (``--query-gpu`` rows) decide what the GPU's own fields say (the SKU's limits are applied
after, by :mod:`hwaac.health.checks`): a pending row remap, channel or TPC repair, or a reset request -> FAIL,
RESET_GPU; a failed remap, unrepairable memory or the SRAM threshold -> FAIL, RMA; volatile uncorrectable ECC (in
MIG mode: a MIG device's own volatile SRAM count) -> FAIL, RESET_GPU; a page pending retirement -> FAIL, REBOOT; the
driver's recovery action -> its action (:func:`hwaac.health.xid.recovery_action`); ECC disabled and HW/thermal clock
slowdowns -> WARN; "GPU is lost" -> FAIL, REBOOT (as XID 79), "requires reset" -> FAIL, RESET_GPU.
"""

from __future__ import annotations

from hwaac.health.parsers.nvidia_smi_csv import CsvValue, NvidiaSmiCsv, RemappedRows
from hwaac.health.parsers.nvidia_smi_model import REASON_BITS, GpuQuery, NvidiaSmiQuery
from hwaac.health.result import Action, Finding, Status, grade_once
from hwaac.health.xid import recovery_action

# Reasons graded here (hardware or thermal slowdowns); the rest is for the profile's clock_reasons lists.
WARN_REASONS = {
    "hw_slowdown": "GPU_CLOCKS_HW_SLOWDOWN",
    "hw_thermal_slowdown": "GPU_CLOCKS_HW_THERMAL_SLOWDOWN",
    "hw_power_brake_slowdown": "GPU_CLOCKS_HW_POWER_BRAKE",
    "sw_thermal_slowdown": "GPU_CLOCKS_SW_THERMAL_SLOWDOWN",
}


def lost_findings(lines: list[str]) -> list[Finding]:
    """GPU_LOST / GPU_RESET_REQUIRED findings for the error lines nvidia-smi prints instead of data."""
    findings: list[Finding] = []
    for line in lines:
        low = line.lower()
        if "gpu is lost" in low:
            findings.append(
                Finding(
                    "GPU_LOST",
                    Status.FAIL,
                    "nvidia-smi reports the GPU as lost (as XID 79): reboot the node; RMA if it recurs",
                    evidence=line,
                    action=Action.REBOOT,
                )
            )
        elif "gpu requires reset" in low or "requires a reset" in low:
            findings.append(
                Finding(
                    "GPU_RESET_REQUIRED",
                    Status.FAIL,
                    "nvidia-smi reports that the GPU requires a reset",
                    evidence=line,
                    action=Action.RESET_GPU,
                )
            )
    return findings


def _evidence(gpu: GpuQuery, *pairs: tuple[str, object]) -> str:
    return f"{gpu.pci_bus_id}: " + ", ".join(f"{k}={v}" for k, v in pairs)


def gpu_findings(gpu: GpuQuery) -> list[Finding]:
    """The findings one GPU's own health fields call for (see the module docstring)."""
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
        for memory, count in (("DRAM", vol.dram_uncorrectable), ("SRAM", vol.sram_uncorrectable)):
            if count:
                add(
                    f"GPU_ECC_{memory}_UNCORRECTABLE_VOLATILE",
                    Status.FAIL,
                    f"{subject}: {count} volatile uncorrectable {memory} ECC errors: reset the GPU",
                    Action.RESET_GPU,
                    (f"volatile/{memory.lower()}_uncorrectable", count),
                )
    mig_errors = [d for d in gpu.mig_devices if d.sram_uncorrectable_volatile]
    if mig_errors and not vol.sram_uncorrectable:  # MIG mode: counted per GPU instance, the whole GPU reads N/A
        count = sum(d.sram_uncorrectable_volatile or 0 for d in mig_errors)
        where = ", ".join(f"{d.index} (GI {d.gpu_instance_id}, CI {d.compute_instance_id})" for d in mig_errors)
        add(
            "GPU_ECC_SRAM_UNCORRECTABLE_VOLATILE",
            Status.FAIL,
            f"{subject}: {count} volatile uncorrectable SRAM ECC errors in MIG device(s) {where}: reset the GPU",
            Action.RESET_GPU,
            *((f"mig_device {d.index} volatile/sram_uncorrectable", d.sram_uncorrectable_volatile) for d in mig_errors),
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
    for name, code in WARN_REASONS.items():
        if gpu.clock_reasons.get(name):
            add(
                code,
                Status.WARN,
                f"{subject}: clock event reason {name} is active",
                Action.NONE,
                (f"{gpu.clock_reasons_tag}/{name}", "Active"),
            )
    return out


@grade_once
def grade_query(q: NvidiaSmiQuery) -> None:
    """Add the findings of the lost-GPU lines and of every GPU's health fields to ``q`` and return it; grading twice
    does nothing."""
    q.findings.extend(lost_findings(q.lost))
    for gpu in q.gpus:
        q.findings.extend(gpu_findings(gpu))


def csv_row_findings(subject: str, row: dict[str, CsvValue], evidence: str) -> list[Finding]:
    """The findings one ``--query-gpu`` row calls for: remap pending (FAIL, RESET_GPU) / failure (FAIL, RMA), retired
    pages pending (FAIL, REBOOT), volatile uncorrectable ECC > 0 (FAIL, RESET_GPU), ECC disabled (WARN), HW/thermal
    clock reasons active by name or by the ``clocks_event_reasons.active`` bitmask (WARN), a recovery action other
    than None (its action; UNKNOWN when not recognised)."""
    out: list[Finding] = []

    def add(code: str, status: Status, message: str, action: Action) -> None:
        out.append(Finding(code, status, f"{subject}: {message}", subject, evidence, action))

    if row.get("remapped_rows.pending") is True:
        add("GPU_ROW_REMAP_PENDING", Status.FAIL, "a row remap is pending: reset the GPU (or reboot)", Action.RESET_GPU)
    if row.get("remapped_rows.failure") is True:
        add("GPU_ROW_REMAP_FAILURE", Status.FAIL, "row remapping failed: RMA the GPU", Action.RMA)
    if row.get("retired_pages.pending") is True:
        add("GPU_RETIRED_PAGES_PENDING", Status.FAIL, "a page is pending retirement: reboot", Action.REBOOT)
    for name in ("ecc.errors.uncorrected.volatile.total", "ecc.errors.uncorrected.volatile.dram"):
        value = row.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            add("GPU_ECC_UNCORRECTABLE_VOLATILE", Status.FAIL, f"{name} = {value}: reset the GPU", Action.RESET_GPU)
            break
    if row.get("ecc.mode.current") == "Disabled":
        add("GPU_ECC_DISABLED", Status.WARN, "ECC is disabled", Action.NONE)
    active = {r for r in WARN_REASONS if row.get(f"clocks_event_reasons.{r}") is True}
    mask = row.get("clocks_event_reasons.active")
    if isinstance(mask, int) and not isinstance(mask, bool):
        active |= {reason for bit, reason in REASON_BITS.items() if mask & bit}
    for reason in sorted(active):
        add(WARN_REASONS[reason], Status.WARN, f"clock event reason {reason} is active", Action.NONE)
    recovery = row.get("gpu_recovery_action")
    if isinstance(recovery, str):
        action = recovery_action(recovery)
        if action is None:
            add("GPU_RECOVERY_ACTION", Status.UNKNOWN, f"unrecognised recovery action {recovery!r}", Action.RETEST)
        elif action is not Action.NONE:
            add("GPU_RECOVERY_ACTION", Status.FAIL, f"the driver asks for recovery action {recovery!r}", action)
    return out


@grade_once
def grade_query_csv(result: NvidiaSmiCsv) -> None:
    """Add the findings of the lost-GPU lines and of every ``--query-gpu`` row (:func:`csv_row_findings`) to
    ``result`` and return it; grading twice does nothing."""
    result.findings.extend(lost_findings(result.lost))
    for subject, row, evidence in zip(result.subjects, result.rows, result.evidence, strict=True):
        result.findings.extend(csv_row_findings(subject, row, evidence))


@grade_once
def grade_remapped(r: RemappedRows) -> None:
    """Add the findings of ``--query-remapped-rows`` to ``r`` and return it (once): a pending remap FAIL with
    RESET_GPU (a reset applies it), a failed remap FAIL with RMA, and the lost-GPU lines."""
    r.findings.extend(lost_findings(r.lost))
    for number, row in enumerate(r.rows, start=1):
        subject = f"gpu {row.bus_id or number}"
        if row.pending:
            r.findings.append(
                Finding(
                    "GPU_ROW_REMAP_PENDING",
                    Status.FAIL,
                    f"{subject}: a row remap is pending ({row.uncorrectable} uncorrectable rows): reset the GPU",
                    subject,
                    row.evidence,
                    Action.RESET_GPU,
                )
            )
        if row.failure:
            r.findings.append(
                Finding(
                    "GPU_ROW_REMAP_FAILURE",
                    Status.FAIL,
                    f"{subject}: row remapping failed: RMA the GPU",
                    subject,
                    row.evidence,
                    Action.RMA,
                )
            )


__all__ = [
    "WARN_REASONS",
    "csv_row_findings",
    "gpu_findings",
    "grade_query",
    "grade_query_csv",
    "grade_remapped",
    "lost_findings",
]
