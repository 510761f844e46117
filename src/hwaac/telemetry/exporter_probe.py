"""The Prometheus families of the active probes (:class:`~hwaac.telemetry.tomography.Tomography` of the latest sweep
with probes): per planned cable the probes its mapped paths crossed and their forward loss, the same per set of
parallel cables the hops could not tell apart (never spread onto its members), the flows by state, and when the
probes were sent. Names, labels and why sets are a family of their own: ``docs/network-health-prometheus.md`` "Metrics".
"""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client.core import GaugeMetricFamily, Metric

from hwaac.probe.paths import cables_name
from hwaac.telemetry.fabric_health import FabricHealth

# a set of parallel cables: the labels its cables share (those of its lowest link), and `cables` its name
PARALLEL_LABELS = ("fabric", "cables", "link_kind", "plane", "su", "rail", "leaf", "spine", "super_spine", "node")
FLOW_STATES = ("clean", "lossy", "no_path", "not_judged", "unreachable")


def flow_states(h: FabricHealth) -> dict[str, int]:
    """The probed flows by state, each flow in one: judged (a complete mapped path and a forward count) without
    or with lost probes; no complete mapped path; not judged (no probe sent, no responder, the forward count
    unknown, or a host's receive buffer dropped); or in a pair of which nothing came back. Empty without probes."""
    t = h.probes
    if t is None:
        return {}
    s, cov = t.summary, t.coverage
    judged, lossy = int(s.get("flows_judged", 0)), int(s.get("flows_lossy", 0))
    no_path, not_judged = len(cov.get("probe_flows_without_a_path", ())), len(cov.get("probe_flows_not_judged", ()))
    return {
        "clean": judged - lossy,
        "lossy": lossy,
        "no_path": no_path,
        "not_judged": not_judged,
        "unreachable": int(s.get("flows", 0)) - judged - no_path - not_judged,
    }


def probe_families(
    h: FabricHealth, fabric: str, link_label_names: Sequence[str], link_labels: Sequence[dict[str, str]]
) -> list[Metric]:
    """The probe families of ``h`` (kept, empty, without probes); ``link_labels[i]``: link ``i``'s labels, named
    ``link_label_names`` in that order."""
    names = tuple(link_label_names)
    ratio = GaugeMetricFamily(
        "hwaac_probe_link_loss_ratio",
        "Per planned cable the probes' mapped paths crossed: "
        "probes lost on the way out / probes sent, over every judged flow crossing it "
        "(tomography's estimate; the cable or another one on the same flows).",
        labels=names,
    )
    sent = GaugeMetricFamily(
        "hwaac_probe_link_probes_sent",
        "Per planned cable the probes' mapped paths crossed: probes sent by the judged flows crossing it.",
        labels=names,
    )
    set_ratio = GaugeMetricFamily(
        "hwaac_probe_parallel_loss_ratio",
        "Per set of parallel cables a hop did not tell "
        "apart (it answered from its device, not the cable): probes lost on the way out / "
        "probes sent over the flows crossing one of them.",
        labels=PARALLEL_LABELS,
    )
    set_sent = GaugeMetricFamily(
        "hwaac_probe_parallel_probes_sent",
        "Per set of parallel cables a hop did not tell apart: probes sent by the judged flows crossing one of them.",
        labels=PARALLEL_LABELS,
    )
    flows = GaugeMetricFamily(
        "hwaac_probe_flows",
        "Probed flows of the latest sweep with probes, by state: clean "
        "or lossy (judged), no_path, not_judged, unreachable.",
        labels=("fabric", "state"),
    )
    when = GaugeMetricFamily(
        "hwaac_probe_sweep_timestamp_seconds",
        "When the latest probes were sent (Unix seconds: the hosts' latest end of run).",
        labels=("fabric",),
    )
    out: list[Metric] = [ratio, sent, set_ratio, set_sent, flows, when]
    t = h.probes
    if t is None:
        return out
    links = h.corr.index.links
    for cables, est in sorted(t.estimates.items(), key=lambda kv: sorted(kv[0])):
        if not est.sent:
            continue
        if len(cables) == 1:
            values = [link_labels[next(iter(cables))][k] for k in names]
            ratio.add_metric(values, est.estimate)
            sent.add_metric(values, float(est.sent))
            continue
        lab = link_labels[min(cables)]
        values = [fabric, cables_name(links, cables), *(lab[k] for k in PARALLEL_LABELS[2:])]
        set_ratio.add_metric(values, est.estimate)
        set_sent.add_metric(values, float(est.sent))
    for state, n in flow_states(h).items():
        flows.add_metric([fabric, state], float(n))
    if h.probe_time is not None:
        when.add_metric([fabric], h.probe_time)
    return out


__all__ = ["FLOW_STATES", "PARALLEL_LABELS", "flow_states", "probe_families"]
