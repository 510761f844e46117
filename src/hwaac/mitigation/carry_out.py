"""Carrying out a sweep's drains and undrains: the steps of each action (:mod:`hwaac.mitigation.drain`) merged into
two stages per switch and run by the collection's ``playbooks/mitigate.yml`` (the rollout's patch path), on a lab
or on an inventory of real switches. An undrain opens its links, re-checks them (:mod:`hwaac.mitigation.recheck`),
then restores the routes of those that passed and shuts again those that did not: two runs of the playbook.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hwaac.mitigation import drain, guard, recheck
from hwaac.mitigation.engine import Action, Out, State, drained_again
from hwaac.mitigation.policy import Recheck
from hwaac.plan.model import Link, Plan

Log = Callable[[str], None]
Rendered = Callable[[str], Mapping[str, Any]]
PLAYBOOK = Path(__file__).resolve().parents[3] / "playbooks" / "mitigate.yml"
FIRST = {drain.GRACEFUL: 1, drain.SHUT: 2, drain.OPEN: 1, drain.RESTORE: 2}


@dataclass(frozen=True)
class Where:
    """Where to carry out: a lab by name, or the switches of an Ansible inventory (``work``: its run folder)."""

    lab: str | None = None
    inventory: Path | None = None
    work: Path = Path("runs")

    @classmethod
    def of(cls, lab: str | None, inventory: str | None, state: Path) -> Where:
        """From ``hwaac remediate``'s ``--lab`` / ``-i``; an inventory's runs are kept in the state folder."""
        return cls(lab=lab, inventory=Path(inventory) if inventory else None, work=state / "runs")


@dataclass
class Carried:
    """What carrying out did: the playbook's exit status and log (of the run that failed, else the last), the
    steps run, and each undrained link's re-check, by cable."""

    rc: int = 0
    log: str = ""
    steps: list[drain.Step] = field(default_factory=list)
    rechecks: dict[str, recheck.Verdict] = field(default_factory=dict)

    def recheck_words(self) -> dict[str, str]:
        """Each re-check in words, by cable, for the output."""
        return {c: ("passed: " if v.ok else "FAILED: ") + v.detail for c, v in self.rechecks.items()}

    def failed_rechecks(self) -> dict[str, recheck.Verdict]:
        return {c: v for c, v in self.rechecks.items() if not v.ok}


def kept_out(out: guard.OutOfService, plan: Plan) -> set[str]:
    """The cables that stay drained with ``out``: drained themselves, or a link of a drained switch. An undrain
    leaves them shut (a switch coming back does not reopen a link drained on its own, nor one to a drained
    switch)."""
    return set(out.links) | {
        link.cable_id
        for link in plan.links
        if link.kind != "host" and (link.a_device in out.switches or link.b_device in out.switches)
    }


class _Sessions:
    """The BGP sessions of each link, from the rendered configs (each read once)."""

    def __init__(self, plan: Plan, rendered: Rendered) -> None:
        self.plan, self.rendered = plan, rendered
        self.configs: dict[str, Mapping[str, Any]] = {}

    def __call__(self, link: Link) -> list[drain.Session]:
        for d in (link.a_device, link.b_device):
            if d not in self.configs:
                self.configs[d] = self.rendered(d)
        return drain.link_sessions(link, self.configs)


def _plan(actions: Sequence[Action], plan: Plan, keep: Collection[str]) -> tuple[list[Link], list[Link]]:
    """(links to drain, links to undrain) of the actions to carry out; an undrain leaves ``keep`` alone."""
    drains: dict[str, Link] = {}
    undrains: dict[str, Link] = {}
    for a in actions:
        d = a.decision
        if not a.act or d.action not in guard.ACTIONS:
            continue
        links = guard.links_of(plan, d.action, d.target)
        if d.action in (guard.DRAIN_SWITCH, guard.DRAIN_LINK):
            if d.action == guard.DRAIN_SWITCH and not links:
                raise drain.DrainError(f"{d.target}: no switch-to-switch link in the plan")
            drains.update((link.cable_id, link) for link in links)
        else:
            undrains.update((link.cable_id, link) for link in links if link.cable_id not in keep)
    return list(drains.values()), [link for c, link in undrains.items() if c not in drains]


def opened(actions: Sequence[Action], plan: Plan, keep: Collection[str] = ()) -> list[str]:
    """The cables the undrains among ``actions`` open, each re-checked before its routes come back."""
    return [link.cable_id for link in _plan(actions, plan, keep)[1]]


def steps(actions: Sequence[Action], plan: Plan, rendered: Rendered, keep: Collection[str] = ()) -> list[drain.Step]:
    """The steps of every action to carry out (drains and undrains; others have none), undrains whole (opened and
    restored, as when every re-check passes). ``rendered(switch)`` gives a switch's rendered config_db; ``keep``:
    cables an undrain leaves shut (:func:`kept_out`)."""
    sessions = _Sessions(plan, rendered)
    drains, undrains = _plan(actions, plan, keep)
    return drain.drain_steps([s for link in drains for s in sessions(link)]) + drain.undrain_steps(
        [s for link in undrains for s in sessions(link)]
    )


def stages(all_steps: Sequence[drain.Step]) -> tuple[dict[str, drain.Config], dict[str, drain.Config]]:
    """Per switch, the merge of its stage 1 steps and of its stage 2 steps."""
    merged: tuple[dict[str, drain.Config], dict[str, drain.Config]] = ({}, {})
    for st in all_steps:
        cfg = merged[FIRST[st.stage] - 1].setdefault(st.device, {})
        for table, entries in st.config.items():
            for key, fields in entries.items():
                cfg.setdefault(table, {}).setdefault(key, {}).update(fields)
    return merged


def extra_vars(all_steps: Sequence[drain.Step], pause_s: float, *, save: bool = True) -> dict[str, Any]:
    """``save``: each switch saves its running config after the change (``config save -y``)."""
    one, two = stages(all_steps)
    return {
        "mitigate_stage1": one,
        "mitigate_stage2": two,
        "mitigate_pause_s": round(pause_s),
        "mitigate_hosts": ",".join(sorted(set(one) | set(two))) or "none",
        "mitigate_save": save,
    }


def carry(
    actions: Sequence[Action],
    plan: Plan,
    rendered: Rendered,
    where: Where,
    *,
    pause_s: float,
    checks: Recheck,
    keep: Collection[str] = (),
    open_only: bool = False,
    log: Log = lambda _: None,
) -> Carried:
    """Carry the actions out. Drains: graceful, then shut. Undrains: open, re-check each link, then restore the
    links that passed and shut again those that did not (``open_only``: open, and nothing more)."""
    sessions = _Sessions(plan, rendered)
    drains, undrains = _plan(actions, plan, keep)
    first = drain.drain_steps([s for link in drains for s in sessions(link)])
    opened = {link.cable_id: sessions(link) for link in undrains}
    first += [st for st in drain.undrain_steps([s for ss in opened.values() for s in ss]) if st.stage == drain.OPEN]
    if not first:
        return Carried()
    folder = _work(where) / "recheck"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    todo = [] if open_only else recheck.probes(undrains)
    extra = {**extra_vars(first, pause_s, save=not open_only), **recheck.extra_vars(todo, checks, folder)}
    rc, run_log = run(where, extra, log)
    done = Carried(rc, run_log, list(first))
    if rc != 0 or not todo:
        return done
    done.rechecks = recheck.judge(todo, folder, checks)
    then = []
    for cable, ss in opened.items():
        if done.rechecks[cable].ok:
            then += [st for st in drain.undrain_steps(ss) if st.stage == drain.RESTORE]
        else:
            then += [st for st in drain.drain_steps(ss) if st.stage == drain.SHUT]
    done.rc, done.log = run(where, {**extra_vars(then, 0), **recheck.extra_vars([], checks, folder)}, log)
    done.steps += then
    return done


def settle(
    carried: Carried, actions: Sequence[Action], plan: Plan, state: State, now: datetime, before: Mapping[str, Out]
) -> tuple[list[Action], dict[str, str]]:
    """After a carrying out that succeeded: each link that failed its re-check goes back into ``state`` as drained
    (:func:`hwaac.mitigation.engine.drained_again`), owned as it (or its switch) was in ``before`` (what was out
    before the sweep). Returns those decisions (outcome ``done``) and the outcome of each undrain it touches: a
    link's undrain did not happen; a switch's did, less the links named."""
    failed = carried.failed_rechecks()
    again: list[Action] = []
    outcome: dict[str, str] = {}
    if not failed:
        return again, outcome
    for a in actions:
        d = a.decision
        if not a.act or d.action not in (guard.UNDRAIN_LINK, guard.UNDRAIN_SWITCH):
            continue
        bad = [link.cable_id for link in guard.links_of(plan, d.action, d.target) if link.cable_id in failed]
        if not bad:
            continue
        prior = before.get(f"{d.action.removeprefix('un')}|{d.target}")
        for cable in bad:
            again.append(drained_again(state, a, cable, failed[cable].detail, now, prior))
            outcome[f"{guard.DRAIN_LINK}|{cable}"] = "done"
        words = "; ".join(failed[c].detail for c in bad)
        outcome[f"{d.action}|{d.target}"] = (
            f"re-check failed, drained again: {words}"
            if d.action == guard.UNDRAIN_LINK
            else f"done, but {len(bad)} link(s) failed the re-check and were drained again: {words}"
        )
    return again, outcome


def _work(where: Where) -> Path:
    if where.lab is None:
        return where.work
    from hwaac.lab.api import Lab

    return Lab.load(where.lab).folder / "mitigation"


def run(where: Where, extra: dict[str, Any], log: Log) -> tuple[int, str]:
    """One run of the playbook with ``extra``; (rc, log file)."""
    from hwaac.lab.deploy import run_playbook

    work = _work(where)
    work.mkdir(parents=True, exist_ok=True)
    if where.lab is not None:
        from hwaac.lab.api import Lab
        from hwaac.lab.deploy import inventory
        from hwaac.lab.factory import prepare

        lab = Lab.load(where.lab)
        prepare(lab)
        inv = work / "inventory.json"
        inv.write_text(json.dumps(inventory(lab, Path(lab.render_dir), {n: 1.0 for n in lab.switches}, gate_s=1)))
        forks = 4
    else:
        inv, forks = Path(str(where.inventory)).resolve(), 8
    path = work / "steps.json"
    path.write_text(json.dumps(extra))
    run = run_playbook(PLAYBOOK, inv, path, work, check=False, forks=forks, log=log)
    return run.rc, str(run.log_file)


__all__ = [
    "PLAYBOOK",
    "Carried",
    "Where",
    "carry",
    "extra_vars",
    "kept_out",
    "opened",
    "run",
    "settle",
    "stages",
    "steps",
]
