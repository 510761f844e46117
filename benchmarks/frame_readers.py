"""Frame readers against their parsers: microseconds per output of counters-db, bgp-summary, ethtool@PORT and
ib-counters (the four outputs a large sweep is made of), parser (to a Snapshot) vs frame reader (to a Frame).

Inputs: ``network_sweep.Synth``'s outputs of one leaf, spine, super-spine and GPU node, filtered and raw, and
with ``--folder`` every output of a kept sweep; timed in process CPU time. Exit 1 when a frame is not its
parser's snapshot. Target: a frame reader at least 4x faster than its parser. Method and figures:
benchmarks/README.md.

    .venv/bin/python benchmarks/frame_readers.py [--gpus 12544] [--number 200] [--repeat 5] [--folder DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from network_sweep import Synth
from plan_scale import scale_intent

from hwaac.plan import build_plan
from hwaac.telemetry.frames import frame_of
from hwaac.telemetry.parsers.frr_bgp import parse_bgp_summary
from hwaac.telemetry.parsers.frr_bgp_frame import read_bgp_summary_frame
from hwaac.telemetry.parsers.host_ethtool import parse_mlx5_ethtool, read_mlx5_ethtool_frame, read_mlx5_ethtool_frames
from hwaac.telemetry.parsers.host_rdma import parse_ib_sysfs_counters, read_ib_sysfs_frame
from hwaac.telemetry.parsers.sonic_counters_db import parse_counters_db, read_counters_db_frame
from hwaac.telemetry.tools import filter_output

GPUS_PER_SU = 256
Reader = Callable[[str, str], Any]  # (raw, port) -> reading
READERS: dict[str, tuple[Reader, Reader]] = {
    "counters-db": (lambda raw, port: parse_counters_db(raw), lambda raw, port: read_counters_db_frame(raw)),
    "bgp-summary": (lambda raw, port: parse_bgp_summary(raw).snapshot(), lambda raw, port: read_bgp_summary_frame(raw)),
    "ethtool": (
        lambda raw, port: parse_mlx5_ethtool(raw, port=port),
        lambda raw, port: read_mlx5_ethtool_frame(raw, port=port),
    ),
    "ib-counters": (lambda raw, port: parse_ib_sysfs_counters(raw), lambda raw, port: read_ib_sysfs_frame(raw)),
}


def cpu_us(call: Callable[[], object], number: int, repeat: int) -> float:
    """Best of ``repeat`` runs of ``number`` calls, CPU microseconds a call."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        for _ in range(number):
            call()
        best = min(best, time.process_time() - t)
    return best / number * 1e6


def same(tool: str, raw: str, port: str) -> bool:
    """Whether the frame reader gives the frame of the parser's plain snapshot (and gives one)."""
    parse, read = READERS[tool]
    frame = read(raw, port)
    return frame is not None and frame == frame_of(parse(raw, port))


def outputs(gpus: int) -> list[tuple[str, str, str, str, str]]:
    """(role, form, tool, port, raw) of one device per role, sweep 2, filtered and raw."""
    plan = build_plan(scale_intent(max(1, gpus // GPUS_PER_SU)))
    out = []
    for filtered in (True, False):
        synth = Synth(plan, filtered=filtered, route_count=1)
        for role, device in synth.one_per_role().items():
            for stem, raw in synth.outputs(device, 1).items():
                tool, _, port = stem.partition("@")
                if tool in READERS:
                    text = filter_output(stem, raw) if filtered else raw
                    out.append((role, "filtered" if filtered else "raw", tool, port, text))
    return out


def host_row(rails: list[tuple[str, str]], number: int, repeat: int) -> tuple[float, float, bool]:
    """(parser, frames read together) CPU microseconds an output of a host's ethtool outputs; whether they agree."""
    a = cpu_us(lambda: [parse_mlx5_ethtool(raw, port=port) for port, raw in rails], number, repeat)
    b = cpu_us(lambda: read_mlx5_ethtool_frames(rails), number, repeat)
    ok = read_mlx5_ethtool_frames(rails) == [frame_of(parse_mlx5_ethtool(raw, port=port)) for port, raw in rails]
    return a / len(rails), b / len(rails), ok


def sweep_totals(folder: Path) -> tuple[dict[str, list[float]], bool]:
    """Per tool [outputs, parser CPU s, frame CPU s, frames] over every output of ``folder``; whether all agree."""
    totals = {tool: [0, 0.0, 0.0, 0] for tool in READERS}
    right = True
    for device in sorted(os.listdir(folder)):
        if not (folder / device).is_dir():
            continue
        rails: list[tuple[str, str]] = []
        for name in sorted(os.listdir(folder / device)):
            stem = name.rsplit(".", 1)[0]
            tool, _, port = stem.partition("@")
            if tool not in READERS:
                continue
            raw = (folder / device / name).read_text()
            if tool == "ethtool":  # a host's: read together, below
                rails.append((port, raw))
                continue
            parse, read = READERS[tool]
            t = time.process_time()
            snap = parse(raw, port)
            t1 = time.process_time()
            frame = read(raw, port)
            t2 = time.process_time()
            row = totals[tool]
            row[0] += 1
            row[1] += t1 - t
            row[2] += t2 - t1
            row[3] += frame is not None
            right = right and frame == frame_of(snap)
        if rails:
            t = time.process_time()
            snaps = [parse_mlx5_ethtool(raw, port=port) for port, raw in rails]
            t1 = time.process_time()
            frames = read_mlx5_ethtool_frames(rails)
            t2 = time.process_time()
            row = totals["ethtool"]
            row[0] += len(rails)
            row[1] += t1 - t
            row[2] += t2 - t1
            row[3] += sum(f is not None for f in frames)
            right = right and frames == [frame_of(s) for s in snaps]
    return totals, right


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=12_544, help="fabric size in GPUs (a multiple of 256)")
    ap.add_argument("--number", type=int, default=200, help="reads per run of a 20 kB output (more of a smaller)")
    ap.add_argument("--repeat", type=int, default=5, help="runs, the best counts")
    ap.add_argument("--folder", type=Path, help="a samples folder (network_health.py --keep DIR: DIR/sweep1)")
    args = ap.parse_args()
    right = True
    print("| device | form | tool | bytes | parser us | frame us | x |")
    print("|---|---|---|---|---|---|---|")
    ratios = []
    found = outputs(args.gpus)
    for form in ("filtered", "raw"):
        rails = [(port, raw) for _, f, tool, port, raw in found if f == form and tool == "ethtool"]
        a, b, ok = host_row(rails, max(3, args.number * 20_000 // (sum(len(r) for _, r in rails) + 1000)), args.repeat)
        right = right and ok
        print(
            f"| gpu | {form} | ethtool@rail0-{len(rails) - 1} together, an output | {len(rails[0][1]):,} | {a:.1f} | "
            f"{b:.1f} | {a / b:.1f}{'' if ok else ' WRONG'} |"
        )
    for role, form, tool, port, raw in found:
        if port not in ("", "rail0"):
            continue
        parse, read = READERS[tool]
        number = max(3, args.number * 20_000 // (len(raw) + 1000))  # about as many bytes read for each
        a = cpu_us(lambda: parse(raw, port), number, args.repeat)  # noqa: B023 (used at once)
        b = cpu_us(lambda: read(raw, port), number, args.repeat)  # noqa: B023
        ok = same(tool, raw, port)
        right = right and ok
        ratios.append(a / b)
        print(
            f"| {role} | {form} | {tool}{'@' + port if port else ''} | {len(raw):,} | {a:.1f} | {b:.1f} | "
            f"{a / b:.1f}{'' if ok else ' WRONG'} |"
        )
    if args.folder:
        totals, agree = sweep_totals(args.folder)
        right = right and agree
        print(f"\nevery output of {args.folder}:\n")
        print("| tool | outputs | frames | parser CPU s | frame CPU s | x |")
        print("|---|---|---|---|---|---|")
        for tool, (n, a, b, framed) in totals.items():
            print(f"| {tool} | {n:,} | {framed:,} | {a:.2f} | {b:.2f} | {a / b if b else 0:.1f} |")
        a, b = sum(r[1] for r in totals.values()), sum(r[2] for r in totals.values())
        print(
            f"| all | {sum(r[0] for r in totals.values()):,} | {sum(r[3] for r in totals.values()):,} | {a:.2f} | "
            f"{b:.2f} | {a / b if b else 0:.1f} |"
        )
    print(
        "WRONG RESULT"
        if not right
        else f"target (4x) {'met' if min(ratios) >= 4 else 'missed'}: {min(ratios):.1f}x to {max(ratios):.1f}x"
    )
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())
