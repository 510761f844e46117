"""``hwaac deploy`` running a small playbook on localhost through ansible-runner: a progress display that fails
(stderr closed, a rendering error) neither cuts the rollout short nor loses job events, and the artifacts are
still copied and the private data dir removed; what the display and the recap print of the run shows the secrets
of the environment and of ``-e`` masked; a closed output pipe does not turn a failed run into a success."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from rich.errors import MarkupError

from hwaac.cli import main
from hwaac.deploy import progress
from hwaac.deploy.accounting import Accounting, Note
from hwaac.deploy.artifacts import MASK

PLAYBOOK = """- name: Two tasks on localhost
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Say hello
      ansible.builtin.debug:
        msg: hello
    - name: Refuse
      ansible.builtin.fail:
        msg: "path [/etc/x] refused [/]"
"""

SECRETS = """- name: "Deploy as {{ db_password }}"
  hosts: localhost
  gather_facts: false
  tasks:
    - name: "Log in with {{ db_password }}"
      ansible.builtin.fail:
        msg: "token {{ lookup('ansible.builtin.env', 'NETBOX_TOKEN') }} and password {{ db_password }} refused"
"""


class FailingDisplay:
    """A display that raises ``error`` at the first note of kind ``at``."""

    def __init__(self, at: str, error: Exception) -> None:
        self.at, self.error = at, error
        self.kinds: list[str] = []

    def note(self, note: Note, acc: Accounting) -> None:
        self.kinds.append(note.kind)
        if note.kind == self.at:
            raise self.error

    def close(self) -> None:
        pass


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where hwaac deploy makes its private data dir (ansible-playbook keeps the TMPDIR of the environment)."""
    path = tmp_path / "tmp"
    path.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(path))
    return path


# the note at which the display fails -> what it raises
FAILURES = [
    ("play", BrokenPipeError(32, "Broken pipe")),  # stderr closed (hwaac deploy ... 2>&1 | head)
    ("failed", MarkupError("closing tag '[/]' at position 22 has nothing to close")),
]


@pytest.mark.parametrize(("at", "error"), FAILURES, ids=[at for at, _ in FAILURES])
def test_a_failing_display_neither_stops_the_run_nor_skips_its_cleanup(
    at: str,
    error: Exception,
    tmp_path: Path,
    private_tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    display = FailingDisplay(at, error)
    monkeypatch.setattr(progress, "display_for", lambda *_a, **_k: display)
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    artifacts = tmp_path / "artifacts"
    assert main(["deploy", str(tmp_path / "play.yml"), "-i", "localhost,", "--artifacts", str(artifacts)]) == 1
    assert display.kinds[-1] == at  # not called again once it failed
    err = capsys.readouterr().err
    assert f"hwaac deploy: the progress display failed ({error!r}); the run went on without it" in err
    # the whole play ran, and its artifacts are there
    summary = json.loads((artifacts / "summary.json").read_text())
    assert (summary["status"], summary["failed_hosts"]) == ("failed", ["localhost"])
    assert (summary["hosts"]["localhost"]["ok"], summary["hosts"]["localhost"]["failed"]) == (1, 1)
    assert (artifacts / "status").read_text() == "failed"
    counters = sorted(json.loads(p.read_text())["counter"] for p in (artifacts / "job_events").glob("*.json"))
    assert counters == list(range(1, summary["events"] + 1))  # every event kept
    assert json.loads((artifacts / "command").read_text())["command"][0] == "ansible-playbook"
    assert list(private_tmp.iterdir()) == []  # the private data dir, with the environment, is gone


def test_the_display_and_the_recap_mask_the_secrets(
    tmp_path: Path, private_tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    token, password = "nbt-0123456789abcdef0123456789abcdef", "pw-secret-42"
    monkeypatch.setenv("NETBOX_TOKEN", token)
    (tmp_path / "play.yml").write_text(SECRETS)
    assert (
        main(
            [
                "deploy",
                str(tmp_path / "play.yml"),
                "-i",
                "localhost,",
                "-e",
                f"db_password={password}",
                "--artifacts",
                str(tmp_path / "artifacts"),
            ]
        )
        == 1
    )
    out, err = capsys.readouterr()
    # stderr is not a terminal: the plain display
    assert f"play 'Deploy as {MASK}' (hosts: localhost)" in err.splitlines()
    assert f"    FAILED localhost: Log in with {MASK}: token {MASK} and password {MASK} refused" in err.splitlines()
    assert f"  'Deploy as {MASK}' batch 1/1: localhost: 1 tasks, changed 0, failed 1, unreachable 0" in out.splitlines()
    assert token not in out + err and password not in out + err


def test_a_failed_run_fails_also_when_its_output_pipe_is_closed(tmp_path: Path, private_tmp: Path) -> None:
    """``hwaac deploy ... | head``: the recap meets a closed pipe, and the exit status is still the run's."""
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "hwaac.cli",
                "deploy",
                str(tmp_path / "play.yml"),
                "-i",
                "localhost,",
                "--artifacts",
                str(tmp_path / "artifacts"),
            ],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            check=False,
            env={**os.environ, "TMPDIR": str(private_tmp)},
        )
    finally:
        os.close(write)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert json.loads((tmp_path / "artifacts/summary.json").read_text())["status"] == "failed"
