"""``hwaac netbox sync|export|drift|render``: the fabric in NetBox; ``up|down|status|token`` (the local NetBox)
come from :mod:`hwaac.devnetbox.cli`. The API token is never printed by these commands.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from hwaac.clikit import EXIT_OK, Sub, add_fabric, add_group, add_output, add_subcommands, fail
from hwaac.devnetbox.cli import add_server_commands
from hwaac.netbox.errors import NetBoxError

# sync: 0 ok, 1 invalid intent, 2 usage or connection error (or NetBox refused a write), 4 conflict
SYNC_INVALID, SYNC_ERROR, SYNC_CONFLICT = 1, 2, 4
# export / drift: 0 ok (drift: none), 1 invalid intent, 2 usage or connection error, 5 drift: NetBox differs
DRIFT_FOUND = 5


def _fail(cmd: str, why: object, code: int = SYNC_ERROR) -> int:
    """Say on stderr, in one line, why ``hwaac netbox CMD`` stopped; the exit code ``code``."""
    return fail(f"hwaac netbox {cmd}", why, code)


def _plan_for(args: argparse.Namespace, cmd: str):
    """(plan, target) of ``args.fabric`` and the NetBox to use, or an exit code after a one-line error. Pools that
    name a NetBox prefix role are read from that same NetBox."""
    from pathlib import Path

    from hwaac.errors import IntentError
    from hwaac.netbox.connection import netbox_target
    from hwaac.netbox.pools import prefix_lookup
    from hwaac.plan import build_plan
    from hwaac.validate import load_intent

    fabric = args.fabric
    if not Path(fabric).exists() and (Path("inventory") / fabric).is_dir():
        fabric = str(Path("inventory") / fabric)
    try:
        target = netbox_target(args.url)
        return build_plan(load_intent(fabric, pool_lookup=prefix_lookup(target.url, target.token))), target
    except (IntentError, FileNotFoundError) as exc:
        return _fail(cmd, f"invalid intent: {exc}", SYNC_INVALID)
    except NetBoxError as exc:
        return _fail(cmd, str(exc).splitlines()[0])


def cmd_sync(args: argparse.Namespace) -> int:
    """Sync the intent's plan into NetBox (see :mod:`hwaac.netbox.sync`)."""
    from hwaac.netbox.sync import SyncConflict, format_report, sync_plan

    got = _plan_for(args, "sync")
    if isinstance(got, int):
        return got
    plan, target = got
    try:
        report = sync_plan(plan, target.url, target.token, dry_run=args.dry_run, delete_active=args.delete_active)
    except SyncConflict as exc:
        return _fail("sync", exc, SYNC_CONFLICT)
    except NetBoxError as exc:
        return _fail("sync", exc)
    except KeyboardInterrupt:
        return _fail("sync", "interrupted; the next sync converges")
    for line in format_report(report, plan.intent.fabric.name):
        print(line)
    return EXIT_OK


def _from_netbox[T](
    args: argparse.Namespace, cmd: str, read: Callable[[Any, str, str], T], interrupted: str | None = None
) -> T | int:
    """Plan the fabric, then ``read(plan, url, token)`` from NetBox: its result, or an exit code after a one-line
    error (the first line of a NetBox error; ``interrupted`` on Ctrl-C where given, else Ctrl-C goes on up)."""
    got = _plan_for(args, cmd)
    if isinstance(got, int):
        return got
    plan, target = got
    try:
        return read(plan, target.url, target.token)
    except NetBoxError as exc:
        return _fail(cmd, str(exc).splitlines()[0])
    except KeyboardInterrupt:
        if interrupted is None:
            raise
        return _fail(cmd, interrupted)


def _read_back(args: argparse.Namespace, cmd: str):
    """Plan the fabric and read it back from NetBox (never writes): (sync, client, seconds) or an exit code."""
    from hwaac.netbox.sync.readback import read_back

    return _from_netbox(args, cmd, read_back, interrupted="interrupted")


def cmd_export(args: argparse.Namespace) -> int:
    """Write the fabric as NetBox holds it (JSON, sorted; no ids, URL or token)."""
    import json
    from pathlib import Path

    from hwaac.netbox.sync.readback import export_fabric

    got = _read_back(args, "export")
    if isinstance(got, int):
        return got
    text = json.dumps(export_fabric(got[0]), indent=2, sort_keys=True) + "\n"
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text)
        print(f"hwaac netbox export: wrote {args.output}")
    return EXIT_OK


def cmd_drift(args: argparse.Namespace) -> int:
    """List every object where NetBox differs from the plan; exit 5 when any does."""
    from hwaac.netbox.sync.readback import drift

    got = _read_back(args, "drift")
    if isinstance(got, int):
        return got
    report = drift(*got)
    for line in report.lines():
        print(line)
    return DRIFT_FOUND if report.items else EXIT_OK


def cmd_render(args: argparse.Namespace) -> int:
    """Render every device's files and the fabric docs from what NetBox holds (see :mod:`hwaac.netbox.source`)."""
    from hwaac.netbox.source import plan_from_netbox
    from hwaac.render import OutputDirError, render_to_dir

    got = _from_netbox(args, "render", plan_from_netbox)
    if isinstance(got, int):
        return got
    plan, notes = got
    for note in notes:
        print(f"hwaac netbox render: taken from NetBox: {note}", file=sys.stderr)
    try:
        counts = render_to_dir(plan, args.output)
    except OutputDirError as exc:
        return _fail("render", exc)
    print(
        f"fabric {plan.intent.fabric.name}: rendered from NetBox into {args.output}: {counts['switches']} switch "
        f"configs, {counts['hosts']} host files, {counts['docs']} docs"
        + (
            f"; {len(notes)} value(s) differ from the intent and come from NetBox"
            if notes
            else "; NetBox matches the plan"
        )
    )
    return EXIT_OK


WHERE = "URL and token as for sync (NETBOX_URL / NETBOX_TOKEN, or the local NetBox). Read only: never writes."
SUBCOMMANDS = {  # after the local NetBox's own (hwaac.devnetbox.cli), in the order of the help
    "sync": Sub(
        cmd_sync,
        "record the fabric's plan in NetBox (bulk, idempotent, owned objects only)",
        "URL and token from NETBOX_URL / NETBOX_TOKEN (or --url); with neither, the local NetBox when it is up. "
        "Exit 0 ok, 1 invalid intent, 2 usage or connection error, 4 conflict with objects hwaac does not own or a "
        "device in service it would delete (nothing written).",
    ),
    "export": Sub(
        cmd_export,
        "write the fabric as NetBox holds it (JSON)",
        "The fabric's owned objects (tag hwaac-fabric-NAME) as NetBox holds them: devices, interfaces with addresses "
        f"or cables, cables, prefixes, IP addresses, ASNs; sorted, without ids. {WHERE} Exit 0 ok, 1 invalid intent, "
        "2 usage or connection error.",
    ),
    "drift": Sub(
        cmd_drift,
        "list every object where NetBox differs from the plan",
        "One line per object, grouped by type: missing (planned, not in NetBox), extra (owned, not planned), "
        "changed (field: NetBox value -> planned value), unowned (present, not owned: a sync adopts it), conflict; "
        f"then a summary. Fields a person enters (serial, comments) are not drift. {WHERE} Exit 0 no drift, 1 "
        "invalid intent, 2 usage or connection error, 5 drift found.",
    ),
    "render": Sub(
        cmd_render,
        "render device files and docs from what NetBox holds",
        "Plan the fabric, take each switch's ASN and loopback and each link's addresses from NetBox (where a person "
        "may have corrected them; each such value is reported), and render every file as `hwaac plan` does. Stops "
        f"when NetBox lacks a planned device or cable. {WHERE} Exit 0 ok, 1 invalid intent, 2 usage or connection "
        "error, or NetBox does not hold the fabric.",
    ),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``netbox`` and its subcommands to the ``hwaac`` parser."""
    p, sub = add_group(
        subparsers,
        "netbox",
        "netbox_command",
        help="a local NetBox for development, tests and the demo",
        description="A real NetBox 4.7.3 on 127.0.0.1, installed and run in a state folder "
        "(HWAAC_NETBOX_STATE, default ~/.local/state/hwaac/netbox-4.7.3).",
    )
    p.add_argument(
        "--state",
        metavar="DIR",
        help="state folder (default: $HWAAC_NETBOX_STATE or ${XDG_STATE_HOME:-~/.local/state}/hwaac/netbox-4.7.3)",
    )
    add_server_commands(sub)
    cmd = add_subcommands(sub, SUBCOMMANDS)
    sy = cmd["sync"]
    sy.add_argument("--dry-run", action="store_true", help="print the creates, updates and deletes; write nothing")
    sy.add_argument(
        "--delete-active",
        action="store_true",
        help="delete devices the plan no longer has even when NetBox says they are active, staged or "
        "failed (without it they stop the sync); objects a person made are never deleted",
    )
    add_output(cmd["export"], "write here (default: standard output)")
    add_output(cmd["render"], "output folder (replaced atomically)", metavar=None, required=True)
    for each in cmd.values():  # after their own options: the order their help lists them in
        add_fabric(each, "fabric.yml, the folder holding it, or a fabric folder name under inventory/", metavar=None)
        each.add_argument("--url", help="NetBox base URL (default: $NETBOX_URL); the token is always $NETBOX_TOKEN")
