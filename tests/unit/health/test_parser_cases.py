"""Every recorded tool output a parser reads, with the status and finding codes it must give: one table (the
files of ``parser_cases/``, one a tool family, read together), one test (cases as data, as ANTA's catalogs are)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from hwaac.health.dcgm_grading import grade_diag, grade_health
from hwaac.health.gpu_grading import grade_query, grade_query_csv, grade_remapped
from hwaac.health.kernel_grading import grade_kernel_log
from hwaac.tool_facts import PARSERS

FIXTURES = Path(__file__).parents[2] / "fixtures"
CASES: list[dict[str, Any]] = [
    case
    for table in sorted((Path(__file__).parent / "parser_cases").glob("*.yml"))
    for case in yaml.safe_load(table.read_text())
]
# the tools whose own verdicts a grading module of the check layer reads (the parser gives facts only); gpu-burn,
# perftest, mlxlink and nvbandwidth come graded from their tool_facts readers (hwaac.health.*_grading.read_*)
GRADED: dict[str, Callable[[Any], Any]] = {
    "dcgm-diag-json": grade_diag,
    "dcgm-diag-text": grade_diag,
    "dcgm-health-json": grade_health,
    "nvidia-smi-xml": grade_query,
    "nvidia-smi-text": grade_query,
    "nvidia-smi-query-gpu": grade_query_csv,
    "nvidia-smi-remapped-rows": grade_remapped,
    "kernel-log": grade_kernel_log,
}
# recorded outputs under fixtures/health that no parser reads (help, version and topology text, the kernel log
# lines nvidia-smi's README quotes)
NOT_PARSED = {
    "health/nvidia-smi/h200-580.159.04/dmesg-nvrm.out",
    "health/nvidia-smi/h200-580.159.04/help-query-gpu.out",
    "health/nvidia-smi/h200-580.159.04/nvidia-smi.txt",
    "health/nvidia-smi/h200-580.159.04/query-retired-pages.csv",
    "health/nvidia-smi/h200-580.159.04/topo-m.txt",
    "health/nvidia-smi/h200-580.159.04/version.txt",
    "health/nvidia-smi/geforce-issue-threads/i3pystatus-776-new.csv",
    "health/nvidia-smi/geforce-issue-threads/i3pystatus-776-old.csv",
    "health/nvidia-smi/geforce-issue-threads/megaminer-235-not-supported.csv",
}


@pytest.mark.parametrize(
    "case", CASES, ids=[" ".join((c["fixture"], *map(str, c.get("options", {}).items()))) for c in CASES]
)
def test_fixture_reads_as_recorded(case: dict[str, Any]) -> None:
    result = PARSERS[case["tool"]].parse((FIXTURES / case["fixture"]).read_text(), **case.get("options", {}))
    if case["tool"] in GRADED:
        result = GRADED[case["tool"]](result)
    assert (result.status().name, sorted({f.code for f in result.findings})) == (case["status"], case["codes"]), (
        result.unknown
    )


def test_every_health_fixture_has_a_row() -> None:
    recorded = {
        p.relative_to(FIXTURES).as_posix()
        for p in (FIXTURES / "health").rglob("*")
        if p.is_file() and p.name != "README.md" and p.suffix != ".py"
    }
    assert sorted(recorded - NOT_PARSED - {c["fixture"] for c in CASES}) == []
