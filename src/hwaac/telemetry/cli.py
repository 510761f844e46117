"""``hwaac health fabric INTENT --samples DIR [--samples DIR2 ...]``: rates, SLIs and ranked suspects of a fabric
from sweeps of switch and host outputs (layout: ``docs/network-health.md`` "Samples folder"); ``hwaac health
exporter``: the same assessment as Prometheus metrics (``--once`` prints the text exposition, ``--port`` serves it);
``hwaac health dashboard``: the Grafana dashboard of the fabric over those metrics.

Exit status: 0 no suspect (or info only); 4 a warn suspect, none worse, or a scope's coverage below its SLO; 1 a
fault suspect; 2 usage (a samples folder that is missing or holds no device folder, a bad ``taken_at``, an
unreadable ``--squeue`` or ``--slo``, an unwritable output); 1 also for an invalid intent, as every ``hwaac``
command.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from hwaac.clikit import EXIT_OK, EXIT_USAGE, Sub, add_fabric, add_group, add_output, add_subcommands, fail
from hwaac.fileio import write_atomic


def _usage(msg: str, command: str = "fabric") -> int:
    """The usage exit status, after ``hwaac health COMMAND: MSG`` on stderr."""
    return fail(f"hwaac health {command}", msg)


def _slo(p: argparse.ArgumentParser) -> None:
    p.add_argument("--slo", metavar="FILE", help="SLO file (default: hwaac/telemetry/data/slo.yaml)")


def _inputs(p: argparse.ArgumentParser) -> None:
    add_fabric(p)
    p.add_argument(
        "--samples",
        metavar="DIR",
        action="append",
        required=True,
        help="a sweep folder DIR/<device>/<tool>[@<port>].txt; repeat, oldest first (rates need two)",
    )
    p.add_argument("--squeue", metavar="FILE", help="output of squeue -h -o '%%i %%u %%N' (jobs on the nodes)")
    _slo(p)


def _slos(args: argparse.Namespace, command: str):  # -> SloSet | int
    """The SLOs of ``--slo`` (the defaults without it), or the usage exit status with the reason on stderr."""
    from hwaac.telemetry.slo import SloError, load_slos

    try:
        return load_slos(args.slo)
    except SloError as exc:
        _usage(f"--slo: {len(exc.issues)} problem(s):", command)
        for issue in exc.issues:
            print(f"  {issue}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        return _usage(f"--slo {args.slo}: {exc.strerror or exc}", command)


def assess_args(args: argparse.Namespace, command: str = "fabric"):  # -> FabricHealth | int
    """Load the SLOs, the jobs, the sweeps and the plan named by ``args`` and assess the fabric; an exit status
    (usage, with the reason on stderr) when an input cannot be read."""
    from hwaac.health.parsers.slurm_squeue import parse_squeue
    from hwaac.netbox.load import load_fabric
    from hwaac.plan import build_plan
    from hwaac.telemetry.fabric_health import judge
    from hwaac.telemetry.rated import read_rated
    from hwaac.telemetry.samples import SamplesError
    from hwaac.telemetry.topology import LinkIndex

    slos = _slos(args, command)
    if isinstance(slos, int):
        return slos
    squeue = None
    if args.squeue:
        try:
            squeue = parse_squeue(Path(args.squeue).read_text())
        except OSError as exc:
            return _usage(f"--squeue {args.squeue}: {exc.strerror or exc}", command)
    plan = build_plan(load_fabric(args.fabric), validate=False)
    index = LinkIndex(plan)
    try:  # read, rated and correlated device by device: a large fabric's sweeps are never all held
        rated = read_rated(args.samples, index=index)
    except (SamplesError, OSError) as exc:
        return _usage(f"--samples: {exc}", command)
    health = judge(plan, rated, slos, squeue=squeue, index=index)
    if squeue is not None and squeue.unknown:
        health.report.coverage["squeue_lines_not_read"] = list(squeue.unknown)
    return health


def cmd_fabric(args: argparse.Namespace) -> int:
    from hwaac.telemetry.parallel import no_collections

    # the collector's one pass over all that was built runs after the report is out, not between the stages
    with no_collections():
        return _fabric(args)


def _fabric(args: argparse.Namespace) -> int:
    health = assess_args(args)
    if isinstance(health, int):
        return health
    report = health.report
    text = json.dumps(report.to_dict(), indent=2) + "\n" if args.format == "json" else report.markdown()
    if args.output:
        try:
            Path(args.output).write_text(text)
        except OSError as exc:
            return _usage(f"-o {args.output}: {exc.strerror or exc}")
        print(f"wrote {args.output}: {report.status}, {len(report.suspects)} suspect(s)")
    else:
        sys.stdout.write(text)
    return report.exit_code()


def samples_signature(folders: list[str]) -> tuple[tuple[str, int, int, int, int], ...]:
    """What tells one set of sweeps from the next: each folder's real path (a symlink turned to a new sweep), and the
    inode and change time (which no copy preserves, unlike the modification time) of the folder and of its
    ``taken_at`` (a sweep replaced or rewritten in place)."""
    out: list[tuple[str, int, int, int, int]] = []
    for folder in folders:
        real = os.path.realpath(folder)
        marks: list[int] = []
        for path in (real, os.path.join(real, "taken_at")):
            try:
                st = os.stat(path)
                marks += [st.st_ino, st.st_ctime_ns]
            except OSError:
                marks += [-1, -1]
        ino, ctime, taken_ino, taken_ctime = marks
        out.append((real, ino, ctime, taken_ino, taken_ctime))
    return tuple(out)


def cmd_exporter(args: argparse.Namespace) -> int:
    from prometheus_client import CollectorRegistry, generate_latest, start_http_server

    from hwaac.telemetry.exporter import FabricCollector

    health = assess_args(args, "exporter")
    if isinstance(health, int):
        return health
    latest = [health]
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FabricCollector(lambda: latest[0]))
    if args.once:
        sys.stdout.write(generate_latest(registry).decode())
        return EXIT_OK
    try:
        server, thread = start_http_server(args.port, addr=args.addr, registry=registry)
    except OSError as exc:
        return _usage(f"--port {args.port}: {exc.strerror or exc}", "exporter")
    print(f"hwaac health exporter: serving http://{args.addr}:{args.port}/metrics", file=sys.stderr)
    seen = samples_signature(args.samples)
    try:
        while True:
            time.sleep(max(1.0, args.interval))
            now = samples_signature(args.samples)
            if now == seen:  # the same sweeps: assessing them again only takes the CPU the scrapes need
                continue
            fresh = assess_args(args, "exporter")
            if not isinstance(fresh, int):  # an unreadable sweep keeps the last good one (the error is on stderr)
                latest[0], seen = fresh, now
    except KeyboardInterrupt:
        return EXIT_OK
    finally:
        server.shutdown()
        thread.join()


def cmd_dashboard(args: argparse.Namespace) -> int:
    from hwaac.netbox.load import load_fabric
    from hwaac.plan import build_plan
    from hwaac.telemetry.dashboard import dashboard_json

    slos = _slos(args, "dashboard")
    if isinstance(slos, int):
        return slos
    plan = build_plan(load_fabric(args.fabric), validate=False)
    text = dashboard_json(plan, slos)
    if not args.output:
        sys.stdout.write(text)
        return EXIT_OK
    out = Path(args.output)
    try:
        write_atomic(out, text, durable=True)
    except OSError as exc:
        return _usage(f"-o {args.output}: {exc.strerror or exc}", "dashboard")
    print(f"wrote {out}: Grafana dashboard {plan.intent.fabric.name!r}")
    return EXIT_OK


SUBCOMMANDS = {  # hwaac health's, in the order of its help; the options of each are added in register
    "fabric": Sub(
        cmd_fabric,
        "rates, SLIs and ranked suspects from sweeps of switch and host outputs",
        "Exit 0 no suspect (or info only), 4 warn, 1 fault, 2 usage.",
    ),
    "exporter": Sub(
        cmd_exporter,
        "the fabric's health as Prometheus metrics (docs/network-health.md)",
        "Serve /metrics on --port (samples re-read every --interval seconds), or print the text exposition once "
        "with --once. Exit 2 usage.",
    ),
    "dashboard": Sub(
        cmd_dashboard,
        "the Grafana dashboard of the fabric over the exporter's metrics",
        "Print the Grafana dashboard JSON (a fabric row, then a row per plane and rail of the plan; thresholds "
        "from the SLOs), or write it to -o FILE. Exit 2 usage.",
    ),
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``hwaac health fabric`` to the main parser."""
    _health, hs = add_group(
        sub, "health", "health_command", help="network health of a fabric from switch and host telemetry"
    )
    cmd = add_subcommands(hs, SUBCOMMANDS)
    p = cmd["fabric"]
    _inputs(p)
    p.add_argument("--format", choices=("md", "json"), default="md", help="report format (default md)")
    add_output(p, "write the report to FILE instead of stdout")
    e = cmd["exporter"]
    _inputs(e)
    how = e.add_mutually_exclusive_group(required=True)
    how.add_argument("--port", type=int, metavar="N", help="serve the metrics on http://ADDR:N/metrics")
    how.add_argument("--once", action="store_true", help="print the text exposition once and exit")
    e.add_argument("--addr", default="127.0.0.1", help="address to listen on with --port (default 127.0.0.1)")
    e.add_argument(
        "--interval",
        type=float,
        default=60.0,
        metavar="S",
        help="re-read the samples folders every S seconds with --port (default 60)",
    )
    g = cmd["dashboard"]
    add_fabric(g)
    _slo(g)
    add_output(g, "write the dashboard to FILE (replaced atomically)")


__all__ = ["assess_args", "cmd_dashboard", "cmd_exporter", "cmd_fabric", "register"]
