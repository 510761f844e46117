"""``nvidia-smi`` readers, one module per format (this module gathers their public names):

- ``-q -x`` XML: :mod:`.nvidia_smi_xml`; ``-q`` text: :mod:`.nvidia_smi_text`; both return the facts of
  :mod:`.nvidia_smi_model`, graded by :mod:`hwaac.health.gpu_grading`;
- ``--query-gpu`` / ``--query-remapped-rows`` CSV: :mod:`.nvidia_smi_csv`;
- ``nvlink -s`` / ``-e``: :mod:`.nvlink`.

Formats, versions and sources: ``docs/health-gpu-parsers.md``.
"""

from __future__ import annotations

from hwaac.health.parsers.nvidia_smi_csv import (
    CSV_ALIASES,
    NvidiaSmiCsv,
    RemappedRow,
    RemappedRows,
    canonical_field,
    parse_query_gpu_csv,
    parse_remapped_rows_csv,
)
from hwaac.health.parsers.nvidia_smi_model import CLOCK_REASONS, EccCounts, GpuQuery, NvidiaSmiQuery
from hwaac.health.parsers.nvidia_smi_text import parse_query_text
from hwaac.health.parsers.nvidia_smi_xml import parse_query_xml
from hwaac.health.parsers.nvlink import NvlinkGpu, NvlinkReport, parse_nvlink_errors, parse_nvlink_status

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
    "parse_query_text",
    "parse_query_xml",
    "parse_remapped_rows_csv",
]
