"""The reaper of one test run: what a killed pytest (``kill`` of ``make test``) left running is stopped at once.

pytest's main process starts it (tests/conftest.py) in a session of its own, and every process of the run
inherits ``HWAAC_TEST_RUN=<id>``, detached ones too (NetBox's gunicorn, PostgreSQL and Redis started by ``hwaac
netbox up``, the twin's FRR and lldpd). It waits on a pipe from pytest: ``done`` when the run ended normally (the
fixtures took everything down), end of file when pytest died. Then it takes down the twins whose daemons carry
the id (``hwaac lab down``), stops every other process that carries it (SIGTERM, SIGKILL after a grace), and
stops the local NetBox when this run started it and no other process uses it (``hwaac netbox down``).

Usage: ``python tests/run_reaper.py RUN_ID`` (stdin: the pipe from pytest).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ENV = "HWAAC_TEST_RUN"
OWNER = "HWAAC_TEST_RUN_OWNER"  # the pid of the run's pytest: a pytest started within the run starts no reaper
GRACE = 10.0  # seconds between SIGTERM and SIGKILL
HWAAC = Path(sys.executable).with_name("hwaac")


def marked(run: str) -> set[int]:
    """Pids of the processes whose environment holds ``HWAAC_TEST_RUN=run`` (this one excepted)."""
    needle = f"{ENV}={run}".encode()
    out = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if needle in (proc / "environ").read_bytes().split(b"\0") and not _zombie(proc):
                out.add(int(proc.name))
    return out


def _zombie(proc: Path) -> bool:
    try:
        return "\nState:\tZ" in (proc / "status").read_text()
    except OSError:
        return True


def labs_of(run: str, pids: set[int]) -> list[str]:
    """The twins (``hwaac lab``) one of whose daemons is a process of the run."""
    from hwaac.lab.errors import LabError
    from hwaac.lab.manifest import STATE_FILE, read_state
    from hwaac.lab.names import state_root

    out = []
    for state in sorted(state_root().glob(f"*/{STATE_FILE}")):
        with contextlib.suppress(LabError, AttributeError):
            daemons = read_state(state.parent).get("daemons", {})
            lab_pids = {d.get("pid") for per_device in daemons.values() for d in per_device.values()}
            if lab_pids & pids:
                out.append(state.parent.name)
    return out


def netbox_services() -> set[int]:
    """Pids of the local NetBox's main gunicorn, PostgreSQL and Redis (none when it is not set up)."""
    from hwaac.devnetbox.local import LocalNetBox

    with contextlib.suppress(Exception):
        status = LocalNetBox().status()
        return {p for p in (status.gunicorn, status.postgres, status.redis) if p}
    return set()


def with_descendants(pids: set[int]) -> set[int]:
    """``pids`` and every process below them (a kept server's workers and backends are kept with it)."""
    children: dict[int, set[int]] = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                ppid = int((proc / "stat").read_text().rpartition(")")[2].split()[1])
                children.setdefault(ppid, set()).add(int(proc.name))
    out, todo = set(), list(pids)
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.add(pid)
            todo.extend(children.get(pid, ()))
    return out


def signal_all(pids: set[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def stop(run: str, keep: set[int], deadline: float) -> None:
    """SIGTERM the run's processes but ``keep`` and what runs below it (gunicorn respawns a worker it loses,
    PostgreSQL restarts on a killed backend), SIGKILL what is left after :data:`GRACE` or at ``deadline``."""
    pids = marked(run) - with_descendants(keep)
    signal_all(pids, signal.SIGTERM)
    kill_at = min(time.monotonic() + GRACE, deadline)
    while (pids := marked(run) - with_descendants(keep)) and time.monotonic() < kill_at:
        time.sleep(0.2)
    while pids and time.monotonic() < deadline:
        signal_all(pids, signal.SIGKILL)
        time.sleep(0.2)
        pids = marked(run) - with_descendants(keep)


def hwaac(args: list[str], deadline: float) -> None:
    """Run an ``hwaac`` command with what is left of the budget; one that does not finish in time is left."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run(
            [str(HWAAC), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=max(1.0, deadline - time.monotonic()),
            check=False,
        )


def reap(run: str, budget: float = 50.0) -> None:
    deadline = time.monotonic() + budget
    pids = marked(run)
    labs = labs_of(run, pids)
    services = netbox_services() & pids  # the local NetBox, when this run started it
    stop(run, services, deadline)
    for lab in labs:
        hwaac(["lab", "down", lab], deadline)
    if services:
        # fails, leaving it up, while another process uses it (users.lock): then it is that process's NetBox too
        hwaac(["netbox", "down"], deadline)
    stop(run, netbox_services(), deadline)


def main(argv: list[str]) -> int:
    run = argv[1]
    os.environ.pop(ENV, None)  # the hwaac commands it runs are not processes of the run
    os.environ.pop(OWNER, None)
    said = sys.stdin.read()  # blocks until pytest writes "done" or dies
    if said.strip() != "done":
        reap(run)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
