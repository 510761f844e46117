"""``hwaac verify`` (through hwaac.verify.cli): exit 0 all PASS/SKIP, 1 a FAIL/ERROR, 2 usage; -o writes the
report whole; every format from the recorded facts folders."""

from __future__ import annotations

import argparse
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hwaac.verify.cli import add_verify_parser, main
from tests.unit.verify.recordings import PLAN, RECORDED


def run(*argv: str) -> int:
    return main(list(argv))


def test_healthy_folder_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(str(RECORDED / "healthy"), "--plan", str(PLAN)) == 0
    assert "PASS: 156 PASS, 0 FAIL, 0 SKIP, 0 ERROR" in capsys.readouterr().out


@pytest.mark.parametrize("scenario", ["link_down", "spine_down", "wrong_egress"])
def test_a_fault_exits_1(scenario: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(str(RECORDED / scenario), "--plan", str(PLAN), "--format", "json") == 1
    assert json.loads(capsys.readouterr().out)["passed"] is False


def test_output_file_and_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "reports" / "verify.xml"
    assert run(str(RECORDED / "swapped_hosts"), "--plan", str(PLAN), "--format", "junit", "-o", str(out)) == 1
    assert ET.parse(out).getroot().get("failures") == "2"
    assert f"report in {out}" in capsys.readouterr().out
    assert [p.name for p in out.parent.iterdir()] == ["verify.xml"]  # no temporary file left


def test_checks_and_devices_limit_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        run(
            str(RECORDED / "link_down"),
            "--plan",
            str(PLAN),
            "--format",
            "json",
            "--checks",
            "VerifyEcmpRoutes,VerifyBgpSessions",
            "--devices",
            "leaf-p0-su02-r0",
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["checks"] == ["VerifyEcmpRoutes", "VerifyBgpSessions"]
    assert {r["check"] for r in doc["results"]} == {"VerifyEcmpRoutes", "VerifyBgpSessions"}
    assert all("leaf-p0-su02-r0" in r["devices"] for r in doc["results"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--checks", "VerifyNothing"], "--checks: unknown check(s) VerifyNothing"),
        (["--devices", "leaf-x"], "--devices: not in the plan: leaf-x"),
        (["--plan", "/nonexistent"], "--plan: /nonexistent: no plan.json"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    if "--plan" not in argv:
        argv = [*argv, "--plan", str(PLAN)]
    assert run(str(RECORDED / "healthy"), *argv) == 2
    assert message in capsys.readouterr().err


def test_facts_folder_needs_a_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(str(RECORDED / "healthy")) == 2
    assert "--plan DIR is required with a facts folder" in capsys.readouterr().err


def test_unknown_target_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HWAAC_LAB_STATE_DIR", str(tmp_path))
    assert run("lab:nolab", "--plan", str(PLAN)) == 2
    assert "lab:nolab: not a facts folder, and no such lab is up" in capsys.readouterr().err


def test_malformed_facts_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "facts"
    shutil.copytree(RECORDED / "healthy", folder)
    (folder / "spine-p0-01.json").write_text(
        '{"format": "hwaac-verify-facts/1", "device": "spine-p0-01", "outputs": {"x": {"argv": "vtysh"}}}'
    )
    assert run(str(folder), "--plan", str(PLAN)) == 2
    assert "spine-p0-01.json: outputs['x']: argv must be a list of strings" in capsys.readouterr().err


def test_save_facts_round_trip(tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    assert (
        run(
            str(RECORDED / "link_down"),
            "--plan",
            str(PLAN),
            "--save-facts",
            str(saved),
            "-o",
            str(tmp_path / "r.json"),
            "--format",
            "json",
        )
        == 1
    )
    assert run(str(saved), "--plan", str(PLAN), "--format", "json", "-o", str(tmp_path / "again.json")) == 1
    first, again = (json.loads((tmp_path / n).read_text()) for n in ("r.json", "again.json"))
    assert first["results"] == again["results"]


def test_list_checks(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("--list-checks") == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("VerifyDevicesAnswer")


def test_parser_plugs_into_a_subparsers_object() -> None:
    parser = argparse.ArgumentParser(prog="hwaac")
    add_verify_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["verify", "lab:demo", "--format", "markdown", "--checks", "A,B", "--checks", "C"])
    assert (args.target, args.format, args.checks) == ("lab:demo", "markdown", ["A,B", "C"])
