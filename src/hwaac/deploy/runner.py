"""One ``hwaac deploy`` run: the playbook through ``ansible_runner.run`` in a private data dir of its own (a temporary
folder, removed afterwards), its events fed to the accounting and the display as they come, then the artifacts
copied to the artifacts folder; the secrets of the environment and of ``-e`` are masked in both
(:mod:`hwaac.deploy.artifacts`).

Secrets such as ``NETBOX_TOKEN`` reach ansible-playbook through the process environment only: no ``env/`` files
are written (``suppress_env_files``). ansible-runner's ``command`` file records the whole environment; it is
copied to the artifacts with only ``PATH``, ``ANSIBLE_*`` and ``RUNNER_*`` of the environment kept (secrets masked
there too), and the original goes with the private data dir.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hwaac.deploy.accounting import Accounting, Note
from hwaac.deploy.artifacts import copy_artifacts, mask_value, secrets
from hwaac.deploy.errors import DeployUsageError
from hwaac.deploy.playbooks import COLLECTION
from hwaac.deploy.request import DeployRequest, extra_var_secrets

CALLBACKS = Path(__file__).resolve().parent / "callback"
IDENT = "run"
ANSIBLE_CFG_PLACES = ("ansible.cfg", "~/.ansible.cfg", "/etc/ansible/ansible.cfg")

OnNote = Callable[[Note, Accounting], None]


@dataclass(frozen=True)
class Outcome:
    """What a run did: ansible-runner's ``status`` (successful, failed, canceled, timeout) and ``rc``, the seconds,
    the summary written to the artifacts, the artifacts folder, how often each secret was masked there, and the
    error of the display when it failed (the run went on without it)."""

    status: str
    rc: int
    elapsed: float
    summary: dict[str, Any]
    artifacts: Path
    masked: dict[str, int]
    display_error: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "successful" and self.rc == 0


def _prepend(value: str, existing: str | None) -> str:
    parts = [value] + [p for p in (existing or "").split(os.pathsep) if p and p != value]
    return os.pathsep.join(parts)


def run_env(environ: Mapping[str, str], cwd: Path) -> dict[str, str]:
    """The settings hwaac deploy adds to the run's environment (nothing secret: these are passed as ``envvars``):
    this interpreter's folder first on ``PATH`` (its ansible-playbook and hwaac), the collection of this checkout
    and the ``hwaac_batches`` callback on their search paths, no colour in the artifacts, and the collection's
    ansible.cfg when ansible would find none."""
    env = {
        "PATH": _prepend(str(Path(sys.executable).parent), environ.get("PATH")),
        "ANSIBLE_COLLECTIONS_PATH": _prepend(str(COLLECTION), environ.get("ANSIBLE_COLLECTIONS_PATH")),
        "ANSIBLE_CALLBACK_PLUGINS": _prepend(str(CALLBACKS), environ.get("ANSIBLE_CALLBACK_PLUGINS")),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORCE_COLOR": "0",
    }
    places = [cwd / ANSIBLE_CFG_PLACES[0], *(Path(p).expanduser() for p in ANSIBLE_CFG_PLACES[1:])]
    if "ANSIBLE_CONFIG" not in environ and not any(p.is_file() for p in places):
        env["ANSIBLE_CONFIG"] = str(COLLECTION / "ansible.cfg")
    return env


def cmdline(request: DeployRequest) -> str:
    """ansible-playbook's options that ansible-runner has no parameter for: ``--check``, ``--diff``, the ``-e``s."""
    args = (["--check"] if request.check else []) + (["--diff"] if request.diff else []) + request.extra_args
    return shlex.join(args)


@contextlib.contextmanager
def _cancel_on_signals() -> Iterator[threading.Event]:
    """SIGINT and SIGTERM ask ansible-runner to stop the run (its ``cancel_callback``) instead of killing hwaac,
    so the artifacts are still copied and the private data dir removed."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s in previous:
        signal.signal(s, lambda *_: stop.set())
    try:
        yield stop
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def deploy(request: DeployRequest, *, on_note: OnNote = lambda _n, _a: None) -> Outcome:
    """Run ``request`` with ansible-runner in this process's environment (which ansible-runner passes on); ``on_note``
    gets what each event changed (for the display). ``on_note`` is not called again once it raised: the run goes on
    without it, and the artifacts are copied and the private data dir removed whatever it did.

    Raises:
        DeployUsageError: no ansible-playbook to run.
    """
    import ansible_runner

    environ = dict(os.environ)
    cwd = Path.cwd()
    envvars = run_env(environ, cwd)
    if shutil.which("ansible-playbook", path=envvars["PATH"]) is None:
        raise DeployUsageError(
            "ansible-playbook not found on PATH: hwaac deploy runs it through ansible-runner "
            "(pip install 'ansible-core>=2.21,<2.22', in hwaac's dependencies)"
        )
    hidden = secrets(environ) | extra_var_secrets(request.extra_args)
    acc = Accounting()
    status = {"status": "starting"}
    display_failed: list[Exception] = []

    def tell(notes: list[Note]) -> None:
        # ansible-runner does not guard its event handler: an error raised there ends the run in the middle of a
        # rollout, or (an OSError such as a closed stderr's) drops the event from job_events
        for note in notes:
            if display_failed:
                return
            try:
                on_note(note, acc)
            except Exception as exc:
                display_failed.append(exc)

    def on_event(event: dict[str, Any]) -> bool:
        # masked before the accounting, so that what the display and the recap print, and the summary, never hold
        # a secret (not even in part, where a message is cut short)
        tell(acc.feed(mask_value(event, hidden)))
        return True  # ansible-runner keeps the event (unmasked: the copy masks it) in job_events

    def on_status(data: dict[str, Any], runner_config: Any = None) -> None:
        status["status"] = str(data.get("status", ""))

    started = datetime.now(UTC)
    t0 = time.monotonic()
    private = Path(tempfile.mkdtemp(prefix="hwaac-deploy-"))
    rc, final = -1, "failed"
    try:
        try:
            with _cancel_on_signals() as stop:
                result = ansible_runner.run(
                    private_data_dir=str(private),
                    ident=IDENT,
                    playbook=str(request.playbook),
                    project_dir=str(cwd),
                    inventory=request.inventories or None,
                    limit=request.limit,
                    extravars=request.batch_vars or None,
                    cmdline=cmdline(request) or None,
                    envvars=envvars,
                    suppress_env_files=True,
                    quiet=True,
                    event_handler=on_event,
                    status_handler=on_status,
                    cancel_callback=stop.is_set,
                )
            rc = result.rc if isinstance(result.rc, int) else -1
            final = str(result.status or status["status"])
        finally:
            tell(acc.close())
            elapsed = time.monotonic() - t0
            summary = {
                "playbook": request.name,
                "playbook_path": str(request.playbook),
                "status": final,
                "rc": rc,
                "elapsed_s": round(elapsed, 3),
                "started": started.isoformat(timespec="seconds"),
                "check": request.check,
                "diff": request.diff,
                "limit": request.limit,
                "inventories": request.inventories,
                "batch_size": request.batch_vars,
                **acc.summary(),
            }
            masked = copy_artifacts(private / "artifacts" / IDENT, request.artifacts, hidden, summary)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    return Outcome(
        status=final,
        rc=rc,
        elapsed=elapsed,
        summary=summary,
        artifacts=request.artifacts,
        masked=masked,
        display_error=repr(display_failed[0]) if display_failed else "",
    )
