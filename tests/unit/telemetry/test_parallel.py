"""Reading sweeps on several processes (hwaac.telemetry.parallel, forced on with a threshold of one device): the
same sweeps as the serial path, and the same rated readings when read and rated device by device
(hwaac.telemetry.rated), dict order included; no process left behind, a failing job raised here."""

from __future__ import annotations

import functools
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hwaac.telemetry import parallel, rated, samples
from hwaac.telemetry.model import Snapshot

FIX = Path(__file__).parents[2] / "fixtures"
REPO = Path(__file__).parents[3]
_INNER = "HWAAC_TEST_ONE_THREAD"


def one_thread(test: Callable[..., None]) -> Callable[..., None]:
    """Run ``test`` here when this process has no other thread, else as a pytest run of its own in a new process:
    the pool never forks a process that has other threads (``parallel.parallel_ok``), and a suite's earlier tests
    in this worker may have left some (servers, pools), which would turn the parallel path under test off."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        if threading.active_count() == 1 or os.environ.get(_INNER):
            test(*args, **kwargs)
            return
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:xdist",
                f"{Path(__file__).relative_to(REPO)}::{test.__name__}",
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, _INNER: "1"},
        )
        assert r.returncode == 0 and " passed" in r.stdout, (r.stdout + r.stderr)[-4000:]

    return wrapper


# stem -> recorded output, as a switch or a GPU node returns it
SWITCH = {
    "counters-db.json": FIX / "telemetry" / "counters-db" / "sonic-utilities-b6af9f4-t1-dump-subset.json",
    "intf-status.txt": FIX / "telemetry" / "sonic-interfaces-status" / "status_mock_master.txt",
    "bgp-summary.json": FIX / "telemetry" / "frr" / "bgp-summary-7.2-sonic-t1.json",
    "routes.json": FIX / "telemetry" / "frr" / "ip-route-8.4-unnumbered.json",
    "show-version.txt": FIX / "telemetry" / "sonic-interfaces-status" / "status_mock_master.txt",  # no tool
}
HOST = {
    "ethtool@rail0.txt": FIX / "health" / "ethtool" / "mlx5-connectx4-kernel-4.15" / "ethtool-S.txt",
    "ib-counters.txt": FIX / "health" / "ib-counters" / "procfs-fixture" / "counters.txt",
    "rdma-statistic.txt": FIX / "health" / "rdma-statistic" / "mlnx-iproute2-4link.txt",
}


def _folders(tmp: Path, devices: int = 5) -> list[Path]:
    out = []
    for n in (1, 2):
        root = tmp / f"sweep{n}"
        for i in range(devices):
            for device, files in ((f"leaf-{i}", SWITCH), (f"gpu-{i}", HOST)):
                (root / device).mkdir(parents=True)
                for name, src in files.items():
                    (root / device / name).write_text(src.read_text())
        (root / "taken_at").write_text(f"{1000 + 30 * n}\n")
        out.append(root)
    return out


def _dump(value: Any) -> Any:
    """A reading with every dict as a list of items, so that equal means the same order too."""
    if isinstance(value, dict):
        return [(_dump(k), _dump(v)) for k, v in value.items()]
    if isinstance(value, list | tuple):
        return [_dump(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return (type(value).__name__, [(f, _dump(getattr(value, f))) for f in value.__dataclass_fields__])
    return value


@pytest.fixture
def low_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "PARALLEL_DEVICES", 1)


@pytest.mark.usefixtures("low_threshold")
@one_thread
def test_folders_read_on_two_processes_as_on_one(tmp_path: Path) -> None:
    folders = _folders(tmp_path)
    serial = samples.read_sweeps(folders, workers=1)
    assert parallel.parallel_ok(20, 2) == 2
    together = samples.read_sweeps(folders, workers=2)
    assert _dump(together) == _dump(serial)
    assert serial[1].snapshots and serial[1].bgp and serial[1].routes and serial[1].skipped
    assert multiprocessing.active_children() == []


@pytest.mark.usefixtures("low_threshold")
@one_thread
def test_outputs_read_on_two_processes_as_on_one() -> None:
    outputs = {
        f"{kind}-{i}": {
            name.rpartition(".")[0]: (src.read_text(), 1000.0 + i)
            for name, src in files.items()
            if not name.startswith("show")
        }
        for i in range(5)
        for kind, files in (("leaf", SWITCH), ("gpu", HOST))
    }
    named = [("sweep 1", outputs, None, ["gpu-9 ethtool@rail0: not read, exit 1"]), ("sweep 2", outputs, 5.0, None)]
    serial = samples.sweeps_from_outputs(named, workers=1)
    assert _dump(samples.sweeps_from_outputs(named, workers=2)) == _dump(serial)
    assert multiprocessing.active_children() == []


@pytest.mark.usefixtures("low_threshold")
@one_thread
def test_folders_read_and_rated_device_by_device_as_sweep_by_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rated, "SERIAL_CHUNK", 3)  # several chunks on the serial path too
    folders = _folders(tmp_path)
    (folders[1] / "gpu-0" / "ethtool@rail0.txt").unlink()  # one device's tool read once: a snapshot, not rated
    (folders[0] / "leaf-9").mkdir()  # a device in the first sweep only
    (folders[0] / "leaf-9" / "pfcwd.txt").write_text("")
    whole = rated.rate(samples.read_sweeps(folders, workers=1))
    assert any(isinstance(r, Snapshot) for r in whole.readings) and whole.bgp and whole.seconds
    for workers in (1, 2):
        got = rated.read_rated(folders, workers=workers)
        assert _dump(got) == _dump(whole), workers
    assert multiprocessing.active_children() == []


def _fails_on_three(job: int) -> int:
    if job == 3:
        raise ValueError("job 3")
    return job * 2


@one_thread
def test_a_failing_job_is_raised_here_and_no_process_is_left() -> None:
    assert parallel.run(_fails_on_three, [0, 1, 2], 2) == [0, 2, 4]
    with pytest.raises(ValueError, match="job 3"):
        parallel.run(_fails_on_three, list(range(8)), 2)
    assert multiprocessing.active_children() == []


def _slow_first(i: int) -> int:
    if i == 0:
        time.sleep(0.3)  # the other process meanwhile finishes the jobs after it
    return i


@one_thread
@pytest.mark.parametrize("workers", [1, 2])
def test_results_are_consumed_here_in_job_order(workers: int) -> None:
    """What consume returns is kept, and it sees every result in job order, in this process, even when later
    jobs end first."""
    seen: list[tuple[int, int, int]] = []

    def consume(i: int, result: int) -> int:
        seen.append((i, result, os.getpid()))
        return -result

    assert parallel.run(_slow_first, list(range(6)), workers, consume=consume) == [0, -1, -2, -3, -4, -5]
    assert seen == [(i, i, os.getpid()) for i in range(6)]
    assert multiprocessing.active_children() == []


@one_thread
def test_small_sweeps_one_core_and_threads_stay_serial(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parallel.parallel_ok(parallel.PARALLEL_DEVICES - 1, 4) == 0
    assert parallel.parallel_ok(parallel.PARALLEL_DEVICES, 1) == 0
    assert parallel.parallel_ok(parallel.PARALLEL_DEVICES, 4) == 4
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert parallel.parallel_ok(parallel.PARALLEL_DEVICES, 4) == 0  # a fork would copy the thread's locks
    finally:
        stop.set()
        other.join()


def test_chunks_keep_order_and_shrink_to_the_last_size() -> None:
    items = list(range(1000))
    assert parallel.chunks(items, 1) == [items]
    cut = parallel.chunks(items, 2, per_worker=4, last=10)
    sizes = [len(c) for c in cut]
    assert [x for c in cut for x in c] == items
    assert sizes[0] == 125  # an eighth of all: 2 workers x 4
    assert sizes == sorted(sizes, reverse=True) and set(sizes[-3:-1]) == {10} and sizes[-1] <= 10


PROBES = Path(__file__).parents[2] / "fixtures" / "telemetry" / "samples" / "probe-loss_derived"


@one_thread
def test_probe_results_come_back_from_the_reader_processes(low_threshold: None) -> None:
    """A folder of probe results (64 hosts) read and rated on two processes holds the same results as on one, and
    the assessment names the same cable (L0000266 loses 2 % of its probes: the fixture's README)."""
    from hwaac.plan import build_plan
    from hwaac.telemetry.fabric_health import judge
    from hwaac.telemetry.slo import default_slos
    from hwaac.validate import load_intent

    one, two = rated.read_rated([PROBES], workers=1), rated.read_rated([PROBES], workers=2)
    assert len(two.probes[0]) == 64 and _dump(two.probes) == _dump(one.probes)
    plan = build_plan(load_intent(Path(__file__).parents[3] / "inventory" / "demo"))
    named = [judge(plan, r, default_slos()).probes.suspects[0].components[0].name for r in (one, two)]
    assert named == ["L0000266", "L0000266"]


def test_outputs_never_rated_are_read_from_the_latest_sweep_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``show interfaces status`` gives state only, and the route table is judged as it is now: of two sweeps only
    the later one's is read, and the reading is its snapshot (the latest table), as when both are read."""
    folders = _folders(tmp_path, devices=2)
    (folders[1] / "leaf-1" / "intf-status.txt").unlink()  # leaf-1's status is in the first sweep only
    read: list[str] = []
    reader, command = samples.READERS["intf-status"]

    def spy(raw: str, *, device: str = "") -> Snapshot:
        read.append(device)
        return reader(raw, device=device)

    routes: list[str] = []
    parse_routes = samples.parse_routes

    def spy_routes(raw: str, *, device: str = "") -> Any:
        routes.append(device)
        return parse_routes(raw, device=device)

    got = rated.read_rated(folders, workers=1)
    monkeypatch.setitem(samples.READERS, "intf-status", (spy, command))
    monkeypatch.setattr(samples, "parse_routes", spy_routes)
    assert _dump(rated.read_rated(folders, workers=1)) == _dump(got)
    assert sorted(read) == ["leaf-0", "leaf-1"]  # leaf-0's from sweep 2, leaf-1's from sweep 1
    assert sorted(routes) == ["leaf-0", "leaf-1"] and got.routes
    status = [r for r in got.readings if r.tool == "show interfaces status"]
    assert [type(r).__name__ for r in status] == ["Snapshot", "Snapshot"]
    assert _dump(rated.rate(samples.read_sweeps(folders, workers=1))) == _dump(got)


SAMPLES = Path(__file__).parents[2] / "fixtures" / "telemetry" / "samples"


@one_thread
def test_ends_correlated_on_the_reader_processes_judge_as_readings_correlated_here(low_threshold: None) -> None:
    """With the plan's index the reader processes also correlate their readings; the assessment (report, ends,
    coverage) is the one of the readings correlated in this process."""
    from hwaac.plan import build_plan
    from hwaac.telemetry.fabric_health import judge
    from hwaac.telemetry.slo import default_slos
    from hwaac.telemetry.topology import LinkIndex
    from hwaac.validate import load_intent

    plan = build_plan(load_intent(REPO / "inventory" / "demo"))
    index = LinkIndex(plan)
    folders = [SAMPLES / "cable-fault" / "sweep1", SAMPLES / "cable-fault" / "sweep2"]
    here = judge(plan, rated.read_rated(folders, workers=1), default_slos(), index=index)
    assert here.report.suspects and here.report.coverage["devices_not_sampled"]
    for workers in (1, 2):
        there = rated.read_rated(folders, workers=workers, index=index)
        assert there.readings == [] and there.parts
        got = judge(plan, there, default_slos(), index=index)
        assert got.report.to_dict() == here.report.to_dict(), workers
        assert list(got.corr.ends) == list(here.corr.ends) and got.corr.missing == here.corr.missing
    assert multiprocessing.active_children() == []
