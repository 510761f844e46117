"""``hwaac review`` without NetBox or Terraform: batches as Ansible makes them, the Terraform plan summary, the
risk flags on sample changes of the demo, git revisions, and the comment's size at a thousand devices."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from hwaac.cli import main
from hwaac.errors import IntentError
from hwaac.review import Options, Side, build_review, from_file, from_git, render_markdown
from hwaac.review.markdown import MAX_CHARS
from hwaac.review.terraform import SENSITIVE, UNKNOWN, TerraformPlanError, read_plan_json, summarize

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "inventory/demo/fabric.yml"


def test_batches_are_the_ones_ansible_runs(tmp_path: Path) -> None:
    """The rollout's batches of the demo's switches, against what ansible-playbook itself runs as batches
    (``ansible_play_batch``) over the inventory plugin aiinfra.hwaac.fabric, with fabric_deploy's serial."""
    old, new = write_change(tmp_path, "min_threshold_bytes: 150000", "min_threshold_bytes: 200000")
    review = build_review(from_file(old), from_file(new), options=Options(batch_size="30%"))
    (deploy,) = review["rollout"]
    assert deploy["playbook"] == "fabric_deploy" and deploy["batch_size"] == 7 and deploy["batches"] == 4
    assert main(["plan", str(new), "-o", str(tmp_path / "plan")]) == 0
    (tmp_path / "fabric.hwaac.yml").write_text(
        yaml.safe_dump({"plugin": "aiinfra.hwaac.fabric", "source": "plan", "plan_file": str(tmp_path / "plan")})
    )
    (tmp_path / "batches.yml").write_text(
        yaml.safe_dump(
            [
                {
                    "name": "Batches",
                    "hosts": "switches",
                    "gather_facts": False,
                    "serial": "30%",
                    "tasks": [
                        {
                            "name": "Batch",
                            "ansible.builtin.debug": {"msg": "BATCH {{ ansible_play_batch | join(',') }}"},
                            "run_once": True,
                        }
                    ],
                }
            ]
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "NETBOX_"))}
    r = subprocess.run(
        [
            str(Path(sys.executable).parent / "ansible-playbook"),
            "-i",
            str(tmp_path / "fabric.hwaac.yml"),
            str(tmp_path / "batches.yml"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    ran = [
        line.split("BATCH ", 1)[1].rstrip('"').split(",") for line in r.stdout.splitlines() if '"msg": "BATCH ' in line
    ]
    assert len(ran) == deploy["batches"]
    assert [w["changed"] for w in deploy["with_changes"]] == ran  # every switch changes: each batch in full


def tf_change(actions: list[str], before: Any, after: Any, **extra: Any) -> dict[str, Any]:
    return {
        "address": "hwaac_fabric_plane.plane0",
        "type": "hwaac_fabric_plane",
        "change": {"actions": actions, "before": before, "after": after, **extra},
    }


@pytest.mark.parametrize(
    ("change", "action", "attributes"),
    [
        (tf_change(["no-op"], {"a": 1}, {"a": 1}), "no-op", None),
        (tf_change(["update"], {"a": 1, "b": 2}, {"a": 1, "b": 3}), "update", {"b": ["2", "3"]}),
        (
            tf_change(["delete", "create"], {"id": "x"}, {"id": None}, after_unknown={"id": True}),
            "replace",
            {"id": ["x", UNKNOWN]},
        ),
        (
            tf_change(["create"], None, {"token": "s3cret", "n": 1}, after_sensitive={"token": True}),
            "create",
            {"n": ["(none)", "1"], "token": ["(none)", SENSITIVE]},
        ),
        (
            tf_change(
                ["update"], {"t": "old"}, {"t": "new"}, before_sensitive={"t": True}, after_sensitive={"t": True}
            ),
            "update",
            {"t": [SENSITIVE, SENSITIVE]},
        ),
    ],
)
def test_terraform_summary(change: dict[str, Any], action: str, attributes: dict[str, list[str]] | None) -> None:
    got = summarize({"format_version": "1.2", "resource_changes": [change]})
    assert got["counts"] == {action: 1}
    if attributes is None:
        assert got["resources"] == []
    else:
        assert got["resources"] == [
            {"address": "hwaac_fabric_plane.plane0", "action": action, "attributes": attributes}
        ]
    assert "s3cret" not in json.dumps(got)


def write_change(tmp_path: Path, old: str, new: str) -> tuple[Path, Path]:
    base = DEMO.read_text()
    assert base.count(old) == 1
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    (tmp_path / "old/fabric.yml").write_text(base)
    (tmp_path / "new/fabric.yml").write_text(base.replace(old, new))
    return tmp_path / "old", tmp_path / "new"


# (old text, new text, risk codes, devices changed, devices added, refused)
CASES = {
    "su-added": ("su_count: 2", "su_count: 3", ["spine-change"], 8, 40, False),
    "qos-threshold": (
        "min_threshold_bytes: 150000",
        "min_threshold_bytes: 200000",
        ["spine-change", "qos-change", "many-sus"],
        24,
        0,
        False,
    ),
    "pfc-watchdog": ("action: drop", "action: forward", ["spine-change", "qos-change", "many-sus"], 24, 0, False),
    # 16 leaves and the 64 nodes, whose rail tables route the leaves' loopback pool
    "renumber": ("leaf: 10.0.0.0/24", "leaf: 10.0.2.0/24", ["renumbering", "many-sus"], 80, 0, True),
    "shrink": ("su_count: 2", "su_count: 1", ["removal", "spine-change"], 8, 0, True),
    "comment-only": ("# The embedded demo fabric", "# The demo fabric", [], 0, 0, False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_review_of_sample_changes(name: str, tmp_path: Path) -> None:
    old_text, new_text, risks, changed, added, refused = CASES[name]
    old, new = write_change(tmp_path, old_text, new_text)
    review = build_review(from_file(old), from_file(new))
    statuses = [d["status"] for d in review["devices"].values()]
    assert [r["code"] for r in review["risks"]] == risks
    assert statuses.count("changed") == changed
    assert statuses.count("added") == added
    assert (review["verdict"] == "refused") == refused
    assert review["netbox"] == {"status": "not run"} and review["terraform"] == {"status": "not given"}
    md = render_markdown(review)
    assert ("Refused" in md) == refused
    if not changed and not added:
        assert "No rendered file changes." in md and not review["rollout"] and not review["gates"]


def test_rollout_picks_the_playbooks_the_files_need(tmp_path: Path) -> None:
    """A Lustre client change reaches lustre-client.json only: lustre_clients runs, hosts_network does not."""
    old, new = write_change(tmp_path, 'client_version: "2.15.5"', 'client_version: "2.15.6"')
    review = build_review(from_file(old), from_file(new))
    assert [ro["playbook"] for ro in review["rollout"]] == ["lustre_clients"]
    assert {f for d in review["devices"].values() for f in d["files"]} == {"lustre-client.json"}


HOST_CHECKS = {"VerifyRailPaths", "VerifyPathMtu"}  # read the GPU nodes only: hosts_network gates on none


@pytest.mark.parametrize(
    ("old_text", "new_text", "pushed"),
    [
        ("action: drop", "action: forward", 24),  # the PFC watchdog: every switch's config_db
        ("host_mtu: 9000", "host_mtu: 8900", 0),  # the nodes' netplan only
    ],
    ids=["switches", "nodes"],
)
def test_the_report_says_which_checks_gate_the_rollout(
    old_text: str, new_text: str, pushed: int, tmp_path: Path
) -> None:
    """As the role's defaults have it, only the BGP gate stops fabric_deploy; the verify catalog gates a switch
    only with switch_config_verify_gate, and the GPU nodes' checks gate nothing."""
    defaults = yaml.safe_load((REPO / "roles/switch_config/defaults/main.yml").read_text())
    assert defaults["switch_config_bgp_gate"] == "changed" and defaults["switch_config_verify_gate"] is False
    old, new = write_change(tmp_path, old_text, new_text)
    review = build_review(from_file(old), from_file(new))
    assert len([d for d in review["devices"].values() if d["kind"] == "switch"]) == pushed
    gates = review["gates"]
    assert [g["check"] for g in gates if g["gate"] == "default"] == (["bgp_sessions"] if pushed else [])
    opt_in = [g for g in gates if g["gate"] == "switch_config_verify_gate"]
    assert bool(opt_in) == bool(pushed) and all(0 < g["gate_devices"] <= pushed for g in opt_in)
    assert HOST_CHECKS.isdisjoint(g["check"] for g in gates if g["gate"] is not None)
    assert HOST_CHECKS.issubset(g["check"] for g in gates) == (not pushed)  # the nodes' checks, after the rollout
    md = render_markdown(review)
    assert "Each batch stops" not in md
    section = md.split("### Gates and checks", 1)[1].split("\n### ", 1)[0]
    paragraphs = {p.split("**")[1]: p for p in section.split("\n\n") if p.startswith("**")}
    if pushed:
        table = section.split("**Gates the rollout by default**", 1)[1].split("**Gates only with", 1)[0]
        assert [line.split("`")[1] for line in table.splitlines() if line.startswith("| `")] == ["bgp_sessions"]
        listed = paragraphs["Gates only with `-e switch_config_verify_gate=true`"]
        assert all(f"`{g['check']}` ({g['gate_devices']})" in listed for g in opt_in)
        assert not any(f"`{c}`" in listed for c in HOST_CHECKS)
    else:
        assert "No gate" in paragraphs and "switch_config_verify_gate" not in section


@pytest.mark.parametrize(
    ("doc", "error"),
    [
        ({"format_version": "1.0", "values": {"root_module": {}}}, "this is Terraform state, not a plan"),
        ({"format_version": "1.2", "resource_changes": "x"}, "resource_changes must be a list"),
        ({"format_version": "1.2", "resource_changes": [{"address": "a"}]}, "resource_changes must be a list"),
        ({"resource_changes": []}, "no format_version"),
    ],
)
def test_terraform_plan_refused(doc: dict[str, Any], error: str, tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(doc))
    with pytest.raises(TerraformPlanError, match=error):
        read_plan_json(tmp_path / "plan.json")


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


def test_comment_fits_at_a_thousand_devices() -> None:
    """1,200 devices each with its own change, thousands of plan, NetBox and refusal lines, a hundred Terraform
    resources: the comment keeps every summary, cuts the folded lists and stops under the size GitHub accepts,
    pointing at review.json for the rest."""
    devices = {
        f"leaf-{i:04d}": {
            "kind": "switch",
            "status": "changed",
            "files": {},
            "tables": {"PORT": {"added": [], "removed": [], "changed": {f"Ethernet{i}": ["mtu"]}}},
        }
        for i in range(1200)
    }
    review = {
        "fabric": "big",
        "base": "main",
        "head": "HEAD",
        "verdict": "refused",
        "refusals": [
            {
                "kind": "renumber",
                "flag": "--allow-renumber",
                "why": "it moves allocations",
                "items": [f"switches s{i}: asn {i} -> {i + 1}" for i in range(3000)],
            }
        ],
        "intent": [{"path": f"x.y{i}", "old": i, "new": i + 1} for i in range(300)],
        "plan": {
            s: {
                "added": [f"{s}-new-{i}" for i in range(3000)],
                "removed": [],
                "changed": {f"{s}-{i}": {"asn": [i, i + 1]} for i in range(3000)},
            }
            for s in ("switches", "nodes", "links")
        }
        | {"storage": {}, "renumbered": [], "removals": [], "affected": []},
        "netbox": {
            "status": "changes",
            "counts": {"devices": {"create": 3000, "update": 0, "delete": 0}},
            "lines": [f"  + device new-{i}" for i in range(3000)],
        },
        "terraform": {
            "status": "present",
            "counts": {"update": 100},
            "drift": [],
            "errored": False,
            "resources": [
                {
                    "address": f"hwaac_fabric_plane.p{i}",
                    "action": "update",
                    "attributes": {f"a{j}": ["x" * 70, "y" * 70] for j in range(200)},
                }
                for i in range(100)
            ],
        },
        "devices": devices,
        "documents": {},
        "risks": [],
        "gates": [],
        "rollout": [],
        "blast_radius": {
            "switches": {"leaf": list(devices)},
            "gpu_nodes": [],
            "appliances": [],
            "cables": {"added": 0, "changed": 0, "removed": 0},
            "links_on_pushed_switches": 0,
            "sus": [],
            "su_count": 0,
        },
    }
    md = render_markdown(review)
    assert len(md) <= MAX_CHARS
    assert "| switches whose config changes | 1200 leaf |" in md and "| `PORT` | 1200 |" in md
    assert "<summary>300 fields changed</summary>" in md
    assert "**Refused: renumber of 3000 item(s).**" in md and "| devices | 3000 | 0 | 0 |" in md
    assert "100 to update." in md and "| switches | 3000 | 3000 | 0 |" in md
    kept = md.count("<summary>switch <code>leaf-")
    assert 0 < kept < 1200
    assert f"_{1200 - kept} more device(s) with changes are in `review.json`" in md


def test_options_default_to_the_playbooks_serial() -> None:
    assert Options().batch_size == "25%"
