"""A local stand-in for the HTTP APIs the CI templates call (the real ones are unreachable from the tests), on one
loopback port. Each answers with the status and shape its documentation gives and records every request:

- GitHub REST, issue comments (a pull request is an issue): list ``GET /repos/{o}/{r}/issues/{n}/comments``
  (200, a JSON array, ``per_page``/``page``), create ``POST`` there (201), update
  ``PATCH /repos/{o}/{r}/issues/comments/{id}`` (200); https://docs.github.com/en/rest/issues/comments.
  Base URL: ``{url}/github`` (the runner's ``GITHUB_API_URL``).
- GitLab notes of a merge request: ``GET/POST /projects/{id}/merge_requests/{iid}/notes`` (200 array / 201),
  ``PUT .../notes/{note_id}`` (200); https://docs.gitlab.com/api/notes/#merge-requests. Header ``PRIVATE-TOKEN``.
- GitLab-managed Terraform state, as Terraform's ``http`` backend speaks to it: ``GET`` the state (200, or 204 when
  there is none), ``POST ?ID=<lock id>`` to store, ``POST .../lock`` (200, or 409 with the holder's lock info) and
  ``DELETE .../lock``; basic auth ``gitlab-ci-token:<CI_JOB_TOKEN>``;
  https://docs.gitlab.com/user/infrastructure/iac/terraform_state/,
  https://developer.hashicorp.com/terraform/language/backend/http. Base URL: ``{url}/gitlab/api/v4``.
- AWX: ``GET /api/v2/job_templates/?name=`` (a page: count, results); ``GET .../{id}/launch/``
  (``ask_variables_on_launch``, ``survey_enabled``) and ``GET .../{id}/survey_spec/`` (``spec``: each question's
  ``variable``); ``POST .../{id}/launch/`` (201 with ``job``, ``ignored_fields`` and the job's fields; AWX's
  ``JobTemplateLaunch.post`` in awx/api/views/__init__.py: variables the template does not prompt for are
  ignored); the same for ``workflow_job_templates`` (``workflow_job``); ``GET /api/v2/jobs/{id}/`` (``status``:
  pending, running, then successful or failed); ``GET /api/v2/jobs/{id}/stdout/?format=txt``. Base URL
  ``{url}/awx``.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Template:
    """An AWX job template (or workflow job template), the variables its survey asks for (``None``: it prompts
    for variables on launch, any are taken) and how its jobs end."""

    id: int
    name: str
    kind: str = "job_template"
    outcome: str = "successful"
    survey: frozenset[str] | None = None


@dataclass
class Apis:
    """What the fake services hold, and the tokens they accept."""

    github_token: str
    gitlab_token: str
    awx_token: str
    state_auth: set[tuple[str, str]]  # (user, password) pairs the Terraform state accepts
    templates: list[Template] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    comments: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # issue or MR path -> its comments
    states: dict[str, bytes] = field(default_factory=dict)
    locks: dict[str, dict[str, Any]] = field(default_factory=dict)
    jobs: dict[int, dict[str, Any]] = field(default_factory=dict)
    url: str = ""
    _ids: Iterator[int] = field(default_factory=lambda: iter(range(1001, 10**6)))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def seen(self, method: str, pattern: str) -> list[Request]:
        """The recorded requests of ``method`` whose path matches the regular expression ``pattern``."""
        return [r for r in self.requests if r.method == method and re.fullmatch(pattern, r.path)]

    # --- dispatch ---------------------------------------------------------------------------------------------

    def handle(self, req: Request) -> tuple[int, Any]:
        with self._lock:
            self.requests.append(req)
            for prefix, handler in (
                ("/github/", self._github),
                ("/gitlab/api/v4/", self._gitlab),
                ("/awx/api/v2/", self._awx),
            ):
                if req.path.startswith(prefix):
                    return handler(req, req.path[len(prefix) - 1 :])
            return 404, {"message": "Not Found"}

    # --- GitHub -----------------------------------------------------------------------------------------------

    def _github(self, req: Request, path: str) -> tuple[int, Any]:
        if req.headers.get("authorization") != f"Bearer {self.github_token}":
            return 401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}
        if m := re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments", path):
            thread = self.comments.setdefault(f"github:{m[1]}#{m[2]}", [])
            if req.method == "GET":
                return 200, _page(thread, req.query)
            if req.method == "POST":
                cid = next(self._ids)
                comment = {
                    "id": cid,
                    "body": req.json()["body"],
                    "user": {"login": "github-actions[bot]", "type": "Bot"},
                    "html_url": f"https://github.com/{m[1]}/pull/{m[2]}#issuecomment-{cid}",
                }
                thread.append(comment)
                return 201, comment
        if (m := re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/comments/(\d+)", path)) and req.method == "PATCH":
            for key, thread in self.comments.items():
                for comment in thread:
                    if key.startswith(f"github:{m[1]}#") and comment["id"] == int(m[2]):
                        comment["body"] = req.json()["body"]
                        return 200, comment
        return 404, {"message": "Not Found"}

    # --- GitLab -----------------------------------------------------------------------------------------------

    def _gitlab(self, req: Request, path: str) -> tuple[int, Any]:
        if m := re.fullmatch(r"/projects/(\d+)/terraform/state/([\w.-]+)(/lock)?", path):
            return self._state(req, f"{m[1]}/{m[2]}", bool(m[3]))
        if req.headers.get("private-token") != self.gitlab_token:
            return 401, {"message": "401 Unauthorized"}
        if m := re.fullmatch(r"/projects/(\d+)/merge_requests/(\d+)/notes(?:/(\d+))?", path):
            thread = self.comments.setdefault(f"gitlab:{m[1]}!{m[2]}", [])
            if m[3] is None and req.method == "GET":
                return 200, _page(thread, req.query)
            if m[3] is None and req.method == "POST":
                note = {
                    "id": next(self._ids),
                    "body": req.json()["body"],
                    "system": False,
                    "noteable_type": "MergeRequest",
                    "noteable_iid": int(m[2]),
                    "author": {"username": "project_42_bot"},
                }
                thread.append(note)
                return 201, note
            if m[3] is not None and req.method == "PUT":
                for note in thread:
                    if note["id"] == int(m[3]):
                        note["body"] = req.json()["body"]
                        return 200, note
        return 404, {"message": "404 Not found"}

    def _state(self, req: Request, name: str, lock: bool) -> tuple[int, Any]:
        user, _, password = (
            base64.b64decode(req.headers.get("authorization", "Basic ").split(" ", 1)[1] or b"").decode().partition(":")
        )
        if (user, password) not in self.state_auth:
            return 401, {"message": "401 Unauthorized"}
        held = self.locks.get(name)
        if lock and req.method == "POST":
            if held is not None:
                return 409, held
            self.locks[name] = req.json()
            return 200, {}
        if lock and req.method == "DELETE":
            self.locks.pop(name, None)
            return 200, {}
        if req.method == "GET":
            return (200, self.states[name]) if name in self.states else (204, None)
        if req.method == "POST":
            if held is not None and req.query.get("ID") != held.get("ID"):
                return 409, held
            self.states[name] = req.body
            return 200, {}
        return 405, {"message": "405 Method Not Allowed"}

    # --- AWX --------------------------------------------------------------------------------------------------

    def _awx(self, req: Request, path: str) -> tuple[int, Any]:
        if req.headers.get("authorization") != f"Bearer {self.awx_token}":
            return 401, {"detail": "Authentication credentials were not provided."}
        if (m := re.fullmatch(r"/(job_templates|workflow_job_templates)/", path)) and req.method == "GET":
            kind = m[1][:-1]
            found = [t for t in self.templates if t.kind == kind and t.name == req.query.get("name")]
            return 200, {
                "count": len(found),
                "next": None,
                "previous": None,
                "results": [
                    {"id": t.id, "type": kind, "name": t.name, "url": f"/api/v2/{m[1]}/{t.id}/"} for t in found
                ],
            }
        if m := re.fullmatch(r"/(job_templates|workflow_job_templates)/(\d+)/(launch|survey_spec)/", path):
            kind = m[1][:-1]
            t = next((t for t in self.templates if t.kind == kind and t.id == int(m[2])), None)
            if t is None:
                return 404, {"detail": "Not found."}
            if m[3] == "survey_spec" and req.method == "GET":
                questions = [
                    {"variable": v, "question_name": v, "type": "text", "required": False}
                    for v in sorted(t.survey or ())
                ]
                return 200, {"name": t.name, "description": "", "spec": questions}
            if req.method == "GET":
                return 200, {
                    "ask_variables_on_launch": t.survey is None,
                    "survey_enabled": t.survey is not None,
                    "can_start_without_user_input": True,
                    "passwords_needed_to_start": [],
                    "variables_needed_to_start": [],
                }
            if req.method == "POST":
                sent = req.json().get("extra_vars", {})
                taken = {k: v for k, v in sent.items() if t.survey is None or k in t.survey}
                ignored = {k: v for k, v in sent.items() if k not in taken}
                job_key = "job" if kind == "job_template" else "workflow_job"
                jid = next(self._ids)
                self.jobs[jid] = {"template": t, "gets": 0, "extra_vars": taken}
                return 201, {
                    job_key: jid,
                    "ignored_fields": {"extra_vars": ignored} if ignored else {},
                    "id": jid,
                    "type": job_key,
                    "url": f"/api/v2/{job_key}s/{jid}/",
                    "status": "pending",
                    "name": t.name,
                    "extra_vars": json.dumps(taken),
                }
        if m := re.fullmatch(r"/(jobs|workflow_jobs)/(\d+)/(stdout/)?", path):
            job = self.jobs.get(int(m[2]))
            if job is None:
                return 404, {"detail": "Not found."}
            if m[3]:
                return 200, "PLAY [Push SONiC config_db] ***\nfatal: [leaf-p0-su00-r0]: FAILED! => BGP gate\n"
            job["gets"] += 1
            status = ("pending", "running")[job["gets"] - 1] if job["gets"] <= 2 else job["template"].outcome
            return 200, {
                "id": int(m[2]),
                "type": m[1][:-1],
                "status": status,
                "failed": status in ("failed", "error"),
                "url": f"/api/v2/{m[1]}/{m[2]}/",
            }
        return 404, {"detail": "Not found."}


def _page(items: list[dict[str, Any]], query: dict[str, str]) -> list[dict[str, Any]]:
    per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
    return items[(page - 1) * per_page : page * per_page]


def _handler(apis: Apis) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            parts = urlsplit(self.path)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            req = Request(
                self.command,
                parts.path,
                {k: v[-1] for k, v in parse_qs(parts.query).items()},
                {k.lower(): v for k, v in self.headers.items()},
                body,
            )
            status, payload = apis.handle(req)
            if isinstance(payload, bytes | str):
                data = payload.encode() if isinstance(payload, str) else payload
            else:
                data = b"" if payload is None else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain" if isinstance(payload, str) else "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the test reads apis.requests
            pass

    return Handler


@contextmanager
def serve(apis: Apis) -> Iterator[Apis]:
    """``apis`` served on a free loopback port (``apis.url``) for the duration of the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(apis))
    apis.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield apis
    finally:
        server.shutdown()
        server.server_close()
