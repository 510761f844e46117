"""The two intents a review compares: a fabric's ``fabric.yml`` now and at a git revision, or two folders."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hwaac.errors import IntentError, IntentIssue
from hwaac.model.intent import Intent
from hwaac.model.limits import decode_text, read_text
from hwaac.model.loader import parse_yaml
from hwaac.validate import load_intent_source

GIT_TIMEOUT_S = 60


class SourceError(Exception):
    """An intent to review cannot be read (no such revision, not a git repository, no fabric.yml)."""


@dataclass
class Side:
    """One side of the review: where its intent came from and its text (None: the fabric does not exist there),
    or, for a file that cannot be read as intent text (a folder, unreadable, not UTF-8, too large), the
    IntentError that reading it raises."""

    label: str
    text: str | None
    unreadable: IntentError | None = None

    @property
    def exists(self) -> bool:
        """The fabric is there (readable or not)."""
        return self.text is not None or self.unreadable is not None

    def raw(self) -> Any:
        """The intent YAML as plain data, read as hwaac reads an intent (YAML 1.2 core schema,
        :func:`hwaac.model.loader.parse_yaml`); ``{}`` for a side without a fabric.

        Raises:
            IntentError: the text cannot be read or is not YAML, naming the file and line.
        """
        if self.unreadable is not None:
            raise self.unreadable
        if self.text is None:
            return {}
        data, _ = parse_yaml(self.text, self.label)
        return {} if data is None else data

    def intent(self, pool_lookup: Callable[..., Any] | None) -> Intent | None:
        """The validated intent (None for a side without a fabric).

        Raises:
            IntentError: the text cannot be read, or the intent is invalid (every issue, with file and line).
        """
        if self.unreadable is not None:
            raise self.unreadable
        return None if self.text is None else load_intent_source(self.text, self.label, pool_lookup)


def fabric_file(path: str | Path) -> Path:
    """``path`` itself, or the ``fabric.yml`` inside the folder ``path``."""
    p = Path(path)
    return p / "fabric.yml" if p.is_dir() else p


def from_file(path: str | Path) -> Side:
    """The intent in a file or folder, read by :func:`hwaac.model.limits.read_text`.

    Raises:
        FileNotFoundError: there is no such file.
    """
    f = fabric_file(path)
    try:
        return Side(str(f), read_text(f))
    except IntentError as exc:
        return Side(str(f), None, exc)


def from_git(path: str | Path, rev: str) -> Side:
    """The intent at ``path`` (a file or folder in a git work tree) as git revision ``rev`` holds it; a fabric
    that does not exist at ``rev`` (added by the change) is a side without text."""
    f = fabric_file(path).resolve()
    top = _git(f.parent, "rev-parse", "--show-toplevel").strip()
    rel = f.relative_to(Path(top).resolve()).as_posix()
    commit = _git(f.parent, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", what=f"revision {rev!r}").strip()
    listed = _git(Path(top), "ls-tree", "-z", commit, "--", rel).rstrip("\0")
    label = f"{rev}:{rel}"
    if not listed:
        return Side(label, None)
    _mode, kind, blob = listed.split("\t", 1)[0].split()
    if kind != "blob":
        return Side(
            label,
            None,
            IntentError(
                [
                    IntentIssue(
                        path="",
                        message=f"is a {'folder' if kind == 'tree' else kind} at revision {rev}",
                        file=label,
                        valid="a YAML file (fabric.yml)",
                    )
                ]
            ),
        )
    try:
        return Side(label, decode_text(_git_bytes(Path(top), "cat-file", "blob", blob), label))
    except IntentError as exc:
        return Side(label, None, exc)


def _git(cwd: Path, *args: str, what: str = "") -> str:
    return _git_bytes(cwd, *args, what=what).decode("utf-8", errors="surrogateescape")


def _git_bytes(cwd: Path, *args: str, what: str = "") -> bytes:
    try:
        proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise SourceError("--base needs git on PATH") from None
    except subprocess.TimeoutExpired:
        raise SourceError(f"git {args[0]} took more than {GIT_TIMEOUT_S} s in {cwd}") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
        if what:
            raise SourceError(
                f"--base: {what} is not a commit of the repository at {cwd}" + (f" ({err[-1]})" if err else "")
            ) from None
        raise SourceError(f"git {' '.join(args[:1])} in {cwd}: {err[-1] if err else 'failed'}")
    return proc.stdout
