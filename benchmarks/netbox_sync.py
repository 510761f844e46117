"""NetBox sync benchmark against the local NetBox (fresh databases, NetBox 4.7.3 served by gunicorn).

Syncs the demo (or ``--sus N`` SUs) and prints objects, HTTP requests and seconds of the first sync and of the
no-op re-sync, against NetBox's own floor (the same payloads as bulk POSTs). Targets: first sync <= 1.3 x floor,
<= 1 HTTP request per 50 objects, a no-op re-sync that writes nothing, the demo in <= 10 s. Method:
benchmarks/README.md.

    .venv/bin/python benchmarks/netbox_sync.py [--sus 16] [--skip-floor]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

from demo_fabric import demo_intent_text

from hwaac.devnetbox.local import LocalNetBox
from hwaac.netbox.plane_state import plan_from_text
from hwaac.netbox.sync import sync_plan, write
from hwaac.netbox.sync.client import Client
from hwaac.plan.model import Plan


def say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def demo_plan(sus: int | None) -> Plan:
    """The demo's plan, or the demo intent grown to ``sus`` SUs (benchmarks/demo_fabric.py)."""
    return plan_from_text(demo_intent_text(sus), f"demo ({sus or 2} SUs)")


@contextlib.contextmanager
def watch_writes(timed: dict[str, float] | None = None) -> Iterator[None]:
    """Progress line per write request; with ``timed``, add each POST's seconds to it (by object type)."""
    real: Callable[..., Any] = Client.call

    def call(self: Client, what: str, kind: str, fn: Callable[[], Any]) -> Any:
        if what == "GET":
            return real(self, what, kind, fn)
        t0 = time.perf_counter()
        try:
            return real(self, what, kind, fn)
        finally:
            dt = time.perf_counter() - t0
            if timed is not None and what == "POST":
                timed[kind] = timed.get(kind, 0.0) + dt
            say(f"  {what} {kind}: {dt:.2f} s")

    with mock.patch.object(Client, "call", call):
        yield


FLOOR_IP_CHUNK = 8000  # ~250 bytes of JSON per address


def floor(nb: LocalNetBox, plan: Plan, tag: str) -> tuple[float, dict[str, float], dict[str, int]]:
    """NetBox's floor: the sync's payloads, one POST per object type (addresses: as few POSTs as NetBox accepts),
    POSTs timed alone."""
    timed: dict[str, float] = {}
    # one request of 8,192 cables outlasts gunicorn's default 600 s worker timeout on 2 cores
    os.environ["HWAAC_NETBOX_REQUEST_TIMEOUT"] = "7200"
    # NetBox refuses a request body over Django's DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB): 16,544 addresses in one
    # body exceed it, so addresses go in bodies of at most FLOOR_IP_CHUNK (about 2 MB); every other type in one
    with (
        nb.fresh(f"bench floor {tag}") as inst,
        watch_writes(timed),
        mock.patch.object(write, "CHUNK", {"ip-addresses": FLOOR_IP_CHUNK}),
        mock.patch.object(write, "DEFAULT_CHUNK", 10**9),
    ):
        rep = sync_plan(plan, inst.url, inst.token)
    return sum(timed.values()), timed, rep.requests


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sus", type=int, help="grow the demo intent to this many SUs (the target scale: 16)")
    ap.add_argument("--skip-floor", action="store_true", help="do not measure NetBox's floor")
    args = ap.parse_args()

    tag = f"{args.sus}su" if args.sus else "demo"
    t0 = time.perf_counter()
    plan = demo_plan(args.sus)
    print(
        f"fabric {plan.intent.fabric.name} ({tag}): {len(plan.switches)} switches, {len(plan.nodes)} nodes, "
        f"{len(plan.links)} links (planned in {time.perf_counter() - t0:.1f} s)"
    )
    nb = LocalNetBox(log=say)
    nb.up()

    say("first sync on a fresh database")
    with nb.fresh(f"bench sync {tag}") as inst:
        with watch_writes():
            first = sync_plan(plan, inst.url, inst.token)
        say("no-op re-sync")
        noop = sync_plan(plan, inst.url, inst.token)
        ifaces = int(Client(inst.url, inst.token).nb.dcim.interfaces.count())

    written = first.objects_written()
    total = sum(first.requests.values())
    print("objects written per type (create/update/delete):")
    for kind, ch in first.changes.items():
        if ch:
            print(f"  {kind:20} {len(ch.creates):6} / {len(ch.updates)} / {len(ch.deletes)}")
    print(f"  ({ifaces} interfaces instantiated by NetBox from the device types' templates, not written one by one)")
    print(f"objects written: {written}")
    reqs = ", ".join(f"{m} {n}" for m, n in sorted(first.requests.items()))
    print(f"HTTP requests, first sync: {total} ({reqs}); {first.writes} writes")
    print(
        f"requests per 50 objects written: {50 * total / written:.2f} all, {50 * first.writes / written:.2f} "
        f"writes (target <= 1)"
    )
    print(f"first sync: {first.seconds:.1f} s")
    noop_reqs = ", ".join(f"{m} {n}" for m, n in sorted(noop.requests.items()))
    print(
        f"no-op re-sync: {noop.seconds:.1f} s ({noop_reqs}); writes: {noop.writes}, changes: "
        f"{'none' if not noop.changed else 'SOME'}" + (" (target <= 10 s)" if not args.sus else "")
    )
    ok = 50 * total <= written and noop.writes == 0 and not noop.changed and (args.sus or noop.seconds <= 10)

    if not args.skip_floor:
        say("floor: one bulk POST per object type on another fresh database")
        fl, per_kind, _ = floor(nb, plan, tag)
        print("NetBox floor (one POST per type): " + ", ".join(f"{k} {v:.1f} s" for k, v in per_kind.items()))
        print(f"NetBox floor: {fl:.1f} s")
        print(f"first sync / floor: {first.seconds / fl:.2f} (target <= 1.3)")
        ok = ok and first.seconds <= 1.3 * fl
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
