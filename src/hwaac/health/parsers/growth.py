"""Counter growth between two readings: per-counter deltas and rates per second, ``None`` where either side is
unknown or the counter went backwards (reset), so a check can apply NVSentinel-style rules (any increase of
``link_downed``, ``symbol_error`` > 10/s ...). :func:`grown` and :func:`grown_by_port` say which counters grew, for
the qualification gate ("links show no error growth"). Works on sysfs, ``rdma statistic`` and ``ethtool -S``
readings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from hwaac.health.parsers.ib_counters import ERROR_COUNTERS, PortKey


@dataclass(frozen=True, slots=True)
class CounterGrowth:
    """How one counter moved between two readings.

    Attributes:
        before, after: the two readings (None: not read or not trustworthy).
        delta: ``after - before`` in the counter's unit; None when either side is unknown or the counter went
            backwards (a reset or a wrap: the real increase cannot be known).
        per_second: ``delta / seconds``; None when delta is None or the interval is not positive.
        reason: why delta or per_second is None ("" when both are known).
    """

    before: int | None
    after: int | None
    delta: int | None
    per_second: float | None
    reason: str = ""


def counter_growth(
    before: Mapping[str, int | None], after: Mapping[str, int | None], seconds: float
) -> dict[str, CounterGrowth]:
    """Per counter name (the union of both readings): delta and rate per second between two readings.

    Works on any flat counter mapping (one sysfs port's counters, ``EthtoolStats.counters``). Raises nothing.
    """
    growth: dict[str, CounterGrowth] = {}
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name), after.get(name)
        if name not in before or name not in after:
            side = "first" if name not in before else "second"
            growth[name] = CounterGrowth(b, a, None, None, f"not in the {side} reading")
        elif b is None or a is None:
            growth[name] = CounterGrowth(b, a, None, None, "a reading is unknown (saturated or unreadable)")
        elif a < b:
            growth[name] = CounterGrowth(b, a, None, None, "went backwards: counters were reset or wrapped")
        elif seconds <= 0:
            growth[name] = CounterGrowth(b, a, a - b, None, f"interval {seconds} s is not positive")
        else:
            growth[name] = CounterGrowth(b, a, a - b, (a - b) / seconds)
    return growth


class PortCounterReading(Protocol):
    """A reading with per-port counters: :class:`~hwaac.health.parsers.ib_counters.IbCountersResult` (sysfs) or
    :class:`~hwaac.health.parsers.rdma.RdmaStatResult` (``rdma statistic show``)."""

    @property
    def ports(self) -> Mapping[PortKey, Mapping[str, int | None]]: ...


def port_counter_growth(
    before: PortCounterReading, after: PortCounterReading, seconds: float
) -> dict[PortKey, dict[str, CounterGrowth]]:
    """:func:`counter_growth` for every ``(device, port)`` in either reading (a port missing on one side has every
    counter unknown). Raises nothing."""
    return {
        key: counter_growth(before.ports.get(key, {}), after.ports.get(key, {}), seconds)
        for key in sorted(set(before.ports) | set(after.ports))
    }


def grown(growth: Mapping[str, CounterGrowth], names: Iterable[str] | None = None) -> list[str]:
    """Names (restricted to ``names`` when given, e.g. :data:`ERROR_COUNTERS`) whose delta is known and > 0."""
    wanted = set(growth) if names is None else set(names)
    return sorted(n for n, g in growth.items() if n in wanted and g.delta is not None and g.delta > 0)


def unknown_growth(growth: Mapping[str, CounterGrowth], names: Iterable[str] | None = None) -> list[str]:
    """Names (restricted to ``names`` when given) whose growth cannot be known: these are no evidence of health."""
    wanted = set(growth) if names is None else set(names)
    return sorted(n for n, g in growth.items() if n in wanted and g.delta is None)


def grown_by_port(
    growth: Mapping[PortKey, Mapping[str, CounterGrowth]], names: Iterable[str] = ERROR_COUNTERS
) -> dict[str, list[str]]:
    """Per port subject (``"mlx5_3 port 1"``) the error counters that grew; ports without growth are left out.

    The qualification gate wants this empty *and* :func:`unknown_growth` empty for every port.
    """
    names = tuple(names)
    out = {f"{dev} port {port}": grown(g, names) for (dev, port), g in growth.items()}
    return {subject: names_ for subject, names_ in out.items() if names_}
