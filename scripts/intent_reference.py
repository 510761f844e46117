"""Write the intent reference (docs/reference/intent.md) from the intent's JSON Schema.

Reads inventory/fabric.schema.json (``make schema`` writes it from hwaac.model) and lists every object of the
intent, from the file's top level down: each property with its type, default, constraints and description.
``--check`` exits 1 when the page on disk is not what the schema gives (tests/unit/test_docs_intent_reference.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "inventory" / "fabric.schema.json"
PAGE = REPO / "docs" / "reference" / "intent.md"
ROOT = "Intent"  # the section of the file's top level

# JSON Schema validation keywords (draft 2020-12, "A Vocabulary for Structural Validation") and how to say them
CONSTRAINTS: tuple[tuple[str, str], ...] = (
    ("minimum", "≥ {}"), ("exclusiveMinimum", "> {}"), ("maximum", "≤ {}"), ("exclusiveMaximum", "< {}"),
    ("multipleOf", "a multiple of {}"), ("minLength", "at least {} characters"),
    ("maxLength", "at most {} characters"), ("minItems", "at least {} items"),
    ("maxItems", "at most {} items"), ("uniqueItems", "unique items"), ("minProperties", "at least {} keys"),
    ("maxProperties", "at most {} keys"),
)


def ref_name(ref: str) -> str:
    """The definition a local ``$ref`` names (``#/$defs/Name`` -> ``Name``)."""
    return ref.rsplit("/", 1)[-1]


def anchor(name: str) -> str:
    """The anchor MkDocs gives a heading made of one word (Python-Markdown's toc slugify: lower case)."""
    return name.lower()


def code(value: Any) -> str:
    """A value as inline code: JSON, one line, with a longer fence when the text holds a backtick."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def type_of(node: dict[str, Any]) -> str:
    """A property's type in words: links to the objects it uses, ``or`` between alternatives."""
    if "$ref" in node:
        name = ref_name(node["$ref"])
        return f"[{name}](#{anchor(name)})"
    if "anyOf" in node or "oneOf" in node:
        return " or ".join(type_of(alt) for alt in node.get("anyOf", node.get("oneOf")))
    if "const" in node:
        return f"the constant {code(node['const'])}"
    kind = node.get("type")
    if kind == "array":
        items = node.get("items")
        return f"array of {type_of(items)}" if isinstance(items, dict) else "array"
    if kind == "object" and isinstance(node.get("additionalProperties"), dict) and "properties" not in node:
        return f"map of string to {type_of(node['additionalProperties'])}"
    if isinstance(kind, list):
        return " or ".join(kind)
    return kind or "any value"


def constraints_of(node: dict[str, Any]) -> list[str]:
    """The validation keywords of a property and of its alternatives (``anyOf`` members, array items)."""
    out = [text.format(node[key]) for key, text in CONSTRAINTS if key in node and key != "pattern"]
    if "pattern" in node:
        out.append(f"matches {code(node['pattern'])}")
    if "enum" in node:
        out.append("one of " + ", ".join(code(v) for v in node["enum"]))
    for alt in node.get("anyOf", node.get("oneOf", [])):
        out += constraints_of(alt)
    if isinstance(node.get("items"), dict):
        out += [f"items: {c}" for c in constraints_of(node["items"])]
    return out


def notes_of(node: dict[str, Any]) -> list[str]:
    """Descriptions and examples that an alternative of a property carries (e.g. what a prefix string is)."""
    out = []
    for alt in node.get("anyOf", node.get("oneOf", [])):
        if "description" in alt:
            out.append(f"{type_of(alt)}: {flat(alt['description'])}")
        if "examples" in alt:
            out.append(f"{type_of(alt)} examples: " + ", ".join(code(v) for v in alt["examples"]))
    if "examples" in node:
        out.append("examples: " + ", ".join(code(v) for v in node["examples"]))
    return out


def flat(text: str) -> str:
    """A description on one line (a list item's text)."""
    return " ".join(text.split())


def property_lines(name: str, node: dict[str, Any], required: bool) -> list[str]:
    """One property as a list item: name, type, required or default, description; then constraints and notes."""
    head = f"- **`{name}`**: {type_of(node)}"
    head += ", required" if required else (f", default {code(node['default'])}" if "default" in node else "")
    if "description" in node:
        head += f". {flat(node['description'])}"
    lines = [head]
    constraints = constraints_of(node)
    if constraints:
        lines.append("    - constraints: " + "; ".join(dict.fromkeys(constraints)))
    lines += [f"    - {note}" for note in notes_of(node)]
    return lines


def refs_in(node: Any) -> list[str]:
    """The definitions a schema node refers to, in order of appearance, each once."""
    found: list[str] = []
    if isinstance(node, dict):
        if "$ref" in node:
            found.append(ref_name(node["$ref"]))
        for key, value in node.items():
            if key != "default":
                found += refs_in(value)
    elif isinstance(node, list):
        for value in node:
            found += refs_in(value)
    return list(dict.fromkeys(found))


def object_section(name: str, node: dict[str, Any], used_by: list[str]) -> list[str]:
    """One object of the intent: its description, where it is used, whether other keys are allowed, properties."""
    lines = [f"## {name}", ""]
    if "description" in node:
        lines += [node["description"].strip(), ""]
    where = ["Used by: " + ", ".join(f"[{u}](#{anchor(u)})" for u in used_by) + "."] if used_by else []
    if node.get("additionalProperties") is False:
        where.append("No other keys are allowed.")
    if where:
        lines += [" ".join(where), ""]
    required = set(node.get("required", []))
    for prop, sub in node.get("properties", {}).items():
        lines += property_lines(prop, sub, prop in required)
    return [*lines, ""]


def render(schema: dict[str, Any]) -> str:
    """The reference page: the file's top level first, then each object in the order the intent reaches it."""
    defs: dict[str, Any] = schema.get("$defs", {})
    top = {k: v for k, v in schema.items() if k != "$defs"}
    order = [ROOT]
    for name in order:
        for ref in refs_in(top if name == ROOT else defs[name]):
            if ref not in order:
                order.append(ref)
    order += sorted(set(defs) - set(order))  # definitions no property uses (none today): listed all the same
    used_by: dict[str, list[str]] = {name: [] for name in order}
    for name in order:
        for ref in refs_in(top if name == ROOT else defs[name]):
            used_by[ref].append(name)
    lines = [
        "# Intent reference",
        "",
        "<!-- Generated by scripts/intent_reference.py from inventory/fabric.schema.json: do not edit. -->",
        "",
        f"Every key of an intent file (`inventory/<fabric>/fabric.yml`), as the JSON Schema "
        f"`{schema.get('$id', '')}` states it. Semantic rules that a schema cannot say (counts that must fit, "
        "pools that must not overlap) are checked when the intent is loaded: see [Intent limits](../intent-limits.md).",
        "",
    ]
    for name in order:
        lines += object_section(name, top if name == ROOT else defs[name], used_by[name])
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schema", type=Path, default=SCHEMA, help="the intent's JSON Schema")
    ap.add_argument("-o", "--output", type=Path, default=PAGE, help="the page to write")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when the page is not up to date")
    args = ap.parse_args(argv)
    text = render(json.loads(args.schema.read_text(encoding="utf-8")))
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is out of date: run scripts/intent_reference.py", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
