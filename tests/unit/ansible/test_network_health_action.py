"""aiinfra.hwaac.network_health: the action plugin on the demo intent, fed the derived samples folders of
tests/fixtures/telemetry/samples as registered network_telemetry results (what a play registers), and fed real
network_telemetry runs against the fake switch (two sweeps of COUNTERS_DB with errors rising on one port)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.aiinfra.hwaac.plugins.action.network_health import ActionModule
from ansible_collections.aiinfra.hwaac.plugins.module_utils.telemetry_specs import SPECS
from ansible_collections.aiinfra.hwaac.plugins.modules import network_health
from tests.unit.ansible.action_run import run_action_plugin
from tests.unit.ansible.fake_host import fake_env
from tests.unit.ansible.module_run import REPO, run_module

DEMO = str(REPO / "inventory" / "demo")
SAMPLES = REPO / "tests" / "fixtures" / "telemetry" / "samples"
CABLE = "L0000000"  # the cable between leaf-p0-su01-r0 Ethernet128 and spine-p0-01 Ethernet0 (samples/README.md)


def registered(folder: Path, **override: Any) -> dict[str, dict]:
    """A samples folder as the network_telemetry results of its devices (host -> registered result)."""
    when = float((folder / "taken_at").read_text())
    out: dict[str, dict] = {}
    for dev in sorted(p for p in folder.iterdir() if p.is_dir()):
        outputs = {
            f.stem: {
                "argv": ["show", "interfaces", "counters"],
                "rc": 0,
                "stdout": f.read_text(),
                "stderr": "",
                "taken_at": when,
                "seconds": 0.5,
                "timed_out": False,
                "truncated": False,
                **override,
            }
            for f in sorted(dev.iterdir())
        }
        out[dev.name] = {"changed": False, "device": None, "taken_at": when, "outputs": outputs}
    return out


def run_action(args: dict[str, Any], *, check: bool = False, task_vars: dict | None = None) -> dict[str, Any]:
    return run_action_plugin(ActionModule, {"intent": DEMO, **args}, check_mode=check, task_vars=task_vars)


FAULT = [registered(SAMPLES / "cable-fault" / "sweep1"), registered(SAMPLES / "cable-fault" / "sweep2")]
CLEAN = [registered(SAMPLES / "cable-fault" / "sweep1"), registered(SAMPLES / "clean" / "sweep2")]


def test_a_cable_with_errors_at_both_ends_fails_the_task_and_writes_the_report(tmp_path: Path) -> None:
    res = run_action({"sweeps": FAULT, "output_dir": str(tmp_path / "out")})
    assert res["failed"] is True and res["status"] == "fault" and res["exit_code"] == 1
    top = res["report"]["suspects"][0]
    assert (top["rule"], top["severity"]) == ("errors_both_ends", "fault")
    assert CABLE in [c["name"] for c in top["components"]]
    assert res["report"]["seconds"] == 60
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["network-health.json", "network-health.md"]
    assert json.loads((tmp_path / "out" / "network-health.json").read_text()) == res["report"]
    assert (tmp_path / "out" / "network-health.md").read_text().startswith("# Fabric health: ")
    assert not [p for p in tmp_path.iterdir() if p.name != "out"]  # nothing outside output_dir


def coverage_slo(tmp: Path, level: float) -> str:
    """The shipped SLO file with the coverage SLO at ``level``."""
    text = (REPO / "src" / "hwaac" / "telemetry" / "data" / "slo.yaml").read_text()
    head, sep, rest = text.partition("  coverage:\n    min: 0.99\n")
    assert sep, "the shipped coverage SLO moved"
    path = tmp / "slo.yaml"
    path.write_text(f"{head}  coverage:\n    min: {level}\n{rest}")
    return str(path)


# the samples read 2 of the demo's 88 devices: the clean interval is a partial sweep, so coverage is below the
# shipped SLO and the report warns; with the coverage SLO at 0 the same interval is ok
@pytest.mark.parametrize(
    ("sweeps", "fail_on", "coverage", "failed"),
    [
        (FAULT, "fault", None, True),
        (FAULT, "warn", None, True),
        (FAULT, "never", None, False),
        (CLEAN, "fault", None, False),
        (CLEAN, "warn", None, True),
        (CLEAN, "warn", 0.0, False),
    ],
    ids=["fault/fault", "fault/warn", "fault/never", "clean/fault", "clean-partial/warn", "clean-covered/warn"],
)
def test_fail_on(tmp_path: Path, sweeps: list, fail_on: str, coverage: float | None, failed: bool) -> None:
    args = {"sweeps": sweeps, "output_dir": str(tmp_path / "out"), "fail_on": fail_on}
    if coverage is not None:
        args["slo"] = coverage_slo(tmp_path, coverage)
    res = run_action(args)
    assert bool(res.get("failed")) is failed
    if sweeps is CLEAN:
        assert res["report"]["suspects"] == []
        assert res["status"] == ("ok" if coverage is not None else "warn")
    if sweeps is CLEAN and coverage is None:
        # 5 planned links of known state (the samples README: 4 leaf ports, 1 more spine port) of 1024
        assert res["report"]["coverage_below_slo"][0] == {
            "scope": "fabric",
            "key": "",
            "coverage": 5 / 1024,
            "unknown": 1019,
            "planned": 1024,
        }
        assert "coverage below its SLO" in res["msg"] and "1019 of 1024 planned links unknown" in res["msg"]


def test_a_second_run_on_the_same_sweeps_changes_nothing_and_check_mode_writes_nothing(tmp_path: Path) -> None:
    args = {"sweeps": CLEAN, "output_dir": str(tmp_path / "out")}
    dry = run_action(args, check=True)
    assert dry["changed"] is True and not (tmp_path / "out").exists()
    assert run_action(args)["changed"] is True
    assert run_action(args)["changed"] is False


def test_outputs_not_read_are_listed_and_never_judged(tmp_path: Path) -> None:
    second = registered(SAMPLES / "cable-fault" / "sweep2", timed_out=True, rc=-9)
    second["gpu-su01-h01"] = {"unreachable": True, "msg": "ssh: timed out"}
    res = run_action({"sweeps": [FAULT[0], second], "output_dir": str(tmp_path)})
    skipped = res["report"]["coverage"]["files_skipped"]
    assert "sweep 2 leaf-p0-su01-r0 portstat: not read, timed out after 0.5 s" in skipped
    assert "sweep 2 gpu-su01-h01: no network_telemetry outputs (unreachable or failed)" in skipped
    assert not res["report"]["suspects"]  # the faulty sweep was not read
    assert res["status"] == "warn" and res["report"]["coverage_below_slo"]  # and what was not read is not healthy


def test_registered_results_are_read_from_hostvars(tmp_path: Path) -> None:
    hostvars = {h: {"first": FAULT[0][h], "second": FAULT[1][h]} for h in FAULT[0]}
    res = run_action(
        {"registered": ["first", "second"], "output_dir": str(tmp_path), "fail_on": "never"},
        task_vars={"hostvars": hostvars, "ansible_play_hosts_all": sorted(hostvars)},
    )
    assert res["status"] == "fault" and [s["path"] for s in res["report"]["sweeps"]] == ["first", "second"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"sweeps": FAULT, "name": "../x"}, "plain file name"),
        ({}, "give sweeps"),
        ({"sweeps": FAULT, "registered": ["a"]}, "not both"),
        ({"sweeps": FAULT, "intent": "/nonexistent/fabric.yml"}, "nonexistent"),
        ({"sweeps": FAULT, "fail_on": "sometimes"}, "fail_on"),
    ],
)
def test_refused(tmp_path: Path, args: dict, message: str) -> None:
    from ansible.errors import AnsibleActionFail

    with pytest.raises(AnsibleActionFail, match=message):
        run_action({"output_dir": str(tmp_path), **args})
    assert list(tmp_path.iterdir()) == []


def test_two_gathered_sweeps_of_the_fake_switch_name_the_port_with_errors(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "telemetry.json").write_text(
        json.dumps({"add_per_call": {"Ethernet0": {"SAI_PORT_STAT_IF_IN_ERRORS": 100000}}})
    )
    env = fake_env(state)
    sweeps = []
    for i in range(2):
        res = run_module(
            "network_telemetry",
            {"tools": ["counters-db"], "device": "leaf-p0-su01-r0"},
            tmp_path / f"args{i}.json",
            env,
        )
        sweeps.append({"leaf-p0-su01-r0-host": res})
    report = run_action({"sweeps": sweeps, "output_dir": str(tmp_path / "out"), "fail_on": "never"})["report"]
    named = {(c["device"], c["port"]) for s in report["suspects"] for c in s["components"]}
    assert ("leaf-p0-su01-r0", "Ethernet0") in named
    assert all(s["rule"].startswith("errors") for s in report["suspects"])
    assert report["seconds"] is not None and report["seconds"] > 0


def test_spec_documents_every_option() -> None:
    documented = yaml.safe_load(network_health.DOCUMENTATION)["options"]
    assert set(documented) == set(SPECS["network_health"])
    for name, spec in SPECS["network_health"].items():
        for key in ("type", "default", "choices", "elements", "required"):
            assert documented[name].get(key) == spec.get(key), (name, key)
