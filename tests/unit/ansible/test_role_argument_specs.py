"""The network roles' variables (defaults/main.yml) are the ones their meta/argument_specs.yml declares, with the
same defaults (a default computed from the inventory is declared without one), and their playbooks pass
``ansible-playbook --syntax-check``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
# role -> its variables whose defaults are templated from the inventory
TEMPLATED = {
    "network_health": {"network_health_intent", "network_health_kind"},
    "network_probe": {"network_probe_intent_src", "network_probe_node", "network_probe_files"},
}


@pytest.mark.parametrize("role", sorted(TEMPLATED))
def test_every_default_is_declared_with_the_same_value(role: str) -> None:
    defaults: dict[str, Any] = yaml.safe_load((REPO / "roles" / role / "defaults" / "main.yml").read_text())
    options: dict[str, Any] = yaml.safe_load((REPO / "roles" / role / "meta" / "argument_specs.yml").read_text())[
        "argument_specs"
    ]["main"]["options"]
    assert set(defaults) == set(options)
    for name, value in defaults.items():
        if name in TEMPLATED[role]:
            assert "default" not in options[name], name
        else:
            assert options[name]["default"] == value, name


@pytest.mark.parametrize("role", sorted(TEMPLATED))
def test_playbook_syntax(role: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    r = subprocess.run(
        [str(BIN / "ansible-playbook"), "--syntax-check", f"playbooks/{role}.yml"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
