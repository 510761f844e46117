"""A person's drain or undrain: ``hwaac remediate INTENT_DIR --drain-switch NAME --reason TEXT --state DIR`` (and
``--undrain-switch``, ``--drain-link CABLE``, ``--undrain-link CABLE``). It goes through the same guard rails,
decision log (policy rule ``manual``, the reason as ``note``), state and carrying out as a sweep. A target a person
drained stays out until a person puts it back: the sweeps never undrain it. A request is carried out again when it
is already so: the switches come to match it, and nothing changes where they do.

``--open-only`` with an undrain carries out its first stage alone: the sessions come up with every route still
marked GRACEFUL_SHUTDOWN, so the target takes no traffic while checks run (``playbooks/maintenance.yml``). It stays
out of service and is not saved on the switches: one that reboots comes back drained. Why: ``docs/mitigation.md``.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any

from hwaac.mitigation import carry_out, drain, engine, guard
from hwaac.mitigation.policy import MANUAL, Policy
from hwaac.plan.model import Plan

EXIT_USAGE, EXIT_FAILED, EXIT_BREAKER = 2, 1, 3
FLAGS = {
    "drain_switch": guard.DRAIN_SWITCH,
    "undrain_switch": guard.UNDRAIN_SWITCH,
    "drain_link": guard.DRAIN_LINK,
    "undrain_link": guard.UNDRAIN_LINK,
}
UNDO = {guard.UNDRAIN_LINK: guard.DRAIN_LINK, guard.UNDRAIN_SWITCH: guard.DRAIN_SWITCH}
OPENED = "opened"  # the outcome of --open-only: not "done", so NetBox records no undrain


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of a person's request, on ``hwaac remediate``'s parser."""
    g = p.add_argument_group("a person's drain or undrain (instead of FINDINGS), behind the same guard rails")
    one = g.add_mutually_exclusive_group()
    for attr, metavar, why in (
        ("drain_switch", "NAME", "drain this spine or super spine; only a person puts it back"),
        ("undrain_switch", "NAME", "put this switch back in service"),
        ("drain_link", "CABLE", "drain this switch-to-switch link; only a person puts it back"),
        ("undrain_link", "CABLE", "put this link back in service"),
    ):
        one.add_argument("--" + attr.replace("_", "-"), dest=attr, metavar=metavar, help=why)
    g.add_argument("--reason", metavar="TEXT", help="why (required with them): kept in the state and the log")
    g.add_argument(
        "--open-only",
        action="store_true",
        help="with an undrain: only bring the sessions up, every "
        "route still marked graceful-shutdown, so the target takes no traffic while it is checked; it "
        "stays out of service",
    )


def request(args: argparse.Namespace) -> tuple[str, str] | None:
    """(action, target) a person asks for, or None."""
    return next(((action, getattr(args, attr)) for attr, action in FLAGS.items() if getattr(args, attr, None)), None)


def usage(args: argparse.Namespace) -> str | None:
    """What is wrong with a person's request, or None."""
    asked = request(args)
    if asked is None:
        return (
            "--reason and --open-only go with --drain-switch, --undrain-switch, --drain-link or --undrain-link"
            if args.reason is not None or args.open_only
            else None
        )
    flag = "--" + asked[0].replace("_", "-")
    if args.findings or args.alertmanager:
        return f"{flag} is instead of FINDINGS and --alertmanager"
    if not (args.reason or "").strip():
        return f"{flag} needs --reason TEXT (why: it is kept in the state and the decision log)"
    if args.open_only and asked[0] not in UNDO:
        return "--open-only goes with --undrain-switch or --undrain-link"
    return None


def decide(
    fabric: guard.Fabric,
    rails: guard.GuardRails,
    state: engine.State,
    action: str,
    target: str,
    now: datetime,
    note: str,
    *,
    open_only: bool = False,
) -> engine.Action:
    """Decide a person's request and update ``state`` as if it were carried out: a drain goes in as manual (one
    already out is taken over: the sweeps leave it from now on), an undrain comes out (with ``open_only`` it
    stays out, and a target that is not out is refused: opening what is in service means nothing)."""
    out = state.out_of_service()
    d = guard.decide(fabric, rails, out, action, target, now)
    state.tripped_at = out.tripped_at
    key = f"{UNDO.get(action, action)}|{target}"
    if d.allowed and open_only:
        if key not in state.out:
            d = guard.Decision(
                action,
                target,
                False,
                "not_drained",
                f"{target} is not drained: --open-only opens the sessions of a drained target",
            )
        else:
            d = dataclasses.replace(
                d, reason="opened: sessions up, every route still marked graceful-shutdown; stays out of service"
            )
            state.out[key].manual, state.out[key].note = True, note
    elif d.allowed and action in UNDO:
        state.out.pop(key, None)
    elif d.allowed and key in state.out:
        state.out[key].manual, state.out[key].note = True, note
    elif d.allowed:
        guard.record(out, d, now)
        state.out[key] = engine.Out(action, target, MANUAL, now, manual=True, note=note)
        state.acted = list(out.acted)
    return engine.Action(d, MANUAL, note=note)


def run(
    args: argparse.Namespace,
    policy: Policy,
    plan: Plan,
    store: engine.Store,
    rendered: Callable[[str], Any],
    client: Any,
    now: datetime,
    *,
    show: Callable[..., None],
    record: Callable[..., Any],
) -> int:
    """``hwaac remediate`` for a person's request; the exit status (1: refused, or carrying it out failed)."""
    action, target = request(args) or ("", "")
    fabric, rails, open_only = guard.Fabric(plan), policy.rails(), bool(args.open_only)

    def keep(state: engine.State) -> set[str]:
        """The cables the request leaves shut: those still out (with --open-only, its own target's opened)."""
        out = state.out_of_service()
        if open_only:
            out.links.discard(target)
            out.switches.discard(target)
        return carry_out.kept_out(out, plan)

    def todo(a: engine.Action, state: engine.State) -> list[drain.Step]:
        steps = carry_out.steps([a], plan, rendered, keep(state))
        return [s for s in steps if s.stage == drain.OPEN] if open_only else steps

    def done(a: engine.Action, what: str) -> dict[str, str]:
        return {f"{action}|{target}": what} if a.act else {}

    try:
        if not args.apply:
            state = store.load()
            a = decide(fabric, rails, state, action, target, now, args.reason, open_only=open_only)
            steps = todo(a, state)
            would = done(a, OPENED if open_only else "done")
            netbox = (
                record(client, plan, [a], would, now, "dry_run", carry_out.kept_out(state.out_of_service(), plan))
                if client is not None
                else None
            )
            show(args, [a], steps, dry_run=True, netbox=netbox)
            return _refused(a) or (EXIT_FAILED if isinstance(netbox, str) else 0)
        with store.locked():
            state = store.load()
            before = copy.deepcopy(state)
            a = decide(fabric, rails, state, action, target, now, args.reason, open_only=open_only)
            say = (lambda line: print(line, file=sys.stderr)) if args.format == "text" else (lambda _: None)
            pause = 0 if open_only else policy.graceful_s if args.pause is None else args.pause
            where = carry_out.Where.of(args.lab, args.inventory, store.folder)
            carried = carry_out.carry(
                [a],
                plan,
                rendered,
                where,
                pause_s=pause,
                checks=policy.recheck,
                keep=keep(state),
                open_only=open_only,
                log=say,
            )
            rc, steps = carried.rc, carried.steps
            outcome = done(
                a,
                (OPENED if open_only else "done")
                if rc == 0
                else f"failed (ansible-playbook rc {rc}; log {carried.log})",
            )
            actions = [a]
            if rc != 0:
                state = before
            else:
                again, settled = carry_out.settle(carried, actions, plan, state, now, before.out)
                actions, outcome = actions + again, {**outcome, **settled}
            store.save(state)
            netbox = (
                record(client, plan, actions, outcome, now, "enforce", carry_out.kept_out(state.out_of_service(), plan))
                if client is not None and rc == 0
                else None
            )
            if isinstance(netbox, str):
                outcome = {
                    k: f"done; NetBox journal failed: {netbox.splitlines()[0]}" if v == "done" else v
                    for k, v in outcome.items()
                }
            store.log(actions, now, sweep=state.sweeps, dry_run=False, outcome=outcome)
    except (OSError, ValueError) as exc:  # an unreadable state or rendered config, or one without the sessions
        print(f"hwaac remediate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    show(args, actions, steps, dry_run=False, outcome=outcome, netbox=netbox, rechecks=carried.recheck_words())
    rechecked = len(actions) > 1  # a link the undrain opened failed its re-check and is drained again
    return _refused(a) or (EXIT_FAILED if rc != 0 or isinstance(netbox, str) or rechecked else 0)


def _refused(a: engine.Action) -> int:
    """0 when allowed; else says why on stderr: 3 for the breaker, else 1."""
    d = a.decision
    if d.allowed:
        return 0
    print(f"hwaac remediate: refused: {d.action} {d.target}: {d.rule} - {d.reason}", file=sys.stderr)
    return EXIT_BREAKER if d.rule == "breaker" else EXIT_FAILED


__all__ = ["OPENED", "add_arguments", "decide", "request", "run", "usage"]
