"""Run a host module of the collection the way Ansible does: ``python -m <module> ARGS.json`` where the file holds
``{"ANSIBLE_MODULE_ARGS": {...}}`` (with ``_ansible_check_mode`` / ``_ansible_diff``), from the repository root so
``ansible_collections.aiinfra.hwaac`` imports; returns the module's JSON result."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def run_module(name: str, args: dict, args_file: Path, env: dict[str, str], *, check: bool = False) -> dict:
    """Run ``plugins/modules/<name>.py`` with ``args`` (written to ``args_file``) in ``env``."""
    args_file.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {**args, "_ansible_check_mode": check,
                                                             "_ansible_diff": True}}))
    proc = subprocess.run([sys.executable, "-m", f"ansible_collections.aiinfra.hwaac.plugins.modules.{name}",
                           str(args_file)], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.stdout, proc.stderr
    return json.loads(proc.stdout)
