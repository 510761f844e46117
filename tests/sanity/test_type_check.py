"""mypy on src/ ([tool.mypy] in pyproject.toml, standard strictness) in the suite.

The packages being split in the code-health work keep the errors they had (a ceiling for them together, so a
file moved between them keeps its count); every other module of hwaac has none. Lower ``CEILING`` as errors are
fixed, never raise it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MYPY = Path(sys.executable).with_name("mypy")
# the packages whose errors are not fixed yet, and the most errors they may hold together
PENDING = ("netbox",)
CEILING = 35
ERROR = re.compile(r"^src/hwaac/([^/:]+)[^:]*:\d+: error:", re.M)


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
    errors = Counter(ERROR.findall(r.stdout))
    clean = {pkg: n for pkg, n in errors.items() if pkg not in PENDING}
    assert not clean, f"mypy errors where there were none: {clean}\n{r.stdout[-6000:]}"
    pending = sum(errors.values())
    assert pending <= CEILING, f"{pending} mypy errors in {', '.join(PENDING)} (at most {CEILING})\n{r.stdout}"
