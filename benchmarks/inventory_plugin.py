"""Inventory plugin benchmark: aiinfra.hwaac.fabric reading a fabric from the local NetBox.

Syncs the demo (or the demo grown to ``--sus N`` SUs) into a fresh NetBox, then times ``ansible-inventory --list``
with the plugin and counts the HTTP requests of one load. Target: the 16-SU fabric in <= 20 s. Method:
benchmarks/README.md.

    .venv/bin/python benchmarks/inventory_plugin.py [--sus 16] [--repeat 3]
    NETBOX_URL=... NETBOX_TOKEN=... .venv/bin/python benchmarks/inventory_plugin.py --sus 16 --existing
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import requests
from demo_fabric import demo_intent_text

from hwaac.devnetbox.local import LocalNetBox
from hwaac.inventory import from_netbox
from hwaac.netbox.plane_state import plan_from_text
from hwaac.netbox.sync import sync_plan

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def counted() -> Iterator[Counter[str]]:
    """Count every HTTP request sent through requests (pynetbox and the status probe use it): 'GET dcim/devices'."""
    seen: Counter[str] = Counter()
    real = requests.Session.send

    def send(self: requests.Session, req: requests.PreparedRequest, **kw: object) -> requests.Response:
        path = (req.path_url or "").split("?")[0].split("/api/", 1)[-1].rstrip("/")
        seen[f"{req.method} {path}"] += 1
        return real(self, req, **kw)

    requests.Session.send = send  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        requests.Session.send = real  # type: ignore[method-assign]


def measure(folder: Path, url: str, token: str, repeat: int) -> bool:
    intent = folder / "fabric.yml"
    src = folder / "bench.hwaac.yml"
    src.write_text(f"plugin: aiinfra.hwaac.fabric\nsource: netbox\nintent: {intent}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(NETBOX_URL=url, NETBOX_TOKEN=token)
    times = []
    hosts = 0
    for i in range(repeat):
        say(f"ansible-inventory --list {i + 1}/{repeat}")
        t0 = time.perf_counter()
        r = subprocess.run(
            [str(BIN / "ansible-inventory"), "-i", str(src), "--list"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
        )
        times.append(time.perf_counter() - t0)
        if r.returncode != 0:
            print(f"ansible-inventory failed: {r.stderr.strip()[-500:]}")
            return False
        hosts = r.stdout.count('"hwaac_role"')
    with counted() as seen:
        inv = from_netbox(intent, url, token)
    total = sum(seen.values())
    print(f"hosts: {len(inv.hostvars)} (listed {hosts}), groups: {len(inv.groups) + len(inv.children)}")
    print(
        f"ansible-inventory --list: best {min(times):.1f} s, median {statistics.median(times):.1f} s over "
        f"{repeat} runs (target <= 20 s for 16 SUs)"
    )
    methods = Counter(k.split()[0] for k in seen.elements())
    print(f"HTTP requests per inventory load: {total} ({', '.join(f'{m} {n}' for m, n in sorted(methods.items()))})")
    for k, n in sorted(seen.items()):
        print(f"  {k:40} {n}")
    return min(times) <= 20


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sus", type=int, help="grow the demo intent to this many SUs (the target scale: 16)")
    ap.add_argument("--repeat", type=int, default=3, help="inventory loads to time (default 3)")
    ap.add_argument(
        "--existing", action="store_true", help="use NETBOX_URL / NETBOX_TOKEN, which already hold the fabric (no sync)"
    )
    args = ap.parse_args()
    tag = f"{args.sus}su" if args.sus else "demo"
    text = demo_intent_text(args.sus)
    plan = plan_from_text(text, "fabric.yml")
    print(f"fabric {plan.intent.fabric.name} ({tag}): {len(plan.switches)} switches, {len(plan.nodes)} nodes")
    with tempfile.TemporaryDirectory(prefix="hwaac-inv-bench-") as tmp:
        folder = Path(tmp)
        (folder / "fabric.yml").write_text(text)
        if args.existing:
            ok = measure(folder, os.environ["NETBOX_URL"], os.environ["NETBOX_TOKEN"], args.repeat)
        else:
            nb = LocalNetBox(log=say)
            nb.up()
            with nb.fresh(f"bench inventory {tag}") as inst:
                say("sync (untimed)")
                sync_plan(plan, inst.url, inst.token)
                ok = measure(folder, inst.url, inst.token, args.repeat)
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
