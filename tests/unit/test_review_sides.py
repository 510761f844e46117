"""The two sides ``hwaac review`` compares: the intent read as hwaac reads YAML (1.2), a file that cannot be read
(an intent error at its line), git revisions, and a base that does not validate (reported, not fatal)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hwaac.cli import main
from hwaac.errors import IntentError
from hwaac.review import Side, build_review, from_file, from_git
from tests.unit.review_changes import DEMO, write_change


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


# scalars where YAML 1.1 (PyYAML's safe_load) and hwaac's YAML 1.2 core schema disagree
YAML_1_2 = [("010", 10), ("0o10", 8), ("on", "on"), ("no", "no"), ("1_000", "1_000"), ("1:30", "1:30")]


@pytest.mark.parametrize(("text", "value"), YAML_1_2)
def test_the_intent_change_reads_yaml_as_hwaac_does(text: str, value: Any) -> None:
    assert Side("fabric.yml", f"x: {text}\n").raw() == {"x": value}


def test_a_value_yaml_1_1_reads_otherwise_shows_as_hwaac_reads_it(tmp_path: Path) -> None:
    """040 is forty to hwaac (YAML 1.2) and 32 to YAML 1.1: the change from 32 is a change, to 40."""
    old, new = write_change(tmp_path, "osc.max_rpcs_in_flight: 32", "osc.max_rpcs_in_flight: 040")
    review = build_review(from_file(old), from_file(new))
    assert review["intent"] == [
        {"path": "storage.filesystems[0].tunables.osc.max_rpcs_in_flight", "old": 32, "new": 40}
    ]


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: p.mkdir(), "is a folder"),
        (lambda p: p.write_bytes(b"fabric:\n  name: d\xe9mo\n"), "not UTF-8 text"),
        (lambda p: p.write_text("fabric:\n  name: \x1b\n"), "control character U+001B"),
    ],
    ids=["folder", "latin-1", "escape"],
)
def test_an_intent_that_cannot_be_read_is_an_intent_error_at_its_line(make: Any, said: str, tmp_path: Path) -> None:
    make(tmp_path / "fabric.yml")
    side = from_file(tmp_path)
    for read in (side.raw, lambda: side.intent(None)):
        with pytest.raises(IntentError) as exc:
            read()
        (issue,) = exc.value.issues
        assert said in issue.message and issue.file == str(tmp_path / "fabric.yml")
        assert issue.line == (0 if said == "is a folder" else 2)


def test_git_revisions(tmp_path: Path) -> None:
    (tmp_path / "inventory/demo").mkdir(parents=True)
    fabric = tmp_path / "inventory/demo/fabric.yml"
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "README").write_text("x")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "empty")
    fabric.write_text(DEMO.read_text())
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "demo")
    assert from_git(fabric.parent, "HEAD~1").text is None  # the fabric is new in that change
    assert from_git(fabric.parent, "main").text == DEMO.read_text()
    added = build_review(from_git(fabric.parent, "HEAD~1"), from_file(fabric.parent))
    assert {d["status"] for d in added["devices"].values()} == {"added"} and len(added["devices"]) == 88
    with pytest.raises(Exception, match="revision 'nope' is not a commit"):
        from_git(fabric.parent, "nope")
    fabric.write_bytes(DEMO.read_bytes().replace(b"name: demo\n", b"name: d\xe9mo\n"))
    git(tmp_path, "commit", "-qam", "latin-1")
    with pytest.raises(IntentError, match=r"main:inventory/demo/fabric.yml:5: <root>: not UTF-8 text \(byte 0xe9"):
        from_git(fabric.parent, "main").raw()


# a base the pull request fixes: its broken text, the issue's line and text, the intent change the report shows
BROKEN_BASES = {
    "schema": (
        "su_count: 2",
        "su_count: zwei",
        11,
        "fabric.su_count: invalid value (got 'zwei')",
        [{"path": "fabric.su_count", "old": "zwei", "new": 2}],
    ),
    "rule": (
        "su_count: 2",
        "su_count: 5",
        12,
        "fabric.su_capacity: smaller than su_count",
        [{"path": "fabric.su_count", "old": 5, "new": 2}],
    ),
    "not-yaml": ("fabric:\n", "fabric: [\n", 6, "not valid YAML", None),
    "not-utf-8": ("name: demo\n", "name: d\xe9mo\n", 5, "not UTF-8 text", None),
}


@pytest.mark.parametrize("name", list(BROKEN_BASES))
def test_a_base_that_does_not_validate_is_reported_not_fatal(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pull request that fixes the target branch's broken intent is reviewed: exit 0, the base's issues at
    their lines at the top, and nothing that needs the base's plan (plan diff, devices, rollout, gates)."""
    broken, bad, line, said, intent = BROKEN_BASES[name]
    fabric = tmp_path / "inventory/demo/fabric.yml"
    fabric.parent.mkdir(parents=True)
    fabric.write_bytes(DEMO.read_bytes().replace(broken.encode(), bad.encode("latin-1"), 1))
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "broken")
    fabric.write_text(DEMO.read_text())
    out = tmp_path / "out"
    assert main(["review", str(fabric.parent), "--base", "main", "-o", str(out), "--no-netbox"]) == 0
    err = capsys.readouterr().err
    where = f"main:inventory/demo/fabric.yml:{line}: "
    assert "the base main:inventory/demo/fabric.yml does not validate" in err and where in err
    review = json.loads((out / "review.json").read_text())
    assert review["verdict"] == "base-invalid" and review["refusals"] == []
    first = review["base_issues"][0]
    assert (first["file"], first["line"]) == ("main:inventory/demo/fabric.yml", line) and said in first["text"]
    assert [r["code"] for r in review["risks"]] == ["base-invalid"]
    assert review["intent"] == intent
    assert all(review[k] is None for k in ("plan", "devices", "blast_radius", "rollout", "gates"))
    md = (out / "review.md").read_text()
    head = md.partition("### ")[0]
    assert "the base does not validate" in head and where in head and said in head
    sections = [s.split("\n", 1)[0] for s in md.split("### ")[1:]]
    assert sections == ["Risk flags", "Intent change", "NetBox (sync dry run)", "Terraform plan"]
    assert ("Not compared: the base cannot be read as YAML." in md) == (intent is None)


def test_a_new_intent_that_does_not_validate_still_fails_over_a_broken_base(tmp_path: Path) -> None:
    old, new = write_change(tmp_path, "su_count: 2", "su_count: zwei")
    (old / "fabric.yml").write_text(DEMO.read_text().replace("su_count: 2", "su_count: drei"))
    assert main(["review", str(new), "--old", str(old), "-o", str(tmp_path / "out"), "--no-netbox"]) == 1
    assert not (tmp_path / "out").exists()
