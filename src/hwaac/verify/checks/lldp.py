"""VerifyLldpNeighbors: each end of every planned cable sees the other end over LLDP (cabling = plan).

A swap shows at both ends of both cables; each cable is reported once, with both ends and the cable whose end
it meets. Hosts' LLDP is read where lldpd runs there; a host without it is judged from the switch end only.
"""

from __future__ import annotations

from collections.abc import Iterable

from hwaac.verify import commands as C
from hwaac.verify.checks.base import Check, Context, cables_in_scope, switch_facts
from hwaac.verify.facts import FactError, LldpNeighbor
from hwaac.verify.inputs import Cable, End, Inputs
from hwaac.verify.results import Result, Status

NO_NEIGHBOUR = "no neighbour"


class VerifyLldpNeighbors(
    Check, stage=1, fault_kind="miswired", requires=("VerifyDevicesAnswer",), reads=(C.LLDP,), reads_on="cables_of"
):
    description = "both ends of every cable see the planned neighbour over LLDP"

    def kind(self, result: Result) -> str | None:
        return "missing" if result.message.startswith(NO_NEIGHBOUR) else "miswired"

    def run(self, ctx: Context) -> Iterable[Result]:
        for cable in cables_in_scope(ctx):
            yield self._cable(ctx, cable)
        yield from self._unplanned(ctx)

    def _cable(self, ctx: Context, cable: Cable) -> Result:
        seen, bad, others, error, unknown = [], False, set(), [], []
        for end in cable.ends():
            if end.device not in ctx.scope:
                continue
            far = cable.other(end.device, end.port)
            try:
                neighbours = ctx.facts.lldp(end.device).get(end.port, [])
            except FactError as exc:
                if end.device in ctx.inputs.hosts and exc.kind in ("failed", "missing"):
                    seen.append(f"{end}: no LLDP on the host")
                elif ctx.down(end.device):
                    unknown.append(end.device)
                    seen.append(f"{end}: not read ({end.device} down)")
                else:
                    error.append(end.device)
                    seen.append(f"{end}: not read: {exc}")
                continue
            if not neighbours:
                bad = True
                seen.append(f"{end} sees no LLDP neighbour")
                continue
            if any(self._matches(ctx.inputs, n, far) for n in neighbours):
                seen.append(f"{end} sees {far}")
                continue
            bad = True
            for n in neighbours:
                where = self._planned_end(ctx.inputs, n)
                if where is None:
                    seen.append(f"{end} sees {n.sysname} {n.port_id} (not a planned end)")
                else:
                    seen.append(f"{end} sees {where[1]} (end of {where[0]})")
                    if where[0] != cable.id:
                        others.add(where[0])
        expected = f"{cable.a} <-> {cable.b}"
        actual = "; ".join(seen) or "not read"
        down = [d for d in (cable.a.device, cable.b.device) if ctx.down(d)]
        if bad:
            message = f"swapped with {', '.join(sorted(others))}" if others else ""
            if not others and all("sees no LLDP neighbour" in s for s in seen if " sees " in s):
                message = f"{NO_NEIGHBOUR}: cable missing, or down (VerifyInterfaceState)"
            return self.cable_result(
                cable, expected, actual, Status.FAIL, fault=down[0] if down else cable.id, message=message
            )
        if error:
            return self.cable_result(cable, expected, actual, Status.ERROR)
        if unknown and not any(" sees " in s for s in seen):
            return self.cable_result(cable, expected, actual, Status.SKIP, explained_by=tuple(unknown))
        return self.cable_result(cable, expected, actual, Status.PASS)

    @staticmethod
    def _matches(inputs: Inputs, n: LldpNeighbor, far: End) -> bool:
        names = {far.port, inputs.port_alias.get((far.device, far.port), far.port)}
        return n.sysname == far.device and (n.port_id in names or n.port_descr in names)

    @staticmethod
    def _planned_end(inputs: Inputs, n: LldpNeighbor) -> tuple[str, End] | None:
        """(cable id, end) of the planned end the neighbour is."""
        for port in (n.port_id, n.port_descr):
            cid = inputs.cable_at.get((n.sysname, port))
            if cid is None:
                alias = {a: p for (d, p), a in inputs.port_alias.items() if d == n.sysname}
                cid = inputs.cable_at.get((n.sysname, alias.get(port, "")))
                port = alias.get(port, port)
            if cid is not None:
                c = inputs.cables[cid]
                return cid, next(e for e in c.ends() if (e.device, e.port) == (n.sysname, port))
        return None

    def _unplanned(self, ctx: Context) -> Iterable[Result]:
        """Switch ports with an LLDP neighbour but no planned cable."""
        for device, lldp in switch_facts(ctx, ctx.facts.lldp):
            front = {p for d, p in ctx.inputs.port_mtu if d == device}
            for port, neighbours in sorted(lldp.items()):
                if (device, port) in ctx.inputs.cable_at:
                    continue
                if (port not in front) if front else not port.startswith("Ethernet"):
                    continue  # the management port's neighbours are not the fabric's
                names = ", ".join(f"{n.sysname} {n.port_id}" for n in neighbours)
                end = f"{device} {port}"
                yield self.unplanned(device, end, "no cable", f"sees {names}", "cable", ends=(end,), fault=end)
