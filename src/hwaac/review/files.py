"""Each device's rendered files before and after a change, compared: config_db per table, other files whole.

Both plans are rendered whole (what a deploy would push) and compared here, so a change the plan document does
not show (a QoS threshold, an MTU) still shows on every device it reaches.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hwaac.apply.config_diff import Summary, summarize_config_diff

CONFIG_DB = "config_db.json"
KINDS = (("switches", "switch"), ("hosts", "node"))


@dataclass
class DeviceChange:
    """A device whose rendered files differ: ``status`` added, removed or changed; ``tables`` the config_db
    summary (switches); ``files`` each other file (path in the device's folder) -> added, removed or changed."""

    name: str
    kind: str
    status: str
    tables: Summary = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "status": self.status, "tables": self.tables, "files": self.files}


@dataclass
class Rendered:
    """The device changes, and the fabric documents (``docs/``) that change."""

    devices: dict[str, DeviceChange]
    documents: dict[str, str]


def compare_trees(old: Path, new: Path) -> Rendered:
    """Compare two render folders (:func:`hwaac.render.render_to_dir`; an empty folder for a side without a
    fabric) device by device."""
    devices: dict[str, DeviceChange] = {}
    for folder, kind in KINDS:
        names = _children(old / folder) | _children(new / folder)
        for name in sorted(names):
            change = _device(old / folder / name, new / folder / name, name, kind)
            if change is not None:
                devices[name] = change
    return Rendered(devices, _files(old / "docs", new / "docs"))


def _children(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.is_dir()} if folder.is_dir() else set()


def _device(old: Path, new: Path, name: str, kind: str) -> DeviceChange | None:
    status = "added" if not old.is_dir() else "removed" if not new.is_dir() else "changed"
    files = _files(old, new)
    tables: Summary = {}
    if CONFIG_DB in files:
        tables = summarize_config_diff(_json(old / CONFIG_DB), _json(new / CONFIG_DB))
        if tables:
            del files[CONFIG_DB]
    if not files and not tables:
        return None
    return DeviceChange(name, kind, status, tables, files)


def _files(old: Path, new: Path) -> dict[str, str]:
    """Relative path -> added, removed or changed, for the files under two folders that differ."""

    def listing(root: Path) -> dict[str, Path]:
        return {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file()} if root.is_dir() else {}

    a, b = listing(old), listing(new)
    out = {}
    for rel in sorted(set(a) | set(b)):
        if rel not in a:
            out[rel] = "added"
        elif rel not in b:
            out[rel] = "removed"
        elif a[rel].read_bytes() != b[rel].read_bytes():
            out[rel] = "changed"
    return out


def _json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.is_file() else {}
