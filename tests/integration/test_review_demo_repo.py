"""``hwaac review`` on the demo's repository with three sample changes, against a real NetBox holding the demo
and a real Terraform plan of the change (provider aiinfra/hwaac from its mirror).

Each section of the report is checked against what the tools say on their own: ``hwaac plan`` of both sides and
their diff, ``hwaac netbox sync --dry-run`` of the head, and ``terraform show -json`` of the saved plan. The
renumbering attempt is refused by the review (exit 3) as by ``plan --against`` and by Terraform.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from terraform_run import PROVIDER_BLOCK, Terraform, terraform_dir

from hwaac.devnetbox.instances import Instance
from hwaac.plan.diff import diff_plans
from hwaac.plan.serialize import read_plan

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("review")]

REPO = Path(__file__).resolve().parents[2]
INTENT = REPO / "inventory/demo/fabric.yml"
HWAAC = [sys.executable, "-m", "hwaac.cli"]
GIT = ["git", "-c", "user.name=hwaac test", "-c", "user.email=test@example.invalid"]
MAIN_TF = (
    PROVIDER_BLOCK
    + """
resource "hwaac_fabric_plane" "plane0" {
  intent_file = "fabric.yml"
  plane       = 0
}
"""
)

# name: (text in the base fabric.yml, its replacement, what the review must say)
CHANGES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "su-added": (
        "su_count: 2",
        "su_count: 3",
        {
            "rc": 0,
            "risks": ["spine-change"],
            "sus": [3],
            "added_switches": 8,
            "changed_roles": {"spine": 8},
            "tables": {"spine-p0-01": {"BGP_NEIGHBOR", "DEVICE_NEIGHBOR", "INTERFACE"}},
            "terraform": "update",
        },
    ),
    "qos-threshold": (
        "min_threshold_bytes: 150000",
        "min_threshold_bytes: 200000",
        {
            "rc": 0,
            "risks": ["spine-change", "qos-change", "many-sus"],
            "sus": [1, 2],
            "added_switches": 0,
            "changed_roles": {"leaf": 16, "spine": 8},
            "tables": {"leaf-p0-su01-r0": {"WRED_PROFILE"}, "spine-p0-08": {"WRED_PROFILE"}},
            "terraform": "update",
        },
    ),
    "renumber": (
        "leaf: 10.0.0.0/24",
        "leaf: 10.0.2.0/24",
        {
            "rc": 3,
            "risks": ["renumbering", "many-sus"],
            "sus": [1, 2],
            "added_switches": 0,
            "changed_roles": {"leaf": 16},  # a leaf's loopback is in its own config only: spines peer on the links
            "tables": {"leaf-p0-su02-r7": {"LOOPBACK_INTERFACE", "BGP_GLOBALS", "DEVICE_METADATA"}},
            "terraform": None,
        },
    ),
}


def run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, env=env, cwd=cwd, timeout=600, check=False)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fabric repository: the demo on main, one branch per change, each checked out in its own work tree."""
    root = tmp_path_factory.mktemp("fabric-repo")
    main = root / "main"
    (main / "inventory/demo").mkdir(parents=True)
    shutil.copy(INTENT, main / "inventory/demo/fabric.yml")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "demo fabric"]):
        assert run(*GIT, *args, cwd=main).returncode == 0
    base = INTENT.read_text()
    for name, (old, new, _) in CHANGES.items():
        assert base.count(old) == 1, f"{name}: {old!r} must occur once in the demo's fabric.yml"
        tree = root / name
        assert run(*GIT, "worktree", "add", "-q", "-b", name, str(tree), "main", cwd=main).returncode == 0
        (tree / "inventory/demo/fabric.yml").write_text(base.replace(old, new))
        assert run(*GIT, "commit", "-qam", name, cwd=tree).returncode == 0
    return root


@pytest.fixture(scope="module")
def stack(netbox_pool: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Instance, Terraform]]:
    """A NetBox holding the demo (as the base branch recorded it) and a Terraform stack whose state has it."""
    folder = tmp_path_factory.mktemp("review-tf")
    with netbox_pool.synced("test_review", INTENT) as nb:
        tf = terraform_dir(folder / "stack", folder / "mirror", nb.url, nb.token)
        shutil.copy(INTENT, tf.dir / "fabric.yml")
        (tf.dir / "main.tf").write_text(MAIN_TF)
        tf.run("init", "-input=false")
        tf.run("apply", "-input=false", "-auto-approve")  # NetBox already holds it: the state records it
        yield nb, tf


def netbox_counts(text: str) -> dict[str, dict[str, int]]:
    """``kind: C to create, U to update, D to delete`` lines of ``hwaac netbox sync --dry-run``."""
    out = {}
    for m in re.finditer(r"^(\S+): (\d+) to create, (\d+) to update, (\d+) to delete", text, re.M):
        out[m[1]] = {"create": int(m[2]), "update": int(m[3]), "delete": int(m[4])}
    return out


@pytest.mark.cost(150)
@pytest.mark.parametrize("name", list(CHANGES))
def test_review_of_a_change(name: str, repo: Path, stack: tuple[Instance, Terraform], tmp_path: Path) -> None:
    nb, tf = stack
    expect = CHANGES[name][2]
    head = repo / name / "inventory/demo"
    env = {**os.environ, "NETBOX_URL": nb.url, "NETBOX_TOKEN": nb.token}

    # Terraform's own plan of the change (the renumbering is refused by the provider too)
    shutil.copy(head / "fabric.yml", tf.dir / "fabric.yml")
    planned = tf.run("plan", "-input=false", "-out=tfplan", check=False)
    tf_args: list[str] = []
    if expect["terraform"] is None:
        assert planned.returncode != 0 and "renumbers 16 existing allocation(s)" in planned.stderr
    else:
        assert planned.returncode == 0, planned.stderr
        tf_args = ["--terraform-plan", str(tf.dir / "tfplan")]

    out = tmp_path / "review"
    r = run(*HWAAC, "review", str(head), "--base", "main", "-o", str(out), *tf_args, env=env)
    assert r.returncode == expect["rc"], r.stdout + r.stderr
    review = json.loads((out / "review.json").read_text())
    md = (out / "review.md").read_text()
    for text in (md, json.dumps(review), r.stdout, r.stderr):
        assert nb.token not in text

    # the plan section is the diff of `hwaac plan` of both sides
    plans = {}
    for side, intent in (("old", repo / "main/inventory/demo"), ("new", head)):
        p = run(*HWAAC, "plan", str(intent), "-o", str(tmp_path / side))
        assert p.returncode == 0, p.stderr
        plans[side] = read_plan(tmp_path / side)
    diff = diff_plans(plans["old"], plans["new"])
    for section in ("switches", "nodes", "links"):
        assert review["plan"][section]["added"] == sorted(diff.added[section])
        assert review["plan"][section]["removed"] == sorted(diff.removed[section])
        assert set(review["plan"][section]["changed"]) == set(diff.changed[section])
    assert review["plan"]["renumbered"] == diff.renumbered
    against = run(*HWAAC, "plan", str(head), "-o", str(tmp_path / "against"), "--against", str(tmp_path / "old"))
    assert against.returncode == (3 if diff.renumbered else 0)

    # the NetBox section is the sync's own dry run of the head
    dry = run(*HWAAC, "netbox", "sync", str(head), "--dry-run", env=env)
    assert dry.returncode == 0, dry.stderr
    expected_nb = netbox_counts(dry.stdout)
    assert review["netbox"]["counts"] == expected_nb
    assert (review["netbox"]["status"] == "no changes") == (not expected_nb)
    if name == "qos-threshold":  # QoS is rendered, never recorded in NetBox
        assert not expected_nb
    else:
        assert expected_nb

    # the Terraform section is `terraform show -json` of the saved plan
    if expect["terraform"] is None:
        assert review["terraform"] == {"status": "not given"}
    else:
        shown = tf.show_plan()
        actions = Counter(
            "update" if rc["change"]["actions"] == ["update"] else "+".join(rc["change"]["actions"])
            for rc in shown["resource_changes"]
        )
        assert review["terraform"]["counts"] == dict(actions)
        assert [res["address"] for res in review["terraform"]["resources"]] == ["hwaac_fabric_plane.plane0"]
        assert review["terraform"]["resources"][0]["action"] == expect["terraform"]
        assert "intent_sha256" in review["terraform"]["resources"][0]["attributes"]
        assert "### Terraform plan" in md and "to update" in md

    # per device, the config change per table; the blast radius, risks and refusal
    radius = review["blast_radius"]
    changed_roles = Counter()
    for dev_name, dev in review["devices"].items():
        if dev["kind"] == "switch" and dev["status"] == "changed":
            changed_roles[plans["new"]["switches"][dev_name]["role"]] += 1
    assert dict(changed_roles) == expect["changed_roles"]
    assert len(review["plan"]["switches"]["added"]) == expect["added_switches"]
    for dev_name, tables in expect["tables"].items():
        assert tables <= set(review["devices"][dev_name]["tables"]), review["devices"][dev_name]
    assert radius["sus"] == expect["sus"]
    assert [x["code"] for x in review["risks"]] == expect["risks"]
    assert review["gates"] and review["rollout"][0]["playbook"] == "fabric_deploy"
    if expect["rc"] == 3:
        assert review["verdict"] == "refused"
        refusal = review["refusals"][0]
        assert refusal["kind"] == "renumber" and len(refusal["items"]) == 16
        assert "**Refused: renumber of 16 item(s).**" in md
    else:
        assert review["verdict"] == "ok" and not review["refusals"]
    assert len(md) < 65_536
    assert md.index("### Blast radius") < md.index("### Plan") < md.index("### NetBox") < md.index("#### Per device")
