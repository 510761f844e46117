"""The jobs of the CI templates of files/ci/ run in order on a sample fabric repository (inventory/demo and
cdktf/), as the CI would run them (ci_pipeline.py): real git, hwaac, cdktn, terraform with the provider from its
mirror, a real NetBox, the state in the GitLab-style HTTP backend of the stand-in."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pynetbox
import pytest
from ci_fake_apis import Apis
from ci_pipeline import pull_request_event
from ci_sample import STATE, Sample, github_merge_checkout, gitlab_mr_checkout, leaked
from ci_stand_in import MARKER, RENDER, serve_apis

from hwaac.devnetbox.instances import Instance
from hwaac.plan import build_plan
from hwaac.validate import load_intent

pytestmark = pytest.mark.integration


# --- the templates' jobs on a sample fabric repository ----------------------------------------------------------


def raise_ecn_threshold(tree: Path) -> None:
    f = tree / "inventory" / "demo" / "fabric.yml"
    text = f.read_text()
    assert "min_threshold_bytes: 150000" in text
    f.write_text(text.replace("min_threshold_bytes: 150000", "min_threshold_bytes: 200000"))


def renumber_leaf_spine(tree: Path) -> None:
    f = tree / "inventory" / "demo" / "fabric.yml"
    text = f.read_text()
    assert "leaf_spine: 10.1.0.0/20" in text
    f.write_text(text.replace("leaf_spine: 10.1.0.0/20", "leaf_spine: 10.2.0.0/20"))


@pytest.fixture(scope="module")
def apis() -> Iterator[Apis]:
    yield from serve_apis()


@pytest.mark.cost(90)
def test_pipelines_on_a_sample_fabric_repository(netbox_db: Instance, apis: Apis, tmp_path: Path) -> None:
    apis.requests.clear()
    apis.comments.clear()
    s = Sample(tmp_path, netbox_db, apis)
    repo = s.repo
    main0 = repo.sha("main")
    head = repo.branch("qos-ecn", raise_ecn_threshold, "qos: raise the ECN minimum threshold")

    # 1. GitHub, pull request #7: validate, plan, review, one comment holding review.md
    event = pull_request_event(7, "main", "qos-ecn", head, "acme/fabric")
    gh = s.github("pull_request", "refs/pull/7/merge", head, event)
    jobs = s.run(gh, head, github_merge_checkout(repo, head))
    assert list(jobs) == ["review"], "a pull request runs the review job only"
    review = jobs["review"]
    assert review.rc == 0, review.output
    out = review.workdir / "build" / "hwaac-ci"
    review_md = (out / "review" / "review.md").read_text()
    report = json.loads((out / "review" / "review.json").read_text())
    assert report["verdict"] == "ok" and report["base"].startswith("origin/main")
    assert [c["path"] for c in report["intent"]] == ["qos.ecn.min_threshold_bytes"]
    assert report["terraform"].get("status") != "not given", "the review did not get the terraform plan"
    assert (out / "tfplan.json").exists() and (out / "render").is_dir()
    # the saved plan and the provider's mirror are under HWAAC_CI_DIR, not in the stack's folder or build/terraform
    assert (out / "tfplan").is_file() and (out / "terraform" / "terraform.rc").is_file()
    stack = review.workdir / "cdktf" / "cdktf.out" / "stacks" / "demo"
    assert (stack / "cdk.tf.json").is_file() and not (stack / "tfplan").exists()
    assert not (review.workdir / "build" / "terraform").exists()
    posted = apis.seen("POST", r"/github/repos/acme/fabric/issues/7/comments")
    assert [r.json() for r in posted] == [{"body": f"{MARKER}\n{review_md}"}]
    assert apis.seen("POST", rf"{STATE}/lock") and apis.seen("DELETE", rf"{STATE}/lock"), "plan took no state lock"
    assert review.netbox_tokens == {s.review_token}, "a pull request's job had NetBox's write token"

    # the workflow again (a new push to the pull request): the one comment is updated, not a second one posted
    again = gh.run_job("review", review.workdir, only={"Comment on the pull request"})
    assert again.rc == 0, again.output
    assert len(apis.seen("PATCH", r"/github/repos/acme/fabric/issues/comments/\d+")) == 1
    assert len(apis.comments["github:acme/fabric#7"]) == 1

    # 2. GitLab, merge request !5 of the same branch: validate, plan, review + note, artifacts between the jobs
    mr = {
        "CI_PIPELINE_SOURCE": "merge_request_event",
        "CI_MERGE_REQUEST_IID": "5",
        "CI_COMMIT_SHA": head,
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "qos-ecn",
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": main0,
        "CI_COMMIT_REF_NAME": "qos-ecn",
    }
    jobs = s.run(s.gitlab(mr), head, gitlab_mr_checkout)
    assert list(jobs) == ["hwaac-validate", "hwaac-plan", "hwaac-review"]
    assert all(j.rc == 0 for j in jobs.values()), "\n".join(j.output for j in jobs.values())
    out = jobs["hwaac-review"].workdir / "build" / "hwaac-ci"
    assert (out / "tfplan.json").exists(), "the plan job's artifacts did not reach the review job"
    notes = apis.seen("POST", r"/gitlab/api/v4/projects/42/merge_requests/5/notes")
    assert [r.json() for r in notes] == [{"body": f"{MARKER}\n{(out / 'review' / 'review.md').read_text()}"}]
    assert json.loads((out / "review" / "review.json").read_text())["base"].startswith(main0[:7])
    assert set().union(*(j.netbox_tokens for j in jobs.values())) == {s.review_token}  # protected: not for MRs

    # 3. merged: the push to main applies (terraform plan + apply of that plan) and launches the AWX deploy job
    main1 = repo.merge("qos-ecn")
    jobs = s.run(s.github("push", "refs/heads/main", main1, {"ref": "refs/heads/main", "after": main1}), main1)
    assert list(jobs) == ["apply"]
    assert jobs["apply"].rc == 0, jobs["apply"].output
    assert jobs["apply"].netbox_tokens == {netbox_db.token}
    plan = build_plan(load_intent(jobs["apply"].workdir / "inventory" / "demo"))
    api = pynetbox.api(netbox_db.url, token=netbox_db.token)
    assert api.dcim.devices.count(tag="hwaac-fabric-demo") == len(plan.switches) + len(plan.nodes)
    launches = apis.seen("POST", r"/awx/api/v2/job_templates/11/launch/")
    assert [r.json() for r in launches] == [{"extra_vars": RENDER}]
    assert apis.seen("GET", r"/awx/api/v2/job_templates/") and len(apis.seen("GET", r"/awx/api/v2/jobs/\d+/")) == 3
    state = json.loads(apis.states["42/hwaac-demo"])
    assert [r["type"] for r in state["resources"]] == ["hwaac_fabric_plane"]

    # 4. GitLab, merge request !6 renumbers the leaf-spine links: the provider refuses the plan, the review
    # refuses the change; the note is posted with both, then the pipeline fails (3)
    head2 = repo.branch("renumber", renumber_leaf_spine, "addressing: move the leaf-spine links")
    mr2 = mr | {
        "CI_MERGE_REQUEST_IID": "6",
        "CI_COMMIT_SHA": head2,
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "renumber",
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": main1,
        "CI_COMMIT_REF_NAME": "renumber",
    }
    jobs = s.run(s.gitlab(mr2), head2, gitlab_mr_checkout)
    assert list(jobs) == ["hwaac-validate", "hwaac-plan", "hwaac-review"]
    assert jobs["hwaac-plan"].rc == 0, jobs["hwaac-plan"].output  # --keep-going: the failure goes to the note
    assert jobs["hwaac-review"].rc == 3, jobs["hwaac-review"].output
    out = jobs["hwaac-review"].workdir / "build" / "hwaac-ci"
    assert (out / "terraform-plan.rc").read_text().strip() != "0"
    assert json.loads((out / "review" / "review.json").read_text())["verdict"] == "refused"
    note = apis.seen("POST", r"/gitlab/api/v4/projects/42/merge_requests/6/notes")[0].json()["body"]
    assert note.startswith(f"{MARKER}\n{(out / 'review' / 'review.md').read_text()}")
    assert "terraform plan failed" in note and "the review refuses this change" in jobs["hwaac-review"].output

    # 5. GitLab's default-branch pipeline on main: nothing left to apply; the deploy job launched again
    push = {
        "CI_PIPELINE_SOURCE": "push",
        "CI_COMMIT_BRANCH": "main",
        "CI_COMMIT_SHA": main1,
        "CI_COMMIT_REF_NAME": "main",
    }
    jobs = s.run(s.gitlab(push), main1)
    assert list(jobs) == ["hwaac-validate", "hwaac-apply"]
    assert jobs["hwaac-apply"].rc == 0, jobs["hwaac-apply"].output
    assert "No changes." in (jobs["hwaac-apply"].workdir / "build" / "hwaac-ci" / "apply-plan.txt").read_text()
    assert len(apis.seen("POST", r"/awx/api/v2/job_templates/11/launch/")) == 2
    assert not apis.locks, "a job left the state locked"

    # no token anywhere: output, files (saved plans included), comments, the state
    bodies = [c["body"] for thread in apis.comments.values() for c in thread]
    assert leaked(s.outputs + bodies, s.workdirs, list(apis.states.values()), s.secrets()) == []
