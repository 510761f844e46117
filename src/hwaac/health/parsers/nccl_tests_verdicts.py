"""The verdicts nccl-tests itself gives (failures, ``#wrong``, out-of-bounds, ``NCCL_TESTS_MIN_BW`` FAILED, NCCL
warnings, a launcher that refused to start) turned into findings, and what makes a run incomplete; shared by the
stdout and the ``-J`` readers. Thresholds are applied by :func:`hwaac.health.checks.check_nccl`, never here.
"""

from __future__ import annotations

from hwaac.health.parsers.base import exit_not_zero
from hwaac.health.parsers.nccl_tests_model import NcclTestsResult
from hwaac.health.result import Action, Finding, Status


def _add(res: NcclTestsResult, code: str, status: Status, message: str, evidence: str, action: Action) -> None:
    res.findings.append(Finding(code, status, message, evidence=evidence, action=action))


def judge(
    res: NcclTestsResult,
    failures: list[str],
    traces: list[str],
    warns: list[str],
    launcher: list[str],
    *,
    json_errors: list[str] | None = None,
) -> None:
    """Turn what was read into findings and UNKNOWN reasons (the tool's own verdicts only, no thresholds).

    ``json_errors`` is None for stdout and the ``errors`` list of a ``-J`` file otherwise.
    """
    finished = res.avg_busbw_gbytes_per_s is not None
    from_json = json_errors is not None
    if res.launch_refused and not res.rows:
        asked = f"the {res.slots_requested} slots" if res.slots_requested else "the slots"
        res.findings.append(
            Finding(
                "MPI_NOT_ENOUGH_SLOTS",
                Status.UNKNOWN,
                f"mpirun started no rank: Open MPI has fewer slots than {asked} requested (give each host its GPU "
                "count: hostfile 'slots=N' or '--host host:N'): a launch configuration problem, not a hardware "
                "verdict; fix the run and retest",
                evidence="not enough slots available in the system to satisfy "
                + (f"the {res.slots_requested} slots" if res.slots_requested else "the requested slots"),
                action=Action.RETEST,
            )
        )
        return
    if failures:
        kind = "NCCL" if any("NCCL failure" in f for f in failures) else "CUDA"
        code = "NCCL_TEST_TIMEOUT" if all("Test timeout" in f for f in failures) else f"NCCL_TEST_{kind}_FAILURE"
        _add(res, code, Status.FAIL, f"nccl-tests stopped: {failures[0]}", "\n".join(failures + traces), Action.RETEST)
    if launcher:
        _add(
            res,
            "NCCL_LAUNCHER_FAILURE",
            Status.FAIL,
            f"a rank of the run failed: {launcher[0]}",
            "\n".join(launcher),
            Action.RETEST,
        )
    wrong_rows = [row for row in res.rows if any((r.wrong or 0) > 0 for r in row.runs())]
    if wrong_rows:
        total = res.wrong_total
        _add(
            res,
            "NCCL_WRONG_RESULTS",
            Status.FAIL,
            f"{total} wrong elements in {len(wrong_rows)} message size(s): the collective returned bad data",
            "\n".join(r.line for r in wrong_rows),
            Action.REBOOT,
        )
    if (res.out_of_bounds_ok is False or (res.out_of_bounds or 0) > 0) and not wrong_rows:
        _add(
            res,
            "NCCL_OUT_OF_BOUNDS",
            Status.FAIL,
            f"{res.out_of_bounds} result(s) out of bounds: the collective returned bad data",
            f"# Out of bounds values : {res.out_of_bounds} FAILED",
            Action.REBOOT,
        )
    if res.avg_busbw_verdict == "FAILED":
        _add(
            res,
            "NCCL_AVG_BUSBW_BELOW_MIN",
            Status.FAIL,
            f"Avg bus bandwidth {res.avg_busbw_gbytes_per_s} GB/s is below 0.9 x NCCL_TESTS_MIN_BW",
            f"# Avg bus bandwidth : {res.avg_busbw_gbytes_per_s} FAILED",
            Action.RETEST,
        )
    if traces and not failures and not any(f.status == Status.FAIL for f in res.findings):
        _add(
            res,
            "NCCL_TEST_FAILURE",
            Status.FAIL,
            f"nccl-tests reported a failure: {traces[0]}",
            "\n".join(traces),
            Action.RETEST,
        )
    if warns:
        # NCCL WARN also covers benign fallbacks; it decides only when the run did not finish.
        # In a run that stopped, the last warning is the one closest to the failure.
        status = Status.WARN if finished and not failures else Status.FAIL
        shown = warns[0] if status == Status.WARN else warns[-1]
        _add(res, "NCCL_WARN", status, f"NCCL warned: {shown}", "\n".join(warns), Action.RETEST)
    if json_errors:
        _add(
            res,
            "NCCL_ERROR_REPORTED",
            Status.WARN if finished else Status.FAIL,
            f"nccl-tests recorded an NCCL error: {json_errors[0]}",
            "\n".join(json_errors),
            Action.RETEST,
        )
    checked = [r.wrong for row in res.rows for r in row.runs()]
    if res.layout == "wrong" and res.rows and all(w is None for w in checked):
        res.findings.append(
            Finding(
                "NCCL_VALIDATION_DISABLED",
                Status.WARN,
                "results were not checked (#wrong is N/A, nccl-tests ran with -c 0): bandwidth only",
                evidence=res.rows[0].line,
            )
        )
    failed = any(f.status == Status.FAIL for f in res.findings)
    if from_json:
        if not res.rows:
            res.unknown.append("'results' holds no readable result")
        if res.out_of_bounds is None:
            res.unknown.append("no 'out_of_bounds' count")
        if not finished:
            res.unknown.append("no 'average_bus_bandwidth' figure")
    else:
        if res.n_gpus is None and not failed and not res.unknown:
            res.unknown.append("no '# nThread ... nGpus ...' header line")
        if not res.columns:
            if not failed:
                res.unknown.append("no results table header ('#  size  count  type ...')")
        elif not res.rows and not failed:
            res.unknown.append("no result rows under the table header")
        if res.columns and res.out_of_bounds is None and not failed:
            res.unknown.append("no '# Out of bounds values' line: the run did not finish or the output is truncated")
        if res.columns and not finished and not failed:
            res.unknown.append("no '# Avg bus bandwidth' line: the run did not finish or the output is truncated")
    exit_not_zero(res, res.exit_code, "NCCL_EXIT_NONZERO", "nccl-tests")
