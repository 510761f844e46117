"""A samples folder: one sweep of tool outputs, ``DIR/<device>/<tool>[@<port>].<ext>``, read with the readers of
:mod:`hwaac.telemetry.readers`; the sweep's time from ``DIR/taken_at`` (Unix seconds or ISO 8601), else each
file's modification time. The layout and the file names: ``docs/network-health.md`` "Samples folder". A large
fabric's sweeps are read on every core (:mod:`hwaac.telemetry.parallel`).
"""

from __future__ import annotations

import marshal
import os
import pickle
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from pathlib import Path
from typing import Any

from hwaac.probe.model import ProbeResults, read_results, recent
from hwaac.telemetry import parallel
from hwaac.telemetry.frames import Frame, split_ports
from hwaac.telemetry.model import PortSample, Snapshot
from hwaac.telemetry.parsers.frr_bgp import parse_bgp_summary
from hwaac.telemetry.parsers.frr_routes import RouteTable, parse_routes
from hwaac.telemetry.parsers.host_ethtool import (
    read_mlx5_ethtool_frame,
    read_mlx5_ethtool_stack,
)
from hwaac.telemetry.parsers.sonic_portstat_json import parse_portstat_json
from hwaac.telemetry.readers import BGP, EXTENSIONS, FRAME_READERS, PORT_READERS, PROBE, READERS, ROUTES

# outputs never rated (state words and gauges, never a counter; the route table, of which the latest is judged): of
# several sweeps only the latest that holds such an output is read (hwaac.telemetry.rated)
LATEST_ONLY = frozenset({"intf-status", "transceiver-dom", "routes"})
TIME_FILE = "taken_at"


@dataclass(slots=True)
class Sweep:
    """One samples folder read.

    Attributes:
        path: the folder.
        time: the sweep's time (``taken_at`` file), None when it has none (each file's mtime is used then).
        snapshots: by (device, file stem with its port) -> the snapshot and the file's time.
        bgp: by device, the BGP summary as a snapshot (one "port" per peer).
        routes: by device, the FRR route table.
        probes: by host, its active probe results (``probe.json``; a complete measurement per sweep).
        skipped: files not read, each with the reason.
        frames: by (device, file stem), outputs read into columns (:func:`read_devices` with ``frames``), each in
            place of its snapshot; a node's ``ethtool@PORT`` outputs of one time as one frame under
            :data:`ETHTOOL_STACK`.
    """

    path: Path
    time: float | None = None
    snapshots: dict[tuple[str, str], tuple[Snapshot, float]] = field(default_factory=dict)
    bgp: dict[str, tuple[Snapshot | Frame, float]] = field(default_factory=dict)
    routes: dict[str, RouteTable] = field(default_factory=dict)
    probes: dict[str, ProbeResults] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    frames: dict[tuple[str, str], tuple[Frame, float]] = field(default_factory=dict)


def pack(sweep: Sweep) -> bytes:
    """A part of a sweep as a reader process sends it back: snapshots as plain tuples, lists and dicts in
    :mod:`marshal` form, which is written and read several times faster than pickled objects (route tables, a few
    per switch, pickled)."""
    bgp = [(device, when, plain(snap)) for device, (snap, when) in sweep.bgp.items() if isinstance(snap, Snapshot)]
    if sweep.frames or len(bgp) != len(sweep.bgp):
        raise TypeError("frames are rated where they were read (read_rated with an index), not shipped")
    snaps = [(device, stem, when, plain(snap)) for (device, stem), (snap, when) in sweep.snapshots.items()]
    return marshal.dumps(
        (
            snaps,
            bgp,
            pickle.dumps(sweep.routes, pickle.HIGHEST_PROTOCOL),
            sweep.skipped,
            pickle.dumps(sweep.probes, pickle.HIGHEST_PROTOCOL),
        )
    )


def unpack(data: bytes) -> Sweep:
    """The part :func:`pack` packed, with equal snapshots (dict order included)."""
    snaps, bgp, routes, skipped, probes = marshal.loads(data)
    return Sweep(
        Path(""),
        None,
        {(device, stem): (from_plain(flat), when) for device, stem, when, flat in snaps},
        {device: (from_plain(flat), when) for device, when, flat in bgp},
        pickle.loads(routes),
        pickle.loads(probes),
        skipped,
    )


def plain(snap: Snapshot) -> tuple[Any, ...]:
    """A snapshot as tuples, lists and dicts (for :mod:`marshal`)."""
    return (
        snap.tool,
        snap.device,
        snap.taken_at,
        snap.version,
        snap.unknown,
        [(p.port, p.counters, p.gauges, p.state) for p in snap.ports.values()],
    )


def from_plain(flat: tuple[Any, ...]) -> Snapshot:
    """The snapshot :func:`plain` made plain."""
    tool, device, taken_at, version, unknown, ports = flat
    return Snapshot(tool, device, taken_at, version, {p[0]: PortSample(*p) for p in ports}, unknown)


class SamplesError(ValueError):
    """A samples folder that cannot be used at all (missing, no device folder, a bad ``taken_at``)."""


def valid_names() -> str:
    """The file names a device folder may hold, for error messages."""
    names = [*READERS, *(f"{k}@PORT" for k in PORT_READERS), BGP, ROUTES, PROBE]
    return ", ".join(names) + " (each .txt, .json or .out)"


def _time(path: Path) -> float:
    text = path.read_text().strip()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise SamplesError(f"{path}: {text[:40]!r} is neither Unix seconds nor an ISO 8601 time") from None


def read_sweep(folder: str | Path, *, workers: int | None = None) -> Sweep:
    """Read one samples folder (:func:`read_sweeps` of one)."""
    return read_sweeps([folder], workers=workers)[0]


def read_sweeps(folders: Sequence[str | Path], *, workers: int | None = None) -> list[Sweep]:
    """Read samples folders, oldest first. Raises :class:`SamplesError` when one is not a folder, holds no device
    folder, or its ``taken_at`` is not a time; a file it cannot read is listed in ``skipped`` (a reader's own
    ``unknown`` stays in the snapshot).

    A large fabric's files are read by ``workers`` processes (default: every core this process may use; 1: this
    process only); the sweeps are the same either way (:mod:`hwaac.telemetry.parallel`)."""
    heads = open_folders(folders)
    n = parallel.parallel_ok(sum(len(d) for _, d in heads), workers)
    jobs = [
        (i, str(sweep.path), sweep.time, chunk)
        for i, (sweep, devices) in enumerate(heads)
        for chunk in parallel.chunks(devices, n)
    ]
    with parallel.no_collections():
        for i, part in parallel.run(_read_devices, jobs, n, remote=_read_devices_packed, decode=_unpacked):
            _merge(heads[i][0], part)
    return [sweep for sweep, _ in heads]


def open_folders(folders: Sequence[str | Path]) -> list[tuple[Sweep, list[str]]]:
    """Each samples folder as an empty sweep with its time, and its device folders, sorted. Raises
    :class:`SamplesError` as :func:`read_sweeps` does."""
    heads: list[tuple[Sweep, list[str]]] = []
    for folder in folders:
        root = Path(folder)
        if not root.is_dir():
            raise SamplesError(f"{root}: not a folder (expected DIR/<device>/<tool>.txt)")
        sweep = Sweep(root)
        tf = root / TIME_FILE
        if tf.is_file():
            sweep.time = _time(tf)
        with os.scandir(root) as found:  # the entries' types come with the listing: no stat per device
            devices = sorted(e.name for e in found if e.is_dir())
        if not devices:
            raise SamplesError(
                f"{root}: no device folder (expected DIR/<device>/<tool>.txt with tool one of {valid_names()})"
            )
        heads.append((sweep, devices))
    return heads


def read_devices(
    sweep: Sweep, devices: Iterable[str], *, later: set[tuple[str, str]] | None = None, frames: bool = False
) -> Sweep:
    """Read the files of ``devices`` (device folders of ``sweep.path``) into ``sweep``; returns it.

    ``later``: for sweeps read newest first, the (device, stem) of the :data:`LATEST_ONLY` outputs a later sweep
    holds, which are not read again here; the ones read here are added. ``frames``: see :func:`add_output`."""
    root, time = sweep.path, sweep.time
    for device in devices:
        with os.scandir(f"{root}/{device}") as found:  # the entries' types come with the listing: no stat per file
            entries = sorted(found, key=_NAME)
        ports: list[tuple[str, str, str, float, str]] = []  # a node's ethtool@PORT outputs, read together
        for entry in entries:
            stem, suffix = _split_suffix(entry.name)
            if suffix not in EXTENSIONS or not entry.is_file():
                sweep.skipped.append(f"{entry.path}: not a .txt, .json or .out file")
                continue
            if later is not None and stem in LATEST_ONLY:
                if (device, stem) in later:
                    continue
                later.add((device, stem))
            when = time if time is not None else entry.stat().st_mtime
            data = read_bytes(entry.path)
            if frames and stem in UTF8_FRAMES:  # JSON: decoded from the bytes, faster than from the text
                frame = FRAME_READERS[stem](data, device=device)
                if frame is not None:
                    _put_frame(sweep, device, stem, frame, when)
                else:  # the parser reads the text, with its reasons
                    add_output(sweep, device, stem, _text(data), when, json_file=suffix == ".json", where=entry.path)
                continue
            raw = _text(data)
            if frames and stem.startswith(ETHTOOL_AT) and len(stem) > len(ETHTOOL_AT):
                ports.append((stem, stem[len(ETHTOOL_AT) :], raw, when, entry.path))
                continue
            add_output(sweep, device, stem, raw, when, json_file=suffix == ".json", where=entry.path, frames=frames)
        stack = (
            read_mlx5_ethtool_stack([(port, raw) for _, port, raw, _, _ in ports], device=device)
            if len(ports) > 1
            else None
        )
        if stack is not None and len({when for *_, when, _ in ports}) == 1:  # one time: rated as one frame
            sweep.frames[(device, ETHTOOL_STACK)] = (stack, ports[0][3])
        elif ports:  # read together, timed apart; or one by one, the parser reading what is not plain
            read = (
                split_ports(stack)
                if stack is not None
                else [read_mlx5_ethtool_frame(raw, port=port, device=device) for _, port, raw, _, _ in ports]
            )
            for (stem, _, raw, when, path), frame in zip(ports, read, strict=True):
                if frame is not None:
                    sweep.frames[(device, stem)] = (frame, when)
                else:  # the parser reads it, with its reasons
                    add_output(sweep, device, stem, raw, when, where=path)
    return sweep


# a GPU node's per-port ethtool outputs: ethtool@PORT
ETHTOOL_AT = "ethtool@"
# the key (in Sweep.frames) of a node's ethtool@PORT outputs read together as one frame (its ports in file order)
ETHTOOL_STACK = "ethtool@*"
_NAME = attrgetter("name")


def _split_suffix(name: str) -> tuple[str, str]:
    """``os.path.splitext`` of a file name (a leading dot is no suffix), without its generic path handling."""
    stem, dot, ext = name.rpartition(".")
    return (stem, dot + ext) if stem.strip(".") else (name, "")


_FIRST_READ = 1 << 16  # most outputs fit: one read
# tools whose frame reader reads the file's bytes (JSON, which orjson decodes faster from bytes than from text)
UTF8_FRAMES = frozenset({"counters-db", "bgp-summary"})


def read_bytes(path: str) -> bytes:
    """A file's bytes: one read for most outputs, the rest of a larger one in one more (its size from fstat), then
    whatever it grew by since."""
    fd = os.open(path, os.O_RDONLY)  # no file object: half the cost of open().read() for a small output
    try:
        data = os.read(fd, _FIRST_READ)
        if len(data) == _FIRST_READ:
            chunks = [data]
            size = max(os.fstat(fd).st_size - len(data) + 1, _FIRST_READ)  # +1: the end is seen in this read
            while more := os.read(fd, size):
                chunks.append(more)
                size = _FIRST_READ
            data = b"".join(chunks)
    finally:
        os.close(fd)
    return data


def _text(data: bytes) -> str:
    raw = data.decode("utf-8", "replace")
    return raw.replace("\r\n", "\n").replace("\r", "\n") if "\r" in raw else raw


def read_text(path: str) -> str:
    """A file's text as ``open(path, encoding="utf-8", errors="replace").read()`` gives it (universal newlines:
    ``\\r\\n`` and ``\\r`` read as ``\\n``), without the text layer's newline scan of an output that has no ``\\r``."""
    return _text(read_bytes(path))


def _put_frame(sweep: Sweep, device: str, stem: str, frame: Frame, when: float) -> None:
    if stem == BGP:
        sweep.bgp[device] = (frame, when)
    else:
        sweep.frames[(device, stem)] = (frame, when)


def _read_devices(job: tuple[int, str, float | None, Sequence[str]]) -> tuple[int, Sweep]:
    """The files of some device folders of one sweep, as a sweep of their own (a worker's job)."""
    index, folder, time, devices = job
    return index, read_devices(Sweep(Path(folder), time), devices)


def _read_devices_packed(job: tuple[int, str, float | None, Sequence[str]]) -> tuple[int, bytes]:
    index, part = _read_devices(job)
    return index, pack(part)


def _unpacked(packed: tuple[int, bytes]) -> tuple[int, Sweep]:
    return packed[0], unpack(packed[1])


def _merge(sweep: Sweep, part: Sweep) -> None:
    sweep.snapshots.update(part.snapshots)
    sweep.bgp.update(part.bgp)
    sweep.routes.update(part.routes)
    sweep.skipped.extend(part.skipped)
    sweep.probes.update(part.probes)


def add_output(
    sweep: Sweep,
    device: str,
    stem: str,
    raw: str,
    when: float,
    *,
    json_file: bool = False,
    where: str = "",
    probe_max_age: float | None = None,
    frames: bool = False,
) -> None:
    """Read one tool's output ``raw`` of ``device`` (``stem``: the tool, ``tool@PORT`` for a per-port one) taken
    at ``when`` into ``sweep``; a stem that is no tool is listed in ``skipped`` (as ``where``). With
    ``probe_max_age``, probe results whose run ended longer than that before ``when`` are not judged
    (:func:`hwaac.probe.model.recent`); probe results of another node than ``device`` are listed in ``skipped``.
    With ``frames``, an output its format's frame reader can read (:data:`~hwaac.telemetry.readers.FRAME_READERS`)
    goes into ``sweep.frames`` (``sweep.bgp`` for a BGP summary) as a :class:`Frame`."""
    tool, at, port = stem.partition("@")
    if frames and (framer := FRAME_READERS.get(tool)) is not None and bool(at) == (tool in PORT_READERS):
        frame = framer(raw, device=device, port=port) if at else framer(raw, device=device)
        if frame is not None:
            _put_frame(sweep, device, stem, frame, when)
            return
    if tool == BGP and not at:
        sweep.bgp[device] = (parse_bgp_summary(raw, device=device).snapshot(), when)
    elif tool == ROUTES and not at:
        sweep.routes[device] = parse_routes(raw, device=device)
    elif tool == PROBE and not at:
        doc = read_results(raw, where=where or f"{device} {stem}")
        if doc.host and doc.host != device:  # another node's results (a misplaced copy): its flows counted twice
            sweep.skipped.append(
                f"{where or device + ' ' + stem}: the probe results of {doc.host}, not of "
                f"{device} (hwaac probe send --host names the node): not judged"
            )
            return
        if probe_max_age is not None:
            doc = recent(doc, when, probe_max_age, where=where or f"{device} {stem}")
        sweep.probes[device] = doc
    elif tool in PORT_READERS and at and port:
        sweep.snapshots[(device, stem)] = (PORT_READERS[tool][0](raw, port=port, device=device), when)
    elif tool == "portstat" and json_file and not at:
        sweep.snapshots[(device, "portstat-json")] = (parse_portstat_json(raw, device=device), when)
    elif tool in READERS and not at:
        sweep.snapshots[(device, stem)] = (READERS[tool][0](raw, device=device), when)
    else:
        sweep.skipped.append(f"{where or device + ' ' + stem}: {stem!r} is no tool hwaac reads; valid: {valid_names()}")


def sweep_time(sweep: Sweep) -> float | None:
    """When ``sweep`` was taken: its ``taken_at``, else the newest of its samples' times (the files' modification
    times, or each tool's own ``taken_at`` from Ansible); None when it holds no timed sample."""
    if sweep.time is not None:
        return sweep.time
    return max([t for _, t in sweep.snapshots.values()] + [t for _, t in sweep.bgp.values()], default=None)


Outputs = Mapping[str, Mapping[str, tuple[str, float]]]


def sweep_from_outputs(
    name: str,
    outputs: Outputs,
    time: float | None = None,
    skipped: list[str] | None = None,
    *,
    workers: int | None = None,
    probe_max_age: float | None = None,
) -> Sweep:
    """A sweep from outputs held in memory (an Ansible run's): ``outputs[device][stem] = (raw, taken_at)``.
    ``name`` stands for the folder in the report; ``skipped``: outputs the caller could not use, with why;
    ``probe_max_age``: see :func:`add_output`."""
    return sweeps_from_outputs([(name, outputs, time, skipped)], workers=workers, probe_max_age=probe_max_age)[0]


def sweeps_from_outputs(
    sweeps: Sequence[tuple[str, Outputs, float | None, list[str] | None]],
    *,
    workers: int | None = None,
    probe_max_age: float | None = None,
) -> list[Sweep]:
    """:func:`sweep_from_outputs` of each ``(name, outputs, time, skipped)``, oldest first; a large fabric's
    outputs are read by ``workers`` processes as :func:`read_sweeps` reads files."""
    heads = [
        (Sweep(Path(name), time=time, skipped=list(skipped or [])), sorted(outputs))
        for name, outputs, time, skipped in sweeps
    ]
    n = parallel.parallel_ok(sum(len(d) for _, d in heads), workers)
    jobs = [(i, chunk) for i, (_, devices) in enumerate(heads) for chunk in parallel.chunks(devices, n)]
    share = ([(name, outputs) for name, outputs, _, _ in sweeps], probe_max_age)
    with parallel.no_collections():
        for i, part in parallel.run(_read_outputs, jobs, n, share, remote=_read_outputs_packed, decode=_unpacked):
            _merge(heads[i][0], part)
    return [sweep for sweep, _ in heads]


def _read_outputs_packed(job: tuple[int, Sequence[str]]) -> tuple[int, bytes]:
    index, part = _read_outputs(job)
    return index, pack(part)


def _read_outputs(job: tuple[int, Sequence[str]]) -> tuple[int, Sweep]:
    """The outputs of some devices of one sweep held in memory, as a sweep of their own (a worker's job)."""
    index, devices = job
    named, probe_max_age = parallel.shared()
    name, outputs = named[index]
    sweep = Sweep(Path(""))
    for device in devices:
        for stem, (raw, when) in sorted(outputs[device].items()):
            add_output(sweep, device, stem, raw, when, where=f"{name} {device} {stem}", probe_max_age=probe_max_age)
    return index, sweep


__all__ = [
    "ETHTOOL_AT",
    "ETHTOOL_STACK",
    "LATEST_ONLY",
    "TIME_FILE",
    "UTF8_FRAMES",
    "SamplesError",
    "Sweep",
    "add_output",
    "from_plain",
    "open_folders",
    "pack",
    "plain",
    "read_bytes",
    "read_devices",
    "read_sweep",
    "read_sweeps",
    "sweep_from_outputs",
    "sweep_time",
    "sweeps_from_outputs",
    "unpack",
    "valid_names",
]
