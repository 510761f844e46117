"""``hwaac verify TARGET``: run the check catalog against a lab (``lab:NAME`` or a lab's name) or a facts folder
gathered by ``playbooks/verify.yml``.

Exit status: 0 every result PASS or SKIP; 1 a FAIL or an ERROR; 2 usage (unknown check or device, no plan, the
target is neither a facts folder nor a lab that is up, a malformed file).
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path
from typing import Any

from hwaac.clikit import EXIT_FAILED, EXIT_OK, add_command, add_output, fail
from hwaac.fileio import write_atomic


def add_verify_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``verify`` to ``hwaac``'s subcommands."""
    from hwaac.verify.report import FORMATS

    p = add_command(
        subparsers,
        "verify",
        cmd_verify,
        help="check a deployed fabric against its plan (LLDP = cabling, BGP, ECMP, rails, MTU)",
        description="Run the post-deploy check catalog. Exit 0 all PASS/SKIP, 1 any FAIL/ERROR, 2 usage.",
    )
    p.add_argument(
        "target",
        nargs="?",
        help="lab:NAME (or the name of a lab that is up), or a facts folder "
        "(one <device>.json per device, written by playbooks/verify.yml or --save-facts)",
    )
    p.add_argument(
        "--plan",
        metavar="DIR",
        help="the plan folder (plan.json and rendered files); default for a lab: the folder it was built from",
    )
    p.add_argument("--format", choices=FORMATS, default="table", help="report format (default table)")
    add_output(p, "write the report to FILE instead of stdout")
    _add_names(p, "--checks", "comma-separated check names (repeatable; default all); --list-checks names them")
    _add_names(p, "--devices", "only objects touching these devices, read from them alone (a rollout batch)")
    p.add_argument("--save-facts", metavar="DIR", help="also write the collected raw outputs as a facts folder")
    p.add_argument("--show-passed", action="store_true", help="list plain PASS results too (table, markdown)")
    p.add_argument("--list-checks", action="store_true", help="print the catalog and exit")
    return p


def _add_names(p: argparse.ArgumentParser, flag: str, text: str) -> None:
    """A repeatable option of comma-separated names, read by :func:`_names`."""
    p.add_argument(flag, metavar="NAMES", action="append", help=text)


def _names(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [n.strip() for v in values for n in v.split(",") if n.strip()]


_usage = partial(fail, "hwaac verify")  # the usage exit status, after a line on stderr


def cmd_verify(args: argparse.Namespace) -> int:
    from hwaac.verify.checks import CATALOG
    from hwaac.verify.inputs import InputError, load_inputs
    from hwaac.verify.raw import read_facts_folder, write_facts_folder
    from hwaac.verify.report import render
    from hwaac.verify.runner import judge, select, verify

    if args.list_checks:
        for c in CATALOG:
            print(f"{c.name:28} stage {c.stage}  {c.description}")
        return EXIT_OK
    if not args.target:
        return _usage("TARGET is required: lab:NAME, a lab's name, or a facts folder")
    names, devices = _names(args.checks), _names(args.devices)
    try:
        select(names)
    except ValueError as exc:
        return _usage(f"--checks: {exc}")

    target = args.target
    folder = Path(target) if not target.startswith("lab:") and Path(target).is_dir() else None
    lab = None
    if folder is None:
        from hwaac.lab import Lab, LabError

        name = target.removeprefix("lab:")
        try:
            lab = Lab.load(name)
        except LabError as exc:
            return _usage(f"{target}: not a facts folder, and no such lab is up ({exc})")
    plan = args.plan or (str(lab.render_dir) if lab is not None and str(lab.render_dir) not in ("", ".") else None)
    if plan is None:
        return _usage("--plan DIR is required with a facts folder (the plan folder the fabric was deployed from)")
    try:
        inputs = load_inputs(plan)
    except InputError as exc:
        return _usage(f"--plan: {exc}")
    if lab is not None:  # a twin of a big fabric holds some nodes per SU: judge what it holds
        planned = len(inputs.hosts)
        inputs = inputs.within(lab.devices)
        if len(inputs.hosts) < planned:
            print(
                f"hwaac verify: lab {lab.name} holds {len(inputs.hosts)} of {planned} planned nodes; the others "
                "and their cables are not judged",
                file=sys.stderr,
            )
    unknown = sorted(set(devices or ()) - set(inputs.devices()))
    if unknown:
        return _usage(f"--devices: not in the plan: {', '.join(unknown)}")

    if folder is not None:
        try:
            outputs = read_facts_folder(folder)
        except ValueError as exc:
            return _usage(str(exc))
        # a folder of some devices (a batch, one role) is judged for those: the others were not asked
        report = judge(inputs, outputs, names, devices or sorted(set(outputs) & set(inputs.devices())))
    else:
        from hwaac.verify.lab import LabCollector

        assert lab is not None  # no facts folder: the lab was loaded above, or the command returned
        report, outputs = verify(inputs, LabCollector(lab), names, devices)
    if args.save_facts:
        write_facts_folder(args.save_facts, outputs)

    color = args.output is None and args.format == "table" and sys.stdout.isatty()
    text = render(report, args.format, show_passed=args.show_passed, color=color)
    if args.output:
        out = Path(args.output)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, text)
        counts = report.counts()
        print(
            f"hwaac verify: {'PASS' if report.passed else 'FAIL'} "
            f"({', '.join(f'{v} {k}' for k, v in counts.items())}); report in {out}"
        )
    else:
        sys.stdout.write(text)
    return EXIT_OK if report.passed else EXIT_FAILED


def main(argv: list[str] | None = None) -> int:
    """``python -m hwaac.verify.cli``: the same as ``hwaac verify`` (until hwaac's CLI adds the subcommand)."""
    parser = argparse.ArgumentParser(prog="hwaac")
    sub = parser.add_subparsers(dest="command", required=True)
    add_verify_parser(sub)
    args = parser.parse_args(["verify", *(sys.argv[1:] if argv is None else argv)])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
