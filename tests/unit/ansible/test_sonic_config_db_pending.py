"""aiinfra.hwaac.sonic_config_db: a push left pending (``keep_checkpoint``) and then confirmed (``state:
committed``) or undone (``state: rolled_back``), the way the role switch_config waits for its BGP gate.

The switch is the lab switch's own SONiC tools on a folder (``python -m hwaac.lab.sonic_cli --state-dir DIR``,
without FRR and without the SONiC toolkit: apply-patch goes through jsonpatch and hwaac's validator), so these
tests need neither the toolkit nor root. The action plugin runs with its real host module
(tests/unit/ansible/test_sonic_config_db.py ``run_action``).
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.aiinfra.hwaac.plugins.action.sonic_config_db import ActionModule as PushAction
from hwaac.lab.sonic_state import SwitchState
from tests.unit.ansible.test_sonic_config_db import run_action
from tests.unit.test_lab_sonic_cli import rendered

NEIGHBOR = "default|10.1.0.0"
CHECKPOINT = "hwaac-pre-push"


class LabSwitchFiles:
    """A switch folder with ``sonic-cfggen`` and ``config`` wrappers running hwaac.lab.sonic_cli on it; the
    interface of tests/unit/ansible/test_sonic_config_db.py's FakeSwitch that ``run_action`` uses."""

    def __init__(self, folder: Path, running: dict[str, Any]) -> None:
        self.dir = folder
        self.state = SwitchState(folder / "switch")
        self.state.write_running(running)
        self.bin = folder / "bin"
        self.bin.mkdir(parents=True)
        for tool in ("sonic-cfggen", "config"):
            argv = [sys.executable, "-P", "-m", "hwaac.lab.sonic_cli", "--state-dir", str(self.state.folder), tool]
            (self.bin / tool).write_text(f"#!/bin/sh\nexec {shlex.join(argv)} \"$@\"\n")
            (self.bin / tool).chmod(0o755)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "HWAAC_SONIC_TOOLKIT"}
        return {**env, "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}"}


def desired() -> dict[str, Any]:
    """A leaf of the tiny fabric (tests/fixtures/verify/fabric) as rendered."""
    return rendered()


def before_push() -> dict[str, Any]:
    """The rendered leaf without its first BGP neighbour: the push adds it back."""
    cfg = desired()
    del cfg["BGP_NEIGHBOR"][NEIGHBOR]
    del cfg["BGP_NEIGHBOR_AF"][f"{NEIGHBOR}|ipv4_unicast"]
    return cfg


@pytest.fixture
def switch(tmp_path: Path) -> LabSwitchFiles:
    return LabSwitchFiles(tmp_path, before_push())


def act(switch: LabSwitchFiles, args: dict[str, Any], *, check_mode: bool = False) -> dict[str, Any]:
    return run_action(PushAction, "sonic_config_db", args, switch, check_mode=check_mode)  # type: ignore[arg-type]


def test_kept_checkpoint_leaves_the_push_pending_until_committed(switch: LabSwitchFiles) -> None:
    pushed = act(switch, {"config": desired(), "keep_checkpoint": True})
    assert pushed["changed"] is True and pushed["checkpoint_kept"] is True and not pushed.get("failed")
    assert switch.state.running()["BGP_NEIGHBOR"][NEIGHBOR] == desired()["BGP_NEIGHBOR"][NEIGHBOR]
    assert switch.state.checkpoints() == [CHECKPOINT] and switch.state.saved() is None  # not confirmed yet
    assert switch.state.checkpoint(CHECKPOINT) == before_push()

    predicted = act(switch, {"state": "committed"}, check_mode=True)
    assert predicted["changed"] is True and switch.state.checkpoints() == [CHECKPOINT]

    committed = act(switch, {"state": "committed"})
    assert committed["changed"] is True and not committed.get("failed")
    assert [c["cmd"].split()[1:] for c in committed["commands"]] == [
        ["list-checkpoints"],
        ["save", "-y"],
        ["delete-checkpoint", CHECKPOINT],
    ]
    assert switch.state.checkpoints() == [] and switch.state.saved() == switch.state.running()

    again = act(switch, {"state": "committed"})
    assert again["changed"] is False and again["msg"] == f"no pending push (no checkpoint {CHECKPOINT}): nothing to do"


def test_rolled_back_undoes_a_pending_push(switch: LabSwitchFiles) -> None:
    act(switch, {"config": desired(), "keep_checkpoint": True})
    undone = act(switch, {"state": "rolled_back"})
    assert undone["changed"] is True and undone["rolled_back"] is True, undone.get("msg")
    assert undone["msg"] == f"rolled back to checkpoint {CHECKPOINT}"
    assert switch.state.running() == before_push()
    assert switch.state.checkpoints() == [] and switch.state.saved() is None
    nothing = act(switch, {"state": "rolled_back"})
    assert nothing["changed"] is False and nothing["rolled_back"] is False


def test_without_keep_checkpoint_the_push_is_saved_at_once(switch: LabSwitchFiles) -> None:
    pushed = act(switch, {"config": desired()})
    assert pushed["changed"] is True and pushed["checkpoint_kept"] is False
    assert switch.state.checkpoints() == [] and switch.state.saved() == switch.state.running()


def test_no_change_keeps_no_checkpoint(switch: LabSwitchFiles) -> None:
    act(switch, {"config": desired()})
    again = act(switch, {"config": desired(), "keep_checkpoint": True})
    assert again["changed"] is False and again["checkpoint_kept"] is False and switch.state.checkpoints() == []


def test_a_push_the_switch_refuses_keeps_nothing(switch: LabSwitchFiles) -> None:
    bad = copy.deepcopy(desired())
    bad["QUEUE"]["Ethernet0|3"]["scheduler"] = "NO_SUCH"
    got = act(switch, {"config": bad, "keep_checkpoint": True})
    assert got["failed"] is True and got["rolled_back"] is True
    assert "'NO_SUCH' is not defined in SCHEDULER" in got["msg"]
    assert switch.state.running() == before_push() and switch.state.checkpoints() == []


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({}, "state is present but any of the following are missing: config, src"),
        ({"state": "gone"}, "value of state must be one of: present, committed, rolled_back"),
    ],
)
def test_arguments_are_checked(switch: LabSwitchFiles, args: dict[str, Any], error: str) -> None:
    with pytest.raises(Exception, match=error):
        act(switch, args)
    assert json.loads(json.dumps(switch.state.checkpoints())) == []
