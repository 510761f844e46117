"""The Prometheus view of one fabric assessment (:class:`~hwaac.telemetry.fabric_health.FabricHealth`): per link end
rates and state with topology labels, SLIs per scope, SLO levels, ranked suspects, and the active probes' loss per
cable (:mod:`hwaac.telemetry.exporter_probe`).

A custom collector (:class:`FabricCollector`) builds the families at each scrape from the latest assessment; no
global gauges, so a port or a suspect that is gone is gone from the next scrape. Names, labels, cardinality and the
rules over them: ``docs/network-health-prometheus.md``.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Callable, Iterator, Sequence

import numpy as np
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from hwaac.telemetry.exporter_probe import probe_families
from hwaac.telemetry.fabric_health import FabricHealth
from hwaac.telemetry.rates import PortRates
from hwaac.telemetry.sli import AVAILABILITY, ECN, end_pause_ratio, link_sli
from hwaac.telemetry.suspects import Suspect
from hwaac.telemetry.topology import END_NAMES, LinkIndex

LINK_LABELS = ("fabric", "cable", "link_kind", "plane", "su", "rail", "leaf", "spine", "super_spine", "node")
PORT_LABELS = (*LINK_LABELS, "device", "port", "peer_device", "peer_port", "end")
SCOPE_LABELS = ("fabric", "scope", "cable", "link_kind", "plane", "su", "rail", "leaf", "spine", "super_spine", "node")
SUSPECT_LABELS = ("fabric", "rule", "severity", "kind", "component", "cable", "device", "port", "hosts")
MAX_SUSPECTS = 1000  # suspects exported (the best ranked); the rest are counted in hwaac_suspects
HOSTS_SHOWN = 8  # GPU node names in a suspect's hosts label; more are summarised as "+N more"
_FLAPS = ("link_down_events", "link_state_changes")

# per end: (metric suffix, help, the canonical counter rated per second)
PORT_RATES = (
    ("rx_ok_per_second", "frames received OK per second", "rx_ok"),
    ("rx_err_per_second", "frames received with errors per second", "rx_err"),
    ("rx_drop_per_second", "frames dropped on receive per second", "rx_drop"),
    ("rx_crc_per_second", "frames received with a bad FCS per second", "rx_crc"),
    ("fec_uncorrectable_per_second", "RS-FEC codewords not corrected per second", "fec_uncorrectable"),
)


def metric_name(sli: str) -> str:
    """The Prometheus spelling of an SLI name: its unit spelled out (``fec_uncorrectable_per_s`` ->
    ``fec_uncorrectable_per_second``), as Prometheus's naming practice asks and ``promtool check metrics`` checks
    (promlint: "metric names should not contain abbreviated units")."""
    return sli.removesuffix("_per_s") + "_per_second" if sli.endswith("_per_s") else sli


def _label_values(index: LinkIndex, fabric: str, i: int) -> dict[str, str]:
    """The link labels of link ``i``; a label that does not apply is ""."""
    lab = index.labels(i)
    out = dict.fromkeys(LINK_LABELS, "")
    out["fabric"] = fabric
    out["link_kind"] = str(lab.pop("kind"))
    lab.pop("hca", None)
    for k, v in lab.items():
        out[k] = str(v)
    return out


def _end(pr: PortRates, kind: str, speed: float, prios: Sequence[int], host_end: bool) -> list[tuple[str, float]]:
    """(metric suffix, value) of one sampled end; values that are None are left out."""
    out: list[tuple[str, float]] = []
    r = pr.rates
    for suffix, _, counter in PORT_RATES:
        v = r.get(counter)
        if v is not None:
            out.append((suffix, v))
    flaps = [v for k in _FLAPS if (v := r.get(k)) is not None]
    if flaps:
        out.append(("link_flaps_per_second", max(flaps)))
    pause, _ = end_pause_ratio(r, prios, speed)
    if pause is not None:
        out.append(("pause_ratio", pause))
    # the end's own ECN ratio as sli.link_sli computes it (a NIC: marked / rx_ok; a switch: marked / tx_ok)
    ecn = link_sli(0, (pr, None), None, speed, prios, 0 if host_end else None).values[ECN]
    if ecn is not None:
        out.append(("ecn_mark_ratio", ecn))
    ber = pr.gauges.get("pre_fec_ber")
    if ber is not None:
        out.append(("pre_fec_ber", ber))
    oper, admin = pr.state.get("oper"), pr.state.get("admin")
    if oper in ("up", "down"):
        out.append(("oper_up", 1.0 if oper == "up" else 0.0))
    if admin in ("up", "down"):
        out.append(("admin_up", 1.0 if admin == "up" else 0.0))
    return out


PORT_HELP = {
    **{s: h for s, h, _ in PORT_RATES},
    "link_flaps_per_second": "link down events (or state changes) per second",
    "pause_ratio": "fraction of time paused by received PFC, the most paused PFC priority",
    "ecn_mark_ratio": "ECN CE-marked packets / packets (switch: of tx_ok, NIC: of rx_ok)",
    "pre_fec_ber": "bit error ratio before FEC (gauge)",
    "oper_up": "1 operationally up, 0 down (absent when the state was not read)",
    "admin_up": "1 administratively up, 0 down (absent when not read)",
}


def _hosts(nodes: Sequence[str]) -> str:
    head = ",".join(nodes[:HOSTS_SHOWN])
    return head + (f",+{len(nodes) - HOSTS_SHOWN} more" if len(nodes) > HOSTS_SHOWN else "")


def _suspect_labels(fabric: str, s: Suspect, index: LinkIndex) -> list[str]:
    c = s.components[0] if s.components else None
    cable = index.links[s.links[0]].cable_id if len(s.links) == 1 else ""
    return [
        fabric,
        s.rule,
        str(s.severity),
        s.kind,
        c.name if c else "",
        cable,
        c.device if c else "",
        c.port if c else "",
        _hosts(s.nodes),
    ]


def families(h: FabricHealth) -> list[Metric]:
    """Every metric family of one assessment (empty families are kept, so the names are stable)."""
    rep, corr = h.report, h.corr
    index = corr.index
    fabric = rep.fabric
    prios = tuple(index.plan.intent.qos.pfc_priorities)
    port = {
        s: GaugeMetricFamily(f"hwaac_port_{s}", f"Per link end: {PORT_HELP[s]}.", labels=PORT_LABELS) for s in PORT_HELP
    }
    planned = GaugeMetricFamily("hwaac_link_planned", "1 for every planned link of the fabric.", labels=LINK_LABELS)
    link_labels = []
    for i, link in enumerate(index.links):
        lab = _label_values(index, fabric, i)
        link_labels.append(lab)
        planned.add_metric(list(lab.values()), 1.0)
        speed = index.speed_bps[link.kind]
        for end in (0, 1):
            pr = corr.ends[2 * i + end]
            if pr is None:
                continue
            device, p = index.end_name(2 * i + end)
            peer_device, peer_port = index.end_name(2 * i + (end ^ 1))
            values = [*lab.values(), device, p, peer_device, peer_port, END_NAMES[end]]
            for suffix, v in _end(pr, link.kind, speed, prios, link.kind == "host" and end == 0):
                port[suffix].add_metric(values, v)
    out: list[Metric] = [*port.values(), planned]
    out += _sli_families(h, fabric, link_labels)
    out += _slo_families(h, fabric)
    out += _leaf_families(h, fabric)
    out += _suspect_families(h, fabric)
    out += _run_families(h, fabric)
    out += probe_families(h, fabric, LINK_LABELS, link_labels)
    return out


def _sli_families(h: FabricHealth, fabric: str, link_labels: list[dict[str, str]]) -> list[Metric]:
    names = list(dict.fromkeys([*h.report.slos.slos, *(k for a in h.report.aggregates for k in a.values)]))
    fams = {
        n: GaugeMetricFamily(
            f"hwaac_sli_{metric_name(n)}",
            f"SLI {n} per scope (link, leaf, rail, su, plane, spine, fabric).",
            labels=SCOPE_LABELS,
        )
        for n in names
    }
    link_values = [[fabric, "link", *(lab[k] for k in SCOPE_LABELS[2:])] for lab in link_labels]
    for n, col in h.slis.values.items():  # a link's values, from the columns (building each link is slow)
        if n in fams:
            fam = fams[n]
            at = np.flatnonzero(~np.isnan(col))
            for i, v in zip(at.tolist(), col[at].tolist(), strict=True):
                fam.add_metric(link_values[i], v)
    links = GaugeMetricFamily(
        "hwaac_scope_links",
        "Planned links of a scope by state: up, down, or unknown (not sampled; coverage's shortfall).",
        labels=(*SCOPE_LABELS, "state"),
    )
    for a in h.report.aggregates:
        lab = dict.fromkeys(SCOPE_LABELS, "")
        lab["fabric"], lab["scope"] = fabric, a.scope
        if a.scope != "fabric":
            lab[a.scope] = a.key
        for n, v in a.values.items():
            if v is not None and n in fams:
                fams[n].add_metric(list(lab.values()), v)
        counts = a.inputs.get(AVAILABILITY)
        if isinstance(counts, dict):
            for state in ("up", "down", "unknown"):
                links.add_metric([*lab.values(), state], float(counts[state]))
    return [*fams.values(), links]


def _slo_families(h: FabricHealth, fabric: str) -> list[Metric]:
    slos = h.report.slos
    out: list[Metric] = []
    for n, o in slos.slos.items():
        fam = GaugeMetricFamily(
            f"hwaac_slo_{metric_name(n)}",
            f"SLO of {n} ({o.unit}): bound max or min, and warn.",
            labels=("fabric", "bound"),
        )
        for bound in ("max", "min", "warn"):
            v = getattr(o, bound)
            if v is not None:
                fam.add_metric([fabric, bound], v)
        out.append(fam)
    for n, v in slos.localise.model_dump().items():
        level = GaugeMetricFamily(f"hwaac_localise_{n}", f"Localisation level {n}.", labels=("fabric",))
        level.add_metric([fabric], float(v))
        out.append(level)
    return out


def _leaf_families(h: FabricHealth, fabric: str) -> list[Metric]:
    index = h.corr.index
    uplinks = GaugeMetricFamily(
        "hwaac_leaf_uplinks_planned", "Planned uplinks (leaf-spine links) of a leaf.", labels=("fabric", "leaf")
    )
    ecmp = GaugeMetricFamily(
        "hwaac_leaf_route_min_ecmp",
        "Narrowest ECMP width of the leaf's selected, installed BGP routes.",
        labels=("fabric", "leaf"),
    )
    drops = GaugeMetricFamily(
        "hwaac_bgp_peer_dropped_per_second",
        "BGP sessions dropped from Established per second, per peer of a leaf.",
        labels=("fabric", "leaf", "peer", "cable"),
    )
    for leaf, n in sorted(index.uplinks.items()):
        uplinks.add_metric([fabric, leaf], float(n))
        agg = h.per_leaf.get(leaf)
        inputs = agg.inputs.get("path_diversity", {}) if agg is not None else {}
        if isinstance(inputs, dict) and "min_ecmp" in inputs:
            ecmp.add_metric([fabric, leaf], float(inputs["min_ecmp"]))
    for leaf, iv in sorted(h.bgp.items()):
        if iv.errors:
            continue
        peers = _peer_cables(index, leaf)
        for peer, pr in sorted(iv.ports.items()):
            r = pr.rates.get("bgp_dropped")
            if r is not None:
                drops.add_metric([fabric, leaf, peer, peers.get(peer.rpartition("/")[2], "")], r)
    return [uplinks, ecmp, drops]


def _peer_cables(index: LinkIndex, leaf: str) -> dict[str, str]:
    """BGP peer (the far end's address, or the leaf's port for an unnumbered session) -> cable id."""
    out: dict[str, str] = {}
    for port, code in index.ports.get(leaf, {}).items():
        link = index.links[code >> 1]
        far_ip = link.b_ip if code & 1 == 0 else link.a_ip
        if far_ip is not None:
            out[str(ipaddress.IPv4Address(far_ip))] = link.cable_id
        out[port] = link.cable_id
    return out


def _suspect_families(h: FabricHealth, fabric: str) -> list[Metric]:
    index = h.corr.index
    one = GaugeMetricFamily(
        "hwaac_suspect", f"1 per ranked suspect of the fabric (the best ranked {MAX_SUSPECTS}).", labels=SUSPECT_LABELS
    )
    score = GaugeMetricFamily(
        "hwaac_suspect_score",
        "The suspect's strongest evidence as a multiple of its SLO (+Inf for a zero SLO).",
        labels=SUSPECT_LABELS,
    )
    rank = GaugeMetricFamily("hwaac_suspect_rank", "The suspect's rank, 1 first.", labels=SUSPECT_LABELS)
    nodes = GaugeMetricFamily("hwaac_suspect_nodes", "GPU nodes behind the suspect.", labels=SUSPECT_LABELS)
    count = GaugeMetricFamily("hwaac_suspects", "Suspects by severity.", labels=("fabric", "severity"))
    seen: set[tuple[str, ...]] = set()
    for n, s in enumerate(h.report.suspects[:MAX_SUSPECTS], 1):
        lab = _suspect_labels(fabric, s, index)
        if tuple(lab) in seen:  # two suspects with the same labels: the better ranked one speaks
            continue
        seen.add(tuple(lab))
        one.add_metric(lab, 1.0)
        score.add_metric(lab, s.strength[1] if not math.isnan(s.strength[1]) else 0.0)
        rank.add_metric(lab, float(n))
        nodes.add_metric(lab, float(len(s.nodes)))
    for sev in ("info", "warn", "fault"):
        count.add_metric([fabric, sev], float(sum(1 for s in h.report.suspects if str(s.severity) == sev)))
    return [one, score, rank, nodes, count]


def _run_families(h: FabricHealth, fabric: str) -> list[Metric]:
    rep = h.report
    seconds = GaugeMetricFamily(
        "hwaac_fabric_rate_interval_seconds",
        "The interval the rates are over (the latest two sweeps).",
        labels=("fabric",),
    )
    if rep.seconds is not None:
        seconds.add_metric([fabric], rep.seconds)
    sweep = GaugeMetricFamily(
        "hwaac_fabric_sweep_timestamp_seconds",
        "When the latest sweep was taken (Unix seconds: its taken_at, else its newest sample's time).",
        labels=("fabric",),
    )
    times = [t for _, t in rep.sweeps if t is not None]
    if times:
        sweep.add_metric([fabric], max(times))
    cov = GaugeMetricFamily(
        "hwaac_coverage_gaps",
        "What the samples did not cover, by kind (devices not sampled, planned ports not sampled, ...).",
        labels=("fabric", "what"),
    )
    for k, v in rep.coverage.items():
        cov.add_metric([fabric, k], float(len(v)))
    return [seconds, sweep, cov]


class FabricCollector(Collector):
    """Collects :func:`families` of what ``source()`` returns at each scrape (None: nothing yet)."""

    def __init__(self, source: Callable[[], FabricHealth | None]) -> None:
        self._source = source

    def collect(self) -> Iterator[Metric]:
        h = self._source()
        if h is not None:
            yield from families(h)


__all__ = [
    "LINK_LABELS",
    "MAX_SUSPECTS",
    "PORT_LABELS",
    "SCOPE_LABELS",
    "SUSPECT_LABELS",
    "FabricCollector",
    "families",
    "metric_name",
]
