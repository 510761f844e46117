"""scripts/install-system-deps.sh makes no apt call when every package is present, and calls apt for a missing one.

The script runs with fakes first on PATH: ``dpkg-query`` answers from a list of installed packages, ``apt-get`` and
``sudo`` record their calls, ``terraform`` and ``node`` (20) are there.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "install-system-deps.sh"
PACKAGES = re.findall(r"PACKAGES=\(([^)]*)\)", SCRIPT.read_text())[0].split()


def fake_bin(tmp_path: Path, installed: list[str]) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    calls = tmp_path / "calls"
    (tmp_path / "installed").write_text("\n".join(installed) + "\n")
    tools = {
        # dpkg-query -W -f='${db:Status-Status}' PKG
        "dpkg-query": f'for a; do pkg=$a; done; grep -qx "$pkg" {tmp_path / "installed"} && printf installed',
        "apt-get": f'echo "apt-get $*" >> {calls}',
        "sudo": f'echo "sudo $*" >> {calls}; shift; "$@"',
        "terraform": "exit 0",
        "node": "echo 20",
    }
    for name, body in tools.items():
        (folder / name).write_text(f"#!/bin/sh\n{body}\n")
        (folder / name).chmod(0o755)
    return folder


def run(tmp_path: Path, installed: list[str]) -> tuple[subprocess.CompletedProcess[str], str]:
    env = {**os.environ, "PATH": f"{fake_bin(tmp_path, installed)}:/usr/sbin:/usr/bin:/sbin:/bin"}
    r = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120, check=False)
    calls = tmp_path / "calls"
    return r, calls.read_text() if calls.exists() else ""


def test_nothing_missing_makes_no_apt_call(tmp_path: Path) -> None:
    r, calls = run(tmp_path, PACKAGES)
    assert r.returncode == 0, r.stderr
    assert calls == ""
    assert "nothing to install" in r.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="the script installs as root or through sudo -n")
def test_a_missing_package_is_installed_with_apt(tmp_path: Path) -> None:
    _r, calls = run(tmp_path, [p for p in PACKAGES if p != "lldpd"])
    assert "apt-get update" in calls
    assert re.search(r"^apt-get install .* lldpd$", calls, re.M), calls
