"""The fake SONiC ``config apply-patch`` (tests/fakes/bin/config) decides with SONiC's own GCU (``sonic-gcu-dryrun``
of the SONiC toolkit): a patch GCU rejects changes nothing and fails with GCU's message, an accepted one leaves
GCU's resulting config; without the toolkit it refuses to run."""

from __future__ import annotations

import json
import os
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from hwaac.plan import build_plan
from hwaac.render.sonic import render_config_db
from hwaac.sonic_toolkit import Toolkit
from hwaac.validate import load_intent
from tests.fakes.simulate import factory_switch_config

ROOT = Path(__file__).resolve().parents[2]
FAKES = ROOT / "tests" / "fakes" / "bin"


@cache
def _factory_text() -> str:
    plan = build_plan(load_intent(ROOT / "inventory" / "demo"))
    return json.dumps(factory_switch_config(render_config_db(plan, plan.switch_by_name["leaf-p0-su01-r0"])))


class Switch:
    """A fake switch's state folder and the environment that runs the fake ``config`` on it."""

    def __init__(self, root: Path, toolkit: Toolkit | None) -> None:
        self.dir = root / "state"
        self.dir.mkdir(parents=True)
        (self.dir / "config_db.json").write_text(_factory_text())
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("HWAAC_SONIC_")}
        self.env.update(
            PATH=f"{FAKES}{os.pathsep}{os.environ['PATH']}",
            HWAAC_FAKE_STATE=str(self.dir),
            HWAAC_FAKE_GCU_CACHE=str(root / "gcu-cache"),
        )
        if toolkit is not None:
            self.env.update(HWAAC_SONIC_TOOLKIT=str(toolkit.home), HWAAC_SONIC_CACHE=str(toolkit.cache))

    @property
    def running_text(self) -> str:
        return (self.dir / "config_db.json").read_text()

    @property
    def running(self) -> dict[str, Any]:
        return json.loads(self.running_text)

    def apply(self, patch: list[dict[str, Any]], **env: str) -> subprocess.CompletedProcess[str]:
        path = self.dir.parent / "patch.json"
        path.write_text(json.dumps(patch))
        return subprocess.run(
            ["config", "apply-patch", str(path)], env={**self.env, **env}, capture_output=True, text=True, timeout=900
        )


@pytest.fixture
def switch(tmp_path: Path, sonic_toolkit: Toolkit) -> Switch:
    return Switch(tmp_path, sonic_toolkit)


def test_a_dangling_leafref_is_refused_with_gcus_message_and_nothing_changes(switch: Switch):
    before = switch.running_text
    proc = switch.apply([{"op": "add", "path": "/QUEUE", "value": {"Ethernet0|3": {"scheduler": "NO_SUCH"}}}])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Failed to apply patch due to: Failed to apply patch on the following scopes:" in proc.stderr
    assert "QUEUE|Ethernet0|3 scheduler: Invalid leafref value \"NO_SUCH\"" in proc.stderr
    assert "Patch applied successfully." not in proc.stdout
    assert switch.running_text == before


def test_an_accepted_patch_leaves_gcus_resulting_config(switch: Switch):
    before = switch.running
    proc = switch.apply(
        [
            {"op": "add", "path": "/PORT/Ethernet0/mtu", "value": "9100"},
            {"op": "add", "path": "/PORT/Ethernet4/admin_status", "value": "up"},
        ]
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.endswith("Patch applied successfully.\n")
    assert "Patch Applier:   * [" in proc.stdout  # GCU's changes, in its order
    after = switch.running
    assert after["PORT"]["Ethernet0"]["mtu"] == "9100" and after["PORT"]["Ethernet4"]["admin_status"] == "up"
    expected = json.loads(json.dumps(before))
    expected["PORT"]["Ethernet0"]["mtu"] = "9100"
    expected["PORT"]["Ethernet4"]["admin_status"] = "up"
    assert after == expected


def test_device_facts_come_from_sonic_version_yml(switch: Switch):
    patch = [{"op": "replace", "path": "/PFC_WD/GLOBAL/POLL_INTERVAL", "value": "400"}]
    (switch.dir / "sonic_version.yml").write_text("build_version: 'SONiC.202505.01'\nasic_type: 'broadcom'\n")
    refused = switch.apply(patch)  # a Mellanox SKU on a broadcom ASIC type: GCU knows no such ASIC
    assert refused.returncode == 2 and "Modification of PFC_WD table is illegal" in refused.stderr
    assert switch.running["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"] == "200"
    (switch.dir / "sonic_version.yml").unlink()  # default: an SN5600 (mellanox) on 202505
    accepted = switch.apply(patch)
    assert accepted.returncode == 0, accepted.stderr
    assert switch.running["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"] == "400"


def test_gcu_verdicts_are_kept_for_the_same_question(switch: Switch):
    patch = [{"op": "add", "path": "/PORT/Ethernet8/mtu", "value": "9000"}]
    first = switch.apply(patch)
    assert first.returncode == 0, first.stderr
    cached = list((switch.dir.parent / "gcu-cache").glob("*.json"))
    assert len(cached) == 1 and json.loads(cached[0].read_text())["result"] == "accepted"
    (switch.dir / "config_db.json").write_text(_factory_text())
    again = switch.apply(patch, HWAAC_FAKE_GCU_TIMEOUT="0.001")  # GCU could not run in a millisecond
    assert again.returncode == 0 and again.stdout == first.stdout
    off = switch.apply(patch, HWAAC_FAKE_GCU_CACHE="off", HWAAC_FAKE_GCU_TIMEOUT="0.001")
    assert off.returncode == 2 and "cannot" in off.stderr  # no cache: GCU runs, and times out


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "HWAAC_SONIC_TOOLKIT is not set"),
        ({"HWAAC_SONIC_TOOLKIT": "/nonexistent"}, "is not the SONiC toolkit folder"),
    ],
)
def test_without_the_toolkit_apply_patch_refuses_to_run(tmp_path: Path, env: dict[str, str], message: str):
    switch = Switch(tmp_path, None)
    before = switch.running_text
    proc = switch.apply([{"op": "add", "path": "/PORT/Ethernet0/mtu", "value": "9100"}], **env)
    assert proc.returncode == 2
    assert (
        proc.stderr.startswith("config (fake): apply-patch runs SONiC's own GCU and cannot: ")
        and message in proc.stderr
    )
    assert switch.running_text == before


def test_a_toolkit_that_is_not_set_up_is_named(tmp_path: Path, sonic_toolkit: Toolkit):
    switch = Switch(tmp_path, sonic_toolkit)
    proc = switch.apply([], HWAAC_SONIC_CACHE=str(tmp_path / "empty-cache"))
    assert proc.returncode == 2 and "is not set up" in proc.stderr and "setup.sh PYTHON" in proc.stderr
