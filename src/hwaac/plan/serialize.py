"""The plan as a JSON document (``plan.json``), the input of ``hwaac plan --against OLD``.

``{"format": "hwaac-plan/1", "fabric", "counts", "switches", "nodes", "links"}``, addresses as text and prefix
lengths as ints; the full shape: docs/plan.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from hwaac.plan.model import Plan, ip_str

FORMAT = "hwaac-plan/1"


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    """The JSON-ready document described in the module docstring."""
    switches = {}
    for s in plan.switches:
        entry: dict[str, Any] = {
            "role": s.role,
            "plane": s.plane,
            "model": s.model,
            "asn": s.asn,
            "loopback": f"{ip_str(s.loopback)}/32",
            # the SONiC release its config_db is rendered for (hwaac.model.sonic_releases)
            "sonic_release": getattr(plan.intent.switches, s.role).sonic_release,
        }
        for key in ("su", "rail", "pod"):
            value = getattr(s, key)
            if value is not None:
                entry[key] = value
        switches[s.name] = entry
    nodes = {n.name: {"kind": n.kind, "su": n.su, "slot": n.slot, "rails": list(n.rails)} for n in plan.nodes}
    links = {
        link.cable_id: {
            "kind": link.kind,
            "plane": link.plane,
            "a": [link.a_device, link.a_port, ip_str(link.a_ip)],
            "b": [link.b_device, link.b_port, ip_str(link.b_ip)],
            "prefixlen": link.prefixlen,
        }
        for link in plan.links
    }
    return {
        "format": FORMAT,
        "fabric": plan.intent.fabric.name,
        "counts": {"switches": len(switches), "nodes": len(nodes), "links": len(links), "gpus": plan.gpu_count},
        "switches": switches,
        "nodes": nodes,
        "links": links,
    }


def write_plan(plan: Plan, path: Path) -> None:
    path.write_bytes(orjson.dumps(plan_to_dict(plan), option=orjson.OPT_INDENT_2) + b"\n")


def read_plan(path: str | Path) -> dict[str, Any]:
    """Load a ``plan.json`` (or the ``plan.json`` inside an output folder).

    Raises:
        OSError: the file cannot be read.
        ValueError: the file is not JSON, or not an hwaac plan document (wrong ``format``, or a section of
            another shape than :func:`plan_to_dict` writes), naming what is wrong.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "plan.json"
    if p.exists() and not p.is_file():
        raise ValueError(f"{p}: not a regular file; expected a plan.json written by hwaac plan")
    try:
        doc = orjson.loads(p.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"{p}: not JSON ({exc})") from None
    problem = plan_doc_problem(doc)
    if problem is not None:
        raise ValueError(f"{p}: not an hwaac plan: {problem}")
    return doc


def plan_doc_problem(doc: Any) -> str | None:
    """Why ``doc`` (a loaded ``plan.json``) is not an hwaac plan document: its ``format`` is not :data:`FORMAT`,
    or a section has another shape than :func:`plan_to_dict` writes; None when it is one."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        return f"expected format {FORMAT!r}, got {got!r}"
    return _shape_problem(doc)


MAX_STORAGE_DEPTH = 32  # the storage section is the intent's (at most 32 levels: hwaac.model.limits.MAX_DEPTH)


def _shape_problem(doc: dict[str, Any]) -> str | None:
    """What in ``doc`` differs from the shape :func:`plan_to_dict` writes (the parts a diff reads), or None."""
    for section in ("switches", "nodes", "links"):
        entries = doc.get(section, {})
        if not isinstance(entries, dict):
            return f"{section!r} is {_a(entries)}, expected an object of name -> entry"
        for name, entry in entries.items():
            if not isinstance(entry, dict):
                return f"{section}.{name} is {_a(entry)}, expected an object"
            if section != "links":
                continue
            for end in ("a", "b"):
                value = entry.get(end)
                if not (isinstance(value, list) and len(value) == 3 and all(isinstance(v, str) for v in value)):
                    return f"links.{name}.{end} is {str(value)[:60]!r}, expected [device, port, address]"
    storage = doc.get("storage")
    if storage is not None and not isinstance(storage, dict):
        return f"'storage' is {_a(storage)}, expected an object or null"
    stack = [(storage, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_STORAGE_DEPTH:
            return f"'storage' is nested deeper than {MAX_STORAGE_DEPTH} levels"
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        stack.extend((v, depth + 1) for v in children)
    return None


def _a(value: object) -> str:
    """``a list``, ``an int``: the JSON value's Python type with its article."""
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"
