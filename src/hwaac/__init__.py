"""hwaac: Hardware-as-Code for AI GPU clusters.

The public API, a few functions in the style of pyavd:

- :func:`load_intent` - read and validate ``inventory/<fabric>/fabric.yml`` (raises ``IntentError``);
- :func:`build_plan` - intent -> topology, port-level cabling, addresses and ASNs (pure, deterministic);
- :func:`render_to_dir` - plan -> every device's configuration and the fabric documents, in one folder;
- :func:`diff_plans` - compare two plan documents (added, changed, removed, renumbered);
- :func:`intent_json_schema` - the intent's JSON Schema.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hwaac.errors import IntentError, IntentIssue, RenumberError
    from hwaac.plan import build_plan
    from hwaac.plan.diff import diff_plans
    from hwaac.render import render_to_dir
    from hwaac.schema import intent_json_schema
    from hwaac.validate import load_intent

# name -> module: imported on first use, so that ``import hwaac.<module>`` (the CLI, the Terraform provider, the
# Ansible plugins) loads only what it uses, not the planner, every renderer and the schema
_API = {
    "IntentError": "hwaac.errors",
    "IntentIssue": "hwaac.errors",
    "RenumberError": "hwaac.errors",
    "build_plan": "hwaac.plan",
    "diff_plans": "hwaac.plan.diff",
    "render_to_dir": "hwaac.render",
    "intent_json_schema": "hwaac.schema",
    "load_intent": "hwaac.validate",
}


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'hwaac' has no attribute {name!r}")
    value = getattr(importlib.import_module(_API[name]), name)
    globals()[name] = value
    return value


__all__ = [
    "IntentError",
    "IntentIssue",
    "RenumberError",
    "build_plan",
    "diff_plans",
    "intent_json_schema",
    "load_intent",
    "render_to_dir",
]
__version__ = "0.1.0"
