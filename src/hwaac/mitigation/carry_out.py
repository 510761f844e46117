"""Carrying out a sweep's drains and undrains: the steps of each action (:mod:`hwaac.mitigation.drain`) merged into
two stages per switch and run by the collection's ``playbooks/mitigate.yml`` (the rollout's patch path), on a lab
or on an inventory of real switches.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hwaac.mitigation import drain, guard
from hwaac.mitigation.engine import Action
from hwaac.plan.model import Plan

Log = Callable[[str], None]
PLAYBOOK = Path(__file__).resolve().parents[3] / "playbooks" / "mitigate.yml"
FIRST = {drain.GRACEFUL: 1, drain.SHUT: 2, drain.OPEN: 1, drain.RESTORE: 2}


def steps(actions: Sequence[Action], plan: Plan, rendered: Callable[[str], Mapping[str, Any]]) -> list[drain.Step]:
    """The steps of every action to carry out (drains and undrains; others have none). ``rendered(switch)`` gives
    a switch's rendered config_db."""
    by_cable = {link.cable_id: link for link in plan.links}
    out: list[drain.Step] = []
    cache: dict[str, Mapping[str, Any]] = {}

    def configs(devices: Sequence[str]) -> dict[str, Mapping[str, Any]]:
        for d in devices:
            if d not in cache:
                cache[d] = rendered(d)
        return cache

    for a in actions:
        d = a.decision
        if not a.act or d.action not in guard.ACTIONS:
            continue
        if d.action in (guard.DRAIN_LINK, guard.UNDRAIN_LINK):
            link = by_cable[d.target]
            sessions = drain.link_sessions(link, configs([link.a_device, link.b_device]))
        else:
            peers = sorted({x for link in plan.links if link.kind != "host" and d.target in (link.a_device,
                                                                                           link.b_device)
                            for x in (link.a_device, link.b_device)})
            sessions = drain.switch_sessions(plan, d.target, configs(peers))
        out += drain.drain_steps(sessions) if d.action.startswith("drain") else drain.undrain_steps(sessions)
    return out


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
    return {"mitigate_stage1": one, "mitigate_stage2": two, "mitigate_pause_s": round(pause_s),
            "mitigate_hosts": ",".join(sorted(set(one) | set(two))) or "none", "mitigate_save": save}


def run_on_lab(lab_name: str | None, all_steps: Sequence[drain.Step], *, pause_s: float, check: bool = False,
               save: bool = True, log: Log = lambda _: None) -> tuple[int, str]:
    """Run the steps on a lab's switches; (rc, log file)."""
    from hwaac.lab.api import Lab
    from hwaac.lab.deploy import inventory, run_playbook
    from hwaac.lab.factory import prepare

    lab = Lab.load(lab_name)
    prepare(lab)
    work = lab.folder / "mitigation"
    work.mkdir(parents=True, exist_ok=True)
    inv = work / "inventory.json"
    inv.write_text(json.dumps(inventory(lab, Path(lab.render_dir), {n: 1.0 for n in lab.switches}, gate_s=1)))
    extra = work / "steps.json"
    extra.write_text(json.dumps(extra_vars(all_steps, pause_s, save=save)))
    run = run_playbook(PLAYBOOK, inv, extra, work, check=check, forks=4, log=log)
    return run.rc, str(run.log_file)


def run_on_inventory(inventory_file: Path, work: Path, all_steps: Sequence[drain.Step], *, pause_s: float,
                     check: bool = False, save: bool = True, log: Log = lambda _: None) -> tuple[int, str]:
    """Run the steps on the switches of an Ansible inventory; (rc, log file)."""
    from hwaac.lab.deploy import run_playbook

    work.mkdir(parents=True, exist_ok=True)
    extra = work / "steps.json"
    extra.write_text(json.dumps(extra_vars(all_steps, pause_s, save=save)))
    run = run_playbook(PLAYBOOK, inventory_file.resolve(), extra, work, check=check, forks=8, log=log)
    return run.rc, str(run.log_file)


__all__ = ["PLAYBOOK", "extra_vars", "run_on_inventory", "run_on_lab", "stages", "steps"]
