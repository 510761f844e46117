"""The minimal intent with a storage section, and the issue readers, that the storage intent tests share."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from hwaac.errors import IntentIssue
from hwaac.model.intent import Intent
from hwaac.model.storage_rules import check_storage

REPO = Path(__file__).resolve().parents[2]
MINIMAL = REPO / "tests/fixtures/intents/valid/minimal.yml"  # 2 rails, 1 plane


def yaml_of(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(io.StringIO(text))


def storage(**changes: Any) -> dict[str, Any]:
    """A valid storage section for the minimal fabric, with top-level keys replaced by ``changes``."""
    base: dict[str, Any] = {
        "client_version": "2.15.5",
        "lnet": {"networks": [{"net": "o2ib0", "rails": [0, 1], "routes": ["10.20.0.0/16"]}]},
        "filesystems": [
            {"name": "lfs1", "mgs": ["10.20.0.1@o2ib,10.20.1.1@o2ib", "10.20.0.2@o2ib"], "mount_point": "/mnt/lfs1"}
        ],
    }
    base.update(changes)
    return base


def intent_with(st: dict[str, Any] | None, **fabric: Any) -> Intent:
    data = yaml_of(MINIMAL.read_text())
    data["fabric"].update(fabric)
    if st is not None:
        data["storage"] = st
    return Intent.model_validate(data)


def issues_of(st: dict[str, Any], **fabric: Any) -> list[IntentIssue]:
    return check_storage(intent_with(st, **fabric))


def only(issues: list[IntentIssue]) -> IntentIssue:
    assert len(issues) == 1, "\n".join(map(str, issues))
    return issues[0]


def fs(**changes: Any) -> list[dict[str, Any]]:
    return [{**storage()["filesystems"][0], **changes}]


def net(**changes: Any) -> dict[str, Any]:
    return {"lnet": {"networks": [{"net": "o2ib0", "rails": [0, 1], "routes": ["10.20.0.0/16"], **changes}]}}
