"""VerifyRailPaths: a host's rail address leaves through that rail (``ip -j route get DST from SRC``) and
reaches the same rail of a host in another SU (``ping -I SRC DST``)."""

from __future__ import annotations

from collections.abc import Iterable

from hwaac.verify import commands as C
from hwaac.verify.checks.base import LINK_FAULTS, Check, Context
from hwaac.verify.checks.probe_paths import path_faults
from hwaac.verify.facts import FactError
from hwaac.verify.inputs import Inputs, Probe
from hwaac.verify.raw import Command
from hwaac.verify.results import Result, Status


class VerifyRailPaths(Check, stage=4, requires=("VerifyBgpSessions",)):
    description = "each rail address leaves through its rail and reaches the same rail in another SU"

    def commands(self, inputs: Inputs, device: str) -> list[Command]:
        out = []
        for p in inputs.probes:
            if p.host == device:
                out += [C.route_get(p.dst, p.src), C.ping(p.dst, p.src)]
        return out

    def run(self, ctx: Context) -> Iterable[Result]:
        for probe in ctx.inputs.probes:
            if probe.host in ctx.scope:
                yield self._probe(ctx, probe)

    def _probe(self, ctx: Context, probe: Probe) -> Result:
        kw = {
            "devices": (probe.host, probe.dst_host),
            "cable": probe.cables[0],
            "ends": (f"{probe.host} {probe.iface}", f"{probe.dst_host} {probe.dst_iface}"),
        }
        expected = f"egress {probe.iface}, reply from {probe.dst}"
        faults = path_faults(ctx, probe, LINK_FAULTS)
        if faults.broken:
            return self.result(
                probe.label, expected, "no path with the faults named", Status.SKIP, explained_by=faults.broken, **kw
            )
        try:
            route = ctx.facts.route_get(probe.host, probe.dst, probe.src)
            ping = ctx.facts.ping(probe.host, probe.dst, probe.src)
        except FactError as exc:
            return self.result(probe.label, expected, f"not read: {exc}", Status.ERROR, **kw)
        problems = []
        if route.error is not None:
            problems.append(f"no route ({route.error})")
        elif route.dev != probe.iface:
            problems.append(f"egress {route.dev} ({f'table {route.table}' if route.table else 'main table'})")
        if ping.error is not None:
            problems.append(f"ping failed: {ping.error}")
        elif not ping.ok:
            problems.append(f"no reply ({ping.received}/{ping.transmitted})")
        if not problems:
            actual = f"egress {route.dev}, {ping.received}/{ping.transmitted} replies"
            return self.result(probe.label, expected, actual, Status.PASS, **kw)
        if faults.on_path:  # a named fault on one of the possible paths may be what the probe met
            return self.result(
                probe.label, expected, "; ".join(problems), Status.SKIP, explained_by=faults.on_path, **kw
            )
        return self.result(probe.label, expected, "; ".join(problems), Status.FAIL, fault=probe.label, **kw)
