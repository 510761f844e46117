"""The fabric health report: worst severity, SLIs per plane, rail and SU, ranked suspects with their evidence,
GPU nodes and Slurm jobs, and what the samples did not cover; as Markdown (details folded) and JSON. Pure: no I/O.

Exit status by the worst suspect (:meth:`FabricReport.exit_code`): 0 no suspect or info only, 4 warn, 1 fault
(as ``hwaac verify``: 1 is a failure, 2 stays usage). A scope whose coverage (links of known state) is below its
SLO makes the report at least warn: unknown is never healthy; so does any other SLI out of its SLO, whether or not
a rule names a component for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hwaac.telemetry.sli import (
    AVAILABILITY,
    BGP_DROPS,
    COVERAGE,
    ECN,
    FEC_UNCORR,
    LOSS,
    PAUSE,
    PRE_FEC_BER,
    Aggregate,
)
from hwaac.telemetry.slo import SloSet
from hwaac.telemetry.suspects import FAULT, WARN, Evidence, Severity, Suspect

SCHEMA = "hwaac.fabric-health/1"
EXIT_OK, EXIT_FAULT, EXIT_WARN = 0, 1, 4
SLI_COLUMNS = (AVAILABILITY, COVERAGE, LOSS, PRE_FEC_BER, FEC_UNCORR, PAUSE, ECN, BGP_DROPS)
SCOPES = ("fabric", "plane", "su", "rail")
ALL_SCOPES = (*SCOPES, "spine", "leaf")  # the order scopes are listed in
_SHOWN = 8  # nodes and jobs shown in a table cell


@dataclass(slots=True)
class FabricReport:
    """One run of ``hwaac health fabric``.

    Attributes:
        fabric: the intent's fabric name.
        sweeps: the samples folders with their times (Unix seconds: ``taken_at``, else the newest sample's time;
            None when no sample has one).
        seconds: the interval rated (the latest two sweeps), None with one sweep.
        suspects: ranked.
        aggregates: SLIs per scope.
        slos: the SLOs judged against.
        coverage: counts and lists of what was not covered (missing devices and ports, unplanned samples, reader
            and rate errors, discontinuities, skipped files, probe flows without a path or not judged, cables no
            probe crossed).
        probes: the active probes' summary (flows, hosts, probes sent, lost forward, flows judged and lossy,
            cables crossed of planned, exonerated, unreachable pairs, suspects, the sweep), empty without probes.
    """

    fabric: str
    sweeps: list[tuple[str, float | None]]
    seconds: float | None
    suspects: list[Suspect]
    aggregates: list[Aggregate]
    slos: SloSet
    coverage: dict[str, list[str]] = field(default_factory=dict)
    probes: dict[str, Any] = field(default_factory=dict)

    @property
    def coverage_short(self) -> list[Aggregate]:
        """The scopes whose coverage is below its SLO (their ``inputs["coverage"]`` count the unknown links), the
        widest first."""
        o = self.slos.slos.get(COVERAGE)
        if o is None or o.min is None:
            return []
        low = [a for a in self.aggregates if (v := a.values.get(COVERAGE)) is not None and v < o.min]
        return sorted(
            low, key=lambda a: (ALL_SCOPES.index(a.scope) if a.scope in ALL_SCOPES else len(ALL_SCOPES), _num(a.key))
        )

    @property
    def breaches(self) -> list[tuple[Aggregate, list[str]]]:
        """The scopes with an SLI other than coverage out of its SLO, with those SLIs, in report order."""
        out = [(a, bad) for a in self.aggregates if (bad := [k for k in _breaches(a, self.slos) if k != COVERAGE])]
        return sorted(
            out,
            key=lambda x: (
                ALL_SCOPES.index(x[0].scope) if x[0].scope in ALL_SCOPES else len(ALL_SCOPES),
                _num(x[0].key),
            ),
        )

    @property
    def worst(self) -> Severity | None:
        """The worst suspect's severity; at least warn when a scope's coverage, or another of its SLIs, is out of its
        SLO."""
        worst = max((s.severity for s in self.suspects), default=None)
        if (worst is None or worst < WARN) and (self.coverage_short or self.breaches):
            return WARN
        return worst

    @property
    def status(self) -> str:
        return "ok" if self.worst is None else str(self.worst)

    def exit_code(self) -> int:
        w = self.worst
        return EXIT_FAULT if w == FAULT else EXIT_WARN if w == WARN else EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "fabric": self.fabric,
            "status": self.status,
            "sweeps": [{"path": p, "time": t} for p, t in self.sweeps],
            "seconds": self.seconds,
            "counts": {str(sev): sum(1 for s in self.suspects if s.severity == sev) for sev in Severity},
            "suspects": [_suspect(s) for s in self.suspects],
            "slis": [
                {"scope": a.scope, "key": a.key, "values": a.values, "why": a.why, "breaches": _breaches(a, self.slos)}
                for a in self.aggregates
            ],
            "coverage": self.coverage,
            "probes": self.probes or None,
            "coverage_below_slo": [
                {"scope": a.scope, "key": a.key, "coverage": a.values[COVERAGE], **_unknown(a)}
                for a in self.coverage_short
            ],
        }

    def markdown(self) -> str:
        out = [f"# Fabric health: {self.fabric}: {self.status.upper()}", ""]
        counts = ", ".join(
            f"{n} {sev}" for sev in reversed(Severity) if (n := sum(1 for s in self.suspects if s.severity == sev))
        )
        span = f"{self.seconds:.0f} s between the last two sweeps" if self.seconds else "one sweep: state only"
        out += [
            f"{len(self.suspects)} suspect(s)" + (f" ({counts})" if counts else "") + f"; {span}; "
            f"{len(self.sweeps)} sweep(s): " + ", ".join(p for p, _ in self.sweeps) + ".",
            "",
        ]
        p = self.probes
        if p:
            out += [
                f"Active probes ({p['sweep']}): {p['flows']} flows from {p['hosts']} host(s), "
                f"{p['probes_sent']} probes, {p['forward_lost']} lost on the way out; {p['flows_judged']} "
                f"flows with a mapped path crossed {p['cables_crossed']} of {p['cables_planned']} planned cables "
                f"({p['cables_exonerated']} without loss); {p['unreachable_pairs']} unreachable pair(s).",
                "",
            ]
        gaps = [f"{len(v)} {k.replace('_', ' ')}" for k, v in self.coverage.items() if v]
        if gaps:
            out += ["Not covered: " + ", ".join(gaps) + " (see Coverage).", ""]
        short = self.coverage_short
        if short:
            o = self.slos.slos[COVERAGE]
            named = [
                f"{a.scope} {a.key}".rstrip() + ": {unknown} of {planned}".format(**_unknown(a)) for a in short[:_SHOWN]
            ]
            more = f" and {len(short) - _SHOWN} more scopes" if len(short) > _SHOWN else ""
            out += [
                f"**Coverage below its SLO** (at least {o.min:g} of the planned links in a known state): "
                "planned links of unknown state in " + ", ".join(named) + more + ". Availability is judged "
                "over the known links only; the unknown ones are neither up nor healthy.",
                "",
            ]
        out += ["## Suspects", ""]
        if self.suspects:
            out += [
                "| # | severity | kind | component | rule | evidence | nodes | jobs |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for n, s in enumerate(self.suspects, 1):
                c = s.components[0]
                out.append(
                    f"| {n} | {s.severity} | {s.kind} | {_cell(c.name)} | {s.rule} | "
                    f"{_cell(_evidence_text(s.evidence[0]))} | {_list(s.nodes)} | "
                    f"{_list([f'{j.job_id} ({j.user})' for j in s.jobs])} |"
                )
        elif short:
            out.append("No suspect among the links whose state is known; coverage is below its SLO (above).")
        elif breaches := self.breaches:
            named = [f"{a.scope} {a.key}".rstrip() + f" ({', '.join(bad)})" for a, bad in breaches[:_SHOWN]]
            more = f" and {len(breaches) - _SHOWN} more scopes" if len(breaches) > _SHOWN else ""
            out.append(
                "No rule names a component, but SLIs are out of their SLO in "
                + ", ".join(named)
                + more
                + ": see the SLIs (bold) and their inputs in the JSON report."
            )
        else:
            out.append("No suspect: every rule found the fabric within its SLOs.")
        out += [
            "",
            "## SLIs",
            "",
            "Values outside their SLO are **bold**.",
            "",
            "| scope | " + " | ".join(SLI_COLUMNS) + " |",
            "|---" * (len(SLI_COLUMNS) + 1) + "|",
        ]
        for a in sorted(
            (a for a in self.aggregates if a.scope in SCOPES), key=lambda a: (SCOPES.index(a.scope), _num(a.key))
        ):
            bad = _breaches(a, self.slos)
            cells = [_fmt(a.values.get(k), k in bad) for k in SLI_COLUMNS]
            out.append(f"| {a.scope} {a.key}".rstrip() + " | " + " | ".join(cells) + " |")
        out += ["", "## Details", ""]
        for n, s in enumerate(self.suspects, 1):
            out += _details(n, s)
        out += _coverage(self.coverage)
        return "\n".join(out).rstrip() + "\n"


def _unknown(a: Aggregate) -> dict[str, int]:
    inp = a.inputs.get(COVERAGE)
    if not isinstance(inp, dict):
        return {"unknown": 0, "planned": 0}
    return {"unknown": int(inp["unknown"]), "planned": int(inp["planned"])}


def _num(key: str) -> tuple[int, str]:
    return (int(key), "") if key.isdigit() else (0, key)


def _fmt(v: float | None, bad: bool) -> str:
    if v is None:
        return "n/a"
    text = f"{v:.4g}"
    return f"**{text}**" if bad else text


def _breaches(a: Aggregate, slos: SloSet) -> list[str]:
    out = []
    for k, v in a.values.items():
        o = slos.slos.get(k)
        if v is None or o is None:
            continue
        if (o.max is not None and v > o.max) or (o.min is not None and v < o.min):
            out.append(k)
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _list(items: Sequence[str]) -> str:
    if not items:
        return ""
    head = ", ".join(items[:_SHOWN])
    return head + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")


def _evidence_text(e: Evidence) -> str:
    slo = "" if e.slo is None else f" (SLO {e.slo:.3g})"
    return f"{e.where}: {e.what} = {e.value:.3g} {e.unit}{slo}"


def _details(n: int, s: Suspect) -> list[str]:
    out = [
        f"<details><summary>#{n} {s.severity} {s.kind} {s.components[0].name} ({s.rule})</summary>",
        "",
        s.reasoning + ".",
        "",
        "Components, most likely first:",
        "",
    ]
    out += [f"- {c.kind} `{c.name}`" + (f": {c.role}" if c.role else "") for c in s.components]
    out += ["", "| where | what | value | unit | SLO | detail |", "|---|---|---|---|---|---|"]
    for e in s.evidence:
        slo = "" if e.slo is None else f"{e.slo:.3g}"
        value = "inf" if math.isinf(e.value) else f"{e.value:.4g}"
        out.append(f"| {_cell(e.where)} | {_cell(e.what)} | {value} | {e.unit} | {slo} | {_cell(e.detail)} |")
    out += ["", f"GPU nodes behind it ({len(s.nodes)}): " + (", ".join(s.nodes) or "none")]
    if s.jobs:
        out += ["", "Slurm jobs on them: " + ", ".join(f"{j.job_id} ({j.user}, {len(j.nodes)} nodes)" for j in s.jobs)]
    if s.also:
        out += ["", "Also named by: " + ", ".join(s.also)]
    if s.replaced:
        out += ["", f"Per-port suspects it stands for ({len(s.replaced)}):", ""]
        out += [f"- {r.rule}: {r.components[0].name}: {_evidence_text(r.evidence[0])}" for r in s.replaced]
    return [*out, "", "</details>", ""]


def _coverage(cov: dict[str, list[str]]) -> list[str]:
    if not any(cov.values()):
        return ["## Coverage", "", "Every planned device and port was sampled; nothing was skipped.", ""]
    out = ["## Coverage", ""]
    for k, items in cov.items():
        if not items:
            continue
        out += [f"<details><summary>{len(items)} {k.replace('_', ' ')}</summary>", ""]
        out += [f"- {_cell(i)}" for i in items[:200]]
        if len(items) > 200:
            out.append(f"- ... and {len(items) - 200} more")
        out += ["", "</details>", ""]
    return out


def _suspect(s: Suspect) -> dict[str, Any]:
    return {
        "rule": s.rule,
        "severity": str(s.severity),
        "kind": s.kind,
        "strength": list(s.strength),
        "components": [
            {"kind": c.kind, "name": c.name, "device": c.device, "port": c.port, "role": c.role} for c in s.components
        ],
        "evidence": [
            {
                "what": e.what,
                "where": e.where,
                "value": None if math.isinf(e.value) else e.value,
                "unit": e.unit,
                "slo": e.slo,
                "severity": str(e.severity),
                "detail": e.detail,
            }
            for e in s.evidence
        ],
        "reasoning": s.reasoning,
        "nodes": list(s.nodes),
        "jobs": [{"job_id": j.job_id, "user": j.user, "nodes": list(j.nodes)} for j in s.jobs],
        "also": list(s.also),
        "replaced": [_suspect(r) for r in s.replaced],
    }


__all__ = ["EXIT_FAULT", "EXIT_OK", "EXIT_WARN", "SCHEMA", "FabricReport"]
