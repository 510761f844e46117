"""The intent's JSON Schema (draft 2020-12), generated from the pydantic models, for editors and CI linters.

Editors with the YAML language server pick it up from the first line of a fabric file::

    # yaml-language-server: $schema=../fabric.schema.json
"""

from __future__ import annotations

from typing import Any

from hwaac.model.intent import Intent

SCHEMA_ID = "https://aiinfra.dev/hwaac/fabric.schema.json"


def intent_json_schema() -> dict[str, Any]:
    """The JSON Schema of ``fabric.yml`` (a dict; dump it as JSON)."""
    schema = Intent.model_json_schema(mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
        "title": "hwaac fabric intent",
    }
