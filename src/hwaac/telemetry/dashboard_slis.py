"""The SLIs the Grafana dashboard (:mod:`hwaac.telemetry.dashboard`) shows, as data: per SLI its panel title and
unit, its query per (plane, rail) by SU and its fabric-wide query, over the exporter's series and the recording
rules of ``files/prometheus/hwaac-network-sli.rules.yml``.
"""

from __future__ import annotations

from dataclasses import dataclass

from hwaac.telemetry.slo import PROBE_LOSS


@dataclass(frozen=True, slots=True)
class Sli:
    """One SLI as the dashboard shows it.

    Attributes:
        name: the SLI's key in the SLO file and ``hwaac.telemetry.sli``.
        title: the panel title.
        unit: Grafana's unit id.
        per_su: the expression for one (plane, rail), a value per SU (and its leaf); ``{sel}`` is replaced by the
            label matchers. The same formula as the scope rules of the rules file, grouped by SU, since those rules
            have no plane label.
        fabric: the fabric-wide expression (the rules file's ``hwaac:sli_<name>:fabric``).
        what: one sentence for the panel description.
    """

    name: str
    title: str
    unit: str
    per_su: str
    fabric: str
    what: str


def _worst(metric: str) -> str:
    return f"max by (su, leaf) ({metric}{{{{{{sel}}}}}})"


SLIS = (
    Sli(
        "availability",
        "Availability",
        "percentunit",
        "sum by (su, leaf) (hwaac:link_up{{{sel}}}) / sum by (su, leaf) (hwaac:link_known{{{sel}}})",
        "hwaac:sli_availability:fabric{{{sel}}}",
        "planned links up / planned links whose state was read (a link not read lowers coverage instead).",
    ),
    Sli(
        "coverage",
        "Coverage",
        "percentunit",
        "sum by (su, leaf) (hwaac:link_known{{{sel}}}) / sum by (su, leaf) (hwaac_link_planned{{{sel}}})",
        "hwaac:sli_coverage:fabric{{{sel}}}",
        "planned links whose state was read / planned links (a link not read is never counted healthy).",
    ),
    Sli(
        "loss_ratio",
        "Loss ratio",
        "sci",
        "sum by (su, leaf) (hwaac:port_lost_per_second{{{sel}}})"
        " / (sum by (su, leaf) (hwaac:port_received_per_second{{{sel}}}) > 0)",
        "hwaac:sli_loss_ratio:fabric{{{sel}}}",
        "frames received with errors or dropped / frames received.",
    ),
    Sli(
        "pre_fec_ber",
        "Pre-FEC BER",
        "sci",
        _worst("hwaac_port_pre_fec_ber"),
        "hwaac:sli_pre_fec_ber:fabric{{{sel}}}",
        "the worst link end's bit error ratio before FEC.",
    ),
    Sli(
        "fec_uncorrectable_per_s",
        "Uncorrectable FEC",
        "cps",
        _worst("hwaac_port_fec_uncorrectable_per_second"),
        "hwaac:sli_fec_uncorrectable_per_second:fabric{{{sel}}}",
        "the worst link end's RS-FEC codewords not corrected, per second.",
    ),
    Sli(
        "pause_ratio",
        "PFC pause",
        "percentunit",
        _worst("hwaac_port_pause_ratio"),
        "hwaac:sli_pause_ratio:fabric{{{sel}}}",
        "the worst link end's share of time paused by received PFC.",
    ),
    Sli(
        "ecn_mark_ratio",
        "ECN marking",
        "percentunit",
        _worst("hwaac_port_ecn_mark_ratio"),
        "hwaac:sli_ecn_mark_ratio:fabric{{{sel}}}",
        "the worst link end's ECN CE-marked packets / packets (congestion, not a fault).",
    ),
    Sli(
        PROBE_LOSS,
        "Probe loss",
        "percentunit",
        _worst("hwaac:sli_probe_loss_ratio:link"),
        "hwaac:sli_probe_loss_ratio:fabric{{{sel}}}",
        "the worst cable's (or set of parallel cables') share of active probes lost on the way out, over the "
        "flows crossing it with at least probe_min_probes probes (a cable that shares flows with a lossy one shows "
        "part of its loss: HwaacProbePathLoss and the suspects name the one tomography blames).",
    ),
)


__all__ = ["SLIS", "Sli"]
