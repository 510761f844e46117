"""hwaac: Hardware-as-Code for AI GPU clusters.

The public API, a few functions in the style of pyavd:

- :func:`load_intent` - read and validate ``inventory/<fabric>/fabric.yml`` (raises ``IntentError``);
- :func:`build_plan` - intent -> topology, port-level cabling, addresses and ASNs (pure, deterministic);
- :func:`render_to_dir` - plan -> every device's configuration and the fabric documents, in one folder;
- :func:`diff_plans` - compare two plan documents (added, changed, removed, renumbered);
- :func:`intent_json_schema` - the intent's JSON Schema.
"""

from hwaac.errors import IntentError, IntentIssue, RenumberError
from hwaac.plan import build_plan
from hwaac.plan.diff import diff_plans
from hwaac.render import render_to_dir
from hwaac.schema import intent_json_schema
from hwaac.validate import load_intent

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
