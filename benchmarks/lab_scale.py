"""The twin at scale: up + converged, verify, memory, reconvergence after a link failure, down.

``.venv/bin/python benchmarks/lab_scale.py [--only demo|su16] [--verify/--no-verify]`` (root), on the demo and
on the demo grown to 16 SUs. Targets on 2 cores: demo <= 30 s, <= 1.5 GiB, verify PASS in <= 10 s; su16 <= 180 s,
<= 8 GiB, verify PASS; reconvergence <= 5 s. Exit 1 when a target is missed. What is measured, and how:
benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hwaac.cli import main as hwaac_main
from hwaac.lab import faults, netns
from hwaac.lab.down import down
from hwaac.lab.errors import LabError
from hwaac.lab.status import converge
from hwaac.lab.up import up

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"demo": (30.0, 1.5), "su16": (180.0, 8.0)}
VERIFY_TARGET = {"demo": 10.0}  # seconds; no target is set for su16
RECONVERGE_TARGET = 5.0


def render(kind: str, base: Path) -> Path:
    out = base / kind
    if kind == "demo":
        intent = ROOT / "inventory" / "demo"
    else:
        text = (ROOT / "inventory" / "demo" / "fabric.yml").read_text()
        for old, new in (
            ("su_count: 2", "su_count: 16"),
            ("su_capacity: 4", "su_capacity: 16"),
            ("name: demo", "name: su16"),
            ("leaf_spine: 10.1.0.0/20", "leaf_spine: 10.1.0.0/19"),
        ):
            assert old in text, f"demo intent changed: no {old!r}"
            text = text.replace(old, new)
        intent = base / "su16-intent"
        intent.mkdir()
        (intent / "fabric.yml").write_text(text)
    if hwaac_main(["plan", str(intent), "-o", str(out)]) != 0:
        raise SystemExit(f"hwaac plan {intent} failed")
    return out


def pss_gib(lab_name: str) -> float:
    total = 0
    for pids in netns.pids(netns.existing(f"hwl-{lab_name}-")).values():
        for pid in pids:
            try:
                for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
            except OSError:
                pass
    return total / 1024 / 1024


def settled_pss(
    lab_name: str, *, step: float = 10.0, window: float = 30.0, drop: float = 0.02, timeout: float = 600.0
) -> tuple[float, float]:
    """The lab's PSS once it falls by less than ``drop`` over ``window`` s: (GiB, seconds waited)."""
    t0 = time.monotonic()
    samples = [pss_gib(lab_name)]
    back = int(window // step)
    while time.monotonic() - t0 < timeout:
        time.sleep(step)
        samples.append(pss_gib(lab_name))
        if len(samples) > back and samples[-1 - back] - samples[-1] < drop * samples[-1 - back]:
            break
    return samples[-1], time.monotonic() - t0


def run_verify(lab_name: str) -> tuple[float, str]:
    """Seconds and verdict of ``hwaac verify lab:NAME``; what FAILed goes to stderr."""
    t = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "hwaac.verify.cli", f"lab:{lab_name}"], capture_output=True, text=True, timeout=1800
    )
    seconds = time.monotonic() - t
    verdict = {0: "PASS", 1: "FAIL"}.get(proc.returncode, f"exit {proc.returncode}")
    if verdict != "PASS":
        bad = [ln for ln in proc.stdout.splitlines() if " FAIL " in f" {ln} " or " ERROR " in f" {ln} "]
        print(
            f"  verify {lab_name}: {verdict}; {len(bad)} lines:",
            *bad[:15],
            proc.stderr.strip()[-500:],
            sep="\n    ",
            file=sys.stderr,
            flush=True,
        )
    return seconds, verdict


def bench(kind: str, base: Path, with_verify: bool) -> tuple[dict[str, str], bool]:
    name = f"bench{kind}"
    folder = render(kind, base)
    down(name)
    row: dict[str, str] = {"fabric": kind}
    ok = True
    try:
        t = time.monotonic()
        lab = up(
            folder,
            name=name,
            nodes_per_su=None if kind == "demo" else 2,
            log=lambda m: print(f"  {m}", file=sys.stderr, flush=True),
        )
        built = time.monotonic() - t
        try:
            converge(lab, timeout=600, interval=0.5)
        except LabError as exc:  # a figure all the same: how far it got
            row["up (s)"] = f"{built:.1f}"
            row["up + converged (s)"] = f"not converged: {exc}"
            return row, False
        total = time.monotonic() - t
        row["devices"] = f"{len(lab.switches)} sw + {len(lab.hosts)} nodes, {len(lab.state['links'])} cables"
        row["up (s)"] = f"{built:.1f}"
        row["up + converged (s)"] = f"{total:.1f}"
        row["PSS converged (GiB)"] = f"{pss_gib(name):.2f}"
        pss, waited = settled_pss(name)
        row["PSS settled (GiB)"] = f"{pss:.2f} (after {waited:.0f} s{', KSM' if lab.state.get('ksm') else ''})"
        verify_s, verdict = run_verify(name) if with_verify else (0.0, "skipped")
        row["verify"] = f"{verify_s:.1f} s ({verdict})" if with_verify else verdict
        row["PSS after verify (GiB)"] = f"{pss_gib(name):.2f}" if with_verify else "-"
        cid = next(c for c, lk in lab.state["links"].items() if lk["kind"] == "leaf_spine")
        t = time.monotonic()
        faults.fail_link(lab, cid)
        lab.reload()
        reconv = time.monotonic() - t + converge(lab, timeout=120, interval=0.25)
        row["reconverge after link down (s)"] = f"{reconv:.1f}"
        faults.restore(lab, cid)
        time_target, mem_target = TARGETS[kind]
        ok = total <= time_target and pss <= mem_target and reconv <= RECONVERGE_TARGET
        if with_verify:
            ok &= verdict == "PASS" and verify_s <= VERIFY_TARGET.get(kind, float("inf"))
    finally:
        t = time.monotonic()
        down(name)
        row["down (s)"] = f"{time.monotonic() - t:.1f}"
    row["targets"] = "met" if ok else "MISSED"
    return row, ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=("demo", "su16"))
    ap.add_argument("--verify", action=argparse.BooleanOptionalAction, default=True)
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("lab_scale.py needs root (network namespaces, FRR)")
    # stopped from outside (SIGTERM, or SIGINT even when started in the background): take the lab down first
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    rows, ok = [], True
    with tempfile.TemporaryDirectory(prefix="hwaac-lab-bench-") as tmp:
        for kind in [args.only] if args.only else ["demo", "su16"]:
            row, passed = bench(kind, Path(tmp), args.verify)
            rows.append(row)
            ok &= passed
            print(" | ".join(f"{k}: {v}" for k, v in row.items()), flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
