"""Every Molecule scenario in molecule/ (default driver, unmanaged: localhost with the fakes of tests/fakes/bin):
syntax, prepare, check, converge, idempotence (a second converge reports changed=0) and verify, whose playbook also
checks that check mode predicted exactly the changes the converge then made (tests/ansible/callback_plugins)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = sorted(p.parent.name for p in (REPO / "molecule").glob("*/molecule.yml"))


def test_there_are_scenarios() -> None:
    assert {"host_network", "switch_config", "nic_config"} <= set(SCENARIOS)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario: str) -> None:
    venv = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "MOLECULE_"))}
    env["PATH"] = f"{venv}{os.pathsep}{env.get('PATH', '')}"  # molecule runs ansible-playbook from PATH
    env["NO_COLOR"] = "1"
    r = subprocess.run([str(venv / "molecule"), "test", "-s", scenario], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]
