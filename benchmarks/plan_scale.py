"""Scale benchmark: a 3-tier fabric of 100,352 GPUs (8 rails, 32-node SUs, 392 SUs), planned and rendered.

Prints: the plan alone (seconds), plan + rendering every switch and host file and the docs to disk (seconds),
device/file counts and the peak RSS of this process (bytes, from getrusage). Targets on a 2-core machine:
plan <= 10 s, plan + render <= 60 s, peak RSS <= 4 GiB.

    .venv/bin/python benchmarks/plan_scale.py [--sus 392] [--out DIR] [--keep]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from hwaac.model.intent import Intent
from hwaac.plan import build_plan
from hwaac.render import render_to_dir


def scale_intent(sus: int) -> Intent:
    """8 rails x 32-node SUs on SN5600 (128 x 400G): leaves 32 down / 32 up, pods of 8 SUs, super-spines above."""
    return Intent.model_validate(
        {
            "fabric": {
                "name": "scale",
                "site": "bench",
                "tiers": 3,
                "planes": 1,
                "rails": 8,
                "nodes_per_su": 32,
                "su_count": sus,
                "host_port_speed_gbps": 400,
            },
            "switches": {
                "leaf": {"model": "SN5600-O128", "downlinks": 32, "uplinks": 32},
                "spine": {"model": "SN5600-O128"},
                "super_spine": {"model": "SN5600-O128"},
            },
            "addressing": {
                "loopbacks": {"leaf": "10.0.0.0/20", "spine": "10.0.16.0/21", "super_spine": "10.0.24.0/21"},
                "leaf_spine": "10.64.0.0/12",
                "spine_super_spine": "10.96.0.0/12",
                "host_links": {"prefix": "172.16.0.0/12"},
            },
        }
    )


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sus", type=int, default=392)
    ap.add_argument("--out", help="output folder (default: a temporary folder, removed afterwards)")
    ap.add_argument("--keep", action="store_true", help="keep the output folder")
    args = ap.parse_args()

    intent = scale_intent(args.sus)
    t0 = time.perf_counter()
    plan = build_plan(intent)
    t_plan = time.perf_counter() - t0
    gpus = plan.gpu_count
    roles: dict[str, int] = {}
    for s in plan.switches:
        roles[s.role] = roles.get(s.role, 0) + 1
    print(f"fabric: {gpus} GPUs, {len(plan.nodes)} nodes, {roles}, {len(plan.links)} links")
    print(f"plan: {t_plan:.2f} s (target <= 10 s)")

    tmp = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="hwaac-bench-")) / "out"
    t1 = time.perf_counter()
    counts = render_to_dir(plan, tmp)
    t_render = time.perf_counter() - t1
    print(f"render: {t_render:.2f} s for {counts}")
    print(f"plan + render: {t_plan + t_render:.2f} s (target <= 60 s)")
    rss = peak_rss_bytes()
    print(f"peak RSS: {rss / 2**30:.2f} GiB ({rss} bytes; target <= 4 GiB)")
    if not args.keep:
        shutil.rmtree(tmp.parent if not args.out else tmp, ignore_errors=True)
    ok = t_plan <= 10 and t_plan + t_render <= 60 and rss <= 4 * 2**30
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
