"""The ``hwaac`` command: ``hwaac validate FABRIC``, ``hwaac plan FABRIC -o DIR [--against OLD]`` and ``hwaac schema``
here; the other subcommands are registered from their packages' ``cli`` modules.

FABRIC is a ``fabric.yml`` or the folder holding it (``inventory/<fabric>``). Exit status: 0 ok; 1 invalid intent;
2 usage error; 3 refused (the plan would renumber or remove what OLD has, without --allow-renumber or
--allow-remove). The usage lines and what each status means: docs/plan.md "The hwaac command".
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from hwaac.clikit import (
    EXIT_OK,
    add_allow_flags,
    add_auto_flag,
    add_command,
    add_fabric,
    add_group,
    add_output,
    auto,
    fail,
    run_guarded,
    silence_stdout,
)
from hwaac.errors import IntentError
from hwaac.netbox.errors import NetBoxError
from hwaac.netbox.load import load_fabric

EXIT_INVALID, EXIT_REFUSED = 1, 3


def cmd_validate(args: argparse.Namespace) -> int:
    from hwaac.plan import build_plan

    intent = load_fabric(args.fabric)
    plan = build_plan(intent, validate=False)
    d = plan.design
    gpu_nodes = sum(1 for n in plan.nodes if n.kind == "gpu")
    appliances = len(plan.nodes) - gpu_nodes
    print(
        f"ok: fabric {intent.fabric.name}: {d.tiers} tiers, {d.planes} plane(s), {len(plan.switches)} switches, "
        f"{gpu_nodes} GPU nodes ({plan.gpu_count} GPUs)"
        + (f", {appliances} appliance(s)" if appliances else "")
        + f", {len(plan.links)} links"
    )
    if intent.fabric.su_capacity is None:
        print(
            f"note: fabric.su_capacity is not set, so the spine layer is sized for exactly {d.su_count} SU(s); "
            "adding an SU would move existing cables (plan --against refuses that). Set su_capacity to the "
            "size you will grow to."
        )
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from hwaac.schema import intent_json_schema

    text = json.dumps(intent_json_schema(), indent=2) + "\n"
    if args.output:
        Path(args.output).write_text(text)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_plan(args: argparse.Namespace) -> int:
    from hwaac.plan import build_plan
    from hwaac.plan.diff import diff_plans
    from hwaac.plan.serialize import read_plan
    from hwaac.render import OutputDirError, plan_document, render_to_dir

    t0 = time.perf_counter()
    intent = load_fabric(args.fabric)
    plan = build_plan(intent, validate=False)
    t_plan = time.perf_counter() - t0
    if args.against:
        try:
            old = read_plan(args.against)
        except (OSError, ValueError) as exc:
            return fail("hwaac", f"--against: {exc}")
        diff = diff_plans(old, plan_document(plan))  # with the storage section: it changes host files too
        print(f"against {args.against}:\n{diff.summary()}\n{diff.affected_summary()}")
        if not diff.empty:
            print(diff.details())
        refusals = []
        if diff.renumbered and not args.allow_renumber:
            refusals.append(("renumber", "existing allocation(s)", "--allow-renumber", diff.renumbered))
        if diff.removals and not args.allow_remove:
            refusals.append(("remove", "device(s) or cable(s) in service", "--allow-remove", diff.removals))
        for verb, what, flag, lines in refusals:
            fail("hwaac", f"refusing to {verb} {len(lines)} {what}; nothing written. Pass {flag} to accept:")
            for line in lines[:50]:
                print(f"  {line}", file=sys.stderr)
            if len(lines) > 50:
                print(f"  ... and {len(lines) - 50} more", file=sys.stderr)
        if refusals:
            return EXIT_REFUSED
    total = len(plan.switches) + len(plan.nodes)
    try:
        if auto(args.progress, sys.stderr.isatty):
            from rich.progress import Progress

            with Progress(transient=True, console=_stderr_console()) as bar:
                task = bar.add_task(f"rendering {total} devices", total=total)
                counts = render_to_dir(plan, args.output, progress=lambda n: bar.advance(task, n))
        else:
            counts = render_to_dir(plan, args.output)
    except OutputDirError as exc:
        return fail("hwaac", exc)
    elapsed = time.perf_counter() - t0
    print(
        f"planned {intent.fabric.name} in {t_plan:.2f} s: {len(plan.switches)} switches, {len(plan.nodes)} nodes, "
        f"{len(plan.links)} links; wrote {counts['switches']} switch configs, {counts['hosts']} host files, "
        f"{counts['docs']} documents to {args.output} ({elapsed:.2f} s)"
    )
    return EXIT_OK


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hwaac", description="Hardware-as-Code for AI GPU clusters.")
    sub = p.add_subparsers(dest="command", required=True)

    v = add_command(sub, "validate", cmd_validate, help="check an intent file (schema and semantic rules)")
    add_fabric(v, metavar=None)

    pl = add_command(sub, "plan", cmd_plan, help="plan the fabric and render all device files and docs into a folder")
    add_fabric(pl, metavar=None)
    add_output(pl, "output folder (replaced atomically)", metavar=None, required=True)
    pl.add_argument("--against", metavar="OLD", help="an earlier plan.json (or its folder) to diff against")
    add_allow_flags(
        pl,
        renumber="accept changes to existing addresses, ASNs or cables of OLD",
        remove="accept removing switches, nodes or cables that OLD has (shrinking the fabric)",
    )
    add_auto_flag(pl, "--progress", "show a progress bar (default: when stderr is a terminal)")

    s = add_command(sub, "schema", cmd_schema, help="print the intent's JSON Schema")
    add_output(s, "write to this file instead of stdout", metavar=None)

    from hwaac.netbox.cli import register as register_netbox

    register_netbox(sub)

    from hwaac.netbox.lifecycle_cli import register as register_node

    register_node(sub)

    from hwaac.telemetry.cli import register as register_fabric_health

    register_fabric_health(sub)

    from hwaac.probe.cli import register as register_probe

    register_probe(sub)

    from hwaac.lab.cli import register as register_lab

    register_lab(sub)

    from hwaac.mitigation.cli import register as register_remediate

    register_remediate(sub)

    from hwaac.deploy.cli import register as register_deploy

    register_deploy(sub)

    from hwaac.review.cli import register as register_review

    register_review(sub)

    from hwaac.verify.cli import add_verify_parser

    add_verify_parser(sub)

    _tf, tf_sub = add_group(sub, "terraform", "tf_command", help="the Terraform provider aiinfra/hwaac")
    m = add_command(
        tf_sub,
        "mirror",
        cmd_terraform_mirror,
        help="build the provider into a local mirror and write a CLI configuration (offline terraform/tofu init)",
    )
    m.add_argument("-o", "--dir", default="build/terraform", help="output folder (default build/terraform)")
    return p


def cmd_terraform_mirror(args: argparse.Namespace) -> int:
    from hwaac_provider.mirror import main as mirror_main

    return mirror_main(["--dir", args.dir])


def _invalid(exc: IntentError, _args: argparse.Namespace) -> int:
    fail("hwaac", f"invalid intent ({len(exc.issues)} problem(s)):")
    for issue in exc.issues:
        print(f"  {issue}", file=sys.stderr)
    return EXIT_INVALID


def _broken_pipe(_exc: BrokenPipeError, _args: argparse.Namespace) -> int:
    silence_stdout()  # output piped into e.g. `head`: stop quietly
    return EXIT_OK


CATCHES = (
    (IntentError, _invalid),
    (FileNotFoundError, lambda exc, _args: fail("hwaac", f"{exc.filename or exc}: no such file")),
    (NetBoxError, lambda exc, _args: fail("hwaac", str(exc).splitlines()[0])),
    (BrokenPipeError, _broken_pipe),
)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_guarded(args.func, args, CATCHES)


if __name__ == "__main__":
    sys.exit(main())
