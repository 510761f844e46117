"""Atomic writes: a reader sees the old file (or folder, or link) or the new one, never a part.

Each writes beside its target and renames over it (``rename(2)`` is atomic within one file system, POSIX.1-2017);
on failure the temporary is removed and the error raised. The plugins cannot import hwaac and keep their own.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def write_atomic(path: str | Path, data: str | bytes, *, mode: int | None = None, durable: bool = False) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` through a temporary file beside it.

    Args:
        mode: permissions of the file; by default those of a new file (``0o666`` less the umask).
        durable: ``fsync`` the file before the rename, so a crash does not leave an empty file in its place.

    Raises:
        OSError: the temporary file is removed and ``path`` is left as it was.
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    raw = data.encode() if isinstance(data, str) else data
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            if mode is not None:
                os.fchmod(fh.fileno(), mode)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def atomic_folder(dest: str | Path, *, mode: int | None = None) -> Iterator[Path]:
    """Yield a new temporary folder beside ``dest`` to fill; when the block ends without error it replaces
    ``dest``, which must be absent or empty. On an error the temporary folder is removed.

    Args:
        mode: permissions of the folder; by default ``0o700`` (:func:`tempfile.mkdtemp`).
    """
    target = Path(dest)
    target.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        yield stage
        if mode is not None:
            os.chmod(stage, mode)
        if target.exists():
            target.rmdir()
        os.replace(stage, target)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def symlink_atomic(link: str | Path, target: str | Path) -> None:
    """Point the symbolic link ``link`` at ``target``, replacing what ``link`` was."""
    path = Path(link)
    tmp = path.with_name(f".{path.name}.new")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(target)
    os.replace(tmp, path)


__all__ = ["atomic_folder", "symlink_atomic", "write_atomic"]
