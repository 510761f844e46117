"""VerifyInterfaceMtu: every cabled port has its planned MTU (switch: config_db PORT.mtu; host: netplan)."""

from __future__ import annotations

from collections.abc import Iterable

from hwaac.verify import commands as C
from hwaac.verify.checks.base import Check, Context, cables_in_scope, not_read
from hwaac.verify.facts import FactError
from hwaac.verify.inputs import End, Inputs
from hwaac.verify.results import Result, Status


def planned_mtu(inputs: Inputs, end: End) -> int | None:
    if end.device in inputs.hosts:
        return next((r.mtu for r in inputs.hosts[end.device].rails if r.iface == end.port), None)
    return inputs.port_mtu.get((end.device, end.port))


class VerifyInterfaceMtu(
    Check, stage=1, fault_kind="mtu", requires=("VerifyDevicesAnswer",), reads=(C.LINKS,), reads_on="cables_of"
):
    description = "both ends of every cable have the planned MTU"

    def run(self, ctx: Context) -> Iterable[Result]:
        for cable in cables_in_scope(ctx):
            want = {e: planned_mtu(ctx.inputs, e) for e in cable.ends()}
            if all(v is None for v in want.values()):
                continue  # no rendered files: nothing planned to compare with
            expected = "; ".join(f"{e} {m}" for e, m in want.items() if m is not None)
            seen: list[str] = []
            unknown: list[str] = []
            bad, error = False, False
            for end, mtu in want.items():
                if end.device not in ctx.scope or mtu is None:
                    continue
                try:
                    link = ctx.facts.links(end.device).get(end.port)
                except FactError as exc:
                    if not_read(
                        ctx, end.device, exc, seen, unknown, what=str(end), down=f"{end} not read ({end.device} down)"
                    ):
                        error = True
                    continue
                if link is None or link.mtu is None:
                    seen.append(f"{end} no such interface")
                    continue  # VerifyInterfaceState names a missing interface
                seen.append(f"{end} {link.mtu}")
                bad = bad or link.mtu != mtu
            actual = "; ".join(seen)
            if bad:
                yield self.cable_result(cable, expected, actual, Status.FAIL, fault=cable.id)
            elif error:
                yield self.cable_result(cable, expected, actual, Status.ERROR)
            elif unknown and len(unknown) == len([e for e in want if e.device in ctx.scope]):
                yield self.cable_result(cable, expected, actual, Status.SKIP, explained_by=tuple(unknown))
            else:
                yield self.cable_result(cable, expected, actual, Status.PASS)
