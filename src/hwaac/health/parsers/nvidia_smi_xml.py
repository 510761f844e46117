"""Reader of ``nvidia-smi -q -x``: one :class:`GpuQuery` of facts per ``<gpu>``.

The formats, sources and rules in full: ``docs/health-modules.md``, section "nvidia-smi -q -x".
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hwaac.health.parsers.base import no_output
from hwaac.health.parsers.nvidia_smi_model import (
    CLOCK_REASONS,
    EccCounts,
    GpuQuery,
    MigDevice,
    NvidiaSmiQuery,
    lost_lines,
    placeholder,
    to_bool,
    to_int,
)


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
        return None if placeholder(value) else value

    def raw(self, path: str) -> str | None:
        node = self.index.get(path)
        return None if node is None or node.text is None else node.text.strip()

    def needed(self, path: str, why: str) -> None:
        """Record a reason when ``path`` is missing or a placeholder although health depends on it."""
        raw = self.raw(path)
        if raw is None or placeholder(raw):
            self.unknown.append(f"{self.where}: {path} is {raw if raw is not None else 'missing'} ({why})")

    def read_error(self, path: str) -> None:
        raw = self.raw(path)
        if raw is not None and placeholder(raw) not in (None, "n/a"):
            self.unknown.append(f"{self.where}: {path} is {raw!r}")


def _ecc_counts(r: _Reader, scope: str) -> EccCounts:
    base = f"ecc_errors/{scope}"
    counts = EccCounts()
    if r.find(f"{base}/single_bit") is not None:
        counts.layout = "single_double_bit"
        counts.dram_correctable = to_int(r.raw(f"{base}/single_bit/device_memory"))
        counts.dram_uncorrectable = to_int(r.raw(f"{base}/double_bit/device_memory"))
        counts.corrected_total = to_int(r.raw(f"{base}/single_bit/total"))
        counts.uncorrected_total = to_int(r.raw(f"{base}/double_bit/total"))
        return counts
    if r.find(base) is None:
        return counts
    counts.sram_correctable = to_int(r.raw(f"{base}/sram_correctable"))
    counts.dram_correctable = to_int(r.raw(f"{base}/dram_correctable"))
    counts.dram_uncorrectable = to_int(r.raw(f"{base}/dram_uncorrectable"))
    if r.find(f"{base}/sram_uncorrectable_parity") is not None:
        counts.layout = "sram_dram_split"
        counts.sram_uncorrectable_parity = to_int(r.raw(f"{base}/sram_uncorrectable_parity"))
        counts.sram_uncorrectable_secded = to_int(r.raw(f"{base}/sram_uncorrectable_secded"))
        if counts.sram_uncorrectable_parity is not None and counts.sram_uncorrectable_secded is not None:
            counts.sram_uncorrectable = counts.sram_uncorrectable_parity + counts.sram_uncorrectable_secded
    else:
        counts.layout = "sram_dram"
        counts.sram_uncorrectable = to_int(r.raw(f"{base}/sram_uncorrectable"))
    if counts.sram_correctable is not None and counts.dram_correctable is not None:
        counts.corrected_total = counts.sram_correctable + counts.dram_correctable
    if counts.sram_uncorrectable is not None and counts.dram_uncorrectable is not None:
        counts.uncorrected_total = counts.sram_uncorrectable + counts.dram_uncorrectable
    return counts


def _mig_devices(elem: ET.Element, where: str, unknown: list[str]) -> list[MigDevice]:
    """The ``mig_devices/mig_device`` entries; a read error in a device's volatile SRAM count is an unknown reason."""
    devices = []
    for node in elem.findall("mig_devices/mig_device"):
        raw = node.findtext("ecc_error_count/volatile_count/sram_uncorrectable")
        device = MigDevice(
            index=to_int(node.findtext("index")),
            gpu_instance_id=to_int(node.findtext("gpu_instance_id")),
            compute_instance_id=to_int(node.findtext("compute_instance_id")),
            sram_uncorrectable_volatile=to_int(raw),
        )
        if raw is not None and placeholder(raw) not in (None, "n/a"):
            unknown.append(f"{where}: MIG device {device.index} volatile sram_uncorrectable is {raw.strip()!r}")
        devices.append(device)
    return devices


def _volatile_dram(gpu: GpuQuery) -> str:
    if gpu.ecc_volatile.layout == "single_double_bit":
        return "ecc_errors/volatile/double_bit/total"
    return "ecc_errors/volatile/dram_uncorrectable"


def read_gpu(elem: ET.Element, position: int, unknown: list[str]) -> GpuQuery:
    """The facts of one ``<gpu>`` element (also of the one the ``-q`` text reader builds); reasons go to `unknown`."""
    gpu = GpuQuery(pci_bus_id=elem.get("id", "") or "")
    r = _Reader(elem, f"gpu {gpu.pci_bus_id or position}", unknown)
    gpu.index = to_int(r.raw("minor_number"))
    gpu.pci_bus_id = gpu.pci_bus_id or (r.text("pci/pci_bus_id") or "")
    gpu.serial, gpu.uuid = r.text("serial"), r.text("uuid")
    gpu.product_name, gpu.product_architecture = r.text("product_name"), r.text("product_architecture")
    gpu.mig_mode_current = r.text("mig_mode/current_mig")
    gpu.mig_devices = _mig_devices(elem, r.where, unknown)

    gpu.ecc_mode_current, gpu.ecc_mode_pending = r.text("ecc_mode/current_ecc"), r.text("ecc_mode/pending_ecc")
    r.needed("ecc_mode/current_ecc", "ECC mode decides whether the error counts mean anything")
    gpu.ecc_volatile, gpu.ecc_aggregate = _ecc_counts(r, "volatile"), _ecc_counts(r, "aggregate")
    ecc_on = gpu.ecc_mode_current == "Enabled"
    if ecc_on and gpu.mig_mode_current == "Enabled" and placeholder(r.raw(_volatile_dram(gpu))) == "n/a":
        # MIG mode: the driver reports volatile ECC per GPU instance and prints N/A for the whole GPU (recorded in
        # NVIDIA/nvidia-docker#1473, A100 with MIG); the aggregate counts and ECC mode still carry the GPU's health
        gpu.notes.append(
            "MIG is enabled: volatile ECC counts are N/A by design; aggregate counts and each MIG "
            "device's volatile SRAM count are judged"
        )
    elif ecc_on:
        if gpu.ecc_volatile.layout == "single_double_bit":
            r.needed("ecc_errors/volatile/double_bit/total", "volatile uncorrectable ECC count")
        elif gpu.ecc_volatile.layout == "absent":
            unknown.append(f"{r.where}: ECC is Enabled but ecc_errors/volatile is missing")
        else:
            r.needed("ecc_errors/volatile/dram_uncorrectable", "volatile uncorrectable DRAM ECC count")
    for path in ("ecc_errors/volatile/dram_uncorrectable", "ecc_errors/volatile/sram_uncorrectable"):
        r.read_error(path)
    gpu.sram_threshold_exceeded = to_bool(r.text("ecc_errors/aggregate/sram_threshold_exceeded"))
    gpu.channel_repair_pending = to_bool(r.text("ecc_errors/channel_repair_pending"))
    gpu.tpc_repair_pending = to_bool(r.text("ecc_errors/tpc_repair_pending"))
    gpu.unrepairable_memory = to_bool(r.text("ecc_errors/unrepairable_memory"))

    remap = elem.find("remapped_rows")
    # <remapped_rows>N/A</remapped_rows> (no children) on GPUs or modes without row remapping.
    gpu.remap_supported = remap is not None and len(remap) > 0
    if gpu.remap_supported:
        gpu.remapped_rows_correctable = to_int(r.raw("remapped_rows/remapped_row_corr"))
        gpu.remapped_rows_uncorrectable = to_int(r.raw("remapped_rows/remapped_row_unc"))
        gpu.remap_pending = to_bool(r.text("remapped_rows/remapped_row_pending"))
        gpu.remap_failure = to_bool(r.text("remapped_rows/remapped_row_failure"))
        r.needed("remapped_rows/remapped_row_pending", "the GPU remaps rows")
        r.needed("remapped_rows/remapped_row_failure", "the GPU remaps rows")
        for bucket in ("max", "high", "partial", "low", "none"):
            value = r.raw(f"remapped_rows/row_remapper_histogram/row_remapper_histogram_{bucket}")
            if value is not None:
                gpu.remap_histogram_banks[bucket] = to_int(value)

    gpu.retired_pages_sbe = to_int(r.raw("retired_pages/multiple_single_bit_retirement/retired_count"))
    gpu.retired_pages_dbe = to_int(r.raw("retired_pages/double_bit_retirement/retired_count"))
    pending_tag = next(
        (t for t in ("retired_pages/pending_retirement", "retired_pages/pending_blacklist") if r.text(t) is not None),
        "retired_pages/pending_retirement",
    )
    gpu.retired_pages_pending = to_bool(r.text(pending_tag))
    remap = elem.find("remapped_rows")
    mig_hides_remap = (
        gpu.mig_mode_current == "Enabled" and remap is not None and not len(remap) and placeholder(remap.text) == "n/a"
    )
    if mig_hides_remap and placeholder(r.raw(pending_tag)) == "n/a":
        # MIG mode prints <remapped_rows>N/A</remapped_rows> for a GPU that remaps rows (recorded: A100, 535.54.03),
        # and such a GPU retires no pages: neither N/A is a reading failure
        gpu.notes.append("MIG is enabled: the remapped-rows block and retired-pages pending are N/A by design")
    elif not gpu.remap_supported and ecc_on and elem.find("retired_pages") is not None:
        r.needed(pending_tag, "no row-remapping state either, so pending memory repairs cannot be read")

    for tag in ("clocks_event_reasons", "clocks_throttle_reasons"):
        block = elem.find(tag)
        if block is not None and len(block):
            gpu.clock_reasons_tag = tag
            prefix = tag[:-1] + "_"  # clocks_event_reason_ / clocks_throttle_reason_
            for name in CLOCK_REASONS:
                gpu.clock_reasons[name] = to_bool(r.text(f"{tag}/{prefix}{name}"))
            break

    link = "pci/pci_gpu_link_info"
    gpu.pcie_gen_current = to_int(r.raw(f"{link}/pcie_gen/current_link_gen"))
    gpu.pcie_gen_max = to_int(r.raw(f"{link}/pcie_gen/max_link_gen"))
    gpu.pcie_gen_device_current = to_int(r.raw(f"{link}/pcie_gen/device_current_link_gen"))
    gpu.pcie_gen_device_max = to_int(r.raw(f"{link}/pcie_gen/max_device_link_gen"))
    gpu.pcie_gen_host_max = to_int(r.raw(f"{link}/pcie_gen/max_host_link_gen"))
    gpu.pcie_width_current = to_int(r.raw(f"{link}/link_widths/current_link_width"))
    gpu.pcie_width_max = to_int(r.raw(f"{link}/link_widths/max_link_width"))
    gpu.pcie_replay_counter = to_int(r.raw("pci/replay_counter"))

    gpu.recovery_action = r.text("gpu_recovery_action")
    r.read_error("gpu_recovery_action")
    gpu.reset_required = to_bool(r.text("gpu_reset_status/reset_required"))
    gpu.drain_and_reset_recommended = to_bool(r.text("gpu_reset_status/drain_and_reset_recommended"))
    return gpu


def _without(text: str, tag: str) -> str:
    """``text`` without its complete ``<tag>...</tag>`` blocks. ``supported_clocks`` is more than half of each GPU's
    XML and nothing reads it; cutting it before the parse halves an 8-GPU document's parse time. An unclosed block
    stays, so a truncated document is still refused by the parser."""
    start, end = f"<{tag}>", f"</{tag}>"
    parts: list[str] = []
    pos = 0
    while (i := text.find(start, pos)) >= 0 and (j := text.find(end, i)) >= 0:
        parts.append(text[pos:i])
        pos = j + len(end)
    if not parts:
        return text
    parts.append(text[pos:])
    return "".join(parts)


def parse_query_xml(raw: str, *, version: str | None = None) -> NvidiaSmiQuery:
    """Parse ``nvidia-smi -q -x``.

    Args:
        raw: the XML as printed (a leading blank line and a DOCTYPE are fine; the DTD is never fetched).
        version: the driver version if known; otherwise read from ``<driver_version>``.

    Returns:
        :class:`NvidiaSmiQuery` of facts, ungraded (UNKNOWN until :func:`hwaac.health.gpu_grading.grade_query`;
        :func:`hwaac.health.checks.check_gpus` grades). ``unknown`` for empty, non-XML or truncated output, for no
        ``<gpu>`` element, for fewer ``<gpu>`` elements than ``attached_gpus``, and for needed placeholders. Never
        raises.
    """
    result = NvidiaSmiQuery(version=version or "")
    result.lost = lost_lines(raw)
    if no_output(result, raw, "empty output"):
        return result
    text = raw.strip()
    try:
        # ElementTree never resolves external DTDs or entities, so the DOCTYPE line is harmless.
        root = ET.fromstring(_without(text, "supported_clocks"))
    except ET.ParseError as err:
        result.unknown.append(f"not well-formed XML ({err})")
        return result
    if root.tag != "nvidia_smi_log":
        result.unknown.append(f"root element is <{root.tag}>, not <nvidia_smi_log>")
        return result
    result.driver_version = (root.findtext("driver_version") or "").strip()
    result.cuda_version = (root.findtext("cuda_version") or "").strip()
    result.version = result.version or result.driver_version
    result.attached_gpus = to_int(root.findtext("attached_gpus"))
    for position, elem in enumerate(root.findall("gpu")):
        gpu = read_gpu(elem, position, result.unknown)
        result.gpus.append(gpu)
    if not result.gpus:
        result.unknown.append("no <gpu> element")
    elif result.attached_gpus is not None and result.attached_gpus != len(result.gpus):
        result.unknown.append(f"attached_gpus is {result.attached_gpus} but the log has {len(result.gpus)} <gpu>")
    return result


__all__ = ["parse_query_xml", "read_gpu"]
