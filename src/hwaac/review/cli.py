"""``hwaac review NEW (--base REV | --old OLD) -o DIR``: writes ``DIR/review.md`` and ``DIR/review.json``.

Exit status: 0 reviewed, also when the base does not validate (the report lists the base's issues and compares
nothing that needs its plan); 1 the new intent is invalid or cannot be read; 2 usage error (bad arguments,
unreadable revision or Terraform plan, an output folder that is a file or cannot be written), or NetBox could not
be reached: to resolve the intent's NetBox pools (no report: without them there is no plan to review), or for
the NetBox dry run asked for (the report is written and says so); 3 refused: the change renumbers or removes
what is in service without --allow-renumber or --allow-remove (the report is written and says why).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from functools import partial
from pathlib import Path

from hwaac.clikit import (
    EXIT_OK,
    FABRIC_HELP,
    add_allow_flags,
    add_auto_flag,
    add_command,
    add_fabric,
    add_output,
    auto,
    fail,
)

EXIT_REFUSED = 3
_usage = partial(fail, "hwaac review")  # the exit status 2, after a line on stderr


def cmd_review(args: argparse.Namespace) -> int:
    from hwaac.deploy.serial import BatchSizeError, parse_batch_size
    from hwaac.netbox.errors import NetBoxError
    from hwaac.review import Options, SourceError, build_review, from_file, from_git, netbox_dry_run, render_markdown
    from hwaac.review.terraform import TerraformPlanError, read_plan_json, summarize

    try:
        batch_size = parse_batch_size(args.batch_size, "--batch-size")
    except BatchSizeError as exc:
        return _usage(str(exc))
    out = Path(args.output)
    problem = _output_problem(out)
    if problem:
        return _usage(f"-o {out}: {problem}; valid: a folder this user can write in, or a path where one can be made")
    try:
        new = from_file(args.fabric)
        old = from_git(args.fabric, args.base) if args.base else from_file(args.old)
    except SourceError as exc:
        return _usage(str(exc))
    terraform = None
    if args.terraform_plan:
        try:
            terraform = summarize(read_plan_json(args.terraform_plan))
        except (OSError, TerraformPlanError) as exc:
            return _usage(f"--terraform-plan: {exc}")
    use_netbox = auto(args.netbox, lambda: bool(os.environ.get("NETBOX_URL") and os.environ.get("NETBOX_TOKEN")))
    lookup, netbox = None, None
    if use_netbox:
        from hwaac.netbox.connection import netbox_target
        from hwaac.netbox.pools import prefix_lookup

        try:
            target = netbox_target()
        except NetBoxError as exc:
            return _usage(f"--netbox: {str(exc).splitlines()[0]}")
        lookup = prefix_lookup(target.url, target.token)
        netbox = netbox_dry_run(target.url, target.token)
    opts = Options(
        allow_renumber=args.allow_renumber,
        allow_remove=args.allow_remove,
        batch_size=batch_size,
        many_sus=args.many_sus,
    )
    try:
        review = build_review(old, new, pool_lookup=lookup, netbox=netbox, terraform=terraform, options=opts)
    except NetBoxError as exc:  # from the pool lookup: without the pools there is no plan to review
        return _usage(
            f"the intent's NetBox pools could not be resolved: {str(exc).splitlines()[0]}; no report was written"
        )
    try:
        _write(
            out, {"review.json": json.dumps(review, indent=2, default=str) + "\n", "review.md": render_markdown(review)}
        )
    except OSError as exc:
        return _usage(
            f"-o {out}: cannot write the report ({exc.strerror or exc}"
            + (f": {exc.filename}" if exc.filename else "")
            + "); no report was written"
        )
    changed = "" if review["devices"] is None else f"{len(review['devices'])} device(s) change, "
    print(
        f"review of {review['fabric']}: {review['verdict']}; {changed}risk flags: "
        f"{', '.join(r['code'] for r in review['risks']) or 'none'}; wrote {out / 'review.md'} and "
        f"{out / 'review.json'}"
    )
    if review["base_issues"]:
        print(
            f"hwaac review: the base {review['base']} does not validate ({len(review['base_issues'])} "
            "problem(s), listed in the report): the new intent is reviewed without comparing it",
            file=sys.stderr,
        )
        for issue in review["base_issues"]:
            print(f"  {issue['text']}", file=sys.stderr)
    for ref in review["refusals"]:
        print(
            f"hwaac review: refused: {ref['kind']} of {len(ref['items'])} item(s) without {ref['flag']}",
            file=sys.stderr,
        )
    if review["refusals"]:
        return EXIT_REFUSED
    if review["netbox"].get("status") == "error":  # asked for and not run: the review is not complete
        return _usage(f"the NetBox dry run could not run: {review['netbox']['message']} (the report says so)")
    return EXIT_OK


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: a number of SUs, 0 or more")
    return int(text)


def _output_problem(out: Path) -> str | None:
    """Why the report cannot go to the folder ``out`` (None: it can): a file there, or a folder (``out`` or the
    nearest one above it that exists) that this user cannot write in. A write can still fail later (a full or
    read-only disk): :func:`_write` says so then."""
    try:
        if out.exists():
            if not out.is_dir():
                return "exists and is not a folder"
            where = out
        else:
            where = next(p for p in out.parents if p.exists())
            if not where.is_dir():
                return f"{where} is not a folder"
    except OSError as exc:
        return f"cannot be looked at ({exc.strerror or exc})"
    if not os.access(where, os.W_OK | os.X_OK):
        return f"this user cannot write in {where}"
    return None


def _write(out: Path, files: dict[str, str]) -> None:
    """Each file written whole to a temporary file of this process's own name in ``out``, then every one renamed
    over its file, so a reader never sees half a report. On an error the temporary files, and the folders made for
    them, are removed, and the OSError raised."""
    made = [p for p in (out, *out.parents) if not p.exists()]
    staged: list[tuple[str, Path]] = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            staged.append((name, out / f".{name}.{os.getpid()}.tmp"))
            staged[-1][1].write_text(text, encoding="utf-8")
        for name, tmp in staged:
            tmp.replace(out / name)
    except OSError:
        for _name, tmp in staged:
            tmp.unlink(missing_ok=True)
        for folder in made:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def register(sub: argparse._SubParsersAction) -> None:
    from hwaac.deploy.serial import valid

    r = add_command(
        sub,
        "review",
        cmd_review,
        help="one report of a change for a pull request (Markdown and JSON)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_fabric(r, f"the new intent: {FABRIC_HELP}", metavar=None)
    old = r.add_mutually_exclusive_group(required=True)
    old.add_argument("--base", metavar="REV", help="git revision holding the old intent at the same path")
    old.add_argument("--old", metavar="OLD", help="the old intent: another fabric.yml or folder")
    add_output(r, "folder for review.md and review.json", metavar=None, required=True)
    r.add_argument(
        "--terraform-plan",
        metavar="FILE",
        help="a plan saved by `terraform plan -out FILE`, or the JSON of `terraform show -json FILE`",
    )
    add_auto_flag(
        r,
        "--netbox",
        "dry run of the NetBox sync against the NetBox in use (default: when NETBOX_URL and NETBOX_TOKEN are set)",
    )
    add_allow_flags(
        r, renumber="accept changes to existing allocations", remove="accept removing devices or cables in service"
    )
    r.add_argument(
        "--batch-size", default="25%", help=f"the rollout's serial: {valid()}; default 25%".replace("%", "%%")
    )  # argparse %-formats help texts
    r.add_argument("--many-sus", type=_count, default=1, metavar="N", help="flag a change touching more than N SUs")
