"""What ``hwaac deploy`` is asked to run, checked before anything runs: the playbook, inventories, extra variables
(``KEY=VALUE``, inline YAML/JSON or ``@file``, as ansible-playbook's ``-e`` reads them), limit, batch size, check
and diff, the artifacts folder."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from ansible.parsing.splitter import parse_kv

from hwaac.deploy import playbooks
from hwaac.deploy.errors import DeployUsageError

DEFAULT_ARTIFACTS = Path("build") / "deploy"


@dataclass(frozen=True)
class DeployRequest:
    """A checked request: every path absolute, ``extra_args`` as ansible-playbook takes them (``-e VALUE`` pairs),
    ``batch_vars`` the serial variables that ``--batch-size`` sets."""

    playbook: Path
    artifacts: Path
    inventories: list[str] = field(default_factory=list)
    extra_args: list[str] = field(default_factory=list)
    batch_vars: dict[str, str] = field(default_factory=dict)
    limit: str | None = None
    check: bool = False
    diff: bool = False

    @property
    def name(self) -> str:
        return self.playbook.stem


def _inventory(value: str) -> str:
    # ansible-playbook reads a value with a comma as a host list ("h1,h2," or "localhost,")
    if "," in value:
        return value
    path = Path(value).expanduser()
    if not path.exists():
        raise DeployUsageError(
            f"-i {value!r}: no such inventory file or folder (a path, or a host list with a comma such as 'localhost,')"
        )
    return str(path.resolve())


def _extra_var(value: str) -> str:
    """One ``-e`` value, checked as ansible-playbook reads it (an ``@file`` path made absolute)."""
    text = value.strip()
    if text.startswith("@"):
        path = Path(text[1:]).expanduser()
        if not path.is_file():
            raise DeployUsageError(
                f"-e {value!r}: no such file {path} (-e @FILE names a YAML or JSON file of variables)"
            )
        return f"@{path.resolve()}"
    if text.startswith(("{", "[")):
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise DeployUsageError(f"-e {value!r}: not valid YAML/JSON: {str(exc).splitlines()[0]}") from None
        if not isinstance(doc, dict):
            raise DeployUsageError(f"-e {value!r}: inline variables must be a mapping, e.g. '{{\"key\": 1}}'")
        return value
    try:
        pairs = parse_kv(text)
    except Exception as exc:  # ansible's parser raises its own error types for unbalanced quotes
        raise DeployUsageError(f"-e {value!r}: not KEY=VALUE: {exc}") from None
    if not pairs or "_raw_params" in pairs:
        raise DeployUsageError(
            f"-e {value!r}: not KEY=VALUE (valid: KEY=VALUE [KEY=VALUE ...], inline YAML/JSON "
            f"'{{\"key\": value}}', or @FILE)"
        )
    return value


def extra_var_secrets(extra_args: list[str]) -> dict[str, str]:
    """The values of ``-e`` variables whose names say secret (:data:`hwaac.deploy.artifacts.SECRET_NAME`), by
    ``-e <name>``: from ``KEY=VALUE`` words, inline mappings and ``@file`` mappings (top-level keys)."""
    from hwaac.deploy.artifacts import MIN_SECRET, SECRET_NAME

    found: dict[str, str] = {}
    for flag, value in zip(extra_args[::2], extra_args[1::2], strict=True):
        if flag != "-e":
            continue
        text = value.strip()
        try:
            if text.startswith("@"):
                doc = yaml.safe_load(Path(text[1:]).read_text())
            elif text.startswith(("{", "[")):
                doc = yaml.safe_load(text)
            else:
                doc = parse_kv(text)
        except (OSError, yaml.YAMLError):
            continue
        for key, val in doc.items() if isinstance(doc, dict) else ():
            if (
                isinstance(key, str)
                and SECRET_NAME.search(key)
                and isinstance(val, str | int)
                and len(str(val)) >= MIN_SECRET
            ):
                found[f"-e {key}"] = str(val)
    return found


def artifacts_folder(given: str | None, playbook: Path, now: float | None = None) -> Path:
    """``--artifacts DIR``, or ``build/deploy/<YYYYmmddTHHMMSS>-<playbook>`` of the working folder.

    Raises:
        DeployUsageError: DIR exists and is not an empty folder (a run's artifacts are never mixed).
    """
    if given is None:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now))
        path = DEFAULT_ARTIFACTS / f"{stamp}-{playbook.stem}"
    else:
        path = Path(given).expanduser()
    path = path.resolve()
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise DeployUsageError(
            f"--artifacts {given or path}: exists and is not an empty folder (each run keeps its "
            f"artifacts in a folder of its own)"
        )
    base = next(p for p in path.parents if p.exists())  # the folder the artifacts will be made in
    if not base.is_dir() or not os.access(base, os.W_OK | os.X_OK):
        raise DeployUsageError(f"--artifacts {given or path}: cannot be made in {base} (not a writable folder)")
    return path


def build_request(
    playbook: str,
    *,
    inventories: list[str] | None = None,
    extra_vars: list[str] | None = None,
    limit: str | None = None,
    batch_size: str | None = None,
    check: bool = False,
    diff: bool = False,
    artifacts: str | None = None,
) -> DeployRequest:
    """The checked request of ``hwaac deploy``'s arguments.

    Raises:
        DeployUsageError: the first bad argument, naming it, its value and what is valid.
    """
    path = playbooks.resolve(playbook)
    invs = [_inventory(v) for v in inventories or []]
    extra: list[str] = []
    for value in extra_vars or []:
        extra += ["-e", _extra_var(value)]
    if limit is not None and not limit.strip():
        raise DeployUsageError(f"--limit {limit!r}: empty (valid: a host pattern such as 'spine-p0-01,leaf-*')")
    batch = playbooks.batch_size_vars(path, batch_size) if batch_size is not None else {}
    return DeployRequest(
        playbook=path,
        artifacts=artifacts_folder(artifacts, path),
        inventories=invs,
        extra_args=extra,
        batch_vars=batch,
        limit=limit,
        check=check,
        diff=diff,
    )
