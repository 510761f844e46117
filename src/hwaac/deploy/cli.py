"""``hwaac deploy PLAYBOOK [-i INVENTORY] [-e KEY=VALUE | -e @FILE] [--check] [--diff] [--limit HOSTS]
[--batch-size N] [--artifacts DIR]``: a playbook of the collection through ansible-runner, with a progress display
per batch, the job events kept as artifacts and a recap per host and per batch (docs/deploy.md).

Exit status: 0 the run succeeded; 1 the run failed (a host failed or was unreachable, the rollout stopped, or
ansible-playbook refused the playbook or inventory); 2 usage (bad arguments, unknown playbook, missing inventory
or -e file, artifacts folder not empty, no ansible-playbook; nothing run); 3 the run was canceled (SIGINT, SIGTERM).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from hwaac.clikit import EXIT_FAILED, EXIT_OK, add_command, fail, silence_stdout

if TYPE_CHECKING:
    from hwaac.deploy.request import DeployRequest
    from hwaac.deploy.runner import Outcome

EXIT_CANCELED = 3
STDOUT_TAIL = 20  # lines of ansible-playbook's output shown when it stopped before any task


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``hwaac deploy`` to the main parser."""
    p = add_command(
        sub,
        "deploy",
        cmd_deploy,
        help="run a playbook of the collection (fabric_deploy, site, verify, ...) through ansible-runner, "
        "with progress per batch and the job events kept as artifacts",
        description="Run a playbook of the collection aiinfra.hwaac with ansible-runner (the runner AWX uses). "
        "Exit 0 success, 1 the run failed, 2 usage (nothing run), 3 canceled.",
    )
    p.add_argument(
        "playbook",
        metavar="PLAYBOOK",
        help="a playbook of the collection by name (fabric_deploy, site, verify, ...) or a playbook file",
    )
    p.add_argument(
        "-i",
        "--inventory",
        action="append",
        metavar="INVENTORY",
        help="inventory file or folder, or a host list with a comma (repeatable; default: ansible's)",
    )
    p.add_argument(
        "-e",
        "--extra-vars",
        action="append",
        metavar="KEY=VALUE|@FILE",
        help="extra variables as ansible-playbook -e takes them (repeatable)",
    )
    p.add_argument("--check", action="store_true", help="ansible's check mode: report what would change")
    p.add_argument("--diff", action="store_true", help="show the differences of what changes (or would)")
    p.add_argument("-l", "--limit", metavar="HOSTS", help="only these hosts (an ansible host pattern)")
    p.add_argument(
        "--batch-size",
        metavar="N",
        help="hosts per batch of every rolling play (N or PCT%%): sets the "
        "playbook's serial variables (fabric_deploy_serial, ...)",
    )
    p.add_argument(
        "--artifacts",
        metavar="DIR",
        help="folder for the job events, stdout, rc, status and "
        "summary.json (absent or empty; default build/deploy/<time>-<playbook>)",
    )


def cmd_deploy(args: argparse.Namespace) -> int:
    from hwaac.deploy.errors import DeployUsageError
    from hwaac.deploy.progress import display_for
    from hwaac.deploy.request import build_request
    from hwaac.deploy.runner import deploy

    try:
        request = build_request(
            args.playbook,
            inventories=args.inventory,
            extra_vars=args.extra_vars,
            limit=args.limit,
            batch_size=args.batch_size,
            check=args.check,
            diff=args.diff,
            artifacts=args.artifacts,
        )
    except DeployUsageError as exc:
        return fail("hwaac deploy", exc)
    display = display_for(sys.stderr)
    try:
        outcome = deploy(request, on_note=display.note)
    except DeployUsageError as exc:
        return fail("hwaac deploy", exc)
    finally:
        display.close()
    code = EXIT_OK if outcome.ok else EXIT_CANCELED if outcome.status == "canceled" else EXIT_FAILED
    try:
        _report(request, outcome)
    except BrokenPipeError:  # output piped into e.g. `head`: the run's own status still decides the exit
        silence_stdout()
    return code


def _report(request: DeployRequest, outcome: Outcome) -> None:
    """The recap and the closing lines of a run; on a run that stopped before any task, ansible-playbook's reason."""
    from hwaac.deploy.progress import recap

    if outcome.display_error:
        print(
            f"hwaac deploy: the progress display failed ({outcome.display_error}); the run went on without it",
            file=sys.stderr,
        )
    s = outcome.summary
    print(recap(s))
    mode = " (check mode)" if request.check else ""
    print(
        f"hwaac deploy {request.name}{mode}: {outcome.status} (ansible-playbook rc {outcome.rc}) in "
        f"{outcome.elapsed:.1f} s; {s['changed']} changed on {len(s['changed_hosts'])} host(s), "
        f"{len(s['failed_hosts'])} failed, {len(s['unreachable_hosts'])} unreachable; artifacts {outcome.artifacts}"
    )
    for name, n in outcome.masked.items():
        print(
            f"hwaac deploy: the value of {name} appeared {n} time(s) in the run's output and is masked in the "
            f"artifacts",
            file=sys.stderr,
        )
    if not outcome.ok and not s["hosts"]:  # ansible-playbook stopped before any task (a bad playbook, inventory
        stdout = outcome.artifacts / "stdout"  # or plugin): say why, from the masked copy
        tail = stdout.read_text(errors="replace").strip().splitlines()[-STDOUT_TAIL:] if stdout.is_file() else []
        for line in tail:
            print(f"hwaac deploy: ansible-playbook: {line}", file=sys.stderr)
