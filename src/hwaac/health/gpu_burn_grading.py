"""What a gpu-burn run means for a node: the findings of :func:`grade_gpu_burn`.

The reader (:mod:`hwaac.health.parsers.gpu_burn`) returns facts; :func:`grade_gpu_burn` (called by
:func:`hwaac.health.checks.check_gpu_burn`) decides here: FAIL (``GPUBURN_FAULTY``, action RMA) for a GPU FAULTY in
the summary or with errors in any progress record, whatever the exit status (gpu-burn exits 0 with FAULTY GPUs);
FAIL (``GPUBURN_DIED``/``GPUBURN_ABORTED``) when a worker died; UNKNOWN for a GPU reported OK that processed nothing
(``GPUBURN_NO_WORK``) or for a non-zero exit status; PASS only when every tested GPU is OK and did work.
"""

from __future__ import annotations

import signal

from hwaac.health.parsers.gpu_burn import NO_CLIENTS, GpuBurnResult, parse_gpu_burn
from hwaac.health.result import Action, Finding, Status, grade_once


def _judge(out: GpuBurnResult) -> None:
    """One finding per GPU that failed or was not tested, then the abort."""
    for gpu in out.gpus:
        subject = f"gpu{gpu.index}"
        if gpu.summary == "FAULTY" or gpu.error_records:
            source = "FAULTY in the summary" if gpu.summary == "FAULTY" else f"errors in {gpu.error_records} records"
            out.findings.append(
                Finding(
                    "GPUBURN_FAULTY",
                    Status.FAIL,
                    f"gpu-burn: GPU {gpu.index} computed wrong results under load ({source})",
                    subject,
                    f"GPU {gpu.index}: {gpu.summary or 'no summary'}",
                    Action.RMA,
                )
            )
        elif gpu.died:
            out.findings.append(
                Finding(
                    "GPUBURN_DIED",
                    Status.FAIL,
                    f"gpu-burn: the worker of GPU {gpu.index} died during the run (CUDA failure under load)",
                    subject,
                    "\n".join(out.failure_lines[:3]) or f"GPU {gpu.index}: (DIED!)",
                    Action.RESET_GPU,
                )
            )
        elif gpu.summary == "OK" and not gpu.iterations:
            out.findings.append(
                Finding(
                    "GPUBURN_NO_WORK",
                    Status.UNKNOWN,
                    f"gpu-burn reported GPU {gpu.index} OK but it processed no iteration: the GPU was not tested",
                    subject,
                    "\n".join(out.failure_lines[:3])
                    or f"GPU {gpu.index}: OK, proc'd "
                    f"{gpu.iterations if gpu.iterations is not None else 'never printed'}",
                    Action.RETEST,
                )
            )
    if out.aborted and not any(f.code == "GPUBURN_DIED" for f in out.findings):
        out.findings.append(
            Finding(
                "GPUBURN_ABORTED",
                Status.FAIL,
                "gpu-burn aborted: no worker is alive",
                evidence=NO_CLIENTS,
                action=Action.RESET_GPU,
            )
        )


def _apply_exit_code(out: GpuBurnResult) -> None:
    """Exit-status findings: never PASS from an exit status, only worse."""
    rc = out.exit_code
    if rc is None or rc == 0:
        return
    if rc < 0:
        rc = 128 - rc
    if rc == 123:  # exit(123) after "No clients are alive!"
        if not any(f.status == Status.FAIL for f in out.findings):
            out.findings.append(
                Finding(
                    "GPUBURN_ABORTED",
                    Status.FAIL,
                    "gpu-burn exited 123: every worker died",
                    evidence=f"exit status {out.exit_code}",
                    action=Action.RESET_GPU,
                )
            )
        return
    if 128 < rc <= 192:
        try:
            name = signal.Signals(rc - 128).name
        except ValueError:
            name = f"signal {rc - 128}"
        message = f"gpu-burn was killed by {name} (exit status {out.exit_code}); the burn is incomplete"
        code = "GPUBURN_KILLED"
    else:
        message, code = f"gpu-burn exited with status {out.exit_code}; the burn is not trusted", "GPUBURN_EXIT_NONZERO"
    out.findings.append(
        Finding(code, Status.UNKNOWN, message, evidence=f"exit status {out.exit_code}", action=Action.RETEST)
    )


@grade_once
def grade_gpu_burn(out: GpuBurnResult) -> None:
    """Add the findings of ``out``'s GPUs and exit status to it and return it; grading twice does nothing."""
    _judge(out)
    _apply_exit_code(out)


def read_gpu_burn(raw: str, *, exit_code: int | None = None) -> GpuBurnResult:
    """gpu-burn's output read (:func:`hwaac.health.parsers.gpu_burn.parse_gpu_burn`) and graded."""
    return grade_gpu_burn(parse_gpu_burn(raw, exit_code=exit_code))


__all__ = ["grade_gpu_burn", "read_gpu_burn"]
