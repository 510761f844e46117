"""Collector for the twin (hwaac.lab) or anything with ``run(device, argv, timeout=)``: commands in parallel.

A device with more than one command gets one ``sh -c`` that runs them all at once in the background and prints
each one's streams and exit status between marker lines, so a device costs one namespace entry and a host's
pings wait in parallel. A ``vtysh -c CMD`` whose daemon is known is read from that daemon's vty socket when the
runner offers it (``hwaac.lab.Lab.vty``: the same bytes, without vtysh's start); when that fails, vtysh itself
runs, so a daemon that is down reads as vtysh reports it. Outputs are the same
:class:`~hwaac.verify.raw.Raw` records every way.
"""

from __future__ import annotations

import secrets
import shlex
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from hwaac.verify.raw import Command, Outputs, Raw, Runner

BATCH_FROM = 2  # a device with more than one command gets one batched shell: one namespace entry per device
# the daemon serving a vtysh command (FRR vtysh/vtysh.c routes "show bgp" to bgpd, "show ip route" to zebra)
VTY_DAEMONS = (("show bgp ", "bgpd"), ("show ip bgp ", "bgpd"), ("show ip route", "zebra"))
BATCHES_AT_ONCE = 16  # batched shells side by side (each starts its ~26 commands at once: 400 processes at most)


class LabCollector:
    """Runs the requested commands through ``runner`` with ``workers`` threads."""

    def __init__(self, runner: Runner, *, workers: int = 24, timeout: float = 60.0) -> None:
        self.runner = runner
        self.workers = workers
        self.timeout = timeout
        self._batches = threading.BoundedSemaphore(BATCHES_AT_ONCE)
        vty = getattr(runner, "vty", None)
        self._vty: Callable[..., str] | None = vty if callable(vty) else None

    def collect(self, requests: Mapping[str, Sequence[Command]]) -> Outputs:
        jobs: list[tuple[str, list[Command]]] = []
        for device, commands in requests.items():
            unique = list(dict.fromkeys(commands))
            if self._vty is not None:  # each read from its daemon on its own, the rest batched
                jobs.extend((device, [c]) for c in unique if vty_daemon(c))
                unique = [c for c in unique if not vty_daemon(c)]
            if len(unique) >= BATCH_FROM:
                jobs.append((device, unique))
            else:
                jobs.extend((device, [c]) for c in unique)
        out: Outputs = {device: {} for device in requests}
        # the longest jobs (batches) first, so they do not end up alone at the end
        jobs.sort(key=lambda j: -len(j[1]))
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            for device, raws in pool.map(lambda j: (j[0], self._job(*j)), jobs):
                out[device].update(raws)
        return out

    def _job(self, device: str, commands: list[Command]) -> dict[str, Raw]:
        if len(commands) == 1:
            return {commands[0].key: self._one(device, commands[0])}
        marker = f"@@hwaac-{secrets.token_hex(8)}"
        script = batch_script(commands, marker)
        try:
            with self._batches:  # a few hosts' process bursts at a time, not all 24 workers' at once
                proc = self.runner.run(device, ["sh", "-c", script], timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return {
                c.key: Raw(c.argv, error=f"timed out after {self.timeout:g} s (batch of {len(commands)})")
                for c in commands
            }
        except Exception as exc:  # the runner's own error (device unknown, namespace gone): every command failed
            return {c.key: Raw(c.argv, error=f"{type(exc).__name__}: {exc}") for c in commands}
        return split_batch(commands, marker, proc.stdout, proc.returncode, proc.stderr)

    def _one(self, device: str, command: Command) -> Raw:
        vty = self._vty
        daemon = vty_daemon(command) if vty is not None else None
        if vty is not None and daemon is not None:
            try:
                return Raw(command.argv, 0, vty(device, daemon, command.argv[2], timeout=self.timeout))
            except Exception:  # vtysh itself then says what is wrong, in its own words
                pass
        try:
            proc = self.runner.run(device, list(command.argv), timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return Raw(command.argv, error=f"timed out after {self.timeout:g} s")
        except Exception as exc:
            return Raw(command.argv, error=f"{type(exc).__name__}: {exc}")
        return Raw(command.argv, proc.returncode, proc.stdout or "", proc.stderr or "")


def vty_daemon(command: Command) -> str | None:
    """The FRR daemon answering ``command`` when it is a plain ``vtysh -c CMD`` of :data:`VTY_DAEMONS`, else None."""
    argv = command.argv
    if len(argv) != 3 or argv[:2] != ("vtysh", "-c"):
        return None
    return next((daemon for prefix, daemon in VTY_DAEMONS if argv[2].startswith(prefix)), None)


def batch_script(commands: Sequence[Command], marker: str) -> str:
    """A POSIX shell script running ``commands`` in parallel and printing each one's results in order::

        MARKER i o\\n<stdout>\\nMARKER i e\\n<stderr>\\nMARKER i r RC\\n

    One process per command: the shell's own ``printf`` and ``wait`` write the markers and exit statuses to files
    and one ``cat`` prints them all (a ``cat`` per stream and a subshell per command made five times as many
    processes, most of a lab verify's CPU).
    """
    m = shlex.quote(marker)
    # in tmpfs where there is one: ext4's inode allocator (find_inode_bit, recently_deleted) made these short-lived
    # files a third of a lab verify's CPU
    lines = ['d=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d) || exit 97', 'trap \'rm -rf "$d"\' EXIT']
    for i, c in enumerate(commands):
        lines.append(
            f'printf "%s {i} o\\n" {m} >"$d/{i}.h"; printf "\\n%s {i} e\\n" {m} >"$d/{i}.m"; '
            f'{shlex.join(c.argv)} >"$d/{i}.o" 2>"$d/{i}.e" </dev/null & p{i}=$!'
        )
    for i in range(len(commands)):
        lines.append(f'wait "$p{i}"; printf "\\n%s {i} r %s\\n" {m} "$?" >"$d/{i}.t"')
    lines.append("cat " + " ".join(f'"$d/{i}.{k}"' for i in range(len(commands)) for k in "homet"))
    return "\n".join(lines) + "\n"


def split_batch(commands: Sequence[Command], marker: str, stdout: str, rc: int, stderr: str) -> dict[str, Raw]:
    """The outputs of :func:`batch_script`; a command whose section is missing gets an ``error``."""
    sections: dict[tuple[int, str], str] = {}
    rcs: dict[int, int] = {}
    current: tuple[int, str] | None = None
    buf: list[str] = []
    for line in stdout.split("\n"):
        if line.startswith(marker + " "):
            if current is not None:
                sections[current] = "\n".join(buf)
            parts = line.split()
            index, kind = int(parts[1]), parts[2]
            if kind == "r":
                current = None
                if len(parts) > 3 and parts[3].lstrip("-").isdigit():
                    rcs[index] = int(parts[3])
            else:
                current = (index, kind)
            buf = []
        elif current is not None:
            buf.append(line)
    out: dict[str, Raw] = {}
    for i, c in enumerate(commands):
        if i not in rcs:
            why = (stderr or "").strip().splitlines()[-1:] or [f"shell exit status {rc}"]
            out[c.key] = Raw(c.argv, error=f"no result from the batch shell: {why[0]}")
            continue
        # the newline printed before each marker ended the section's last line, so the lines join back exactly
        out[c.key] = Raw(c.argv, rcs[i], sections.get((i, "o"), ""), sections.get((i, "e"), ""))
    return out
