"""Jobs run as AWX 24.6.1 runs them, for the tests: the inventory update of an inventory source, the private
data directory RunJob builds (awx/main/tasks/jobs.py), and the run AWXReceptorJob sends over receptor
(awx/main/tasks/receptor.py): ``ansible-runner transmit DIR | ansible-runner worker --delete | ansible-runner
process DIR``. docs/awx.md, "How the tests run jobs as AWX does", tells each part."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.integration.awx_controller import extravars_yaml, launch_vars

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# what of the repository an AWX project of the fabric holds (the collection in place and the fabric intents); the
# Python package hwaac and the tools are the execution environment's (awx/ee), here the virtual environment's
PROJECT_PARTS = (
    "ansible.cfg",
    "galaxy.yml",
    "meta",
    "playbooks",
    "roles",
    "plugins",
    "extensions",
    "files",
    "inventory",
    "cdktf",
    "awx",
    "ansible_collections",
)
# AWX settings that build_env passes to every job (awx/settings/defaults.py: the ANSIBLE_* settings)
AWX_ANSIBLE_SETTINGS = {
    "ANSIBLE_HOST_KEY_CHECKING": "False",
    "ANSIBLE_PARAMIKO_RECORD_HOST_KEYS": "False",
    "ANSIBLE_FORCE_COLOR": "True",
    "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True",
}
CONTAINER_ROOT = "/runner"


def project(dest: Path) -> Path:
    """A project folder as AWX's project update leaves it: the repository's files (tracked, and new ones not
    ignored), without .git; symlinks kept (make_local_copy copies with symlinks=True)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *PROJECT_PARTS],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    for rel in sorted({p for p in listed.decode().split("\0") if p}):
        src, dst = REPO / rel, dest / rel
        if not src.exists() and not src.is_symlink():  # deleted in the working tree
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            dst.symlink_to(os.readlink(src))
        else:
            shutil.copy2(src, dst)
    return dest


def collections_paths(project_dir: Path) -> str:
    """ANSIBLE_COLLECTIONS_PATH as RunJob.build_env makes it: the project's requirements folder, the project's
    ansible.cfg collections_path, then Ansible's defaults."""
    paths = ["~/.ansible/collections", "/usr/share/ansible/collections"]
    for line in (project_dir / "ansible.cfg").read_text().splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "collections_path" and value.split("#")[0].strip() not in paths:
            paths.insert(0, value.split("#")[0].strip())
    return os.pathsep.join([f"{CONTAINER_ROOT}/requirements_collections", *paths])


def inventory_update(project_dir: Path, source_path: str, env: dict[str, str], work: Path) -> dict[str, Any]:
    """The inventory update of an scm inventory source (RunInventoryUpdate.build_args): ansible-inventory --list
    --export -i project/SOURCE_PATH --playbook-dir ..., run in the project with the source's credential env."""
    work.mkdir(parents=True, exist_ok=True)
    out = work / "output.json"
    source = project_dir / source_path
    run_env = {**_base_env(), **AWX_ANSIBLE_SETTINGS, **env, "ANSIBLE_COLLECTIONS_PATH": collections_paths(project_dir)}
    r = subprocess.run(
        [
            str(BIN / "ansible-inventory"),
            "--list",
            "--export",
            "-i",
            str(source),
            "--output",
            str(out),
            "--playbook-dir",
            str(source.parent),
        ],
        cwd=project_dir,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if r.returncode != 0:
        raise AssertionError(f"inventory update of {source_path} failed ({r.returncode}): {r.stderr[-3000:]}")
    return json.loads(out.read_text())


def script_data(export: dict[str, Any], variables: dict[str, Any] | None = None) -> dict[str, Any]:
    """The inventory a job gets (Inventory.get_script_data with hostvars and towervars) after AWX imported
    ``export``: inventory variables (the imported 'all' vars under the inventory's own ``variables``), every group
    with its hosts, children and vars, hosts with their vars plus remote_host_/remote_tower_ enabled and id."""
    groups = {g: d for g, d in export.items() if g not in ("_meta", "all", "ungrouped")}
    hostvars = export.get("_meta", {}).get("hostvars", {})
    grouped = {h for d in groups.values() for h in d.get("hosts", [])}
    data: dict[str, Any] = {"all": {"hosts": sorted(h for h in hostvars if h not in grouped)}}
    inv_vars = {**export.get("all", {}).get("vars", {}), **(variables or {})}
    if inv_vars:
        data["all"]["vars"] = inv_vars
    for name in sorted(groups):
        info = {k: groups[name][k] for k in ("hosts", "children", "vars") if groups[name].get(k)}
        if info:
            data[name] = info
    if groups:
        data["all"]["children"] = sorted(groups)
    meta: dict[str, Any] = {}
    for pk, name in enumerate(sorted(hostvars), start=1):
        meta[name] = {
            **hostvars[name],
            "remote_host_enabled": "true",
            "remote_host_id": pk,
            "remote_tower_enabled": "true",
            "remote_tower_id": pk,
        }
    data["_meta"] = {"hostvars": meta}
    return data


@dataclass
class Job:
    """One job's private data directory, ready to transmit."""

    ident: int
    template: dict[str, Any]
    dir: Path
    extra_vars: dict[str, Any]
    env: dict[str, str]
    args: list[str]

    @property
    def worker_dir(self) -> Path:
        """The worker's private data directory (an execution node's copy of the transmitted one)."""
        return self.dir.parent / f"{self.dir.name}-worker"


def build_job(
    ident: int,
    template: dict[str, Any],
    folder: Path,
    project_dir: Path,
    inventory: dict[str, Any],
    *,
    answers: dict[str, Any] | None = None,
    credential_env: dict[str, str] | None = None,
    job_type: str | None = None,
    limit: str | None = None,
    diff_mode: bool | None = None,
) -> Job:
    """The private data directory of a job of ``template`` launched with ``answers`` (and the prompts job_type,
    limit, diff_mode) as RunJob.run builds it: project/ (a copy of the synced project), inventory/hosts (the
    inventory as a script), env/extravars, env/envvars (build_env and the credentials' injected env),
    env/cmdline (build_args), env/settings (runner settings), cp/."""
    folder.mkdir(parents=True)
    folder.chmod(0o700)
    for sub in ("inventory", "env"):
        (folder / sub).mkdir()
    shutil.copytree(project_dir, folder / "project", symlinks=True, ignore=shutil.ignore_patterns(".git"))
    (folder / "cp").mkdir(mode=0o700)

    extra = launch_vars(template, answers)
    meta = {
        f"{p}_{k}": v
        for p in ("awx", "tower")
        for k, v in {
            "job_id": ident,
            "job_launch_type": "manual",
            "inventory_id": 1,
            "inventory_name": template["inventory"],
            "project_revision": "",
            "project_scm_branch": "",
            "job_template_id": ident,
            "job_template_name": template["name"],
        }.items()
    }
    _write(folder / "env" / "extravars", extravars_yaml({**extra, **meta}, template.get("extra_vars", {})))

    script = f"#! /usr/bin/env python3\n# -*- coding: utf-8 -*-\nprint({json.dumps(inventory)!r})\n"
    _write(folder / "inventory" / "hosts", script, mode=0o700)

    env = {
        **AWX_ANSIBLE_SETTINGS,
        "AWX_PRIVATE_DATA_DIR": str(folder),
        "JOB_ID": str(ident),
        "INVENTORY_ID": "1",
        "PROJECT_REVISION": "",
        "ANSIBLE_RETRY_FILES_ENABLED": "False",
        "MAX_EVENT_RES": "700000",
        "AWX_HOST": "https://awx.example.net",
        "ANSIBLE_SSH_CONTROL_PATH_DIR": str(folder / "cp"),
        "ANSIBLE_COLLECTIONS_PATH": collections_paths(project_dir),
        "ANSIBLE_ROLES_PATH": f"{CONTAINER_ROOT}/requirements_roles:~/.ansible/roles:/usr/share/ansible/roles:"
        "/etc/ansible/roles",
        **(credential_env or {}),
    }
    _write(folder / "env" / "envvars", json.dumps(env))

    args = []
    if (job_type or template.get("job_type", "run")) == "check":
        args.append("--check")
    args += ["-u", "root"]
    if diff_mode if diff_mode is not None else template.get("diff_mode", False):
        args.append("--diff")
    if template.get("forks"):
        args.append(f"--forks={template['forks']}")
    if limit or template.get("limit"):
        args += ["-l", limit or template["limit"]]
    if template.get("verbosity"):
        args.append("-" + "v" * min(5, template["verbosity"]))
    _write(folder / "env" / "cmdline", " ".join(args))
    _write(
        folder / "env" / "settings",
        json.dumps(
            {"job_timeout": template.get("timeout", 0), "suppress_ansible_output": True, "suppress_output_file": True}
        ),
    )
    return Job(ident, template, folder, extra, env, args)


def _write(path: Path, text: str, mode: int = 0o600) -> None:
    path.touch(mode=mode)
    path.write_text(text)


def _base_env() -> dict[str, str]:
    """The worker's own environment (an execution node's): this one without Ansible or NetBox settings, the
    virtual environment's tools first on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "NETBOX_", "CONTROLLER_"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


@dataclass
class JobResult:
    """What AWX would record of a job: the runner's status and rc, its events, the stdout of the events."""

    job: Job
    status: str
    rc: int
    events: list[dict[str, Any]] = field(default_factory=list)
    stdout: str = ""
    seconds: float = 0.0
    stream_errors: str = ""

    def ok_tasks(self) -> set[str]:
        """Names of the tasks with a runner_on_ok event."""
        return {e["event_data"].get("task", "") for e in self.events if e["event"] == "runner_on_ok"}

    def results(self, task: str) -> list[dict[str, Any]]:
        """The module results of ``task`` as its events carry them (one per loop item, else one per host)."""
        items = [
            e["event_data"]["res"]
            for e in self.events
            if e["event"] == "runner_item_on_ok" and e["event_data"].get("task") == task
        ]
        return items or [
            e["event_data"]["res"]
            for e in self.events
            if e["event"] == "runner_on_ok" and e["event_data"].get("task") == task
        ]

    def by_event(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == name]

    def stats(self) -> dict[str, dict[str, int]]:
        """playbook_on_stats: counter -> host -> count."""
        (stats,) = self.by_event("playbook_on_stats")
        return {k: v for k, v in stats["event_data"].items() if isinstance(v, dict)}


def run_job(job: Job, timeout: float = 600) -> JobResult:
    """The job through ansible-runner transmit | worker | process, as AWXReceptorJob runs it (the worker with its
    own private data directory, deleted after the run); the processed artifacts land in DIR/artifacts/<ident>."""
    env = _base_env()
    playbook = job.template["playbook"]
    runner = str(BIN / "ansible-runner")
    log = job.dir.parent / f"{job.dir.name}.stream.log"  # transmit's and the worker's own messages
    start = time.monotonic()
    with log.open("wb") as errors:
        transmit = subprocess.Popen(
            [runner, "transmit", str(job.dir), "-p", playbook, "--ident", str(job.ident)],
            stdout=subprocess.PIPE,
            stderr=errors,
            env=env,
        )
        worker = subprocess.Popen(
            [runner, "worker", "--private-data-dir", str(job.worker_dir), "--delete"],
            stdin=transmit.stdout,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=env,
        )
        process = subprocess.Popen(
            [runner, "process", str(job.dir), "--ident", str(job.ident)],
            stdin=worker.stdout,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            text=True,
        )
        assert transmit.stdout is not None and worker.stdout is not None
        transmit.stdout.close()  # the worker and the processor hold the pipes now
        worker.stdout.close()
        try:
            output, _ = process.communicate(timeout=timeout)
            for p in (transmit, worker):  # the worker deletes its private data directory as it exits
                p.wait(timeout=60)
        finally:
            for p in (transmit, worker, process):
                if p.poll() is None:
                    p.kill()
                p.wait()
    artifacts = job.dir / "artifacts" / str(job.ident)
    events = sorted(
        (json.loads(p.read_text()) for p in (artifacts / "job_events").glob("*.json")), key=lambda e: e["counter"]
    )
    status = (artifacts / "status").read_text().strip() if (artifacts / "status").exists() else "error"
    rc = int((artifacts / "rc").read_text()) if (artifacts / "rc").exists() else -1
    return JobResult(
        job,
        status,
        rc,
        events,
        "\n".join(e.get("stdout", "") for e in events if e.get("stdout")),
        time.monotonic() - start,
        log.read_text(errors="replace") + output,
    )


def files_holding(root: Path, secret: str) -> list[str]:
    """Paths (relative to ``root``) of the files under it whose bytes hold ``secret``."""
    needle = secret.encode()
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink() and needle in p.read_bytes()
    )


def assert_successful(result: JobResult, tasks: set[str]) -> None:
    """AWX's verdict of the job: successful, rc 0, the play started and ended with no failed or unreachable host,
    ``tasks`` reported ok; the token is in no file the job wrote but artifacts/<id>/command."""
    tail = result.stdout[-4000:] + result.stream_errors[-2000:]
    assert (result.status, result.rc) == ("successful", 0), tail
    assert result.by_event("playbook_on_start"), tail
    stats = result.stats()
    assert not stats.get("failures") and not stats.get("dark"), stats
    assert sum(stats.get("ok", {}).values()) > 0
    missing = tasks - result.ok_tasks()
    assert not missing, f"no runner_on_ok for {missing}: {sorted(result.ok_tasks())}"
    assert not result.job.worker_dir.exists()  # the worker's copy is deleted (--delete), as on an execution node
    token = result.job.env.get("NETBOX_TOKEN")
    if token:
        assert token not in result.stdout + result.stream_errors and token not in json.dumps(result.events)
        assert files_holding(result.job.dir / "artifacts", token) == [f"{result.job.ident}/command"]
        assert files_holding(result.job.dir / "project", token) == []
