"""Every hook of .pre-commit-config.yaml passes on the whole tree (``pre-commit run --all-files``).

The hooks run the tools of .venv (``repo: local``), so the run is offline.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")
# hooks skipped here: none (a hook that cannot run yet goes here, with the reason)
SKIP: tuple[str, ...] = ()
# run by another test of the suite with the same command and configuration (the hook stays, for commits)
RUN_ELSEWHERE = ("ansible-lint",)  # tests/integration/test_collection_quality.py::test_ansible_lint_production_profile


def hook_ids() -> list[str]:
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    return [hook["id"] for repo in config["repos"] for hook in repo["hooks"]]


def test_the_hooks_are_local_and_the_skipped_ones_exist() -> None:
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    assert [repo["repo"] for repo in config["repos"]] == ["local"], "hooks must not be fetched from GitHub"
    ids = hook_ids()
    assert {"ruff-check", "ruff-format", "yamllint", "codespell", "schema-fresh", "ansible-lint"} <= set(ids)
    assert set(SKIP + RUN_ELSEWHERE) <= set(ids)


def test_pre_commit_passes_on_every_file(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "SKIP": ",".join(SKIP + RUN_ELSEWHERE),
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit"),
        "PATH": os.pathsep.join([str(PRE_COMMIT.parent), os.environ.get("PATH", "")]),
    }
    r = subprocess.run(
        [str(PRE_COMMIT), "run", "--all-files", "--color", "never"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
