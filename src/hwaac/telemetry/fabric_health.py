"""From sweeps of samples to a :class:`~hwaac.telemetry.report.FabricReport`: rates over the latest two sweeps,
correlation to the plan, SLIs, localisation, and the tomography of the latest sweep's active probes (each sweep's
probes are a complete measurement, not a counter pair); what was not covered goes into the report's coverage.
:func:`assess` also keeps the layers in between (:class:`FabricHealth`) for the Prometheus exporter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hwaac.health.parsers.slurm_squeue import Squeue
from hwaac.plan.model import Plan
from hwaac.probe.model import merge
from hwaac.probe.paths import PathIndex
from hwaac.probe.tomography import Tomography, tomography
from hwaac.telemetry.localise import localise
from hwaac.telemetry.model import Snapshot
from hwaac.telemetry.rates import Interval, interval
from hwaac.telemetry.report import FabricReport
from hwaac.telemetry.samples import Sweep, sweep_time
from hwaac.telemetry.sli import Aggregate, LinkSLI, aggregate, link_slis
from hwaac.telemetry.slo import SloSet
from hwaac.telemetry.suspects import Observed
from hwaac.telemetry.topology import Correlation, LinkIndex, correlate


@dataclass(slots=True)
class FabricHealth:
    """One assessment: the report and the layers it came from.

    Attributes:
        report: what ``hwaac health fabric`` prints.
        corr: the samples attached to the plan's link ends.
        slis: the link SLIs, in plan order.
        per_leaf: per leaf, its path diversity and BGP stability (with their inputs).
        bgp: per leaf, the interval of its BGP summaries.
        probes: the tomography of the latest sweep's active probes, None without probes.
        probe_time: when those probes were sent (Unix seconds: the hosts' latest ``ended``, else ``started``, else
            the sweep's time), None without probes or a time.
    """

    report: FabricReport
    corr: Correlation
    slis: list[LinkSLI]
    per_leaf: dict[str, Aggregate]
    bgp: Mapping[str, Interval]
    probes: Tomography | None = None
    probe_time: float | None = None


def _latest_two(sweeps: Sequence[Sweep], key: object, bgp: bool
                ) -> tuple[tuple[Snapshot, float] | None, tuple[Snapshot, float] | None]:
    """(the earlier, the latest) reading of ``key`` among the sweeps that hold it."""
    found = [x for s in sweeps if (x := (s.bgp if bgp else s.snapshots).get(key)) is not None]  # type: ignore[call-overload]
    if not found:
        return None, None
    return (found[-2] if len(found) > 1 else None), found[-1]


def fabric_report(plan: Plan, sweeps: Sequence[Sweep], slos: SloSet, *, squeue: Squeue | None = None,
                  index: LinkIndex | None = None) -> FabricReport:
    """Rate every (device, tool) over its latest two sweeps (one sweep: its state and gauges only), attach to the
    plan, compute SLIs and suspects."""
    return assess(plan, sweeps, slos, squeue=squeue, index=index).report


def assess(plan: Plan, sweeps: Sequence[Sweep], slos: SloSet, *, squeue: Squeue | None = None,
           index: LinkIndex | None = None) -> FabricHealth:
    """:func:`fabric_report` with the correlation, link SLIs, per-leaf SLIs and BGP intervals behind it."""
    index = index or LinkIndex(plan)
    readings: list[Interval | Snapshot] = []
    seconds: list[float] = []
    keys = {k for s in sweeps for k in s.snapshots}
    for key in sorted(keys):
        before, after = _latest_two(sweeps, key, False)
        assert after is not None
        if before is None:
            readings.append(after[0])
            continue
        iv = interval(before[0], after[0], times=(before[1], after[1]))
        readings.append(iv)
        if iv.seconds:
            seconds.append(iv.seconds)
    bgp: dict[str, Interval] = {}
    for device in sorted({d for s in sweeps for d in s.bgp}):
        before, after = _latest_two(sweeps, device, True)
        if before is not None and after is not None:
            bgp[device] = interval(before[0], after[0], times=(before[1], after[1]))
    routes = {}
    for s in sweeps:
        routes.update(s.routes)
    corr = correlate(index, readings)
    slis = link_slis(corr)
    aggs, per_leaf = aggregate(corr, slis, routes=routes, bgp=bgp)
    probed = next((s for s in reversed(sweeps) if s.probes), None)
    tomo = None
    if probed is not None:
        tomo = tomography(merge(list(probed.probes.values())), PathIndex.from_plan(plan), slos)
    suspects = localise(Observed(corr, slis, slos, bgp), squeue=squeue, extra=tomo.suspects if tomo else ())
    unplanned_devices = sorted({d for d, _, _ in corr.unplanned if d not in index.ports})
    coverage = {
        "devices_not_sampled": corr.missing_devices,
        "planned_ports_not_sampled": [f"{d} {p}" for d, p in corr.missing],
        "devices_not_in_the_plan": unplanned_devices,
        "samples_not_in_the_plan": [f"{d} {p} ({t})" for d, p, t in corr.unplanned if d not in unplanned_devices],
        "reader_and_rate_errors": list(dict.fromkeys(corr.errors)),
        "discontinuities": [f"{x.device} {x.port} {x.counter}: {x.detail}" for x in corr.discontinuities],
        "files_skipped": [f for s in sweeps for f in s.skipped],
    }
    if probed is not None and tomo is not None:
        coverage["probe_results_not_read"] = [u for r in probed.probes.values() for u in r.unknown]
        coverage.update(tomo.coverage)
    if len(sweeps) < 2:
        coverage["reader_and_rate_errors"].insert(0, "one sweep: no counter is rated, only state and gauges are "
                                                     "judged (give --samples twice, oldest first)")
    report = FabricReport(plan.intent.fabric.name, [(str(s.path), sweep_time(s)) for s in sweeps],
                          max(seconds) if seconds else None, suspects, aggs, slos, coverage,
                          dict(tomo.summary, sweep=str(probed.path)) if tomo and probed else {})
    return FabricHealth(report, corr, slis, per_leaf, bgp, tomo, _probe_time(probed))


def _probe_time(probed: Sweep | None) -> float | None:
    """When the probes of ``probed`` were sent: the latest end of a host's run (its start when it has no end),
    else the sweep's time."""
    if probed is None:
        return None
    times = [t for r in probed.probes.values() if (t := r.ended if r.ended is not None else r.started) is not None]
    return max(times) if times else sweep_time(probed)


__all__ = ["FabricHealth", "assess", "fabric_report"]
