"""VerifyInterfaceState: both ends of every planned cable are admin up and oper up (``ip -j link show``)."""

from __future__ import annotations

from collections.abc import Iterable

from hwaac.verify import commands as C
from hwaac.verify.checks.base import Check, Context, cables_in_scope
from hwaac.verify.facts import FactError
from hwaac.verify.inputs import End
from hwaac.verify.results import Result, Status


class VerifyInterfaceState(
    Check, stage=1, fault_kind="down", requires=("VerifyDevicesAnswer",), reads=(C.LINKS,), reads_on="cables_of"
):
    description = "both ends of every cable admin up and oper up"

    def run(self, ctx: Context) -> Iterable[Result]:
        for cable in cables_in_scope(ctx):
            bad: list[End] = []
            unknown: list[End] = []
            error: list[End] = []
            seen: list[str] = []
            for end in cable.ends():
                state = self._end(ctx, end)
                if state is None:
                    continue
                kind, text = state
                seen.append(f"{end}: {text}")
                {"bad": bad, "unknown": unknown, "error": error, "ok": []}[kind].append(end)
            actual = "; ".join(seen) or "not read"
            expected = f"{cable.a} up/up; {cable.b} up/up"
            down = [e.device for e in (*bad, *unknown) if ctx.down(e.device)]
            if bad:
                fault = down[0] if down else cable.id
                yield self.cable_result(cable, expected, actual, Status.FAIL, fault=fault)
            elif error:
                yield self.cable_result(cable, expected, actual, Status.ERROR)
            elif unknown:
                yield self.cable_result(cable, expected, actual, Status.SKIP, explained_by=tuple(down))
            else:
                yield self.cable_result(cable, expected, actual, Status.PASS)

    def _end(self, ctx: Context, end: End) -> tuple[str, str] | None:
        """(ok|bad|unknown|error, text), or None when the end's device is not in scope."""
        if end.device not in ctx.scope:
            return None
        if ctx.down(end.device):
            try:
                links = ctx.facts.links(end.device)
            except FactError:
                return ("unknown", f"not read ({end.device} down)")
        else:
            try:
                links = ctx.facts.links(end.device)
            except FactError as exc:
                return ("error", f"not read: {exc}")
        link = links.get(end.port)
        if link is None:
            return ("bad", "no such interface")
        admin = "up" if link.admin_up else "down"
        oper = "up" if link.oper_up else link.operstate or "?"
        extra = " (NO-CARRIER)" if "NO-CARRIER" in link.flags else ""
        text = f"admin {admin}, oper {oper}{extra}"
        return ("ok" if link.admin_up and link.oper_up else "bad", "up/up" if link.admin_up and link.oper_up else text)
