"""plugins/module_utils/timed_run.py, the one command runner of the host modules: the time limit kills the
command, the transcript records what ran, and an output over its cap is cut and says so."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from typing import Any

from ansible_collections.aiinfra.hwaac.plugins.module_utils.timed_run import (
    cut_output,
    run_limited,
    run_recorded,
    run_timed,
)


class FakeModule:
    """``run_command`` as AnsibleModule runs it: start, hand the process to ``before_communicate_callback``, read."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def run_command(self, argv: list[str], before_communicate_callback: Any = None, **kwargs: Any):
        self.calls.append(kwargs)
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if before_communicate_callback:
            before_communicate_callback(proc)
        out, err = proc.communicate()
        return proc.returncode, out, err


SLEEP = [sys.executable, "-c", "import time; time.sleep(30)"]
SAY = [sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr)"]


def test_a_command_past_its_limit_is_killed() -> None:
    start = time.monotonic()
    ran = run_limited(FakeModule(), SLEEP, 0.5)
    assert ran.timed_out and ran.rc != 0
    assert time.monotonic() - start < 10


def test_a_command_within_its_limit_is_not_marked() -> None:
    ran = run_limited(FakeModule(), SAY, 30)
    assert ran.rc_out_err == (0, "out\n", "err\n") and not ran.timed_out
    assert ran.text == "out\n\nerr\n"


def test_without_a_limit_run_command_gets_only_the_callers_arguments() -> None:
    module = FakeModule()
    run_limited(module, SAY, None, data="x")
    assert module.calls == [{"data": "x"}]


def test_the_transcript_records_output_or_the_kill() -> None:
    raw: list[str] = []
    run_recorded(FakeModule(), SAY, raw)
    run_recorded(FakeModule(), SLEEP, raw, 0.5)
    assert raw[0] == f"$ {shlex.join(SAY)}\nout\n\nerr\n"
    assert raw[1] == f"$ {shlex.join(SLEEP)}\n(no answer within 0.5 s; killed)"


def test_run_timed_reports_a_command_that_cannot_start() -> None:
    class Missing(FakeModule):
        def run_command(self, argv: list[str], before_communicate_callback: Any = None, **kwargs: Any):
            raise FileNotFoundError(2, "No such file or directory")

    got = run_timed(Missing(), ["no-such-tool"], 5)
    assert got["rc"] is None and got["stderr"] == "cannot run no-such-tool: No such file or directory"
    assert got["timed_out"] is False


def test_cut_output_keeps_the_cap_of_each_stream_and_marks_the_cut() -> None:
    mib = 1024 * 1024
    out = cut_output({"rc": 0, "stdout": "x" * (mib + 5), "stderr": "y" * mib}, 1)
    assert out["stdout"] == "x" * mib + "\n[hwaac: output cut at 1 MiB]"
    assert out["stderr"] == "y" * mib  # at the cap: kept whole, no mark
