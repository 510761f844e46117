"""``hwaac lab deploy NAME``: the twin as a deploy target, through the same rollout as a real fabric.

An Ansible inventory with one host per lab switch (``ansible_connection: local``; ``PATH`` starting with the
switch's ``bin/<device>/``: its ``sonic-cfggen``, ``config``, ``vtysh``) runs ``playbooks/fabric_deploy.yml``
(role aiinfra.hwaac.switch_config) with ``ansible-playbook`` (ansible-core, needed at run time). Batches: spines
before leaves, each tier in batches of ``--serial``; a switch's BGP gate asks for the share of its sessions whose
peer is configured (already, or in this or an earlier batch), so a first deploy of a bare fabric passes and a
later one needs every session (docs/lab-deploy.md). Any failed switch stops the rollout (max_fail_percentage 0).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hwaac.deploy.serial import BatchSizeError, parse_batch_size, valid
from hwaac.deploy.serial import batches as serial_batches
from hwaac.lab.api import Lab
from hwaac.lab.errors import LabError

Log = Callable[[str], None]
REPO = Path(__file__).resolve().parents[3]  # the collection root (galaxy.yml, playbooks/) of a checkout
PLAYBOOK = REPO / "playbooks" / "fabric_deploy.yml"
TIER_ORDER = ("super_spine", "spine", "leaf")
DEFAULT_SERIAL = "25%"
DEFAULT_GATE_S = 20
RUNNER_ENV = ("AWX_", "RUNNER_", "ANSIBLE_STDOUT_CALLBACK", "ANSIBLE_CALLBACK_PLUGINS", "ANSIBLE_CALLBACKS_ENABLED")
SERIAL_WORDS = {"hosts": "switches", "share_of": "each tier"}


@dataclass
class DeployResult:
    """What a deploy did: ``rc`` of ansible-playbook, the PLAY RECAP per switch, the batches, the switches that
    never started, the seconds, the log file."""

    rc: int
    recap: dict[str, dict[str, int]]
    batches: list[list[str]]
    seconds: float
    log_file: Path
    output: str = ""
    not_started: list[str] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return sum(1 for c in self.recap.values() if c.get("changed"))

    @property
    def failed(self) -> list[str]:
        return [n for n, c in self.recap.items() if c.get("failed") or c.get("unreachable")]

    def summary(self, lab: str) -> str:
        stopped = f"; rollout stopped, not started: {', '.join(self.not_started)}" if self.not_started else ""
        failed = f"; failed: {', '.join(self.failed)}" if self.failed else ""
        return (
            f"lab {lab}: deploy of {sum(len(b) for b in self.batches)} switches in {len(self.batches)} "
            f"batches: {self.changed} changed{failed}{stopped} ({self.seconds:.1f} s; log {self.log_file})"
        )


def parse_serial(text: str) -> str:
    """``--serial``: N or PCT%.

    Raises:
        LabError: naming the value and what is valid.
    """
    try:
        return parse_batch_size(text, "--serial", **SERIAL_WORDS)
    except BatchSizeError as exc:
        raise LabError(str(exc)) from None


def batches(lab: Lab, serial: str = DEFAULT_SERIAL) -> list[list[str]]:
    """The switches in rollout order: super spines, spines, leaves (then any other role), each tier in batches of
    ``serial`` (N switches, or PCT% of the tier rounded down, at least one, as Ansible cuts a play's batches)."""
    tiers: dict[str, list[str]] = {}
    for name, dev in lab.switches.items():
        tiers.setdefault(dev.role, []).append(name)
    order = [r for r in TIER_ORDER if r in tiers] + sorted(r for r in tiers if r not in TIER_ORDER)
    out: list[list[str]] = []
    for role in order:
        out += serial_batches(tiers[role], serial)
    return out


def _peers(lab: Lab) -> dict[tuple[str, str], str]:
    """(switch, neighbour address) -> the device at that address (from the lab's cabling and addresses)."""
    out: dict[tuple[str, str], str] = {}
    for link in lab.state.get("links", {}).values():
        (adev, _), (bdev, _) = link["a"], link["b"]
        addrs = list(link.get("addrs") or [])
        if len(addrs) >= 2:
            out[(adev, str(addrs[1]).split("/")[0])] = bdev
            out[(bdev, str(addrs[0]).split("/")[0])] = adev
    return out


def gate_shares(
    lab: Lab, order: list[list[str]], desired: dict[str, dict[str, Any]], running: dict[str, dict[str, Any]]
) -> dict[str, float]:
    """Per switch, the share of its desired BGP sessions that can come up during its gate: those whose peer
    already runs a BGP config, or is pushed in the same or an earlier batch (1.0 when all can, or none are
    desired; a peer the lab does not know counts as up)."""
    from hwaac.apply import bgp_neighbors

    batch_of = {n: i for i, b in enumerate(order) for n in b}
    configured = {n for n, cfg in running.items() if cfg.get("BGP_NEIGHBOR")}
    peers = _peers(lab)
    out: dict[str, float] = {}
    for name, i in batch_of.items():
        want = bgp_neighbors(desired.get(name, {}))
        if not want:
            out[name] = 1.0
            continue
        ready = 0
        for addr in want:
            peer = peers.get((name, addr))
            if peer is None or peer in configured or batch_of.get(peer, len(order)) <= i:
                ready += 1
        out[name] = math.floor(ready / len(want) * 10000) / 10000
    return out


def inventory(
    lab: Lab, render_dir: Path, shares: dict[str, float], *, gate_s: int, verify_gate: bool = False
) -> dict[str, Any]:
    """The inventory: group ``switches`` with one host per lab switch, in rollout order (see :func:`batches`);
    with ``verify_gate`` the role's verify gate reads each switch in its namespace (into ``deploy/verify-gate``)
    and judges it against the plan of ``render_dir``."""
    hosts: dict[str, Any] = {}
    for name, share in shares.items():
        env = lab.env(name)
        keep = {k: v for k, v in env.items() if k == "PATH" or k.startswith("HWAAC_")}
        hosts[name] = {
            "switch_config_bgp_min_up": share,
            "fabric_deploy_environment": keep,
            "hwaac_netns": lab.netns(name),
        }
    gate = (
        {
            "switch_config_verify_gate": True,
            "switch_config_verify_plan": str(render_dir),
            "switch_config_verify_dir": str(lab.folder / "deploy" / "verify-gate"),
        }
        if verify_gate
        else {}
    )
    return {
        "all": {
            "children": {
                "switches": {
                    "hosts": hosts,
                    "vars": {
                        "ansible_connection": "local",
                        "ansible_python_interpreter": sys.executable,
                        "switch_config_dir": str(render_dir),
                        "switch_config_bgp_retries": gate_s,
                        "switch_config_bgp_delay": 1,
                        "fabric_deploy_become": False,
                        **gate,
                    },
                }
            }
        }
    }


def recap(text: str) -> dict[str, dict[str, int]]:
    """PLAY RECAP per host: ``{host: {"ok": n, "changed": n, "failed": n, ...}}``."""
    out: dict[str, dict[str, int]] = {}
    if "PLAY RECAP" not in text:
        return out
    for host, counts in re.findall(r"^(\S+)\s+:\s+(ok=.*)$", text.split("PLAY RECAP")[-1], re.M):
        out[host] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", counts)}
    return out


def _forks(order: list[list[str]]) -> int:
    """A whole batch at once, but not more GCU runs (CPU-bound) than twice the cores."""
    return max(1, min(max(len(b) for b in order), 2 * (os.cpu_count() or 1)))


def _ansible_playbook() -> str:
    beside = Path(sys.executable).parent / "ansible-playbook"
    found = str(beside) if beside.exists() else shutil.which("ansible-playbook")
    if not found:
        raise LabError(
            "ansible-playbook not found: hwaac lab deploy runs the collection's playbook with "
            "ansible-core (pip install 'ansible-core>=2.21,<2.22', in hwaac's test extras)"
        )
    return found


@dataclass(frozen=True)
class PlaybookRun:
    """One ansible-playbook run: its exit status, output, seconds and log file."""

    rc: int
    output: str
    seconds: float
    log_file: Path


def run_playbook(
    playbook: Path,
    inventory_file: Path,
    extra_vars: Path,
    work: Path,
    *,
    check: bool = False,
    forks: int = 1,
    log: Log = lambda _: None,
) -> PlaybookRun:
    """Run one of the collection's playbooks from this checkout on an inventory file, its output logged line by line
    into ``work/<time>[-check].log`` and to ``log``.

    Raises:
        LabError: no ansible-playbook.
    """
    playbook_cmd = _ansible_playbook()
    stamp = time.strftime("%Y%m%dT%H%M%S")
    log_file = work / f"{stamp}{'-check' if check else ''}.log"
    argv = [playbook_cmd, "-i", str(inventory_file), str(playbook), "-e", f"@{extra_vars}"] + (
        ["--check", "--diff"] if check else []
    )
    # a run started from a playbook that ansible-runner runs (the remediation rulebook's) must not inherit the
    # runner's event callback and settings: its events would go to our log as escape sequences
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(RUNNER_ENV)}
    env = {
        **inherited,
        "ANSIBLE_COLLECTIONS_PATH": str(REPO),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORCE_COLOR": "0",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
        "ANSIBLE_LOCALHOST_WARNING": "0",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
        "ANSIBLE_FORKS": str(forks),
        "ANSIBLE_HOST_KEY_CHECKING": "0",
    }
    t0 = time.monotonic()
    lines: list[str] = []
    with open(log_file, "w", encoding="utf-8") as fh:
        proc = subprocess.Popen(
            argv, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            fh.write(line)
            lines.append(line)
            log(line.rstrip("\n"))
        rc = proc.wait()
    return PlaybookRun(rc, "".join(lines), time.monotonic() - t0, log_file)


@contextlib.contextmanager
def _deploy_lock(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LabError(f"another deploy of this lab is running (lock {folder / '.lock'})") from None
        yield
    finally:
        os.close(fd)


def deploy(
    lab: Lab,
    *,
    render_dir: Path | None = None,
    check: bool = False,
    serial: str = DEFAULT_SERIAL,
    gate_s: int = DEFAULT_GATE_S,
    verify_gate: bool = False,
    log: Log = lambda _: None,
) -> DeployResult:
    """Run the rollout on the lab's switches; ``log`` gets ansible-playbook's output line by line.

    Args:
        lab: a lab that is up.
        render_dir: the rendered folder to push (default: the one the lab was built from).
        check: ``--check --diff``: show what would change, change nothing.
        serial: batch size per tier, N or PCT% (:func:`parse_serial`).
        gate_s: seconds the BGP gate waits for the sessions (one read a second).
        verify_gate: after its BGP gate, each changed switch is gated by the verify catalog too (role variable
            ``switch_config_verify_gate``), judged against the lab's plan; for a change to a running lab.

    Raises:
        LabError: bad input (nothing run): a switch's rendered file missing, a bad ``serial``, no ansible-playbook,
            the collection's playbook not found, another deploy running.
    """
    from hwaac.lab.factory import prepare

    serial = parse_serial(serial)
    if lab.phase != "up":
        raise LabError(f"lab {lab.name} is {lab.phase or 'not built'}, not up: `hwaac lab down {lab.name}`, then up")
    render = Path(render_dir or lab.render_dir).resolve()
    missing = [n for n in lab.switches if not (render / "switches" / n / "config_db.json").is_file()]
    if missing:
        raise LabError(
            f"{render}: no switches/<name>/config_db.json for {', '.join(missing[:5])}"
            f"{' ...' if len(missing) > 5 else ''} (a folder written by hwaac plan FABRIC -o DIR)"
        )
    if not PLAYBOOK.is_file():
        raise LabError(f"{PLAYBOOK} not found: hwaac lab deploy runs the collection aiinfra.hwaac from a checkout")
    _ansible_playbook()
    switches = prepare(lab)
    desired = {
        n: json.loads((render / "switches" / n / "config_db.json").read_text(encoding="utf-8")) for n in lab.switches
    }
    running = {n: sw.state.running() for n, sw in switches.items()}
    order = batches(lab, serial)
    shares = gate_shares(lab, order, desired, running)
    work = lab.folder / "deploy"
    with _deploy_lock(work):
        inv = work / "inventory.json"
        inv.write_text(
            json.dumps(
                inventory(
                    lab, render, {n: shares[n] for b in order for n in b}, gate_s=gate_s, verify_gate=verify_gate
                ),
                indent=1,
            )
        )
        extra = work / "vars.json"
        extra.write_text(
            json.dumps({"fabric_deploy_serial": [len(b) for b in order], "fabric_deploy_max_fail_percentage": 0})
        )
        run = run_playbook(PLAYBOOK, inv, extra, work, check=check, forks=_forks(order), log=log)
    counts = recap(run.output)
    not_started = [n for b in order for n in b if n not in counts]
    return DeployResult(
        rc=run.rc,
        recap=counts,
        batches=order,
        seconds=run.seconds,
        log_file=run.log_file,
        output=run.output,
        not_started=not_started,
    )


# ----------------------------------------------------------------------------------------------------------- CLI


def cmd_deploy(args: argparse.Namespace) -> int:
    """``hwaac lab deploy``: exit 0 when every switch was pushed (or, with --reset, reset), 1 when the rollout
    stopped or a switch failed, 2 on bad input, 3 when the lab is not up."""
    from hwaac.lab.errors import LabNotUp

    quiet = bool(args.quiet)

    def say(line: str) -> None:
        print(line, flush=True)

    try:
        lab = Lab.load(args.name)
        if args.reset:
            from hwaac.lab.factory import reset

            reset(lab, log=say)
            say(f"lab {lab.name}: bare; `hwaac lab deploy {lab.name}` pushes {lab.render_dir}")
            return 0
        res = deploy(
            lab,
            render_dir=Path(args.render) if args.render else None,
            check=args.check,
            serial=args.serial,
            gate_s=args.gate_timeout,
            verify_gate=args.verify_gate,
            log=(lambda _: None) if quiet else say,
        )
    except LabNotUp as exc:
        print(f"hwaac lab deploy: {exc}", file=sys.stderr)
        return 3
    except LabError as exc:
        print(f"hwaac lab deploy: {exc}", file=sys.stderr)
        return 2
    if quiet:
        text = res.output
        say(text[text.rfind("PLAY RECAP") :].rstrip() if "PLAY RECAP" in text else text.rstrip())
    say(res.summary(lab.name))
    return 0 if res.rc == 0 else 1


def add_deploy_parser(lab_subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``deploy`` to the ``hwaac lab`` subcommands; its ``func`` returns the exit status."""
    p = lab_subparsers.add_parser(
        "deploy",
        help="push the rendered configs to the lab's switches through the Ansible rollout "
        "(playbooks/fabric_deploy.yml: GCU, checkpoints, BGP gate, rollback)",
        description="Run the collection's rolling push (role aiinfra.hwaac.switch_config) against the lab's "
        "switches: each has SONiC's config tools (apply-patch decided by SONiC's GCU when "
        "HWAAC_SONIC_TOOLKIT is set) and FRR that follows its CONFIG_DB. Needs ansible-core.",
    )
    p.add_argument("name", metavar="NAME", help="the lab")
    p.add_argument("--check", action="store_true", help="check mode with diff: show what would change")
    p.add_argument(
        "--serial",
        default=DEFAULT_SERIAL,
        metavar="N|PCT",
        help=f"batch size within each tier (spines, then leaves): {valid(**SERIAL_WORDS)}; default "
        f"{DEFAULT_SERIAL}".replace("%", "%%"),
    )  # argparse %-formats help texts
    p.add_argument("--render", metavar="DIR", help="push this rendered folder (default: the lab's own)")
    p.add_argument(
        "--gate-timeout",
        type=int,
        default=DEFAULT_GATE_S,
        metavar="S",
        help=f"seconds the BGP gate waits for a batch's sessions (default {DEFAULT_GATE_S})",
    )
    p.add_argument(
        "--verify-gate",
        action="store_true",
        help="after its BGP gate, gate each changed switch on the verify catalog (its cables, interfaces, "
        "sessions, prefixes, routes; a FAIL rolls it back): for a change to a running lab",
    )
    p.add_argument(
        "--reset",
        action="store_true",
        help="instead of deploying, reset every switch to its factory config (FRR without BGP)",
    )
    p.add_argument("--quiet", action="store_true", help="print only the recap, not the play")
    p.set_defaults(func=cmd_deploy)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m hwaac.lab.deploy NAME ...`` = ``hwaac lab deploy NAME ...``."""
    parser = argparse.ArgumentParser(prog="hwaac lab")
    add_deploy_parser(parser.add_subparsers(dest="lab_command", required=True))
    args = parser.parse_args(["deploy", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
