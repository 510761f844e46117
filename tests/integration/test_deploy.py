"""``hwaac deploy`` for real: playbooks/fabric_deploy.yml through ansible-runner against the simulated demo site
(tests/integration/sim_site.py: the demo rendered, its hosts simulated by tests/fakes, SONiC's GCU deciding every
patch), on two spines in batches of one.

Check mode (both in one batch) predicts both pushes and changes nothing; the push runs batch 1/2 then 2/2, each
switch changed and holding its rendered config, and the artifacts folder holds ansible-runner's layout and the
summary; a second run changes nothing. A playbook given by path sees NETBOX_TOKEN (exit 0) or fails on a wrong
one (exit 1), and after every run the token is in no file of the artifacts and the private data dir is gone.
Needs ansible-core and the SONiC toolkit (``sonic_toolkit``: FAILS without it where CI=true).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hwaac.apply import config_patch
from tests.integration.sim_site import REPO, SimSite, sim_site

pytestmark = pytest.mark.integration

HWAAC = Path(sys.executable).with_name("hwaac")
S1, S2 = "spine-p0-01", "spine-p0-02"
PUSH = "Push SONiC config_db in batches, with rollback and a BGP health gate"
TOKEN = f"nbt-{uuid.uuid4().hex}{uuid.uuid4().hex}"  # a NetBox API token's 40 characters and more
TOKEN_CHECK = """- name: The token reaches the run
  hosts: localhost
  gather_facts: false
  tasks:
    - name: NETBOX_TOKEN is the one given
      ansible.builtin.assert:
        that: lookup('ansible.builtin.env', 'NETBOX_TOKEN') | hash('sha256') == token_sha256
        quiet: true
"""


@dataclass(frozen=True)
class Run:
    proc: subprocess.CompletedProcess[str]
    artifacts: Path

    @property
    def summary(self) -> dict[str, Any]:
        return json.loads((self.artifacts / "summary.json").read_text())

    def batches(self) -> list[tuple[str, int, int, list[str], list[str]]]:
        return [(b["play"], b["batch"], b["of"], b["hosts"], b["changed_hosts"]) for b in self.summary["batches"]]


class Deployer:
    """Runs ``hwaac deploy`` with NETBOX_TOKEN in its environment and its own TMPDIR (where ansible-runner's
    private data dir goes), each run into a new artifacts folder."""

    def __init__(self, root: Path, tmp: Path, toolkit: Path | None = None) -> None:
        self.root, self.tmp, self.toolkit, self.done = root, tmp, toolkit, []
        self.root.mkdir(parents=True, exist_ok=True)

    def __call__(self, *args: str) -> Run:
        artifacts = self.root / f"artifacts-{len(self.done) + 1}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "NETBOX_"))}
        env.update(NETBOX_TOKEN=TOKEN, TMPDIR=str(self.tmp))
        if self.toolkit is not None:
            env["HWAAC_SONIC_TOOLKIT"] = str(self.toolkit)
        proc = subprocess.run(
            [str(HWAAC), "deploy", *args, "--artifacts", str(artifacts)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert TOKEN not in proc.stdout + proc.stderr
        self.done.append(Run(proc, artifacts))
        return self.done[-1]

    def assert_no_token_left(self) -> None:
        """The token was in every run's environment, which ansible-runner records: it is in no file of the
        artifacts, and the private data dirs (under the runs' TMPDIR) are gone."""
        for run in self.done:
            files = [p for p in run.artifacts.rglob("*") if p.is_file()]
            assert files and not [p for p in files if TOKEN.encode() in p.read_bytes()], run.artifacts
        assert list(self.tmp.iterdir()) == []


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """The runs' TMPDIR: short, because ansible-core starts an RPC server on a Unix socket under it
    (multiprocessing's ``pymp-*/listener-*``), whose path must fit sockaddr_un's 108 bytes; pytest's tmp_path
    under xdist is too long for that."""
    path = Path(tempfile.mkdtemp(prefix="hwd-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def push_args(site: SimSite, *extra: str, batch_size: str = "1") -> list[str]:
    return [
        "fabric_deploy",
        "-i",
        str(site.inventory),
        *(a for v in site.extra_vars for a in ("-e", v)),
        "--limit",
        f"{S1},{S2}",
        "--batch-size",
        batch_size,
        *extra,
    ]


def running(site: SimSite, name: str) -> dict[str, Any]:
    return json.loads((site.sim / name / "state" / "config_db.json").read_text())


def rendered(site: SimSite, name: str) -> dict[str, Any]:
    return json.loads((site.render / "switches" / name / "config_db.json").read_text())


# one test for the three runs of one site (check, push, push again): xdist hands tests out one by one, and a
# module fixture shared by two tests would be built again on the other worker
@pytest.mark.cost(40)
def test_check_then_the_push_batch_by_batch_then_nothing_changes(
    tmp_path: Path, short_tmp: Path, sonic_toolkit: Any
) -> None:
    site = sim_site(tmp_path / "site", switches=(S1, S2))
    deploy = Deployer(tmp_path, short_tmp, sonic_toolkit.home)
    factory = {n: running(site, n) for n in (S1, S2)}

    check = deploy(*push_args(site, "--check", "--diff", batch_size="2"))
    assert check.proc.returncode == 0, check.proc.stdout + check.proc.stderr
    assert check.summary["check"] is True and check.summary["changed_hosts"] == [S1, S2]
    assert [(b["batch"], b["of"], sorted(b["hosts"])) for b in check.summary["batches"]] == [(1, 1, [S1, S2])]
    assert {n: running(site, n) for n in (S1, S2)} == factory  # check mode changed nothing

    first = deploy(*push_args(site))
    assert first.proc.returncode == 0, first.proc.stdout + first.proc.stderr
    s = first.summary
    assert (s["status"], s["rc"], s["playbook"], s["batch_size"]) == (
        "successful",
        0,
        "fabric_deploy",
        {"fabric_deploy_serial": "1"},
    )
    assert first.batches() == [(PUSH, 1, 2, [S1], [S1]), (PUSH, 2, 2, [S2], [S2])]
    assert {h: (c["changed"], c["failed"], c["unreachable"]) for h, c in s["hosts"].items()} == {
        S1: (1, 0, 0),
        S2: (1, 0, 0),
    }
    assert s["elapsed_s"] > 0 and s["not_started"] == []
    for name in (S1, S2):  # what ansible did: each switch holds its render
        assert config_patch(running(site, name), rendered(site, name)) == [], name
    # the progress (stderr is not a terminal: plain lines) and the recap
    assert f"  batch 1/2: 1 host(s): {S1}\n" in first.proc.stderr
    assert f"  batch 2/2 done: 8 tasks, ok 5, changed 1 ({S2})," in first.proc.stderr
    assert f"{S1}   5        1       0            0        3        0        0" in first.proc.stdout
    # ansible-runner's artifact layout: every event kept, numbered from 1
    art = first.artifacts
    assert (art / "rc").read_text() == "0" and (art / "status").read_text() == "successful"
    assert "PLAY RECAP" in (art / "stdout").read_text()
    counters = sorted(json.loads(p.read_text())["counter"] for p in (art / "job_events").glob("*.json"))
    assert counters == list(range(1, s["events"] + 1))
    assert json.loads((art / "command").read_text())["command"][0] == "ansible-playbook"

    again = deploy(*push_args(site))
    assert again.proc.returncode == 0, again.proc.stdout + again.proc.stderr
    assert again.summary["changed"] == 0 and again.summary["changed_hosts"] == []
    assert again.batches() == [(PUSH, 1, 2, [S1], []), (PUSH, 2, 2, [S2], [])]
    deploy.assert_no_token_left()


@pytest.mark.cost(8)
def test_the_token_reaches_the_run_and_no_file(tmp_path: Path, short_tmp: Path) -> None:
    playbook = tmp_path / "token.yml"
    playbook.write_text(TOKEN_CHECK)
    deploy = Deployer(tmp_path / "runs", short_tmp)
    right = hashlib.sha256(TOKEN.encode()).hexdigest()
    ok = deploy(str(playbook), "-e", f"token_sha256={right}")
    assert ok.proc.returncode == 0, ok.proc.stdout + ok.proc.stderr
    assert ok.summary["hosts"]["localhost"]["ok"] == 1
    wrong = deploy(str(playbook), "-e", f"token_sha256={'0' * 64}")
    assert wrong.proc.returncode == 1, wrong.proc.stdout + wrong.proc.stderr  # a failed run
    assert (wrong.summary["status"], wrong.summary["failed_hosts"]) == ("failed", ["localhost"])
    deploy.assert_no_token_left()
