"""Just enough of an intent to lay out a stack: ``fabric.name``, ``fabric.planes`` and ``fabric.site``.

Deliberately not :func:`hwaac.validate.load_intent`: an intent whose pools name NetBox prefix roles cannot be
validated without NetBox, and synthesizing a stack must work offline. The provider validates the whole intent at
plan time; here only the fields the stack's layout depends on are read and checked.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hwaac.errors import IntentError, IntentIssue
from hwaac.model.limits import read_text
from hwaac.model.loader import parse_yaml

INTENT_FILE_NAME = "fabric.yml"


@dataclass(frozen=True, slots=True)
class FabricHeader:
    """The fields of ``fabric:`` a stack needs.

    Attributes:
        name: ``fabric.name``, e.g. ``"demo"`` (also the default stack id).
        planes: ``fabric.planes``, number of independent planes (default 1).
        site: ``fabric.site``, NetBox site slug, or ``None`` when the intent leaves it out.
        path: the intent file read (absolute).
    """

    name: str
    planes: int
    site: str | None
    path: Path


def intent_path(path: str | os.PathLike[str]) -> Path:
    """``path`` itself, or ``path/fabric.yml`` when ``path`` is a fabric folder; made absolute.

    Raises:
        FileNotFoundError: no such file.
    """
    p = Path(path)
    if p.is_dir():
        p = p / INTENT_FILE_NAME
    if not p.is_file():
        raise FileNotFoundError(f"intent file not found: {p}")
    return p.resolve()


def read_fabric_header(path: str | os.PathLike[str]) -> FabricHeader:
    """Read ``fabric.name``, ``fabric.planes`` and ``fabric.site`` from the intent at ``path`` (a file or a fabric
    folder).

    Raises:
        FileNotFoundError: no intent file at ``path``.
        IntentError: the file is not YAML, has no ``fabric`` mapping, no ``fabric.name`` string, or a
            ``fabric.planes`` that is not a whole number >= 1; each issue names file and line.
    """
    p = intent_path(path)
    file = str(p)
    # within the same limits as every intent read (docs/intent-limits.md): size, encoding, nesting, aliases
    root, index = parse_yaml(read_text(p), file)

    def _line(*keys: str) -> int:
        return index.line_of(keys)

    fabric = root.get("fabric") if isinstance(root, dict) else None
    if not isinstance(fabric, dict):
        raise IntentError(
            [
                IntentIssue(
                    "fabric",
                    "missing or not a mapping",
                    valid="a mapping with name, site, ...",
                    file=file,
                    line=_line("fabric"),
                )
            ]
        )
    issues = []
    name = fabric.get("name")
    if not isinstance(name, str) or not name:
        issues.append(
            IntentIssue(
                "fabric.name",
                "missing or not a string",
                name,
                "a fabric name, e.g. demo",
                file=file,
                line=_line("fabric", "name"),
            )
        )
    planes = fabric.get("planes", 1)
    if isinstance(planes, bool) or not isinstance(planes, int) or planes < 1:
        issues.append(
            IntentIssue(
                "fabric.planes",
                "not a whole number >= 1",
                planes,
                "1, 2 or 4",
                file=file,
                line=_line("fabric", "planes"),
            )
        )
    site = fabric.get("site")
    if site is not None and not isinstance(site, str):
        issues.append(
            IntentIssue(
                "fabric.site", "not a string", site, "a NetBox site slug", file=file, line=_line("fabric", "site")
            )
        )
    if issues:
        raise IntentError(issues)
    return FabricHeader(name=str(name), planes=int(planes), site=site, path=p)
