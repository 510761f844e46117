"""Every Molecule scenario in molecule/ (default driver, unmanaged: localhost with the fakes of tests/fakes/bin):
prepare, check, converge, idempotence (a second converge reports changed=0) and verify, whose playbook also
checks that check mode predicted exactly the changes the converge then made (tests/ansible/callback_plugins).
The burn-in and health-check scenarios get a fresh NetBox database of the local NetBox (NETBOX_URL/NETBOX_TOKEN)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hwaac.devnetbox.instances import Instance

if TYPE_CHECKING:
    from tests.integration.conftest import NetBoxPool

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = sorted(p.parent.name for p in (REPO / "molecule").glob("*/molecule.yml"))
NETBOX_SCENARIOS = {"burn_in", "burn_in_breaker", "health_check"}
BURN_IN = REPO / "tests/fixtures/intents/valid/burn-in.yml"  # their prepare's fixture fabric


def test_there_are_scenarios() -> None:
    assert {"host_network", "switch_config", "nic_config", "lustre_client", *NETBOX_SCENARIOS} <= set(SCENARIOS)


def molecule(scenario: str, extra: dict[str, str]) -> None:
    venv = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "MOLECULE_", "NETBOX_"))}
    env["PATH"] = f"{venv}{os.pathsep}{env.get('PATH', '')}"  # molecule runs ansible-playbook from PATH
    env["NO_COLOR"] = "1"
    r = subprocess.run(
        [str(venv / "molecule"), "test", "-s", scenario],
        cwd=REPO,
        env={**env, **extra},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]


# how long each scenario holds a worker on 2 busy cores (tests/conftest.py: the costliest start first)
COST = {
    "burn_in": 210,
    "health_check": 155,
    "burn_in_breaker": 90,
    "lustre_client": 85,
    "host_network": 60,
    "nic_config": 60,
    "switch_config": 55,
}


def scenarios(names: set[str]) -> list[object]:
    return [pytest.param(n, marks=pytest.mark.cost(COST.get(n, 60))) for n in sorted(names)]


@pytest.mark.parametrize("scenario", scenarios(set(SCENARIOS) - NETBOX_SCENARIOS))
def test_scenario(scenario: str) -> None:
    molecule(scenario, {})


@pytest.fixture(scope="module")
def burn_in_netbox(netbox_pool: NetBoxPool) -> Iterator[Instance]:
    """A fresh NetBox of this module's, holding the burn-in fixture fabric as synced (the run's shared copy)."""
    with netbox_pool.synced("test_molecule", BURN_IN) as inst:
        yield inst


# The scenarios that need a NetBox share this module's (one per xdist worker): each prepare finds the fixture
# fabric there (it syncs it when missing) and resets its nodes to planned, so they do not depend on each other.
@pytest.mark.parametrize("scenario", scenarios(NETBOX_SCENARIOS))
def test_scenario_with_netbox(scenario: str, burn_in_netbox: Instance) -> None:
    molecule(scenario, {"NETBOX_URL": burn_in_netbox.url, "NETBOX_TOKEN": burn_in_netbox.token})
