"""``hwaac node move|journal|rma-report`` and ``hwaac qualify``: GPU node lifecycle in NetBox
(see :mod:`hwaac.netbox.lifecycle`, :mod:`hwaac.health.qualify`).

Exit status: 0 ok (qualify: admitted); 2 usage, connection or refused change (every refusal is listed; nothing
written); 6 the circuit breaker tripped (no quarantine made; the alert is printed); 7 qualify: the SU is not
admitted (every blocker is printed).
The NetBox comes from ``NETBOX_URL``/``NETBOX_TOKEN`` or is the local one; the token is never printed.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hwaac.clikit import EXIT_OK, add_command, add_fabric, add_group, add_output, fail

EXIT_BREAKER, EXIT_BLOCKED = 6, 7


def _client():
    from hwaac.netbox.connection import connect

    return connect()


def _evidence(path: str | None):
    from hwaac.netbox.lifecycle import Evidence, evidence_from

    if not path:
        return Evidence()
    try:
        return evidence_from(json.loads(Path(path).read_text()))
    except ValueError as exc:  # not JSON, or unknown keys
        raise SystemExit(f"hwaac: --evidence {path}: {exc}") from None


def cmd_move(args: argparse.Namespace) -> int:
    from hwaac.health.lifecycle import BreakerPolicy, TransitionError, parse_state
    from hwaac.netbox.lifecycle import LifecycleError, TransitionRequest, apply_transitions

    try:
        target = parse_state(args.to, field="--to")
        policy = BreakerPolicy(args.max_share, timedelta(seconds=args.window_seconds))
    except (TransitionError, ValueError) as exc:
        return fail("hwaac", exc)
    evidence = _evidence(args.evidence)
    requests = [TransitionRequest(n, target, args.reason, evidence) for n in args.nodes]
    try:
        rep = apply_transitions(
            _client(),
            requests,
            mode="enforce" if args.enforce else "dry_run",
            fabric=args.fabric,
            pool=args.pool or None,
            breaker=policy,
        )
    except LifecycleError as exc:
        return fail("hwaac", exc)
    for o in rep.outcomes:
        print(f"{o.device}: {o.from_state} -> {o.to_state}: {o.result}" + (f" ({o.message})" if o.message else ""))
    if rep.breaker:
        print(f"circuit breaker: {rep.breaker.message}")
    if rep.mode == "dry_run":
        print("dry run: nothing written (add --enforce to write)")
    return EXIT_BREAKER if rep.alerts else EXIT_OK


def cmd_journal(args: argparse.Namespace) -> int:
    from hwaac.netbox.lifecycle import device_journal

    for e in device_journal(_client(), args.node):
        print(f"--- {e['created']} ({e['kind']}) journal entry {e['id']}")
        print(e["comments"] if args.full else e["comments"].split("\n\nEvidence:", 1)[0])
    return EXIT_OK


def cmd_rma_report(args: argparse.Namespace) -> int:
    from hwaac.health.rma import rma_markdown, rma_report
    from hwaac.netbox.lifecycle import device_journal, device_record

    client = _client()
    device = device_record(client, args.node)
    if device is None:
        return fail("hwaac", f"{args.node}: no such device in NetBox")
    now = datetime.now(UTC).isoformat(timespec="seconds")
    report = rma_report(device, device_journal(client, args.node), generated=now)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.node}.rma.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    (out / f"{args.node}.rma.md").write_text(rma_markdown(report))
    print(
        f"wrote {out / (args.node + '.rma.md')} and .json ({len(report['events'])} event(s), "
        f"fault codes: {', '.join(report['fault_codes']) or 'none'})"
    )
    return EXIT_OK


def _read_json(path: Path) -> dict | None:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except ValueError as exc:
        raise SystemExit(f"hwaac: {path}: not JSON ({exc})") from None


def cmd_qualify(args: argparse.Namespace) -> int:
    from hwaac.health.lifecycle import State, state_of
    from hwaac.health.profile import load_profile
    from hwaac.health.qualify import qualify_su
    from hwaac.netbox.lifecycle import LIFECYCLE_FIELD, Evidence, LifecycleError, TransitionRequest, apply_transitions
    from hwaac.plan import build_plan
    from hwaac.validate import load_intent

    plan = build_plan(load_intent(args.fabric))
    nodes = [n.name for n in plan.nodes if n.su == args.su and n.kind == "gpu"]
    reports_dir = Path(args.reports)
    reports = {n: _read_json(reports_dir / f"{n}.burn-in.json") for n in nodes}
    su_report = _read_json(reports_dir / f"su{args.su:02d}.nccl-multi.json")
    client = _client()
    recs = client.read("devices", "id,name,status,custom_fields", name=nodes) if nodes else []
    states = {
        r["name"]: (
            s.value
            if (
                s := state_of((r.get("status") or {}).get("value"), (r.get("custom_fields") or {}).get(LIFECYCLE_FIELD))
            )
            else None
        )
        for r in recs
    }
    q = qualify_su(args.su, nodes, reports, su_report, states, load_profile(args.profile))
    fabric = plan.intent.fabric.name
    if not q.admitted:
        print(f"su{args.su:02d} of {fabric}: NOT admitted, {len(q.blockers)} blocker(s):")
        for b in q.blockers:
            print(f"  {b}")
        return EXIT_BLOCKED
    todo = [n for n in nodes if states.get(n) == State.BURN_IN.value]
    evidence = Evidence(
        verdict="PASS",
        parsed={"qualification": {"su": args.su, "nodes": nodes, "nccl_multi": (su_report or {}).get("status")}},
    )
    requests = [
        TransitionRequest(
            n,
            State.PRODUCTION,
            f"su{args.su:02d} qualified: every node passed burn-in, no link error growth, multi-node all-reduce passed",
            evidence,
        )
        for n in todo
    ]
    try:
        rep = apply_transitions(client, requests, mode="enforce" if args.enforce else "dry_run", fabric=fabric)
    except LifecycleError as exc:
        return fail("hwaac", exc)
    print(f"su{args.su:02d} of {fabric}: admitted ({len(nodes)} nodes)")
    for o in rep.outcomes:
        print(f"  {o.device}: {o.from_state} -> {o.to_state}: {o.result}")
    if not args.enforce:
        print("dry run: nothing written (add --enforce to write)")
    return EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``hwaac node ...`` to the main parser."""
    _node, ns = add_group(sub, "node", "node_command", help="GPU node lifecycle in NetBox: move, journal, RMA report")

    mv = add_command(ns, "move", cmd_move, help="move nodes to a lifecycle state (dry run unless --enforce)")
    mv.add_argument("nodes", nargs="+", help="device names")
    mv.add_argument("--to", required=True, help="planned | burn_in | production | quarantine | rma | returned")
    mv.add_argument("--reason", required=True, help="why, for the journal entry")
    mv.add_argument("--evidence", help="a JSON file of evidence (keys of hwaac.netbox.lifecycle.Evidence)")
    mv.add_argument("--fabric", help="the nodes must be this fabric's; its GPU nodes are the breaker's pool")
    mv.add_argument("--pool", nargs="*", help="the circuit breaker's pool (device names) instead of the fabric")
    mv.add_argument("--max-share", type=float, default=0.5, help="breaker: share of the pool per window (0.5)")
    mv.add_argument("--window-seconds", type=float, default=300, help="breaker: sliding window, seconds (300)")
    mv.add_argument("--enforce", action="store_true", help="write to NetBox (default: dry run)")

    jr = add_command(ns, "journal", cmd_journal, help="print hwaac's journal entries of a node, oldest first")
    jr.add_argument("node")
    jr.add_argument("--full", action="store_true", help="include the evidence JSON")

    rma = add_command(
        ns, "rma-report", cmd_rma_report, help="write NODE.rma.md and NODE.rma.json from the node's journal"
    )
    rma.add_argument("node")
    add_output(rma, "output folder", metavar=None, required=True)

    qa = add_command(
        sub,
        "qualify",
        cmd_qualify,
        help="admit a scalable unit into production when every node passed burn-in "
        "and its links show no error growth; else name each blocker",
    )
    add_fabric(qa, "fabric.yml or the folder holding it (the SU's nodes come from its plan)", metavar=None)
    qa.add_argument("--su", type=int, required=True, help="the SU, 1-based")
    qa.add_argument("--reports", required=True, help="the burn_in role's report folder (burn_in_report_dir)")
    qa.add_argument("--profile", default="hgx-h200-8x400g", help="SKU profile (its counters define 'error growth')")
    qa.add_argument("--enforce", action="store_true", help="write to NetBox (default: dry run)")
