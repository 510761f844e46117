"""The recorded dcgmi outputs (tests/fixtures/health/dcgmi, see its READMEs) and reading them as check_dcgm does,
shared by test_dcgm.py, test_dcgm_health.py and test_dcgm_bad_input.py."""

from __future__ import annotations

from pathlib import Path

from hwaac.health.dcgm_grading import grade_diag, grade_health
from hwaac.health.parsers.dcgm import parse_diag_json
from hwaac.health.parsers.dcgm_health import DcgmHealthResult, parse_health_json
from hwaac.health.parsers.dcgm_model import DcgmDiagResult

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "health"
DCGMI = FIX / "dcgmi"
V2 = DCGMI / "2.x-virtualclient"
V31 = DCGMI / "3.1.0-nvvs-jsonresult"
V33 = DCGMI / "3.3.1-issue139"
V4 = DCGMI / "4.2.3-gb10"


def graded_health(raw: str) -> DcgmHealthResult:
    """Read ``dcgmi health -c -j`` (its words) and grade them, as check_dcgm does."""
    return grade_health(parse_health_json(raw))


def graded(raw: str, **kw: object) -> DcgmDiagResult:
    """Read (the parser's facts) and grade (the check layer), as check_dcgm does."""
    return grade_diag(parse_diag_json(raw, **kw))  # type: ignore[arg-type]


def read(path: Path) -> str:
    return path.read_text()


def codes(result: DcgmDiagResult | DcgmHealthResult) -> list[str]:
    return [f.code for f in result.all_findings()]
