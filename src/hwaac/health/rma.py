"""The RMA report of one node: what to send back, with the serials and the evidence a vendor asks for.

Built from what NetBox holds (``hwaac.netbox.lifecycle.device_journal`` and the device record): the journal
entries hwaac wrote at each lifecycle move carry the evidence as JSON (verdict, fault codes, findings, raw output
excerpts, GPU and NIC serials, both ends of failing links). Fleets send the raw tool output with the fault code,
the DCGM error id, the XID with the PCI address and GPU serial, and the link pair.

Shapes: :func:`rma_report` returns a JSON-able dict; :func:`rma_markdown` renders it. No I/O here.
"""

from __future__ import annotations

from typing import Any

SCHEMA = "hwaac.rma-report/1"


def rma_report(device: dict[str, Any], journal: list[dict[str, Any]], *, generated: str) -> dict[str, Any]:
    """The report of ``device`` from its hwaac journal (oldest first).

    Args:
        device: ``{"name", "serial", "site", "status", "lifecycle", "device_type"}`` as read from NetBox.
        journal: entries ``{"id", "created", "kind", "comments", "evidence"}`` (``evidence`` may be ``None`` for
            entries without one).
        generated: the report's timestamp (ISO 8601, UTC).

    Returns:
        ``{"schema", "generated", "device": {...}, "fault_codes": [...], "actions": [...], "gpu_serials": {...},
        "nic_serials": {...}, "failing_links": [...], "events": [{"created", "move", "reason", "verdict",
        "codes", "findings", "raw"}]}``; fault codes, serials and links are the union over the events, in order.
    """
    codes: list[str] = []
    actions: list[str] = []
    gpus: dict[str, str] = {}
    nics: dict[str, str] = {}
    links: list[dict[str, str]] = []
    events = []
    for entry in journal:
        ev = entry.get("evidence") or {}
        first = (entry.get("comments") or "").splitlines()[:3]
        move = first[0].strip("*").removeprefix("hwaac lifecycle: ") if first else ""
        reason = next((line.removeprefix("Reason: ") for line in first if line.startswith("Reason: ")), "")
        for c in ev.get("codes") or []:
            if c not in codes:
                codes.append(c)
        if ev.get("action") and ev["action"] not in actions:
            actions.append(ev["action"])
        gpus.update(ev.get("gpu_serials") or {})
        nics.update(ev.get("nic_serials") or {})
        for link in ev.get("links") or []:
            if link not in links:
                links.append(link)
        events.append(
            {
                "created": entry.get("created", ""),
                "move": move,
                "reason": reason,
                "verdict": ev.get("verdict", ""),
                "codes": ev.get("codes") or [],
                "findings": ev.get("findings") or [],
                "raw": ev.get("raw") or {},
            }
        )
    return {
        "schema": SCHEMA,
        "generated": generated,
        "device": device,
        "fault_codes": codes,
        "actions": actions,
        "gpu_serials": gpus,
        "nic_serials": nics,
        "failing_links": links,
        "events": events,
    }


def rma_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown for a ticket: summary, serials, failing links, then each event with its evidence."""
    d = report["device"]
    out = [
        f"# RMA report: {d.get('name', '?')}",
        "",
        f"- Node serial: {d.get('serial') or '(not recorded in NetBox)'}",
        f"- Device type: {d.get('device_type', '')}",
        f"- Site: {d.get('site', '')}",
        f"- Lifecycle state: {d.get('lifecycle') or '?'} (NetBox status {d.get('status', '?')})",
        f"- Fault codes: {', '.join(report['fault_codes']) or 'none recorded'}",
        f"- Recommended actions: {', '.join(report['actions']) or 'none recorded'}",
        f"- Generated: {report['generated']}",
        "",
    ]
    for title, key in (("GPU serials", "gpu_serials"), ("NIC serials", "nic_serials")):
        if report[key]:
            out += [f"## {title}", "", "| id | serial |", "|---|---|"]
            out += [f"| {k} | {v} |" for k, v in sorted(report[key].items())]
            out.append("")
    if report["failing_links"]:
        out += ["## Failing links", "", "| node port | peer | peer port | cable |", "|---|---|---|---|"]
        out += [
            f"| {lk.get('interface', '')} | {lk.get('peer_device', '')} | {lk.get('peer_interface', '')} | "
            f"{lk.get('cable', '')} |"
            for lk in report["failing_links"]
        ]
        out.append("")
    out += ["## Events", ""]
    for ev in report["events"]:
        out += [f"### {ev['created']}: {ev['move']}", "", f"Reason: {ev['reason']}"]
        if ev["verdict"]:
            out.append(f"Verdict: {ev['verdict']}" + (f" ({', '.join(ev['codes'])})" if ev["codes"] else ""))
        for f in ev["findings"]:
            out.append(f"- {f.get('status', '')} {f.get('code', '')} {f.get('subject', '')}: {f.get('message', '')}")
        for tool, text in sorted(ev["raw"].items()):
            out += ["", f"Raw output ({tool}):", "", "```", text.rstrip(), "```"]
        out.append("")
    return "\n".join(out).rstrip() + "\n"
