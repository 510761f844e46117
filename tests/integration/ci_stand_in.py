"""What the tests of hwaac-ci.sh's steps share: the AWX templates, GitHub, GitLab and AWX stand-ins
(ci_fake_apis.py) and the environment a step runs in."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from awx_controller import load_objects
from ci_fake_apis import Apis, Template, serve
from ci_pipeline import REPO, base_env, pull_request_event, write_event

BIN = Path(sys.executable).parent
MARKER = "<!-- hwaac-review: demo -->"
RENDER = {"fabric_deploy_render": "netbox"}


def run(argv: list[str], cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=300, check=False, env={**os.environ, "NO_COLOR": "1"}
    )


def awx_survey(name: str, objects: str = "awx_job_templates") -> frozenset[str]:
    """The variables the survey of the template ``name`` in awx/objects/ asks for (what AWX takes at launch)."""
    objs = load_objects(hwaac_awx_netbox_url="https://netbox.example.net", hwaac_awx_netbox_token="unused")
    found = [t for t in objs[objects] if t["name"] == name]
    assert found, f"awx/objects/ has no {objects} {name!r}: the CI templates launch it"
    return frozenset(q["variable"] for q in found[0]["survey_spec"]["spec"])


TEMPLATES = [
    Template(11, "hwaac fabric deploy", survey=awx_survey("hwaac fabric deploy")),
    Template(12, "hwaac fabric deploy (broken)", outcome="failed"),
    Template(
        21,
        "hwaac rollout",
        kind="workflow_job_template",
        survey=awx_survey("hwaac rollout", "awx_workflow_job_templates"),
    ),
]


def serve_apis() -> Iterator[Apis]:
    """The stand-in APIs with fresh tokens, served while the caller (a module-scoped fixture) holds them."""
    fake = Apis(
        github_token=f"ghs_{secrets.token_hex(16)}",
        gitlab_token=f"glpat-{secrets.token_hex(10)}",
        awx_token=secrets.token_hex(15),
        state_auth=set(),
        templates=TEMPLATES,
    )
    with serve(fake):
        yield fake


def step_env(apis: Apis, platform: str, ci_dir: Path, **more: str) -> dict[str, str]:
    env = {
        "HWAAC_FABRIC": "demo",
        "HWAAC_CI_DIR": str(ci_dir),
        "HWAAC_AWX_POLL": "0.05",
        "AWX_HOST": f"{apis.url}/awx",
        "AWX_TOKEN": apis.awx_token,
        "GITHUB_SHA": "c0ffee" * 6 + "beef",
    }
    if platform == "github":
        event = pull_request_event(7, "main", "qos", "ab" * 20, "acme/fabric")
        event_path = write_event(ci_dir.parent / "event.json", event)
        env |= {
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_API_URL": f"{apis.url}/github",
            "GITHUB_REPOSITORY": "acme/fabric",
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_TOKEN": apis.github_token,
        }
    elif platform == "gitlab":
        env |= {
            "GITLAB_CI": "true",
            "CI": "true",
            "CI_API_V4_URL": f"{apis.url}/gitlab/api/v4",
            "CI_PROJECT_ID": "42",
            "CI_MERGE_REQUEST_IID": "5",
            "HWAAC_GITLAB_TOKEN": apis.gitlab_token,
        }
    return base_env(env | more)
