"""Every module's DOCUMENTATION, EXAMPLES and RETURN is YAML that loads (a ': ' inside a plain scalar breaks it, and
then ansible-doc and ansible-test sanity fail; this catches it in the unit tests, in a second)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

MODULES = sorted((Path(__file__).resolve().parents[3] / "plugins" / "modules").glob("*.py"))


def doc_blocks(path: Path) -> dict[str, str]:
    blocks = {}
    for node in ast.parse(path.read_text()).body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in ("DOCUMENTATION", "EXAMPLES", "RETURN")
        ):
            blocks[node.targets[0].id] = node.value.value
    return blocks


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_documentation_examples_and_return_load(path: Path) -> None:
    blocks = doc_blocks(path)
    assert set(blocks) == {"DOCUMENTATION", "EXAMPLES", "RETURN"}, sorted(blocks)
    doc = yaml.safe_load(blocks["DOCUMENTATION"])
    assert doc["module"] == path.stem
    assert all(isinstance(d, str) for d in [doc["short_description"], *doc.get("description", [])])
    for name, option in doc.get("options", {}).items():
        descr = option["description"]
        assert all(isinstance(d, str) for d in (descr if isinstance(descr, list) else [descr])), name
    yaml.safe_load(blocks["EXAMPLES"])
    yaml.safe_load(blocks["RETURN"])
