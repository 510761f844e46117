"""The Ansible path: aiinfra.hwaac.fabric_facts (action plugin + its real host module) and fabric_verify.

Only the transport is replaced, as in tests/unit/ansible/test_lustre_health_action.py: ``_execute_module`` runs the
module as a local Python process. The tools it runs (vtysh, lldpcli, ip, ping) are a stub on PATH that replays the
recorded outputs of one device of one scenario (tests/fixtures/verify/recorded), so the verdicts are the
recordings'.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any
from unittest.mock import MagicMock

import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.aiinfra.hwaac.plugins.action.fabric_facts import ActionModule as FactsAction
from ansible_collections.aiinfra.hwaac.plugins.action.fabric_verify import ActionModule as VerifyAction
from ansible_collections.aiinfra.hwaac.plugins.modules.fabric_facts import refused
from tests.unit.ansible.module_run import run_module
from tests.unit.verify.recordings import PLAN, RECORDED

REPO = Path(__file__).resolve().parents[3]
TOOLS = ("vtysh", "lldpcli", "ip", "ping")
STUB = """#!/bin/sh
# replays a recorded output: files named by the sha1 of tool and arguments, each followed by a unit separator
key=$(printf '%s\\037' "$(basename "$0")" "$@" | sha1sum | cut -c1-40)
d="$HWAAC_STUB/$HWAAC_STUB_DEVICE"
[ -f "$d/$key.rc" ] || { echo "stub: no recording of $(basename "$0") $*" >&2; exit 99; }
cat "$d/$key.out"
cat "$d/$key.err" >&2
exit "$(cat "$d/$key.rc")"
"""


def stub_dir(tmp: Path, scenario: str) -> Path:
    """The stub tools and, per device, the scenario's recorded outputs as files keyed by the command's sha1."""
    d = tmp / f"stub-{scenario}"
    d.mkdir()
    for tool in TOOLS:
        (d / tool).write_text(STUB)
        (d / tool).chmod(0o755)
    for f in (RECORDED / scenario).glob("*.json"):
        dev = d / "out" / f.stem
        dev.mkdir(parents=True)
        for out in json.loads(f.read_text())["outputs"].values():
            key = hashlib.sha1("".join(a + "\x1f" for a in out["argv"]).encode()).hexdigest()
            (dev / f"{key}.out").write_text(out["stdout"])
            (dev / f"{key}.err").write_text(out["stderr"])
            (dev / f"{key}.rc").write_text(str(out["rc"]))
    return d


def action(
    cls: type, args: dict[str, Any], tmp: Path, stub: Path | None = None, device: str = "", check_mode: bool = False
) -> dict[str, Any]:
    task = MagicMock()
    task.args = args
    task.check_mode = check_mode
    task.async_val = 0
    act = cls(
        task=task,
        connection=MagicMock(),
        play_context=MagicMock(check_mode=check_mode),
        loader=MagicMock(),
        templar=MagicMock(template=lambda value: value),
        shared_loader_obj=None,
    )
    calls: list[dict[str, Any]] = []

    def execute_module(module_name: str, module_args: dict[str, Any], task_vars: Any = None) -> dict:
        assert module_name == "aiinfra.hwaac.fabric_facts"
        calls.append(module_args)
        env = {
            **os.environ,
            "PATH": f"{stub}{os.pathsep}{os.environ['PATH']}",
            "HWAAC_STUB_DEVICE": device,
            "HWAAC_STUB": str(stub / "out") if stub else "",
            "PYTHONPATH": str(REPO),
        }
        return run_module("fabric_facts", module_args, tmp / f"args-{device}-{len(calls)}.json", env, check=check_mode)

    act._execute_module = execute_module  # type: ignore[method-assign]
    result = act.run(task_vars={"inventory_hostname": device})
    result["_module_calls"] = calls
    return result


@pytest.fixture(scope="module")
def gathered(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """scenario -> the facts folder the action plugin wrote for every device of it (gathered once)."""
    done: dict[str, Path] = {}

    def get(scenario: str) -> Path:
        if scenario not in done:
            tmp = tmp_path_factory.mktemp(scenario)
            stub, facts = stub_dir(tmp, scenario), tmp / "facts"
            for f in sorted((RECORDED / scenario).glob("*.json")):
                res = action(FactsAction, {"plan": str(PLAN), "dest": str(facts)}, tmp, stub, f.stem)
                assert not res.get("failed"), res
                assert res["failed_commands"] == {}
            done[scenario] = facts
        return done[scenario]

    return get


def test_gather_writes_the_facts_the_catalog_reads(tmp_path: Path) -> None:
    facts = tmp_path / "facts"
    res = action(
        FactsAction, {"plan": str(PLAN), "dest": str(facts)}, tmp_path, stub_dir(tmp_path, "healthy"), "gpu-su01-h01"
    )
    # links, LLDP, and per rail (2) a route lookup, a ping and a DF ping
    assert (res["commands"], res["changed"], res["file"]) == (8, False, str(facts / "gpu-su01-h01.json"))
    argvs = [c["argv"] for c in res["_module_calls"][0]["commands"]]
    assert ["ip", "-j", "route", "get", "172.16.0.9", "from", "172.16.0.1"] in argvs
    assert [
        "ping",
        "-n",
        "-c",
        "2",
        "-i",
        "0.2",
        "-W",
        "1",
        "-M",
        "do",
        "-s",
        "8972",
        "-I",
        "172.16.0.1",
        "172.16.0.9",
    ] in argvs
    written = json.loads((facts / "gpu-su01-h01.json").read_text())
    recorded = json.loads((RECORDED / "healthy" / "gpu-su01-h01.json").read_text())
    assert written == recorded


@pytest.mark.parametrize(
    ("scenario", "passed", "faults"),
    [
        ("healthy", True, []),
        ("spine_down", False, ["spine-p0-02"]),
    ],
)
def test_gather_then_judge(scenario: str, passed: bool, faults: list[str], gathered: Any, tmp_path: Path) -> None:
    facts, reports = gathered(scenario), tmp_path / "reports"
    args = {"plan": str(PLAN), "facts": str(facts), "report_dir": str(reports)}
    res = action(VerifyAction, args, tmp_path)
    assert (res["passed"], bool(res.get("failed"))) == (passed, not passed)
    assert [f["fault"] for f in res["faults"]] == faults
    assert res["changed"] is True and sorted(Path(f).name for f in res["files"]) == [
        "verify.json",
        "verify.md",
        "verify.xml",
    ]
    assert ET.parse(reports / "verify.xml").getroot().get("tests") == "156"
    again = action(VerifyAction, args, tmp_path)
    assert again["changed"] is False  # same verdicts, same files (timings aside)


def test_judge_fail_on_fail_false_reports_without_failing(gathered: Any, tmp_path: Path) -> None:
    facts = gathered("link_down")
    res = action(VerifyAction, {"plan": str(PLAN), "facts": str(facts), "fail_on_fail": False}, tmp_path)
    assert res["passed"] is False and "failed" not in res
    assert res["msg"].startswith(
        "FAIL: 151 PASS, 3 FAIL, 2 SKIP, 0 ERROR; faults: L0000000 (leaf-p0-su01-r0 "
        "Ethernet8 <-> spine-p0-01 Ethernet0: VerifyInterfaceState, VerifyLldpNeighbors, "
        "VerifyBgpSessions)"
    )


def test_a_device_never_gathered_fails_as_down(gathered: Any, tmp_path: Path) -> None:
    facts = tmp_path / "facts"
    shutil.copytree(gathered("healthy"), facts)
    (facts / "gpu-su02-h02.json").unlink()  # the play could not reach it
    devices = [f.stem for f in (RECORDED / "healthy").glob("*.json")]
    res = action(VerifyAction, {"plan": str(PLAN), "facts": str(facts), "devices": devices}, tmp_path)
    assert [f["fault"] for f in res["faults"]] == ["gpu-su02-h02"]
    assert res["failures"][0]["actual"].startswith("unreachable: no output gathered from it")


def test_unknown_device_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AnsibleActionFail, match="device 'leaf-x' is not in the plan"):
        action(FactsAction, {"plan": str(PLAN)}, tmp_path, None, "leaf-x")


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["vtysh", "-c", "show bgp summary json"], None),
        (["vtysh", "-c", "configure terminal"], "vtysh runs only -c 'show ...'"),
        (["vtysh", "-c", "show ip route json", "-b"], "vtysh runs only -c 'show ...'"),
        (["lldpcli", "-f", "json0", "show", "neighbors"], None),
        (["lldpcli", "update"], "lldpcli runs only show"),
        (["ip", "-j", "link", "show"], None),
        (["ip", "-j", "route", "get", "10.0.0.1", "from", "10.0.0.2"], None),
        (["ip", "link", "set", "rail0", "down"], "ip runs only -j link show and -j route get"),
        (["rm", "-rf", "/"], "rm is not a tool this module runs (vtysh, lldpcli, ip, ping)"),
    ],
)
def test_module_runs_only_read_only_tools(argv: list[str], why: str | None) -> None:
    assert refused(argv) == why


def test_module_refuses_before_running_anything(tmp_path: Path) -> None:
    res = run_module(
        "fabric_facts",
        {
            "plan": str(PLAN),
            "commands": [{"argv": ["ip", "-j", "link", "show"]}, {"argv": ["ip", "link", "del", "lo"]}],
        },
        tmp_path / "a.json",
        {**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert res["failed"] and res["msg"] == (
        "aiinfra.hwaac.fabric_facts: refused ip link del lo: ip runs only -j link show and -j route get"
    )


def test_module_reports_a_missing_tool_as_an_error_output(tmp_path: Path) -> None:
    res = run_module(
        "fabric_facts",
        {"plan": str(PLAN), "commands": [{"argv": ["ping", "-c", "1", "127.0.0.1"]}]},
        tmp_path / "a.json",
        {**os.environ, "PYTHONPATH": str(REPO), "PATH": str(tmp_path)},
    )
    out = res["outputs"]["ping -c 1 127.0.0.1"]
    assert (out["rc"], out["error"]) == (None, "ping: not found on PATH")
