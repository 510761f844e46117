# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""The one place the host modules run a command: ``AnsibleModule.run_command`` with a time limit.

``run_command`` has no timeout of its own; ``before_communicate_callback`` hands over the process, and a timer
kills it when the limit passes (the idea of community.general's module_utils/cmd_runner.py: one runner, the
modules say what to run). Standard library only (host side).
"""

from __future__ import annotations

import shlex
import threading
import time
from typing import Any, NamedTuple


class Ran(NamedTuple):
    """What one command did: ``rc``, ``stdout``, ``stderr``, whether it was killed at its limit (``timed_out``)."""

    rc: int
    stdout: str
    stderr: str
    timed_out: bool

    @property
    def text(self) -> str:
        """stdout, then stderr on a line of its own when it says anything."""
        return self.stdout + (("\n" + self.stderr) if self.stderr.strip() else "")

    @property
    def rc_out_err(self) -> tuple[int, str, str]:
        """``(rc, stdout, stderr)`` as ``run_command`` returns them."""
        return self.rc, self.stdout, self.stderr


def run_limited(module: Any, argv: list[str], timeout: float | None = None, **run_command_args: Any) -> Ran:
    """``module.run_command(argv, **run_command_args)``, killed after ``timeout`` seconds (None: no limit).

    Raises what ``run_command`` raises (``OSError`` with ``handle_exceptions=False`` when the command cannot
    start)."""
    if timeout is None:
        rc, out, err = module.run_command(argv, **run_command_args)
        return Ran(rc, out, err, False)
    expired = threading.Event()
    timers: list[threading.Timer] = []

    def arm(proc: Any) -> None:
        def kill() -> None:
            expired.set()
            proc.kill()

        timer = threading.Timer(timeout, kill)
        timer.daemon = True
        timers.append(timer)
        timer.start()

    try:
        rc, out, err = module.run_command(argv, before_communicate_callback=arm, **run_command_args)
    finally:
        for timer in timers:
            timer.cancel()
    return Ran(rc, out, err, expired.is_set())


def run_timed(module, argv, timeout, environ_update=None):
    """Run ``argv`` (a list, no shell). Returns ``{"rc", "stdout", "stderr", "seconds", "timed_out"}``; ``rc`` is
    None when the command could not start (``stderr`` says why). Output is decoded as UTF-8 with replacement."""
    start = time.monotonic()
    try:
        ran = run_limited(
            module,
            list(argv),
            timeout,
            handle_exceptions=False,
            expand_user_and_vars=False,
            environ_update=environ_update or {},
            errors="replace",
        )
    except OSError as exc:
        return {
            "rc": None,
            "stdout": "",
            "stderr": f"cannot run {argv[0]}: {exc.strerror or exc}",
            "seconds": round(time.monotonic() - start, 3),
            "timed_out": False,
        }
    return {
        "rc": ran.rc,
        "stdout": ran.stdout,
        "stderr": ran.stderr,
        "seconds": round(time.monotonic() - start, 3),
        "timed_out": ran.timed_out,
    }


def cut_output(out: dict[str, Any], mib: int) -> dict[str, Any]:
    """``out`` (a :func:`run_timed` result) with ``stdout`` and ``stderr`` each kept to ``mib`` MiB (counted in
    characters), a cut one marked ``[hwaac: output cut at <mib> MiB]`` on a line of its own."""
    limit = mib * 1024 * 1024
    for stream in ("stdout", "stderr"):
        if len(out[stream]) > limit:
            out[stream] = out[stream][:limit] + f"\n[hwaac: output cut at {mib} MiB]"
    return out


def run_recorded(
    module: Any, argv: list[str], raw: list[str], timeout: float | None = None, **run_command_args: Any
) -> Ran:
    """:func:`run_limited`, with the command and its output appended to ``raw`` (the transcript a module returns
    as ``raw``): ``$ COMMAND`` and a newline, then :attr:`Ran.text`, or a note that it was killed at its limit.
    Raises what ``run_command`` raises; nothing is recorded then."""
    ran = run_limited(module, argv, timeout, **run_command_args)
    raw.append(f"$ {shlex.join(argv)}\n" + (f"(no answer within {timeout} s; killed)" if ran.timed_out else ran.text))
    return ran
