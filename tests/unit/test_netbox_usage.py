"""The local NetBox's usage lock across processes: shared uses coexist, a waiting exclusive use goes first."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from hwaac.devnetbox.errors import LocalNetBoxError
from hwaac.devnetbox.usage import UsageLock

HOLDER = """
import sys, time
from pathlib import Path
from hwaac.devnetbox.usage import UsageLock
lock = UsageLock(Path(sys.argv[1]))
use = lock.shared() if sys.argv[2] == "shared" else lock.exclusive(timeout=30)
with use:
    print("held", flush=True)
    release = Path(sys.argv[3])
    while not release.exists():
        time.sleep(0.05)
print("released", flush=True)
"""


def holder(lock: Path, mode: str, release: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock), mode, str(release)], stdout=subprocess.PIPE, text=True
    )


def wait_line(proc: subprocess.Popen[str], want: str) -> None:
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == want


def test_shared_uses_of_two_processes_coexist(tmp_path: Path) -> None:
    lock = tmp_path / "users.lock"
    other = holder(lock, "shared", tmp_path / "go")
    try:
        wait_line(other, "held")
        with UsageLock(lock).shared(timeout=2):
            pass
    finally:
        (tmp_path / "go").touch()
        other.wait(timeout=10)


def test_a_waiting_exclusive_use_keeps_new_shared_uses_out_until_it_had_its_turn(tmp_path: Path) -> None:
    lock = tmp_path / "users.lock"
    reader = holder(lock, "shared", tmp_path / "reader-go")
    writer = None
    try:
        wait_line(reader, "held")
        writer = holder(lock, "exclusive", tmp_path / "writer-go")
        time.sleep(1.0)  # the writer now waits for the reader, holding the turnstile
        with (
            pytest.raises(LocalNetBoxError, match="another process waits to stop the local NetBox"),
            UsageLock(lock).shared(timeout=0.5),
        ):
            pass
        (tmp_path / "reader-go").touch()
        wait_line(writer, "held")  # the writer got its turn once the reader left
        with (
            pytest.raises(LocalNetBoxError, match="being stopped by another process"),
            UsageLock(lock).shared(timeout=0.5),
        ):
            pass
        (tmp_path / "writer-go").touch()
        wait_line(writer, "released")
        with UsageLock(lock).shared(timeout=2):
            pass
    finally:
        (tmp_path / "reader-go").touch()
        (tmp_path / "writer-go").touch()
        reader.wait(timeout=10)
        if writer:
            writer.wait(timeout=10)
