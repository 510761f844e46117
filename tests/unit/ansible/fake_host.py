"""A fake host for the host modules' tests: a state folder for the stateful fakes (``HWAAC_FAKE_STATE``, see
tests/fakes/README.md), an environment with tests/fakes/bin first on PATH, the module runner of module_run.py, the
fakes' call log and knob files. Each module's test adds what only its module needs in a subclass."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from tests.unit.ansible.module_run import REPO, run_module

FAKE_BIN = REPO / "tests" / "fakes" / "bin"


def fake_env(
    state: Path, *, bins: Sequence[Path] = (FAKE_BIN,), tail: str | None = None, **extra: str
) -> dict[str, str]:
    """The environment of a module or tool run on the fake host: ``bins`` before ``tail`` (the caller's PATH
    unless given), ``HWAAC_FAKE_STATE`` and the repository root on PYTHONPATH (``ansible_collections`` imports)."""
    path = os.pathsep.join([*(str(b) for b in bins), os.environ["PATH"] if tail is None else tail])
    return {**os.environ, "PATH": path, "HWAAC_FAKE_STATE": str(state), "PYTHONPATH": str(REPO), **extra}


class FakeHost:
    """The fake host in ``tmp``: its state folder (created unless ``create_state`` is false), its environment,
    and the module ``module`` run as Ansible runs it."""

    module_name = ""

    def __init__(
        self,
        tmp: Path,
        *,
        state: str = "fake",
        create_state: bool = True,
        bins: Sequence[Path] = (FAKE_BIN,),
        tail: str | None = None,
        **extra_env: str,
    ) -> None:
        self.tmp = tmp
        self.state = tmp / state
        if create_state:
            self.state.mkdir()
        self.env = fake_env(self.state, bins=bins, tail=tail, **extra_env)
        self.runs = 0
        self.mark = 0

    def run(self, args: dict, *, check: bool = False) -> dict:
        """Run the module with ``args`` as given; remembers where the call log stood (``new_calls``)."""
        self.runs += 1
        self.mark = len(self.calls())
        return run_module(self.module_name, args, self.tmp / f"args{self.runs}.json", self.env, check=check)

    def case_args(self, given: dict) -> dict:
        """The module arguments of a case (tests/unit/ansible/cases): the host's defaults with ``given`` over them."""
        return dict(given)

    def placeholders(self) -> dict[str, str]:
        """``{name}`` in a case's strings becomes this host's value."""
        return {"tmp": str(self.tmp), "state": str(self.state)}

    def sh(self, *argv: str) -> subprocess.CompletedProcess:
        """Run a command (a fake tool) on the fake host; the caller looks at its exit status."""
        return subprocess.run(list(argv), env=self.env, capture_output=True, text=True, timeout=60)

    def stdout(self, *argv: str) -> str:
        """What a command that must succeed prints."""
        return subprocess.run(list(argv), env=self.env, capture_output=True, text=True, check=True, timeout=60).stdout

    def calls(self) -> list[str]:
        """The fakes' call log (``calls.log`` in the state folder), one command a line."""
        path = self.state / "calls.log"
        return path.read_text().splitlines() if path.exists() else []

    def new_calls(self) -> list[str]:
        """The calls of the last module run (and of any tool run after it)."""
        return self.calls()[self.mark :]

    def clear_calls(self) -> None:
        (self.state / "calls.log").unlink(missing_ok=True)

    def write_state(self, name: str, data: object) -> None:
        """Write ``name`` in the state folder as JSON (a fake's state or knob file)."""
        self.state.mkdir(exist_ok=True)
        (self.state / name).write_text(json.dumps(data))

    def read_state(self, name: str) -> dict:
        return json.loads((self.state / name).read_text())

    def merge_knobs(self, name: str, knobs: dict) -> None:
        """Update the ``knobs`` of the fake's state file ``name``, keeping what is there."""
        path = self.state / name
        data = json.loads(path.read_text()) if path.exists() else {}
        data.setdefault("knobs", {}).update(knobs)
        self.write_state(name, data)

    def exists(self, rel: str) -> bool:
        """Whether ``rel`` (under the host's tmp folder) exists."""
        return (self.tmp / rel).exists()

    def text(self, rel: str) -> str:
        """The text of ``rel`` under the host's tmp folder."""
        return (self.tmp / rel).read_text()
