"""VerifyDevicesAnswer: every device answers the collector, and every switch's FRR answers vtysh."""

from __future__ import annotations

from collections.abc import Iterable

from hwaac.verify import commands as C
from hwaac.verify.checks.base import Check, Context
from hwaac.verify.facts import FactError
from hwaac.verify.inputs import Inputs
from hwaac.verify.raw import Command
from hwaac.verify.results import Result, Status


class VerifyDevicesAnswer(Check, stage=0, fault_kind="device"):
    """A device that cannot be read, or a switch whose routing daemons do not answer, is down: its own FAIL,
    and every other result that depends on it is attributed to it."""

    description = "devices answer; switches' FRR (bgpd, zebra) answers vtysh"

    def commands(self, inputs: Inputs, device: str) -> list[Command]:
        return [C.LINKS, C.BGP_SUMMARY] if device in inputs.switches else [C.LINKS]

    def run(self, ctx: Context) -> Iterable[Result]:
        for device in ctx.inputs.devices():
            if device not in ctx.scope:
                continue
            is_switch = device in ctx.inputs.switches
            expected = "answers; FRR answers vtysh" if is_switch else "answers"
            why = ctx.facts.unreachable(device)
            if why is not None:
                yield self.result(device, expected, f"unreachable: {why}", Status.FAIL, devices=(device,), fault=device)
                continue
            try:
                ctx.facts.links(device)
                if is_switch:
                    ctx.facts.bgp(device)
            except FactError as exc:
                if exc.kind in ("daemon_down", "unreachable"):
                    yield self.result(
                        device,
                        expected,
                        f"FRR down: {exc}" if exc.kind == "daemon_down" else f"unreachable: {exc}",
                        Status.FAIL,
                        devices=(device,),
                        fault=device,
                    )
                else:
                    yield self.result(device, expected, str(exc), Status.ERROR, devices=(device,))
                continue
            yield self.result(device, expected, expected, Status.PASS, devices=(device,))
