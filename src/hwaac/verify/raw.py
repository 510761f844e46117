"""Raw tool outputs per device, as every collector hands them to the checks, and the facts folder format.

A facts folder (written by the playbook's ``fabric_facts`` or ``hwaac verify --save-facts``) holds one
``<device>.json`` per device (``format`` hwaac-verify-facts/1): each output keyed by its command line
(``shlex.join(argv)``) with its ``argv``, ``rc``, ``stdout``, ``stderr`` and ``error`` (set when the command could
not be run at all, ``rc`` then null). The shape: docs/verify.md "Collectors".
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hwaac.fileio import write_atomic

FORMAT = "hwaac-verify-facts/1"


@dataclass(frozen=True, slots=True)
class Command:
    """One tool invocation on a device; ``key`` (the command line) names its output."""

    argv: tuple[str, ...]
    key: str = field(init=False, repr=False, compare=False)  # computed once: the checks look outputs up by it

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", shlex.join(self.argv))


@dataclass(frozen=True, slots=True)
class Raw:
    """What one command gave: exit status and both streams, or ``error`` when it could not be run."""

    argv: tuple[str, ...]
    rc: int | None = None
    stdout: str = ""
    stderr: str = ""
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "argv": list(self.argv),
            "rc": self.rc,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> Raw:
        """Raises: ValueError naming ``where`` when a field has the wrong type."""
        argv = data.get("argv")
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise ValueError(f"{where}: argv must be a list of strings, got {argv!r}")
        rc = data.get("rc")
        if rc is not None and not isinstance(rc, int):
            raise ValueError(f"{where}: rc must be an integer or null, got {rc!r}")
        for name in ("stdout", "stderr"):
            if not isinstance(data.get(name, ""), str):
                raise ValueError(f"{where}: {name} must be a string")
        error = data.get("error")
        if error is not None and not isinstance(error, str):
            raise ValueError(f"{where}: error must be a string or null, got {error!r}")
        return cls(tuple(argv), rc, data.get("stdout", ""), data.get("stderr", ""), error)


# device -> command key -> output
Outputs = dict[str, dict[str, Raw]]


class Runner(Protocol):
    """What the lab collector needs of a lab (hwaac.lab.Lab has it): run argv in a device's namespace."""

    def run(self, device: str, argv: Sequence[str], *, timeout: float = ...) -> Any: ...


class Collector(Protocol):
    """Gathers the raw outputs of the given commands on the given devices. Checks never see how."""

    def collect(self, requests: Mapping[str, Sequence[Command]]) -> Outputs: ...


def write_facts_folder(folder: str | Path, outputs: Outputs) -> list[Path]:
    """Write one ``<device>.json`` per device (each replaced atomically); the files written."""
    base = Path(folder)
    base.mkdir(parents=True, exist_ok=True)
    written = []
    for device, raws in sorted(outputs.items()):
        path = base / f"{device}.json"
        doc = {"format": FORMAT, "device": device, "outputs": {k: r.to_dict() for k, r in sorted(raws.items())}}
        write_atomic(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
        written.append(path)
    return written


def read_facts_file(path: str | Path) -> tuple[str, dict[str, Raw]]:
    """``(device, outputs)`` of one facts file.

    Raises:
        ValueError: not JSON, not of this format, or a malformed output (naming the file and the field).
    """
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}: not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise ValueError(f"{p}: not an hwaac facts file (expected format {FORMAT!r}, got {got!r})")
    device = doc.get("device")
    if not isinstance(device, str) or not device:
        raise ValueError(f"{p}: device must be a non-empty string, got {device!r}")
    outputs = doc.get("outputs")
    if not isinstance(outputs, dict):
        raise ValueError(f"{p}: outputs must be an object of command line -> output")
    return device, {
        k: Raw.from_dict(v if isinstance(v, dict) else {}, f"{p}: outputs[{k!r}]") for k, v in outputs.items()
    }


def read_facts_folder(folder: str | Path) -> Outputs:
    """Every ``*.json`` facts file of ``folder``.

    Raises:
        ValueError: the folder has no facts file, or one is malformed (see :func:`read_facts_file`).
    """
    base = Path(folder)
    files = sorted(base.glob("*.json"))
    if not files:
        raise ValueError(f"{base}: no facts files (<device>.json) in this folder")
    outputs: Outputs = {}
    for f in files:
        device, raws = read_facts_file(f)
        outputs[device] = raws
    return outputs
