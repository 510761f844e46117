"""Run the jobs of the CI templates in files/ci/ on this machine as GitHub Actions and GitLab CI would: the jobs an
event selects (a job's ``if:``, GitLab's ``workflow:``/``rules:``), each in a fresh clone of the sample fabric
repository, with the environment the CI provides (contexts, ``env:``/``variables:``, secrets), the ``run:`` and
``script:`` lines run by bash as the runners run them (``bash --noprofile --norc -eo pipefail``), GitLab's
artifacts carried to the jobs that need them. ``uses:`` steps are not run (the machine has Python, node and
terraform); they must be pinned to a full version. The sample fabric repository they run in: ci_sample.py.

Only the expression forms the templates use are understood (context references, literals, ``==``, ``!=``,
``&&``, ``||``, ``!``, ``cancelled()``); anything else fails the test instead of being guessed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
CI = REPO / "files" / "ci"
GITHUB_WORKFLOW = CI / "github" / "hwaac-fabric.yml"
GITLAB_CI = CI / "gitlab" / "hwaac-fabric.gitlab-ci.yml"
SCRIPT = CI / "hwaac-ci.sh"
PINNED = re.compile(r"[\w.-]+/[\w.-]+@v\d+\.\d+\.\d+")
# the variables the CI sets itself, and the services' credentials: none leaks in from the machine running the test
OWN_ENV = ("GITHUB_", "GITLAB_", "CI_", "CI", "NETBOX_", "TF_", "AWX_", "HWAAC_", "RUNNER_")
GIT_ID = {
    "GIT_AUTHOR_NAME": "ci",
    "GIT_AUTHOR_EMAIL": "ci@example.com",
    "GIT_COMMITTER_NAME": "ci",
    "GIT_COMMITTER_EMAIL": "ci@example.com",
}


def git(cwd: Path, *args: str) -> str:
    r = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **GIT_ID}, check=False
    )
    assert r.returncode == 0, f"git {' '.join(args)}: {r.stderr}"
    return r.stdout.strip()


@dataclass
class Step:
    name: str
    rc: int | None  # None: skipped
    output: str = ""
    netbox_token: str | None = None  # the NETBOX_TOKEN the step ran with


@dataclass
class Job:
    name: str
    workdir: Path
    steps: list[Step] = field(default_factory=list)

    @property
    def rc(self) -> int:
        return next((s.rc for s in self.steps if s.rc), 0)

    @property
    def output(self) -> str:
        return "\n".join(s.output for s in self.steps)

    @property
    def netbox_tokens(self) -> set[str]:
        """The NetBox tokens its steps ran with."""
        return {s.netbox_token for s in self.steps if s.netbox_token}


def base_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(OWN_ENV)}
    return {**env, **GIT_ID, **extra}


def bash(script: str, cwd: Path, env: dict[str, str], name: str) -> Step:
    """``script`` as the runners run a step (bash -eo pipefail, no profile), stdout and stderr together."""
    r = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=1200,
        check=False,
    )
    return Step(name, r.returncode, r.stdout, env.get("NETBOX_TOKEN"))


def _translate(expr: str, ref: re.Pattern[str], lookup: str) -> str:
    """An expression of the CI's own syntax as Python (literals kept, references to ``lookup(...)`` calls)."""
    parts = re.split(r"""('[^']*'|"[^"]*")""", expr)
    for i in range(0, len(parts), 2):
        p = ref.sub(lambda m: f"{lookup}({m[0]!r})", parts[i])
        p = p.replace("||", " or ").replace("&&", " and ")
        parts[i] = re.sub(r"!(?!=)", " not ", p).replace("cancelled()", "False")
    return "".join(parts)


class GitHubActions:
    """One workflow run: the ``github`` context of its event, the repository's secrets and variables."""

    CONTEXT = re.compile(r"\b(?:github|secrets|vars|env)(?:\.[A-Za-z_][\w-]*)+")

    def __init__(
        self,
        workflow: dict[str, Any],
        github: dict[str, Any],
        secrets: dict[str, str],
        variables: dict[str, str],
        runner_env: dict[str, str],
    ) -> None:
        self.workflow, self.github, self.secrets, self.vars = workflow, github, secrets, variables
        self.runner_env = runner_env
        self.env: dict[str, str] = {}

    def _lookup(self, ref: str) -> Any:
        head, *path = ref.split(".")
        value: Any = {"github": self.github, "secrets": self.secrets, "vars": self.vars, "env": self.env}[head]
        for key in path:
            value = value.get(key, "") if isinstance(value, dict) else ""
        return value

    def evaluate(self, expr: str) -> Any:
        expr = expr.strip()
        if expr.startswith("${{") and expr.endswith("}}"):
            expr = expr[3:-2]
        return eval(_translate(expr, self.CONTEXT, "_c"), {"__builtins__": {}}, {"_c": self._lookup})

    def expand(self, text: Any) -> str:
        """A string with its ``${{ }}`` expressions replaced as the runner does (``''`` for what is unset)."""

        def one(m: re.Match[str]) -> str:
            v = self.evaluate(m[1])
            return "" if v is None else str(v).lower() if isinstance(v, bool) else str(v)

        return re.sub(r"\$\{\{(.*?)\}\}", one, str(text))

    def selected(self) -> list[str]:
        """The jobs this event runs, in the order of their ``needs``."""
        jobs = self.workflow["jobs"]
        chosen = [name for name, job in jobs.items() if "if" not in job or self.evaluate(job["if"])]
        return sorted(chosen, key=lambda n: len(jobs[n].get("needs", [])))

    def run_job(self, name: str, workdir: Path, only: set[str] | None = None) -> Job:
        """The job's steps in order (``only``: just the ``run:`` steps of these names, as a re-run of them)."""
        spec = self.workflow["jobs"][name]
        job = Job(name, workdir)
        self.env = {}
        for scope in (self.workflow.get("env", {}), spec.get("env", {})):
            self.env.update({k: self.expand(v) for k, v in scope.items()})
        shell = self.workflow.get("defaults", {}).get("run", {}).get("shell")
        assert shell == "bash", "the workflow must run its steps with bash (-eo pipefail)"
        failed = False
        for i, step in enumerate(spec["steps"]):
            label = step.get("name") or step.get("uses") or f"step {i}"
            cond = step.get("if")
            if (
                (failed and cond is None)
                or (cond is not None and not self.evaluate(str(cond)))
                or (only is not None and label not in only)
            ):
                job.steps.append(Step(label, None))
                continue
            if "uses" in step:
                assert PINNED.fullmatch(step["uses"]), f"{name}: {step['uses']} is not pinned to a full version"
                job.steps.append(Step(label, 0, f"(action {step['uses']}: provided by this machine)"))
                continue
            step_env = {**self.env, **{k: self.expand(v) for k, v in step.get("env", {}).items()}}
            result = bash(self.expand(step["run"]), workdir, base_env({**self.runner_env, **step_env}), label)
            job.steps.append(result)
            failed = failed or result.rc != 0
        return job


class GitLabCI:
    """One pipeline: GitLab's predefined variables for it and the project's CI/CD variables (settings)."""

    VAR = re.compile(r"\$\{?(\w+)\}?")

    def __init__(
        self,
        config: dict[str, Any],
        predefined: dict[str, str],
        project: dict[str, str],
        stash: Path,
        protected: frozenset[str] = frozenset(),
    ) -> None:
        self.config, self.predefined, self.project, self.stash = config, predefined, project, stash
        self.protected = protected  # project variables exposed only to pipelines of protected branches
        self.done: dict[str, Job] = {}

    def _rule(self, expr: str, env: dict[str, str]) -> bool:
        assert "=~" not in expr, f"regular expression rules are not understood here: {expr}"
        py = _translate(expr, re.compile(r"\$\w+"), "_v")
        return bool(eval(py, {"__builtins__": {}}, {"_v": lambda ref: env.get(ref[1:]) or None}))

    def _matches(self, rules: list[dict[str, Any]], env: dict[str, str]) -> bool:
        for rule in rules:
            if "if" not in rule or self._rule(rule["if"], env):
                return rule.get("when", "on_success") != "never"
        return False

    def variables(self, job: dict[str, Any]) -> dict[str, str]:
        """GitLab's precedence, lowest first: predefined, the file's, the job's, its matching rule's variables, then
        the project's settings; a protected setting only where the pipeline's branch is protected (the default)."""
        env = dict(self.predefined)
        project = {
            k: v
            for k, v in self.project.items()
            if k not in self.protected or env.get("CI_COMMIT_BRANCH") == env.get("CI_DEFAULT_BRANCH")
        }
        for scope in (self.config.get("variables", {}), job.get("variables", {})):
            for k, v in scope.items():
                env[k] = self.VAR.sub(lambda m: env.get(m[1], ""), str(v))
        rule = next((r for r in job.get("rules", []) if "if" not in r or self._rule(r["if"], {**env, **project})), {})
        look = {**env, **project}
        for k, v in rule.get("variables", {}).items():
            env[k] = self.VAR.sub(lambda m: look.get(m[1], ""), str(v))
        return {**env, **project}

    def selected(self) -> list[str]:
        """The jobs of this pipeline, stage by stage (none when the workflow rules do not match)."""
        if not self._matches(self.config.get("workflow", {}).get("rules", [{}]), self.variables({})):
            return []
        stages = self.config["stages"]
        jobs = [
            (stages.index(spec["stage"]), name)
            for name, spec in self.config.items()
            if isinstance(spec, dict)
            and "script" in spec
            and not name.startswith(".")
            and self._matches(spec.get("rules", [{}]), self.variables(spec))
        ]
        return [name for _, name in sorted(jobs)]

    def run_job(self, name: str, workdir: Path) -> Job:
        spec = self.config[name]
        stages = self.config["stages"]
        sources = (
            spec["needs"]
            if "needs" in spec
            else [n for n in self.done if stages.index(self.config[n]["stage"]) < stages.index(spec["stage"])]
        )
        for source in sources:  # the artifacts of the jobs it needs (all earlier stages without `needs`)
            if (self.stash / source).exists():
                shutil.copytree(self.stash / source, workdir, dirs_exist_ok=True)
        lines = spec.get("before_script", self.config.get("default", {}).get("before_script", [])) + spec["script"]
        job = Job(name, workdir, [bash("\n".join(lines), workdir, base_env(self.variables(spec)), name)])
        artifacts = spec.get("artifacts", {})
        if job.rc == 0 or artifacts.get("when") in ("always", "on_failure"):
            for path in artifacts.get("paths", []):
                src = workdir / path
                if src.is_dir():
                    shutil.copytree(src, self.stash / name / path, dirs_exist_ok=True)
                elif src.exists():
                    (self.stash / name / path).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(src, self.stash / name / path)
        self.done[name] = job
        return job


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def pull_request_event(number: int, base: str, head: str, head_sha: str, repo: str) -> dict[str, Any]:
    """The parts of GitHub's ``pull_request`` webhook payload the workflow reads (``opened``; the shape of
    https://docs.github.com/en/webhooks/webhook-events-and-payloads#pull_request)."""
    owner, name = repo.split("/")
    return {
        "action": "opened",
        "number": number,
        "pull_request": {
            "number": number,
            "state": "open",
            "title": "fabric: raise the ECN minimum threshold",
            "base": {"ref": base, "repo": {"full_name": repo}},
            "head": {"ref": head, "sha": head_sha, "repo": {"full_name": repo}},
        },
        "repository": {"full_name": repo, "name": name, "owner": {"login": owner}, "default_branch": "main"},
    }


def write_event(path: Path, event: dict[str, Any]) -> Path:
    path.write_text(json.dumps(event))
    return path
