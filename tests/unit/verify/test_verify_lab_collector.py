"""The parallel collector: batched shells keep each command's streams and status apart; a timeout or a runner
error becomes an ``error`` output, never an exception. Runs real shells (the runner is subprocess here)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence

from hwaac.verify.lab import BATCH_FROM, LabCollector, batch_script, split_batch
from hwaac.verify.raw import Command


class Local:
    """A runner that runs argv here (the lab's runs it in the device's namespace)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[str, ...]]] = []

    def run(self, device: str, argv: Sequence[str], *, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        if device == "gone":
            raise RuntimeError("namespace hwl-x-gone does not exist")
        self.calls.append((device, tuple(argv)))
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)


CMDS = [
    Command(("printf", "one\ntwo\n")),
    Command(("printf", "no newline")),
    Command(("sh", "-c", "echo oops >&2; exit 3")),
    Command(("printf", "")),
    Command(("sh", "-c", "printf 'a\\n\\n'")),
]


def test_batch_keeps_streams_and_status_apart() -> None:
    runner = Local()
    out = LabCollector(runner).collect({"h1": CMDS})
    assert len(runner.calls) == 1 and runner.calls[0][1][:2] == ("sh", "-c")  # one shell for the batch
    got = {k: (r.rc, r.stdout, r.stderr, r.error) for k, r in out["h1"].items()}
    assert got == {
        CMDS[0].key: (0, "one\ntwo\n", "", None),
        CMDS[1].key: (0, "no newline", "", None),
        CMDS[2].key: (3, "", "oops\n", None),
        CMDS[3].key: (0, "", "", None),
        CMDS[4].key: (0, "a\n\n", "", None),
    }


def test_few_commands_run_one_by_one() -> None:
    runner = Local()
    out = LabCollector(runner).collect({"s1": CMDS[: BATCH_FROM - 1]})
    assert [c[1] for c in runner.calls] == [c.argv for c in CMDS[: BATCH_FROM - 1]]
    assert out["s1"][CMDS[2].key].rc == 3


def test_batch_runs_in_parallel() -> None:
    sleeps = [Command(("sleep", "0.5")), Command(("sleep", "0.6")), Command(("sleep", "0.7")),
              Command(("sleep", "0.8"))]
    t = time.monotonic()
    out = LabCollector(Local()).collect({"h1": sleeps})
    assert time.monotonic() - t < 1.6 and all(r.rc == 0 for r in out["h1"].values())


def test_timeout_and_runner_error_become_error_outputs() -> None:
    out = LabCollector(Local(), timeout=0.5).collect({"h1": [Command(("sleep", "5"))],
                                                       "gone": [Command(("true",))] * 5})
    (slow,) = out["h1"].values()
    assert slow.rc is None and slow.error == "timed out after 0.5 s"
    assert [r.error for r in out["gone"].values()] == ["RuntimeError: namespace hwl-x-gone does not exist"]


def test_split_batch_marks_missing_sections() -> None:
    out = split_batch(CMDS[:2], "@@m", "@@m 0 o\nx\n@@m 0 e\n\n@@m 0 r 0\n", 1, "sh: killed\n")
    assert (out[CMDS[0].key].rc, out[CMDS[0].key].stdout) == (0, "x")
    assert out[CMDS[1].key].error == "no result from the batch shell: sh: killed"


def test_batch_script_quotes_arguments() -> None:
    script = batch_script([Command(("ping", "-I", "10.0.0.1", "$(reboot)"))], "@@m")
    assert "'$(reboot)'" in script
