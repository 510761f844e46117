"""Every filter of the collection has documentation ansible-doc renders (plugins/filter/<name>.yml): one
``ansible-doc -t filter --json`` call for all of them, which leaves out a filter whose doc is missing or does not
load; the documented options are the filter's parameters; the tool list of parse_tool_output is the filter's."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
FILTER_DIR = REPO / "plugins" / "filter"
FILES = sorted(p.stem for p in FILTER_DIR.glob("*.py"))


def filters() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for stem in FILES:
        module = importlib.import_module(f"ansible_collections.aiinfra.hwaac.plugins.filter.{stem}")
        out.update(module.FilterModule().filters())
    return out


FILTERS = filters()


@cache
def docs() -> dict[str, Any]:
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(REPO)}
    names = [f"aiinfra.hwaac.{name}" for name in sorted(FILTERS)]
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-doc"), "-t", "filter", "--json", *names],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"out": json.loads(proc.stdout), "stderr": proc.stderr}


def test_every_doc_file_is_a_filter() -> None:
    """A .yml beside the plugins that names no filter is a stale doc (a renamed filter)."""
    assert {p.stem for p in FILTER_DIR.glob("*.yml")} == set(FILTERS)


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_ansible_doc_renders(name: str) -> None:
    got = docs()["out"]
    full = f"aiinfra.hwaac.{name}"
    assert full in got, f"ansible-doc has no documentation for {full}:\n{docs()['stderr'][-2000:]}"
    doc = got[full]
    assert doc["doc"]["name"] == name and doc["doc"]["short_description"] and doc["doc"]["description"]
    assert doc["return"]["_value"]["description"]
    examples = yaml.safe_load(doc["examples"])
    assert examples and all(f"aiinfra.hwaac.{name}" in json.dumps(task) for task in examples[-1:]), (
        "the last example uses the filter"
    )
    # the documented options are the filter's parameters (the input as _input), and the positional ones in order
    options = set(doc["doc"]["options"])
    params = list(inspect.signature(FILTERS[name]).parameters.values())
    named = [p.name for p in params[1:] if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    assert "_input" in options and set(named) <= options, (named, sorted(options))
    positional = [p.strip() for p in doc["doc"].get("positional", "").split(",") if p.strip()]
    assert positional == named[: len(positional)]


def test_parse_tool_output_documents_every_tool() -> None:
    from ansible_collections.aiinfra.hwaac.plugins.filter.tool_output import _table

    doc = docs()["out"]["aiinfra.hwaac.parse_tool_output"]["doc"]
    assert sorted(doc["options"]["tool"]["choices"]) == sorted(_table())
