"""docs/reference/intent.md is what scripts/intent_reference.py writes from inventory/fabric.schema.json."""

import copy
import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "inventory" / "fabric.schema.json").read_text(encoding="utf-8"))


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("intent_reference", REPO / "scripts" / "intent_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_page_is_what_the_schema_gives() -> None:
    page = (REPO / "docs" / "reference" / "intent.md").read_text(encoding="utf-8")
    assert page == _script().render(SCHEMA), "run .venv/bin/python scripts/intent_reference.py"


def test_every_property_is_listed_under_its_object() -> None:
    text = _script().render(SCHEMA)
    sections = dict(re.findall(r"^## (\w+)\n(.*?)(?=^## |\Z)", text, re.M | re.S))
    objects = {"Intent": SCHEMA, **SCHEMA["$defs"]}
    assert set(sections) == set(objects)
    for name, node in objects.items():
        listed = re.findall(r"^- \*\*`([^`]+)`\*\*", sections[name], re.M)
        assert listed == list(node.get("properties", {})), name


def test_a_changed_schema_changes_the_page() -> None:
    schema = copy.deepcopy(SCHEMA)
    schema["$defs"]["FabricSection"]["properties"]["rails"]["maximum"] = 32
    text = _script().render(schema)
    assert text != _script().render(SCHEMA)
    assert "≤ 32" in text.split("## FabricSection")[1].split("## ")[0]


def test_check_reports_a_stale_page(tmp_path: Path) -> None:
    page = tmp_path / "intent.md"
    script = _script()
    assert script.main(["-o", str(page)]) == 0
    assert script.main(["--check", "-o", str(page)]) == 0
    page.write_text(page.read_text(encoding="utf-8").replace("Scalable units built now.", "Scalable units."))
    assert script.main(["--check", "-o", str(page)]) == 1
