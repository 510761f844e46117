"""Threshold checks of the GPUs and of measured performance: a parsed tool result and a SKU profile in, findings
out (pure functions). The NICs' are in :mod:`hwaac.health.checks_nic` and :mod:`hwaac.health.checks_rdma`.

The formats, sources and rules in full: ``docs/health-modules.md``, section "Threshold checks".
"""

from __future__ import annotations

from hwaac.health.dcgm_grading import grade_diag, grade_health
from hwaac.health.gpu_burn_grading import grade_gpu_burn
from hwaac.health.gpu_grading import grade_query, grade_query_csv, grade_remapped
from hwaac.health.kernel_grading import grade_kernel_log
from hwaac.health.nvbandwidth_grading import grade_nvbandwidth
from hwaac.health.parsers.dcgm_health import DcgmHealthResult
from hwaac.health.parsers.dcgm_model import DcgmDiagResult
from hwaac.health.parsers.gpu_burn import GpuBurnResult
from hwaac.health.parsers.kernel_log import KernelLog
from hwaac.health.parsers.nccl_tests import NcclTestsResult
from hwaac.health.parsers.nvbandwidth import NvbandwidthResult
from hwaac.health.parsers.nvidia_smi import NvidiaSmiCsv, NvidiaSmiQuery, NvlinkReport, RemappedRows
from hwaac.health.parsers.perftest import PerftestResult
from hwaac.health.perftest_grading import grade_perftest
from hwaac.health.profile import MinThreshold, Profile
from hwaac.health.result import Action, Finding, Status, incomplete_means_retest, retest_finding

# --- GPUs ---------------------------------------------------------------------------------------------------------


@incomplete_means_retest
def check_gpus(q: NvidiaSmiQuery, profile: Profile, *, under_load: bool = False) -> list[Finding]:
    """``nvidia-smi -q -x`` (or ``-q``) graded (:func:`hwaac.health.gpu_grading.grade_query`), then against the
    profile: GPU count and model, ECC mode and limits, row remaps, clock event
    reasons, PCIe width and generation (the current generation only ``under_load``: idle GPUs train down to Gen1,
    nvidia-smi's own help says so)."""
    lim = profile.gpu
    out = grade_query(q).all_findings()
    if len(q.gpus) != lim.count and not q.unknown:
        out.append(
            Finding(
                "GPU_COUNT",
                Status.FAIL,
                f"{len(q.gpus)} GPU(s) visible, the SKU has {lim.count}",
                evidence=f"attached_gpus {q.attached_gpus}",
                action=Action.REBOOT,
            )
        )
    for g in q.gpus:
        s = g.subject
        if g.product_name is not None and lim.product_name not in g.product_name:
            out.append(
                Finding(
                    "GPU_MODEL_MISMATCH",
                    Status.FAIL,
                    f"{g.product_name!r} is not a {lim.product_name} ({profile.sku}): wrong profile or wrong hardware",
                    s,
                    f"product_name {g.product_name}",
                    Action.NONE,
                )
            )
        if g.ecc_mode_current is not None and g.ecc_mode_current != lim.ecc_mode:
            out.append(
                Finding(
                    "GPU_ECC_DISABLED",
                    Status.FAIL,
                    f"ECC mode {g.ecc_mode_current}, must be Enabled (nvidia-smi -e 1, then reboot)",
                    s,
                    f"ecc_mode {g.ecc_mode_current}",
                    Action.REBOOT,
                )
            )
        _limit(
            out,
            "GPU_ECC_DRAM_UNCORRECTABLE_VOLATILE",
            g.ecc_volatile.dram_uncorrectable,
            lim.dram_uncorrectable_volatile_max,
            "volatile DRAM uncorrectable ECC errors",
            s,
            Action.RESET_GPU,
        )
        agg = g.ecc_aggregate
        sram_unc = agg.sram_uncorrectable
        if sram_unc is None and agg.sram_uncorrectable_parity is not None:
            sram_unc = (agg.sram_uncorrectable_parity or 0) + (agg.sram_uncorrectable_secded or 0)
        _limit(
            out,
            "GPU_ECC_SRAM_UNCORRECTABLE",
            sram_unc,
            lim.sram_uncorrectable_max,
            "aggregate SRAM uncorrectable ECC errors",
            s,
            Action.RMA,
        )
        _limit(
            out,
            "GPU_ECC_SRAM_CORRECTABLE",
            g.ecc_aggregate.sram_correctable,
            lim.sram_correctable_max,
            "aggregate SRAM correctable ECC errors",
            s,
            Action.RMA,
        )
        _limit(
            out,
            "GPU_ECC_DRAM_CORRECTABLE",
            g.ecc_aggregate.dram_correctable,
            lim.dram_correctable_aggregate_max,
            "aggregate DRAM correctable ECC errors",
            s,
            Action.RMA,
        )
        _limit(
            out,
            "GPU_ROW_REMAP_UNCORRECTABLE",
            g.remapped_rows_uncorrectable,
            lim.remapped_rows_uncorrectable_max,
            "rows remapped for uncorrectable errors",
            s,
            Action.RMA,
        )
        for reason, active in g.clock_reasons.items():
            if not active:
                continue
            if reason in lim.clock_reasons_fail:
                out.append(
                    Finding(
                        f"GPU_CLOCKS_{reason.upper()}",
                        Status.FAIL,
                        f"clock event reason {reason} is active: check cooling and power, then reboot",
                        s,
                        f"{reason} Active",
                        Action.REBOOT,
                    )
                )
            elif reason in lim.clock_reasons_warn:
                out.append(
                    Finding(
                        f"GPU_CLOCKS_{reason.upper()}",
                        Status.WARN,
                        f"clock event reason {reason} is active",
                        s,
                        f"{reason} Active",
                    )
                )
        if g.pcie_width_current is not None and g.pcie_width_current < lim.pcie_width:
            out.append(
                Finding(
                    "GPU_PCIE_WIDTH",
                    Status.FAIL,
                    f"PCIe link x{g.pcie_width_current}, expected "
                    f"x{lim.pcie_width}: reboot to retrain, reseat if it stays",
                    s,
                    f"pcie width current {g.pcie_width_current} max {g.pcie_width_max}",
                    Action.REBOOT,
                )
            )
        gen_max = g.pcie_gen_device_max or g.pcie_gen_max
        if gen_max is not None and gen_max < lim.pcie_generation:
            out.append(
                Finding(
                    "GPU_PCIE_GENERATION",
                    Status.FAIL,
                    f"PCIe max generation {gen_max}, expected Gen{lim.pcie_generation}",
                    s,
                    f"pcie gen max {gen_max}",
                    Action.REBOOT,
                )
            )
        current = g.pcie_gen_device_current or g.pcie_gen_current
        if under_load and current is not None and gen_max is not None and current < gen_max:
            out.append(
                Finding(
                    "GPU_PCIE_DOWNGRADED",
                    Status.WARN,
                    f"PCIe Gen{current} under load, the link can do Gen{gen_max}",
                    s,
                    f"pcie gen current {current}",
                    Action.NONE,
                )
            )
    return out


def _limit(
    out: list[Finding], code: str, value: int | None, limit: int, what: str, subject: str, action: Action
) -> None:
    if value is not None and value > limit:
        out.append(
            Finding(code, Status.FAIL, f"{value} {what}, the limit is {limit}", subject, f"{what}: {value}", action)
        )


@incomplete_means_retest
def check_query_gpu_csv(result: NvidiaSmiCsv) -> list[Finding]:
    """``--query-gpu`` rows graded (:func:`hwaac.health.gpu_grading.grade_query_csv`: remaps, retired pages, volatile
    ECC, ECC mode, clock event reasons, recovery action); the rows carry no identity the profile's counts could be
    held against, so nothing is added from it."""
    return grade_query_csv(result).all_findings()


@incomplete_means_retest
def check_remapped_rows(r: RemappedRows, profile: Profile) -> list[Finding]:
    """``--query-remapped-rows`` graded (pending/failure: :func:`hwaac.health.gpu_grading.grade_remapped`) plus the
    profile's uncorrectable-rows limit."""
    out = grade_remapped(r).all_findings()
    for row in r.rows:
        _limit(
            out,
            "GPU_ROW_REMAP_UNCORRECTABLE",
            row.uncorrectable,
            profile.gpu.remapped_rows_uncorrectable_max,
            "rows remapped for uncorrectable errors",
            f"gpu {row.bus_id or '?'}",
            Action.RMA,
        )
    return out


@incomplete_means_retest
def check_nvlink(status: NvlinkReport | None, errors: NvlinkReport | None, profile: Profile) -> list[Finding]:
    """``nvlink -s`` (and ``-e``): every GPU has the SKU's active links at its speed; errors below the warn sum.
    The readers return facts only; every verdict on links and counters is made here. ``status`` None: only ``-e``
    was read (its ``-s`` probe failed, and says so itself).

    An inactive link fails the GPU (imbue fails on ``<inactive>``): on HGX boards every NVLink goes to an NVSwitch.
    """
    lim = profile.gpu
    out = status.all_findings() if status is not None else []
    if status is not None and not status.gpus and not status.unknown:
        out.append(retest_finding("NVLINK_NO_OUTPUT", "nvidia-smi nvlink -s printed no GPU"))
    for g in status.gpus if status is not None else []:
        active = [rate for rate in g.links.values() if rate is not None]
        if len(active) < lim.nvlink_links:
            out.append(
                Finding(
                    "NVLINK_LINKS_DOWN",
                    Status.FAIL,
                    f"{len(active)} of {lim.nvlink_links} NVLink links active: reset the GPU, RMA if it stays",
                    g.subject,
                    f"inactive links: {sorted(k for k, v in g.links.items() if v is None)}",
                    Action.RESET_GPU,
                )
            )
        slow = sorted(k for k, v in g.links.items() if v is not None and v < lim.nvlink_link_gbytes_per_s * 0.99)
        if slow:
            out.append(
                Finding(
                    "NVLINK_LINK_SLOW",
                    Status.WARN,
                    f"links {slow} below {lim.nvlink_link_gbytes_per_s} GB/s",
                    g.subject,
                    action=Action.NONE,
                )
            )
    if errors is not None:
        out += errors.all_findings()
        for g in errors.gpus:
            total = sum(v for counters in g.counters.values() for v in counters.values() if v is not None)
            if total >= lim.nvlink_errors_warn:
                out.append(
                    Finding(
                        "NVLINK_ERRORS",
                        Status.WARN,
                        f"{total} NVLink replay/recovery/CRC errors (warn at {lim.nvlink_errors_warn})",
                        g.subject,
                        action=Action.NONE,
                    )
                )
    return out


@incomplete_means_retest
def check_kernel_log(log: KernelLog) -> list[Finding]:
    """XIDs, SXids, fallen-off-the-bus and PCIe 'limited by' lines graded
    (:func:`hwaac.health.kernel_grading.grade_kernel_log`; parse with ``since`` set to the profile's XID window so
    old events are history)."""
    return grade_kernel_log(log).all_findings()


@incomplete_means_retest
def check_dcgm(result: DcgmDiagResult | DcgmHealthResult) -> list[Finding]:
    """A diag result graded (severities, error ids and exit status: :func:`hwaac.health.dcgm_grading.grade_diag`), or
    ``dcgmi health``'s own words graded (:func:`hwaac.health.dcgm_grading.grade_health`); nothing to add from the
    profile."""
    if isinstance(result, DcgmDiagResult):
        return grade_diag(result).all_findings()
    return grade_health(result).all_findings()


@incomplete_means_retest
def check_gpu_burn(result: GpuBurnResult, profile: Profile) -> list[Finding]:
    """gpu-burn's per-GPU OK/FAULTY (exit 0 with FAULTY is FAIL, parser); every GPU of the SKU must be tested."""
    out = grade_gpu_burn(result).all_findings()
    if result.tested_gpus is not None and result.tested_gpus != profile.gpu.count:
        out.append(
            Finding(
                "GPUBURN_GPU_COUNT",
                Status.FAIL,
                f"gpu-burn tested {result.tested_gpus} GPU(s), the SKU has {profile.gpu.count}",
                action=Action.REBOOT,
            )
        )
    return out


# --- measured performance -----------------------------------------------------------------------------------------


def _against(
    value: float | None, th: MinThreshold, code: str, what: str, unit: str, subject: str, action: Action
) -> list[Finding]:
    if value is None:
        return [retest_finding(f"{code}_MISSING", f"{what}: no figure at the threshold's method", subject)]
    if value < th.min:
        return [
            Finding(f"{code}_LOW", Status.FAIL, f"{what} {value:g} {unit} < {th.min:g} {unit}", subject, action=action)
        ]
    if th.warn_below is not None and value < th.warn_below:
        return [
            Finding(
                f"{code}_LOW",
                Status.WARN,
                f"{what} {value:g} {unit} < {th.warn_below:g} {unit} (warn)",
                subject,
                action=Action.NONE,
            )
        ]
    return []


def _method_mismatch(what: str, problems: list[str], subject: str) -> list[Finding]:
    return (
        [retest_finding("METHOD_MISMATCH", f"{what} not compared: " + "; ".join(problems), subject)] if problems else []
    )


@incomplete_means_retest
def check_nccl(
    result: NcclTestsResult,
    th: MinThreshold,
    *,
    nccl_algo: str | None = None,
    nodes: int | None = None,
    subject: str = "",
) -> list[Finding]:
    """nccl-tests all_reduce_perf busbw (GB/s) at the threshold's message size, if the run matches its method.

    ``nccl_algo``: NCCL_ALGO the run was started with (else the algorithms NCCL_DEBUG printed); ``nodes``: the run's
    node count (else the hosts of the rank lines)."""
    out = result.all_findings()
    m = th.method
    problems: list[str] = []
    n = nodes if nodes is not None else (len(result.hosts) or None)
    if m.nodes is not None and n != m.nodes:
        problems.append(f"{n} node(s), the threshold is for {m.nodes}")
    if m.min_nodes is not None and (n is None or n < m.min_nodes):
        problems.append(f"{n} node(s), the threshold needs >= {m.min_nodes}")
    algo = nccl_algo or (result.algorithms[0] if len(set(result.algorithms)) == 1 else None)
    if m.nccl_algo is not None and (algo or "").upper() != m.nccl_algo.upper():
        problems.append(f"NCCL_ALGO {algo or 'not forced'}, the threshold is for {m.nccl_algo}")
    if problems:
        return out + _method_mismatch("all_reduce_perf busbw", problems, subject)
    if result.status() == Status.UNKNOWN and not result.rows:
        return out
    value = result.busbw_at(m.message_bytes) if m.message_bytes else result.busbw_at_largest_gbytes_per_s
    multi = (n or 1) > 1
    return out + _against(
        value,
        th,
        "NCCL_BUSBW",
        f"all_reduce busbw at {m.message_bytes} B",
        "GB/s",
        subject,
        Action.CHECK_LINK if multi else Action.REBOOT,
    )


@incomplete_means_retest
def check_perftest(result: PerftestResult, th: MinThreshold, *, subject: str = "") -> list[Finding]:
    """perftest bandwidth (Gb/s, average) at the threshold's message size, if the run matches its method."""
    out = grade_perftest(result).all_findings()
    m = th.method
    problems: list[str] = []
    if m.gpudirect is not None and result.gpudirect != m.gpudirect:
        problems.append(
            f"GPUDirect {'on' if result.gpudirect else 'off'}, the threshold is for {'on' if m.gpudirect else 'off'}"
        )
    if result.bidirectional != m.bidirectional:
        problems.append(
            f"{'bi' if result.bidirectional else 'uni'}directional run, the threshold is "
            f"{'bi' if m.bidirectional else 'uni'}directional"
        )
    if result.verb and m.tool != f"ib_{result.verb}_bw":
        problems.append(f"ib_{result.verb}_bw run, the threshold is for {m.tool}")
    if problems:
        return out + _method_mismatch(f"{m.tool} bandwidth", problems, subject)
    if not result.bw_rows:
        if result.status() >= Status.UNKNOWN:
            return out
        return [*out, retest_finding("PERFTEST_NO_TABLE", "no bandwidth table", subject)]
    value = result.bw_at(m.message_bytes) if m.message_bytes else result.bw_average_gbits_per_s
    return out + _against(
        value, th, "NIC_WRITE_BW", f"{m.tool} at {m.message_bytes} B", "Gb/s", subject, Action.CHECK_LINK
    )


@incomplete_means_retest
def check_nvbandwidth(result: NvbandwidthResult, profile: Profile) -> list[Finding]:
    """Host->GPU and GPU<->GPU copy bandwidth (GB/s): the slowest GPU or pair against the profile's gates."""
    out = grade_nvbandwidth(result).all_findings()
    perf = profile.performance
    for th, code, what, action in (
        (perf.host_to_device_gbytes_per_s, "GPU_H2D_BW", "host->GPU copy", Action.REBOOT),
        (perf.device_to_device_gbytes_per_s, "GPU_P2P_BW", "GPU<->GPU copy", Action.RESET_GPU),
    ):
        test = result.test(th.method.test or "")
        if test is None or test.waived:
            out.append(
                retest_finding(
                    f"{code}_MISSING",
                    f"nvbandwidth did not run {th.method.test}" + (" (waived)" if test is not None else ""),
                )
            )
            continue
        worst: tuple[float, str] | None = None
        for row, values in test.rows.items():
            for col, v in zip(test.columns, values, strict=False):
                if v is not None and (worst is None or v < worst[0]):
                    worst = (v, f"cpu->gpu{col}" if "host_to_device" in test.name else f"gpu{row}<->gpu{col}")
        if worst is None:
            out.append(retest_finding(f"{code}_MISSING", f"{test.name}: no figure in the matrix"))
        else:
            out += _against(worst[0], th, code, f"slowest {what} ({worst[1]})", "GB/s", worst[1], action)
    return out
