"""``hwaac health fabric INTENT --samples DIR [--samples DIR2 ...]``: rates, SLIs and ranked suspects of a fabric
from sweeps of switch and host outputs (layout: ``docs/network-health.md`` "Samples folder").

Exit status: 0 no suspect (or info only); 4 a warn suspect, none worse; 1 a fault suspect; 2 usage (a samples
folder that is missing or holds no device folder, a bad ``taken_at``, an unreadable ``--squeue`` or ``--slo``, an
unwritable output); 1 also for an invalid intent, as every ``hwaac`` command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXIT_USAGE = 2


def _err(msg: str) -> None:
    print(f"hwaac health fabric: {msg}", file=sys.stderr)


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``hwaac health fabric`` to the main parser."""
    health = sub.add_parser("health", help="network health of a fabric from switch and host telemetry")
    hs = health.add_subparsers(dest="health_command", required=True)
    p = hs.add_parser("fabric", help="rates, SLIs and ranked suspects from sweeps of switch and host outputs",
                      description="Exit 0 no suspect (or info only), 4 warn, 1 fault, 2 usage.")
    p.add_argument("fabric", metavar="INTENT_DIR", help="fabric.yml or the folder holding it")
    p.add_argument("--samples", metavar="DIR", action="append", required=True,
                   help="a sweep folder DIR/<device>/<tool>[@<port>].txt; repeat, oldest first (rates need two)")
    p.add_argument("--squeue", metavar="FILE", help="output of squeue -h -o '%%i %%u %%N' (jobs on the nodes)")
    p.add_argument("--slo", metavar="FILE", help="SLO file (default: hwaac/telemetry/data/slo.yaml)")
    p.add_argument("--format", choices=("md", "json"), default="md", help="report format (default md)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    p.set_defaults(func=cmd_fabric)


def cmd_fabric(args: argparse.Namespace) -> int:
    from hwaac.cli import _load
    from hwaac.health.parsers.slurm_squeue import parse_squeue
    from hwaac.plan import build_plan
    from hwaac.telemetry.fabric_health import fabric_report
    from hwaac.telemetry.samples import SamplesError, read_sweep
    from hwaac.telemetry.slo import SloError, load_slos

    try:
        slos = load_slos(args.slo)
    except SloError as exc:
        _err(f"--slo: {len(exc.issues)} problem(s):")
        for issue in exc.issues:
            print(f"  {issue}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        _err(f"--slo {args.slo}: {exc.strerror or exc}")
        return EXIT_USAGE
    squeue = None
    if args.squeue:
        try:
            squeue = parse_squeue(Path(args.squeue).read_text())
        except OSError as exc:
            _err(f"--squeue {args.squeue}: {exc.strerror or exc}")
            return EXIT_USAGE
    try:
        sweeps = [read_sweep(d) for d in args.samples]
    except (SamplesError, OSError) as exc:
        _err(f"--samples: {exc}")
        return EXIT_USAGE
    plan = build_plan(_load(args.fabric), validate=False)
    report = fabric_report(plan, sweeps, slos, squeue=squeue)
    if squeue is not None and squeue.unknown:
        report.coverage["squeue_lines_not_read"] = list(squeue.unknown)
    text = json.dumps(report.to_dict(), indent=2) + "\n" if args.format == "json" else report.markdown()
    if args.output:
        try:
            Path(args.output).write_text(text)
        except OSError as exc:
            _err(f"-o {args.output}: {exc.strerror or exc}")
            return EXIT_USAGE
        print(f"wrote {args.output}: {report.status}, {len(report.suspects)} suspect(s)")
    else:
        sys.stdout.write(text)
    return report.exit_code()


__all__ = ["cmd_fabric", "register"]
