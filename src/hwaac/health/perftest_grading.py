"""What a perftest run's error lines and exit status mean for a node: the findings of :func:`grade_perftest`.

The reader (:mod:`hwaac.health.parsers.perftest`) returns facts, each error line with its code; :func:`grade_perftest`
(called by :func:`hwaac.health.checks.check_perftest`) gives each code its severity (:data:`SEVERITY`): FAIL on
completion errors, a port Down, device errors or other perftest errors; UNKNOWN when the peer could not be reached
(no measurement); a non-zero exit only ever makes the result worse. Thresholds are :mod:`hwaac.health.checks`'.
"""

from __future__ import annotations

from hwaac.health.parsers.base import exit_not_zero
from hwaac.health.parsers.perftest import PerftestResult, parse_perftest
from hwaac.health.result import Action, Finding, Status, grade_once

SEVERITY: dict[str, tuple[Status, Action]] = {
    "PERFTEST_CONNECT_FAILED": (Status.UNKNOWN, Action.RETEST),
    "PERFTEST_LINK_DOWN": (Status.FAIL, Action.CHECK_LINK),
    "PERFTEST_COMPLETION_ERROR": (Status.FAIL, Action.CHECK_LINK),
    "PERFTEST_DEVICE_ERROR": (Status.FAIL, Action.RETEST),
    "PERFTEST_ERROR": (Status.FAIL, Action.RETEST),
}
"""Error code of :data:`hwaac.health.parsers.perftest.ERROR_PATTERNS` -> status and action."""


@grade_once
def grade_perftest(res: PerftestResult) -> None:
    """One finding per error code (its first line as the message, all its lines as evidence), then the non-zero
    exit finding; added to ``res``, which is returned. Grading twice does nothing."""
    seen: dict[str, list[str]] = {}
    for code, text in res.errors:
        seen.setdefault(code, []).append(text)
    for code, texts in seen.items():
        status, action = SEVERITY[code]
        res.findings.append(Finding(code, status, f"perftest: {texts[0]}", evidence="\n".join(texts), action=action))
    exit_not_zero(res, res.exit_code, "PERFTEST_EXIT_NONZERO", "perftest")


def read_perftest(raw: str, *, version: str | None = None, exit_code: int | None = None) -> PerftestResult:
    """One side of a perftest run read (:func:`hwaac.health.parsers.perftest.parse_perftest`) and graded."""
    return grade_perftest(parse_perftest(raw, version=version, exit_code=exit_code))


__all__ = ["SEVERITY", "grade_perftest", "read_perftest"]
