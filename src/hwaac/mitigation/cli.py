"""``hwaac remediate INTENT_DIR FINDINGS|--alertmanager URL --state DIR [--apply]``: one remediation sweep.

Findings (a health report, an Alertmanager webhook payload, or the alerts active in an Alertmanager) go through the
policy and the guard rails; a dry run (the default) prints the decisions and the switch steps and writes nothing;
``--apply`` carries them out (``--lab`` or ``-i``) and appends every decision to ``DIR/decisions.jsonl``.
``--drain-switch NAME --reason TEXT`` (and the other ``--drain-*``/``--undrain-*``) is a person's request
(:mod:`hwaac.mitigation.manual`); ``--netbox`` records what was carried out (:mod:`hwaac.mitigation.netbox_journal`).
Exit status 0 done, 1 failed or refused, 2 usage, 3 breaker tripped: docs/mitigation.md "Exit status".
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
import urllib.request
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hwaac.clikit import EXIT_FAILED, EXIT_OK, EXIT_USAGE, add_command, add_fabric, fail

if TYPE_CHECKING:  # the NetBox journal is imported when a sweep records in NetBox
    from hwaac.mitigation.netbox_journal import Mode

EXIT_BREAKER = 3
ALERTMANAGER_TIMEOUT_S = 10


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``hwaac remediate`` to the main parser."""
    from hwaac.mitigation import manual

    p = add_command(
        sub,
        "remediate",
        cmd_remediate,
        help="drain, undrain or quarantine from network health findings, behind guard rails (dry run unless --apply)",
        description="Exit 0 done, 1 carrying out (or recording it in NetBox) failed or a "
        "person's request refused, 2 usage, 3 breaker tripped.",
    )
    add_fabric(p)
    p.add_argument(
        "findings",
        metavar="FINDINGS",
        nargs="?",
        help="`hwaac health fabric --format json` output, or an Alertmanager webhook payload; - reads stdin",
    )
    p.add_argument(
        "--alertmanager",
        metavar="URL",
        help="instead of FINDINGS: the alerts active in this Alertmanager (GET URL/api/v2/alerts)",
    )
    p.add_argument("--state", metavar="DIR", required=True, help="state folder (state.json, decisions.jsonl)")
    p.add_argument("--policy", metavar="FILE", help="policy YAML (default: hwaac/mitigation/data/policy.yaml)")
    p.add_argument(
        "--render",
        metavar="DIR",
        help="rendered folder to take switch configs from (default: render them from the intent)",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="decide and print, change nothing (the default)")
    mode.add_argument("--apply", action="store_true", help="carry the decisions out and keep the state")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--lab", metavar="NAME", help="carry out on this twin (hwaac lab)")
    where.add_argument("-i", "--inventory", metavar="FILE", help="carry out on the switches of this Ansible inventory")
    p.add_argument(
        "--pause",
        type=float,
        metavar="S",
        help="seconds between graceful shutdown and session shut (default: the policy's graceful_s)",
    )
    p.add_argument(
        "--netbox",
        action="store_true",
        help="record what was carried out in NetBox: a journal entry "
        "on each switch and cable, the cables' status (NETBOX_URL / NETBOX_TOKEN, else the local NetBox; "
        "the token is never printed); with a dry run, print what would be recorded",
    )
    p.add_argument("--now", metavar="ISO", help="decide as at this time (default: now; for replays and tests)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output (default text)")
    manual.add_arguments(p)


_usage = partial(fail, "hwaac remediate")  # the usage exit status, after a line on stderr


def _read_findings(name: str | None, alertmanager: str | None) -> Any:
    if alertmanager:
        url = alertmanager.rstrip("/") + "/api/v2/alerts?active=true&silenced=false&inhibited=false"
        with urllib.request.urlopen(url, timeout=ALERTMANAGER_TIMEOUT_S) as resp:
            return json.loads(resp.read())
    text = sys.stdin.read() if name == "-" else Path(str(name)).read_text(encoding="utf-8")
    return json.loads(text)


def cmd_remediate(args: argparse.Namespace) -> int:
    from hwaac.errors import IntentError
    from hwaac.mitigation import carry_out, engine, guard, manual
    from hwaac.mitigation.findings import FindingsError, Targets, read
    from hwaac.mitigation.policy import PolicyError, load_policy
    from hwaac.plan import build_plan
    from hwaac.validate import load_intent

    person = manual.request(args)
    wrong = manual.usage(args)
    if wrong:
        return _usage(wrong)
    if person is None and bool(args.findings) == bool(args.alertmanager):
        return _usage("give FINDINGS, --alertmanager URL or a person's --drain-switch, --drain-link, ... (one of them)")
    if args.alertmanager and not args.alertmanager.startswith(("http://", "https://")):
        return _usage(f"--alertmanager: {args.alertmanager!r} is not an http(s) URL")
    if args.apply and not (args.lab or args.inventory):
        return _usage("--apply needs where to carry out: --lab NAME or -i INVENTORY")
    try:
        now = datetime.fromisoformat(args.now) if args.now else datetime.now(UTC)
    except ValueError:
        return _usage(f"--now: {args.now!r} is not an ISO 8601 time (e.g. 2026-12-05T03:00:00+00:00)")
    if now.tzinfo is None:
        return _usage(f"--now: {args.now!r} has no time zone (e.g. 2026-12-05T03:00:00+00:00)")
    try:
        policy = load_policy(args.policy)
    except PolicyError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        return _usage(f"--policy: {exc}")

    def findings_now() -> list[Any]:
        return read(_read_findings(args.findings, args.alertmanager)) if person is None else []

    late = bool(args.apply and args.alertmanager)  # read under the state lock: what is active when it sweeps
    try:
        findings = [] if late else findings_now()
    except (OSError, ValueError, FindingsError) as exc:
        return _usage(f"{args.findings or args.alertmanager}: {exc}")
    try:
        plan = build_plan(load_intent(args.fabric))
    except IntentError as exc:
        print(exc, file=sys.stderr)
        return EXIT_FAILED
    client = None
    if args.netbox:
        from hwaac.netbox.connection import connect
        from hwaac.netbox.errors import NetBoxError

        try:
            client = connect()
        except NetBoxError as exc:
            return _usage(f"--netbox: {str(exc).splitlines()[0]}")
    store = engine.Store(args.state)
    fabric, targets = guard.Fabric(plan), Targets(plan)

    def rendered(switch: str) -> dict[str, Any]:
        if args.render:
            return json.loads((Path(args.render) / "switches" / switch / "config_db.json").read_text())
        from hwaac.render.sonic import render_config_db

        return render_config_db(plan, next(s for s in plan.switches if s.name == switch))

    if person is not None:
        return manual.run(args, policy, plan, store, rendered, client, now, show=_print, record=_record)
    if not args.apply:
        try:
            state = store.load() if (Path(args.state) / "state.json").exists() else engine.State()
        except ValueError as exc:
            return _usage(str(exc))
        after = copy.deepcopy(state)
        actions = engine.sweep(policy, fabric, targets, after, findings, now)
        todo = carry_out.steps(actions, plan, rendered, carry_out.kept_out(after.out_of_service(), plan))
        would = {f"{a.decision.action}|{a.decision.target}": "done" for a in actions if a.act}
        keep = carry_out.kept_out(after.out_of_service(), plan)
        netbox = _record(client, plan, actions, would, now, "dry_run", keep) if client is not None else None
        checks = {
            c: f"would ping across it ({policy.recheck.pings} pings, at most "
            f"{policy.recheck.max_loss_pct:g}% lost) before restoring its routes"
            for c in carry_out.opened(actions, plan, keep)
        }
        _print(args, actions, todo, dry_run=True, netbox=netbox, rechecks=checks)
        if isinstance(netbox, str):
            return EXIT_FAILED
        return EXIT_BREAKER if any(a.decision.rule == "breaker" for a in actions) else EXIT_OK
    if late:
        store.mark_started(time.time())  # the rulebook's source: what it asked for before now, this sweep covers
    with store.locked():
        now = now if args.now else datetime.now(UTC)  # the time it sweeps, not when it began waiting
        try:
            state = store.load()
        except ValueError as exc:
            return _usage(str(exc))
        try:
            findings = findings_now() if late else findings
        except (OSError, ValueError, FindingsError) as exc:
            return _usage(f"{args.alertmanager}: {exc}")
        before = copy.deepcopy(state)
        actions = engine.sweep(policy, fabric, targets, state, findings, now)
        keep = carry_out.kept_out(state.out_of_service(), plan)
        pause = policy.graceful_s if args.pause is None else args.pause
        say = (lambda line: print(line, file=sys.stderr)) if args.format == "text" else (lambda _: None)
        where = carry_out.Where.of(args.lab, args.inventory, Path(args.state))
        carried = carry_out.carry(
            actions, plan, rendered, where, pause_s=pause, checks=policy.recheck, keep=keep, log=say
        )
        rc, todo = carried.rc, carried.steps
        done = "done" if rc == 0 else f"failed (ansible-playbook rc {rc}; log {carried.log})"
        outcome = {f"{a.decision.action}|{a.decision.target}": done for a in actions if a.act}
        if rc != 0:
            before.streaks, before.sweeps = state.streaks, state.sweeps  # persistence still counts
            state = before
        else:
            again, settled = carry_out.settle(carried, actions, plan, state, now, before.out)
            actions, outcome = actions + again, {**outcome, **settled}
        outcome.update(_nodes_and_notes(client, plan, actions, state, now))
        store.save(state)
        netbox = (
            _record(client, plan, actions, outcome, now, "enforce", carry_out.kept_out(state.out_of_service(), plan))
            if client is not None and rc == 0
            else None
        )
        if isinstance(netbox, str):  # the switch changes stay done; the outcome says what NetBox lacks
            failed = f"done; NetBox journal failed: {netbox.splitlines()[0]}"
            outcome = {k: failed if v == "done" and k.split("|")[0] in guard.ACTIONS else v for k, v in outcome.items()}
        store.log(actions, now, sweep=state.sweeps, dry_run=False, outcome=outcome)
    _print(args, actions, todo, dry_run=False, outcome=outcome, netbox=netbox, rechecks=carried.recheck_words())
    undone = any(v.startswith(("not carried out", "failed")) for v in outcome.values())
    if rc != 0 or isinstance(netbox, str) or undone:
        return EXIT_FAILED
    tripped = state.tripped_at is not None and any(a.decision.rule == "breaker" for a in actions)
    return EXIT_BREAKER if tripped else EXIT_OK


def _nodes_and_notes(client: Any, plan: Any, actions: list[Any], state: Any, now: datetime) -> dict[str, str]:
    """The outcomes of what is not a switch step: a quarantine goes through the node lifecycle in NetBox (without
    ``--netbox`` it is not carried out, and not kept as done: the next sweep asks again); a notice is logged."""
    from hwaac.mitigation.engine import NOTIFY, QUARANTINE
    from hwaac.mitigation.quarantine import quarantine
    from hwaac.netbox.errors import NetBoxError

    out = {f"{NOTIFY}|{a.decision.target}": "logged" for a in actions if a.act and a.decision.action == NOTIFY}
    nodes = [a for a in actions if a.act and a.decision.action == QUARANTINE]
    if not nodes:
        return out
    if client is None:
        got = {
            f"{QUARANTINE}|{a.decision.target}": "not carried out: a quarantine needs --netbox (the node "
            "lifecycle is kept in NetBox)"
            for a in nodes
        }
    else:
        try:
            got = dict(quarantine(client, nodes, plan.intent.fabric.name, now))
        except NetBoxError as exc:
            why = " ".join(line.strip() for line in str(exc).splitlines())
            got = {f"{QUARANTINE}|{a.decision.target}": f"failed: {why}" for a in nodes}
    for key, word in got.items():
        if not word.startswith("done"):
            state.out.pop(key, None)
    return {**out, **got}


def _record(
    client: Any, plan: Any, actions: list[Any], outcome: dict[str, str], now: datetime, mode: Mode, keep: Any = ()
) -> Any:
    """Record the actions whose outcome is ``done`` in NetBox (``keep``: cables an undrain left drained): the
    report, or the error's message."""
    from hwaac.mitigation.netbox_journal import record_actions
    from hwaac.netbox.errors import NetBoxError

    rows = [{**a.to_dict(), "outcome": outcome.get(f"{a.decision.action}|{a.decision.target}", "")} for a in actions]
    try:
        return record_actions(client, plan, rows, when=now, mode=mode, keep=keep)
    except NetBoxError as exc:
        return str(exc)


def _print(
    args: argparse.Namespace,
    actions: list[Any],
    todo: list[Any],
    *,
    dry_run: bool,
    outcome: dict[str, str] | None = None,
    netbox: Any = None,
    rechecks: dict[str, str] | None = None,
) -> None:
    """``netbox``: what was (or would be) recorded there, the error's message, or None without ``--netbox``;
    ``rechecks``: cable -> its re-check before an undrain, in words."""
    if isinstance(netbox, str):
        print(f"hwaac remediate: NetBox: {netbox}", file=sys.stderr)
    if args.format == "json":
        out = {
            "dry_run": dry_run,
            "decisions": [a.to_dict() for a in actions],
            "steps": [s.to_dict() for s in todo],
            "rechecks": rechecks or {},
            "outcome": outcome or {},
        }
        if args.netbox:
            out["netbox"] = {"error": netbox} if isinstance(netbox, str) else netbox.to_dict() if netbox else None
        print(json.dumps(out, indent=1))
        return
    verb = "would" if dry_run else "did"
    if not actions:
        print("no finding matched the policy: nothing to do")
    for a in actions:
        d = a.decision
        state = ("ACT" if a.act else "skip") if dry_run else (outcome or {}).get(f"{d.action}|{d.target}", "skip")
        print(
            f"{state:6} {d.action} {d.target}: {d.rule} - {d.reason}"
            + (f" (policy rule {a.policy_rule})" if a.policy_rule else "")
            + (f"; reason: {a.note}" if a.note else "")
        )
    for s in todo:
        tables = ", ".join(f"{t} {len(e)}" for t, e in s.config.items())
        print(f"  {verb} {s.stage:8} {s.device}: {tables}")
    for cable, words in (rechecks or {}).items():
        print(f"  re-check {cable}: {words}")
    if netbox is not None and not isinstance(netbox, str):
        for line in netbox.lines() or ["netbox: nothing to record"]:
            print(line)


__all__ = ["cmd_remediate", "register"]
