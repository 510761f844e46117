"""The collection's playbooks for ``hwaac deploy``: a name (``fabric_deploy``) or a path to a playbook file, and
the variables that set each play's ``serial`` (``--batch-size``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from hwaac.deploy.errors import DeployUsageError
from hwaac.deploy.serial import BatchSizeError, parse_batch_size

COLLECTION = Path(__file__).resolve().parents[3]  # the collection root (galaxy.yml, playbooks/) of a checkout
PLAYBOOKS = COLLECTION / "playbooks"
# serial: "{{ NAME }}" or "{{ NAME | default(...) }}", as the collection's rolling playbooks write it
SERIAL_VAR = re.compile(r"^\s*\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\|\s*default\(.*\))?\s*\}\}\s*$")


def names() -> list[str]:
    """The collection's playbooks by name (``playbooks/<name>.yml``), sorted."""
    return sorted(p.stem for p in PLAYBOOKS.glob("*.yml"))


def resolve(playbook: str) -> Path:
    """The playbook file of ``playbook``: a name of the collection (``fabric_deploy`` or ``fabric_deploy.yml``)
    first, else a path to a playbook file.

    Raises:
        DeployUsageError: neither, naming the valid names.
    """
    stem = playbook.removesuffix(".yml").removesuffix(".yaml")
    if "/" not in playbook and stem in names():
        return PLAYBOOKS / f"{stem}.yml"
    path = Path(playbook).expanduser()
    if path.is_file():
        return path.resolve()
    valid = ", ".join(names()) or f"none found in {PLAYBOOKS}"
    raise DeployUsageError(
        f"PLAYBOOK {playbook!r}: not a playbook of the collection aiinfra.hwaac nor a file; "
        f"valid names: {valid} (or the path of a playbook file)"
    )


def _plays(path: Path, seen: set[Path]) -> list[dict[str, Any]]:
    """The plays of a playbook file, ``import_playbook`` followed (a templated import name is left out)."""
    if path in seen or not path.is_file():
        return []
    seen.add(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DeployUsageError(f"PLAYBOOK {path}: not readable as YAML: {exc}") from None
    if not isinstance(doc, list):
        raise DeployUsageError(f"PLAYBOOK {path}: not a playbook (a YAML list of plays), got {type(doc).__name__}")
    plays: list[dict[str, Any]] = []
    for item in doc:
        if not isinstance(item, dict):
            continue
        target = item.get("import_playbook", item.get("ansible.builtin.import_playbook"))
        if isinstance(target, str):
            if "{{" not in target:
                plays += _plays((path.parent / target).resolve(), seen)
            continue
        plays.append(item)
    return plays


def serial_variables(path: Path) -> list[str]:
    """The variables that set the ``serial`` of the plays of ``path`` (and of the playbooks it imports), in order:
    the ``NAME`` of ``serial: "{{ NAME | default(...) }}"``."""
    out: list[str] = []
    for play in _plays(path.resolve(), set()):
        m = SERIAL_VAR.match(str(play.get("serial", "")))
        if m and m.group(1) not in out:
            out.append(m.group(1))
    return out


def batch_size_vars(path: Path, batch_size: str) -> dict[str, str]:
    """The extra variables that make every rolling play of ``path`` run in batches of ``batch_size``.

    Raises:
        DeployUsageError: a bad size, or a playbook whose plays take no batch size from a variable.
    """
    try:
        size = parse_batch_size(batch_size, "--batch-size")
    except BatchSizeError as exc:
        raise DeployUsageError(str(exc)) from None
    found = serial_variables(path)
    if not found:
        rolling = [n for n in names() if serial_variables(PLAYBOOKS / f"{n}.yml")]
        raise DeployUsageError(
            f"--batch-size: no play of {path.name} takes its serial from a variable "
            f"(serial: \"{{{{ NAME | default(...) }}}}\"), so it has no batches to size; "
            f"the collection's rolling playbooks: {', '.join(rolling)}"
        )
    return {name: size for name in found}
