"""The two intents a review compares: a fabric's ``fabric.yml`` now and at a git revision, or two folders."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hwaac.errors import IntentError
from hwaac.model.intent import Intent
from hwaac.validate import load_intent_source

GIT_TIMEOUT_S = 60


class SourceError(Exception):
    """An intent to review cannot be read (no such revision, not a git repository, no fabric.yml)."""


@dataclass
class Side:
    """One side of the review: where its intent came from, its text (None: the fabric does not exist there)."""

    label: str
    text: str | None

    def raw(self) -> Any:
        """The intent YAML as plain data (``{}`` for a side without a fabric)."""
        return {} if self.text is None else yaml.safe_load(self.text) or {}

    def intent(self, pool_lookup: Callable[..., Any] | None) -> Intent | None:
        return None if self.text is None else load_intent_source(self.text, self.label, pool_lookup)


def fabric_file(path: str | Path) -> Path:
    """``path`` itself, or the ``fabric.yml`` inside the folder ``path``."""
    p = Path(path)
    return p / "fabric.yml" if p.is_dir() else p


def from_file(path: str | Path) -> Side:
    """The intent in a file or folder (FileNotFoundError when there is none)."""
    f = fabric_file(path)
    try:
        return Side(str(f), f.read_text())
    except UnicodeDecodeError as exc:
        raise IntentError([f"{f}: not UTF-8 text ({exc.reason} at byte {exc.start})"]) from None


def from_git(path: str | Path, rev: str) -> Side:
    """The intent at ``path`` (a file or folder in a git work tree) as git revision ``rev`` holds it; a fabric
    that does not exist at ``rev`` (added by the change) is a side without text."""
    f = fabric_file(path).resolve()
    top = _git(f.parent, "rev-parse", "--show-toplevel").strip()
    rel = f.relative_to(Path(top).resolve()).as_posix()
    commit = _git(f.parent, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", what=f"revision {rev!r}").strip()
    listed = _git(Path(top), "ls-tree", "--name-only", commit, "--", rel)
    label = f"{rev}:{rel}"
    if not listed.strip():
        return Side(label, None)
    return Side(label, _git(f.parent, "show", f"{commit}:{rel}"))


def _git(cwd: Path, *args: str, what: str = "") -> str:
    try:
        proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise SourceError("--base needs git on PATH") from None
    except subprocess.TimeoutExpired:
        raise SourceError(f"git {args[0]} took more than {GIT_TIMEOUT_S} s in {cwd}") from None
    if proc.returncode != 0:
        err = proc.stderr.strip().splitlines()
        if what:
            raise SourceError(f"--base: {what} is not a commit of the repository at {cwd}"
                              + (f" ({err[-1]})" if err else "")) from None
        raise SourceError(f"git {' '.join(args[:1])} in {cwd}: {err[-1] if err else 'failed'}")
    return proc.stdout
