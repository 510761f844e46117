"""``hwaac probe``: a node's pinglist, one sweep of its probes into a results document, and the long-running
responder every node runs (``docs/network-health.md`` "Active probing").

    hwaac probe pinglist INTENT --host NODE [--json] [--peers K] [--sports S]
    hwaac probe send INTENT --host NODE --out FILE [--count N] [--interval S] [--timeout S] [--paths STATE]
                     [--no-paths] [--netns NAME] [--responders]
    hwaac probe respond --bind IP [--bind IP ...] [--port N] [--netns NAME] [--duration S] [--freebind]

Exit status: 0 done (``send`` measures, ``hwaac health fabric`` judges); 2 usage (a host the plan has no GPU node
for, an unwritable output, an address that cannot be bound); 1 an invalid intent, as every ``hwaac`` command.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path

from hwaac.clikit import EXIT_OK, Sub, add_fabric, add_group, add_subcommands, fail


def _usage(command: str, msg: str) -> int:
    """The usage exit status, after ``hwaac probe COMMAND: MSG`` on stderr."""
    return fail(f"hwaac probe {command}", msg)


def _netns(p: argparse.ArgumentParser) -> None:
    p.add_argument("--netns", metavar="NAME", help="open the sockets in this network namespace")


def _list_opts(p: argparse.ArgumentParser) -> None:
    from hwaac.probe.pinglist import PEERS, SPORTS

    add_fabric(p)
    p.add_argument("--host", required=True, metavar="NODE", help="the GPU node whose flows these are")
    p.add_argument("--peers", type=int, default=PEERS, metavar="K", help=f"peers per rail port (default {PEERS})")
    p.add_argument(
        "--sports",
        type=int,
        default=SPORTS,
        metavar="S",
        help=f"source ports per peer, one ECMP flow each (default {SPORTS})",
    )


def _flows(args: argparse.Namespace, command: str):  # -> list[Flow] | int
    from hwaac.netbox.load import load_fabric
    from hwaac.plan import build_plan
    from hwaac.probe.pinglist import pinglist

    plan = build_plan(load_fabric(args.fabric), validate=False)
    gpu = {n.name for n in plan.nodes if n.kind == "gpu"}
    if args.host not in gpu:
        return _usage(
            command, f"--host {args.host}: no GPU node of that name in the plan (e.g. {min(gpu, default='-')})"
        )
    try:
        return pinglist(plan, peers=args.peers, sports=args.sports, hosts=[args.host])
    except ValueError as exc:
        return _usage(command, str(exc))


def cmd_pinglist(args: argparse.Namespace) -> int:
    from hwaac.probe.model import flow_dict

    flows = _flows(args, "pinglist")
    if isinstance(flows, int):
        return flows
    if args.json:
        print(json.dumps([flow_dict(f) for f in flows], indent=1))
        return EXIT_OK
    for f in flows:
        print(f"{f.src_if:8} {f.src_ip:15} -> {f.dst_host:16} {f.dst_ip:15} rail {f.rail} udp {f.sport} -> {f.dport}")
    print(f"{len(flows)} flows from {args.host}", file=sys.stderr)
    return EXIT_OK


def cmd_send(args: argparse.Namespace) -> int:
    from hwaac.fileio import write_atomic
    from hwaac.probe.agent import run_probes
    from hwaac.probe.model import ProbeResults, write_results

    flows = _flows(args, "send")
    if isinstance(flows, int):
        return flows
    cache: dict = {}
    if args.paths and Path(args.paths).exists():
        try:
            loaded = json.loads(Path(args.paths).read_text())
            cache = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError) as exc:
            print(f"hwaac probe send: --paths {args.paths}: not read ({exc}); learning paths anew", file=sys.stderr)
    started = time.time()
    try:
        results = run_probes(
            flows,
            netns_of=lambda _h: args.netns,
            count=args.count,
            interval=args.interval,
            timeout=args.timeout,
            learn_paths=not args.no_paths,
            path_cache=cache,
            responders=args.responders,
        )
    except (ValueError, OSError) as exc:
        return _usage("send", str(exc))
    ended = time.time()
    doc = ProbeResults(args.host, started, ended, results)
    try:
        write_results(args.out, doc)
        if args.paths:
            write_atomic(args.paths, json.dumps(cache) + "\n")
    except OSError as exc:
        return _usage("send", f"{exc.filename}: {exc.strerror or exc}")
    sent = sum(r.sent for r in results)
    lost = sum(r.forward_lost or 0 for r in results)
    paths = sum(1 for r in results if r.path_complete)
    errors = sum(1 for r in results if r.errors)
    print(
        f"wrote {args.out}: {len(results)} flows, {sent} probes, {lost} lost forward, {paths} complete paths, "
        f"{errors} flows with errors ({ended - started:.1f} s)"
    )
    return EXIT_OK


def cmd_respond(args: argparse.Namespace) -> int:
    from hwaac.probe.responder import respond

    stop = [False]

    def ask_stop(_sig: int, _frame: object) -> None:
        stop[0] = True

    old = {s: signal.signal(s, ask_stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        stats = respond(
            args.bind,
            args.port,
            netns=args.netns,
            stop=lambda: stop[0],
            duration=args.duration,
            freebind=args.freebind,
            ready=lambda: print(
                f"hwaac probe respond: answering on {', '.join(f'{a}:{args.port}' for a in args.bind)}",
                file=sys.stderr,
                flush=True,
            ),
        )
    except OSError as exc:
        return _usage("respond", f"{exc.strerror or exc} (--bind {' '.join(args.bind)} --port {args.port})")
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    print("hwaac probe respond: " + ", ".join(f"{k} {v}" for k, v in stats.items()), file=sys.stderr)
    return EXIT_OK


SUBCOMMANDS = {  # hwaac probe's, in the order of its help; the options of each are added in register
    "pinglist": Sub(cmd_pinglist, "the flows a node probes (per rail port: peers in other SUs, source ports)"),
    "send": Sub(
        cmd_send,
        "probe a node's pinglist from this machine and write the results document",
        "Run on the node (or with --netns in its namespace). Exit 0 done, 2 usage.",
    ),
    "respond": Sub(
        cmd_respond,
        "answer probes (long running; SIGTERM or SIGINT ends it cleanly)",
        "Exit 0 on SIGTERM/SIGINT or after --duration, 2 when an address cannot be bound.",
    ),
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``hwaac probe`` to the main parser."""
    from hwaac.probe.pinglist import DPORT

    _probe, ps = add_group(
        sub, "probe", "probe_command", help="active probes of the rail fabric: pinglist, send, respond"
    )
    cmd = add_subcommands(ps, SUBCOMMANDS)
    _list_opts(cmd["pinglist"])
    cmd["pinglist"].add_argument("--json", action="store_true", help="print the flows as JSON")
    se = cmd["send"]
    _list_opts(se)
    se.add_argument(
        "--out",
        required=True,
        metavar="FILE",
        help="results document (hwaac-probe/1 JSON); put it at "
        "DIR/<node>/probe.json of a samples folder for hwaac health fabric",
    )
    se.add_argument("--count", type=int, default=100, metavar="N", help="probes per flow (default 100)")
    se.add_argument(
        "--interval", type=float, default=0.01, metavar="S", help="seconds between two probes of a flow (default 0.01)"
    )
    se.add_argument(
        "--timeout",
        type=float,
        default=2.0,
        metavar="S",
        help="seconds to wait for replies after a flow's last probe (default 2)",
    )
    se.add_argument(
        "--paths", metavar="STATE", help="path cache (JSON), read and updated: later sweeps reuse the paths learned"
    )
    se.add_argument("--no-paths", action="store_true", help="do not learn paths (tomography then cannot localise)")
    _netns(se)
    se.add_argument(
        "--responders",
        action="store_true",
        help="also answer the probes here (a lab where every host is on this machine)",
    )
    rs = cmd["respond"]
    rs.add_argument("--bind", action="append", required=True, metavar="IP", help="an address to answer on (repeat)")
    rs.add_argument("--port", type=int, default=DPORT, help=f"UDP port (default {DPORT})")
    _netns(rs)
    rs.add_argument("--duration", type=float, metavar="S", help="stop after S seconds")
    rs.add_argument(
        "--freebind",
        action="store_true",
        help="bind addresses that are not up yet (IP_FREEBIND): a "
        "service started before its rails, or with one rail down, answers on each once it is up",
    )


__all__ = ["cmd_pinglist", "cmd_respond", "cmd_send", "register"]
