"""Run the catalog: pick the checks (and what they require), collect their commands once, judge by stage."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hwaac.verify.checks import BY_NAME, CATALOG, Check, Context
from hwaac.verify.facts import Facts
from hwaac.verify.inputs import Inputs, load_inputs
from hwaac.verify.raw import Collector, Command, Outputs
from hwaac.verify.results import FaultSet, Result, Status


@dataclass
class Report:
    """The results of the checks asked for, in catalog order, and what the run took."""

    fabric: str
    checks: list[str]
    results: list[Result]
    faults: FaultSet = field(default_factory=FaultSet)
    timings: dict[str, float] = field(default_factory=dict)
    devices: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not any(r.status in (Status.FAIL, Status.ERROR) for r in self.results)

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Status}
        for r in self.results:
            out[r.status.value] += 1
        return out


def select(names: Iterable[str] | None) -> tuple[list[str], list[type[Check]]]:
    """``(asked, to_run)``: the checks asked for (all when None) and those plus what they require, in catalog order.

    Raises:
        ValueError: an unknown check name (the message lists the valid ones).
    """
    asked = list(dict.fromkeys(names)) if names else [c.name for c in CATALOG]
    unknown = [n for n in asked if n not in BY_NAME]
    if unknown:
        raise ValueError(f"unknown check(s) {', '.join(unknown)}; valid: {', '.join(BY_NAME)}")
    need: set[str] = set()
    stack = list(asked)
    while stack:
        n = stack.pop()
        if n not in need:
            need.add(n)
            stack.extend(BY_NAME[n].requires)
    return asked, [c for c in CATALOG if c.name in need]


def requests(inputs: Inputs, checks: Sequence[type[Check]], devices: Iterable[str]) -> dict[str, list[Command]]:
    """device -> the commands the checks read there (each once, in a stable order)."""
    out: dict[str, list[Command]] = {}
    instances = [c() for c in checks]
    for d in devices:
        cmds: dict[str, Command] = {}
        for check in instances:
            for cmd in check.commands(inputs, d):
                cmds.setdefault(cmd.key, cmd)
        if cmds:
            out[d] = list(cmds.values())
    return out


def device_requests(plan_dir: str | Path, device: str, names: Iterable[str] | None = None) -> list[Command]:
    """The commands the checks read on ``device``, from the plan and only the files they depend on (a host's and
    its probe peers' netplan), as the Ansible path asks it once per host.

    Raises:
        ValueError: an unknown check, or a device not in the plan.
        InputError: the plan or a file it needs cannot be used.
    """
    _asked, to_run = select(names)
    inputs = load_inputs(plan_dir, config_dbs=False, netplan_hosts=())
    if device not in inputs.switches and device not in inputs.hosts:
        raise ValueError(f"device {device!r} is not in the plan of {plan_dir}")
    if device in inputs.hosts:
        peers = {p.dst_host for p in inputs.probes if p.host == device}
        inputs = load_inputs(plan_dir, config_dbs=False, netplan_hosts={device, *peers})
    return requests(inputs, to_run, [device]).get(device, [])


def judge(
    inputs: Inputs, outputs: Outputs, names: Iterable[str] | None = None, devices: Iterable[str] | None = None
) -> Report:
    """Judge already collected ``outputs``; ``devices`` limits the objects to those touching them."""
    asked, to_run = select(names)
    scope = frozenset(devices if devices is not None else inputs.devices())
    ctx = Context(inputs, Facts(outputs), scope)
    t = time.monotonic()
    for cls in to_run:
        check = cls()
        results = list(check.run(ctx))
        ctx.results[check.name] = results
        if check.fault_kind is not None:
            for r in results:
                kind = check.kind(r)
                if kind is not None:
                    ctx.faults.add(r, kind)
            ctx.faults_changed()
    report = Report(inputs.fabric, asked, [r for n in asked for r in ctx.results[n]], ctx.faults, devices=sorted(scope))
    report.timings["judge_s"] = time.monotonic() - t
    return report


def verify(
    inputs: Inputs, collector: Collector, names: Iterable[str] | None = None, devices: Iterable[str] | None = None
) -> tuple[Report, Outputs]:
    """Collect what the checks need on ``devices`` (all planned devices when None) and judge it."""
    _asked, to_run = select(names)
    unknown = sorted(set(devices or ()) - set(inputs.devices()))
    if unknown:
        raise ValueError(f"device(s) not in the plan: {', '.join(unknown)}")
    scope = list(devices) if devices is not None else inputs.devices()
    t = time.monotonic()
    outputs = collector.collect(requests(inputs, to_run, scope))
    collect_s = time.monotonic() - t
    report = judge(inputs, outputs, names, scope)
    report.timings["collect_s"] = collect_s
    return report, outputs


def verify_devices(
    plan: Inputs | str | Path, collector: Collector, devices: Iterable[str], names: Iterable[str] | None = None
) -> list[Result]:
    """The batch gate of a rollout: the checks of ``devices`` only (their cables, sessions, routes, probes),
    read from those devices alone; the results. ``plan``: the inputs, or the plan folder to load them from.

    Raises:
        ValueError: an unknown check or device. InputError: the plan folder cannot be used.
    """
    inputs = plan if isinstance(plan, Inputs) else load_inputs(plan)
    report, _ = verify(inputs, collector, names, list(devices))
    return report.results
