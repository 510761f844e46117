"""What the check layer makes of a Lustre client parse result, for the Lustre parser tests
(``test_lustre_parsers.py``, ``test_lnetctl_net_show.py``)."""

from __future__ import annotations

from pathlib import Path

from hwaac.health import checks_lustre
from hwaac.health.parsers.lctl import HealthCheckResult, LctlPingResult
from hwaac.health.parsers.lnetctl import LnetNetsResult
from hwaac.health.parsers.lustre import LfsCheckResult
from hwaac.health.parsers.lustre_imports import ImportsResult
from hwaac.health.result import Finding, Status

FIX = Path(__file__).parents[2] / "fixtures"
HEALTH = FIX / "health" / "lustre"


def read(path: Path) -> str:
    return path.read_text()


JUDGE = {
    LfsCheckResult: checks_lustre.lfs_check_findings,
    LctlPingResult: checks_lustre.ping_findings,
    HealthCheckResult: checks_lustre.health_check_findings,
    ImportsResult: checks_lustre.import_findings,
    LnetNetsResult: checks_lustre.lnet_findings,
}


def judged(result) -> list[Finding]:
    """What the check layer makes of a parse result: its faults, then its unknown reasons (PARSE_UNREADABLE)."""
    return JUDGE[type(result)](result)


def faults(result) -> list[Finding]:
    return [f for f in judged(result) if f.code != "PARSE_UNREADABLE"]


def codes(result) -> list[str]:
    return [f.code for f in faults(result)]


def verdict(result) -> Status:
    return max((f.status for f in judged(result)), default=Status.PASS)


GARBAGE = [
    "",
    "\n\n   \n",
    "Segmentation fault (core dumped)\n",
    "\x00\x01\x02binary",
    "bash: lfs: command not found\n",
    "<html><body>502 Bad Gateway</body></html>",
    "active\n",
    "{not: [yaml",
]
