"""hwaac.fileio: atomic writes leave the old content or the new one, and no temporary behind."""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

import pytest

from hwaac.fileio import atomic_folder, symlink_atomic, write_atomic


def test_write_atomic_replaces_text_and_bytes(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    write_atomic(path, "old\n")
    write_atomic(path, b"new\xff", durable=True)
    assert path.read_bytes() == b"new\xff"
    assert os.listdir(tmp_path) == ["state.json"]


def test_write_atomic_mode_and_default_mode(tmp_path: Path) -> None:
    write_atomic(tmp_path / "secret", "x", mode=0o600)
    write_atomic(tmp_path / "plain", "x")
    (tmp_path / "reference").write_text("x")
    assert (tmp_path / "secret").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "plain").stat().st_mode & 0o777 == (tmp_path / "reference").stat().st_mode & 0o777


def test_write_atomic_failure_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text("old")
    with pytest.raises(TypeError):
        write_atomic(path, cast(bytes, 42))
    (tmp_path / "dir").mkdir()
    with pytest.raises(IsADirectoryError):
        write_atomic(tmp_path / "dir", "new")
    assert path.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["dir", "state.json"]


def test_atomic_folder_replaces_an_empty_folder(tmp_path: Path) -> None:
    dest = tmp_path / "sweep"
    dest.mkdir()
    with atomic_folder(dest, mode=0o755) as stage:
        (stage / "a.txt").write_text("a")
        assert not (dest / "a.txt").exists()
    assert (dest / "a.txt").read_text() == "a"
    assert dest.stat().st_mode & 0o777 == 0o755
    assert os.listdir(tmp_path) == ["sweep"]


def test_atomic_folder_error_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), atomic_folder(tmp_path / "out") as stage:
        (stage / "half").write_text("x")
        raise RuntimeError("collector died")
    assert os.listdir(tmp_path) == []


def test_symlink_atomic_repoints(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    symlink_atomic(tmp_path / "cur", tmp_path / "a")
    symlink_atomic(tmp_path / "cur", tmp_path / "b")
    assert (tmp_path / "cur").resolve() == tmp_path / "b"
    assert sorted(os.listdir(tmp_path)) == ["a", "b", "cur"]
