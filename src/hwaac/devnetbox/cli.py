"""``hwaac netbox up|down|status|token``: the local NetBox (see :mod:`hwaac.devnetbox.local`).

Exit status: 0 ok (status: up); 1 failed (the error names the log to read, with its last lines); 3 status: down
or not fully up. The API token is printed by ``token`` only, never by the other commands.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from hwaac.clikit import EXIT_FAILED, EXIT_OK, Run, add_command, fail, guarded
from hwaac.errors import NetBoxError

if TYPE_CHECKING:
    from hwaac.devnetbox.local import LocalNetBox

EXIT_DOWN = 3


def _say(msg: str) -> None:
    print(f"netbox: {msg}", flush=True)


def _local(args: argparse.Namespace) -> LocalNetBox:
    from hwaac.devnetbox.local import LocalNetBox

    return LocalNetBox(args.state, log=_say)


def cmd_up(args: argparse.Namespace) -> int:
    nb = _local(args)
    nb.up()
    return EXIT_OK


def cmd_down(args: argparse.Namespace) -> int:
    _local(args).down(wait=args.wait)
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    nb = _local(args)
    st = nb.status()
    state = (
        f"up at {st.url} (NetBox {st.version})"
        if st.up
        else "down"
        if not any((st.gunicorn, st.postgres, st.redis))
        else "not fully up"
    )
    print(f"netbox: {state}")
    print(f"  state folder: {nb.state}")
    for what, pid in (("gunicorn", st.gunicorn), ("postgres", st.postgres), ("redis", st.redis)):
        print(f"  {what}: " + (f"pid {pid}" if pid else "not running"))
    for inst in st.instances:
        print(f"  fresh instance {inst.name}: {inst.url} database {inst.database} (gunicorn pid {inst.pid})")
    if st.problem:
        print(f"  problem: {st.problem}")
    return EXIT_OK if st.up else EXIT_DOWN


def cmd_token(args: argparse.Namespace) -> int:
    print(_local(args).token)
    return EXIT_OK


def _failed(exc: NetBoxError | KeyboardInterrupt, args: argparse.Namespace) -> int:
    why = exc if isinstance(exc, NetBoxError) else "interrupted"
    return fail(f"hwaac netbox {args.netbox_command}", why, EXIT_FAILED)


def _run(func: Run) -> Run:
    return guarded(func, [((NetBoxError, KeyboardInterrupt), _failed)])


def add_server_commands(sub: argparse._SubParsersAction) -> None:
    """Add ``up``, ``down``, ``status`` and ``token`` to the subcommands of ``hwaac netbox``."""
    add_command(sub, "up", _run(cmd_up), help="install (once), start and serve; does nothing when already up")
    down = add_command(sub, "down", _run(cmd_down), help="stop gunicorn, Redis and PostgreSQL (data is kept)")
    down.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long while a test run uses the NetBox (default: refuse at once)",
    )
    add_command(sub, "status", _run(cmd_status), help="what runs; exit 0 when up, 3 when down")
    add_command(sub, "token", _run(cmd_token), help="print the local admin's API token (nbt_<key>.<token>)")
