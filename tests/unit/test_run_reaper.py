"""The test run's reaper (tests/run_reaper.py): what a killed run left is stopped, a kept server's own processes are
not, and a NetBox that is not set up reads as no services."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import run_reaper

REAPER = Path(run_reaper.__file__)


@pytest.fixture
def run_id() -> Iterator[str]:
    run = f"reaper-test-{uuid.uuid4().hex}"
    yield run
    for pid in run_reaper.marked(run):  # whatever a failed test left
        os.kill(pid, signal.SIGKILL)


def start(run: str, script: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, run_reaper.ENV: run}
    env.pop(run_reaper.OWNER, None)
    return subprocess.Popen(["bash", "-c", script], env=env, start_new_session=True)


def wait_marked(run: str, count: int) -> set[int]:
    for _ in range(100):
        if len(pids := run_reaper.marked(run)) >= count:
            return pids
        time.sleep(0.05)
    raise AssertionError(f"{count} processes of {run} did not start: {run_reaper.marked(run)}")


def test_a_local_netbox_that_is_not_set_up_has_no_services(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HWAAC_NETBOX_STATE", str(tmp_path / "netbox"))
    assert run_reaper.netbox_services() == set()


def test_stop_spares_a_kept_server_and_what_runs_below_it(run_id: str) -> None:
    server = start(run_id, "sleep 300 & wait")  # a server and its worker, both of the run
    other = start(run_id, "exec sleep 300")
    wait_marked(run_id, 3)
    try:
        run_reaper.stop(run_id, {server.pid}, time.monotonic() + 5)
        other.wait(timeout=5)
        left = run_reaper.marked(run_id)
        assert server.pid in left
        assert len(left) == 2, f"the kept server's worker was stopped: {left}"
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def test_a_reaper_whose_run_died_stops_the_run(run_id: str) -> None:
    left = start(run_id, "exec sleep 300")
    wait_marked(run_id, 1)
    reaper = subprocess.run(
        [sys.executable, str(REAPER), run_id], input="", capture_output=True, text=True, timeout=60, check=False
    )
    assert reaper.returncode == 0, reaper.stderr
    assert left.wait(timeout=5) == -signal.SIGTERM
    assert run_reaper.marked(run_id) == set()


def test_a_reaper_told_done_leaves_the_run_alone(run_id: str) -> None:
    kept = start(run_id, "exec sleep 300")
    wait_marked(run_id, 1)
    try:
        reaper = subprocess.run(
            [sys.executable, str(REAPER), run_id],
            input="done\n",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert reaper.returncode == 0, reaper.stderr
        assert kept.poll() is None
    finally:
        kept.kill()
        kept.wait()


@pytest.mark.parametrize("state_dir", ["labs", ""])  # an empty variable is no variable: the default folder
def test_the_labs_of_a_run_are_those_a_daemon_of_the_run_belongs_to(
    state_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hwaac.lab.manifest import FORMAT, write_state

    root = tmp_path / "labs"
    monkeypatch.setenv("HWAAC_LAB_STATE_DIR", str(root) if state_dir else "")
    if not state_dir:
        monkeypatch.setattr("hwaac.lab.names.DEFAULT_STATE_ROOT", root)
    for lab, pid in (("ours", 101), ("theirs", 202)):
        (root / lab).mkdir(parents=True)
        write_state(root / lab, {"format": FORMAT, "daemons": {"leaf1": {"bgpd": {"pid": pid}}}})
    (root / "broken").mkdir()
    (root / "broken" / "lab.json").write_text("{not json")
    assert run_reaper.labs_of("any", {101, 303}) == ["ours"]
