"""What every check has: its name, stage, the commands it reads per device, and the context it judges in.

Checks run by stage (docs/verify.md): 0 devices answer, 1 links (state, cabling, MTU), 2 BGP sessions,
3 routing (prefixes, ECMP, loopbacks), 4 host probes. A FAIL of stage 0-2 names a fault that later stages
account for: their expectations come from the plan minus those faults (the *live* plan).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

from hwaac.verify.facts import FactError, Facts
from hwaac.verify.inputs import Cable, Inputs
from hwaac.verify.raw import Command
from hwaac.verify.results import FaultSet, Result, Status
from hwaac.verify.routing import Edge, Routing

LINK_FAULTS = frozenset({"down", "missing", "miswired", "session"})  # a cable with one of these carries no traffic


@dataclass
class Context:
    """The inputs, the facts of the devices in ``scope``, and the faults named by the stages run so far."""

    inputs: Inputs
    facts: Facts
    scope: frozenset[str]
    faults: FaultSet = field(default_factory=FaultSet)
    results: dict[str, list[Result]] = field(default_factory=dict)

    def down(self, device: str) -> bool:
        return device in self.faults.devices

    def faults_changed(self) -> None:
        """Drop what was derived from ``faults`` (the runner calls it after each check that adds faults)."""
        for name in ("_session_fault", "live", "_prefix_live", "_upstream", "_upstream_faults"):
            self.__dict__.pop(name, None)

    def session_fault(self) -> dict[str, str]:
        """session id -> the fault it is down for (its cable, or a device at one end)."""
        if "_session_fault" not in self.__dict__:
            self.__dict__["_session_fault"] = self._session_fault_now()
        return self.__dict__["_session_fault"]

    def upstream(self, switch: str, origin: str) -> set[tuple[str, str]]:
        """``planned.upstream``, cached."""
        cache = self.__dict__.setdefault("_upstream", {})
        if (switch, origin) not in cache:
            cache[(switch, origin)] = self.planned.upstream(switch, origin)
        return cache[(switch, origin)]

    def upstream_faults(self, switch: str, origin: str, kinds: frozenset[str]) -> frozenset[str]:
        """The faults on the multipath DAG from ``switch`` towards ``origin``: a down peer, a cable fault of
        ``kinds``, or what a dead session is down for. The same for every probe between two leaves, so cached."""
        cache = self.__dict__.setdefault("_upstream_faults", {})
        key = (switch, origin, kinds)
        if key not in cache:
            dead = self.session_fault()
            found: set[str] = set()
            for x, sid in self.upstream(switch, origin):
                peer = self.planned.peer_over(x, sid)
                if peer is not None and self.down(peer):
                    found.add(peer)
                if self.faults.cable_fault(sid, kinds):
                    found.add(sid)
                elif sid in dead:
                    found.add(dead[sid])
            cache[key] = frozenset(found)
        return cache[key]

    def _session_fault_now(self) -> dict[str, str]:
        out = {}
        for s in self.inputs.sessions:
            dev = next((d for d in (s.a.device, s.b.device) if self.down(d)), None)
            if dev is not None:
                out[s.id] = dev
            elif self.faults.cable_fault(s.cable, LINK_FAULTS):
                out[s.id] = s.cable or s.id
        return out

    def host_prefix_cables(self) -> dict[str, tuple[str, list[str]]]:
        """host prefix -> (its leaf, its cables)."""
        return self.inputs.prefix_cables

    def prefix_live(self, prefix: str) -> bool | None:
        """Whether the leaf has the host prefix connected (a leaf port of one of its cables oper up); None when
        the leaf's links were not read."""
        cache = self.__dict__.setdefault("_prefix_live", {})
        if prefix not in cache:
            cache[prefix] = self._prefix_live_now(prefix)
        return cache[prefix]

    def _prefix_live_now(self, prefix: str) -> bool | None:
        leaf, cables = self.inputs.prefix_cables[prefix]
        if self.down(leaf):
            return False
        try:
            links = self.facts.links(leaf)
        except FactError:
            return None
        ports = [self.inputs.cables[c].b.port for c in cables]
        return any(links[p].oper_up for p in ports if p in links)

    def _routing(self, live: bool) -> Routing:
        inputs = self.inputs
        down = set(self.faults.devices) if live else set()
        dead = self.session_fault() if live else {}
        edges = tuple(
            Edge(s.id, s.a.device, s.b.device)
            for s in inputs.sessions
            if s.id not in dead and s.a.device in inputs.switches and s.b.device in inputs.switches
        )
        origins = {}
        for name, sw in inputs.switches.items():
            if name in down:
                continue
            prefixes = [sw.loopback]
            for p in inputs.host_prefixes.get(name, {}):
                if not live or self.prefix_live(p) is not False:
                    prefixes.append(p)
            origins[name] = tuple(prefixes)
        asn = {n: s.asn for n, s in inputs.switches.items()}
        return Routing(asn, edges, origins, inputs.max_paths)

    @cached_property
    def planned(self) -> Routing:
        return self._routing(live=False)

    @cached_property
    def live(self) -> Routing:
        """Valid once stages 0-2 ran (their faults are in ``faults``)."""
        return self._routing(live=True)


class Check:
    """A check of the catalog: a subclass is named by its class name, sets :attr:`description`, declares the rest
    as class keywords (``class VerifyX(Check, stage=1, requires=(...), reads=(C.LINKS,))``) and implements
    :meth:`run`; :meth:`commands` is overridden when ``reads`` on the devices of ``reads_on`` is not enough."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    stage: ClassVar[int] = 0
    # the kind of fault its FAILs record for later stages (None: later stages do not depend on it)
    fault_kind: ClassVar[str | None] = None
    requires: ClassVar[tuple[str, ...]] = ()
    reads: ClassVar[tuple[Command, ...]] = ()  # what commands() asks of each device in reads_on
    reads_on: ClassVar[str] = "switches"  # an attribute of Inputs: the device names the check reads

    def __init_subclass__(
        cls,
        *,
        stage: int = 0,
        requires: tuple[str, ...] = (),
        fault_kind: str | None = None,
        reads: tuple[Command, ...] = (),
        reads_on: str = "switches",
        **kw: object,
    ) -> None:
        super().__init_subclass__(**kw)
        cls.name, cls.stage, cls.requires, cls.fault_kind = cls.__name__, stage, requires, fault_kind
        cls.reads, cls.reads_on = reads, reads_on

    def commands(self, inputs: Inputs, device: str) -> list[Command]:
        return list(self.reads) if device in getattr(inputs, self.reads_on) else []

    def kind(self, result: Result) -> str | None:
        """The fault kind ``result`` records when it FAILs (default ``fault_kind``)."""
        return self.fault_kind

    def run(self, ctx: Context) -> Iterable[Result]:
        raise NotImplementedError

    # helpers for the subclasses
    def result(self, obj: str, expected: str, actual: str, status: Status, **kw: object) -> Result:
        return Result(self.name, obj, expected, actual, status, **kw)  # type: ignore[arg-type]

    def unplanned(self, device: str, obj: str, none: str, actual: str, what: str, **kw: object) -> Result:
        """A FAIL for ``what`` that ``device`` has and the plan has not: ``obj`` says where, ``none`` what the plan
        expects there (``<none> (none planned)``); ``kw`` go to :class:`Result` (``fault`` at least)."""
        return self.result(
            obj, f"{none} (none planned)", actual, Status.FAIL, devices=(device,), message=f"unplanned {what}", **kw
        )

    def cable_result(self, cable: Cable, expected: str, actual: str, status: Status, **kw: object) -> Result:
        return self.result(
            cable.label,
            expected,
            actual,
            status,
            cable=cable.id,
            ends=(str(cable.a), str(cable.b)),
            devices=(cable.a.device, cable.b.device),
            **kw,
        )


def cables_in_scope(ctx: Context, kinds: tuple[str, ...] | None = None) -> list[Cable]:
    """The planned cables with an end on a device in scope, by id."""
    return [
        c
        for c in sorted(ctx.inputs.cables.values(), key=lambda c: c.id)
        if (kinds is None or c.kind in kinds) and (c.a.device in ctx.scope or c.b.device in ctx.scope)
    ]


def shorten(items: list[str], limit: int = 6) -> str:
    """``a, b, c and 4 more``."""
    head = ", ".join(items[:limit])
    return head + (f" and {len(items) - limit} more" if len(items) > limit else "")


def not_read(
    ctx: Context, device: str, exc: FactError, seen: list[str], unknown: list[str], *, what: str, down: str
) -> bool:
    """Note a fact of ``device`` that could not be read. A device that is down (its own FAIL of stage 0) goes to
    ``unknown`` and ``down`` to ``seen``; else ``seen`` gets ``what not read: exc`` and the answer is True: an
    error no fault explains."""
    if ctx.down(device):
        unknown.append(device)
        seen.append(down)
        return False
    seen.append(f"{what} not read: {exc}")
    return True


def switch_facts[T](ctx: Context, read: Callable[[str], T]) -> Iterator[tuple[str, T]]:
    """(switch, ``read(switch)``) for each switch in scope, by name, passing over those whose fact cannot be read
    (VerifyDevicesAnswer reports them)."""
    for device in sorted(ctx.scope & set(ctx.inputs.switches)):
        try:
            fact = read(device)
        except FactError:
            continue
        yield device, fact
