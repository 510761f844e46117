"""The kernel's neighbour-table limits, which all namespaces share: raised for a lab with many links, restored
when the last lab goes down.

``gc_thresh3`` is the hard limit of entries in a table (ip-sysctl.rst, ``neigh/default``); past it the kernel
logs "neighbor table overflow!" and sessions stall in Connect. Each link end holds one entry per family, so a
lab needs ``2 x links`` entries; thresholds go to that (power of 2) for gc_thresh1, twice for 2, four times for 3,
never lower than they are. The first lab that raises them writes the values it found to
``/run/hwaac/neigh-sysctl.json`` (machine-wide like the limits, whatever each lab's state folder); the last lab
down writes them back (a key only if it still holds what a lab set).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hwaac.fileio import write_atomic
from hwaac.lab.manifest import locked

KEYS = tuple(f"net.ipv{v}.neigh.default.gc_thresh{i}" for v in (4, 6) for i in (1, 2, 3))
RECORD_DIR = Path("/run/hwaac")
RECORD = "neigh-sysctl.json"


def _path(key: str) -> Path:
    return Path("/proc/sys") / key.replace(".", "/")


def read_current() -> dict[str, int]:
    """The six thresholds as the kernel has them now."""
    return {k: int(_path(k).read_text().strip()) for k in KEYS}


def wanted(links: int) -> dict[str, int]:
    """The thresholds a lab of ``links`` links needs."""
    t1 = 128
    while t1 < 2 * links:
        t1 *= 2
    return {k: t1 * {"1": 1, "2": 2, "3": 4}[k[-1]] for k in KEYS}


def raise_for(links: int, root: Path = RECORD_DIR) -> dict[str, Any]:
    """Raise the thresholds for a lab of ``links`` links, if it needs it.

    Returns:
        ``{"saved": {key: value before any lab}, "set": {key: value written}}`` for the lab's state
        (both empty when nothing was changed).
    """
    root.mkdir(parents=True, exist_ok=True)
    with locked(root):
        now = read_current()
        need = wanted(links)
        target = {k: max(now[k], need[k]) for k in KEYS}
        changes = {k: v for k, v in target.items() if v != now[k]}
        record = root / RECORD
        saved = _read_record(record)
        if not changes:
            return {"saved": saved, "set": {}}
        if not saved:
            saved = {k: str(v) for k, v in now.items()}
            write_record(record, {"saved": saved, "set": {}})
        # gc_thresh1 <= 2 <= 3 at every step: write the largest first when raising
        for key in sorted(changes, key=lambda k: -int(k[-1])):
            _path(key).write_text(str(changes[key]))
        merged = {**_read_set(record), **{k: str(v) for k, v in changes.items()}}
        write_record(record, {"saved": saved, "set": merged})
        return {"saved": saved, "set": {k: str(v) for k, v in changes.items()}}


def restore_if_last(others_up: bool, own: dict[str, Any] | None = None, root: Path = RECORD_DIR) -> dict[str, str]:
    """Write back the values from before the first lab, unless ``others_up``.

    ``own`` is the lab's own record (``raise_for``'s result) for when the shared record is gone.
    Returns:
        The keys written back and their values.
    """
    record = root / RECORD
    if not root.is_dir():
        root.mkdir(parents=True, exist_ok=True)
    with locked(root):
        saved = _read_record(record) or dict((own or {}).get("saved") or {})
        lab_set = {**dict((own or {}).get("set") or {}), **_read_set(record)}
        if others_up or not saved:
            return {}
        now = read_current()
        back = {
            k: v
            for k, v in saved.items()
            if k in now and str(now[k]) != str(v) and (k not in lab_set or str(now[k]) == str(lab_set[k]))
        }
        # lowering: gc_thresh1 first keeps 1 <= 2 <= 3
        for key in sorted(back, key=lambda k: int(k[-1])):
            _path(key).write_text(str(back[key]))
        if record.exists():
            record.unlink()
        return back


def _read_record(path: Path) -> dict[str, str]:
    try:
        return dict(json.loads(path.read_text()).get("saved") or {})
    except (FileNotFoundError, ValueError, AttributeError):
        return {}


def _read_set(path: Path) -> dict[str, str]:
    try:
        return dict(json.loads(path.read_text()).get("set") or {})
    except (FileNotFoundError, ValueError, AttributeError):
        return {}


def write_record(path: Path, data: dict[str, Any]) -> None:
    """Write a machine-wide record of ``/run/hwaac`` whole or not at all."""
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
