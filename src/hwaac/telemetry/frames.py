"""A reading as columns: :class:`Frame`, what a reader's frame function gives for an output in its usual, plain form
(every port the same counter names, every value a count below 2**64, nothing unread), in place of a
:class:`~hwaac.telemetry.model.Snapshot` of one object per port. Each frame reader sits beside its format's parser
and returns None for any other output, which the parser then reads with its reasons. Why: ``docs/network-health.md``
"Scale".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwaac.telemetry.model import PortSample, Snapshot

MAX_COUNT = 2**64 - 1  # the largest count a frame holds (uint64)
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
        return (self.tool == other.tool and self.device == other.device and self.taken_at == other.taken_at
                and self.version == other.version and self.ports == other.ports and self.names == other.names
                and self.values.dtype == other.values.dtype and self.values.shape == other.values.shape
                and bool(np.array_equal(self.values, other.values)) and self.state == other.state)

    __hash__ = None  # type: ignore[assignment]


def frame_to_snapshot(frame: Frame) -> Snapshot:
    """The :class:`~hwaac.telemetry.model.Snapshot` ``frame`` stands for: counters as ints in ``names`` order, the
    state words, no gauges and nothing unread."""
    snap = Snapshot(frame.tool, frame.device, frame.taken_at, frame.version)
    states = frame.state if frame.state is not None else [{}] * len(frame.ports)
    for port, row, state in zip(frame.ports, frame.values.tolist(), states, strict=True):
        snap.ports[port] = PortSample(port, dict(zip(frame.names, row, strict=True)), {}, dict(state))
    return snap


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
        row = list(sample.counters.values())
        if any(type(v) is not int or not 0 <= v <= MAX_COUNT for v in row):
            return None
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


__all__ = ["MAX_COUNT", "Frame", "counts", "frame_of", "frame_to_snapshot"]
