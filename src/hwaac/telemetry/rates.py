"""Per-second rates of the counters of two or more snapshots of one device and tool, with every discontinuity
(a reset, a wrap, ``sonic-clear``) reported per port and counter instead of turned into a rate.

A rate that cannot be trusted is ``None`` with its reason in :attr:`PortRates.why`; gauges and state words are not
rated, the later sample's are kept. The rules, and why a wrap gives no rate either: ``docs/network-health.md``.
A port whose counters are all readable and none fell is rated in one pass (the same rates, in the same order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import pairwise, repeat
from operator import attrgetter, ge, mul, sub
from typing import Any, Final

from hwaac.telemetry.model import Snapshot, all_known

RESET, WRAP, CLEARED = "reset", "wrap", "cleared"
ALL = "*"  # Discontinuity.counter when it concerns every counter of the port
DEFAULT_WIDTH = 64  # SAI port, queue and PFC counters are uint64 (saiport.h: sai_stat_id values read as uint64_t)
WRAP_SHARE = 8  # a fall is a wrap when the increase across the wrap is under 1/8 of the width's range


class _Missing(Enum):
    """A counter absent from the earlier sample: a type of its own, so that ``is`` narrows it away."""

    MISSING = 0


_MISSING: Final = _Missing.MISSING


@dataclass(frozen=True, slots=True)
class Discontinuity:
    """A counter (or, with ``counter`` ``"*"``, every counter of a port) that did not count on across an interval.

    Attributes:
        device / port / counter: where.
        kind: ``reset`` (the value went down and is no wrap), ``wrap`` (the fall fits the counter's width: the
            value was near 2^width and came back small), ``cleared`` (the port's ``last_cleared`` changed: portstat
            counts since ``sonic-clear counters``).
        before / after: the values (the ``last_cleared`` words for ``cleared``).
        detail: one sentence with the numbers.
    """

    device: str
    port: str
    counter: str
    kind: str
    before: int | str | None
    after: int | str | None
    detail: str

    def plain(self) -> tuple[Any, ...]:
        """As a tuple (for :mod:`marshal`); ``Discontinuity(*flat)`` makes it again."""
        return (self.device, self.port, self.counter, self.kind, self.before, self.after, self.detail)


@dataclass(slots=True)
class PortRates:
    """One port over one interval.

    Attributes:
        port: as the tool printed it.
        rates: per canonical counter, per second; ``None`` when not computable, the reason in :attr:`why`.
        why: the reason of each ``None`` rate.
        gauges / state: of the later sample (gauges are point readings, never rated).
    """

    port: str
    rates: dict[str, float | None] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)
    gauges: dict[str, float | None] = field(default_factory=dict)
    state: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Interval:
    """The rates of one device and tool between two snapshots.

    Attributes:
        device / tool: of the snapshots.
        start / end: the two times (seconds); None when unknown.
        seconds: ``end - start`` when both are known and ``end > start``, else None (and a reason in ``errors``).
        time_base: ``taken_at`` (both outputs said when), ``caller`` (the caller's sample times) or "".
        ports: by port name, for the ports in both samples.
        discontinuities: resets, wraps and clears found.
        only_before / only_after: ports in one sample only (gone, or new).
        errors: reasons no rate of the interval could be computed (times, device or tool differ).
        unknown: the readers' reasons part of an output could not be read (the later sample's, then the earlier's
            marked so): a rated output read in part is reported, never taken as whole.
    """

    device: str
    tool: str
    start: float | None
    end: float | None
    seconds: float | None
    time_base: str
    ports: dict[str, PortRates] = field(default_factory=dict)
    discontinuities: list[Discontinuity] = field(default_factory=list)
    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    def plain(self) -> tuple[Any, ...]:
        """As tuples, lists and dicts (for :mod:`marshal`)."""
        return (
            *interval_head(self),
            [(p.port, p.rates, p.why, p.gauges, p.state) for p in self.ports.values()],
            [d.plain() for d in self.discontinuities],
            self.only_before,
            self.only_after,
            self.errors,
            self.unknown,
        )

    @classmethod
    def from_plain(cls, flat: tuple[Any, ...]) -> Interval:
        ports, discontinuities, only_before, only_after, errors, unknown = flat[len(INTERVAL_HEAD) :]
        return cls(
            **dict(zip(INTERVAL_HEAD, flat, strict=False)),
            ports={p[0]: PortRates(*p) for p in ports},
            discontinuities=[Discontinuity(*d) for d in discontinuities],
            only_before=only_before,
            only_after=only_after,
            errors=errors,
            unknown=unknown,
        )


# the fields an interval's rates are known by, first in the plain form of Interval and RatedFrame alike
INTERVAL_HEAD = ("device", "tool", "start", "end", "seconds", "time_base")
interval_head = attrgetter(*INTERVAL_HEAD)


def classify_fall(before: int, after: int, width: int) -> tuple[str, int | None, str]:
    """(kind, increase across the wrap or None, detail) for a counter that went from ``before`` down to ``after``.

    A wrap needs ``before`` below 2^width and the increase ``after + 2^width - before`` under 2^width / 8 (the value
    was in the top eighth of the range and came back into the bottom eighth); anything else is a reset.
    """
    top = 1 << width
    if before < top:
        wrapped = after + top - before
        if wrapped < top // WRAP_SHARE:
            return WRAP, wrapped, f"went from {before} to {after}: a {width}-bit wrap (+{wrapped} across it)"
    note = ""
    if width > 32 and before < 1 << 32 and after + (1 << 32) - before < (1 << 32) // WRAP_SHARE:
        note = f" (it would fit a 32-bit wrap, but the counter is {width} bits wide)"
    return RESET, None, f"went from {before} to {after}: reset{note}"


def sample_times(
    taken0: float | None, taken1: float | None, t0: float | None, t1: float | None
) -> tuple[float | None, float | None, str, str]:
    """(start, end, time base, error or "") of two samples: their own times (``taken_at``) when both have one, else
    the caller's."""
    if taken0 is not None and taken1 is not None:
        start, end, base = taken0, taken1, "taken_at"
    elif t0 is not None and t1 is not None:
        start, end, base = t0, t1, "caller"
    else:
        return None, None, "", "no sample times: the outputs carry no time and the caller gave none"
    if end <= start:
        how = "the same" if end == start else "earlier"
        return start, end, base, f"sample times not increasing: {end} is {how} than {start} ({base})"
    return start, end, base, ""


def _all_rated(
    c0: Mapping[str, int | None], c1: Mapping[str, int | None], inv: float
) -> dict[str, float | None] | None:
    """The rates of a port in one pass when both samples hold the same counters in the same order, all readable,
    none fallen (the usual port); None otherwise, and :func:`interval` rates it counter by counter."""
    if list(c0) != list(c1):
        return None
    v0, v1 = list(c0.values()), list(c1.values())
    if not all_known(v0) or not all_known(v1) or not all(map(ge, v1, v0)):
        return None
    return dict(zip(c1, map(mul, map(sub, v1, v0), repeat(inv)), strict=True))


def interval(
    before: Snapshot,
    after: Snapshot,
    *,
    times: tuple[float, float] | None = None,
    widths: Mapping[str, int] | None = None,
    default_width: int = DEFAULT_WIDTH,
) -> Interval:
    """The rates from ``before`` to ``after`` (one device, one tool).

    Args:
        before / after: two snapshots, oldest first.
        times: the caller's sample times, used when either snapshot lacks ``taken_at``.
        widths: counter width in bits by canonical name where it is not ``default_width``.
        default_width: the width of every other counter (64: SAI counters).

    Never raises: what cannot be rated is None with a reason.
    """
    t0, t1 = times if times is not None else (None, None)
    start, end, base, err = sample_times(before.taken_at, after.taken_at, t0, t1)
    device = after.device or before.device
    out = Interval(device=device, tool=after.tool, start=start, end=end, seconds=None, time_base=base)
    if after.unknown or before.unknown:
        out.unknown = [*after.unknown, *(f"earlier sample: {u}" for u in before.unknown)]
    errors = out.errors
    if err:
        errors.append(err)
    if before.device and after.device and before.device != after.device:
        errors.append(f"not the same device: {before.device!r} then {after.device!r}")
    if before.tool != after.tool:
        errors.append(f"not the same tool: {before.tool!r} then {after.tool!r}")
    bports = before.ports
    out.only_before = [p for p in bports if p not in after.ports]
    if errors:
        reason = "; ".join(errors)
        for name, s1 in after.ports.items():
            if name not in bports:
                out.only_after.append(name)
                continue
            out.ports[name] = PortRates(
                name, dict.fromkeys(s1.counters), dict.fromkeys(s1.counters, reason), s1.gauges, s1.state
            )
        return out
    assert start is not None and end is not None
    out.seconds = end - start
    inv = 1.0 / out.seconds
    widths = widths or {}
    disc = out.discontinuities
    ports = out.ports
    only_after = out.only_after
    for name, s1 in after.ports.items():
        s0 = bports.get(name)
        if s0 is None:
            only_after.append(name)
            continue
        c0, c1 = s0.counters, s1.counters
        lc0, lc1 = s0.state.get("last_cleared"), s1.state.get("last_cleared")
        if lc0 == lc1 and (fast := _all_rated(c0, c1, inv)) is not None:
            ports[name] = PortRates(name, fast, {}, s1.gauges, s1.state)
            continue
        rates: dict[str, float | None] = {}
        why: dict[str, str] = {}
        ports[name] = PortRates(name, rates, why, s1.gauges, s1.state)
        if lc0 != lc1:
            reason = f"counters cleared between the samples (last cleared {lc0!r} then {lc1!r})"
            disc.append(Discontinuity(device, name, ALL, CLEARED, lc0, lc1, reason))
            for k in c1:
                rates[k] = None
                why[k] = reason
            continue
        for k, v1 in c1.items():
            v0 = c0.get(k, _MISSING)
            if v1 is not None and v0 is not None and v0 is not _MISSING:
                if v1 >= v0:
                    rates[k] = (v1 - v0) * inv
                    continue
                kind, _, detail = classify_fall(v0, v1, widths.get(k, default_width))
                disc.append(Discontinuity(device, name, k, kind, v0, v1, detail))
                rates[k] = None
                why[k] = f"{kind}: {detail}"
                continue
            rates[k] = None
            if v0 is _MISSING:
                why[k] = "not in the earlier sample"
            elif v0 is None:
                why[k] = "unreadable (N/A) in the earlier sample"
            else:
                why[k] = "unreadable (N/A) in the later sample"
        if len(c0) != len(c1) or c0.keys() != c1.keys():
            for k in c0.keys() - c1.keys():
                rates[k] = None
                why[k] = "not in the later sample"
    return out


def rates(
    snapshots: Sequence[Snapshot],
    *,
    times: Sequence[float] | None = None,
    widths: Mapping[str, int] | None = None,
    default_width: int = DEFAULT_WIDTH,
) -> list[Interval]:
    """The intervals between consecutive ``snapshots`` (oldest first): ``len(snapshots) - 1`` of them.

    ``times``, when given, holds one caller time per snapshot (used where ``taken_at`` is missing). Fewer than two
    snapshots, or times of another length, give one interval whose ``errors`` say so. Never raises.
    """
    if len(snapshots) < 2:
        first = snapshots[0] if snapshots else Snapshot("")
        out = Interval(first.device, first.tool, None, None, None, "")
        out.errors.append(f"{len(snapshots)} snapshot(s): a rate needs two or more")
        return [out]
    if times is not None and len(times) != len(snapshots):
        out = Interval(snapshots[-1].device, snapshots[-1].tool, None, None, None, "")
        out.errors.append(f"{len(times)} sample times for {len(snapshots)} snapshots")
        return [out]
    return [
        interval(
            a,
            b,
            times=(times[i], times[i + 1]) if times is not None else None,
            widths=widths,
            default_width=default_width,
        )
        for i, (a, b) in enumerate(pairwise(snapshots))
    ]


__all__ = [
    "ALL",
    "CLEARED",
    "INTERVAL_HEAD",
    "RESET",
    "WRAP",
    "Discontinuity",
    "Interval",
    "PortRates",
    "classify_fall",
    "interval",
    "interval_head",
    "rates",
    "sample_times",
]
