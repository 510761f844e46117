"""Every planned link end of a fabric as columns (:class:`EndTable`), assembled from the parts
:func:`~hwaac.telemetry.ends.correlate_part` correlated; :meth:`EndTable.end` gives one end back as
:class:`~hwaac.telemetry.rates.PortRates`, and the judgement's screens read the columns (:meth:`EndTable.rate`).
Why: ``docs/network-health-scale.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from typing import Any, overload

import numpy as np

from hwaac.telemetry.ends import NOT_RATED, EndPart, Layout, merge_port_rates
from hwaac.telemetry.rates import PortRates


class EndTable(Sequence[PortRates | None]):
    """Every planned link end of a fabric (end code ``2 * link + end``), as columns; a sequence of
    :class:`PortRates` (None where no sample reached the end), each built on access.

    Attributes:
        size: the number of end codes.
        layout: per end, its index in ``layouts`` (-1: not sampled).
        layouts: the (rate names, gauge names) of the ends, in each end's order.
        rates / gauges: per name, a float64 array over the ends; NaN where the end has none or it is None.
        ports / states / why: per sampled end, its port as printed, state words and the reasons of its None rates.
        rated: per end, whether an interval (not only a state snapshot) reached it; ``seconds``: that interval's
            length (NaN: unknown).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.layout = np.full(size, -1, dtype=np.int32)
        self.layouts: list[Layout] = []
        self._layout_ids: dict[Layout, int] = {}
        self.rates: dict[str, np.ndarray] = {}
        self.gauges: dict[str, np.ndarray] = {}
        self.ports: dict[int, str] = {}
        self.states: dict[int, dict[str, str]] = {}
        self.why: dict[int, dict[str, str]] = {}
        self.rated = np.zeros(size, dtype=bool)
        self.seconds = np.full(size, math.nan)

    @classmethod
    def assemble(cls, size: int, parts: Iterable[EndPart]) -> EndTable:
        """The table of ``size`` end codes from correlated parts; an end in several parts is merged as
        :func:`correlate_part` merges readings (later parts win per name)."""
        table = cls(size)
        for part in parts:
            table.add(part)
        return table

    def add(self, part: EndPart) -> None:
        """Put ``part``'s ends in (after those of the parts added before it, as :meth:`assemble` does)."""
        at = 0
        seconds = np.array(part.seconds, dtype=np.float64)
        for rnames, gnames, codes_b, rates_b, gauges_b in part.groups:
            codes = np.frombuffer(codes_b, dtype=np.int64)
            n = len(codes)
            rates = np.frombuffer(rates_b, dtype=np.float64).reshape(n, len(rnames))
            gauges = np.frombuffer(gauges_b, dtype=np.float64).reshape(n, len(gnames))
            rows = np.arange(at, at + n)
            at += n
            again = self.layout[codes] >= 0
            if again.any():  # an end some earlier part reached: merge it end by end, as the readings would have
                for k in np.flatnonzero(again):
                    self._merge_one(int(codes[k]), rnames, gnames, rates[k], gauges[k], part, int(rows[k]))
                keep = ~again
                codes, rates, gauges, rows = codes[keep], rates[keep], gauges[keep], rows[keep]
            self.layout[codes] = self._layout_id((rnames, gnames))
            for j, name in enumerate(rnames):
                self._column(self.rates, name)[codes] = rates[:, j]
            for j, name in enumerate(gnames):
                self._column(self.gauges, name)[codes] = gauges[:, j]
            secs = seconds[rows]
            rated = secs != NOT_RATED
            self.rated[codes[rated]] = True
            self.seconds[codes[rated]] = secs[rated]
            # one C-level pass per group: the per-end words, and only the ends that have some
            keys, at_rows = codes.tolist(), rows.tolist()
            self.ports.update(zip(keys, map(part.ports.__getitem__, at_rows), strict=True))
            self.states.update(filter(_itemgetter1, zip(keys, map(part.states.__getitem__, at_rows), strict=True)))
            self.why.update(filter(_itemgetter1, zip(keys, map(part.why.__getitem__, at_rows), strict=True)))

    def _merge_one(
        self,
        code: int,
        rnames: tuple[str, ...],
        gnames: tuple[str, ...],
        rates: np.ndarray,
        gauges: np.ndarray,
        part: EndPart,
        row: int,
    ) -> None:
        old = self[code]
        assert old is not None
        new = PortRates(
            part.ports[row],
            {n: _value(v) for n, v in zip(rnames, rates.tolist(), strict=True)},
            part.why[row],
            {n: _value(v) for n, v in zip(gnames, gauges.tolist(), strict=True)},
            part.states[row],
        )
        pr = merge_port_rates(old, new)
        self.layout[code] = self._layout_id((tuple(pr.rates), tuple(pr.gauges)))
        for name, v in pr.rates.items():
            self._column(self.rates, name)[code] = math.nan if v is None else v
        for name, g in pr.gauges.items():
            self._column(self.gauges, name)[code] = math.nan if g is None else g
        self.ports[code] = pr.port
        self.states[code] = pr.state
        self.why[code] = pr.why
        secs = part.seconds[row]
        if secs != NOT_RATED:
            self.rated[code] = True
            self.seconds[code] = secs

    def _layout_id(self, layout: Layout) -> int:
        lid = self._layout_ids.get(layout)
        if lid is None:
            lid = self._layout_ids[layout] = len(self.layouts)
            self.layouts.append(layout)
        return lid

    def _column(self, columns: dict[str, np.ndarray], name: str) -> np.ndarray:
        col = columns.get(name)
        if col is None:
            col = columns[name] = np.full(self.size, math.nan)
        return col

    def rate(self, name: str) -> np.ndarray:
        """The rates of ``name`` over every end (NaN where none); an array of NaN for a name no end has."""
        col = self.rates.get(name)
        return col if col is not None else np.full(self.size, math.nan)

    def gauge(self, name: str) -> np.ndarray:
        """The gauge ``name`` over every end (NaN where none)."""
        col = self.gauges.get(name)
        return col if col is not None else np.full(self.size, math.nan)

    @property
    def sampled(self) -> np.ndarray:
        """Per end, whether a sample reached it."""
        return self.layout >= 0

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, code: int) -> PortRates | None: ...

    @overload
    def __getitem__(self, code: slice) -> Sequence[PortRates | None]: ...

    def __getitem__(self, code: int | slice) -> PortRates | Sequence[PortRates | None] | None:
        if isinstance(code, slice):
            return [self.end(c) for c in range(*code.indices(self.size))]
        return self.end(code)

    def __iter__(self) -> Iterator[PortRates | None]:
        return (self.end(c) for c in range(self.size))

    def end(self, code: int) -> PortRates | None:
        """End ``code`` as :class:`PortRates` (None: not sampled); IndexError outside the table."""
        if not -self.size <= code < self.size:
            raise IndexError(f"end code {code} outside 0..{self.size - 1}")
        code %= self.size
        lid = int(self.layout[code])
        if lid < 0:
            return None
        rnames, gnames = self.layouts[lid]
        rates = {n: _value(self.rates[n][code]) for n in rnames}
        gauges = {n: _value(self.gauges[n][code]) for n in gnames}
        return PortRates(self.ports[code], rates, self.why.get(code, {}), gauges, self.states.get(code, {}))

    def interval_seconds(self, code: int) -> tuple[bool, float | None]:
        """(whether an interval reached end ``code``, its seconds or None)."""
        if not self.rated[code]:
            return False, None
        return True, _value(self.seconds[code])


_itemgetter1 = itemgetter(1)


def _value(v: Any) -> float | None:
    x = float(v)
    return None if math.isnan(x) else x


__all__ = ["EndTable"]
