"""VerifyPathMtu: the planned host MTU fits the whole rail path: a Don't-Fragment ping of MTU - 28 bytes
(``ping -M do -s MTU-28``) gets its replies."""

from __future__ import annotations

from collections.abc import Iterable

from hwaac.verify import commands as C
from hwaac.verify.checks.base import LINK_FAULTS, Check, Context
from hwaac.verify.checks.probe_paths import path_faults
from hwaac.verify.facts import FactError
from hwaac.verify.inputs import Inputs, Probe
from hwaac.verify.raw import Command
from hwaac.verify.results import Result, Status

ALL_FAULTS = LINK_FAULTS | {"mtu"}


class VerifyPathMtu(Check, stage=4, requires=("VerifyRailPaths", "VerifyInterfaceMtu")):
    description = "a DF ping of the planned host MTU crosses each rail path"

    def commands(self, inputs: Inputs, device: str) -> list[Command]:
        return [C.ping_df(p.dst, p.src, p.mtu) for p in inputs.probes if p.host == device and p.mtu]

    def run(self, ctx: Context) -> Iterable[Result]:
        rail = {r.object: r for r in ctx.results.get("VerifyRailPaths", [])}
        for probe in ctx.inputs.probes:
            if probe.host in ctx.scope:
                yield self._probe(ctx, probe, rail.get(probe.label))

    def _probe(self, ctx: Context, probe: Probe, rail: Result | None) -> Result:
        kw = {
            "devices": (probe.host, probe.dst_host),
            "cable": probe.cables[0],
            "ends": (f"{probe.host} {probe.iface}", f"{probe.dst_host} {probe.dst_iface}"),
        }
        if probe.mtu is None:
            return self.result(probe.label, "planned MTU", "unknown (no netplan file)", Status.SKIP, **kw)
        size = probe.mtu - C.IPV4_ICMP_OVERHEAD
        expected = f"{size}-byte DF ping answered (MTU {probe.mtu})"
        faults = path_faults(ctx, probe, ALL_FAULTS)
        if faults.broken:
            return self.result(
                probe.label, expected, "no path with the faults named", Status.SKIP, explained_by=faults.broken, **kw
            )
        if rail is not None and rail.status is not Status.PASS:
            return self.result(
                probe.label,
                expected,
                "not judged: the path itself fails",
                Status.SKIP,
                explained_by=rail.explained_by or (probe.label,),
                **kw,
            )
        try:
            ping = ctx.facts.ping_df(probe.host, probe.dst, probe.src, probe.mtu)
        except FactError as exc:
            return self.result(probe.label, expected, f"not read: {exc}", Status.ERROR, **kw)
        if ping.ok and ping.error is None:
            return self.result(probe.label, expected, f"{ping.received}/{ping.transmitted} replies", Status.PASS, **kw)
        parts = [ping.error or f"no reply ({ping.received}/{ping.transmitted})"]
        if ping.frag_needed_mtu:
            parts.append(f"a router says Frag needed, mtu {ping.frag_needed_mtu}")
        if ping.local_mtu:
            parts.append(f"local path MTU {ping.local_mtu}")
        actual = "; ".join(parts)
        if faults.on_path:
            return self.result(probe.label, expected, actual, Status.SKIP, explained_by=faults.on_path, **kw)
        return self.result(probe.label, expected, actual, Status.FAIL, fault=probe.label, **kw)
