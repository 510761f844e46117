"""The planned link ends of a fabric as columns: per counter (and per gauge) one float64 array over the end codes,
with each end's names in order, the reasons of its None rates, the state words the judgement reads and its port
name beside them.

A part is correlated where its readings were rated (:func:`correlate_part`, on a reader process for a large
fabric); the parts are put together in an :class:`~hwaac.telemetry.end_table.EndTable`, so the ends of a large
fabric are never one Python object each. Why: ``docs/network-health-scale.md``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import reduce
from itertools import repeat
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from hwaac.telemetry.framed import RatedFrame
from hwaac.telemetry.frames import Frame
from hwaac.telemetry.model import Snapshot, all_known, distinct, judged_word
from hwaac.telemetry.rates import Discontinuity, Interval, PortRates

if TYPE_CHECKING:
    from hwaac.telemetry.topology import LinkIndex

Layout = tuple[tuple[str, ...], tuple[str, ...]]  # an end's rate names, then its gauge names, in their order
Group = tuple[tuple[str, ...], tuple[str, ...], bytes, bytes, bytes]  # EndPart.groups: a layout and its ends
Reading = Interval | Snapshot | RatedFrame | Frame  # what is correlated: rated, or read for state and gauges
NOT_RATED = -1.0  # EndPart.seconds of an end no interval reached (a state-only snapshot)


@dataclass(slots=True)
class EndPart:
    """The ends some readings reached, correlated (several readings of one end merged, later ones winning per
    counter, gauge or state word), ready to ship as :mod:`marshal` data.

    Attributes:
        groups: per layout, ``(rate names, gauge names, codes, rates, gauges)``: the end codes as int64 bytes, the
            rows of their rates and gauges as float64 bytes (NaN for None).
        ports / states / why / seconds: per end, in the order of the groups' codes: the port as printed, the state
            words, the reasons of its None rates, and the seconds of its last interval (NaN: an interval without
            seconds; :data:`NOT_RATED`: none).
        sampled: the devices of the readings.
        unplanned: (device, port, tool) of ports the plan has no end for.
        discontinuities / errors: of the readings, errors as ``device (tool): reason``.
    """

    groups: list[Group] = field(default_factory=list)
    ports: list[str] = field(default_factory=list)
    states: list[dict[str, str]] = field(default_factory=list)
    why: list[dict[str, str]] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    sampled: list[str] = field(default_factory=list)
    unplanned: list[tuple[str, str, str]] = field(default_factory=list)
    discontinuities: list[Discontinuity] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def plain(self) -> tuple[Any, ...]:
        """As tuples, lists, dicts and bytes (for :mod:`marshal`)."""
        return (
            self.groups,
            self.ports,
            self.states,
            self.why,
            self.seconds,
            self.sampled,
            self.unplanned,
            [d.plain() for d in self.discontinuities],
            self.errors,
        )

    def facts(self) -> EndPart:
        """This part without its ends (once they are in an :class:`EndTable`): what else the correlation reads."""
        return EndPart(
            sampled=self.sampled, unplanned=self.unplanned, discontinuities=self.discontinuities, errors=self.errors
        )

    @classmethod
    def from_plain(cls, flat: tuple[Any, ...]) -> EndPart:
        groups, ports, states, why, seconds, sampled, unplanned, disc, errors = flat
        return cls(
            [tuple(g) for g in groups],
            ports,
            states,
            why,
            seconds,
            sampled,
            [tuple(u) for u in unplanned],
            [Discontinuity(*d) for d in disc],
            errors,
        )


def correlate_part(index: LinkIndex, readings: Iterable[Reading]) -> EndPart:
    """Attach every port of ``readings`` (rated intervals and frames, or snapshots and frames read for state and
    gauges only)
    to its planned link end, merging several readings of one end (later ones win per counter, gauge or state word).

    An end whose counters all come from rows of rated frames (a switch port's counters, then ``show interfaces
    status``; a NIC port's ``ethtool -S`` and sysfs counters) is not built as an object: the rows of all such ends
    with the same frames' names are merged in numpy, one column at a time."""
    out = EndPart()
    frames: list[RatedFrame] = []
    rows_of: dict[int, list[tuple[int, int]]] = {}  # end -> its (frame, row)s so far, when it has no other counters
    overlay: dict[int, PortRates] = {}  # such an end's later state and gauges
    merged: dict[int, PortRates] = {}  # every other end
    seconds: dict[int, float] = {}
    sampled: dict[str, None] = {}
    blocks: list[tuple[int, list[int]]] = []  # frames whose every row began an end, with the rows' end codes
    find = index.find

    def take(code: int) -> PortRates:
        """End ``code``'s readings so far, as one PortRates (it leaves the frame-row ends)."""
        pr = reduce(merge_port_rates, (frames[f].port_rates(row) for f, row in rows_of.pop(code)))
        extra = overlay.pop(code, None)
        return pr if extra is None else merge_port_rates(pr, extra)

    for r in readings:
        device = r.device
        sampled[device] = None
        tool = r.tool
        if isinstance(r, RatedFrame):
            f = len(frames)
            frames.append(r)
            codes = index.codes(device, r.rows)
            if all_known(codes) and (fresh := _fresh_rows(f, codes, rows_of, merged, overlay)):
                # the usual: ends of frame rows only, in one pass
                seconds.update(zip(codes, repeat(r.seconds)))
                if fresh == _BEGAN:
                    blocks.append((f, codes))
                continue
            for row, port in enumerate(r.rows):
                code = codes[row]
                if code is None:
                    out.unplanned.append((device, port, tool))
                    continue
                if code in merged:
                    merged[code] = merge_port_rates(merged[code], r.port_rates(row))
                elif code in overlay:  # state or gauges before these counters: merged in reading order
                    merged[code] = merge_port_rates(take(code), r.port_rates(row))
                else:
                    rows_of.setdefault(code, []).append((f, row))
                seconds[code] = r.seconds
            continue
        if isinstance(r, Interval):
            out.discontinuities.extend(r.discontinuities)
            out.errors.extend(f"{device} ({tool}): {e}" for e in (*r.errors, *r.unknown))
            ports: Iterable[PortRates] = r.ports.values()
            secs = math.nan if r.seconds is None else r.seconds
        elif isinstance(r, Frame):  # a reading of one sweep: its state words (a frame has no gauge)
            states = _judged_rows(r.state) or [{}] * len(r.ports)
            codes = index.codes(device, r.ports)
            ends = set(codes)
            if (
                all_known(codes)
                and len(ends) == len(codes)
                and rows_of.keys() >= ends
                and overlay.keys().isdisjoint(ends)
            ):
                # the usual: the state of ends made of frame rows so far, kept beside them (one pass)
                overlay.update(
                    zip(
                        codes, map(PortRates, r.ports, iter(dict, 0), iter(dict, 0), iter(dict, 0), states), strict=True
                    )
                )
                continue
            ports = [PortRates(port, {}, {}, {}, st) for port, st in zip(r.ports, states, strict=True)]
            secs = None
        else:
            out.errors.extend(f"{device} ({tool}): {e}" for e in r.unknown)
            ports = [PortRates(s.port, {}, {}, s.gauges, s.state) for s in r.ports.values()]
            secs = None
        for pr in ports:
            code = find(device, pr.port)
            if code is None:
                out.unplanned.append((device, pr.port, tool))
                continue
            if code in rows_of:
                if pr.rates or pr.why:
                    merged[code] = merge_port_rates(take(code), pr)
                else:  # state and gauges only: the rows stay as they are
                    pr = PortRates(pr.port, pr.rates, pr.why, pr.gauges, _judged(pr.state))
                    extra = overlay.get(code)
                    overlay[code] = pr if extra is None else merge_port_rates(extra, pr)
            elif code in merged:
                merged[code] = merge_port_rates(merged[code], pr)
            else:
                merged[code] = pr
            if secs is not None:
                seconds[code] = secs
    out.sampled = list(sampled)
    _frame_rows(out, frames, rows_of, overlay, seconds, blocks)
    groups: dict[Layout, list[int]] = {}
    for code, pr in merged.items():
        groups.setdefault((tuple(pr.rates), tuple(pr.gauges)), []).append(code)
    for (rnames, gnames), group in groups.items():
        parts = [merged[c] for c in group]
        rates = np.array([list(e.rates.values()) for e in parts], dtype=np.float64).reshape(len(parts), len(rnames))
        gauges = np.array([list(e.gauges.values()) for e in parts], dtype=np.float64).reshape(len(parts), len(gnames))
        out.groups.append(
            (rnames, gnames, np.array(group, dtype=np.int64).tobytes(), rates.tobytes(), gauges.tobytes())
        )
        out.ports.extend(e.port for e in parts)
        out.states.extend(_judged(e.state) for e in parts)
        out.why.extend(e.why for e in parts)
        out.seconds.extend(seconds.get(c, NOT_RATED) for c in group)
    _join_layouts(out)
    return out


_BEGAN, _ADDED = 2, 1  # _fresh_rows: every row began an end; every row added to ends of frame rows


def _fresh_rows(
    f: int,
    codes: list[int],
    rows_of: dict[int, list[tuple[int, int]]],
    merged: dict[int, PortRates],
    overlay: dict[int, PortRates],
) -> int:
    """Add the rows of frame ``f`` (their planned end ``codes``) to ``rows_of`` in one pass when every row has an
    end of its own that has only frame rows so far: :data:`_BEGAN` when each row began its end, else
    :data:`_ADDED`; 0, and nothing added, otherwise (the caller then goes row by row)."""
    ends = set(codes)
    if len(ends) != len(codes) or not merged.keys().isdisjoint(ends) or not overlay.keys().isdisjoint(ends):
        return 0
    at = zip(repeat(f), range(len(codes)), strict=False)  # repeat: endless
    if rows_of.keys().isdisjoint(ends):
        rows_of.update(zip(codes, map(list, zip(at)), strict=True))
        return _BEGAN
    if rows_of.keys() >= ends:
        deque(map(list.append, map(rows_of.__getitem__, codes), at), maxlen=0)
    else:
        for code, row in zip(codes, at, strict=True):
            rows_of.setdefault(code, []).append(row)
    return _ADDED


def _join_layouts(part: EndPart) -> None:
    """The groups of one layout joined into one (a chunk's switches each gave one), with the ends' words in the
    same order: fewer, larger scatters when the parts are assembled."""
    by: dict[Layout, list[int]] = {}
    for k, (rnames, gnames, *_) in enumerate(part.groups):
        by.setdefault((rnames, gnames), []).append(k)
    if len(by) == len(part.groups):
        return
    starts = [0]
    for g in part.groups:
        starts.append(starts[-1] + len(g[2]) // 8)  # int64 codes
    groups: list[Group] = []
    ports: list[str] = []
    states: list[dict[str, str]] = []
    why: list[dict[str, str]] = []
    seconds: list[float] = []
    for (rnames, gnames), ks in by.items():
        joined = [part.groups[k] for k in ks]
        groups.append(
            (
                rnames,
                gnames,
                b"".join(g[2] for g in joined),
                b"".join(g[3] for g in joined),
                b"".join(g[4] for g in joined),
            )
        )
        for k in ks:
            at = slice(starts[k], starts[k + 1])
            ports += part.ports[at]
            states += part.states[at]
            why += part.why[at]
            seconds += part.seconds[at]
    part.groups, part.ports, part.states, part.why, part.seconds = groups, ports, states, why, seconds


def _frame_rows(
    out: EndPart,
    frames: list[RatedFrame],
    rows_of: dict[int, list[tuple[int, int]]],
    overlay: dict[int, PortRates],
    seconds: dict[int, float],
    blocks: Sequence[tuple[int, list[int]]] = (),
) -> None:
    """The ends made of frame rows (and state or gauges, their words judged), into ``out``'s groups: a frame
    whose rows are each still a whole end (``blocks``: a switch's counters, perhaps with its intf-status state)
    taken as it is, an end of one row gathered from its frame, an end of several rows merged by name with the
    others of the same frames' names."""
    frame_states = [_judged_rows(fr.state) for fr in frames]
    for f, codes in blocks:
        extras = list(map(overlay.get, codes))
        lengths = list(map(len, map(rows_of.get, codes, repeat(()))))
        if lengths.count(1) != len(codes) or any(e is not None and e.gauges for e in extras):
            continue  # a row merged with another reading since: the ends below
        fr, n = frames[f], len(codes)
        out.groups.append((fr.names, (), np.array(codes, dtype=np.int64).tobytes(), fr.rates.tobytes(), b""))
        out.ports.extend(fr.rows)
        st = frame_states[f]
        if st is None and None not in extras:
            out.states.extend(map(_STATE, extras))
        else:
            firsts = st if st is not None else repeat({})
            out.states.extend(
                _over(first, e.state) if e is not None else first for first, e in zip(firsts, extras, strict=False)
            )
        out.why.extend([{}] * n)  # no None rate: one empty dict, read only
        out.seconds.extend([fr.seconds] * n)
        deque(map(rows_of.pop, codes), maxlen=0)
    name_ids: dict[tuple[str, ...], int] = {}
    frame_names = [name_ids.setdefault(fr.names, len(name_ids)) for fr in frames]
    # (a frame, or the names' ids of several frames; the gauge names) -> the ends
    groups: dict[tuple[int | tuple[int, ...], tuple[str, ...]], list[int]] = {}
    for code, rows in rows_of.items():
        extra = overlay.get(code)
        gnames = tuple(extra.gauges) if extra is not None else ()
        key = (rows[0][0], gnames) if len(rows) == 1 else (tuple(frame_names[f] for f, _ in rows), gnames)
        groups.setdefault(key, []).append(code)
    for (kind, gnames), codes in groups.items():
        parts = [rows_of[c] for c in codes]
        if isinstance(kind, int):  # one frame's rows: one gather
            fr = frames[kind]
            at = [p[0][1] for p in parts]
            rnames, rates = fr.names, np.ascontiguousarray(fr.rates[at])
        else:  # the same frames' names in the same order: each name from the last frame that has it
            by_name: dict[str, tuple[int, int]] = {}
            for i, f in enumerate(p[0] for p in parts[0]):
                for j, name in enumerate(frames[f].names):
                    by_name[name] = (i, j)
            gathered = [_gather(frames, [p[i] for p in parts]) for i in range(len(parts[0]))]
            rnames = tuple(by_name)
            rates = np.empty((len(codes), len(rnames)))
            for col, (i, j) in enumerate(by_name.values()):
                rates[:, col] = gathered[i][:, j]
        extras = list(map(overlay.get, codes))
        n = len(codes)
        # every extra of a group with gauges has those gauges (they are in the group's key)
        gauges = (
            np.array([list(e.gauges.values()) for e in extras if e is not None], dtype=np.float64)
            if gnames
            else np.empty((n, 0))
        )
        out.groups.append(
            (
                rnames,
                gnames,
                np.array(codes, dtype=np.int64).tobytes(),
                rates.tobytes(),
                gauges.reshape(n, len(gnames)).tobytes(),
            )
        )
        if isinstance(kind, int):  # one row an end: its frame's words, then its state's
            fr = frames[kind]
            out.ports.extend(map(fr.rows.__getitem__, at))
            st = frame_states[kind]
            firsts = map(st.__getitem__, at) if st is not None else repeat({})
            out.states.extend(
                _over(first, e.state) if e is not None else first for first, e in zip(firsts, extras, strict=False)
            )
        else:
            for rows, e in zip(parts, extras, strict=True):
                f0, r0 = rows[0]
                out.ports.append(frames[f0].rows[r0])
                state: dict[str, str] = {}
                for f, row in rows:
                    st = frame_states[f]
                    state = _over(state, st[row] if st is not None else {})
                out.states.append(_over(state, e.state) if e is not None else state)
        out.why.extend([{}] * n)  # no None rate: one empty dict, read only
        out.seconds.extend(map(seconds.__getitem__, codes))


def _judged(state: dict[str, str]) -> dict[str, str]:
    """The words of ``state`` an end keeps (:func:`~hwaac.telemetry.model.judged_word`): ``state`` itself when it
    holds no other."""
    if all(map(judged_word, state)):
        return state
    return {k: w for k, w in state.items() if judged_word(k)}


def _judged_rows(states: list[dict[str, str]] | None) -> list[dict[str, str]] | None:
    """:func:`_judged` of each row's words, checked once per distinct dict (rows of a frame may share one)."""
    if states is None:
        return None
    if all(all(map(judged_word, st)) for st in distinct(states)):
        return states
    return list(map(_judged, states))


def _gather(frames: list[RatedFrame], rows: list[tuple[int, int]]) -> np.ndarray:
    """The rates of ``rows`` ((frame, row) each), one fancy index per run of rows of one frame."""
    out, start = [], 0
    for k in range(1, len(rows) + 1):
        if k == len(rows) or rows[k][0] != rows[start][0]:
            out.append(frames[rows[start][0]].rates[[r for _, r in rows[start:k]]])
            start = k
    return np.concatenate(out)


def merge_port_rates(old: PortRates, new: PortRates) -> PortRates:
    """``old`` with ``new``'s values over it (a side with nothing to add keeps the other's dict)."""
    return PortRates(
        old.port,
        _over(old.rates, new.rates),
        _over(old.why, new.why),
        _over(old.gauges, new.gauges),
        _over(old.state, new.state),
    )


def _over[K, V](a: dict[K, V], b: dict[K, V]) -> dict[K, V]:
    return a | b if a and b else a if a else b


_STATE = attrgetter("state")


__all__ = ["NOT_RATED", "EndPart", "Layout", "Reading", "correlate_part", "merge_port_rates"]
