"""The review as Markdown for a pull-request comment: summaries first, every long list folded in ``<details>``,
and the per-device config changes cut to fit a comment (GitHub refuses a body over 65,536 characters)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

MAX_CHARS = 60_000  # under GitHub's 65,536 and GitLab's 1,000,000 characters per comment
LIST_LIMIT = 50
# the report's first line, naming what wrote it; CI puts its own "<!-- hwaac-review: FABRIC -->" above the report
# and finds the comment to update by that line (files/ci/hwaac-ci.sh), not by this one
MARKER = "<!-- hwaac-review -->"


def render_markdown(review: dict[str, Any], max_chars: int = MAX_CHARS) -> str:
    """The comment: every section's summary, its lists cut to fewer items until the whole fits ``max_chars``, then
    as many per-device blocks as still fit."""
    for n in (LIST_LIMIT, 20, 8, 3, 1):
        body = [
            *_base_issues(review, n),
            *_refusals(review, n),
            *_summary(review),
            *_risks(review),
            *_intent(review, n),
            *_plan(review, n),
            *_netbox(review, n),
            *_terraform(review, n),
            *_rollout(review, n),
            *_gates(review),
            *_config_tables(review),
        ]
        text = "\n".join(_head(review) + body) + "\n"
        if len(text) + 300 <= max_chars:
            break
    else:  # a summary alone too long for a comment: cut it, and say where the rest is
        cut = text[: max_chars - 300].rsplit("\n", 1)[0]
        return cut + "\n\n_The report is cut here; all of it is in `review.json`._\n"
    devices = _device_details(review)
    kept = 0
    if devices:
        text += "\n#### Per device\n\n"
    for block in devices:
        if len(text) + len(block) + 200 > max_chars:
            break
        text += block
        kept += 1
    if kept < len(devices):
        text += (
            f"\n_{len(devices) - kept} more device(s) with changes are in `review.json` "
            f"(the comment is kept under {max_chars:,} characters)._\n"
        )
    return text


def _cell(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return "`" + text.replace("|", "\\|").replace("`", "'").replace("\n", " ") + "`"


def _fold(summary: str, lines: list[str]) -> list[str]:
    return ["<details>", f"<summary>{summary}</summary>", "", *lines, "", "</details>", ""]


def _cut(items: list[str], limit: int) -> list[str]:
    return items[:limit] + ([f"- ... {len(items) - limit} more (review.json)"] if len(items) > limit else [])


VERDICTS = {"ok": "ready to apply", "refused": "REFUSED", "base-invalid": "the base does not validate"}


def _head(r: dict[str, Any]) -> list[str]:
    verdict = VERDICTS.get(r["verdict"], r["verdict"])
    return [
        MARKER,
        f"## hwaac review of fabric `{r['fabric']}`: {verdict}",
        "",
        f"base `{r['base']}` → head `{r['head']}`",
        "",
    ]


def _base_issues(r: dict[str, Any], n: int) -> list[str]:
    issues = r.get("base_issues") or []
    if not issues:
        return []
    lines = ["- `" + i["text"].replace("`", "'").replace("\n", " ") + "`" for i in issues]
    out = [
        f"> **The base `{r['base']}` does not validate ({len(issues)} problem(s)).** The new intent is valid, but "
        "it is not compared with the base: the plan diff, the blast radius, the rollout, the gates and the device "
        "configuration are left out, and no renumbering or removal of what is in service can be found. The NetBox "
        "dry run and the Terraform plan below compare the new plan with what is recorded.",
        "",
    ]
    if len(lines) <= 10:
        return [*out, *lines, ""]
    return [*out, *_fold(f"the base's {len(lines)} problems", _cut(lines, 2 * n))]


def _refusals(r: dict[str, Any], n: int) -> list[str]:
    out = []
    for ref in r["refusals"]:
        out += [f"> **Refused: {ref['kind']} of {len(ref['items'])} item(s).** {ref['why']}.", ""]
        out += _fold(
            f"what would {ref['kind'] if ref['kind'] != 'remove' else 'be removed'}",
            _cut([f"- {_cell(i, 120)}" for i in ref["items"]], n),
        )
    return out


def _summary(r: dict[str, Any]) -> list[str]:
    b = r["blast_radius"]
    if b is None:
        return []
    switches = ", ".join(f"{len(v)} {k}" for k, v in b["switches"].items()) or "none"
    c = b["cables"]
    rows = [
        ("switches whose config changes", switches),
        ("GPU nodes whose files change", str(len(b["gpu_nodes"]))),
        ("appliances whose files change", str(len(b["appliances"]))),
        ("cables in the plan", f"+{c['added']} ~{c['changed']} -{c['removed']}"),
        ("links on the switches pushed", str(b["links_on_pushed_switches"])),
        ("SUs touched", (", ".join(map(str, b["sus"])) or "none") + f" (of {b['su_count']})"),
        ("risk flags", ", ".join(x["code"] for x in r["risks"]) or "none"),
    ]
    return ["### Blast radius", "", "| | |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows), ""]


def _risks(r: dict[str, Any]) -> list[str]:
    if not r["risks"]:
        return []
    return ["### Risk flags", "", *(f"- **{x['code']}**: {x['message']}" for x in r["risks"]), ""]


def _intent(r: dict[str, Any], n: int) -> list[str]:
    out = ["### Intent change", ""]
    if r["intent"] is None:
        return [*out, "Not compared: the base cannot be read as YAML.", ""]
    rows = [f"| {_cell(c['path'])} | {_cell(c['old'])} | {_cell(c['new'])} |" for c in r["intent"]]
    if not rows:
        return [*out, "No change to the intent.", ""]
    table = ["| field | before | after |", "|---|---|---|"]
    if len(rows) <= 20:
        return [*out, *table, *rows, ""]
    return [*out, *_fold(f"{len(rows)} fields changed", [*table, *rows[: 4 * n]])]


def _plan(r: dict[str, Any], n: int) -> list[str]:
    p = r["plan"]
    if p is None:
        return []
    out = ["### Plan (`hwaac plan --against`)", "", "| section | added | changed | removed |", "|---|---|---|---|"]
    for s in ("switches", "nodes", "links"):
        out.append(f"| {s} | {len(p[s]['added'])} | {len(p[s]['changed'])} | {len(p[s]['removed'])} |")
    out.append(f"| storage | | {len(p['storage'])} field(s) | |")
    out.append("")
    details = []
    for s in ("switches", "nodes", "links"):
        details += _cut([f"- + {s} `{name}`" for name in p[s]["added"]], n)
        details += _cut([f"- - {s} `{name}`" for name in p[s]["removed"]], n)
        details += _cut(
            [
                f"- ~ {s} `{name}`: " + ", ".join(f"{f} {_cell(o)} → {_cell(v)}" for f, (o, v) in fs.items())
                for name, fs in p[s]["changed"].items()
            ],
            n,
        )
    details += _cut([f"- ~ storage {_cell(k)}: {_cell(o)} → {_cell(v)}" for k, (o, v) in p["storage"].items()], n)
    if details:
        out += _fold("what the plan adds, changes and removes", details)
    return out


def _netbox(r: dict[str, Any], n: int) -> list[str]:
    nb = r["netbox"]
    out = ["### NetBox (sync dry run)", ""]
    status = nb.get("status")
    if status == "not run":
        return [*out, "Not run (no NetBox given: set NETBOX_URL and NETBOX_TOKEN, or pass --netbox).", ""]
    if status == "error":
        return [*out, f"**Could not run**: {nb['message']}", ""]
    if status == "conflict":
        return [
            *out,
            f"**Conflict**: {nb['message']}.",
            "",
            *_cut([f"- {_cell(c, 160)}" for c in nb["conflicts"]], n),
            "",
        ]
    if status == "no changes":
        return [*out, "NetBox already matches the new plan: no writes.", ""]
    rows = [f"| {kind} | {c['create']} | {c['update']} | {c['delete']} |" for kind, c in nb["counts"].items()]
    out += ["| object type | create | update | delete |", "|---|---|---|---|", *rows, ""]
    lines = [line for line in nb.get("lines", []) if line.startswith("  ")]
    if lines:
        out += _fold("objects", ["```", *lines[: 6 * n], *(["..."] if len(lines) > 6 * n else []), "```"])
    return out


def _terraform(r: dict[str, Any], n: int) -> list[str]:
    tf = r["terraform"]
    out = ["### Terraform plan", ""]
    if tf.get("status") == "not given":
        return [*out, "Not given (pass --terraform-plan).", ""]
    if tf.get("errored"):
        out += [
            "**The plan is incomplete**: Terraform stopped with an error while planning; what follows is what it "
            "planned before it stopped.",
            "",
        ]
    counts = ", ".join(f"{n} to {a}" for a, n in tf["counts"].items() if a != "no-op") or "no changes"
    out += [f"{counts}" + (f"; {tf['counts']['no-op']} unchanged" if tf["counts"].get("no-op") else "") + ".", ""]
    if tf.get("drift"):
        out += [f"Drift found (changed outside Terraform): {', '.join(f'`{a}`' for a in tf['drift'][:20])}.", ""]
    for res in tf["resources"][:n]:
        attrs = res["attributes"]
        lines = [f"| {_cell(k)} | {_cell(o)} | {_cell(n)} |" for k, (o, n) in attrs.items()]
        table = ["| attribute | before | after |", "|---|---|---|", *lines[: 2 * n]] if lines else ["(no attributes)"]
        out += _fold(f"{res['action']} <code>{res['address']}</code> ({len(attrs)} attribute(s))", table)
    return out


def _rollout(r: dict[str, Any], n: int) -> list[str]:
    if r["rollout"] is None:
        return []
    out = ["### Rollout", ""]
    if not r["rollout"]:
        return [*out, "Nothing to push.", ""]
    for ro in r["rollout"]:
        work = ro["with_changes"]
        out.append(
            f"- `{ro['playbook']}` over group `{ro['group']}`: {ro['hosts']} hosts in {ro['batches']} "
            f"batch(es) of {ro['batch_size']} (`{ro['extra_var']}={ro['serial']}`); "
            f"{len(work)} batch(es) change something"
        )
        lines = [
            f"- batch {w['batch']} ({w['hosts']} hosts): "
            + ", ".join(f"`{h}`" for h in w["changed"][:12])
            + (f" ... {len(w['changed']) - 12} more" if len(w["changed"]) > 12 else "")
            for w in work
        ]
        out += ["", *_fold("batches with changes", _cut(lines, n))]
    return out


def _gates(r: dict[str, Any]) -> list[str]:
    if not r["gates"]:
        return []
    default = [g for g in r["gates"] if g.get("gate") == "default"]
    opt_in = [g for g in r["gates"] if g.get("gate") == "switch_config_verify_gate"]
    after = [g for g in r["gates"] if g.get("gate") != "default"]
    out = ["### Gates and checks", ""]
    if default:
        out += [
            "**Gates the rollout by default** (`fabric_deploy`): a switch that fails it is rolled back to its "
            "checkpoint, and no later batch starts (`fabric_deploy_max_fail_percentage` 0).",
            "",
            "| check | switches | what it checks |",
            "|---|---|---|",
            *(f"| `{g['check']}` | {g['devices']} | {g['description']} |" for g in default),
            "",
        ]
    else:
        out += [
            "**No gate**: the change pushes no switch, and `hosts_network` and `lustre_clients` have no health "
            "gate (only a failed task stops them).",
            "",
        ]
    if opt_in:
        out += [
            "**Gates only with `-e switch_config_verify_gate=true`** (default false): the verify gate runs "
            "these on each pushed switch after its BGP gate, and a FAIL rolls the switch back: "
            + ", ".join(f"`{g['check']}` ({g['gate_devices']})" for g in opt_in)
            + ".",
            "",
        ]
    if after:
        out += [
            "**After the rollout**, over every device the change touches (`playbooks/verify.yml` or `hwaac "
            "verify`: a report, not a gate)"
            + ("; `hosts_network` and `lustre_clients` have no health gate." if default else "."),
            "",
            "| check | stage | devices | what it checks |",
            "|---|---|---|---|",
            *(f"| `{g['check']}` | {g['stage']} | {g['devices']} | {g['description']} |" for g in after),
            "",
        ]
    return out


def _config_tables(r: dict[str, Any]) -> list[str]:
    """Per table, how many devices change it: a summary that stays short at any fabric size."""
    devices = r["devices"]
    if devices is None:
        return []
    if not devices:
        return ["### Device configuration", "", "No rendered file changes.", ""]
    tables: Counter[str] = Counter()
    files: Counter[str] = Counter()
    status: Counter[str] = Counter(d["status"] for d in devices.values())
    for d in devices.values():
        tables.update(list(d["tables"]))
        files.update(list(d["files"]))
    out = [
        "### Device configuration",
        "",
        f"{len(devices)} device(s): " + ", ".join(f"{n} {s}" for s, n in sorted(status.items())) + ".",
        "",
    ]
    if tables:
        out += [
            "| config_db table | switches |",
            "|---|---|",
            *(f"| `{t}` | {n} |" for t, n in sorted(tables.items())),
            "",
        ]
    if files:
        out += ["| file | devices |", "|---|---|", *(f"| `{f}` | {n} |" for f, n in sorted(files.items())), ""]
    if r["documents"]:
        out += ["Fabric documents: " + ", ".join(f"`docs/{f}` ({s})" for f, s in r["documents"].items()) + ".", ""]
    return out


def _device_details(r: dict[str, Any]) -> list[str]:
    """One folded block per distinct change, naming the devices that have exactly that change: a QoS change on a
    thousand switches is one block, not a thousand."""
    groups: dict[str, list[str]] = {}
    for name, d in (r["devices"] or {}).items():
        groups.setdefault(json.dumps(d, sort_keys=True), []).append(name)
    blocks = []
    for key, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[1][0])):
        d = json.loads(key)
        lines = []
        for table, t in d["tables"].items():
            parts = [
                f"+{len(t['added'])}" if t["added"] else "",
                f"~{len(t['changed'])}" if t["changed"] else "",
                f"-{len(t['removed'])}" if t["removed"] else "",
            ]
            keys = [
                *(f"+{k}" for k in t["added"][:6]),
                *(f"~{k} ({', '.join(f)})" for k, f in list(t["changed"].items())[:6]),
                *(f"-{k}" for k in t["removed"][:6]),
            ]
            more = len(t["added"]) + len(t["changed"]) + len(t["removed"]) - len(keys)
            lines.append(
                f"- `{table}` {' '.join(p for p in parts if p)}: "
                + ", ".join(f"`{k}`" for k in keys)
                + (f" ... {more} more" if more else "")
            )
        lines += [f"- `{f}` {s}" for f, s in d["files"].items()]
        shown = ", ".join(f"`{n}`" for n in names[:40]) + (f" ... {len(names) - 40} more" if len(names) > 40 else "")
        head = (
            f"{d['kind']} <code>{names[0]}</code> ({d['status']})"
            if len(names) == 1
            else f"{len(names)} {d['kind']}es ({d['status']}), the same change"
            if d["kind"] == "switch"
            else f"{len(names)} {d['kind']}s ({d['status']}), the same change"
        )
        blocks.append("\n".join(_fold(head, ([f"Devices: {shown}", ""] if len(names) > 1 else []) + lines)))
    return blocks
