"""The config diff filters (plugins/filter/config_diff.py over hwaac.apply.config_diff): the summary of a push to a
demo leaf from the documents and from the patch the push sends, the counts, and errors as filter errors."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.aiinfra.hwaac.plugins.filter.config_diff import FilterModule
from hwaac.apply.sonic_patch import config_patch
from hwaac.plan import build_plan
from hwaac.render.sonic import render_config_db
from hwaac.validate import load_intent

ROOT = Path(__file__).resolve().parents[3]
FILTERS = FilterModule().filters()


@pytest.fixture(scope="module")
def push() -> tuple[dict[str, Any], dict[str, Any]]:
    """(running, desired) of the demo leaf leaf-p0-su01-r0: running has one neighbour renumbered and one MTU off."""
    plan = build_plan(load_intent(ROOT / "inventory" / "demo"))
    desired = json.loads(
        json.dumps(render_config_db(plan, next(s for s in plan.switches if s.name == "leaf-p0-su01-r0")))
    )
    running = copy.deepcopy(desired)
    first = sorted(running["BGP_NEIGHBOR"])[0]
    running["BGP_NEIGHBOR"]["default|192.0.2.99"] = running["BGP_NEIGHBOR"].pop(first)
    running["PORT"]["Ethernet0"]["mtu"] = "1500"
    return running, desired


def test_documents_and_patch_read_the_same(push: tuple[dict[str, Any], dict[str, Any]]) -> None:
    running, desired = push
    summary = FILTERS["config_db_diff"](running, desired)
    first = sorted(desired["BGP_NEIGHBOR"])[0]
    assert summary == {
        "BGP_NEIGHBOR": {"added": [first], "removed": ["default|192.0.2.99"], "changed": {}},
        "PORT": {"added": [], "removed": [], "changed": {"Ethernet0": ["mtu"]}},
    }
    patch = config_patch(running, desired)
    assert FILTERS["config_patch_summary"](patch) == summary
    assert FILTERS["config_patch_summary"](patch, running) == summary
    assert FILTERS["config_diff_counts"](summary) == {
        "BGP_NEIGHBOR": {"added": 1, "removed": 1, "changed": 0},
        "PORT": {"added": 0, "removed": 0, "changed": 1},
    }
    assert FILTERS["config_db_diff"](desired, desired) == {}


BAD = [
    ("config_db_diff", ({"PORT": []}, {}), r"before: table 'PORT' must be an object"),
    (
        "config_patch_summary",
        ([{"op": "add", "path": "/PORT/Ethernet0"}],),
        r"patch\[0\]: a 'add' operation needs a 'value'",
    ),
    (
        "config_patch_summary",
        ([{"op": "remove", "path": "/PORT"}],),
        r"patch\[0\]: remove of the whole table /PORT cannot be summarized without the config it applies to",
    ),
    (
        "config_diff_counts",
        ({"PORT": ["Ethernet0"]},),
        r"expected the output of config_db_diff or config_patch_summary",
    ),
]


@pytest.mark.parametrize(("name", "args", "message"), BAD, ids=[b[0] + str(i) for i, b in enumerate(BAD)])
def test_errors(name: str, args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(AnsibleFilterError, match=f"^aiinfra.hwaac.{name}: {message}"):
        FILTERS[name](*args)
