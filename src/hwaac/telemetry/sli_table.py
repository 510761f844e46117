"""The SLIs of every planned link as columns: per SLI one float64 array over the links, computed at once from the
correlated ends' columns (:class:`~hwaac.telemetry.end_table.EndTable`) without building an end, and each link built
back on access as the :class:`~hwaac.telemetry.sli_link.LinkSLI` that :func:`~hwaac.telemetry.sli_link.link_sli`
gives (with its sources and reasons). The columns hold exactly those objects' values, NaN for None. Why:
``docs/network-health-scale.md``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator, Sequence
from itertools import repeat
from typing import overload

import numpy as np

from hwaac.telemetry.end_table import EndTable
from hwaac.telemetry.sli_link import (
    AVAILABILITY,
    ECN,
    FEC_UNCORR,
    LINK_SLIS,
    LOSS,
    MAX_QUANTA,
    PAUSE,
    PAUSE_QUANTUM_BITS,
    PRE_FEC_BER,
    LinkSLI,
    link_sli,
)
from hwaac.telemetry.topology import LINK_KINDS, Correlation

_FLAPS = ("link_down_events", "link_state_changes")
UP, DOWN = 1, 2  # the oper codes of end_states
# by the word, None where an end has none
_OPER: dict[str | None, int] = {"up": UP, "down": DOWN}
_ADMIN_DOWN: dict[str | None, bool] = {"down": True}


class SliTable(Sequence[LinkSLI]):
    """The SLIs of the planned links, in plan order: a sequence of :class:`LinkSLI` (item ``i`` is link ``i``'s,
    built on access), and their columns.

    Attributes:
        values: per SLI name of :data:`~hwaac.telemetry.sli_link.LINK_SLIS`, a float64 array over the links; NaN
            where the link's value is None.
        lost / received: the loss ratio's numerator and denominator per link (0.0 where the ratio is None).
        seconds: per link, the interval of end ``a``, else of end ``b`` (NaN: none, or of unknown length).
    """

    def __init__(
        self,
        values: dict[str, np.ndarray],
        lost: np.ndarray,
        received: np.ndarray,
        seconds: np.ndarray,
        item: Callable[[int], LinkSLI],
    ) -> None:
        self.values = values
        self.lost = lost
        self.received = received
        self.seconds = seconds
        self._item = item
        self._size = len(seconds)

    @classmethod
    def of_correlation(cls, corr: Correlation) -> SliTable:
        """The SLIs of every planned link of ``corr``, the columns computed from its ends' columns."""
        index = corr.index
        prios = tuple(index.plan.intent.qos.pfc_priorities)
        values, lost, received, seconds = _columns(corr, prios)
        return cls(values, lost, received, seconds, lambda i: link_sli_at(corr, i, prios))

    @classmethod
    def of(cls, slis: Sequence[LinkSLI]) -> SliTable:
        """``slis`` itself when it is a table, else the table of those objects (one per planned link, in plan
        order): their values as columns, the objects as its items."""
        if isinstance(slis, SliTable):
            return slis
        objs = list(slis)

        def column(xs: Iterator[float | None]) -> np.ndarray:
            return np.fromiter((math.nan if x is None else x for x in xs), np.float64, len(objs))

        values = {name: column(s.values.get(name) for s in objs) for name in LINK_SLIS}
        return cls(
            values,
            column(s.lost for s in objs),
            column(s.received for s in objs),
            column(s.seconds for s in objs),
            objs.__getitem__,
        )

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, i: int) -> LinkSLI: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[LinkSLI]: ...

    def __getitem__(self, i: int | slice) -> LinkSLI | Sequence[LinkSLI]:
        if isinstance(i, slice):
            return [self._item(k) for k in range(*i.indices(self._size))]
        k = operator.index(i)  # an int, or a numpy integer from np.flatnonzero
        if not -self._size <= k < self._size:
            raise IndexError(f"link {k} outside 0..{self._size - 1}")
        return self._item(k % self._size)

    def __iter__(self) -> Iterator[LinkSLI]:
        return (self._item(k) for k in range(self._size))


def link_sli_at(corr: Correlation, i: int, priorities: Sequence[int]) -> LinkSLI:
    """The SLIs of link ``i`` from its two ends as objects (:func:`link_sli`); ``priorities``: the plan's PFC
    priorities."""
    index, ends = corr.index, corr.ends
    link = index.links[i]
    rated, seconds = ends.interval_seconds(2 * i)  # end a's interval, else end b's
    if not rated:
        seconds = ends.interval_seconds(2 * i + 1)[1]
    return link_sli(
        i,
        (ends[2 * i], ends[2 * i + 1]),
        seconds,
        index.speed_bps[link.kind],
        priorities,
        0 if link.kind == "host" else None,
    )


def end_states(table: EndTable) -> tuple[np.ndarray, np.ndarray]:
    """(per end: admin down (bool), its ``oper`` word as :data:`UP`, :data:`DOWN` or 0 (int8)), read from the
    state words of the ends that have some."""
    admin = np.zeros(table.size, dtype=bool)
    oper = np.zeros(table.size, dtype=np.int8)
    n = len(table.states)
    if n:
        codes = np.fromiter(table.states.keys(), np.int64, n)
        words = table.states.values()
        admin[codes] = np.fromiter(
            map(_ADMIN_DOWN.get, map(dict.get, words, repeat("admin")), repeat(False)), np.bool_, n
        )
        oper[codes] = np.fromiter(map(_OPER.get, map(dict.get, words, repeat("oper")), repeat(0)), np.int8, n)
    return admin, oper


def _worse(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``y`` where ``x`` is NaN or ``y > x``, else ``x``: the object code's ``if x is None or y > x``, so a tie
    keeps the first."""
    return np.where(np.isnan(x) | (y > x), y, x)


def _truthy(x: np.ndarray) -> np.ndarray:
    """Where a rate is a value other than 0 (Python's ``if rate:`` on a float or None)."""
    return ~np.isnan(x) & (x != 0.0)


def _columns(
    corr: Correlation, priorities: Sequence[int]
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
    """(values, lost, received, seconds) of :class:`SliTable`, each SLI as :func:`link_sli` computes it: per end
    over the (n, 2) view of an end column (column 0: end ``a``, 1: end ``b``), then over the two ends."""
    index, t = corr.index, corr.ends
    n = len(index.links)

    def ends(col: np.ndarray) -> np.ndarray:
        return col.reshape(n, 2)

    host = index.kinds == LINK_KINDS.index("host")
    speed = np.array([float(index.speed_bps[k]) for k in LINK_KINDS])[index.kinds]
    values: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # availability: 0 when an end is admin down, oper down or a flap counter rose; 1 when an end says oper up
        admin, oper = end_states(t)
        flapped = _truthy(t.rate(_FLAPS[0])) | _truthy(t.rate(_FLAPS[1]))
        zero = ends(admin | (oper == DOWN) | flapped).any(axis=1)
        up = ends(oper == UP).any(axis=1)
        values[AVAILABILITY] = np.where(zero, 0.0, np.where(up, 1.0, math.nan))
        # loss: summed over the ends with rx_ok, rx_err and rx_drop all rated, a then b, from 0.0
        ok, err, drop = t.rate("rx_ok"), t.rate("rx_err"), t.rate("rx_drop")
        whole = ends(~(np.isnan(ok) | np.isnan(err) | np.isnan(drop)))
        num = ends(np.where(whole.reshape(-1), err + drop, 0.0))
        den = ends(np.where(whole.reshape(-1), ok + err + drop, 0.0))
        num = (0.0 + num[:, 0]) + num[:, 1]
        den = (0.0 + den[:, 0]) + den[:, 1]
        has = whole.any(axis=1) & (den > 0)
        values[LOSS] = np.where(has, num / den, math.nan)
        lost, received = np.where(has, num, 0.0), np.where(has, den, 0.0)
        # the worse end of a gauge and a rate
        for name, col in ((PRE_FEC_BER, t.gauge("pre_fec_ber")), (FEC_UNCORR, t.rate("fec_uncorrectable"))):
            e = ends(col)
            values[name] = _worse(e[:, 0], e[:, 1])
        # pause: per end the worst PFC priority (a duration if rated, else frames x max quanta, capped at 1)
        end_speed = np.repeat(speed, 2)
        pause = np.full(2 * n, math.nan)
        for p in priorities:
            d, f = t.rate(f"pfc{p}_rx_duration_us"), t.rate(f"pfc{p}_rx")
            x = np.where(np.isnan(d), np.minimum(1.0, f * MAX_QUANTA * PAUSE_QUANTUM_BITS / end_speed), d / 1e6)
            pause = _worse(pause, x)
        e = ends(pause)
        values[PAUSE] = _worse(e[:, 0], e[:, 1])
        # ECN: marked / rx_ok at a host link's end a (a NIC counts CE received), marked / tx_ok elsewhere
        base = ends(t.rate("tx_ok")).copy()
        base[host, 0] = ends(ok)[host, 0]
        base = base.reshape(-1)
        marked = t.rate("ecn_marked")
        e = ends(np.where(~np.isnan(marked) & _truthy(base), marked / base, math.nan))
        values[ECN] = _worse(e[:, 0], e[:, 1])
    rated, secs = ends(t.rated), ends(t.seconds)
    seconds = np.where(rated[:, 0], secs[:, 0], np.where(rated[:, 1], secs[:, 1], math.nan))
    return {name: values[name] for name in LINK_SLIS}, lost, received, seconds


__all__ = ["DOWN", "UP", "SliTable", "end_states", "link_sli_at"]
