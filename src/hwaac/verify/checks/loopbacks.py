"""VerifyLoopbacksReachable: every switch routes (in its FIB) every loopback the plan makes reachable from it.

Which loopbacks that is follows from eBGP's loop check (hwaac.verify.routing): a leaf reaches every switch; a
spine reaches every leaf but not the other spines when they share its ASN (RFC 7938 section 5.2.1).
"""

from __future__ import annotations

from collections.abc import Iterable

from hwaac.verify import commands as C
from hwaac.verify.checks.base import Check, Context, shorten
from hwaac.verify.facts import FactError
from hwaac.verify.results import Result, Status
from hwaac.verify.routing import explain


class VerifyLoopbacksReachable(Check, stage=3, requires=("VerifyBgpSessions",), reads=(C.ROUTES,)):
    description = "each switch routes the loopbacks of the switches the plan makes reachable from it"

    def run(self, ctx: Context) -> Iterable[Result]:
        inputs = ctx.inputs
        dead = ctx.session_fault()
        down = set(ctx.faults.devices)
        for name in sorted(inputs.switches):
            if name not in ctx.scope:
                continue
            targets = [t for t in sorted(inputs.switches) if t != name and ctx.planned.reaches(name, t)]
            expected = f"{len(targets)} loopbacks routed"
            if ctx.down(name):
                yield self.result(name, expected, "not read", Status.SKIP, devices=(name,), explained_by=(name,))
                continue
            try:
                routes = ctx.facts.routes(name)
            except FactError as exc:
                yield self.result(name, expected, f"not read: {exc}", Status.ERROR, devices=(name,))
                continue
            missing, why, skipped = [], set(), 0
            for t in targets:
                if not ctx.live.reaches(name, t) or t in down:
                    skipped += 1
                    why |= explain(ctx.planned, ctx.live, name, t, dead, down)
                    continue
                route = routes.get(inputs.switches[t].loopback)
                if route is None or not route.selected or not route.fib:
                    missing.append(f"{inputs.switches[t].loopback} ({t})")
            if missing:
                yield self.result(
                    name, expected, f"missing {shorten(missing)}", Status.FAIL, devices=(name,), fault=name
                )
            elif skipped:
                yield self.result(
                    name,
                    expected,
                    f"{len(targets) - skipped} routed; {skipped} not reachable with the faults named",
                    Status.PASS,
                    devices=(name,),
                    explained_by=tuple(sorted(why)),
                )
            else:
                yield self.result(name, expected, expected, Status.PASS, devices=(name,))
