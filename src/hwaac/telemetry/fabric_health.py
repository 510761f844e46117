"""From sweeps of samples to a :class:`~hwaac.telemetry.report.FabricReport`: rates over the latest two sweeps,
correlation to the plan, SLIs, localisation, and the tomography of the latest sweep's active probes (each sweep's
probes are a complete measurement, not a counter pair); what was not covered goes into the report's coverage.
:func:`assess` also keeps the layers in between (:class:`FabricHealth`) for the Prometheus exporter; :func:`judge`
takes sweeps already rated (:mod:`hwaac.telemetry.rated`)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hwaac.health.parsers.slurm_squeue import Squeue
from hwaac.plan.model import Plan
from hwaac.probe.model import ProbeResults, merge
from hwaac.probe.paths import PathIndex
from hwaac.telemetry.framed import RatedFrame
from hwaac.telemetry.localise import localise
from hwaac.telemetry.parallel import no_collections
from hwaac.telemetry.rated import Rated, rate
from hwaac.telemetry.rates import Interval
from hwaac.telemetry.report import FabricReport
from hwaac.telemetry.samples import Sweep
from hwaac.telemetry.sli import Aggregate, SliTable, aggregate, link_slis
from hwaac.telemetry.slo import SloSet
from hwaac.telemetry.suspects import Observed
from hwaac.telemetry.tomography import Tomography, tomography
from hwaac.telemetry.topology import Correlation, LinkIndex, correlate, from_parts


@dataclass(slots=True)
class FabricHealth:
    """One assessment: the report and the layers it came from.

    Attributes:
        report: what ``hwaac health fabric`` prints.
        corr: the samples attached to the plan's link ends.
        slis: the link SLIs, in plan order, and their columns.
        per_leaf: per leaf, its path diversity and BGP stability (with their inputs).
        bgp: per leaf, the interval of its BGP summaries.
        probes: the tomography of the latest sweep's active probes, None without probes.
        probe_time: when those probes were sent (Unix seconds: the hosts' latest ``ended``, else ``started``, else
            the sweep's time), None without probes or a time.
    """

    report: FabricReport
    corr: Correlation
    slis: SliTable
    per_leaf: dict[str, Aggregate]
    bgp: Mapping[str, Interval | RatedFrame]
    probes: Tomography | None = None
    probe_time: float | None = None


def fabric_report(
    plan: Plan, sweeps: Sequence[Sweep], slos: SloSet, *, squeue: Squeue | None = None, index: LinkIndex | None = None
) -> FabricReport:
    """Rate every (device, tool) over its latest two sweeps (one sweep: its state and gauges only), attach to the
    plan, compute SLIs and suspects."""
    return assess(plan, sweeps, slos, squeue=squeue, index=index).report


def assess(
    plan: Plan,
    sweeps: Sequence[Sweep],
    slos: SloSet,
    *,
    squeue: Squeue | None = None,
    index: LinkIndex | None = None,
    timings: dict[str, float] | None = None,
) -> FabricHealth:
    """:func:`fabric_report` with the correlation, link SLIs, per-leaf SLIs and BGP intervals behind it.

    ``timings``, when given, receives the seconds of each stage (rates, index, correlate, slis, localise,
    report), for ``benchmarks/network_health.py``."""
    clock = _Clock(timings)
    with no_collections():
        rated = rate(sweeps)
    clock.lap("rates")
    return judge(plan, rated, slos, squeue=squeue, index=index, clock=clock)


def judge(
    plan: Plan,
    rated: Rated,
    slos: SloSet,
    *,
    squeue: Squeue | None = None,
    index: LinkIndex | None = None,
    timings: dict[str, float] | None = None,
    clock: _Clock | None = None,
) -> FabricHealth:
    """:func:`assess` of sweeps already rated (:func:`hwaac.telemetry.rated.read_rated` reads and rates samples
    folders device by device, for a large fabric)."""
    clock = clock or _Clock(timings)
    with no_collections():
        return _judge(plan, rated, slos, squeue, index, clock)


def _judge(
    plan: Plan, rated: Rated, slos: SloSet, squeue: Squeue | None, index: LinkIndex | None, clock: _Clock
) -> FabricHealth:
    index = index or LinkIndex(plan)
    clock.lap("index")
    bgp, seconds = rated.bgp, rated.seconds
    corr = from_parts(index, rated.parts, rated.table) if rated.parts is not None else correlate(index, rated.readings)
    clock.lap("correlate")
    slis = link_slis(corr)
    aggs, per_leaf = aggregate(corr, slis, routes=rated.routes, bgp=bgp)
    clock.lap("slis")
    probed = next((i for i in reversed(range(len(rated.probes))) if rated.probes[i]), None)
    tomo = None
    if probed is not None:
        tomo = tomography(merge(list(rated.probes[probed].values())), PathIndex.from_plan(plan), slos)
    suspects = localise(Observed(corr, slis, slos, bgp), squeue=squeue, extra=tomo.suspects if tomo else ())
    clock.lap("localise")
    unplanned_devices = sorted({d for d, _, _ in corr.unplanned if d not in index.ports})
    coverage = {
        "devices_not_sampled": corr.missing_devices,
        "planned_ports_not_sampled": [f"{d} {p}" for d, p in corr.missing],
        "devices_not_in_the_plan": unplanned_devices,
        "samples_not_in_the_plan": [f"{d} {p} ({t})" for d, p, t in corr.unplanned if d not in unplanned_devices],
        "reader_and_rate_errors": list(
            dict.fromkeys([*corr.errors, *(f"{d} ({iv.tool}): {u}" for d, iv in bgp.items() for u in iv.unknown)])
        ),
        "discontinuities": [f"{x.device} {x.port} {x.counter}: {x.detail}" for x in corr.discontinuities],
        "files_skipped": [f for skipped in rated.skipped for f in skipped],
    }
    if probed is not None and tomo is not None:
        coverage["probe_results_not_read"] = [u for r in rated.probes[probed].values() for u in r.unknown]
        coverage.update(tomo.coverage)
    if len(rated.sweeps) < 2:
        coverage["reader_and_rate_errors"].insert(
            0, "one sweep: no counter is rated, only state and gauges are judged (give --samples twice, oldest first)"
        )
    probe_sweep = rated.sweeps[probed] if probed is not None else None
    report = FabricReport(
        plan.intent.fabric.name,
        list(rated.sweeps),
        max(seconds) if seconds else None,
        suspects,
        aggs,
        slos,
        coverage,
        dict(tomo.summary, sweep=probe_sweep[0]) if tomo and probe_sweep else {},
    )
    clock.lap("report")
    return FabricHealth(
        report,
        corr,
        slis,
        per_leaf,
        bgp,
        tomo,
        _probe_time(rated.probes[probed], probe_sweep[1]) if probed is not None and probe_sweep else None,
    )


def _probe_time(probes: Mapping[str, ProbeResults], sweep_time: float | None) -> float | None:
    """When ``probes`` were sent: the latest end of a host's run (its start when it has no end), else the sweep's
    time."""
    times = [t for r in probes.values() if (t := r.ended if r.ended is not None else r.started) is not None]
    return max(times) if times else sweep_time


class _Clock:
    """Seconds per stage into ``out`` (nothing when it is None)."""

    def __init__(self, out: dict[str, float] | None) -> None:
        self.out, self.last = out, time.perf_counter()

    def lap(self, stage: str) -> None:
        if self.out is not None:
            now = time.perf_counter()
            self.out[stage] = self.out.get(stage, 0.0) + now - self.last
            self.last = now


__all__ = ["FabricHealth", "assess", "fabric_report", "judge"]
