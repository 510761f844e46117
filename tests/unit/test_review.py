"""``hwaac review`` on the command line without NetBox or Terraform: exit codes, the files it writes (whole or not
at all), and what it says when NetBox, the output folder, the fabric or a saved Terraform plan cannot be used. The
report's content: test_review_report.py; the two sides it compares: test_review_sides.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hwaac.cli import main
from tests.unit.review_changes import DEMO, write_change


def test_a_netbox_that_cannot_be_reached_fails_the_review(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = write_change(tmp_path, "min_threshold_bytes: 150000", "min_threshold_bytes: 200000")
    monkeypatch.setenv("NETBOX_URL", "http://127.0.0.1:9")  # discard: nothing listens
    monkeypatch.setenv("NETBOX_TOKEN", "0123456789abcdef0123456789abcdef01234567")
    assert main(["review", str(new), "--old", str(old), "-o", str(tmp_path / "out")]) == 2
    assert "the NetBox dry run could not run" in capsys.readouterr().err
    review = json.loads((tmp_path / "out/review.json").read_text())
    assert review["netbox"]["status"] == "error"
    assert "**Could not run**" in (tmp_path / "out/review.md").read_text()
    assert "0123456789abcdef" not in (tmp_path / "out/review.md").read_text() + json.dumps(review)


def test_a_netbox_pool_that_cannot_be_resolved_writes_no_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without NetBox the intent's NetBox pool has no prefix, so there is no plan to review: exit 2, saying that
    no report was written (unlike an unreachable NetBox for the dry run alone, which the report shows)."""
    old, new = write_change(tmp_path, "leaf_spine: 10.1.0.0/20", "leaf_spine: {netbox_role: leaf-spine}")
    monkeypatch.setenv("NETBOX_URL", "http://127.0.0.1:9")  # discard: nothing listens
    monkeypatch.setenv("NETBOX_TOKEN", "0123456789abcdef0123456789abcdef01234567")
    assert main(["review", str(new), "--old", str(old), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert (
        "hwaac review: the intent's NetBox pools could not be resolved: NetBox at http://127.0.0.1:9 is unreachable"
        in err
        and "no report was written" in err
    )
    assert "0123456789abcdef" not in err and not (tmp_path / "out").exists()
    monkeypatch.delenv("NETBOX_TOKEN")
    assert main(["review", str(new), "--old", str(old), "-o", str(tmp_path / "out"), "--netbox"]) == 2
    assert "hwaac review: --netbox: NETBOX_TOKEN is not set" in capsys.readouterr().err


def test_cli_exit_codes_and_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = write_change(tmp_path, "leaf: 10.0.0.0/24", "leaf: 10.0.2.0/24")
    assert main(["review", str(new), "--old", str(old), "-o", str(tmp_path / "out"), "--no-netbox"]) == 3
    assert "refused: renumber of 16 item(s) without --allow-renumber" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["review.json", "review.md"]
    assert (
        main(["review", str(new), "--old", str(old), "-o", str(tmp_path / "out"), "--no-netbox", "--allow-renumber"])
        == 0
    )
    assert json.loads((tmp_path / "out/review.json").read_text())["verdict"] == "ok"
    (tmp_path / "file").write_text("x")
    assert main(["review", str(new), "--old", str(old), "-o", str(tmp_path / "file"), "--no-netbox"]) == 2
    assert (
        main(["review", str(new), "--old", str(old), "-o", str(tmp_path / "o2"), "--no-netbox", "--batch-size", "lots"])
        == 2
    )
    assert "--batch-size" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "fabric.yml").write_text(DEMO.read_text().replace("su_count: 2", "su_count: zwei"))
    assert main(["review", str(bad), "--old", str(old), "-o", str(tmp_path / "o3"), "--no-netbox"]) == 1
    assert not (tmp_path / "o2").exists() and not (tmp_path / "o3").exists()
    with pytest.raises(SystemExit) as exc:
        main(["review", str(new), "--old", str(old), "-o", str(tmp_path / "o4"), "--many-sus", "-5"])
    assert exc.value.code == 2 and "a number of SUs, 0 or more" in capsys.readouterr().err


# -o that cannot take the report -> what the message says (exit 2, no traceback, nothing left behind)
BAD_OUTPUTS = {
    "a file": (lambda t: t / "file", "exists and is not a folder"),
    "under a file": (lambda t: t / "file/sub", "file is not a folder"),
    "cannot be made": (lambda t: Path("/proc/hwaac-review-test"), "cannot write the report (No such file"),
}


@pytest.mark.parametrize("name", list(BAD_OUTPUTS))
def test_an_output_folder_that_cannot_take_the_report_exits_2(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where, said = BAD_OUTPUTS[name]
    old, new = write_change(tmp_path, "action: drop", "action: forward")
    (tmp_path / "file").write_text("x")
    assert main(["review", str(new), "--old", str(old), "-o", str(where(tmp_path)), "--no-netbox"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"hwaac review: -o {where(tmp_path)}: ") and said in err and "Traceback" not in err
    assert (tmp_path / "file").read_text() == "x" and not list(tmp_path.rglob("*review.*"))


def test_the_report_is_written_whole_or_not_at_all(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The temporary files have names of their own (an old one in the way does not matter), and a write that
    fails leaves none of them behind."""
    old, new = write_change(tmp_path, "action: drop", "action: forward")
    out = tmp_path / "out"
    (out / ".review.json.tmp").mkdir(parents=True)
    (out / ".review.md.tmp").mkdir()
    assert main(["review", str(new), "--old", str(old), "-o", str(out), "--no-netbox"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [".review.json.tmp", ".review.md.tmp", "review.json", "review.md"]
    for p in out.iterdir():
        p.unlink() if p.is_file() else p.rmdir()
    (out / "review.md").mkdir()  # the rename of review.md fails
    (out / "review.md/keep").write_text("x")
    capsys.readouterr()
    assert main(["review", str(new), "--old", str(old), "-o", str(out), "--no-netbox"]) == 2
    assert f"-o {out}: cannot write the report (" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["review.json", "review.md"]  # no temporary file left
    assert (out / "review.md/keep").read_text() == "x"


def test_an_unreadable_fabric_is_an_intent_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = write_change(tmp_path, "action: drop", "action: forward")
    real_open = Path.open

    def refuse(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self == new / "fabric.yml":  # as root, chmod 000 would not stop the read
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)
    assert main(["review", str(new), "--old", str(old), "-o", str(tmp_path / "out"), "--no-netbox"]) == 1
    err = capsys.readouterr().err
    assert f"{new / 'fabric.yml'}: <root>: cannot read the file (Permission denied)" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("stdout", "said"),
    [
        ("Error: not a plan\n", "terraform show -json printed no JSON"),
        ('{"format_version": "1.0", "values": {}}', "this is Terraform state, not a plan"),
    ],
)
def test_a_saved_plan_terraform_cannot_show_is_a_usage_error(
    stdout: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = write_change(tmp_path, "action: drop", "action: forward")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin/terraform").write_text(f"#!/bin/sh\nprintf '%s' '{stdout}'\n")
    (tmp_path / "bin/terraform").chmod(0o755)
    (tmp_path / "tfplan").write_bytes(b"PK\x03\x04 a saved plan is a zip file")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    assert (
        main(
            [
                "review",
                str(new),
                "--old",
                str(old),
                "-o",
                str(tmp_path / "out"),
                "--no-netbox",
                "--terraform-plan",
                str(tmp_path / "tfplan"),
            ]
        )
        == 2
    )
    assert f"--terraform-plan: {tmp_path / 'tfplan'}: {said}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
