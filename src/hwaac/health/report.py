"""A node's burn-in (or health-check) report: the verdict over its stages, as JSON and Markdown, and the evidence
that a lifecycle move records in NetBox.

Input: per stage the result of ``aiinfra.hwaac.node_health`` (``status``, ``findings`` as dicts, ``outputs``,
``hardware``); the node's rails (``hca`` -> Linux interface, from its rendered ``nic-roce.json``) so that a failing
NIC port names the interface NetBox cables (``rail3``), whose link ends the lifecycle journal then records.
Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hwaac.health.node import NodeVerdict, verdict
from hwaac.health.result import Action, Finding, Status

SCHEMA = "hwaac.node-report/1"
_PORT_SUBJECT = re.compile(r"^(\S+) port \d+")


def _finding(d: Mapping[str, Any]) -> Finding:
    return Finding(
        str(d.get("code", "")),
        Status[str(d.get("status", "UNKNOWN"))],
        str(d.get("message", "")),
        str(d.get("subject", "")),
        str(d.get("evidence", "")),
        Action(str(d.get("action", "none"))),
    )


def node_report(
    node: str, profile: str, stages: Mapping[str, Mapping[str, Any]], interfaces: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The report of one node.

    Args:
        node: the node's name. profile: the SKU profile's name.
        stages: stage name -> that stage's ``node_health`` result (stages that did not run are left out; a
            stage result without ``status`` -- skipped by Ansible -- is left out too).
        interfaces: RDMA device -> Linux interface (``mlx5_3`` -> ``rail3``).

    Returns:
        ``{"schema", "node", "profile", "status", "action", "codes", "stages", "findings", "hardware",
        "evidence"}``; ``evidence`` has the keys of :class:`hwaac.netbox.lifecycle.Evidence` (minus ``links``).
    """
    by_stage: dict[str, list[Finding]] = {}
    hardware: dict[str, dict[str, str]] = {"gpus": {}, "nics": {}}
    for stage, res in stages.items():
        if not isinstance(res, Mapping) or "status" not in res:
            continue
        by_stage[stage] = [_finding(f) for f in res.get("findings") or []]
        for kind in ("gpus", "nics"):
            hardware[kind].update((res.get("hardware") or {}).get(kind) or {})
    v: NodeVerdict = verdict(node, by_stage)
    summary = v.to_dict()
    failing = []
    for f in v.findings:
        m = _PORT_SUBJECT.match(f.subject)
        if f.status >= Status.UNKNOWN and m and f.code.startswith(("NIC_", "IB_")):
            iface = (interfaces or {}).get(m.group(1))
            if iface and iface not in failing:
                failing.append(iface)
    bad = [f for f in v.findings if f.status > Status.PASS]
    evidence = {
        "verdict": summary["status"],
        "codes": summary["codes"],
        "action": summary["action"],
        "findings": [{k: x[k] for k in ("code", "status", "subject", "message")} for x in summary["findings"]],
        "raw": {f"{f.code} {f.subject}".strip(): f.evidence for f in bad if f.evidence},
        "parsed": {"stages": summary["stages"], "profile": profile},
        "gpu_serials": hardware["gpus"],
        "nic_serials": hardware["nics"],
        "failing_interfaces": failing,
    }
    return {
        "schema": SCHEMA,
        "node": node,
        "profile": profile,
        "status": summary["status"],
        "action": summary["action"],
        "codes": summary["codes"],
        "stages": summary["stages"],
        "findings": summary["findings"],
        "hardware": hardware,
        "evidence": evidence,
    }


def report_markdown(report: Mapping[str, Any]) -> str:
    """The report as Markdown: verdict, stages, findings with their evidence, serials."""
    out = [
        f"# Burn-in report: {report['node']}",
        "",
        f"- Verdict: **{report['status']}**",
        f"- Recommended action: {report['action']}",
        f"- Profile: {report['profile']}",
        f"- Fault codes: {', '.join(report['codes']) or 'none'}",
        "",
        "| stage | verdict |",
        "|---|---|",
    ]
    out += [f"| {stage} | {status} |" for stage, status in report["stages"].items()]
    out.append("")
    if report["findings"]:
        out += ["## Findings", ""]
        for f in report["findings"]:
            msg = f["message"]
            if f["subject"] and msg.startswith(f["subject"] + ":"):
                msg = msg[len(f["subject"]) + 1 :].lstrip()  # the line names the subject already
            out.append(f"- **{f['status']}** `{f['code']}` {f['subject']}: {msg} (action: {f['action']})")
            if f.get("evidence"):
                out += ["", "  ```", *(f"  {line}" for line in f["evidence"].splitlines()), "  ```", ""]
        out.append("")
    for title, key in (("GPU serials", "gpus"), ("NIC node GUIDs", "nics")):
        if report["hardware"].get(key):
            out += [f"## {title}", "", "| id | serial |", "|---|---|"]
            out += [f"| {k} | {v} |" for k, v in sorted(report["hardware"][key].items())]
            out.append("")
    return "\n".join(out).rstrip() + "\n"
