"""``hwaac review``'s report without NetBox or Terraform: batches as Ansible makes them, the Terraform plan summary,
the risk flags, rollout and gates on sample changes of the demo, and the comment's size at a thousand devices."""

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
from hwaac.review import Options, build_review, from_file, render_markdown
from hwaac.review.markdown import MAX_CHARS
from hwaac.review.terraform import SENSITIVE, UNKNOWN, TerraformPlanError, read_plan_json, summarize
from tests.unit.review_changes import REPO, write_change


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
