"""The demo intent (inventory/demo), optionally grown to N SUs, as YAML text: the fabrics the benchmarks run.

Growing raises ``su_capacity`` with ``su_count`` (spines sized for them) and widens the leaf-spine pool past
4 SUs (32 uplinks per leaf x 8 leaves per SU: a /20 holds 4 SUs of /31s).
"""

from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "inventory" / "demo" / "fabric.yml"


def demo_intent_text(sus: int | None = None) -> str:
    """The demo's fabric.yml text, or the demo grown to ``sus`` SUs."""
    if sus is None:
        return DEMO.read_text()
    data = yaml.safe_load(DEMO.read_text())
    f = data["fabric"]
    f["su_count"] = sus
    f["su_capacity"] = max(sus, int(f.get("su_capacity") or 0))
    if sus > 4:
        data["addressing"]["leaf_spine"] = "10.1.0.0/16"
    return yaml.safe_dump(data, sort_keys=False)
