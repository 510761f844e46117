"""``hwaac lab up|down|status|converge|compact|exec|fail|restore|sweep``: the twin (see :mod:`hwaac.lab`, docs/lab.md).

Exit status: 0 ok; 1 the operation failed (converge: not converged in time); 2 usage or bad input (nothing made);
3 status: the lab is not up (or not fully). ``exec`` exits with the command's status.
Runs as root (namespaces, FRR, sysctls). ``python -m hwaac.lab.cli ...`` is the same as ``hwaac lab ...``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from hwaac.clikit import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Run, Sub, add_group, add_subcommands, fail, guarded
from hwaac.lab.errors import LabError, LabNotUp

EXIT_DOWN = 3


def _say(msg: str) -> None:
    print(msg, flush=True)


def cmd_up(args: argparse.Namespace) -> int:
    from hwaac.lab.fabric import parse_nodes_per_su
    from hwaac.lab.up import up

    up(Path(args.render_dir), name=args.name, nodes_per_su=parse_nodes_per_su(args.nodes_per_su), log=_say)
    return EXIT_OK


def cmd_down(args: argparse.Namespace) -> int:
    from hwaac.lab.down import down

    down(args.name, log=_say)
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    from hwaac.lab.api import Lab
    from hwaac.lab.status import status

    try:
        lab = Lab.load(args.name)
    except LabNotUp as exc:
        if args.json:
            print(json.dumps({"lab": args.name, "up": False, "problems": [str(exc)]}))
        else:
            print(f"lab: {exc}")
        return EXIT_DOWN
    st = status(lab)
    if args.json:
        print(json.dumps(st, indent=1, sort_keys=True))
        return EXIT_OK if st["up"] else EXIT_DOWN
    print(
        f"lab {st['lab']}: {'up' if st['up'] else 'NOT up'} (fabric {st['fabric']}, from {st['render_dir']}; "
        f"FRR {st['versions'].get('frr', '?')}, lldpd {st['versions'].get('lldpd', '?')})"
    )
    print(f"  {st['switches']} switches, {st['hosts']} hosts, {st['links']} cables")
    for name, dev in st["devices"].items():
        if dev["kind"] != "switch":
            continue
        b = dev.get("bgp", {})
        daemons = " ".join(f"{d}{'' if ok else ' (stopped)'}" for d, ok in dev["daemons"].items())
        print(
            f"  {name:24} {daemons:32} BGP {b.get('established', 0)}/{b.get('expected', 0)} Established, "
            f"{b.get('routes')} routes"
        )
    down_hosts = [n for n, d in st["devices"].items() if d["kind"] == "host" and not all(d["daemons"].values())]
    print(
        f"  hosts: {st['hosts'] - len(down_hosts)} with lldpd running"
        + (f"; not: {', '.join(down_hosts)}" if down_hosts else "")
    )
    for f in st["faults"]:
        done = " (loop finished)" if f["finished"] else ""
        print(f"  fault {f['id']}: {f['mode']} since {f.get('since', '?')}{done}")
    for p in st["problems"]:
        print(f"  problem: {p}")
    return EXIT_OK if st["up"] else EXIT_DOWN


def cmd_converge(args: argparse.Namespace) -> int:
    from hwaac.lab.api import Lab
    from hwaac.lab.status import converge

    secs = converge(Lab.load(args.name), timeout=args.timeout)
    print(f"{secs:.1f}")
    return EXIT_OK


def cmd_compact(args: argparse.Namespace) -> int:
    from hwaac.lab.api import Lab
    from hwaac.lab.ksm import compact

    Lab.load(args.name)
    res = compact(passes=args.passes)
    print(
        f"KSM: {res['passes']} full scans in {res['seconds']} s; zero pages merged {res['zero_pages']}, "
        f"pages sharing {res['pages_sharing']} (KSM settings restored)"
    )
    return EXIT_OK


def cmd_sweep(args: argparse.Namespace) -> int:
    from hwaac.lab.api import Lab
    from hwaac.lab.sweep import write_sweep

    lab = Lab.load(args.name)
    probes = None
    if args.probe:
        from hwaac.lab.probe import probe_lab
        from hwaac.plan import build_plan
        from hwaac.validate import load_intent

        probes = probe_lab(lab, build_plan(load_intent(args.probe)), count=args.count)
    folder = write_sweep(lab, Path(args.out), probes=probes)
    flows = sum(len(d.flows) for d in (probes or {}).values())
    _say(
        f"lab {lab.name}: {len(lab.switches)} switches swept into {folder}"
        + (f", {flows} probe flows from {len(probes or {})} hosts" if probes else "")
    )
    return EXIT_OK


def cmd_exec(args: argparse.Namespace) -> int:
    from hwaac.lab.api import Lab

    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise LabError(
            "exec: give the command after --, e.g. hwaac lab exec demo leaf-p0-su01-r0 -- vtysh -c 'show bgp summary'"
        )
    lab = Lab.load(args.name)
    netns = lab.netns(args.device)
    sys.stdout.flush()
    os.execvpe("ip", ["ip", "netns", "exec", netns, *cmd], lab.env(args.device))
    return EXIT_FAILED  # not reached


def cmd_fail(args: argparse.Namespace) -> int:
    from hwaac.lab import faults
    from hwaac.lab.api import Lab

    if args.kind != "link" and (args.flap or args.down or args.loss is not None or args.delay is not None):
        raise LabError(f"fail {args.kind}: --down, --flap, --loss and --delay are for links only")
    if (args.flap or args.down) and (args.loss is not None or args.delay is not None):
        raise LabError("fail link: --loss/--delay cannot go with --down or --flap")
    lab = Lab.load(args.name)
    if args.kind == "link":
        if args.flap:
            faults.fail_link(lab, args.target, mode="flap", period=args.period, cycles=args.cycles, log=_say)
        elif args.loss is not None or args.delay is not None:
            faults.fail_link(lab, args.target, mode="netem", loss=args.loss, delay=args.delay, log=_say)
        else:
            faults.fail_link(lab, args.target, mode="down", log=_say)
    elif args.kind == "switch":
        faults.fail_switch(lab, args.target, log=_say)
    else:
        faults.fail_node(lab, args.target, log=_say)
    return EXIT_OK


def cmd_restore(args: argparse.Namespace) -> int:
    from hwaac.lab import faults
    from hwaac.lab.api import Lab

    done = faults.restore(Lab.load(args.name), args.target, log=_say)
    if not done:
        _say("no fault to restore")
    return EXIT_OK


def _run(fn: Run) -> Run:
    """One line on stderr and exit 2 (bad input, nothing made) or 1 (failed) for a LabError."""
    not_up = EXIT_DOWN if fn is cmd_status else EXIT_USAGE
    return guarded(
        fn,
        [
            (LabNotUp, lambda exc, _args: fail("hwaac lab", exc, not_up)),
            (LabError, lambda exc, _args: fail("hwaac lab", exc, EXIT_FAILED)),
            (
                PermissionError,
                lambda exc, _args: fail("hwaac lab", f"{exc} (the lab needs root: namespaces, FRR, sysctls)"),
            ),
        ],
    )


SUBCOMMANDS = {  # hwaac lab's, in the order of its help; the options of each are added in register
    "up": Sub(_run(cmd_up), "build the lab from a rendered folder (hwaac plan FABRIC -o DIR)"),
    "down": Sub(_run(cmd_down), "remove everything the lab made (also after a crash); idempotent"),
    "status": Sub(_run(cmd_status), "devices, daemons, BGP sessions; exit 3 when the lab is not up"),
    "converge": Sub(_run(cmd_converge), "wait for every expected BGP session and stable routes; print the seconds"),
    "compact": Sub(_run(cmd_compact), "merge the daemons' zero-filled pages once with KSM (about half the PSS)"),
    "exec": Sub(_run(cmd_exec), "run a command in a device's namespace (vtysh, lldpcli reach its daemons)"),
    "fail": Sub(_run(cmd_fail), "inject a failure: link (down, loss, delay, flap), switch (FRR stopped), node"),
    "sweep": Sub(
        _run(cmd_sweep),
        "one network-health sweep of the switches (portstat -j, BGP, routes) into a samples folder for hwaac "
        "health fabric",
    ),
    "restore": Sub(_run(cmd_restore), "undo all faults, or those on TARGET (fault id, cable, DEVICE:PORT, device)"),
}
# the subcommands whose first argument is the lab's NAME: nargs "?" where it may be left out (the one lab there is)
TAKE_NAME: dict[str, str | None] = {
    **dict.fromkeys(("down", "status", "converge", "compact"), "?"),
    **dict.fromkeys(("exec", "fail", "sweep", "restore"), None),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``lab`` and its subcommands to the ``hwaac`` parser."""
    _p, sub = add_group(
        subparsers,
        "lab",
        "lab_command",
        help="the twin: the rendered fabric in network namespaces with FRR and lldpd",
        description="The planned fabric in Linux network namespaces: FRR (zebra, bgpd) and "
        "lldpd per switch from its config_db.json, hosts from their rendered "
        "netplan and sysctl files, failure injection. State in "
        "$HWAAC_LAB_STATE_DIR (default /run/hwaac/lab)/NAME.",
    )
    cmd = add_subcommands(sub, SUBCOMMANDS)
    for name, nargs in TAKE_NAME.items():
        cmd[name].add_argument("name", nargs=nargs, metavar="NAME")
    u = cmd["up"]
    u.add_argument("render_dir", metavar="RENDER_DIR")
    u.add_argument("--name", help="lab name (default: the fabric's name, a-z0-9_ only)")
    u.add_argument(
        "--nodes-per-su",
        metavar="N|all",
        help="GPU nodes per SU in the lab (default: all when the fabric has <= 64 nodes, else 2)",
    )
    cmd["status"].add_argument("--json", action="store_true", help="one JSON document")
    cmd["converge"].add_argument(
        "--timeout", type=float, default=120.0, metavar="S", help="give up after S seconds (default 120)"
    )
    cmd["compact"].add_argument("--passes", type=int, default=3, metavar="N", help="KSM full scans (default 3)")
    e = cmd["exec"]
    e.add_argument("device", metavar="DEVICE")
    e.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD ...")
    f = cmd["fail"]
    f.add_argument("kind", choices=("link", "switch", "node"))
    f.add_argument("target", metavar="TARGET", help="link: CABLE_ID or DEVICE:PORT; switch: SWITCH; node: NODE")
    how = f.add_mutually_exclusive_group()
    how.add_argument("--down", action="store_true", help="link down at both ends (default)")
    how.add_argument("--flap", action="store_true", help="link down/up every --period s, --cycles times")
    f.add_argument("--loss", type=float, metavar="PCT", help="netem packet loss at both ends")
    f.add_argument("--delay", type=float, metavar="MS", help="netem delay at both ends")
    f.add_argument("--period", type=float, default=2.0, metavar="S", help="flap half-period (default 2 s)")
    f.add_argument("--cycles", type=int, default=10, metavar="N", help="flap cycles (default 10)")
    w = cmd["sweep"]
    w.add_argument("-o", "--out", required=True, metavar="DIR", help="the sweep folder (new or empty)")
    w.add_argument(
        "--probe",
        metavar="INTENT_DIR",
        help="also run every host's active probes (the pinglist of this fabric's plan) and write <host>/probe.json",
    )
    w.add_argument("--count", type=int, default=100, metavar="N", help="probes per flow (default 100)")
    cmd["restore"].add_argument("target", nargs="?", metavar="TARGET")

    from hwaac.lab.deploy import add_deploy_parser

    add_deploy_parser(sub)


add_lab_parser = register


def main(argv: list[str] | None = None) -> int:
    """``python -m hwaac.lab.cli ARGS`` = ``hwaac lab ARGS``."""
    parser = argparse.ArgumentParser(prog="hwaac")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["lab", *(sys.argv[1:] if argv is None else argv)])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
