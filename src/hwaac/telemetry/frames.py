"""A reading as columns: :class:`Frame`, what a reader's frame function gives for an output in its usual, plain form
(every port the same counter names, every value a count below 2**64, nothing unread), in place of a
:class:`~hwaac.telemetry.model.Snapshot` of one object per port. Each frame reader sits beside its format's parser
and returns None for any other output, which the parser then reads with its reasons. Why: ``docs/network-health.md``
"Scale".
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np

from hwaac.telemetry.model import PortSample, Snapshot

MAX_COUNT = 2**64 - 1  # the largest count a frame holds (uint64)
PROBE_BASE = 1 << 40  # a probe's value i: PROBE_BASE + i, above every saturation limit a parser knows
_DIGITS = b"0123456789"


@dataclass(slots=True, eq=False)
class Frame:
    """One reading of one tool on one device as columns.

    Attributes:
        tool / device / taken_at / version: as the parser's :class:`~hwaac.telemetry.model.Snapshot` has them.
        ports: the ports in the parser's order.
        names: the canonical counter names, the same for every port, in the parser's dict order.
        values: uint64, one row per port and one column per name; every value readable (a frame never holds None).
        state: per port, the parser's state words; None where the parser gives no port any.
    """

    tool: str
    device: str
    taken_at: float | None
    version: str
    ports: list[str]
    names: tuple[str, ...]
    values: np.ndarray
    state: list[dict[str, str]] | None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Frame):
            return NotImplemented
        return (
            self.tool == other.tool
            and self.device == other.device
            and self.taken_at == other.taken_at
            and self.version == other.version
            and self.ports == other.ports
            and self.names == other.names
            and self.values.dtype == other.values.dtype
            and self.values.shape == other.values.shape
            and bool(np.array_equal(self.values, other.values))
            and self.state == other.state
        )

    __hash__ = None  # type: ignore[assignment]  # unhashable (data model); typeshed allows only a method


def frame_to_snapshot(frame: Frame) -> Snapshot:
    """The :class:`~hwaac.telemetry.model.Snapshot` ``frame`` stands for: counters as ints in ``names`` order, the
    state words, no gauges and nothing unread."""
    snap = Snapshot(frame.tool, frame.device, frame.taken_at, frame.version)
    states = frame.state if frame.state is not None else [{}] * len(frame.ports)
    for port, row, state in zip(frame.ports, frame.values.tolist(), states, strict=True):
        snap.ports[port] = PortSample(port, dict(zip(frame.names, row, strict=True)), {}, dict(state))
    return snap


def split_ports(frame: Frame) -> list[Frame]:
    """``frame`` as one frame per port, in its order (each row's values a view, its state words its own)."""
    return [
        Frame(
            frame.tool,
            frame.device,
            frame.taken_at,
            frame.version,
            [port],
            frame.names,
            frame.values[i : i + 1],
            None if frame.state is None else [frame.state[i]],
        )
        for i, port in enumerate(frame.ports)
    ]


def frame_of(snap: Snapshot) -> Frame | None:
    """The frame a plain snapshot is: None when ``snap`` has anything unread, a gauge, a counter that is None (or
    not an int from 0 to 2**64 - 1), or ports with different counter names (or in another order)."""
    if snap.unknown:
        return None
    samples = list(snap.ports.values())
    names = tuple(samples[0].counters) if samples else ()
    rows: list[list[int]] = []
    for sample in samples:
        if sample.gauges or tuple(sample.counters) != names:
            return None
        row: list[int] = []
        for v in sample.counters.values():
            if type(v) is not int or not 0 <= v <= MAX_COUNT:
                return None
            row.append(v)
        rows.append(row)
    values = np.array(rows, dtype=np.uint64).reshape(len(rows), len(names))
    state = [dict(s.state) for s in samples] if any(s.state for s in samples) else None
    return Frame(snap.tool, snap.device, snap.taken_at, snap.version, list(snap.ports), names, values, state)


def counts(joined: str | bytes, n: int) -> np.ndarray | None:
    """``n`` counts written as ASCII digits and joined by commas, as uint64; None when one is empty, holds anything
    but digits, or is 2**64 or more (the count a parser reads as an int, and a frame cannot hold)."""
    raw = joined.encode() if isinstance(joined, str) else joined
    if not n:
        return np.zeros(0, dtype=np.uint64) if not raw else None
    if raw.translate(None, _DIGITS) != b"," * (n - 1):
        return None  # not only digits, or a comma inside a count (the count "1,2" beside an empty one)
    try:
        values = np.fromstring(raw, dtype=np.uint64, sep=",")  # strtoull: saturates at 2**64 - 1
    except ValueError:  # an empty count inside
        return None
    if values.size != n:
        return None
    if values.max() == MAX_COUNT and any(int(t) > MAX_COUNT for t in raw.split(b",")):
        return None
    return values


@dataclass(frozen=True, slots=True)
class Layout:
    """Where a parser takes each port's counters in an output of one shape (its names, paths and order), learnt
    once from the parser's snapshot of a probe: the same output with value i replaced by ``PROBE_BASE + i``.

    Attributes:
        ports / names: the snapshot's ports and counter names (the same for every port).
        take: the value each (port, name) is read from, row by row (flat).
        scale: per (port, name), the factor the parser multiplies the value by; None where every factor is 1.
        whole: every value is taken, in output order, none scaled.
        index: ``take`` as an index array.
        limited / limits: the (flat) counters whose value the parser reads as unknown at one value (a saturated
            counter), and that value; None when none is.
    """

    ports: tuple[str, ...]
    names: tuple[str, ...]
    take: tuple[int, ...]
    scale: np.ndarray | None = None
    whole: bool = False
    index: np.ndarray | None = None
    limited: np.ndarray | None = None
    limits: np.ndarray | None = None

    @classmethod
    def learn(cls, probe: Snapshot, n: int, limit: Callable[[int], int] | None = None) -> Layout | None:
        """The layout ``probe`` (the parser's snapshot of the probe of an output of ``n`` values) shows; None when it
        is not plain or a counter is not one value times a whole factor. ``limit(i)``: the value of value i that
        the parser reads as unknown (0: none)."""
        frame = frame_of(probe)
        if frame is None:
            return None
        take: list[int] = []
        scale: list[int] = []
        for v in frame.values.ravel().tolist():
            factor = v // PROBE_BASE
            index = v // factor - PROBE_BASE if factor else -1
            if not 0 <= index < n or v != factor * (PROBE_BASE + index):
                return None
            take.append(index)
            scale.append(factor)
        factors = None if set(scale) <= {1} else np.array(scale, dtype=np.uint64).reshape(frame.values.shape)
        limits = [(k, at) for k, i in enumerate(take) if (at := limit(i) if limit else 0)]
        return cls(
            tuple(frame.ports),
            frame.names,
            tuple(take),
            factors,
            factors is None and take == list(range(n)),
            np.array(take, dtype=np.intp),
            np.array([k for k, _ in limits], dtype=np.intp) if limits else None,
            np.array([at for _, at in limits], dtype=np.uint64) if limits else None,
        )

    def _scaled(self, values: np.ndarray) -> np.ndarray | None:
        """``values`` (ports x names) times their factors; None when one is at its limit or does not fit."""
        if self.limited is not None and (values.ravel()[self.limited] == self.limits).any():
            return None
        if self.scale is None:
            return values
        if (values > MAX_COUNT // self.scale).any():
            return None
        return values * self.scale

    def values(self, texts: Sequence[str]) -> np.ndarray | None:
        """The counts of an output of this shape whose values are ``texts`` (in output order), as the parser reads
        them; None when one it reads is not ASCII digits or does not fit in uint64."""
        shape = (len(self.ports), len(self.names))
        take = self.take
        if not take:
            return np.zeros(shape, dtype=np.uint64)
        picked: Any = texts if self.whole else itemgetter(*take)(texts) if len(take) > 1 else (texts[take[0]],)
        values = counts(",".join(picked), len(take))
        return None if values is None else self._scaled(values.reshape(shape))


class Layouts:
    """The layouts of a reader's outputs, each learnt once per shape (``key``: its names or paths); at most
    ``size`` are kept, so that odd inputs cannot grow it."""

    __slots__ = ("_known", "_size")

    def __init__(self, size: int = 256) -> None:
        self._known: dict[Hashable, Layout | None] = {}
        self._size = size

    def get(self, key: Hashable, learn: Callable[[], Layout | None]) -> Layout | None:
        """The layout of outputs of shape ``key``: ``learn()``'s the first time (None: not plain)."""
        layout = self._known.get(key, _UNSEEN)
        if layout is _UNSEEN:
            layout = learn()
            if len(self._known) < self._size:
                self._known[key] = layout
        return layout


_UNSEEN = Layout((), (), ())  # Layouts.get: a shape not learnt yet


__all__ = [
    "MAX_COUNT",
    "PROBE_BASE",
    "Frame",
    "Layout",
    "Layouts",
    "counts",
    "frame_of",
    "frame_to_snapshot",
    "split_ports",
]
