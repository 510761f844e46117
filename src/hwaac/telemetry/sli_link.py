"""The SLIs of one planned link over one interval, from its two ends as objects: the formulas, each value with
what it came from or why it is None. :mod:`hwaac.telemetry.sli_table` computes the same values over every link at
once; :mod:`hwaac.telemetry.sli` aggregates them. Formulas and their sources: ``docs/network-health.md`` "SLIs".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache

from hwaac.telemetry.rates import PortRates

AVAILABILITY, LOSS, PRE_FEC_BER, FEC_UNCORR, PAUSE, ECN = (
    "availability",
    "loss_ratio",
    "pre_fec_ber",
    "fec_uncorrectable_per_s",
    "pause_ratio",
    "ecn_mark_ratio",
)
LINK_SLIS = (AVAILABILITY, LOSS, PRE_FEC_BER, FEC_UNCORR, PAUSE, ECN)
PAUSE_QUANTUM_BITS = 512  # IEEE 802.3 Annex 31B / 802.1Qbb: one pause quantum is 512 bit times
MAX_QUANTA = 0xFFFF  # the largest pause time a PFC frame can ask for
_FLAPS = ("link_down_events", "link_state_changes")


@dataclass(slots=True)
class LinkSLI:
    """The SLIs of one link over one interval.

    Attributes:
        link: the link's index in the plan.
        seconds: the interval (of end ``a``, else ``b``), None when neither end was rated.
        values: per SLI name, None when it could not be computed.
        why: the reason of each None value.
        source: per SLI, what it was computed from (``a+b rx_ok,rx_err,rx_drop``, ``b oper``, ``a pfc3_rx x max
            quanta``...).
        lost / received: the loss ratio's numerator and denominator, frames per second summed over the ends used.
    """

    link: int
    seconds: float | None
    lost: float = 0.0
    received: float = 0.0
    values: dict[str, float | None] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)
    source: dict[str, str] = field(default_factory=dict)


def _availability(ends: Sequence[PortRates | None]) -> tuple[float | None, str, str]:
    words, flapped = [], ""
    for side, e in zip("ab", ends, strict=True):
        if e is None:
            continue
        st = e.state
        if st.get("admin") == "down":
            return 0.0, f"{side} admin down", ""
        oper = st.get("oper")
        if oper in ("up", "down"):
            words.append((side, oper))
        for k in _FLAPS:
            r = e.rates.get(k)
            if r:
                flapped = f"{side} {k} rose"
    if any(w == "down" for _, w in words):
        return 0.0, " ".join(f"{s} oper {w}" for s, w in words), ""
    if flapped:
        return 0.0, flapped, ""
    if words:
        return 1.0, " ".join(f"{s} oper {w}" for s, w in words), ""
    return None, "", "no end reports its oper state and no link-down counter rose (0 rises does not prove up)"


@cache
def _pause_names(priorities: tuple[int, ...]) -> tuple[tuple[str, str], ...]:
    """(duration counter, frame counter) of each priority, built once per fabric rather than per port."""
    return tuple((f"pfc{p}_rx_duration_us", f"pfc{p}_rx") for p in priorities)


def end_pause_ratio(
    rates: Mapping[str, float | None], priorities: Sequence[int], speed_bps: float
) -> tuple[float | None, str]:
    """(the largest fraction of time one end was paused by received PFC over ``priorities``, what it came from):
    ``pfc{p}_rx_duration_us`` / 1e6, else the upper bound ``pfc{p}_rx`` x 65535 quanta x 512 bit times / speed,
    capped at 1; (None, "") when no priority is rated."""
    pause, src = None, ""
    for duration, frames in _pause_names(tuple(priorities)):
        d = rates.get(duration)
        if d is not None:
            x, how = d / 1e6, duration
        else:
            f = rates.get(frames)
            if f is None:
                continue
            x, how = min(1.0, f * MAX_QUANTA * PAUSE_QUANTUM_BITS / speed_bps), f"{frames} x max quanta"
        if pause is None or x > pause:
            pause, src = x, how
    return pause, src


def link_sli(
    i: int,
    ends: Sequence[PortRates | None],
    seconds: float | None,
    speed_bps: float,
    priorities: Sequence[int],
    host_end: int | None,
) -> LinkSLI:
    """The SLIs of link ``i`` from its two ends (None: not sampled). ``host_end``: which end is a NIC (0 or 1)."""
    out = LinkSLI(i, seconds)
    values, why, source = out.values, out.why, out.source
    v, src, reason = _availability(ends)
    values[AVAILABILITY] = v
    (source if v is not None else why)[AVAILABILITY] = src or reason
    num = den = 0.0
    used, miss = [], []
    ber = fec = pause = ecn = None
    ber_s = fec_s = pause_s = ecn_s = ""
    for side, e in enumerate(ends):
        s = "ab"[side]
        if e is None:
            miss.append(f"{s} not sampled")
            continue
        r = e.rates
        ok, err, drop = r.get("rx_ok"), r.get("rx_err"), r.get("rx_drop")
        if ok is not None and err is not None and drop is not None:
            num += err + drop
            den += ok + err + drop
            used.append(s)
        else:
            miss.append(
                f"{s}: "
                + ", ".join(
                    f"{k} {e.why.get(k, 'not read')}"
                    for k, x in (("rx_ok", ok), ("rx_err", err), ("rx_drop", drop))
                    if x is None
                )
            )
        g = e.gauges.get("pre_fec_ber")
        if g is not None and (ber is None or g > ber):
            ber, ber_s = g, f"{s} pre_fec_ber gauge"
        u = r.get("fec_uncorrectable")
        if u is not None and (fec is None or u > fec):
            fec, fec_s = u, f"{s} fec_uncorrectable rate"
        x, how = end_pause_ratio(r, priorities, speed_bps)
        if x is not None and (pause is None or x > pause):
            pause, pause_s = x, f"{s} {how}"
        marked = r.get("ecn_marked")
        base_name = "rx_ok" if side == host_end else "tx_ok"  # a NIC counts CE packets received, a switch marks
        base = r.get(base_name)
        if marked is not None and base:
            x = marked / base
            if ecn is None or x > ecn:
                ecn, ecn_s = x, f"{s} ecn_marked / {base_name}"
    if used and den > 0:
        values[LOSS] = num / den
        out.lost, out.received = num, den
        source[LOSS] = "+".join(used) + " (rx_err+rx_drop)/(rx_ok+rx_err+rx_drop)"
    else:
        values[LOSS] = None
        why[LOSS] = "no frame received in the interval" if used else "; ".join(miss) or "no end rated"
    for name, x, s, none in (
        (PRE_FEC_BER, ber, ber_s, "no end reports pre_fec_ber"),
        (FEC_UNCORR, fec, fec_s, "no end rates fec_uncorrectable"),
        (PAUSE, pause, pause_s, "no end rates pfc{p}_rx_duration_us or pfc{p}_rx of a PFC priority"),
        (ECN, ecn, ecn_s, "no end rates ecn_marked with packets to compare"),
    ):
        values[name] = x
        if x is None:
            why[name] = none
        else:
            source[name] = s
    return out


__all__ = [
    "AVAILABILITY",
    "ECN",
    "FEC_UNCORR",
    "LINK_SLIS",
    "LOSS",
    "MAX_QUANTA",
    "PAUSE",
    "PAUSE_QUANTUM_BITS",
    "PRE_FEC_BER",
    "LinkSLI",
    "end_pause_ratio",
    "link_sli",
]
