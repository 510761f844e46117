"""Findings mitigation acts on: the suspects of a network health report (``hwaac health fabric --format json``) or
the firing ``hwaac_suspect`` alerts of an Alertmanager webhook, read into one shape, with the target each names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hwaac.plan.model import Link, Plan

SEVERITIES = ("info", "warn", "fault")


class FindingsError(ValueError):
    """The input is neither a health report nor an Alertmanager webhook payload (says which field is wrong)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One suspect: the rule that named it, its severity and kind, what it names (a cable, a device and port), the
    GPU nodes behind it and its evidence (as the report gives it)."""

    rule: str
    severity: str
    kind: str
    component: str = ""
    cable: str = ""
    device: str = ""
    port: str = ""
    nodes: tuple[str, ...] = ()
    evidence: tuple[dict[str, Any], ...] = field(default=(), compare=False)


def from_report(data: Mapping[str, Any]) -> list[Finding]:
    """The suspects of a health report (JSON, ``hwaac.telemetry.report.FabricReport.to_dict``)."""
    suspects = data.get("suspects")
    if not isinstance(suspects, list):
        raise FindingsError("suspects: missing or not a list; expected the JSON of `hwaac health fabric --format json`")
    out = []
    for n, s in enumerate(suspects):
        if not isinstance(s, Mapping) or s.get("severity") not in SEVERITIES:
            raise FindingsError(
                f"suspects[{n}].severity: {s.get('severity') if isinstance(s, Mapping) else s!r} "
                f"is not one of {', '.join(SEVERITIES)}"
            )
        comps = [c for c in s.get("components", ()) if isinstance(c, Mapping)]
        first = comps[0] if comps else {}
        cable = next((str(c.get("name")) for c in comps if c.get("kind") in ("link", "cable")), "")
        end = next((c for c in comps if c.get("device") and c.get("port")), first)
        out.append(
            Finding(
                rule=str(s.get("rule", "")),
                severity=s["severity"],
                kind=str(s.get("kind", "")),
                component=str(first.get("name", "")),
                cable=cable,
                device=str(end.get("device", "")),
                port=str(end.get("port", "")),
                nodes=tuple(s.get("nodes", ())),
                evidence=tuple(dict(e) for e in s.get("evidence", ()) if isinstance(e, Mapping)),
            )
        )
    return out


def _firing(alert: Mapping[str, Any]) -> bool:
    """A webhook's alert says ``"status": "firing"``; the API's ``"status": {"state": "active"}`` (silenced and
    inhibited alerts are not acted on)."""
    status = alert.get("status")
    return status == "firing" or (isinstance(status, Mapping) and status.get("state") == "active")


def from_alerts(payload: Mapping[str, Any] | Sequence[Any]) -> list[Finding]:
    """The firing alerts whose labels are ``hwaac_suspect``'s (rule, severity, kind, component, cable, device, port,
    hosts), from an Alertmanager webhook payload (version 4) or from its API (``GET /api/v2/alerts``, a list);
    resolved alerts and others are left out."""
    alerts = payload if isinstance(payload, Sequence) else payload.get("alerts")
    if not isinstance(alerts, list):
        raise FindingsError("alerts: missing or not a list; expected an Alertmanager webhook payload (version 4)")
    out = []
    for a in alerts:
        if not isinstance(a, Mapping):
            continue
        labels = a.get("labels", {})
        if not _firing(a) or labels.get("severity") not in SEVERITIES or "rule" not in labels:
            continue
        hosts = str(labels.get("hosts", ""))
        nodes = tuple(h for h in hosts.split(",") if h and not h.startswith("+"))
        out.append(
            Finding(
                rule=labels["rule"],
                severity=labels["severity"],
                kind=labels.get("kind", ""),
                component=labels.get("component", ""),
                cable=labels.get("cable", ""),
                device=labels.get("device", ""),
                port=labels.get("port", ""),
                nodes=nodes,
                evidence=(
                    {
                        "alert": labels.get("alertname", ""),
                        "startsAt": a.get("startsAt", ""),
                        "annotations": dict(a.get("annotations", {})),
                    },
                ),
            )
        )
    return out


def read(data: Mapping[str, Any] | Sequence[Any]) -> list[Finding]:
    """A report, a webhook payload or the API's alerts, told apart by their shape."""
    if not isinstance(data, Mapping | list):
        raise FindingsError(
            f"a JSON {type(data).__name__}: expected a health report, an Alertmanager webhook "
            "payload or its API's list of alerts"
        )
    if isinstance(data, list) or "alerts" in data:
        return from_alerts(data)
    return from_report(data)


class Targets:
    """What a finding names in the plan: its link (by cable id or by a switch port) and its switch."""

    def __init__(self, plan: Plan) -> None:
        self.by_cable: dict[str, Link] = {link.cable_id: link for link in plan.links}
        self.by_port: dict[tuple[str, str], Link] = {}
        for link in plan.links:
            self.by_port[(link.a_device, link.a_port)] = link
            self.by_port[(link.b_device, link.b_port)] = link
        self.switches = {s.name for s in plan.switches}
        self.nodes = {n.name for n in plan.nodes}

    def link(self, f: Finding) -> Link | None:
        """The finding's link: its cable, else the link at its device and port."""
        if f.cable in self.by_cable:
            return self.by_cable[f.cable]
        if f.component in self.by_cable:
            return self.by_cable[f.component]
        return self.by_port.get((f.device, f.port))

    def switch(self, f: Finding) -> str | None:
        for name in (f.device, f.component):
            if name in self.switches:
                return name
        return None

    def nodes_of(self, f: Finding) -> list[str]:
        """The GPU nodes to quarantine: the node of a host link, else the finding's own device when it is a node."""
        link = self.link(f)
        if link is not None and link.kind == "host":
            return [link.a_device]
        return [d for d in (f.device, *f.nodes[:1]) if d in self.nodes][:1]


def dedupe(findings: Iterable[Finding]) -> list[Finding]:
    """Findings without repeats (an alert fires once per label set, a report may name a link twice)."""
    seen: dict[tuple[str, ...], Finding] = {}
    for f in findings:
        seen.setdefault((f.rule, f.severity, f.kind, f.component, f.cable, f.device, f.port), f)
    return list(seen.values())


__all__ = ["SEVERITIES", "Finding", "FindingsError", "Targets", "dedupe", "from_alerts", "from_report", "read"]
