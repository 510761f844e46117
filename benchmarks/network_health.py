"""Scale benchmark of network health: rates, correlation with the plan and SLIs over a sweep of a 100,352-GPU
fabric (the 3-tier fabric of ``plan_scale.py``), two samples of every switch port end and NIC port.

The samples are synthesised as :class:`~hwaac.telemetry.model.Snapshot` objects (untimed: parsing is timed by the
readers' own benchmarks). Prints seconds per stage, their total and peak RSS (getrusage). Targets on a 2-core
machine: total <= 10 s, peak RSS <= 4 GiB.

    .venv/bin/python benchmarks/network_health.py [--gpus 100352]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from plan_scale import scale_intent

from hwaac.plan import build_plan
from hwaac.telemetry.model import PortSample, Snapshot
from hwaac.telemetry.rates import interval
from hwaac.telemetry.sli import aggregate, link_slis
from hwaac.telemetry.topology import LinkIndex, correlate

GPUS_PER_SU = 32 * 8  # plan_scale: 32 nodes x 8 rails


def synthesise(plan: object, t0: float, t1: float) -> list[tuple[Snapshot, Snapshot]]:
    """Two readings per device: every planned port end with the counters the SLIs read."""
    ports: dict[str, list[str]] = {}
    for link in plan.links:  # type: ignore[attr-defined]
        ports.setdefault(link.a_device, []).append(link.a_port)
        ports.setdefault(link.b_device, []).append(link.b_port)
    up = {"oper": "up", "admin": "up"}
    out = []
    for n, (device, names) in enumerate(ports.items()):
        a, b = Snapshot("portstat", device, t0), Snapshot("portstat", device, t1)
        for k, p in enumerate(names):
            base = (n * 131 + k) * 1000
            a.ports[p] = PortSample(p, {"rx_ok": base, "rx_err": 0, "rx_drop": 0, "tx_ok": base,
                                        "fec_uncorrectable": 0, "pfc3_rx": 10, "ecn_marked": 5,
                                        "link_state_changes": 2}, {"pre_fec_ber": 1e-8}, up)
            b.ports[p] = PortSample(p, {"rx_ok": base + 600_000, "rx_err": int(k % 7 == 0), "rx_drop": 0,
                                        "tx_ok": base + 600_000, "fec_uncorrectable": 0, "pfc3_rx": 40,
                                        "ecn_marked": 50, "link_state_changes": 2}, {"pre_fec_ber": 2e-8}, up)
        out.append((a, b))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=100_352, help="fabric size in GPUs (a multiple of 256)")
    args = ap.parse_args()
    sus = max(1, args.gpus // GPUS_PER_SU)
    plan = build_plan(scale_intent(sus))
    pairs = synthesise(plan, 1000.0, 1030.0)
    ends = sum(len(b.ports) for _, b in pairs)
    print(f"fabric: {plan.gpu_count} GPUs, {len(plan.links)} links, {len(pairs)} devices, {ends} port ends sampled")

    t = time.perf_counter()
    intervals = [interval(a, b) for a, b in pairs]
    t_rates = time.perf_counter() - t
    t = time.perf_counter()
    index = LinkIndex(plan)
    t_index = time.perf_counter() - t
    t = time.perf_counter()
    corr = correlate(index, intervals)
    t_corr = time.perf_counter() - t
    t = time.perf_counter()
    slis = link_slis(corr)
    aggs, _ = aggregate(corr, slis)
    t_sli = time.perf_counter() - t
    total = t_rates + t_index + t_corr + t_sli
    print(f"rates: {t_rates:.2f} s; index: {t_index:.2f} s; correlate: {t_corr:.2f} s; SLIs + aggregates: "
          f"{t_sli:.2f} s ({len(slis)} links, {len(aggs)} scopes)")
    print(f"unplanned: {len(corr.unplanned)}, missing: {len(corr.missing)}, "
          f"discontinuities: {len(corr.discontinuities)}")
    print(f"total: {total:.2f} s (target <= 10 s)")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB
    print(f"peak RSS: {rss / 2**30:.2f} GiB ({rss} bytes; target <= 4 GiB; includes the plan and the samples)")
    ok = total <= 10 and rss <= 4 * 2**30
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
