# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Report files the action plugins write on the controller: written whole or not at all, and only when their
content changed (so a second run reports no change)."""

from __future__ import annotations

import os
import re


def write_files(files: dict[str, str], check_mode: bool, ignore: re.Pattern[str] | None = None) -> bool:
    """Write each ``path -> text`` whose file holds something else; whether any did (or would, in check mode).

    ``ignore``: lines matching it do not count as a difference (a report's timestamp). A file is written to a
    temporary name and renamed, so a reader never sees half of it; missing folders are created.
    """
    changed = False
    for path, text in files.items():
        if _same(path, text, ignore):
            continue
        changed = True
        if not check_mode:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path + ".tmp", "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(path + ".tmp", path)
    return changed


def _same(path: str, text: str, ignore: re.Pattern[str] | None) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            old = fh.read()
    except FileNotFoundError:
        return False
    if ignore is None:
        return old == text
    return [line for line in old.splitlines() if not ignore.match(line)] == [
        line for line in text.splitlines() if not ignore.match(line)
    ]
