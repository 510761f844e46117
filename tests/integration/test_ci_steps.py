"""The steps of files/ci/hwaac-ci.sh (comment, deploy, the temporary files, bad settings) against local
stand-ins of GitHub, GitLab and AWX (ci_fake_apis.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ci_fake_apis import Apis
from ci_pipeline import SCRIPT, base_env, bash
from ci_sample import HWAAC_VERSION, small_demo
from ci_stand_in import MARKER, RENDER, serve_apis, step_env

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def apis() -> Iterator[Apis]:
    yield from serve_apis()


# --- the script's comment and deploy steps against the stand-in APIs -------------------------------------------


# (case, platform, other comments already there, ours among them, review exit, terraform plan exit,
#  review.md size or 0, the request that posts it, the step's exit)
COMMENTS = [
    ("github-new", "github", 0, False, 0, 0, 0, ("POST", r"/github/repos/acme/fabric/issues/7/comments"), 0),
    (
        "github-update-on-page-2",
        "github",
        100,
        True,
        0,
        0,
        0,
        ("PATCH", r"/github/repos/acme/fabric/issues/comments/\d+"),
        0,
    ),
    ("github-refused", "github", 0, False, 3, 0, 0, ("POST", r"/github/repos/acme/fabric/issues/7/comments"), 3),
    (
        "github-terraform-failed",
        "github",
        1,
        False,
        0,
        1,
        0,
        ("POST", r"/github/repos/acme/fabric/issues/7/comments"),
        1,
    ),
    (
        "github-cut-to-fit",
        "github",
        0,
        False,
        0,
        0,
        70_000,
        ("POST", r"/github/repos/acme/fabric/issues/7/comments"),
        0,
    ),
    ("gitlab-new", "gitlab", 2, False, 0, 0, 0, ("POST", r"/gitlab/api/v4/projects/42/merge_requests/5/notes"), 0),
    ("gitlab-update", "gitlab", 2, True, 0, 0, 0, ("PUT", r"/gitlab/api/v4/projects/42/merge_requests/5/notes/\d+"), 0),
    ("gitlab-refused", "gitlab", 0, False, 3, 0, 0, ("POST", r"/gitlab/api/v4/projects/42/merge_requests/5/notes"), 3),
    ("local", "local", 0, False, 0, 0, 0, None, 0),
]


@pytest.mark.parametrize(
    ("platform", "others", "ours", "review_rc", "plan_rc", "size", "posts", "rc"),
    [c[1:] for c in COMMENTS],
    ids=[c[0] for c in COMMENTS],
)
def test_comment_step(
    apis: Apis,
    tmp_path: Path,
    platform: str,
    others: int,
    ours: bool,
    review_rc: int,
    plan_rc: int,
    size: int,
    posts: tuple[str, str] | None,
    rc: int,
) -> None:
    apis.requests.clear()
    apis.comments.clear()
    ci = tmp_path / "ci"
    (ci / "review").mkdir(parents=True)
    review = "## hwaac review: demo\n\nqos.ecn.min_threshold_bytes: 150000 -> 200000\n"
    review += "x" * (size - len(review)) if size else ""
    (ci / "review" / "review.md").write_text(review)
    (ci / "review.rc").write_text(f"{review_rc}\n")
    (ci / "terraform-plan.rc").write_text(f"{plan_rc}\n")
    (ci / "terraform-plan.txt").write_text("Error: hwaac_fabric_plane.plane0: refusing to renumber leaf-p0-su00-r0\n")
    key = "github:acme/fabric#7" if platform == "github" else "gitlab:42!5"
    thread = apis.comments.setdefault(key, [{"id": i, "body": f"looks good {i}"} for i in range(1, others + 1)])
    if ours:
        thread.append({"id": 999, "body": f"{MARKER}\nan older review"})
    step = bash(f"{SCRIPT} comment", tmp_path, step_env(apis, platform, ci), "comment")
    assert step.rc == rc, step.output
    body = (ci / "comment.md").read_text()
    if size:  # cut to GitHub's limit, with a note
        assert len(body) == 65_536 and body.startswith(f"{MARKER}\n## hwaac review") and "cut to fit" in body
    elif plan_rc:
        assert body.startswith(f"{MARKER}\n{review}") and "terraform plan failed (exit 1)" in body
        assert "refusing to renumber leaf-p0-su00-r0" in body
    else:
        assert body == f"{MARKER}\n{review}"
    if posts is None:
        assert apis.requests == []
        return
    sent = apis.seen(*posts)
    assert len(sent) == 1 and sent[0].json() == {"body": body}
    assert [c["body"] for c in apis.comments[key]].count(body) == 1
    assert len(apis.comments[key]) == others + 1  # updated in place, or one new
    assert all(t not in step.output for t in (apis.github_token, apis.gitlab_token))


def test_comment_step_with_a_bad_token(apis: Apis, tmp_path: Path) -> None:
    ci = tmp_path / "ci"
    (ci / "review").mkdir(parents=True)
    (ci / "review" / "review.md").write_text("## review\n")
    step = bash(f"{SCRIPT} comment", tmp_path, step_env(apis, "github", ci, GITHUB_TOKEN="ghs_wrong"), "comment")
    assert step.rc == 2 and "HTTP 401" in step.output and "Bad credentials" in step.output, step.output
    assert "ghs_wrong" not in step.output


# (case, environment, the step's exit, the launch request's path or None, the extra_vars sent, what it says)
DEPLOYS = [
    ("by-name", {}, 0, "/awx/api/v2/job_templates/11/launch/", RENDER, "job 1"),
    ("by-id", {"HWAAC_AWX_TEMPLATE": "11"}, 0, "/awx/api/v2/job_templates/11/launch/", RENDER, ": successful"),
    (
        "extra-vars",
        {"HWAAC_AWX_EXTRA_VARS": '{"fabric_deploy_serial": "10%", "switch_config_dir": "/srv/r"}'},
        0,
        "/awx/api/v2/job_templates/11/launch/",
        {"fabric_deploy_serial": "10%", "switch_config_dir": "/srv/r"},
        ": successful",
    ),
    (
        "workflow",
        {
            "HWAAC_AWX_TEMPLATE": "hwaac rollout",
            "HWAAC_AWX_TEMPLATE_KIND": "workflow_job_template",
            "HWAAC_AWX_EXTRA_VARS": '{"fabric_deploy_serial": "10%"}',
        },
        0,
        "/awx/api/v2/workflow_job_templates/21/launch/",
        {"fabric_deploy_serial": "10%"},
        "workflow_job 1",
    ),
    (
        "workflow-not-asked",
        {"HWAAC_AWX_TEMPLATE": "hwaac rollout", "HWAAC_AWX_TEMPLATE_KIND": "workflow_job_template"},
        2,
        None,
        None,
        "workflow_job_template 21 (hwaac rollout) takes no fabric_deploy_render at launch",
    ),
    (
        "variable-not-asked",
        {"HWAAC_AWX_EXTRA_VARS": '{"hwaac_commit": "abc"}'},
        2,
        None,
        None,
        "job_template 11 (hwaac fabric deploy) takes no hwaac_commit at launch",
    ),
    (
        "job-fails",
        {"HWAAC_AWX_TEMPLATE": "hwaac fabric deploy (broken)"},
        1,
        "/awx/api/v2/job_templates/12/launch/",
        RENDER,
        "ended failed",
    ),
    (
        "unknown-name",
        {"HWAAC_AWX_TEMPLATE": "no such template"},
        2,
        None,
        None,
        "HWAAC_AWX_TEMPLATE=no such template: 0 job_template(s) of that name",
    ),
    (
        "extra-vars-not-json",
        {"HWAAC_AWX_EXTRA_VARS": "serial=10%"},
        2,
        None,
        None,
        "HWAAC_AWX_EXTRA_VARS=serial=10%: not JSON",
    ),
    (
        "bad-kind",
        {"HWAAC_AWX_TEMPLATE_KIND": "job"},
        2,
        None,
        None,
        "HWAAC_AWX_TEMPLATE_KIND=job: valid: job_template, workflow_job_template",
    ),
    ("no-token", {"AWX_TOKEN": ""}, 2, None, None, "AWX_TOKEN is not set"),
]


@pytest.mark.parametrize(
    ("env", "rc", "launch", "extra_vars", "says"), [c[1:] for c in DEPLOYS], ids=[c[0] for c in DEPLOYS]
)
def test_deploy_step(
    apis: Apis,
    tmp_path: Path,
    env: dict[str, str],
    rc: int,
    launch: str | None,
    extra_vars: dict[str, Any] | None,
    says: str,
) -> None:
    apis.requests.clear()
    step = bash(f"{SCRIPT} deploy", tmp_path, step_env(apis, "github", tmp_path / "ci", **env), "deploy")
    assert step.rc == rc, step.output
    assert says in step.output, step.output
    launched = apis.seen("POST", r".*/launch/")
    assert [r.path for r in launched] == ([launch] if launch else [])
    if launch:
        assert launched[0].json() == {"extra_vars": extra_vars}
    if rc == 0:  # waited until AWX said the job succeeded
        polls = apis.seen("GET", r"/awx/api/v2/(workflow_)?jobs/\d+/")
        assert len(polls) == 3 and step.output.rstrip().endswith(": successful"), step.output
    assert apis.awx_token not in step.output


SECRET_VARS = '{"fabric_deploy_serial": "10%", "switch_config_dir": "/srv/secret-0b5e"}'
# (case, step, platform, environment, the step's exit): steps that end after making temporary files, most of them
# failing: with TMPDIR an empty folder, the folder is empty again when the step has ended
TEMPORARY = [
    ("deploy-ok", "deploy", "github", {"HWAAC_AWX_EXTRA_VARS": SECRET_VARS}, 0),
    (
        "deploy-job-fails",
        "deploy",
        "github",
        {"HWAAC_AWX_TEMPLATE": "hwaac fabric deploy (broken)", "HWAAC_AWX_EXTRA_VARS": SECRET_VARS},
        1,
    ),
    ("deploy-variable-not-asked", "deploy", "github", {"HWAAC_AWX_EXTRA_VARS": '{"hwaac_commit": "abc"}'}, 2),
    ("deploy-unknown-template", "deploy", "github", {"HWAAC_AWX_TEMPLATE": "no such template"}, 2),
    # the listing fails in find_comment, inside a command substitution
    ("comment-bad-token", "comment", "github", {"GITHUB_TOKEN": "ghs_wrong"}, 2),
    ("comment-gitlab-bad-token", "comment", "gitlab", {"HWAAC_GITLAB_TOKEN": "glpat-wrong"}, 2),
]


@pytest.mark.parametrize(("step", "platform", "env", "rc"), [c[1:] for c in TEMPORARY], ids=[c[0] for c in TEMPORARY])
def test_a_step_leaves_no_temporary_file(
    apis: Apis, tmp_path: Path, step: str, platform: str, env: dict[str, str], rc: int
) -> None:
    """API answers and the launch body (HWAAC_AWX_EXTRA_VARS, maybe secrets) are removed however the step ends."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    ci = tmp_path / "ci"
    (ci / "review").mkdir(parents=True)
    (ci / "review" / "review.md").write_text("## review\n")
    r = bash(f"{SCRIPT} {step}", tmp_path, step_env(apis, platform, ci, TMPDIR=str(tmpdir), **env), step)
    assert r.rc == rc, r.output
    assert sorted(p.name for p in tmpdir.rglob("*")) == [], r.output


def test_a_cancelled_step_leaves_no_temporary_file(apis: Apis, tmp_path: Path) -> None:
    """A CI cancelling the job (SIGTERM to its processes) while deploy waits for AWX: the step still cleans up."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    apis.requests.clear()
    env = step_env(
        apis, "github", tmp_path / "ci", TMPDIR=str(tmpdir), HWAAC_AWX_POLL="60", HWAAC_AWX_EXTRA_VARS=SECRET_VARS
    )
    proc = subprocess.Popen(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", f"{SCRIPT} deploy"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        for _ in range(300):  # until the job is launched and polled once: then it sleeps HWAAC_AWX_POLL seconds
            if apis.seen("GET", r"/awx/api/v2/jobs/\d+/") or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert any(tmpdir.iterdir()), "the step had made no temporary file yet"
        os.killpg(proc.pid, signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 143, output
    assert sorted(p.name for p in tmpdir.rglob("*")) == [], output


# (case, the step, its environment, its exit, what it says): bad settings are named, nothing runs
SETTINGS = [
    ("no-fabric", "validate", {}, 2, "HWAAC_FABRIC is not set: the fabric's folder under inventory/ (one of: demo)"),
    ("unknown-fabric", "validate", {"HWAAC_FABRIC": "prod"}, 2, "HWAAC_FABRIC=prod: no inventory/prod/fabric.yml here"),
    (
        "apply-without-state",
        "apply",
        {"HWAAC_FABRIC": "demo", "CI": "true"},
        2,
        "HWAAC_TF_BACKEND is not set: the state would be the job's local file",
    ),
    (
        "bad-backend",
        "plan",
        {"HWAAC_FABRIC": "demo", "HWAAC_TF_BACKEND": "s3; rm"},
        2,
        "HWAAC_TF_BACKEND=s3; rm: not a Terraform backend type",
    ),
    ("no-version", "setup", {}, 2, "HWAAC_VERSION is not set"),
    ("installed", "setup", {"HWAAC_VERSION": HWAAC_VERSION}, 0, f"hwaac {HWAAC_VERSION} is installed"),
    ("comment-before-review", "comment", {"HWAAC_FABRIC": "demo"}, 2, "no build/hwaac-ci/review/review.md: run"),
    ("unknown-step", "publish", {}, 2, "hwaac-ci.sh validate           hwaac validate inventory/$HWAAC_FABRIC"),
]


@pytest.mark.parametrize(("step", "env", "rc", "says"), [c[1:] for c in SETTINGS], ids=[c[0] for c in SETTINGS])
def test_step_names_a_bad_setting(tmp_path: Path, step: str, env: dict[str, str], rc: int, says: str) -> None:
    small_demo(tmp_path / "inventory")
    r = bash(f"{SCRIPT} {step}", tmp_path, base_env(env), step)
    assert r.rc == rc and says in r.output, r.output
    if rc:
        assert not (tmp_path / "build" / "hwaac-ci" / "render").exists(), "a refused step wrote its output"
