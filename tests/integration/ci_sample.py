"""The sample fabric repository the CI tests run the templates' jobs in (ci_pipeline.py runs them): the layout
docs/ci.md tells users to have, with a small cut of the demo fabric; ``Sample``, that repository with the CI
settings pointing at the stand-in APIs (ci_fake_apis.py) and a NetBox; a pull or merge request's checkout; and
where a secret leaked to."""

from __future__ import annotations

import importlib.metadata
import secrets
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pynetbox
import yaml
from ci_fake_apis import Apis
from ci_pipeline import GITHUB_WORKFLOW, GITLAB_CI, REPO, SCRIPT, GitHubActions, GitLabCI, git, load, write_event

from hwaac.devnetbox.instances import Instance

DEMO = REPO / "inventory" / "demo"
HWAAC_VERSION = importlib.metadata.version("hwaac")  # the installed one: `setup` installs nothing then

STATE = "/gitlab/api/v4/projects/42/terraform/state/hwaac-demo"
TWIN = REPO / "tests" / "fixtures" / "intents" / "terraform" / "twin.yml"


@dataclass
class FabricRepo:
    """A user's fabric repository: ``origin`` (bare, what the CI clones) and ``seed``, a work tree pushing to it."""

    origin: Path
    seed: Path

    def branch(self, name: str, edit: Callable[[Path], None], message: str, base: str = "main") -> str:
        """A branch ``name`` from ``base`` with one commit made by ``edit(work tree)``; pushed; its SHA."""
        git(self.seed, "checkout", "-q", "-B", name, base)
        edit(self.seed)
        git(self.seed, "commit", "-q", "-am", message)
        git(self.seed, "push", "-q", "-f", "origin", name)
        return git(self.seed, "rev-parse", "HEAD")

    def merge(self, name: str) -> str:
        """Merge the branch into main (fast-forward, as a merged pull request with a linear history); main's SHA."""
        git(self.seed, "checkout", "-q", "main")
        git(self.seed, "merge", "-q", "--ff-only", name)
        git(self.seed, "push", "-q", "origin", "main")
        return git(self.seed, "rev-parse", "HEAD")

    def sha(self, ref: str) -> str:
        return git(self.seed, "rev-parse", ref)

    def clone(self, dest: Path, ref: str) -> Path:
        """A fresh checkout of ``ref`` (detached), with the remote-tracking branches of a full clone."""
        git(dest.parent, "clone", "-q", str(self.origin), dest.name)
        git(dest, "checkout", "-q", "--detach", ref)
        return dest


def make_fabric_repo(root: Path, fabric: Path) -> FabricRepo:
    """The layout docs/ci.md tells users to have: inventory/<fabric>/, the cdktn app cdktf/, the script in ci/, the
    workflow in .github/workflows/ and the GitLab file as .gitlab-ci.yml; one commit on main."""
    origin, seed = root / "origin.git", root / "seed"
    git(root, "init", "-q", "--bare", "-b", "main", str(origin))
    seed.mkdir()
    shutil.copytree(fabric, seed / "inventory" / fabric.name)
    (seed / "cdktf").mkdir()
    for name in ("main.py", "cdktf.json"):
        shutil.copy(REPO / "cdktf" / name, seed / "cdktf" / name)
    (seed / "ci").mkdir()
    shutil.copy(SCRIPT, seed / "ci" / "hwaac-ci.sh")
    (seed / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(GITHUB_WORKFLOW, seed / ".github" / "workflows" / "hwaac-fabric.yml")
    shutil.copy(GITLAB_CI, seed / ".gitlab-ci.yml")
    (seed / ".gitignore").write_text("build/\ncdktf/cdktf.out/\ncdktf/state/\n__pycache__/\n")
    git(seed, "init", "-q", "-b", "main")
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "fabric: the first intent")
    git(seed, "remote", "add", "origin", str(origin))
    git(seed, "push", "-q", "origin", "main")
    return FabricRepo(origin, seed)


def small_demo(folder: Path) -> Path:
    """inventory/demo as the sample repository's fabric ``demo``, its size cut to 1 SU of 2 nodes on 2 rails of
    4-port lab switches (4 switches, 8 cables): NetBox's cost is per interface, cable and address, and recording
    the whole demo takes minutes of it (benchmarks/netbox_sync.py). Everything else is the demo's."""
    data = yaml.safe_load((DEMO / "fabric.yml").read_text())
    data["fabric"].update(rails=2, nodes_per_su=2, su_count=1, su_capacity=2)
    data["switches"]["leaf"].update(model="Lab-4x400G", downlinks=2)
    data["switches"]["spine"]["model"] = "Lab-4x400G"
    data["switch_models"] = yaml.safe_load(TWIN.read_text())["switch_models"]
    data["storage"]["lnet"]["networks"][0]["rails"] = [0, 1]
    (folder / "demo").mkdir(parents=True)
    (folder / "demo" / "fabric.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder / "demo"


class Sample:
    """The module's sample repository, the stand-in APIs, the NetBox, and everything the jobs printed."""

    def __init__(self, root: Path, nb: Instance, apis: Apis) -> None:
        self.root, self.nb, self.apis = root, nb, apis
        self.repo: FabricRepo = make_fabric_repo(root, small_demo(root / "fabric"))
        self.review_token = read_only_token(nb)  # the pull-request jobs' NetBox token
        self.job_token = secrets.token_hex(12)
        self.state_password = secrets.token_hex(12)
        apis.state_auth |= {("gitlab-ci-token", self.job_token), ("hwaac-github", self.state_password)}
        self.outputs: list[str] = []
        self.workdirs: list[Path] = []
        self.n = 0

    def workdir(self, name: str) -> Path:
        self.n += 1
        return self.root / f"{self.n:02d}-{name}"

    def github(self, event_name: str, ref: str, sha: str, event: dict[str, Any]) -> GitHubActions:
        state = f"{self.apis.url}{STATE}"
        variables = {
            "HWAAC_FABRIC": "demo",
            "HWAAC_VERSION": HWAAC_VERSION,
            "NETBOX_URL": self.nb.url,
            "HWAAC_TF_BACKEND": "http",
            "TF_HTTP_USERNAME": "hwaac-github",
            "HWAAC_TF_BACKEND_CONFIG": f"address={state}\nlock_address={state}/lock\n"
            f"unlock_address={state}/lock\nlock_method=POST\nunlock_method=DELETE",
            "AWX_HOST": f"{self.apis.url}/awx",
        }
        # the state's review credential is the same password here (the stand-in has no read-only role)
        secret = {
            "NETBOX_TOKEN": self.nb.token,
            "GITHUB_TOKEN": self.apis.github_token,
            "AWX_TOKEN": self.apis.awx_token,
            "TF_HTTP_PASSWORD": self.state_password,
            "NETBOX_REVIEW_TOKEN": self.review_token,
            "TF_HTTP_REVIEW_PASSWORD": self.state_password,
        }
        github = {"event_name": event_name, "event": event, "repository": "acme/fabric", "ref": ref, "sha": sha}
        path = write_event(self.root / f"event-{self.n}.json", event)
        runner = {
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(path),
            "GITHUB_REPOSITORY": "acme/fabric",
            "GITHUB_REF": ref,
            "GITHUB_SHA": sha,
            "GITHUB_API_URL": f"{self.apis.url}/github",
            "GITHUB_BASE_REF": event.get("pull_request", {}).get("base", {}).get("ref", ""),
            "HWAAC_AWX_POLL": "0.05",
        }  # a self-hosted runner's environment: AWX polled quickly
        return GitHubActions(load(GITHUB_WORKFLOW), github, secret, variables, runner)

    def gitlab(self, predefined: dict[str, str]) -> GitLabCI:
        project = {
            "NETBOX_URL": self.nb.url,
            "NETBOX_TOKEN": self.nb.token,
            "NETBOX_REVIEW_TOKEN": self.review_token,
            "HWAAC_VERSION": HWAAC_VERSION,
            "HWAAC_GITLAB_TOKEN": self.apis.gitlab_token,
            "AWX_HOST": f"{self.apis.url}/awx",
            "AWX_TOKEN": self.apis.awx_token,
            "HWAAC_AWX_POLL": "0.05",
        }
        base = {
            "CI": "true",
            "GITLAB_CI": "true",
            "CI_API_V4_URL": f"{self.apis.url}/gitlab/api/v4",
            "CI_PROJECT_ID": "42",
            "CI_DEFAULT_BRANCH": "main",
            "CI_JOB_TOKEN": self.job_token,
        }
        stash = self.root / f"artifacts-{self.n}"
        stash.mkdir()
        return GitLabCI(load(GITLAB_CI), base | predefined, project, stash, frozenset({"NETBOX_TOKEN", "AWX_TOKEN"}))

    def run(self, ci: GitHubActions | GitLabCI, ref: str, setup: Any = None) -> dict[str, Any]:
        """Every job the event selects, each in a fresh clone of ``ref``; {job name: Job}."""
        jobs = {}
        for name in ci.selected():
            workdir = self.repo.clone(self.workdir(name), ref)
            if setup is not None:
                setup(workdir)
            jobs[name] = job = ci.run_job(name, workdir)
            self.outputs.append(job.output)
            self.workdirs.append(workdir)
            if job.rc != 0:
                break
        return jobs

    def secrets(self) -> list[str]:
        return [
            self.nb.token,
            self.nb.token.split(".", 1)[-1],
            self.review_token,
            self.review_token.split(".", 1)[-1],
            self.apis.github_token,
            self.apis.gitlab_token,
            self.apis.awx_token,
            self.job_token,
            self.state_password,
        ]


def read_only_token(nb: Instance) -> str:
    """A NetBox v2 token of the admin without write permission (``write_enabled: false``), as ``nbt_<key>.<token>``
    (NetBox REST API ``POST /api/users/tokens/``: the plaintext is in the answer once)."""
    api = pynetbox.api(nb.url, token=nb.token)
    admin = api.users.users.get(username="admin")
    created = api.users.tokens.create(user=admin.id, write_enabled=False, description="hwaac review (read only)")
    return f"nbt_{created.key}.{created.token}"


def github_merge_checkout(repo: FabricRepo, head: str) -> Any:
    """actions/checkout of a pull_request event: refs/pull/N/merge, the head merged into the base's tip."""

    def merge(workdir: Path) -> None:
        git(workdir, "checkout", "-q", "--detach", "origin/main")
        git(workdir, "merge", "-q", "--no-ff", "--no-edit", head)

    return merge


def gitlab_mr_checkout(workdir: Path) -> None:
    """A merge request pipeline's clone fetches the pipeline's ref, not the target branch."""
    git(workdir, "update-ref", "-d", "refs/remotes/origin/main")


def leaked(texts: list[str], workdirs: list[Path], states: list[bytes], values: list[str]) -> list[str]:
    """Where any of ``values`` appears: the jobs' output, every file they left (saved plans unzipped), the states."""
    found = [f"output #{i}" for i, t in enumerate(texts) if any(v in t for v in values)]
    for w in workdirs:
        for f in w.rglob("*"):
            if not f.is_file() or ".git" in f.relative_to(w).parts:
                continue
            blobs = [f.read_bytes()]
            if zipfile.is_zipfile(f):
                with zipfile.ZipFile(f) as z:
                    blobs += [z.read(n) for n in z.namelist()]
            found += [str(f) for b in blobs if any(v.encode() in b for v in values)]
    return found + [f"state #{i}" for i, s in enumerate(states) if any(v.encode() in s for v in values)]
