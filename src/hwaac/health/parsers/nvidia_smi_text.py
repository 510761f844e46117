"""Reader of ``nvidia-smi -q`` (the text report, not ``-x``): the same facts the XML reader returns.

The formats, sources and rules in full: ``docs/health-modules.md``, section "nvidia-smi -q".
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from hwaac.health.parsers.base import no_output, text_lines
from hwaac.health.parsers.nvidia_smi_model import NvidiaSmiQuery, lost_lines, to_int
from hwaac.health.parsers.nvidia_smi_xml import read_gpu

_GPU = re.compile(r"^GPU (?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])$")
_VALUE = re.compile(r"^(?P<label>\S.*?)\s+:(?: (?P<value>.*))?$")
_BANNER = re.compile(r"^=+\s*NVSMI LOG\s*=+$")
_SECTION = re.compile(r"^[A-Za-z][\w .()/+,-]*$")  # a bare section label; "[...]" or "..." is an elided paste

_ECC = (
    ("SRAM Correctable", "sram_correctable"),
    ("SRAM Uncorrectable Parity", "sram_uncorrectable_parity"),
    ("SRAM Uncorrectable SEC-DED", "sram_uncorrectable_secded"),
    ("SRAM Uncorrectable", "sram_uncorrectable"),
    ("DRAM Correctable", "dram_correctable"),
    ("DRAM Uncorrectable", "dram_uncorrectable"),
    ("Single Bit/Device Memory", "single_bit/device_memory"),
    ("Single Bit/Total", "single_bit/total"),
    ("Double Bit/Device Memory", "double_bit/device_memory"),
    ("Double Bit/Total", "double_bit/total"),
)
_REASONS = (
    ("Idle", "gpu_idle"),
    ("Applications Clocks Setting", "applications_clocks_setting"),
    ("SW Power Cap", "sw_power_cap"),
    ("HW Slowdown", "hw_slowdown"),
    ("HW Slowdown/HW Thermal Slowdown", "hw_thermal_slowdown"),
    ("HW Slowdown/HW Power Brake Slowdown", "hw_power_brake_slowdown"),
    ("Sync Boost", "sync_boost"),
    ("SW Thermal Slowdown", "sw_thermal_slowdown"),
    ("Display Clock Setting", "display_clocks_setting"),
)
_LINK = "PCI/GPU Link Info"

# text path (labels as -q prints them) -> XML path of -q -x; a path whose section has no children (Remapped Rows: N/A)
# becomes an element with that text and no children, as the XML writes it.
TEXT_TO_XML: dict[str, str] = {
    "Product Name": "product_name",
    "Product Architecture": "product_architecture",
    "Serial Number": "serial",
    "GPU UUID": "uuid",
    "Minor Number": "minor_number",
    "MIG Mode/Current": "mig_mode/current_mig",
    "MIG Mode/Pending": "mig_mode/pending_mig",
    "GPU Recovery Action": "gpu_recovery_action",
    "GPU Reset Status/Reset Required": "gpu_reset_status/reset_required",
    "GPU Reset Status/Drain and Reset Recommended": "gpu_reset_status/drain_and_reset_recommended",
    "PCI/Bus Id": "pci/pci_bus_id",
    "PCI/Replays Since Reset": "pci/replay_counter",
    f"{_LINK}/PCIe Generation/Max": "pci/pci_gpu_link_info/pcie_gen/max_link_gen",
    f"{_LINK}/PCIe Generation/Current": "pci/pci_gpu_link_info/pcie_gen/current_link_gen",
    f"{_LINK}/PCIe Generation/Device Current": "pci/pci_gpu_link_info/pcie_gen/device_current_link_gen",
    f"{_LINK}/PCIe Generation/Device Max": "pci/pci_gpu_link_info/pcie_gen/max_device_link_gen",
    f"{_LINK}/PCIe Generation/Host Max": "pci/pci_gpu_link_info/pcie_gen/max_host_link_gen",
    f"{_LINK}/Link Width/Max": "pci/pci_gpu_link_info/link_widths/max_link_width",
    f"{_LINK}/Link Width/Current": "pci/pci_gpu_link_info/link_widths/current_link_width",
    "ECC Mode/Current": "ecc_mode/current_ecc",
    "ECC Mode/Pending": "ecc_mode/pending_ecc",
    **{
        f"ECC Errors/{scope.title()}/{label}": f"ecc_errors/{scope}/{tag}"
        for scope in ("volatile", "aggregate")
        for label, tag in _ECC
    },
    "ECC Errors/Aggregate/SRAM Threshold Exceeded": "ecc_errors/aggregate/sram_threshold_exceeded",
    "ECC Errors/Channel Repair Pending": "ecc_errors/channel_repair_pending",
    "ECC Errors/TPC Repair Pending": "ecc_errors/tpc_repair_pending",
    "ECC Errors/Unrepairable Memory": "ecc_errors/unrepairable_memory",
    "Retired Pages/Single Bit ECC": "retired_pages/multiple_single_bit_retirement/retired_count",
    "Retired Pages/Double Bit ECC": "retired_pages/double_bit_retirement/retired_count",
    "Retired Pages/Pending Page Blacklist": "retired_pages/pending_blacklist",
    "Retired Pages/Pending Page Retirement": "retired_pages/pending_retirement",
    "Remapped Rows": "remapped_rows",
    "Remapped Rows/Correctable Error": "remapped_rows/remapped_row_corr",
    "Remapped Rows/Uncorrectable Error": "remapped_rows/remapped_row_unc",
    "Remapped Rows/Pending": "remapped_rows/remapped_row_pending",
    "Remapped Rows/Remapping Failure Occurred": "remapped_rows/remapped_row_failure",
    **{
        f"Remapped Rows/Bank Remap Availability Histogram/{bucket.title()}": (
            f"remapped_rows/row_remapper_histogram/row_remapper_histogram_{bucket}"
        )
        for bucket in ("max", "high", "partial", "low", "none")
    },
    **{
        f"{section}/{label}": f"{tag}/{tag[:-1]}_{name}"
        for section, tag in (
            ("Clocks Event Reasons", "clocks_event_reasons"),
            ("Clocks Throttle Reasons", "clocks_throttle_reasons"),
        )
        for label, name in _REASONS
    },
}
_BY_TEXT = {k.lower(): v for k, v in TEXT_TO_XML.items()}


@dataclass
class _Block:
    bus: str
    values: dict[str, str | None] = field(default_factory=dict)  # lower-case label path -> value (None: a section)


def parse_query_text(raw: str, *, version: str | None = None) -> NvidiaSmiQuery:
    """Read ``nvidia-smi -q`` into the :class:`NvidiaSmiQuery` facts ``parse_query_xml`` returns (tool
    ``nvidia-smi -q``), ungraded: :func:`hwaac.health.checks.check_gpus` grades it. Never raises."""
    result = NvidiaSmiQuery(tool="nvidia-smi -q", version=version or "")
    result.lost = lost_lines(raw)
    if no_output(result, raw, "empty output"):
        return result
    try:
        header, blocks = _read_tree(raw, result.unknown)
    except Exception as exc:  # the parsers' contract: bad tool output never raises
        result.unknown.append(f"unexpected input shape ({type(exc).__name__}: {exc})"[:300])
        return result
    result.driver_version = header.get("driver version") or ""
    result.cuda_version = header.get("cuda version") or ""
    result.version = result.version or result.driver_version
    result.attached_gpus = to_int(header.get("attached gpus"))
    for position, block in enumerate(blocks):
        result.gpus.append(read_gpu(_element(block), position, result.unknown))
    if not result.gpus:
        result.unknown.append("no 'GPU <bus id>' block")
    elif result.attached_gpus is not None and result.attached_gpus != len(result.gpus):
        result.unknown.append(f"Attached GPUs is {result.attached_gpus} but the report has {len(result.gpus)} GPU(s)")
    return result


def _read_tree(raw: str, unknown: list[str]) -> tuple[dict[str, str], list[_Block]]:
    header: dict[str, str] = {}
    blocks: list[_Block] = []
    stack: list[tuple[int, str]] = []
    for number, line, text in text_lines(raw):
        if _BANNER.match(text):
            continue
        if (gpu := _GPU.match(text)) is not None and not line.startswith(" "):
            blocks.append(_Block(gpu["bus"]))
            stack = []
            continue
        indent = len(line) - len(line.lstrip(" "))
        match = _VALUE.match(text)
        label, value = (match["label"].strip(), (match["value"] or "").strip()) if match else (text, None)
        if match is None and not _SECTION.match(text):
            unknown.append(f"line {number} is not 'Label : value' nor a section (elided or cut?): {text[:120]!r}")
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = "/".join([*(s for _, s in stack), label]).lower()
        stack.append((indent, label))
        if not blocks:
            if value is not None:
                header.setdefault(path, value)
            continue
        blocks[-1].values.setdefault(path, value)
    return header, blocks


def _element(block: _Block) -> ET.Element:
    gpu = ET.Element("gpu", id=block.bus)
    nodes: dict[str, ET.Element] = {}
    for text_path, value in block.values.items():
        xml_path = _BY_TEXT.get(text_path)
        if xml_path is None:
            continue
        parent = gpu
        parts = xml_path.split("/")
        for depth, tag in enumerate(parts, start=1):
            key = "/".join(parts[:depth])
            if key not in nodes:
                nodes[key] = ET.SubElement(parent, tag)
            parent = nodes[key]
        if value is not None:
            parent.text = value
    return gpu


__all__ = ["TEXT_TO_XML", "parse_query_text"]
