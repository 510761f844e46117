"""Rates of two frames (an output read straight into columns by its format's frame reader): one numpy pass for the
usual output, whose ports and counters are the same in both samples and none fell. Anything else is left to
:func:`~hwaac.telemetry.rates.interval` on the snapshots, which says why per counter. Why: ``docs/network-health.md``
"Scale".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hwaac.telemetry.frames import Frame
from hwaac.telemetry.model import distinct
from hwaac.telemetry.rates import INTERVAL_HEAD, PortRates, interval_head, sample_times


@dataclass(slots=True)
class RatedFrame:
    """The rates of one device and tool between two frames: what :class:`~hwaac.telemetry.rates.Interval` holds for
    an output whose every counter was rated.

    Attributes:
        device / tool / start / end / seconds / time_base: as :class:`~hwaac.telemetry.rates.Interval`'s.
        rows: the ports, in the later frame's order (:attr:`ports` gives them as :class:`PortRates` by name, as
            :attr:`Interval.ports`).
        names: the counters, the same for every port.
        rates: float64 (ports x names), per second.
        state: per port, the later frame's state words (None: the tool gives none).
    """

    device: str
    tool: str
    start: float
    end: float
    seconds: float
    time_base: str
    rows: list[str]
    names: tuple[str, ...]
    rates: np.ndarray
    state: list[dict[str, str]] | None
    _ports: dict[str, PortRates] | None = field(default=None, repr=False, compare=False)

    def port_rates(self, row: int) -> PortRates:
        """Port ``row`` as :class:`PortRates`, as :func:`~hwaac.telemetry.rates.interval` gives it."""
        return PortRates(
            self.rows[row],
            dict(zip(self.names, self.rates[row].tolist(), strict=True)),
            {},
            {},
            self.state[row] if self.state is not None else {},
        )

    # what Interval's readers ask of it: every port rated, nothing fell, no error
    @property
    def errors(self) -> list[str]:
        return []

    @property
    def unknown(self) -> list[str]:
        return []

    @property
    def discontinuities(self) -> list[Any]:
        return []

    @property
    def ports(self) -> dict[str, PortRates]:
        """The ports as :class:`PortRates` by name (:attr:`Interval.ports`), built on first use."""
        if self._ports is None:
            self._ports = {p: self.port_rates(i) for i, p in enumerate(self.rows)}
        return self._ports

    def column(self, name: str) -> np.ndarray | None:
        """The rates of counter ``name`` over the ports, None when the frame has no such counter."""
        return self.rates[:, self.names.index(name)] if name in self.names else None

    def truthy(self, name: str) -> list[tuple[str, float]]:
        """(port, rate) of the ports whose rate of ``name`` is not 0, in order (none without such a counter)."""
        col = self.column(name)
        return [] if col is None else [(self.rows[k], float(col[k])) for k in np.flatnonzero(col).tolist()]

    def plain(self) -> tuple[Any, ...]:
        """As tuples, lists, dicts and bytes (for :mod:`marshal`)."""
        return (*interval_head(self), self.rows, self.names, self.rates.tobytes(), self.state)

    @classmethod
    def from_plain(cls, flat: tuple[Any, ...]) -> RatedFrame:
        rows, names, rates, state = flat[len(INTERVAL_HEAD) :]
        shape = (len(rows), len(names))
        return cls(
            **dict(zip(INTERVAL_HEAD, flat, strict=False)),
            rows=rows,
            names=tuple(names),
            rates=np.frombuffer(rates, dtype=np.float64).reshape(shape),
            state=state,
        )


def rate_frames(before: Frame, after: Frame, *, times: tuple[float, float] | None = None) -> RatedFrame | None:
    """The rates from ``before`` to ``after`` in one pass, or None when the interval is not the usual one (other
    ports, counters or order; a counter that fell; times not increasing; another device or tool): the caller then
    rates the snapshots with :func:`~hwaac.telemetry.rates.interval`, which reports each case."""
    t0, t1 = times if times is not None else (None, None)
    start, end, base, err = sample_times(before.taken_at, after.taken_at, t0, t1)
    if err or start is None or end is None or before.tool != after.tool:
        return None
    if before.device and after.device and before.device != after.device:
        return None
    if before.names != after.names or before.ports != after.ports:
        return None
    v0, v1 = before.values, after.values
    if v0.shape != v1.shape or bool((v1 < v0).any()):
        return None
    if before.state is not None and after.state is not None and _cleared(before.state) != _cleared(after.state):
        return None  # sonic-clear between the samples: interval() reports it per port
    seconds = end - start
    rates = (v1 - v0).astype(np.float64) * (1.0 / seconds)
    return RatedFrame(
        after.device or before.device,
        after.tool,
        start,
        end,
        seconds,
        base,
        after.ports,
        after.names,
        rates,
        after.state,
    )


def _cleared(states: list[dict[str, str]]) -> list[str | None] | None:
    """Each port's ``last_cleared`` word; None when no port has one (checked once per distinct dict: rows of a
    frame may share one)."""
    if not any("last_cleared" in st for st in distinct(states)):
        return None
    return [st.get("last_cleared") for st in states]


__all__ = ["RatedFrame", "rate_frames"]
