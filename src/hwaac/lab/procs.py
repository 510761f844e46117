"""Processes of a lab: identity (pid + start time, so a reused pid is never taken for ours), liveness, stopping.

The start time is field 22 of ``/proc/<pid>/stat`` (``proc(5)``), in clock ticks since boot.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from hwaac.lab.errors import LabError


def start_time(pid: int) -> int | None:
    """The start time of process ``pid`` (clock ticks since boot), or None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # the command name (field 2) is in parentheses and may hold spaces: split after its closing one
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[19])


def ident(pid: int) -> dict[str, int]:
    """The record of a live process: ``{"pid": .., "start": ..}``.

    Raises:
        LabError: the process does not exist.
    """
    st = start_time(pid)
    if st is None:
        raise LabError(f"process {pid} is gone")
    return {"pid": pid, "start": st}


def alive(rec: dict[str, int] | None) -> bool:
    """Whether the recorded process still runs (same pid, same start time, not a zombie)."""
    if not rec:
        return False
    st = start_time(int(rec["pid"]))
    if st is None or st != rec.get("start"):
        return False
    try:
        state = Path(f"/proc/{rec['pid']}/stat").read_text()
    except OSError:
        return False
    return state[state.rfind(")") + 2 :].split()[0] != "Z"


def read_pidfile(path: Path, timeout: float = 5.0) -> int:
    """The pid in ``path``, waiting up to ``timeout`` s for the daemon to write it.

    Raises:
        LabError: no pid file in time.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            text = path.read_text().strip()
            if text:
                return int(text.split()[0])
        except (FileNotFoundError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise LabError(f"{path}: no pid file {timeout:.0f} s after start")
        time.sleep(0.02)


def stop(recs: Iterable[dict[str, int]], *, sig: int = signal.SIGTERM, timeout: float = 5.0) -> None:
    """Send ``sig`` to each recorded process that is still ours, wait up to ``timeout`` s, then SIGKILL the rest."""
    live = [r for r in recs if alive(r)]
    for r in live:
        _signal(r, sig)
    deadline = time.monotonic() + timeout
    while live and time.monotonic() < deadline:
        live = [r for r in live if alive(r)]
        if live:
            time.sleep(0.02)
    for r in live:
        _signal(r, signal.SIGKILL)
    kill_deadline = time.monotonic() + 2.0
    while any(alive(r) for r in live) and time.monotonic() < kill_deadline:
        time.sleep(0.02)


def stop_pids(pids: Iterable[int], *, sig: int = signal.SIGKILL) -> None:
    """Stop processes by pid as they are now (used for whatever still runs in a lab's namespace)."""
    recs = []
    for pid in pids:
        st = start_time(pid)
        if st is not None:
            recs.append({"pid": pid, "start": st})
    stop(recs, sig=sig, timeout=2.0)


def _signal(rec: dict[str, int], sig: int) -> None:
    """Signal the process, or its whole process group when the record says it leads one (``"group": 1``)."""
    with contextlib.suppress(ProcessLookupError):
        if rec.get("group"):
            os.killpg(int(rec["pid"]), sig)
        else:
            os.kill(int(rec["pid"]), sig)


def run(
    argv: Sequence[str],
    *,
    timeout: float = 60.0,
    input: str | None = None,
    check: bool = True,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command, text in and out.

    Raises:
        LabError: it failed (with ``check``), naming the command, its exit status and the first lines of stderr.
    """
    try:
        proc = subprocess.run(list(argv), input=input, capture_output=True, text=True, timeout=timeout, env=env)
    except FileNotFoundError:
        raise LabError(
            f"{argv[0]}: not found (install iproute2, frr and lldpd: scripts/install-system-deps.sh)"
        ) from None
    except subprocess.TimeoutExpired:
        raise LabError(f"{' '.join(argv[:6])}: no answer in {timeout:.0f} s") from None
    if check and proc.returncode != 0:
        err = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[:8])
        raise LabError(f"{' '.join(argv[:8])}{' ...' if len(argv) > 8 else ''} failed (exit {proc.returncode}): {err}")
    return proc
