"""Reader of ``dcgmi health -c -j`` (``dcgmi/Health.cpp`` ``GenerateOutputFromResponse``).

``{"header": ["Health Monitor Report"], "body": {"Overall Health": {"value": ...}, "<entity group>": {"children":
{"<id>": {"value": ..., "children": {"Errors": {"children": {"<system>": {"value": ..., "overflow": [message
chunks]}}}}}}}}}`` with values Healthy / Warning / Failure (anything else, e.g. "Internal error", is unreadable). These
words are DCGM's own verdicts, returned as written: :func:`hwaac.health.dcgm_grading.grade_health` turns them into
findings. Never raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hwaac.health.parsers.dcgm_model import as_list, guarded, load_json
from hwaac.health.result import Graded

# The words dcgmi health writes (dcgmi/Health.cpp HelperHealthToString); any other value is unreadable.
HEALTH_WORDS = ("Healthy", "Warning", "Failure")


@dataclass
class DcgmHealthSystem:
    """One watched system of one entity.

    Attributes:
        system: the system as written (``"PCIe system"``, ``"Memory system"``, ``"NVLINK system"``...).
        health: ``"Healthy"``, ``"Warning"``, ``"Failure"`` or what was written (then the result is incomplete).
        messages: the incident messages (``overflow`` chunks joined; incidents are separated by ``", "``).
    """

    system: str
    health: str
    messages: str = ""


@dataclass
class DcgmHealthEntity:
    """One entity with incidents.

    Attributes:
        entity_group: ``"GPU"``, ``"Switch"``, ``"ConnectX"``...
        entity_id: the id as written (``"0"``).
        health: the entity's value as written.
        systems: its systems with incidents.
    """

    entity_group: str
    entity_id: str
    health: str
    systems: list[DcgmHealthSystem] = field(default_factory=list)


@dataclass
class DcgmHealthResult(Graded):
    """``dcgmi health -c -j`` parsed.

    Attributes:
        overall: ``"Overall Health"`` value, None when absent.
        entities: entities with incidents (a healthy node lists none).
        graded: whether :func:`hwaac.health.dcgm_grading.grade_health` has added its findings.
    """

    tool: str = "dcgmi health -c -j"
    overall: str | None = None
    entities: list[DcgmHealthEntity] = field(default_factory=list)
    graded: bool = False


def _value(node: Any) -> str | None:
    return str(node["value"]) if isinstance(node, dict) and "value" in node else None


def _check_word(value: str | None, what: str, out: DcgmHealthResult) -> None:
    if (value or "").strip().lower() not in {w.lower() for w in HEALTH_WORDS}:
        out.unknown.append(f"{what}: unreadable health value {value!r}")


def _read_health_entity(group: str, entity_id: str, node: Any, out: DcgmHealthResult) -> None:
    health = _value(node) or ""
    _check_word(health, f"{group} {entity_id}", out)
    entity = DcgmHealthEntity(group, entity_id, health)
    children = node.get("children", {}) if isinstance(node, dict) else {}
    errors = children.get("Errors", {}) if isinstance(children, dict) else {}
    systems = errors.get("children") if isinstance(errors, dict) and "children" in errors else children
    for system, sysnode in (systems if isinstance(systems, dict) else {}).items():
        if system == "Errors" or not isinstance(sysnode, dict):
            continue
        value = _value(sysnode) or ""
        _check_word(value, f"{group} {entity_id} {system}", out)
        messages = " ".join(str(m) for m in as_list(sysnode.get("overflow")))
        entity.systems.append(DcgmHealthSystem(system, value, messages))
    out.entities.append(entity)


def parse_health_json(raw: str) -> DcgmHealthResult:
    """Parse ``dcgmi health -c -j`` output.

    Returns:
        A :class:`DcgmHealthResult` of the words as written, ungraded (:func:`hwaac.health.dcgm_grading.grade_health`,
        called by :func:`hwaac.health.checks.check_dcgm`). ``unknown`` when the output is not the report (``"Error:
        Health watches not enabled..."``), lacks ``"Overall Health"`` or holds a value other than
        Healthy/Warning/Failure. Never raises.
    """
    out = DcgmHealthResult()
    guarded(out, _read_health, raw, out)
    return out


def _read_health(raw: str, out: DcgmHealthResult) -> None:
    notes: list[str] = []
    doc = load_json(raw, notes, out.unknown)
    if doc is None:
        return
    body = doc.get("body") if isinstance(doc, dict) else None
    if not isinstance(body, dict):
        out.unknown.append("no 'body' object: not a dcgmi health report")
        return
    out.overall = _value(body.get("Overall Health"))
    if out.overall is None:
        out.unknown.append("no 'Overall Health' value")
    else:
        _check_word(out.overall, "Overall Health", out)
    for group, gnode in body.items():
        if group == "Overall Health":
            continue
        children = gnode.get("children") if isinstance(gnode, dict) else None
        if not isinstance(children, dict):
            out.unknown.append(f"entity group {group!r} has no children object")
            continue
        for entity_id, enode in children.items():
            _read_health_entity(str(group), str(entity_id), enode, out)


__all__ = ["HEALTH_WORDS", "DcgmHealthEntity", "DcgmHealthResult", "DcgmHealthSystem", "parse_health_json"]
