"""Sweeps rated: every (device, tool) over its latest two sweeps (:func:`rate`), and samples folders read and rated
device by device (:func:`read_rated`), so that a large fabric's snapshots of every sweep are never all held at
once: each device's outputs are read, rated and dropped on the reader processes, and only its rated readings come
back. The two give the same :class:`Rated`. Why: ``docs/network-health-scale.md``.
"""

from __future__ import annotations

import marshal
import pickle
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hwaac.probe.model import ProbeResults
from hwaac.telemetry import parallel
from hwaac.telemetry.end_table import EndTable
from hwaac.telemetry.ends import EndPart, Reading, correlate_part
from hwaac.telemetry.framed import RatedFrame, rate_frames
from hwaac.telemetry.frames import Frame, frame_to_snapshot, split_ports
from hwaac.telemetry.model import Snapshot
from hwaac.telemetry.parsers.frr_routes import RouteTable
from hwaac.telemetry.rates import Interval, interval
from hwaac.telemetry.samples import (
    ETHTOOL_AT,
    ETHTOOL_STACK,
    LATEST_ONLY,
    Sweep,
    from_plain,
    open_folders,
    plain,
    read_devices,
    sweep_time,
)
from hwaac.telemetry.topology import LinkIndex

SERIAL_CHUNK = 256  # devices read and rated at a time on the serial path


@dataclass(slots=True)
class Rated:
    """What the assessment reads of sweeps.

    Attributes:
        sweeps: each sweep's folder (or name) and time, oldest first.
        readings: per (device, tool), in that order: the interval over its latest two sweeps, or its only snapshot
            (state and gauges).
        seconds: the intervals' lengths.
        bgp: per device, the interval of its latest two BGP summaries.
        routes: per device, its latest route table.
        skipped: per sweep, the outputs not read, with why.
        probes: per sweep, by host, its active probes' results (each sweep's are a complete measurement).
        parts: the readings already correlated to the plan's link ends, in reading order (``readings`` is then
            empty): what :func:`read_rated` gives with an ``index``.
        table: with ``parts``, their ends assembled as they came in (the parts then hold only their facts).
    """

    sweeps: list[tuple[str, float | None]]
    readings: list[Reading] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    bgp: dict[str, Interval | RatedFrame] = field(default_factory=dict)
    routes: dict[str, RouteTable] = field(default_factory=dict)
    skipped: list[list[str]] = field(default_factory=list)
    probes: list[dict[str, ProbeResults]] = field(default_factory=list)
    parts: list[EndPart] | None = None
    table: EndTable | None = None


Held = tuple[Snapshot | Frame, float]  # a reading of one sweep, with its time


def _last_two(found: list[Held]) -> tuple[Held | None, Held | None]:
    """(the earlier, the latest) of ``found`` (oldest first)."""
    if not found:
        return None, None
    return (found[-2] if len(found) > 1 else None), found[-1]


def _latest_two(sweeps: Sequence[Sweep], key: tuple[str, str]) -> tuple[Held | None, Held | None]:
    """(the earlier, the latest) reading of ``key`` among the sweeps that hold it (as a snapshot or a frame)."""
    return _last_two([x for s in sweeps if (x := s.snapshots.get(key) or s.frames.get(key)) is not None])


def _latest_bgp(sweeps: Sequence[Sweep], device: str) -> tuple[Held | None, Held | None]:
    """(the earlier, the latest) BGP summary of ``device`` among the sweeps that hold one."""
    return _last_two([x for s in sweeps if (x := s.bgp.get(device)) is not None])


def _snap(reading: Snapshot | Frame) -> Snapshot:
    return frame_to_snapshot(reading) if isinstance(reading, Frame) else reading


def rate(sweeps: Sequence[Sweep]) -> Rated:
    """Rate every (device, tool) of ``sweeps`` (oldest first) over the latest two sweeps that hold it; a tool that
    gives no counter (:data:`~hwaac.telemetry.samples.LATEST_ONLY`) is its latest snapshot."""
    out = Rated(
        [(str(s.path), sweep_time(s)) for s in sweeps],
        skipped=[list(s.skipped) for s in sweeps],
        probes=[dict(s.probes) for s in sweeps],
    )
    pairs = [(key, *_latest_two(sweeps, key)) for key in sorted({k for s in sweeps for k in (*s.snapshots, *s.frames)})]
    i = 0
    while i < len(pairs):
        key, before, after = pairs[i]
        i += 1
        assert after is not None
        if before is None or key[1] in LATEST_ONLY:
            out.readings.append(after[0])  # state and gauges only: a snapshot, or a frame of state words
            continue
        run = _port_run(pairs, i - 1)
        times = (before[1], after[1])
        if run > 1 and (stacked := _rate_stacked(pairs[i - 1 : i - 1 + run], times)) is not None:
            out.readings.append(stacked)  # a device's ports of one per-port tool, rated as one frame
            out.seconds.append(stacked.seconds)
            i += run - 1
            continue
        b, a = before[0], after[0]
        if isinstance(b, Frame) and isinstance(a, Frame):
            fast = rate_frames(b, a, times=times)
            if fast is not None:  # the usual output: rated in one pass
                out.readings.append(fast)
                out.seconds.append(fast.seconds)
                continue
        iv = interval(_snap(b), _snap(a), times=times)
        out.readings.append(iv)
        if iv.seconds:
            out.seconds.append(iv.seconds)
    for device in sorted({d for s in sweeps for d in s.bgp}):
        before, after = _latest_bgp(sweeps, device)
        if before is not None and after is not None:
            b, a = before[0], after[0]
            fast = (
                rate_frames(b, a, times=(before[1], after[1]))
                if isinstance(b, Frame) and isinstance(a, Frame)
                else None
            )
            out.bgp[device] = fast or interval(_snap(b), _snap(a), times=(before[1], after[1]))
    for s in sweeps:
        out.routes.update(s.routes)
    return out


Pair = tuple[tuple[str, str], Held | None, Held | None]


def _port_run(pairs: Sequence[Pair], i: int) -> int:
    """How many pairs from ``i`` on are one device's per-port outputs of one tool (``ethtool@rail0``...), each two
    frames of the same names and sample times as the first's."""
    (device, stem), before, after = pairs[i]
    tool, at, _ = stem.partition("@")
    if not at or before is None or after is None or not isinstance(before[0], Frame) or not isinstance(after[0], Frame):
        return 1
    names, times = (before[0].names, after[0].names), (before[1], after[1])
    n = 1
    for (d, s), b, a in pairs[i + 1 :]:
        if (
            d != device
            or s.partition("@")[0] != tool
            or b is None
            or a is None
            or not isinstance(b[0], Frame)
            or not isinstance(a[0], Frame)
            or (b[0].names, a[0].names) != names
            or (b[1], a[1]) != times
        ):
            break
        n += 1
    return n


def _rate_stacked(run: Sequence[Pair], times: tuple[float, float]) -> RatedFrame | None:
    """The pairs of :func:`_port_run` rated as one frame of all their ports (in their order), or None when the
    stacked frames are not rated in one pass (then each pair is rated on its own, and says why). ``times``: the
    sample times of the first pair (every pair's, as :func:`_port_run` checked)."""
    earlier = [b[0] for _, b, _ in run if b is not None and isinstance(b[0], Frame)]
    later = [a[0] for _, _, a in run if a is not None and isinstance(a[0], Frame)]
    if len(earlier) != len(run) or len(later) != len(run):
        return None  # not frames: _port_run counts none such
    before, after = _stack(earlier), _stack(later)
    if before is None or after is None:
        return None
    return rate_frames(before, after, times=times)


def _stack(frames: Sequence[Frame]) -> Frame | None:
    """``frames`` (one device's ports of one tool) as one frame of all their ports, in their order; None when they
    differ in time, version, tool or in having state words."""
    first = frames[0]
    if any(
        f.taken_at != first.taken_at
        or f.version != first.version
        or f.tool != first.tool
        or (f.state is None) != (first.state is None)
        for f in frames
    ):
        return None
    state = None if first.state is None else [st for f in frames for st in f.state or ()]
    return Frame(
        first.tool,
        first.device,
        first.taken_at,
        first.version,
        [p for f in frames for p in f.ports],
        first.names,
        np.vstack([f.values for f in frames]),
        state,
    )


def read_rated(folders: Sequence[str | Path], *, workers: int | None = None, index: LinkIndex | None = None) -> Rated:
    """``rate(read_sweeps(folders))``, with the same result, in less memory and on every core for a large fabric:
    the devices (of every folder) are cut into chunks, and each chunk's folders are read and rated (on a reader
    process for a large fabric, which sends back only the rated readings), so only one chunk's snapshots are
    held at a time. With ``index`` (the plan's), each chunk's readings are also correlated to the link ends
    there, and come back as :attr:`Rated.parts` (columns) instead of readings, their ends put in
    :attr:`Rated.table` in chunk order by this process while the others are still read. Raises
    :class:`~hwaac.telemetry.samples.SamplesError` as :func:`~hwaac.telemetry.samples.read_sweeps` does."""
    heads = open_folders(folders)
    devices = sorted({d for _, names in heads for d in names})
    n = parallel.parallel_ok(sum(len(names) for _, names in heads), workers)
    share = ([(str(sweep.path), sweep.time, frozenset(names)) for sweep, names in heads], index)
    # serial too, a chunk at a time: only one chunk's snapshots are ever held
    jobs = (
        parallel.chunks(devices, n)
        if n
        else [devices[i : i + SERIAL_CHUNK] for i in range(0, len(devices), SERIAL_CHUNK)]
    )
    table = EndTable(2 * len(index.links)) if index is not None else None

    def assemble(i: int, chunk: Rated) -> Rated:
        """A chunk's ends into the table, in chunk order, while the other chunks are still read (and, after the
        first, the index's lookups the judgement reads)."""
        if i == 1 and index is not None and n:
            index.build_lookups()
        if table is not None and chunk.parts is not None:
            for part in chunk.parts:
                table.add(part)
            chunk.parts = [part.facts() for part in chunk.parts]
        return chunk

    with parallel.no_collections():
        parts = parallel.run(_rate_chunk, jobs, n, share, remote=_rate_chunk_packed, decode=_unpack, consume=assemble)
    out = Rated(
        [(str(sweep.path), sweep.time) for sweep, _ in heads],
        skipped=[[] for _ in heads],
        probes=[{} for _ in heads],
        parts=[] if index is not None else None,
        table=table,
    )
    for part in parts:
        # a folder without taken_at: its newest sample's time over every chunk (sweep_time of the whole sweep)
        for i, (_, pt) in enumerate(part.sweeps):
            path, t = out.sweeps[i]
            if heads[i][0].time is None and pt is not None:
                out.sweeps[i] = (path, pt if t is None else max(t, pt))
        for mine_p, theirs_p in zip(out.probes, part.probes, strict=True):
            mine_p.update(theirs_p)
        out.readings.extend(part.readings)
        if out.parts is not None and part.parts is not None:
            out.parts.extend(part.parts)
        out.seconds.extend(part.seconds)
        out.bgp.update(part.bgp)
        out.routes.update(part.routes)
        for mine, theirs in zip(out.skipped, part.skipped, strict=True):
            mine.extend(theirs)
    return out


def _rate_chunk(devices: Sequence[str]) -> Rated:
    """Read and rate ``devices`` in every folder that has them (a reader process's job); an output that is never
    rated (:data:`~hwaac.telemetry.samples.LATEST_ONLY`) only from the latest folder that holds it."""
    folders, index = parallel.shared()
    later: set[tuple[str, str]] = set()
    sweeps = [
        read_devices(
            Sweep(Path(folder), time), [d for d in devices if d in names], later=later, frames=index is not None
        )
        for folder, time, names in reversed(folders)
    ]
    _unstack_unpaired(sweeps)
    out = rate(sweeps[::-1])
    if index is not None:
        out.parts, out.readings = [correlate_part(index, out.readings)], []
    return out


def _unstack_unpaired(sweeps: Sequence[Sweep]) -> None:
    """A node's ``ethtool@PORT`` outputs read as one frame (:data:`~hwaac.telemetry.samples.ETHTOOL_STACK`) are
    rated as one where every sweep that holds the node's outputs holds such a frame of the same ports and names;
    anywhere else (an output of one sweep read port by port, a port or counter more in one sweep) each sweep's
    frame is split back into its ports' frames, in place, and each port is rated on its own (and says why)."""
    stacks: dict[str, list[tuple[Sweep, Frame]]] = {}
    for sweep in sweeps:
        for (device, stem), (frame, _) in sweep.frames.items():
            if stem == ETHTOOL_STACK:
                stacks.setdefault(device, []).append((sweep, frame))
    if not stacks:
        return
    alone = {
        device
        for sweep in sweeps
        for device, stem in (*sweep.frames, *sweep.snapshots)
        if stem.startswith(ETHTOOL_AT) and stem != ETHTOOL_STACK and device in stacks
    }
    for device, held in stacks.items():
        first = held[0][1]
        if device not in alone and all(f.ports == first.ports and f.names == first.names for _, f in held):
            continue
        for sweep, frame in held:
            _, when = sweep.frames.pop((device, ETHTOOL_STACK))
            for one in split_ports(frame):
                sweep.frames[(device, f"{ETHTOOL_AT}{one.ports[0]}")] = (one, when)


def _rate_chunk_packed(devices: Sequence[str]) -> bytes:
    return pack(_rate_chunk(devices))


def pack(rated: Rated) -> bytes:
    """A chunk's rated readings as a reader process sends them back: tuples, lists and dicts in :mod:`marshal`
    form (written and read several times faster than pickled objects); route tables pickled."""
    readings = [
        ("i", r.plain()) if isinstance(r, Interval) else ("s", plain(r))
        for r in rated.readings
        if not isinstance(r, RatedFrame | Frame)
    ]
    if len(readings) != len(rated.readings):
        raise TypeError("rated frames are correlated where they were read (read_rated with an index), not shipped")
    bgp = [
        (device, "f", iv.plain()) if isinstance(iv, RatedFrame) else (device, "i", iv.plain())
        for device, iv in rated.bgp.items()
    ]
    parts = None if rated.parts is None else [p.plain() for p in rated.parts]
    return marshal.dumps(
        (
            rated.sweeps,
            readings,
            rated.seconds,
            bgp,
            pickle.dumps(rated.routes, pickle.HIGHEST_PROTOCOL),
            rated.skipped,
            pickle.dumps(rated.probes, pickle.HIGHEST_PROTOCOL),
            parts,
        )
    )


def _unpack(data: bytes) -> Rated:
    sweeps, readings, seconds, bgp, routes, skipped, probes, parts = marshal.loads(data)
    return Rated(
        sweeps,
        [Interval.from_plain(r) if kind == "i" else from_plain(r) for kind, r in readings],
        seconds,
        {device: RatedFrame.from_plain(iv) if kind == "f" else Interval.from_plain(iv) for device, kind, iv in bgp},
        pickle.loads(routes),
        skipped,
        pickle.loads(probes),
        None if parts is None else [EndPart.from_plain(p) for p in parts],
    )


__all__ = ["Rated", "Reading", "pack", "rate", "read_rated"]
