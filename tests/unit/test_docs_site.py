"""The documentation site (mkdocs.yml over docs/) builds with ``mkdocs build --strict``: every page in the nav,
every link and anchor resolving. MkDocs runs offline. Not ``-q``: MkDocs 1.6 then drops the warnings that strict
mode counts, and a broken link passes."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "site" / "reference" / "intent" / "index.html").is_file()
