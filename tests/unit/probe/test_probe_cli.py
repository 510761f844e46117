"""``hwaac probe``: the pinglist as text and JSON, usage errors exit 2, the responder binds an address that is not up
with --freebind, and ends cleanly on SIGTERM with its counts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from hwaac import cli

DEMO = str(Path(__file__).parents[3] / "inventory" / "demo")
PORT = 41000 + os.getpid() % 1000


def test_pinglist_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["probe", "pinglist", DEMO, "--host", "gpu-su02-h03", "--json", "--peers", "1"]) == 0
    flows = json.loads(capsys.readouterr().out)
    assert len(flows) == 8 * 8 and {f["src_host"] for f in flows} == {"gpu-su02-h03"}
    assert all(f["dst_host"].startswith("gpu-su01-") for f in flows)


@pytest.mark.parametrize(
    "argv",
    [
        ["probe", "pinglist", DEMO, "--host", "leaf-p0-su01-r0"],
        ["probe", "send", DEMO, "--host", "nobody", "--out", "/nonexistent/x.json"],
        ["probe", "pinglist", DEMO, "--host", "gpu-su01-h01", "--sports", "0"],
        ["probe", "respond", "--bind", "192.0.2.1", "--port", str(PORT), "--duration", "1"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == 2
    assert capsys.readouterr().err.startswith("hwaac probe ")


def test_respond_with_freebind_binds_an_address_not_up(capsys: pytest.CaptureFixture[str]) -> None:
    # 192.0.2.1 (TEST-NET-1) is on no interface here: without --freebind the same command exits 2 (above)
    argv = ["probe", "respond", "--bind", "192.0.2.1", "--port", str(PORT), "--duration", "0.2", "--freebind"]
    assert cli.main(argv) == 0
    assert "answering on 192.0.2.1:" in capsys.readouterr().err


def test_respond_ends_cleanly_on_sigterm() -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hwaac.cli",
            "probe",
            "respond",
            "--bind",
            "127.0.0.5",
            "--port",
            str(PORT),
            "--duration",
            "60",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        assert "answering on 127.0.0.5" in proc.stderr.readline()
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(10)
        assert rc == 0 and "received 0" in proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()
