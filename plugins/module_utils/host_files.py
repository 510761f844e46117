# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Plumbing the hwaac host modules share (``lnet``, ``lustre_mount``, ``lustre_tune``): text files read and written
atomically, and one module run's steps - commands with a time limit whose command lines, actions and check-mode
skips go into the result, and failures that carry the result so far.

Host side: Python standard library plus ``ansible.module_utils`` (Python 3.9+).
"""

from __future__ import annotations

import os
import shlex
import tempfile

from ansible_collections.aiinfra.hwaac.plugins.module_utils.timed_run import run_timed


class HostFileError(Exception):
    """A file that cannot be read or written; the message names the path and the reason
    (``cannot read /etc/fstab: Permission denied``)."""


def read_text(path: str, missing: str | None = "") -> str | None:
    """The UTF-8 text of ``path``, or ``missing`` when the file does not exist. Raises :class:`HostFileError` for
    any other OS error (a directory, no permission) and for bytes that are not UTF-8."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return missing
    except OSError as exc:
        raise HostFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise HostFileError(f"cannot read {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def write_atomic(module, path: str, text: str, mode: int = 0o644) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory (``.<name>.XXXX``) and
    ``module.atomic_move`` (a rename: a reader sees the old file or the new one, never half of one). Missing
    directories are created. A new file gets ``mode`` (then ``atomic_move``'s umask rule); an existing one keeps
    its owner, mode and SELinux context (``atomic_move`` copies them). The temporary file never stays behind.
    Raises :class:`HostFileError` naming the path."""
    directory = os.path.dirname(os.path.abspath(path)) or "/"
    tmp = None
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if not os.path.exists(path):
            os.chmod(tmp, mode)
        module.atomic_move(tmp, path)
    except OSError as exc:
        raise HostFileError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def output_line(res: dict, empty: str | None = None) -> str:
    """A command's output for a message, on one line: stderr, else stdout (stripped, newlines as `` / ``), else
    ``empty`` (default ``exit RC``). ``res``: ``{"rc", "stdout", "stderr"}`` as :meth:`Steps.run` returns."""
    text = res["stderr"].strip() or res["stdout"].strip()
    if not text:
        return empty if empty is not None else f"exit {res['rc']}"
    return text.replace("\n", " / ")


class Steps:
    """One module run. ``result`` starts as ``{"changed": False, "actions": [], "commands": [], **fields}`` and is
    what the module returns (and what :meth:`fail` returns with the message); ``diffs`` collects the
    ``{"before_header", "after_header", "before", "after"}`` entries of diff mode. ``timeout``: seconds each
    command may take."""

    def __init__(self, module, timeout: float, **fields: object) -> None:
        self.module = module
        self.check = module.check_mode
        self.timeout = timeout
        self.result: dict = {"changed": False, "actions": [], "commands": [], **fields}
        self.diffs: list[dict] = []

    def fail(self, msg: str, **extra: object) -> None:
        """Fail the task with ``msg``, the result so far and ``extra`` return values. Does not return."""
        self.module.fail_json(msg=msg, **self.result, **extra)

    def run(self, argv: list[str], changing: bool = True) -> dict:
        """Run ``argv`` (no shell) and return ``{"rc", "stdout", "stderr", ...}``; its shell-quoted form is added to
        ``result["commands"]``. A ``changing`` command is only recorded in check mode (``rc`` 0, no output). Fails
        the task when the command cannot start or runs past ``timeout``."""
        shown = shlex.join(argv)
        self.result["commands"].append(shown)
        if changing and self.check:
            return {"rc": 0, "stdout": "", "stderr": ""}
        res = run_timed(self.module, argv, self.timeout)
        if res["timed_out"]:
            self.fail(f"{shown} did not finish within {self.timeout} s")
        if res["rc"] is None:
            self.fail(f"cannot run {shown}: {res['stderr']}")
        return res

    def action(self, name: str) -> None:
        """Record that ``name`` changed (or would change in check mode): once in ``result["actions"]``, and
        ``changed`` true."""
        if name not in self.result["actions"]:
            self.result["actions"].append(name)
        self.result["changed"] = True

    def read_text(self, path: str, missing: str | None = "") -> str | None:
        """:func:`read_text`, failing the task (with the result so far) where it raises."""
        try:
            return read_text(path, missing)
        except HostFileError as exc:
            self.fail(str(exc))
        return missing  # not reached: fail_json exits

    def write_text(self, path: str, text: str) -> None:
        """:func:`write_atomic`, failing the task (with the result so far) where it raises."""
        try:
            write_atomic(self.module, path, text)
        except HostFileError as exc:
            self.fail(str(exc))
