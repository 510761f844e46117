"""The shapes every health parser and check returns: a status, findings with fault codes, and UNKNOWN reasons.

A parser never raises on bad tool output, never infers PASS from an exit code, and returns UNKNOWN for anything it
could not read; a :class:`GradedResult` holds facts that a ``*_grading`` module of the check layer judges
(:func:`grade_once`), UNKNOWN until then. The rules in full: docs/health-parsers.md, "Rules every parser follows".
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Any


class Status(IntEnum):
    """A verdict, ordered so that ``max()`` of several is the node's: PASS < WARN < UNKNOWN < FAIL.

    UNKNOWN ranks above WARN because a node whose health cannot be read must not take jobs; it ranks below FAIL
    because it alone is no evidence for quarantine or RMA.
    """

    PASS = 0
    WARN = 1
    UNKNOWN = 2
    FAIL = 3

    def __str__(self) -> str:
        return self.name


class Action(StrEnum):
    """What to do about a fault, mildest first: a retest costs nothing, a hands-on link repair more than a reboot, an
    RMA most (the XID actions of
    NVIDIA's machine-readable map, NVSentinel ``xiderrorsmapping.csv``, fold into these)."""

    NONE = "none"
    RETEST = "retest"  # the output was unreadable or incomplete: run the check again
    RESTART_APP = "restart_app"
    RESET_GPU = "reset_gpu"
    REBOOT = "reboot"
    CHECK_LINK = "check_link"  # a technician reseats or replaces the optic/cable; both ends of the link are named
    RMA = "rma"


ACTION_ORDER = {a: i for i, a in enumerate(Action)}

# Actions that take a GPU, the node or a part out of service or send a person to it. An incomplete or unreadable
# parse never leads to one of these, only to RETEST (:func:`retest_only`; docs/health-gpu-parsers.md).
DESTRUCTIVE_ACTIONS = frozenset({Action.RESET_GPU, Action.REBOOT, Action.CHECK_LINK, Action.RMA})


@dataclass(frozen=True, slots=True)
class Finding:
    """One observation that is not plain health: a fault, a warning or an UNKNOWN.

    Attributes:
        code: stable fault code, upper snake case prefixed by the area: ``GPU_ROW_REMAP_PENDING``,
            ``GPU_XID_79``, ``NIC_LINK_DOWN``, ``NCCL_BUSBW_LOW``, ``PARSE_UNREADABLE``...
        status: WARN, UNKNOWN or FAIL (a PASS finding is never recorded).
        message: one sentence a person can act on, with the measured value and the limit and their units.
        subject: what it is about: ``gpu0`` / ``gpu 0000:18:00.0``, ``mlx5_3 port 1``, ``node01``... ("" = the node).
        evidence: the raw output excerpt that shows it (a line or a few), kept as recorded.
        action: the recommended action.
    """

    code: str
    status: Status
    message: str
    subject: str = ""
    evidence: str = ""
    action: Action = Action.NONE


def retest_finding(code: str, message: str, subject: str = "") -> Finding:
    """An UNKNOWN finding with action RETEST: what a check says of something it could not judge."""
    return Finding(code, Status.UNKNOWN, message, subject, action=Action.RETEST)


@dataclass
class ToolResult:
    """Base of every parser's typed result.

    Attributes:
        tool: the tool and view, e.g. ``nvidia-smi -q -x``, ``dcgmi diag``, ``ibstat``.
        version: the tool version read from the output or given by the caller ("" when unknown).
        unknown: reasons the output could not be read completely (each names the line, field or key).
        findings: faults and warnings the tool itself reported (not threshold checks).
    """

    tool: str
    version: str = ""
    unknown: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def status(self) -> Status:
        """Worst of the findings; UNKNOWN when anything was unreadable and nothing worse was found."""
        worst = max((f.status for f in self.findings), default=Status.PASS)
        if self.unknown:
            worst = max(worst, Status.UNKNOWN)
        return worst

    def unknown_findings(self) -> list[Finding]:
        """The ``unknown`` reasons as UNKNOWN findings (code ``PARSE_UNREADABLE``, action RETEST)."""
        return [
            Finding("PARSE_UNREADABLE", Status.UNKNOWN, f"{self.tool}: {reason}", action=Action.RETEST)
            for reason in self.unknown
        ]

    @property
    def incomplete(self) -> bool:
        """Whether part of the output could not be read (``unknown`` is not empty)."""
        return bool(self.unknown)

    def all_findings(self) -> list[Finding]:
        """``findings`` followed by :meth:`unknown_findings`."""
        return [*self.findings, *self.unknown_findings()]


class Graded(ToolResult):
    """What every result of facts whose findings a grading module adds (:func:`grade_once`) shares: a ``graded``
    flag, and :meth:`status` UNKNOWN (never PASS) until it is set. :class:`GradedResult` declares the flag as its
    first field; a result whose data has always had it last (``nvidia-smi``'s, DCGM's) derives from this class and
    declares ``graded: bool = False`` after its own fields, so its fields keep their order."""

    graded: bool

    def status(self) -> Status:
        """The graded status; UNKNOWN (never PASS) until the result is graded."""
        return super().status() if self.graded else max(super().status(), Status.UNKNOWN)


@dataclass
class GradedResult(Graded):
    """A result of facts whose findings a grading module adds (:func:`grade_once`).

    Attributes:
        graded: whether the grading module has added its findings.
    """

    graded: bool = False


def grade_once[R: Graded](grade: Callable[[R], None]) -> Callable[[R], R]:
    """A grading function that adds ``grade``'s findings to a result in place and returns it; grading twice does
    nothing."""

    @functools.wraps(grade)
    def graded(result: R) -> R:
        if not result.graded:
            result.graded = True
            grade(result)
        return result

    return graded


def strongest(actions: list[Action]) -> Action:
    """The strongest recommended action (NONE for none), by the order of :class:`Action`."""
    return max(actions, key=ACTION_ORDER.__getitem__, default=Action.NONE)


def retest_only(findings: list[Finding], why: str) -> list[Finding]:
    """``findings`` with every destructive recommendation (:data:`DESTRUCTIVE_ACTIONS`) turned into UNKNOWN and
    RETEST: what an incomplete parse may lead to. The code, subject and evidence stay; the message says what would
    have been recommended and ``why`` it is not."""
    out = []
    for f in findings:
        if f.action in DESTRUCTIVE_ACTIONS:
            f = Finding(
                f.code,
                Status.UNKNOWN,
                f"{f.message} -- not acted on ({f.action.value} withheld): {why}; retest",
                f.subject,
                f.evidence,
                Action.RETEST,
            )
        out.append(f)
    return out


def incomplete_means_retest[**P](check: Callable[P, list[Finding]]) -> Callable[P, list[Finding]]:
    """The one place of the rule "an incomplete parse leads only to a retest": when any parsed result given to
    ``check`` is incomplete (:attr:`ToolResult.incomplete`), none of its findings may recommend a reset, reboot,
    link repair or RMA (:func:`retest_only`). A parsed result counts whether given directly or as a value of a
    mapping or an item of a list or tuple argument (several readings judged together, e.g. one ``lctl ping`` per
    MGS NID). Every check that judges a parsed result carries it (:mod:`hwaac.health.checks`,
    :mod:`~hwaac.health.checks_nic`, :mod:`~hwaac.health.checks_rdma`, :mod:`~hwaac.health.checks_lustre`,
    :mod:`~hwaac.health.lustre_targets`, :mod:`~hwaac.health.lustre_lnet`)."""

    @functools.wraps(check)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> list[Finding]:
        found = check(*args, **kwargs)
        parsed: list[Any] = []
        for arg in (*args, *kwargs.values()):
            if isinstance(arg, Mapping):
                parsed += arg.values()
            elif isinstance(arg, list | tuple):
                parsed += arg
            else:
                parsed.append(arg)
        torn = [r for r in parsed if isinstance(r, ToolResult) and r.incomplete]
        if not torn:
            return found
        why = "the output was incomplete (" + "; ".join(f"{r.tool}: {r.unknown[0]}" for r in torn)[:300] + ")"
        return retest_only(found, why)

    guarded.incomplete_means_retest = True  # type: ignore[attr-defined]
    return guarded
