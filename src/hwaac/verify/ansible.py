"""Collector for what the Ansible path gathered: ``aiinfra.hwaac.fabric_facts`` results, or the facts folder
(``<device>.json``) it writes. Checks read these exactly as they read a lab's live outputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hwaac.verify.raw import Command, Outputs, Raw, read_facts_folder

NOT_GATHERED = "not gathered (the facts hold no output of this command)"


class FactsCollector:
    """Serves already gathered outputs; a requested command that was not gathered comes back with ``error``."""

    def __init__(self, outputs: Outputs) -> None:
        self.outputs = outputs
        self.requested: dict[str, list[Command]] = {}

    @classmethod
    def from_folder(cls, folder: str | Path) -> FactsCollector:
        """Raises: ValueError (see :func:`hwaac.verify.raw.read_facts_folder`)."""
        return cls(read_facts_folder(folder))

    def collect(self, requests: Mapping[str, Sequence[Command]]) -> Outputs:
        self.requested = {d: list(c) for d, c in requests.items()}
        out: Outputs = {}
        for device, commands in requests.items():
            have = self.outputs.get(device, {})
            out[device] = {c.key: have.get(c.key) or Raw(c.argv, error=NOT_GATHERED) for c in commands}
        return out


def outputs_from_module(result: Mapping[str, Any], where: str) -> dict[str, Raw]:
    """The ``outputs`` of a ``fabric_facts`` module result (command line -> {argv, rc, stdout, stderr, error}).

    Raises:
        ValueError: naming ``where`` and the field, when the result is not of that shape.
    """
    outputs = result.get("outputs")
    if not isinstance(outputs, Mapping):
        raise ValueError(f"{where}: the module result has no 'outputs' object")
    return {
        key: Raw.from_dict(value if isinstance(value, Mapping) else {}, f"{where}: outputs[{key!r}]")
        for key, value in outputs.items()
    }
