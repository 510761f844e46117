"""What an nvbandwidth run's errored tests mean for a node: the findings of :func:`grade_nvbandwidth`.

The reader (:mod:`hwaac.health.parsers.nvbandwidth`) returns each test's matrix and error lines; here a
data-verification failure (``Invalid value when checking the pattern``, ``ASSERT in expression ...``: the copied data
did not match what was written, a wrong result) is ``NVBW_VERIFICATION_FAILED`` (FAIL), any other error
``NVBW_TEST_ERROR`` (UNKNOWN: nothing measured); both RETEST. Thresholds are
:func:`hwaac.health.checks.check_nvbandwidth`'s.
"""

from __future__ import annotations

from hwaac.health.parsers.nvbandwidth import NvbandwidthResult, parse_nvbandwidth
from hwaac.health.result import Action, Finding, Status, grade_once

VERIFICATION_MARKERS = ("Invalid value when checking the pattern", "ASSERT in expression")


@grade_once
def grade_nvbandwidth(out: NvbandwidthResult) -> None:
    """One finding per errored test, in test order, added to ``out``, which is returned; grading twice does
    nothing."""
    for test in out.tests:
        if not test.errors:
            continue
        label = test.name or "a test without its name"
        evidence = "\n".join(test.errors[:4])
        if any(marker in e for e in test.errors for marker in VERIFICATION_MARKERS):
            message = f"nvbandwidth {label}: data verification failed: {test.errors[0]}"
            out.findings.append(
                Finding("NVBW_VERIFICATION_FAILED", Status.FAIL, message, evidence=evidence, action=Action.RETEST)
            )
        else:
            message = f"nvbandwidth {label} errored and measured nothing: {test.errors[0]}"
            out.findings.append(
                Finding("NVBW_TEST_ERROR", Status.UNKNOWN, message, evidence=evidence, action=Action.RETEST)
            )


def read_nvbandwidth(raw: str, *, version: str | None = None) -> NvbandwidthResult:
    """nvbandwidth's output read (:func:`hwaac.health.parsers.nvbandwidth.parse_nvbandwidth`) and graded."""
    return grade_nvbandwidth(parse_nvbandwidth(raw, version=version))


__all__ = ["VERIFICATION_MARKERS", "grade_nvbandwidth", "read_nvbandwidth"]
