"""aiinfra.hwaac.sonic_config_db and aiinfra.hwaac.bgp_sessions: the action plugins driven with their real host
modules against the stateful SONiC fakes (tests/fakes/bin: sonic-cfggen, config, vtysh).

A fake switch is a state folder (running CONFIG_DB, saved copy, checkpoints, call log, failure knobs). The action
plugin runs as in a play; only its transport is replaced: the host module is run as a local Python process with
its arguments file, which is what a ``connection: local`` play does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest.mock import MagicMock

REPO = Path(__file__).resolve().parents[3]
FAKES = REPO / "tests" / "fakes" / "bin"


class FakeSwitch:
    """A SONiC switch as the fakes see it: ``config_db.json`` (running), ``saved_config_db.json``,
    ``checkpoints/``, ``calls.log`` and the failure knobs in one folder."""

    def __init__(self, folder: Path, running: dict[str, Any]) -> None:
        self.dir = folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config_db.json").write_text(json.dumps(running))

    @property
    def running(self) -> dict[str, Any]:
        return json.loads((self.dir / "config_db.json").read_text())

    @property
    def saved(self) -> dict[str, Any] | None:
        path = self.dir / "saved_config_db.json"
        return json.loads(path.read_text()) if path.exists() else None

    def calls(self) -> list[str]:
        """The tool calls so far, temp file names replaced by ``FILE``."""
        path = self.dir / "calls.log"
        lines = path.read_text().splitlines() if path.exists() else []
        return [
            " ".join("FILE" if w.startswith("/") and "hwaac-patch-" in w else w for w in line.split()) for line in lines
        ]

    def checkpoints(self) -> list[str]:
        return (
            sorted(p.name for p in (self.dir / "checkpoints").glob("*.cp.json"))
            if (self.dir / "checkpoints").exists()
            else []
        )

    def knob(self, name: str, text: str = "") -> None:
        (self.dir / name).write_text(text)

    def env(self) -> dict[str, str]:
        return {**os.environ, "PATH": f"{FAKES}{os.pathsep}{os.environ['PATH']}", "HWAAC_FAKE_STATE": str(self.dir)}


def run_module(name: str, args: dict[str, Any], switch: FakeSwitch, *, check_mode: bool = False) -> dict[str, Any]:
    """Run ``plugins/modules/<name>.py`` as Ansible does: a Python process given its arguments file, with the
    collection importable (``ansible_collections.aiinfra.hwaac``, for its module_utils)."""
    args_file = switch.dir / f".args-{name}.json"
    args_file.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {**args, "_ansible_check_mode": check_mode}}))
    proc = subprocess.run(
        [sys.executable, "-m", f"ansible_collections.aiinfra.hwaac.plugins.modules.{name}", str(args_file)],
        cwd=REPO,
        env={**switch.env(), "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=900,
    )  # a first push: SONiC's GCU sorts for a minute
    try:
        return json.loads(proc.stdout)
    except ValueError as exc:
        raise AssertionError(
            f"module {name} printed no JSON (rc {proc.returncode}): {proc.stdout}{proc.stderr}"
        ) from exc


def run_action(
    action_cls: type,
    name: str,
    args: dict[str, Any],
    switch: FakeSwitch,
    *,
    check_mode: bool = False,
    diff: bool = False,
) -> dict[str, Any]:
    """Run an action plugin with its host module executed for real against ``switch``.

    Only the transport is replaced: ``_execute_module`` runs the module file locally instead of shipping it over
    a connection, which is what a ``connection: local`` play does.
    """
    task = MagicMock()
    task.args = args
    task.check_mode = check_mode
    task.diff = diff
    task.async_val = 0
    loader = MagicMock()
    loader.path_dwim_relative_stack.side_effect = lambda paths, dirname, needle: needle
    action = action_cls(
        task=task,
        connection=MagicMock(),
        play_context=MagicMock(check_mode=check_mode),
        loader=loader,
        templar=MagicMock(),
        shared_loader_obj=None,
    )
    calls: list[dict[str, Any]] = []

    def execute_module(module_name: str, module_args: dict[str, Any], task_vars: Any = None) -> dict[str, Any]:
        assert module_name == f"aiinfra.hwaac.{name}"
        calls.append(module_args)
        return run_module(name, module_args, switch, check_mode=check_mode)

    action._execute_module = execute_module  # type: ignore[method-assign]
    result = action.run(task_vars={})
    result["_module_calls"] = calls
    return result


# ---------------------------------------------------------------------------------------------------------- tests

from functools import cache  # noqa: E402

import pytest  # noqa: E402

from ansible_collections.aiinfra.hwaac.plugins.action.bgp_sessions import ActionModule as BgpAction  # noqa: E402
from ansible_collections.aiinfra.hwaac.plugins.action.sonic_config_db import ActionModule as PushAction  # noqa: E402
from hwaac.plan import build_plan  # noqa: E402
from hwaac.render.sonic import render_config_db  # noqa: E402
from hwaac.validate import load_intent  # noqa: E402
from tests.fakes.simulate import factory_switch_config  # noqa: E402

LEAF = "leaf-p0-su01-r0"
PRE_PUSH = ["sonic-cfggen -d --print-data"]


@cache
def _rendered(name: str) -> str:
    plan = build_plan(load_intent(REPO / "inventory" / "demo"))
    return json.dumps(render_config_db(plan, next(s for s in plan.switches if s.name == name)))


def desired(name: str = LEAF) -> dict[str, Any]:
    return json.loads(_rendered(name))


def factory(name: str = LEAF) -> dict[str, Any]:
    """A freshly installed switch (tests.fakes.simulate), plus a factory address on Ethernet0 that the push must
    remove (INTERFACE is a table hwaac owns)."""
    return {**factory_switch_config(desired(name)), "INTERFACE": {"Ethernet0": {}, "Ethernet0|10.0.0.0/31": {}}}


@pytest.fixture
def switch(tmp_path: Path) -> FakeSwitch:
    return FakeSwitch(tmp_path / LEAF, factory())


def push(switch: FakeSwitch, *, check_mode: bool = False, diff: bool = False, **args: Any) -> dict[str, Any]:
    return run_action(
        PushAction, "sonic_config_db", {"config": desired(), **args}, switch, check_mode=check_mode, diff=diff
    )


def test_check_mode_predicts_exactly_what_the_real_run_does(switch: FakeSwitch) -> None:
    before = switch.running
    predicted = push(switch, check_mode=True, diff=True)
    assert predicted["changed"] is True and not predicted.get("failed")
    assert switch.running == before and switch.calls() == PRE_PUSH  # check mode only reads
    assert [m["operation"] for m in predicted["_module_calls"]] == ["read"]
    assert {d["before_header"] for d in predicted["diff"]} == {
        f"CONFIG_DB {t} (running)" for t in predicted["tables_changed"]
    }

    real = push(switch)
    assert real["changed"] is True and not real.get("failed"), real.get("msg")
    assert real["patch"] == predicted["patch"]
    assert real["tables_changed"] == predicted["tables_changed"]
    assert real["after"] == predicted["after"]
    # the prediction is what the switch now holds, table by table
    running = switch.running
    assert {t: running[t] for t in real["tables_changed"]} == predicted["after"]
    assert switch.calls() == PRE_PUSH * 2 + [
        "config checkpoint hwaac-pre-push",
        "config apply-patch FILE",
        "sonic-cfggen -d --print-data",
        "config save -y",
        "config delete-checkpoint hwaac-pre-push",
    ]
    assert switch.saved == running and switch.checkpoints() == []
    assert running["MGMT_INTERFACE"] == before["MGMT_INTERFACE"] and running["FEATURE"] == before["FEATURE"]
    assert real["bgp_neighbors"][:2] == ["10.1.0.0", "10.1.0.2"] and len(real["bgp_neighbors"]) == 32


def test_second_run_changes_nothing(switch: FakeSwitch) -> None:
    assert push(switch)["changed"] is True
    calls = len(switch.calls())
    again = push(switch)
    assert again["changed"] is False and again["patch"] == [] and again["tables_changed"] == {}
    assert switch.calls()[calls:] == PRE_PUSH  # read only: no checkpoint, no apply, no save


def test_a_rollout_keeps_what_mitigation_drained(tmp_path: Path) -> None:
    """A leaf with one uplink drained as ``playbooks/mitigate.yml`` drains it; the rollout's push of the rendered
    config keeps it drained (keep_drains, the default) and would open it without."""
    from hwaac.mitigation import carry_out, drain, engine, guard

    plan = build_plan(load_intent(REPO / "inventory" / "demo"))
    link = next(x for x in plan.links if x.kind == "leaf_spine" and x.a_device == LEAF)
    sw = FakeSwitch(tmp_path / LEAF, desired())
    drained = engine.Action(guard.Decision(guard.DRAIN_LINK, link.cable_id, True, "ok", "test"))
    steps = [st for st in carry_out.steps([drained], plan, lambda name: desired(name)) if st.device == LEAF]
    for stage in carry_out.stages(steps):
        got = run_action(
            PushAction, "sonic_config_db", {"config": stage[LEAF], "owned_tables": [], "keep_drains": False}, sw
        )
        assert got["changed"] and not got.get("failed"), got.get("msg")
    peer = f"default|{'.'.join(str(link.b_ip >> s & 255) for s in (24, 16, 8, 0))}"
    assert sw.running["BGP_NEIGHBOR"][peer]["admin_status"] == "down"

    rollout = push(sw, check_mode=True)
    assert rollout["changed"] is False and rollout["patch"] == []
    reopen = push(sw, check_mode=True, keep_drains=False)
    assert {"op": "replace", "path": f"/BGP_NEIGHBOR/{peer}/admin_status", "value": "up"} in reopen["patch"]
    assert drain.gshut_map(("HWAAC_PERMIT_ALL",)) in json.dumps(sw.running["BGP_NEIGHBOR_AF"])


def test_failed_apply_is_rolled_back_and_reports_the_tool_message(switch: FakeSwitch) -> None:
    before = switch.running
    switch.knob("fail_apply")
    got = push(switch)
    assert got["failed"] is True and got["rolled_back"] is True
    assert "config apply-patch failed (rolled back to checkpoint hwaac-pre-push)" in got["msg"]
    assert "Given patch will produce invalid config. Error: Data Loading Failed" in got["msg"]
    assert switch.running == before and switch.saved is None and switch.checkpoints() == []
    assert switch.calls()[1:] == [
        "config checkpoint hwaac-pre-push",
        "config apply-patch FILE",
        "config rollback hwaac-pre-push",
        "config delete-checkpoint hwaac-pre-push",
        "sonic-cfggen -d --print-data",
    ]


def test_partially_applied_patch_is_rolled_back_to_the_pre_push_config(switch: FakeSwitch) -> None:
    before = switch.running
    switch.knob("fail_apply_partial")
    got = push(switch)
    assert got["failed"] is True and got["rolled_back"] is True
    assert "after applying patch to config, there are still some parts not updated" in got["msg"]
    assert switch.running == before and switch.saved is None


def test_failed_rollback_keeps_the_checkpoint_and_says_so(switch: FakeSwitch) -> None:
    switch.knob("fail_apply_partial")
    switch.knob("fail_rollback", "rollback refused by the fake")
    got = push(switch)
    assert got["failed"] is True and got["rolled_back"] is False
    assert "ROLLBACK FAILED, checkpoint hwaac-pre-push kept on the switch: rollback refused by the fake" in got["msg"]
    assert switch.checkpoints() == ["hwaac-pre-push.cp.json"]


def test_change_to_the_management_interface_is_refused_before_anything_runs(switch: FakeSwitch) -> None:
    want = desired()
    want["MGMT_INTERFACE"] = {"eth0|192.0.2.99/24": {"gwaddr": "192.0.2.1"}}
    for check_mode in (True, False):
        got = run_action(PushAction, "sonic_config_db", {"config": want}, switch, check_mode=check_mode)
        assert got["failed"] is True and got["changed"] is False
        assert "refused" in got["msg"] and "/MGMT_INTERFACE/eth0|192.0.2.99~124" in got["msg"]
    assert switch.calls() == PRE_PUSH * 2


def test_src_file_tables_and_no_save(switch: FakeSwitch, tmp_path: Path) -> None:
    src = tmp_path / "config_db.json"
    src.write_text(_rendered(LEAF))
    # BGP_GLOBALS too: SONiC's YANG (and so GCU) refuses neighbours of a VRF without its BGP_GLOBALS entry
    got = run_action(
        PushAction,
        "sonic_config_db",
        {"src": str(src), "tables": ["BGP_GLOBALS", "BGP_NEIGHBOR"], "save": False},
        switch,
    )
    assert set(got["tables_changed"]) == {"BGP_GLOBALS", "BGP_NEIGHBOR"} and not got.get("failed"), got.get("msg")
    assert switch.running["BGP_NEIGHBOR"] == desired()["BGP_NEIGHBOR"]
    assert "INTERFACE" in switch.running and "Ethernet0|172.16.0.0/31" not in switch.running["INTERFACE"]
    assert switch.saved is None and "config save -y" not in switch.calls()


def test_arguments_are_checked(switch: FakeSwitch) -> None:
    with pytest.raises(Exception, match=r"mutually exclusive: config\|src"):
        run_action(PushAction, "sonic_config_db", {"config": {}, "src": "x"}, switch)
    assert switch.calls() == []


# ------------------------------------------------------------------------------------------- BGP health gate


def gate(switch: FakeSwitch, **args: Any) -> dict[str, Any]:
    return run_action(BgpAction, "bgp_sessions", {"delay": 0, **args}, switch)


def test_gate_passes_when_the_pushed_neighbours_are_established(switch: FakeSwitch) -> None:
    pushed = push(switch)
    got = gate(switch, neighbors=pushed["bgp_neighbors"], retries=0)
    assert not got.get("failed") and got["configured"] == 32 and got["established"] == 32
    assert got["router_id"] == "10.0.0.1" and got["attempts"] == 1 and got["down"] == {}


def test_gate_waits_for_sessions_that_come_up_late(switch: FakeSwitch) -> None:
    switch.knob("bgp_converge_polls", "2")  # new sessions stay Active for two polls
    pushed = push(switch)
    got = gate(switch, neighbors=pushed["bgp_neighbors"], retries=5)
    assert not got.get("failed") and got["attempts"] == 3


def test_gate_fails_naming_the_neighbours_still_down(switch: FakeSwitch) -> None:
    pushed = push(switch)
    switch.knob("bgp_down", "10.1.0.2\n10.1.0.6\n")
    got = gate(switch, neighbors=pushed["bgp_neighbors"], retries=2)
    assert got["failed"] is True and got["attempts"] == 3
    assert got["down"] == {"10.1.0.2": "Active", "10.1.0.6": "Active"}
    assert got["msg"] == (
        "BGP health gate failed after 3 read(s): 30/32 BGP sessions Established; "
        "not Established: 10.1.0.2 Active, 10.1.0.6 Active"
    )
    assert gate(switch, neighbors=pushed["bgp_neighbors"], retries=0, min_up=0.9).get("failed") is None


def test_gate_counts_a_neighbour_frr_does_not_know_as_missing(switch: FakeSwitch) -> None:
    push(switch)
    cfg = switch.running
    del cfg["BGP_NEIGHBOR_AF"]["default|10.1.0.0|ipv4_unicast"]  # not activated: FRR lists it under no family
    (switch.dir / "config_db.json").write_text(json.dumps(cfg))
    got = gate(switch, neighbors=["10.1.0.0", "10.1.0.2"], retries=0)
    assert got["failed"] is True and got["down"] == {"10.1.0.0": "missing"}


# ------------------------------------------------------------------------------------- documentation, fakes


@pytest.mark.parametrize("module", ["sonic_config_db", "bgp_sessions"])
def test_ansible_doc_shows_the_modules(module: str) -> None:
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(REPO)}
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-doc"), "--json", f"aiinfra.hwaac.{module}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)[f"aiinfra.hwaac.{module}"]
    assert doc["doc"]["options"] and doc["examples"] and doc["return"]
    assert doc["doc"]["attributes"]["check_mode"]["support"] == "full"


def test_fake_config_follows_the_recorded_output(switch: FakeSwitch, tmp_path: Path) -> None:
    """The fake's wording is the recorded one (tests/fixtures/tools/sonic)."""
    recorded = REPO / "tests" / "fixtures" / "tools" / "sonic"
    patch_file = tmp_path / "empty.json"
    patch_file.write_text("[]")
    out = subprocess.run(
        ["config", "apply-patch", str(patch_file)], env=switch.env(), capture_output=True, text=True
    ).stdout
    want = (recorded / "config-apply-patch-empty.out").read_text().splitlines()
    got = out.splitlines()
    assert [line.strip() for line in got] == [line.strip() for line in want]
    save = subprocess.run(["config", "save", "-y"], env=switch.env(), capture_output=True, text=True).stdout
    assert save == (recorded / "config-save.out").read_text()
    rb = subprocess.run(["config", "rollback", "nope"], env=switch.env(), capture_output=True, text=True)
    assert rb.returncode == 2 and rb.stderr.endswith("Error: Checkpoint 'nope' does not exist\n")
    assert 'Try "config rollback -h" for help.' in rb.stderr
