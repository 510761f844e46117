"""A verify report as a terminal table (rich), JSON, JUnit XML (one testsuite per check) or Markdown.

The JSON report (``hwaac-verify-report/1``) holds the counts per status, the checks, the faults, the timings, the
devices and every result with its check, object, status, expected and actual values, cable, ends, fault and what
explains it; docs/verify.md "Reports" shows its shape.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

from hwaac.verify.results import Result, Status
from hwaac.verify.runner import Report

FORMAT = "hwaac-verify-report/1"
FORMATS = ("table", "json", "junit", "markdown")


def faults(report: Report) -> list[dict[str, Any]]:
    """The faults the FAILs name, each once: its id, what it is (a cable's ends, a device), the checks that FAILed
    on it."""
    out: dict[str, dict[str, Any]] = {}
    for r in report.results:
        if r.status is not Status.FAIL or r.fault is None:
            continue
        entry = out.setdefault(r.fault, {"fault": r.fault, "object": _fault_object(r), "checks": [], "kinds": []})
        if r.check not in entry["checks"]:
            entry["checks"].append(r.check)
    for fid, entry in out.items():
        entry["kinds"] = sorted(
            report.faults.cables.get(fid, set()) | ({"device"} if fid in report.faults.devices else set())
        )
    return list(out.values())


def _fault_object(r: Result) -> str:
    if r.fault == r.cable and r.ends:
        return f"{r.ends[0]} <-> {r.ends[1]}"
    return r.fault or r.object


def to_json(report: Report) -> str:
    doc = {
        "format": FORMAT,
        "fabric": report.fabric,
        "passed": report.passed,
        "counts": report.counts(),
        "checks": report.checks,
        "faults": faults(report),
        "timings": {k: round(v, 3) for k, v in report.timings.items()},
        "devices": report.devices,
        "results": [r.to_dict() for r in report.results],
    }
    return json.dumps(doc, indent=1) + "\n"


def to_junit(report: Report) -> str:
    """JUnit XML: a testsuite per check, a testcase per result (classname ``hwaac.verify.<check>``)."""
    by_check: dict[str, list[Result]] = {c: [] for c in report.checks}
    for r in report.results:
        by_check.setdefault(r.check, []).append(r)
    counts = report.counts()
    root = ET.Element(
        "testsuites",
        name=f"hwaac verify {report.fabric}",
        tests=str(len(report.results)),
        failures=str(counts["FAIL"]),
        errors=str(counts["ERROR"]),
        skipped=str(counts["SKIP"]),
    )
    for check, results in by_check.items():
        c = Counter(r.status for r in results)
        suite = ET.SubElement(
            root,
            "testsuite",
            name=check,
            tests=str(len(results)),
            failures=str(c[Status.FAIL]),
            errors=str(c[Status.ERROR]),
            skipped=str(c[Status.SKIP]),
        )
        for r in results:
            case = ET.SubElement(suite, "testcase", classname=f"hwaac.verify.{check}", name=r.object)
            detail = _detail(r)
            if r.status is Status.FAIL:
                ET.SubElement(case, "failure", message=r.actual, type="FAIL").text = detail
            elif r.status is Status.ERROR:
                ET.SubElement(case, "error", message=r.actual, type="ERROR").text = detail
            elif r.status is Status.SKIP:
                ET.SubElement(case, "skipped", message=_why(r))
            if r.status is Status.PASS and r.explained_by:
                ET.SubElement(case, "system-out").text = detail
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _detail(r: Result) -> str:
    lines = [f"expected: {r.expected}", f"actual: {r.actual}"]
    if r.cable:
        lines.append(f"cable: {r.cable}" + (f" ({r.ends[0]} <-> {r.ends[1]})" if len(r.ends) == 2 else ""))
    return "\n".join(lines + _context(r, ":", fault=True))


def _context(r: Result, colon: str, *, fault: bool) -> list[str]:
    """What stands beside ``r``'s expected and actual: its fault (when ``fault``), what explains it, its message;
    each label followed by ``colon``."""
    parts = [f"fault{colon} {r.fault}"] if fault and r.fault else []
    if r.explained_by:
        parts.append(f"explained by{colon} {', '.join(r.explained_by)}")
    if r.message:
        parts.append(r.message)
    return parts


def _why(r: Result) -> str:
    return f"explained by {', '.join(r.explained_by)}: {r.actual}" if r.explained_by else r.actual


def _shown(report: Report, show_passed: bool) -> list[Result]:
    return [r for r in report.results if show_passed or r.status is not Status.PASS or r.explained_by]


def _note(r: Result) -> str:
    return "; ".join(_context(r, "", fault=r.status is Status.FAIL))


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(report: Report, show_passed: bool = False) -> str:
    counts = report.counts()
    verdict = "PASS" if report.passed else "FAIL"
    out = [
        f"# hwaac verify: {report.fabric} - {verdict}",
        "",
        f"{len(report.results)} results: " + ", ".join(f"{counts[s.value]} {s.value}" for s in Status),
        "",
        "| check | PASS | FAIL | SKIP | ERROR |",
        "|---|---|---|---|---|",
    ]
    per: dict[str, Counter[Status]] = {c: Counter() for c in report.checks}
    for r in report.results:
        per.setdefault(r.check, Counter())[r.status] += 1
    for check, c in per.items():
        out.append(f"| {check} | {c[Status.PASS]} | {c[Status.FAIL]} | {c[Status.SKIP]} | {c[Status.ERROR]} |")
    found = faults(report)
    if found:
        out += ["", "## Faults", "", "| fault | what | failed checks |", "|---|---|---|"]
        out += [f"| {_md(f['fault'])} | {_md(f['object'])} | {', '.join(f['checks'])} |" for f in found]
    rows = _shown(report, show_passed)
    if rows:
        out += [
            "",
            "## Results" if show_passed else "## Results other than a plain PASS",
            "",
            "| status | check | object | expected | actual | cable | note |",
            "|---|---|---|---|---|---|---|",
        ]
        out += [
            f"| {r.status.value} | {r.check} | {_md(r.object)} | {_md(r.expected)} | {_md(r.actual)} | "
            f"{r.cable or ''} | {_md(_note(r))} |"
            for r in rows
        ]
    return "\n".join(out) + "\n"


def to_table(report: Report, show_passed: bool = False, width: int | None = None, color: bool = False) -> str:
    """The rich rendering as text (ANSI colours when ``color``)."""
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=width or 160, force_terminal=color, color_system="standard" if color else None)
    style = {Status.PASS: "green", Status.FAIL: "bold red", Status.SKIP: "yellow", Status.ERROR: "magenta"}
    summary = Table(title=f"hwaac verify {report.fabric}", title_justify="left")
    for col in ("check", "PASS", "FAIL", "SKIP", "ERROR"):
        summary.add_column(col, justify="left" if col == "check" else "right")
    per: dict[str, Counter[Status]] = {c: Counter() for c in report.checks}
    for r in report.results:
        per.setdefault(r.check, Counter())[r.status] += 1
    for check, c in per.items():
        summary.add_row(check, *(str(c[s]) for s in Status))
    console.print(summary)
    found = faults(report)
    if found:
        ft = Table(title="faults", title_justify="left")
        for col in ("fault", "what", "failed checks"):
            ft.add_column(col)
        for f in found:
            ft.add_row(f["fault"], f["object"], ", ".join(f["checks"]))
        console.print(ft)
    rows = _shown(report, show_passed)
    if rows:
        t = Table(title="results" if show_passed else "results other than a plain PASS", title_justify="left")
        for col in ("status", "check", "object", "expected", "actual", "note"):
            t.add_column(col, overflow="fold")
        for r in rows:
            t.add_row(f"[{style[r.status]}]{r.status.value}[/]", r.check, r.object, r.expected, r.actual, _note(r))
        console.print(t)
    counts = report.counts()
    timing = ", ".join(f"{k} {v:.2f}" for k, v in report.timings.items())
    console.print(
        f"{'PASS' if report.passed else 'FAIL'}: "
        + ", ".join(f"{counts[s.value]} {s.value}" for s in Status)
        + (f" ({timing})" if timing else "")
    )
    return buf.getvalue()


def render(report: Report, fmt: str, show_passed: bool = False, color: bool = False) -> str:
    """The report in ``fmt`` (one of :data:`FORMATS`).

    Raises:
        ValueError: an unknown format.
    """
    if fmt == "json":
        return to_json(report)
    if fmt == "junit":
        return to_junit(report)
    if fmt == "markdown":
        return to_markdown(report, show_passed)
    if fmt == "table":
        return to_table(report, show_passed, color=color)
    raise ValueError(f"unknown format {fmt!r}; valid: {', '.join(FORMATS)}")
