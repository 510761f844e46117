"""Rendering: a plan -> every device's files and the fabric documents, written into one output folder.

``hwaac plan FABRIC -o DIR`` writes ``plan.json`` (:func:`plan_document`), ``switches/<switch>/config_db.json``,
``hosts/<node>/...`` and ``docs/...``. The folder is written whole or not at all (a sibling temporary folder
replaces ``DIR`` when everything is written), and an existing non-empty folder without a ``plan.json`` is refused.
The layout, file by file: docs/render.md.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from hwaac.plan.model import Plan
from hwaac.plan.serialize import plan_to_dict

Progress = Callable[[int], None]


def plan_document(plan: Plan) -> dict[str, Any]:
    """The ``plan.json`` of a render folder: :func:`hwaac.plan.serialize.plan_to_dict` plus ``"storage"``, the
    intent's storage section as JSON (``model_dump(mode="json", exclude_none=True)``; null without one).

    Storage allocates nothing, so the plan itself leaves it out, yet every GPU node's ``lustre-client.json`` and
    the storage routes of its netplan are rendered from it; recording it here lets ``hwaac plan --against``
    report a storage-only change (:mod:`hwaac.plan.diff`) instead of "no change" while those files change.
    """
    doc = plan_to_dict(plan)
    storage = plan.intent.storage
    doc["storage"] = None if storage is None else storage.model_dump(mode="json", exclude_none=True)
    return doc


class OutputDirError(Exception):
    """The output folder cannot be used (it holds files hwaac did not write)."""


def render_to_dir(plan: Plan, out_dir: str | Path, progress: Progress | None = None) -> dict[str, int]:
    """Render ``plan`` into ``out_dir`` (layout in the module docstring), replacing it atomically.

    Args:
        progress: called with the number of devices just finished (switches and nodes), for a progress bar.

    Returns:
        Counts of files written per kind: ``{"switches": N, "hosts": N, "docs": N}``.

    Raises:
        OutputDirError: ``out_dir`` exists, is not empty and has no ``plan.json``.
    """
    from hwaac.render.docs import render_docs
    from hwaac.render.host import render_host_files
    from hwaac.render.sonic import render_config_db

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise OutputDirError(f"{out}: exists and is not a folder; choose an empty or new folder")
    if out.exists() and any(out.iterdir()) and not (out / "plan.json").exists():
        raise OutputDirError(
            f"{out}: exists and holds files hwaac did not write (no plan.json); choose an empty or new folder"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(out)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    counts = {"switches": 0, "hosts": 0, "docs": 0}

    def tick() -> None:
        if progress is not None:
            progress(1)

    try:
        tmp.mkdir()
        (tmp / "plan.json").write_bytes(orjson.dumps(plan_document(plan), option=orjson.OPT_INDENT_2) + b"\n")
        sw_dir = tmp / "switches"
        sw_dir.mkdir()
        opts = orjson.OPT_INDENT_2
        for switch in plan.switches:
            d = _under(sw_dir, switch.name)
            d.mkdir()
            (d / "config_db.json").write_bytes(orjson.dumps(render_config_db(plan, switch), option=opts) + b"\n")
            counts["switches"] += 1
            tick()
        host_dir = tmp / "hosts"
        host_dir.mkdir()
        made: set[Path] = set()
        for node in plan.nodes:
            base = _under(host_dir, node.name)
            for rel, content in render_host_files(plan, node).items():
                path = _under(base, rel)
                if path.parent not in made:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    made.add(path.parent)
                path.write_text(content)
                counts["hosts"] += 1
            tick()
        docs = tmp / "docs"
        docs.mkdir()
        for name, content in render_docs(plan).items():
            _under(docs, name).write_text(content)
            counts["docs"] += 1
        _replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return counts


def _under(folder: Path, rel: str) -> Path:
    """``folder / rel``, refused unless ``rel`` is a relative path without ``..`` that stays inside ``folder``.

    Device names are host names (rule bad-device-name) and file names are hwaac's own, so this never refuses a
    validated plan; it keeps a plan built in code, or a rule that misses a case, from writing outside the output
    folder. The check is lexical: the folder is hwaac's fresh temporary folder, which holds no symbolic link."""
    path = folder / rel
    if (
        not rel
        or "\0" in rel
        or ".." in Path(rel).parts
        or Path(rel).is_absolute()
        or os.path.commonpath([folder, os.path.normpath(path)]) != str(folder)
    ):
        raise OutputDirError(f"refusing to write {rel[:80]!r}: not a path inside {folder}")
    return path


def _replace(new: Path, out: Path) -> None:
    """Swap ``new`` into place of ``out`` with renames, so readers see the old or the new folder, never a mix;
    if the second rename fails the old folder is put back."""
    if not out.exists():
        new.rename(out)
        return
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    out.rename(old)
    try:
        new.rename(out)
    except BaseException:
        old.rename(out)
        raise
    shutil.rmtree(old)


def _remove_stale(out: Path) -> None:
    """Remove temporary folders left by earlier runs on ``out`` that were killed (their process is gone)."""
    for stale in out.parent.glob(f".{out.name}.*-*"):
        kind, _, pid = stale.name.rpartition("-")
        if not kind.endswith((".tmp", ".old")) or not pid.isdigit() or _alive(int(pid)):
            continue
        shutil.rmtree(stale, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
