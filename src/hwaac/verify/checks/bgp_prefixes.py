"""VerifyBgpPrefixesReceived: every Established session carries at least what the plan says it must.

The lower bound is what the converged fabric sends over that session of the prefixes the plan originates
(loopbacks, leaves' host prefixes), after the receiver's AS-path loop check (hwaac.verify.routing); on a leaf's
uplink that is the other leaves' host prefixes and loopbacks (and the spine's loopback). Other prefixes (a
storage subnet, a default route) only add to the count.
"""

from __future__ import annotations

from collections.abc import Iterable

from hwaac.verify import commands as C
from hwaac.verify.checks.base import Check, Context
from hwaac.verify.facts import FactError
from hwaac.verify.results import Result, Status
from hwaac.verify.routing import explain


class VerifyBgpPrefixesReceived(Check, stage=3, requires=("VerifyBgpSessions",), reads=(C.BGP_SUMMARY,)):
    description = "each session receives at least the planned prefixes"

    def run(self, ctx: Context) -> Iterable[Result]:
        dead = ctx.session_fault()
        down = set(ctx.faults.devices)
        prefix_cables = ctx.host_prefix_cables()
        for s in ctx.inputs.sessions:
            for local, remote in (s.side(s.a.device), s.side(s.b.device)):
                if local.device not in ctx.scope or local.device not in ctx.inputs.switches:
                    continue
                obj = f"{local.device} from {remote.device} {remote.ip}"
                kw = {
                    "cable": s.cable,
                    "devices": (local.device, remote.device),
                    "ends": (f"{local.device} {local.ip}", f"{remote.device} {remote.ip}"),
                }
                planned = ctx.planned.received(local.device, s.id, remote.device)
                if s.id in dead:
                    yield self.result(
                        obj, f">= {planned} prefixes", "session down", Status.SKIP, explained_by=(dead[s.id],), **kw
                    )
                    continue
                live = ctx.live.received(local.device, s.id, remote.device)
                try:
                    peer = ctx.facts.bgp(local.device).peers.get(remote.ip)
                except FactError as exc:
                    yield self.result(obj, f">= {planned} prefixes", f"not read: {exc}", Status.ERROR, **kw)
                    continue
                got = peer.prefixes_received if peer is not None and peer.prefixes_received is not None else 0
                expected = f">= {planned} prefixes"
                if live < planned:
                    expected += f" ({live} with the faults named)"
                if got >= planned:
                    yield self.result(obj, expected, str(got), Status.PASS, **kw)
                elif got >= live:
                    why: set[str] = set()
                    for origin in ctx.planned.origins:
                        if ctx.planned.reaches(remote.device, origin) and not ctx.live.reaches(remote.device, origin):
                            why |= explain(ctx.planned, ctx.live, remote.device, origin, dead, down)
                        gone = set(ctx.planned.origins[origin]) - set(ctx.live.origins.get(origin, ()))
                        for p in gone:
                            why |= {c for c in prefix_cables.get(p, ("", []))[1] if c in ctx.faults.cables}
                            if origin in down:
                                why.add(origin)
                    yield self.result(obj, expected, str(got), Status.PASS, explained_by=tuple(sorted(why)), **kw)
                else:
                    yield self.result(obj, expected, str(got), Status.FAIL, fault=s.id, **kw)
