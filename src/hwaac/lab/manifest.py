"""A lab's state: ``<state root>/<lab>/lab.json``, written as things are made so ``down`` can undo exactly them.

The file is replaced atomically (write, fsync, rename) after every step of ``up``, ``fail`` and ``restore``; a
crash leaves the last complete record. Its shape (``format`` hwaac-lab/1: devices, links, daemons, sysctls,
faults) is shown in docs/lab.md "The state file".
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hwaac.fileio import write_atomic
from hwaac.lab.errors import LabError, LabNotUp
from hwaac.lab.names import check_lab_name, state_root

FORMAT = "hwaac-lab/1"
STATE_FILE = "lab.json"


def lab_dir(name: str, root: Path | None = None) -> Path:
    """The state folder of lab ``name`` (it may not exist)."""
    return (root or state_root()) / check_lab_name(name)


def new_state(name: str, fabric: str, render_dir: Path) -> dict[str, Any]:
    """The record of a lab about to be built."""
    return {
        "format": FORMAT,
        "name": name,
        "fabric": fabric,
        "render_dir": str(render_dir),
        "phase": "building",
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "versions": {},
        "devices": {},
        "links": {},
        "daemons": {},
        "neigh_sysctl": {},
        "host_sysctl": {},
        "faults": [],
    }


def write_state(folder: Path, state: dict[str, Any]) -> None:
    """Replace ``folder/lab.json`` atomically."""
    write_atomic(folder / STATE_FILE, json.dumps(state, indent=1, sort_keys=True) + "\n", durable=True)


def read_state(folder: Path) -> dict[str, Any]:
    """The record in ``folder/lab.json``.

    Raises:
        LabNotUp: there is no such file.
        LabError: it is not a lab record of this format.
    """
    path = folder / STATE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LabNotUp(f"lab {folder.name!r} is not up (no {path})") from None
    except (OSError, ValueError) as exc:
        raise LabError(
            f"{path}: unreadable lab state ({exc}); `hwaac lab down {folder.name}` removes the lab "
            f"by its namespace prefix"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise LabError(
            f"{path}: not a {FORMAT} lab state (format {data.get('format')!r})"
            if isinstance(data, dict)
            else f"{path}: not a lab state (top level is not an object)"
        )
    return data


def list_labs(root: Path | None = None) -> list[str]:
    """Names of the labs that have a state folder, sorted."""
    base = root or state_root()
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if p.is_dir() and (p / STATE_FILE).exists())


def resolve_name(name: str | None, root: Path | None = None) -> str:
    """``name``, or the one lab that is up when ``name`` is None.

    Raises:
        LabNotUp: no lab is up.
        LabError: several are and none was named.
    """
    if name is not None:
        return check_lab_name(name)
    labs = list_labs(root)
    if not labs:
        raise LabNotUp(f"no lab is up (no lab state under {root or state_root()})")
    if len(labs) > 1:
        raise LabError(f"several labs are up ({', '.join(labs)}): name one")
    return labs[0]


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (the lab's, or the state root) for the block."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
