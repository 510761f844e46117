"""``hwaac health exporter --port``: started as a subprocess on a free port with the derived samples folders, scraped
over HTTP until ready (bounded), its /metrics checked and validated by ``promtool check metrics``; it re-reads the
samples, keeps the last good assessment when they cannot be read, and is stopped (no process is left, also when a
check fails: the fixture terminates it)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).parents[3]
DEMO = ROOT / "inventory" / "demo"
SAMPLES = ROOT / "tests" / "fixtures" / "telemetry" / "samples"
READY_S = 60.0  # the first assessment of the demo plan, on a busy machine
CHANGE_S = 30.0  # a re-read after the samples changed (--interval 1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hwaac_command() -> list[str]:
    script = Path(sys.executable).parent / "hwaac"  # the console script of this environment
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from hwaac.cli import main; sys.exit(main())"]


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture
def exporter(tmp_path: Path) -> Iterator[Callable[..., tuple[subprocess.Popen[bytes], str, Path]]]:
    """Starts ``hwaac health exporter ... --port N``; (the process, its /metrics URL, its stderr file). Whatever
    happens in the test, the process is terminated (killed if it does not stop) at the end."""
    started: list[subprocess.Popen[bytes]] = []

    def start(*samples: Path) -> tuple[subprocess.Popen[bytes], str, Path]:
        port = free_port()
        err = tmp_path / f"stderr-{port}.txt"
        args = [
            *hwaac_command(),
            "health",
            "exporter",
            str(DEMO),
            "--port",
            str(port),
            "--addr",
            "127.0.0.1",
            "--interval",
            "1",
        ]
        for s in samples:
            args += ["--samples", str(s)]
        with err.open("wb") as fh:
            started.append(subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=fh, cwd=tmp_path))
        return started[-1], f"http://127.0.0.1:{port}/metrics", err

    yield start
    for proc in started:
        stop(proc)


def scrape(url: str) -> tuple[str, str]:
    """(the body, its content type) of one GET."""
    with urllib.request.urlopen(url, timeout=10) as resp:
        assert resp.status == 200
        return resp.read().decode(), resp.headers.get("Content-Type", "")


def wait_for(proc: subprocess.Popen[bytes], err: Path, what: str, ok: Callable[[], str | None], seconds: float) -> str:
    """Poll ``ok`` (a value, or None for not yet) every 0.2 s until it gives a value; fail after ``seconds`` or
    when the exporter exits, with its stderr."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the exporter exited with {proc.returncode} before {what}: {err.read_text()[-2000:]}")
        got = ok()
        if got is not None:
            return got
        time.sleep(0.2)
    pytest.fail(f"no {what} within {seconds:.0f} s; stderr: {err.read_text()[-2000:]}")


def metrics_or_none(url: str) -> str | None:
    try:
        return scrape(url)[0]
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None  # not listening yet


def series(body: str) -> dict[str, list]:
    return {f.name: f.samples for f in text_string_to_metric_families(body)}


def test_serves_metrics_rereads_samples_and_stops(tmp_path: Path, promtool: str, exporter: Callable) -> None:
    sweep1, sweep2 = tmp_path / "sweep1", tmp_path / "sweep2"
    shutil.copytree(SAMPLES / "cable-fault" / "sweep1", sweep1)
    shutil.copytree(SAMPLES / "cable-fault" / "sweep2", sweep2)
    proc, url, err = exporter(sweep1, sweep2)
    body = wait_for(proc, err, "/metrics", lambda: metrics_or_none(url), READY_S)

    assert scrape(url)[1].startswith("text/plain")
    fams = series(body)
    assert len(fams["hwaac_link_planned"]) == 1024  # the demo plan's links
    (suspect,) = fams["hwaac_suspect"]  # the samples README: errors at both ends of L0000000
    assert (suspect.labels["rule"], suspect.labels["component"]) == ("errors_both_ends", "L0000000")
    (ts,) = fams["hwaac_fabric_sweep_timestamp_seconds"]
    assert ts.value == 1_700_000_060  # sweep2/taken_at
    check = subprocess.run(
        [promtool, "check", "metrics"], input=body, capture_output=True, text=True, check=False, timeout=60
    )
    assert check.returncode == 0, check.stdout + check.stderr

    # the errors go away in the samples: the next re-read (every second) drops the suspect
    shutil.rmtree(sweep2)
    shutil.copytree(SAMPLES / "clean" / "sweep2", sweep2)
    wait_for(
        proc,
        err,
        "a scrape without the suspect",
        lambda: b if (b := metrics_or_none(url)) is not None and not series(b)["hwaac_suspect"] else None,
        CHANGE_S,
    )

    # a sweep that cannot be read keeps the last good assessment; the reason goes to stderr
    (sweep2 / "taken_at").write_text("yesterday\n")
    wait_for(
        proc, err, "the taken_at error on stderr", lambda: "x" if "ISO 8601" in err.read_text() else None, CHANGE_S
    )
    kept = series(scrape(url)[0])
    assert len(kept["hwaac_link_planned"]) == 1024 and kept["hwaac_suspect"] == []

    stop(proc)
    assert proc.returncode is not None  # it stopped: nothing left running
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        scrape(url)


def test_a_port_in_use_is_a_usage_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = [
            *hwaac_command(),
            "health",
            "exporter",
            str(DEMO),
            "--samples",
            str(SAMPLES / "clean" / "sweep2"),
            "--port",
            str(port),
            "--addr",
            "127.0.0.1",
        ]
        r = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert f"--port {port}" in r.stderr


def test_the_exporter_assesses_again_only_when_a_sweep_changes(tmp_path: Path) -> None:
    """The re-read's test (hwaac.telemetry.cli.samples_signature): a symlink turned to a new sweep, a sweep folder
    replaced by a copy (which keeps modification times), or a rewritten taken_at change it; nothing else does."""
    from hwaac.telemetry.cli import samples_signature

    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(SAMPLES / "cable-fault" / "sweep1", a)
    shutil.copytree(SAMPLES / "cable-fault" / "sweep2", b)
    (tmp_path / "cur").symlink_to(b)
    folders = [str(a), str(tmp_path / "cur")]
    first = samples_signature(folders)
    assert samples_signature(folders) == first
    (tmp_path / "cur").unlink()
    (tmp_path / "cur").symlink_to(a)
    turned = samples_signature(folders)
    assert turned != first
    shutil.rmtree(a)
    shutil.copytree(SAMPLES / "clean" / "sweep2", a)
    replaced = samples_signature(folders)
    assert replaced != turned
    (a / "taken_at").write_text((a / "taken_at").read_text())
    assert samples_signature(folders) != replaced
