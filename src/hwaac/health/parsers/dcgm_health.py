"""Reader of ``dcgmi health -c -j`` (``dcgmi/Health.cpp`` ``GenerateOutputFromResponse``).

``{"header": ["Health Monitor Report"], "body": {"Overall Health": {"value": ...}, "<entity group>": {"children":
{"<id>": {"value": ..., "children": {"Errors": {"children": {"<system>": {"value": ..., "overflow": [message
chunks]}}}}}}}}}`` with values Healthy / Warning / Failure (anything else, e.g. "Internal error", is unreadable). These
words are DCGM's own verdicts; each becomes a finding as written (Warning WARN, Failure FAIL). Never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from hwaac.health.parsers.dcgm_model import as_list, guarded, load_json
from hwaac.health.result import Action, Finding, Status, ToolResult

_HEALTH_STATUS = {"healthy": Status.PASS, "warning": Status.WARN, "failure": Status.FAIL}


# Action for a Failure per watched system (a first cut; the verdict module refines it with history).
_HEALTH_FAIL_ACTIONS = {
    "MEMORY": Action.RESET_GPU,
    "SM": Action.RESET_GPU,
    "NVLINK": Action.RESET_GPU,
    "PCIE": Action.REBOOT,
    "DRIVER": Action.REBOOT,
}


@dataclass


class DcgmHealthSystem:
    """One watched system of one entity.

    Attributes:
        system: the system as written (``"PCIe system"``, ``"Memory system"``, ``"NVLINK system"``...).
        health: ``"Healthy"``, ``"Warning"``, ``"Failure"`` or what was written.
        status: ``health`` as a Status (UNKNOWN for anything else).
        messages: the incident messages (``overflow`` chunks joined; incidents are separated by ``", "``).
    """

    system: str
    health: str
    status: Status
    messages: str = ""


@dataclass


class DcgmHealthEntity:
    """One entity with incidents.

    Attributes:
        entity_group: ``"GPU"``, ``"Switch"``, ``"ConnectX"``...
        entity_id: the id as written (``"0"``).
        health: the entity's value, ``status`` its Status.
        systems: its systems with incidents.
    """

    entity_group: str
    entity_id: str
    health: str
    status: Status
    systems: list[DcgmHealthSystem] = field(default_factory=list)


@dataclass


class DcgmHealthResult(ToolResult):
    """``dcgmi health -c -j`` parsed.

    Attributes:
        overall: ``"Overall Health"`` value, None when absent.
        entities: entities with incidents (a healthy node lists none).
    """

    tool: str = "dcgmi health -c -j"
    overall: str | None = None
    entities: list[DcgmHealthEntity] = field(default_factory=list)


def _value(node: Any) -> str | None:
    return str(node["value"]) if isinstance(node, dict) and "value" in node else None


def _system_code(system: str) -> str:
    name = re.sub(r"\s*system$", "", system.strip(), flags=re.IGNORECASE)
    return "DCGM_HEALTH_" + (re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_") or "UNNAMED")


def _health_status(value: str | None, what: str, out: DcgmHealthResult) -> Status:
    status = _HEALTH_STATUS.get((value or "").strip().lower())
    if status is None:
        out.unknown.append(f"{what}: unreadable health value {value!r}")
        return Status.UNKNOWN
    return status


def _read_health_entity(group: str, entity_id: str, node: Any, out: DcgmHealthResult) -> None:
    health = _value(node) or ""
    entity = DcgmHealthEntity(group, entity_id, health, _health_status(health, f"{group} {entity_id}", out))
    children = node.get("children", {}) if isinstance(node, dict) else {}
    errors = children.get("Errors", {}) if isinstance(children, dict) else {}
    systems = errors.get("children") if isinstance(errors, dict) and "children" in errors else children
    subject = f"{'gpu' if group == 'GPU' else group.lower() + ' '}{entity_id}"
    for system, sysnode in (systems if isinstance(systems, dict) else {}).items():
        if system == "Errors" or not isinstance(sysnode, dict):
            continue
        value = _value(sysnode) or ""
        status = _health_status(value, f"{group} {entity_id} {system}", out)
        messages = " ".join(str(m) for m in as_list(sysnode.get("overflow")))
        entity.systems.append(DcgmHealthSystem(system, value, status, messages))
        if status >= Status.WARN:
            code = _system_code(system)
            action = _HEALTH_FAIL_ACTIONS.get(code.removeprefix("DCGM_HEALTH_"), Action.RETEST)
            action = action if status == Status.FAIL else Action.NONE
            message = f"dcgmi health: {group} {entity_id} {system} is {value}: {messages or '(no message)'}"
            evidence = f"{system}: {value} {messages}".strip()
            out.findings.append(Finding(code, status, message, subject, evidence, action))
    if entity.status >= Status.WARN and not entity.systems:
        out.findings.append(
            Finding(
                "DCGM_HEALTH_ENTITY",
                entity.status,
                f"dcgmi health: {group} {entity_id} is {health} without a system",
                subject,
                f"{group} {entity_id}: {health}",
            )
        )
    out.entities.append(entity)


def parse_health_json(raw: str) -> DcgmHealthResult:
    """Parse ``dcgmi health -c -j`` output.

    Returns:
        A :class:`DcgmHealthResult`: one finding per system in Warning (WARN) or Failure (FAIL), code
        ``DCGM_HEALTH_<SYSTEM>`` (``DCGM_HEALTH_PCIE``, ``DCGM_HEALTH_MEMORY``...); UNKNOWN when the output is not the
        report (``"Error: Health watches not enabled..."``), lacks ``"Overall Health"`` or holds a value other than
        Healthy/Warning/Failure. An "Overall Health" worse than every entity still counts. Never raises.
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
    overall = _health_status(out.overall, "Overall Health", out) if out.overall is not None else Status.UNKNOWN
    for group, gnode in body.items():
        if group == "Overall Health":
            continue
        children = gnode.get("children") if isinstance(gnode, dict) else None
        if not isinstance(children, dict):
            out.unknown.append(f"entity group {group!r} has no children object")
            continue
        for entity_id, enode in children.items():
            _read_health_entity(str(group), str(entity_id), enode, out)
    worst_found = max((f.status for f in out.findings), default=Status.PASS)
    if overall in (Status.WARN, Status.FAIL) and worst_found < overall:
        out.findings.append(
            Finding(
                "DCGM_HEALTH_OVERALL",
                overall,
                f"dcgmi health: Overall Health is {out.overall}",
                evidence=f"Overall Health: {out.overall}",
            )
        )


__all__ = ["DcgmHealthEntity", "DcgmHealthResult", "DcgmHealthSystem", "parse_health_json"]
