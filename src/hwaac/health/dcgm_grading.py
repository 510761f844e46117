"""What DCGM diagnostic results mean for a node: severities, error ids and exit statuses graded into findings.

The formats, sources and rules in full: ``docs/health-modules.md``, section "DCGM grading".
"""

from __future__ import annotations

import re
import signal

from hwaac.health.parsers.dcgm_health import DcgmHealthEntity, DcgmHealthResult
from hwaac.health.parsers.dcgm_model import (
    DCGMI_EXIT_CODES,
    SEVERITY_NAMES_33,
    SEVERITY_NAMES_PRE_33,
    DcgmDiagResult,
    DcgmTestResult,
    DcgmWarning,
    finding_code,
    subject,
)
from hwaac.health.result import Action, Finding, Status, grade_once, strongest

# The action an error id calls for whatever its severity (the *_NEXT suggestions of dcgm_errors.h, on the ladder
# of hwaac.health.result.Action); it replaces a severity's generic RETEST, else the stronger of the two is recommended.
_ERROR_ID_ACTIONS: dict[int, Action] = {
    4: Action.RESET_GPU,  # VOLATILE_DBE_DETECTED: "Drain the GPU and reset it or reboot the node."
    80: Action.RMA,  # ROW_REMAP_FAILURE: "unrecoverable memory hardware damage"
    81: Action.RESET_GPU,  # UNCONTAINED_ERROR (XID 95)
    83: Action.RESET_GPU,  # DBE_PENDING_PAGE_RETIREMENTS
    85: Action.RESET_GPU,  # PENDING_ROW_REMAP: a reset applies the remap
    120: Action.REBOOT,  # FALLEN_OFF_BUS
    125: Action.RESET_GPU,  # GPU_RECOVERY_RESET
    126: Action.REBOOT,  # GPU_RECOVERY_REBOOT
    127: Action.RESET_GPU,  # GPU_RECOVERY_DRAIN_P2P
    128: Action.RESET_GPU,  # GPU_RECOVERY_DRAIN_RESET
    130: Action.RETEST,  # RETEST_REQUESTED
    131: Action.RESTART_APP,  # CONTAINED_ERROR: "Restart the application ... GPU reset can be deferred"
    132: Action.RMA,  # UNCORRECTABLE_ROW_REMAP_LIMIT: "Run a field diagnostic" (triage towards RMA)
}


# Ids whose result is not a verdict on the hardware: the diagnostic asks to be run again.
_ERROR_ID_UNKNOWN = {130}  # RETEST_REQUESTED


# What each severity means for a "Fail" result: (status, action).
_SEVERITY_VERDICTS: dict[str, tuple[Status, Action]] = {
    # NONE on a failing result: DCGM did not classify it; a failure we cannot grade is still a failure.
    "NONE": (Status.FAIL, Action.RETEST),
    "MONITOR": (Status.WARN, Action.NONE),  # "Can perform workload, but needs to be monitored."
    "ISOLATE": (Status.FAIL, Action.RMA),  # "Cannot perform workload. GPU should be isolated." (exit 205)
    "UNKNOWN": (Status.FAIL, Action.RETEST),  # "This error code is not recognized"
    "TRIAGE": (Status.FAIL, Action.RETEST),  # "This error should be triaged": run a field diagnostic first
    "CONFIG": (Status.WARN, Action.NONE),  # "This error can be configured": a node setting, not the hardware
    "RESET": (Status.FAIL, Action.RESET_GPU),  # "Drain and reset GPU"
}


def severity_verdict(severity: int | None, enum: str) -> tuple[Status, Action, str]:
    """(status, action, severity name) for one warning's ``error_severity`` on a ``"Fail"`` result.

    Rule when the numbering is unknown (a DCGM 2.x/3.x layout without a version): a value that reads as a failure
    under either numbering is a failure, because a warning must never hide a fault. 0 (MONITOR before 3.3, NONE
    since), 1 (ISOLATE / MONITOR) and 2 (UNKNOWN / ISOLATE) are therefore FAIL with action RETEST (rerun with the
    version known before acting on an RMA); 3..6 exist only in the 3.3+ numbering and are read with it. A missing or
    unrecognised severity is FAIL with action RETEST.
    """
    if severity is None:
        return Status.FAIL, Action.RETEST, "UNGRADED"
    if enum == "unknown" and severity in (0, 1, 2):
        names = f"{SEVERITY_NAMES_PRE_33[severity]} before DCGM 3.3, {SEVERITY_NAMES_33[severity]} since"
        return Status.FAIL, Action.RETEST, f"ambiguous {severity} ({names})"
    table = SEVERITY_NAMES_PRE_33 if enum == "pre-3.3" else SEVERITY_NAMES_33
    name = table.get(severity)
    if name is None:
        return Status.FAIL, Action.RETEST, f"unrecognised {severity}"
    status, action = _SEVERITY_VERDICTS[name]
    return status, action, name


def _graded(warnings: list[DcgmWarning], enum: str) -> list[tuple[DcgmWarning, Status, Action]]:
    out: list[tuple[DcgmWarning, Status, Action]] = []
    for warning in warnings:
        status, action, _ = severity_verdict(warning.error_severity, enum)
        if warning.error_id in _ERROR_ID_UNKNOWN:
            status = Status.UNKNOWN
        if warning.error_id in _ERROR_ID_ACTIONS:
            # RETEST from the severity only means "no specific action": the id's own action replaces it.
            specific = _ERROR_ID_ACTIONS[warning.error_id]
            action = specific if action == Action.RETEST else strongest([action, specific])
        out.append((warning, status, action))
    return out


def _grade_result(result: DcgmTestResult, enum: str, out: DcgmDiagResult) -> Status:
    where = f"test {result.test!r} ({result.category})" + (
        f" iteration {result.iteration}" if result.iteration is not None else ""
    )
    who = subject(result.entity_group, result.gpu_ids)
    warned = _graded(result.warnings, enum)
    if not result.status:
        return Status.UNKNOWN  # the reader said why (an unknown reason)
    if result.status in ("Fail", "Warn"):
        return _judge(result, warned, where, who, out)
    if result.status == "Pass" and warned:
        return _judge_passing(warned, where, who, out)
    if warned:  # Skip / Not Run: the warnings say why
        out.notes.append(f"{where} {who}: {result.status}: " + "; ".join(w.message for w, _, _ in warned)[:300])
    return Status.PASS


def _judge_passing(
    warned: list[tuple[DcgmWarning, Status, Action]], where: str, subject: str, out: DcgmDiagResult
) -> Status:
    """A Pass that carries warnings: WARN each, and UNKNOWN for a memory test that could not allocate its memory.

    NVIDIA/DCGM#284: the memory plugin can record DCGM_FR_MEMORY_ALLOC (id 56) and still pass, so the memory was not
    tested as configured.
    """
    verdict = Status.PASS
    for warning, _, _ in warned:
        status, action = (Status.UNKNOWN, Action.RETEST) if warning.error_id == 56 else (Status.WARN, Action.NONE)
        message = f"dcgmi diag {where} passed on {subject or 'the node'} but reported: {warning.message}"
        out.findings.append(Finding(finding_code(warning), status, message, subject, warning.message, action))
        verdict = max(verdict, status)
    return verdict


def _judge(
    result: DcgmTestResult,
    warned: list[tuple[DcgmWarning, Status, Action]],
    where: str,
    subject: str,
    out: DcgmDiagResult,
) -> Status:
    """Findings for a Fail/Warn result; the verdict is the worst warning (a Fail without warnings is FAIL)."""
    if not warned:
        status = Status.FAIL if result.status == "Fail" else Status.WARN
        info = "; ".join(result.info)[:300]
        message = f"dcgmi diag {where} is {result.status} on {subject or 'the node'} without a warning" + (
            f" (info: {info})" if info else ""
        )
        code = "DCGM_TEST_FAILED" if status == Status.FAIL else "DCGM_TEST_WARN"
        out.findings.append(Finding(code, status, message, subject, f"status: {result.status}", Action.RETEST))
        return status
    verdict = Status.PASS
    for warning, status, action in warned:
        if result.status == "Warn" and warning.error_severity is None:
            status = Status.WARN  # the writer said Warn itself and gave no severity to contradict it
        name = f"DCGM_FR_{warning.error_name}" if warning.error_name else "an error"
        ident = ""
        if warning.error_id is not None:
            ident = f" (error_id {warning.error_id}, severity {warning.severity_name})"
        message = f"dcgmi diag {where} reported {name}{ident} on {subject or 'the node'}: {warning.message}"
        out.findings.append(Finding(finding_code(warning), status, message, subject, warning.message, action))
        verdict = max(verdict, status)
    return verdict


def _fail_on_226(out: DcgmDiagResult, evidence: str) -> None:
    """Exit 226 (DCGM_ST_NVVS_ERROR: dcgmi's verdict that the diagnostic failed) makes every ``"Fail"`` result FAIL,
    also one whose warnings alone read as WARN (a CONFIG or MONITOR severity, e.g. persistence mode off): dcgmi
    counted it as a failure, and an exit code may only make a result worse. The action stays mild (RETEST when the
    warning had none): the cause is often a setting, fixed and then retested."""
    softened = {
        (subject(r.entity_group, r.gpu_ids), w.message)
        for r in out.results
        if r.status == "Fail" and r.verdict == Status.WARN
        for w in r.warnings
    }
    if not softened:
        return
    for r in out.results:
        if r.status == "Fail" and r.verdict == Status.WARN:
            r.verdict = Status.FAIL
    out.findings = [
        Finding(
            f.code,
            Status.FAIL,
            f"{f.message} -- a failure: dcgmi exited 226 ({evidence})",
            f.subject,
            f.evidence,
            f.action if f.action != Action.NONE else Action.RETEST,
        )
        if f.status == Status.WARN and (f.subject, f.evidence) in softened
        else f
        for f in out.findings
    ]


def _apply_exit_code(out: DcgmDiagResult) -> None:
    """Exit-status findings; they only ever make the result worse (never PASS from an exit code)."""
    rc = out.exit_code
    if rc is None or rc == 0:
        return
    if rc < 0:  # Python's subprocess reports death by signal N as -N
        rc = 128 + (-rc)
    failing = any(f.status >= Status.WARN for f in out.findings) or out.runtime_error
    if rc in DCGMI_EXIT_CODES:
        name, value, meaning = DCGMI_EXIT_CODES[rc]
        evidence = f"exit status {out.exit_code} (DCGM_ST_{name} = {value})"
        if rc == 226:
            _fail_on_226(out, evidence)
            if not failing:
                message = f"dcgmi diag exited {rc}: {meaning}, but the JSON shows no failing test"
                out.findings.append(
                    Finding("DCGM_EXIT_NVVS_ERROR", Status.FAIL, message, evidence=evidence, action=Action.RETEST)
                )
            return
        if rc == 205:
            if not any(f.action == Action.RMA for f in out.findings):
                message = f"dcgmi diag exited {rc}: {meaning}"
                out.findings.append(
                    Finding("DCGM_EXIT_ISOLATE", Status.FAIL, message, evidence=evidence, action=Action.RMA)
                )
            return
        message = f"dcgmi diag exited {rc}: {meaning}; the diagnostic is incomplete"
        out.findings.append(
            Finding(f"DCGM_EXIT_{name}", Status.UNKNOWN, message, evidence=evidence, action=Action.RETEST)
        )
        return
    if 128 < rc <= 128 + 64:
        try:
            sig = signal.Signals(rc - 128).name
        except ValueError:
            sig = f"signal {rc - 128}"
        message = f"dcgmi diag was killed by {sig} (exit status {out.exit_code}); the diagnostic is incomplete"
        out.findings.append(
            Finding(
                "DCGM_KILLED_BY_SIGNAL",
                Status.UNKNOWN,
                message,
                evidence=f"exit status {out.exit_code}",
                action=Action.RETEST,
            )
        )
        return
    out.findings.append(
        Finding(
            "DCGM_EXIT_UNRECOGNISED",
            Status.UNKNOWN,
            f"dcgmi diag exited with unrecognised status {out.exit_code}",
            evidence=f"exit status {out.exit_code}",
            action=Action.RETEST,
        )
    )


@grade_once
def grade_diag(out: DcgmDiagResult) -> None:
    """Grade a diag result in place (findings and each result's verdict) and return it; grading twice does nothing.

    FAIL when a ``"Fail"`` result's warning severity (or no warning at all) makes it a failure, or the exit status is
    205 or 226; WARN when every failing warning is MONITOR or CONFIG and the exit status is not 226; UNKNOWN when the
    diagnostic had a runtime error or the exit status says it was killed, timed out or could not run; a ``"Pass"``
    with warnings is WARN (UNKNOWN for DCGM_FR_MEMORY_ALLOC). PASS only when the reader found the output complete,
    at least one test passed, none failed and no passing result carries a warning.
    """
    if out.runtime_error:
        out.findings.append(
            Finding(
                "DCGM_RUNTIME_ERROR",
                Status.UNKNOWN,
                f"dcgmi diag could not run: {out.runtime_error}",
                evidence=out.runtime_error,
                action=Action.RETEST,
            )
        )
    for result in out.results:
        result.verdict = _grade_result(result, out.severity_enum, out)
    if (out.overall_result or "").lower() == "fail" and not any(f.status == Status.FAIL for f in out.findings):
        out.findings.append(
            Finding(
                "DCGM_OVERALL_FAIL",
                Status.FAIL,
                "dcgmi diag --iterations reported Overall Result Fail",
                evidence=f"Overall Result: {out.overall_result}",
                action=Action.RETEST,
            )
        )
    _apply_exit_code(out)


# dcgmi health's words as verdicts; any other word was flagged unreadable by the reader and is UNKNOWN here.
_HEALTH_STATUS = {"healthy": Status.PASS, "warning": Status.WARN, "failure": Status.FAIL}


# Action for a Failure per watched system (a first cut; the lifecycle rules refine it with history).
_HEALTH_FAIL_ACTIONS = {
    "MEMORY": Action.RESET_GPU,
    "SM": Action.RESET_GPU,
    "NVLINK": Action.RESET_GPU,
    "PCIE": Action.REBOOT,
    "DRIVER": Action.REBOOT,
}


def _health_status(word: str | None) -> Status:
    return _HEALTH_STATUS.get((word or "").strip().lower(), Status.UNKNOWN)


def _system_code(system: str) -> str:
    name = re.sub(r"\s*system$", "", system.strip(), flags=re.IGNORECASE)
    return "DCGM_HEALTH_" + (re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_") or "UNNAMED")


def _entity_findings(entity: DcgmHealthEntity) -> list[Finding]:
    out: list[Finding] = []
    group, entity_id, health = entity.entity_group, entity.entity_id, entity.health
    subject = f"{'gpu' if group == 'GPU' else group.lower() + ' '}{entity_id}"
    for system in entity.systems:
        status = _health_status(system.health)
        if status >= Status.WARN:
            code = _system_code(system.system)
            action = _HEALTH_FAIL_ACTIONS.get(code.removeprefix("DCGM_HEALTH_"), Action.RETEST)
            action = action if status == Status.FAIL else Action.NONE
            message = (
                f"dcgmi health: {group} {entity_id} {system.system} is {system.health}: "
                f"{system.messages or '(no message)'}"
            )
            evidence = f"{system.system}: {system.health} {system.messages}".strip()
            out.append(Finding(code, status, message, subject, evidence, action))
    status = _health_status(health)
    if status >= Status.WARN and not entity.systems:
        out.append(
            Finding(
                "DCGM_HEALTH_ENTITY",
                status,
                f"dcgmi health: {group} {entity_id} is {health} without a system",
                subject,
                f"{group} {entity_id}: {health}",
            )
        )
    return out


@grade_once
def grade_health(out: DcgmHealthResult) -> None:
    """Grade ``dcgmi health -c -j``'s words in place and return the result; grading twice does nothing.

    One finding per system in Warning (WARN, no action) or Failure (FAIL, the system's action: memory, SM and NVLink
    reset the GPU, PCIe and driver reboot, others retest), code ``DCGM_HEALTH_<SYSTEM>`` (``DCGM_HEALTH_PCIE``...);
    an entity in Warning/Failure without a system is ``DCGM_HEALTH_ENTITY``; an "Overall Health" worse than every
    finding still counts (``DCGM_HEALTH_OVERALL``).
    """
    for entity in out.entities:
        out.findings.extend(_entity_findings(entity))
    overall = _health_status(out.overall)
    worst_found = max((f.status for f in out.findings), default=Status.PASS)
    if overall in (Status.WARN, Status.FAIL) and worst_found < overall:
        out.findings.append(
            Finding(
                "DCGM_HEALTH_OVERALL",
                overall,
                f"dcgmi health: Overall Health is {out.overall}",
                evidence=f"Overall Health: {out.overall}",
            )
        )


__all__ = ["grade_diag", "grade_health", "severity_verdict"]
