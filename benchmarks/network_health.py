"""Scale benchmark of network health: one sweep of a 100,352-GPU fabric (the 3-tier fabric of ``plan_scale.py``),
two samples of every planned switch port end and NIC port, parsed, rated, correlated, judged and reported.

Untimed: the plan and the synthetic outputs of ``network_sweep.py`` with three injected faults. Timed in a process
of its own, through ``hwaac health fabric``'s code (or ``--path sweeps``, the network_health action's). Targets on
2 cores: total <= 10 s, peak RSS <= 4 GiB; exit 1 when one is missed, WRONG RESULT when the injected faults are
not the top three suspects. Method and figures: benchmarks/README.md; where the time goes: docs/network-health-scale.md.

    .venv/bin/python benchmarks/network_health.py [--gpus 100352] [--raw] [--routes 1] [--workers N]
                                                  [--path rated|sweeps] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from network_sweep import SECONDS, T0, Faults, Synth
from plan_scale import scale_intent

from hwaac.plan import build_plan
from hwaac.plan.model import Plan
from hwaac.telemetry import parallel, tools
from hwaac.telemetry.fabric_health import FabricHealth, assess, judge
from hwaac.telemetry.rated import read_rated
from hwaac.telemetry.samples import read_sweeps
from hwaac.telemetry.slo import SloSet, load_slos
from hwaac.telemetry.topology import LinkIndex

GPUS_PER_SU = 32 * 8  # plan_scale: 32 nodes x 8 rails
_SYNTH: Synth | None = None  # the generator's, inherited by the forked writers
_FILTER = True


def _write(job: tuple[Path, list[str]]) -> int:
    """Write both sweeps of ``devices`` under ``root``; returns the bytes written."""
    root, devices = job
    assert _SYNTH is not None
    size = 0
    for device in devices:
        for sweep in (0, 1):
            folder = root / f"sweep{sweep + 1}" / device
            folder.mkdir(parents=True, exist_ok=True)
            for stem, raw in _SYNTH.outputs(device, sweep).items():
                text = tools.filter_output(stem, raw) if _FILTER else raw
                (folder / f"{stem}.txt").write_text(text)
                size += len(text)
    return size


def write_sweeps(synth: Synth, root: Path, *, filtered: bool) -> int:
    """Both samples folders under ``root``, written by two forked processes; returns their size in bytes."""
    global _SYNTH, _FILTER
    _SYNTH, _FILTER = synth, filtered
    for sweep in (0, 1):
        (root / f"sweep{sweep + 1}").mkdir(parents=True, exist_ok=True)
        (root / f"sweep{sweep + 1}" / "taken_at").write_text(f"{T0 + sweep * SECONDS}\n")
    devices = list(synth.devices())
    jobs = [(root, devices[i : i + 256]) for i in range(0, len(devices), 256)]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        size = sum(pool.imap_unordered(_write, jobs))
    return size


def peak_rss() -> tuple[int, int]:
    """(this process, its largest child) peak RSS in bytes (Linux reports KiB)."""
    return (
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=100_352, help="fabric size in GPUs (a multiple of 256)")
    ap.add_argument("--raw", action="store_true", help="outputs as the commands print them, not filtered")
    ap.add_argument("--routes", type=int, default=1, help="prefixes in each switch's route table (default 1)")
    ap.add_argument("--workers", type=int, help="reader processes (default: every core this process may use)")
    ap.add_argument(
        "--path",
        choices=("rated", "sweeps"),
        default="rated",
        help="rated: hwaac health fabric's (read and rated device by device); sweeps: the network_health "
        "action's (sweeps read whole, then assessed)",
    )
    ap.add_argument(
        "--keep",
        metavar="DIR",
        help="write the samples folders to DIR and keep them; a DIR written "
        "before with the same options is read again without writing",
    )
    ap.add_argument("--write-only", action="store_true", help="write the samples folders (--keep) and stop")
    ap.add_argument("--measure", metavar="DIR", help=argparse.SUPPRESS)  # the timed run, in a process of its own
    args = ap.parse_args()
    plan = build_plan(scale_intent(max(1, args.gpus // GPUS_PER_SU)))
    if args.measure:
        return measure(plan, Path(args.measure), args.workers, args.path)
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="hwaac-nh-"))
    stamp, options = root / "options", f"{args.gpus} raw={args.raw} routes={args.routes}"
    how = "raw" if args.raw else "as the module returns them"
    try:
        if stamp.is_file() and stamp.read_text() == options:
            print(f"fabric: {plan.gpu_count} GPUs, {len(plan.links)} links; samples from {root} ({how})")
        else:
            synth = Synth(plan, route_count=args.routes, filtered=not args.raw)
            t = time.perf_counter()
            size = write_sweeps(synth, root, filtered=not args.raw)
            stamp.write_text(options)
            print(
                f"fabric: {plan.gpu_count} GPUs, {len(plan.links)} links; samples written in "
                f"{time.perf_counter() - t:.0f} s (untimed): {size / 2**30:.2f} GiB, {how}"
            )
        if args.write_only:
            return 0
        # a process of its own, so that its peak RSS is the reading's, not the writing's
        cmd = [sys.executable, __file__, "--gpus", str(args.gpus), "--measure", str(root), "--path", args.path]
        return subprocess.run(cmd + (["--workers", str(args.workers)] if args.workers else []), check=False).returncode
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


def measure(plan: Plan, root: Path, workers: int | None, path: str) -> int:
    """Read both sweeps and assess them as ``hwaac health fabric`` does (``rated``: read and rated device by device,
    then judged) or as the network_health action does (``sweeps``: read whole, then assessed), timed per stage;
    check the result."""
    slos = load_slos()
    folders = [root / "sweep1", root / "sweep2"]
    with parallel.no_collections():  # as hwaac health fabric runs: the collector's one pass after the report
        health, stages, what, text, doc = _timed(plan, folders, slos, workers, path)
    total = sum(stages.values())
    report = health.report
    devices = len({d for d in (p.name for f in folders for p in f.iterdir() if p.is_dir())})
    n = parallel.parallel_ok(2 * devices, workers)
    print(
        f"devices: {devices}; {what}; reader processes: {n or 'none (serial)'};"
        f" report: {len(text) // 1024} KiB Markdown, {len(doc) // 1024} KiB JSON"
    )
    print("; ".join(f"{k}: {v:.2f} s" for k, v in stages.items()))
    print(f"total: {total:.2f} s (target <= 10 s)")
    own, child = peak_rss()
    rss = own + max(n - 1, 1) * child if n else own
    print(
        f"peak RSS: {own / 2**30:.2f} GiB here + {child / 2**30:.2f} GiB the largest of {max(n - 1, 0)} helper(s):"
        f" at most {rss / 2**30:.2f} GiB (target <= 4 GiB)"
    )
    gaps = {k: len(v) for k, v in report.coverage.items() if v}
    print(f"coverage gaps: {gaps or 'none'}")
    found = faults_found(health, Faults.pick(plan))
    clean = not report.coverage.get("reader_and_rate_errors") and not report.coverage.get("files_skipped")
    print(
        f"suspects: {len(report.suspects)}; the top three "
        + ("are" if found else "are NOT")
        + " the injected faults: "
        + ", ".join(f"{s.rule} {s.components[0].name}" for s in report.suspects[:5])
    )
    ok = total <= 10 and rss <= 4 * 2**30
    right = found and clean
    print("WRONG RESULT" if not right else "targets met" if ok else "TARGETS MISSED")
    return 0 if ok and right else 1


def _timed(
    plan: Plan, folders: list[Path], slos: SloSet, workers: int | None, path: str
) -> tuple[FabricHealth, dict[str, float], str, str, str]:
    """(the assessment, seconds per stage, what was read, the report's Markdown and JSON)."""
    stages: dict[str, float] = {}
    t = time.perf_counter()
    if path == "rated":
        index = LinkIndex(plan)
        stages["index"] = time.perf_counter() - t
        t = time.perf_counter()
        rated = read_rated(folders, workers=workers, index=index)
        stages["read+rates+correlate"] = time.perf_counter() - t
        health = judge(plan, rated, slos, timings=stages, index=index)
        ends = int(health.corr.ends.sampled.sum())
        peers = sum(len(iv.ports) for iv in rated.bgp.values())
        what = f"link ends rated and correlated: {ends} (two sweeps each), BGP peers rated: {peers}"
    else:
        sweeps = read_sweeps(folders, workers=workers)
        stages["read"] = time.perf_counter() - t
        health = assess(plan, sweeps, slos, timings=stages)
        ports = sum(len(snap.ports) for s in sweeps for snap, _ in s.snapshots.values())
        peers = sum(len(snap.ports) for s in sweeps for snap, _ in s.bgp.values())
        what = f"port samples: {ports} ({ports // 2} per sweep), BGP peers: {peers}"
    t = time.perf_counter()
    text = health.report.markdown()
    doc = json.dumps(health.report.to_dict())
    stages["report"] += time.perf_counter() - t
    return health, stages, what, text, doc


def faults_found(health: FabricHealth, faults: Faults) -> bool:
    """Whether the three best ranked suspects are the injected faults, each by its rule and cable."""
    index = health.corr.index
    want = {
        ("errors_both_ends", faults.crc.cable_id),
        ("flapping", faults.flap.cable_id),
        ("links_down", faults.down.cable_id),
    }
    got = {(s.rule, index.links[s.links[0]].cable_id) for s in health.report.suspects[:3] if s.links}
    return got == want


if __name__ == "__main__":
    sys.exit(main())
