"""playbooks/fabric_deploy.yml with the role aiinfra.hwaac.switch_config, run by the real ``ansible-playbook``
against fake SONiC switches: several inventory hosts with ``connection: local``, each with its own fake state
folder (tests/fakes/bin on PATH through the play's ``environment``).

What it shows: check mode predicts the tables the real run changes and changes nothing; a second run changes
nothing; a switch whose patch fails half-way is rolled back to its pre-push config; a rolling push stops when MORE
than ``max_fail_percentage`` of a batch fails (and goes on at exactly the threshold); a failed BGP gate stops it too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hwaac.plan import build_plan
from hwaac.render import render_to_dir
from hwaac.validate import load_intent
from tests.fakes.simulate import factory_switch_config

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
FAKES = REPO / "tests" / "fakes" / "bin"
PLAYBOOK = REPO / "playbooks" / "fabric_deploy.yml"
SWITCHES = ["leaf-p0-su01-r0", "leaf-p0-su01-r1", "leaf-p0-su01-r2", "leaf-p0-su01-r3"]


@pytest.fixture(scope="module")
def plan_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo fabric rendered as `hwaac plan inventory/demo -o DIR` writes it."""
    out = tmp_path_factory.mktemp("plan") / "demo"
    render_to_dir(build_plan(load_intent(REPO / "inventory" / "demo")), out)
    return out


class Fabric:
    """Fake switches and an inventory that names them."""

    def __init__(self, root: Path, plan_dir: Path, switches: list[str]) -> None:
        self.root, self.plan_dir, self.switches = root, plan_dir, switches
        for name in switches:
            state = self.state(name)
            state.mkdir(parents=True)
            rendered = json.loads((plan_dir / "switches" / name / "config_db.json").read_text())
            (state / "config_db.json").write_text(json.dumps(factory_switch_config(rendered)))
        hosts = {name: {} for name in switches}
        inventory = {
            "all": {
                "children": {
                    "switches": {
                        "hosts": hosts,
                        "vars": {
                            "ansible_connection": "local",
                            "ansible_python_interpreter": sys.executable,
                            "switch_config_dir": str(plan_dir),
                            "switch_config_bgp_retries": 1,
                            "switch_config_bgp_delay": 0,
                            "fabric_deploy_become": False,
                            "fabric_deploy_environment": {
                                "PATH": f"{FAKES}{os.pathsep}{os.environ['PATH']}",
                                "HWAAC_FAKE_STATE": str(root / "state") + "/{{ inventory_hostname }}",
                            },
                        },
                    }
                }
            }
        }
        self.inventory = root / "inventory.json"
        self.inventory.write_text(json.dumps(inventory))

    def state(self, name: str) -> Path:
        return self.root / "state" / name

    def running(self, name: str) -> dict[str, Any]:
        return json.loads((self.state(name) / "config_db.json").read_text())

    def calls(self, name: str) -> list[str]:
        log = self.state(name) / "calls.log"
        return log.read_text().splitlines() if log.exists() else []

    def knob(self, name: str, knob: str, text: str = "") -> None:
        (self.state(name) / knob).write_text(text)

    def play(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``ansible-playbook`` from the venv, run outside the checkout so no ansible.cfg applies."""
        env = {
            **os.environ,
            "ANSIBLE_COLLECTIONS_PATH": str(REPO),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_FORCE_COLOR": "0",
            "ANSIBLE_RETRY_FILES_ENABLED": "0",
            "ANSIBLE_LOCALHOST_WARNING": "0",
            "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
        }
        cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(self.inventory), str(PLAYBOOK), *args]
        # a switch's first push: SONiC's GCU sorts it for a minute or more (tests/fakes/README.md)
        return subprocess.run(cmd, cwd=self.root, env=env, capture_output=True, text=True, timeout=1800)


def recap(stdout: str) -> dict[str, dict[str, int]]:
    """PLAY RECAP per host: ``{host: {"ok": n, "changed": n, "failed": n, ...}}``."""
    out: dict[str, dict[str, int]] = {}
    for host, counts in re.findall(r"^(\S+)\s+:\s+(ok=.*)$", stdout.split("PLAY RECAP")[-1], re.M):
        out[host] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", counts)}
    return out


@pytest.mark.cost(35)
def test_check_mode_predicts_the_push_and_a_second_run_changes_nothing(tmp_path: Path, plan_dir: Path) -> None:
    fabric = Fabric(tmp_path, plan_dir, SWITCHES[:2])
    before = {n: fabric.running(n) for n in fabric.switches}

    check = fabric.play("--check", "--diff", "-e", "fabric_deploy_serial=1")
    assert check.returncode == 0, check.stdout + check.stderr
    assert all(recap(check.stdout)[n]["changed"] == 1 for n in fabric.switches)
    assert {n: fabric.running(n) for n in fabric.switches} == before  # nothing applied
    predicted = set(re.findall(r"^--- before: CONFIG_DB (\S+) \(running\)$", check.stdout, re.M))

    real = fabric.play("-e", "fabric_deploy_serial=1")
    assert real.returncode == 0, real.stdout + real.stderr
    assert all(recap(real.stdout)[n]["changed"] == 1 for n in fabric.switches)
    for name in fabric.switches:
        after = fabric.running(name)
        changed = {t for t in set(after) | set(before[name]) if after.get(t) != before[name].get(t)}
        assert changed == predicted, name  # the tables check mode showed are the ones the push changed
        assert after["MGMT_INTERFACE"] == before[name]["MGMT_INTERFACE"]
        assert after["DEVICE_METADATA"]["localhost"]["hostname"] == name
        assert "config save -y" in fabric.calls(name) and "vtysh -c show bgp summary json" in fabric.calls(name)

    again = fabric.play("-e", "fabric_deploy_serial=1")
    assert again.returncode == 0, again.stdout + again.stderr
    assert all(recap(again.stdout)[n]["changed"] == 0 for n in fabric.switches)


def test_failing_switch_is_rolled_back_and_the_rollout_stops_above_the_threshold(
    tmp_path: Path, plan_dir: Path
) -> None:
    fabric = Fabric(tmp_path, plan_dir, SWITCHES)
    pre_push = fabric.running(SWITCHES[1])
    fabric.knob(SWITCHES[1], "fail_apply_partial")  # applies half of its patch, then fails
    run = fabric.play("-e", "fabric_deploy_serial=2", "-e", "fabric_deploy_max_fail_percentage=49")
    assert run.returncode == 2, run.stdout + run.stderr
    counts = recap(run.stdout)
    assert counts[SWITCHES[0]]["changed"] == 1 and counts[SWITCHES[0]]["failed"] == 0
    assert counts[SWITCHES[1]]["failed"] == 1
    assert "rolled back to checkpoint hwaac-pre-push" in run.stdout
    # the half-applied switch holds exactly its pre-push config again
    assert fabric.running(SWITCHES[1]) == pre_push
    assert "config rollback hwaac-pre-push" in fabric.calls(SWITCHES[1])
    # 1 of 2 failed = 50% > 49%: the second batch never started
    assert fabric.calls(SWITCHES[2]) == [] and fabric.calls(SWITCHES[3]) == []
    assert SWITCHES[2] not in counts and SWITCHES[3] not in counts


@pytest.mark.cost(30)
def test_rollout_goes_on_when_the_failed_share_equals_the_threshold(tmp_path: Path, plan_dir: Path) -> None:
    fabric = Fabric(tmp_path, plan_dir, SWITCHES)
    fabric.knob(SWITCHES[1], "fail_apply")
    run = fabric.play("-e", "fabric_deploy_serial=2", "-e", "fabric_deploy_max_fail_percentage=50")
    counts = recap(run.stdout)
    assert run.returncode == 2  # a host failed, but 50% is not more than 50%
    assert counts[SWITCHES[1]]["failed"] == 1
    assert counts[SWITCHES[2]]["changed"] == 1 and counts[SWITCHES[3]]["changed"] == 1


def test_failed_bgp_gate_stops_the_rollout(tmp_path: Path, plan_dir: Path) -> None:
    fabric = Fabric(tmp_path, plan_dir, SWITCHES[:2])
    fabric.knob(SWITCHES[0], "bgp_down", "10.1.0.2\n")
    run = fabric.play("-e", "fabric_deploy_serial=1")
    assert run.returncode == 2, run.stdout + run.stderr
    assert (
        "BGP health gate failed after 2 read(s): 31/32 BGP sessions Established; "
        "not Established: 10.1.0.2 Active" in run.stdout
    )
    assert fabric.calls(SWITCHES[1]) == []
