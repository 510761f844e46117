"""VerifyBgpSessions: every planned session is Established on both sides, with the planned local and remote
AS; neighbours a switch has but the plan does not are named too."""

from __future__ import annotations

from collections.abc import Iterable

from hwaac.verify import commands as C
from hwaac.verify.checks.base import Check, Context, not_read, switch_facts
from hwaac.verify.facts import FactError
from hwaac.verify.inputs import Session
from hwaac.verify.results import Result, Status


class VerifyBgpSessions(
    Check,
    stage=2,
    fault_kind="session",
    requires=("VerifyDevicesAnswer", "VerifyInterfaceState", "VerifyLldpNeighbors"),
    reads=(C.BGP_SUMMARY,),
):
    description = "planned eBGP sessions Established with the planned ASNs; no unplanned neighbour"

    def run(self, ctx: Context) -> Iterable[Result]:
        for s in ctx.inputs.sessions:
            if s.a.device in ctx.scope or s.b.device in ctx.scope:
                yield self._session(ctx, s)
        yield from self._unplanned(ctx)

    def _session(self, ctx: Context, s: Session) -> Result:
        cable = ctx.inputs.cables.get(s.cable) if s.cable else None
        expected = f"Established; {s.a.device} AS {s.a.asn} <-> {s.b.device} AS {s.b.asn}"
        seen: list[str] = []
        bad: list[str] = []
        unknown: list[str] = []
        error = False
        for local, remote in (s.side(s.a.device), s.side(s.b.device)):
            if local.device not in ctx.scope or local.device not in ctx.inputs.switches:
                continue
            try:
                summary = ctx.facts.bgp(local.device)
            except FactError as exc:
                if not_read(
                    ctx, local.device, exc, seen, unknown, what=f"{local.device}:", down=f"{local.device}: FRR down"
                ):
                    error = True
                else:
                    bad.append(local.device)
                continue
            peer = summary.peers.get(remote.ip)
            problems = []
            if summary.local_as and summary.local_as != local.asn:
                problems.append(f"local AS {summary.local_as} (planned {local.asn})")
            if peer is None:
                problems.append(f"no neighbour {remote.ip}")
            else:
                if peer.remote_as != remote.asn:
                    problems.append(f"remote-as {peer.remote_as} (planned {remote.asn})")
                if not peer.established:
                    why = " (shut down)" if peer.peer_state == "Admin" else ""
                    problems.append(f"{peer.state}{why}")
            if problems:
                bad.append(local.device)
            seen.append(f"{local.device} -> {remote.ip}: " + (", ".join(problems) if problems else "Established"))
        actual = "; ".join(seen) or "not read"
        kw = {
            "cable": s.cable,
            "devices": (s.a.device, s.b.device),
            "ends": (str(cable.a), str(cable.b)) if cable else (f"{s.a.device} {s.a.ip}", f"{s.b.device} {s.b.ip}"),
        }
        obj = f"{s.a.device} {s.a.ip} <-> {s.b.device} {s.b.ip}"
        down = [d for d in (s.a.device, s.b.device) if ctx.down(d)]
        if bad:
            message = ""
            for kind, text in (
                ("down", "cable down (VerifyInterfaceState)"),
                ("miswired", "cable miswired (VerifyLldpNeighbors)"),
                ("missing", "no LLDP neighbour on the cable (VerifyLldpNeighbors)"),
            ):
                if not message and ctx.faults.cable_fault(s.cable, frozenset({kind})):
                    message = text
            if down:
                message = f"{down[0]} down (VerifyDevicesAnswer)"
            return self.result(
                obj, expected, actual, Status.FAIL, fault=down[0] if down else s.id, message=message, **kw
            )
        if error:
            return self.result(obj, expected, actual, Status.ERROR, **kw)
        return self.result(obj, expected, actual, Status.PASS, **kw)

    def _unplanned(self, ctx: Context) -> Iterable[Result]:
        for device, summary in switch_facts(ctx, ctx.facts.bgp):
            planned = {s.side(device)[1].ip for s in ctx.inputs.sessions_of.get(device, [])}
            for ip, peer in sorted(summary.peers.items()):
                if ip not in planned:
                    obj, actual = f"{device} neighbour {ip}", f"AS {peer.remote_as}, {peer.state}"
                    yield self.unplanned(
                        device, obj, "no such neighbour", actual, "BGP neighbour", fault=f"{device} {ip}"
                    )
