"""VerifyEcmpRoutes: every leaf holds every other leaf's host prefixes with the planned ECMP width.

The width is the number of sessions the converged fabric installs (hwaac.verify.routing): with parallel links to
each spine, every uplink session; ``maximum-paths`` caps it. The next hops must be the planned peers of live
sessions. Read from ``show ip route json``: the selected route's next hops that are in the FIB.
"""

from __future__ import annotations

from collections.abc import Iterable

from hwaac.verify import commands as C
from hwaac.verify.checks.base import Check, Context, shorten
from hwaac.verify.facts import FactError
from hwaac.verify.inputs import Inputs
from hwaac.verify.raw import Command
from hwaac.verify.results import Result, Status
from hwaac.verify.routing import explain


class VerifyEcmpRoutes(Check, stage=3, requires=("VerifyBgpSessions",)):
    description = "each leaf routes every remote host prefix over the planned number of next hops"

    def commands(self, inputs: Inputs, device: str) -> list[Command]:
        sw = inputs.switches.get(device)
        return [C.ROUTES] if sw is not None and sw.role == "leaf" else []

    def run(self, ctx: Context) -> Iterable[Result]:
        inputs = ctx.inputs
        dead = ctx.session_fault()
        down = set(ctx.faults.devices)
        prefix_cables = ctx.host_prefix_cables()
        for leaf, sw in sorted(inputs.switches.items()):
            if sw.role != "leaf" or leaf not in ctx.scope:
                continue
            remote = {p: origin for origin, ps in inputs.host_prefixes.items() if origin != leaf for p in ps}
            widths = sorted({ctx.planned.width(leaf, o) for o in set(remote.values())})
            expected = f"{len(remote)} remote host prefixes, {'/'.join(map(str, widths))} next hops each"
            if ctx.down(leaf):
                yield self.result(leaf, expected, "not read", Status.SKIP, devices=(leaf,), explained_by=(leaf,))
                continue
            peer_ip = {s.id: s.side(leaf)[1].ip for s in inputs.sessions_of.get(leaf, [])}
            try:
                routes = ctx.facts.routes(leaf)
            except FactError as exc:
                yield self.result(leaf, expected, f"not read: {exc}", Status.ERROR, devices=(leaf,))
                continue
            wrong, why, degraded, absent_ok = [], set(), 0, 0
            for prefix, origin in sorted(remote.items(), key=lambda kv: _key(kv[0])):
                planned = ctx.planned.width(leaf, origin)
                live_prefix = prefix in ctx.live.origins.get(origin, ())
                want = ctx.live.width(leaf, origin) if live_prefix else 0
                if want < planned:
                    degraded += 1
                    why |= explain(ctx.planned, ctx.live, leaf, origin, dead, down)
                    if not live_prefix:
                        why |= {c for c in prefix_cables[prefix][1] if c in ctx.faults.cables}
                        why |= {origin} & down
                route = routes.get(prefix)
                hops = route.fib if route is not None and route.selected and route.installed else ()
                if want == 0:
                    absent_ok += 1
                    continue  # not reachable with the faults named: present or not, not judged
                allowed = {peer_ip[sid] for sid in ctx.live.nexthops(leaf, origin) if sid in peer_ip}
                strangers = sorted(h for h in hops if h not in allowed)
                if not hops:
                    wrong.append(f"{prefix} missing (expected {want})")
                elif len(hops) != want or strangers:
                    extra = f", unplanned next hop {', '.join(strangers)}" if strangers else ""
                    wrong.append(f"{prefix} {len(hops)} next hops (expected {want}){extra}")
            if wrong:
                yield self.result(
                    leaf, expected, f"{len(wrong)} wrong: {shorten(wrong)}", Status.FAIL, devices=(leaf,), fault=leaf
                )
            elif degraded:
                actual = f"as expected with the faults named ({degraded} prefixes below plan"
                actual += f", {absent_ok} not reachable)" if absent_ok else ")"
                yield self.result(leaf, expected, actual, Status.PASS, devices=(leaf,), explained_by=tuple(sorted(why)))
            else:
                yield self.result(leaf, expected, expected, Status.PASS, devices=(leaf,))


def _key(prefix: str) -> tuple[int, ...]:
    addr, _, plen = prefix.partition("/")
    return (*(int(x) for x in addr.split(".")), int(plen or 32))
