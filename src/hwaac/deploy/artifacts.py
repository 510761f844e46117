"""The artifacts folder of a deploy: ansible-runner's artifacts of the run (``job_events/*.json``, ``stdout``,
``stderr``, ``rc``, ``status``, ``command``) copied out of the private data dir with every secret of the
environment masked, and hwaac's ``summary.json``; the same masking for the events the display is fed."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hwaac.fileio import atomic_folder

MASK = "********"
# names of environment variables whose values are secrets (NETBOX_TOKEN, AWS_SECRET_ACCESS_KEY, VAULT_PASSWORD...)
SECRET_NAME = re.compile(r"TOKEN|PASSWORD|PASSWD|SECRET|API_?KEY|PRIVATE_?KEY|CREDENTIAL", re.IGNORECASE)
MIN_SECRET = 4  # shorter values would mask ordinary text
# the part of the run's environment kept in the copied ``command`` file (the rest may hold anything)
COMMAND_ENV = re.compile(r"^(PATH|ANSIBLE_\w+|RUNNER_\w+)$")
SUMMARY = "summary.json"


def secrets(env: Mapping[str, str]) -> dict[str, str]:
    """The secret values of ``env`` by variable name (names matching :data:`SECRET_NAME`)."""
    return {k: v for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= MIN_SECRET}


def _forms(value: str) -> list[bytes]:
    """A secret as it can appear in a file: as is, and escaped inside a JSON string."""
    out = [value.encode()]
    escaped = json.dumps(value)[1:-1].encode()
    if escaped not in out:
        out.append(escaped)
    return out


def mask(data: bytes, hidden: Mapping[str, str], found: dict[str, int]) -> bytes:
    """``data`` with every secret of ``hidden`` replaced by :data:`MASK`; ``found`` counts them by name."""
    for name, value in hidden.items():
        for form in _forms(value):
            n = data.count(form)
            if n:
                found[name] = found.get(name, 0) + n
                data = data.replace(form, MASK.encode())
    return data


def mask_value(value: Any, hidden: Mapping[str, str]) -> Any:
    """``value`` (JSON's types: an ansible-runner event) with every secret of ``hidden`` masked in its strings, as
    :func:`mask` masks a file."""
    if isinstance(value, str):
        return mask(value.encode(), hidden, {}).decode() if value and hidden else value
    if isinstance(value, dict):
        return {k: mask_value(v, hidden) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_value(v, hidden) for v in value]
    return value


def _command(path: Path) -> bytes:
    """ansible-runner's ``command`` file (the command line, cwd and the whole environment) with the environment
    cut to :data:`COMMAND_ENV`."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    env = doc.get("env") or {}
    doc["env"] = {k: v for k, v in sorted(env.items()) if COMMAND_ENV.match(k)}
    return json.dumps(doc, indent=1).encode()


def copy_artifacts(
    runner_dir: Path, dest: Path, hidden: Mapping[str, str], summary: dict[str, Any] | None = None
) -> dict[str, int]:
    """Copy ansible-runner's artifacts of one run (``runner_dir``, ``<artifact_dir>/<ident>``) to ``dest`` (absent
    or an empty folder), masking ``hidden``; write ``summary`` as ``summary.json``. The files are staged beside
    ``dest`` and moved in at once. Returns how many times each secret was masked."""
    found: dict[str, int] = {}
    with atomic_folder(dest, mode=0o755) as stage:
        if runner_dir.is_dir():
            for src in sorted(runner_dir.rglob("*")):
                rel = src.relative_to(runner_dir)
                if src.is_dir() or src.is_symlink() or rel.parts[0] in ("env.list", "callback"):
                    continue
                data = _command(src) if rel.as_posix() == "command" else src.read_bytes()
                out = stage / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(mask(data, hidden, found))
        if summary is not None:
            text = json.dumps({**summary, "masked": found}, indent=1).encode()
            (stage / SUMMARY).write_bytes(mask(text, hidden, {}))
    return found
