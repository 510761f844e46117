"""mypy on src/ ([tool.mypy] in pyproject.toml, standard strictness) in the suite: no error anywhere in hwaac."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MYPY = Path(sys.executable).with_name("mypy")


def test_mypy_on_src() -> None:
    r = subprocess.run(
        [str(MYPY), "--no-color-output", "--no-error-summary"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert r.returncode in (0, 1), r.stderr
    assert r.returncode == 0 and not r.stdout.strip(), f"mypy reports errors:\n{r.stdout[-6000:]}"
