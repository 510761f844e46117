"""Process plumbing for the local NetBox: detached starts, pid files, stops, loopback ports, file locks, log tails.

Linux only (reads ``/proc``). Services run in their own session (``setsid -f`` from util-linux), so they outlive
the ``hwaac`` command that started them, and write their output to a log file that this module opened.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from hwaac.devnetbox.errors import LocalNetBoxError

LOOPBACK = "127.0.0.1"


def cmdline(pid: int) -> str:
    """The command line of ``pid`` with NULs as spaces, or "" when no such process exists."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def running(pid: int) -> bool:
    """True when process ``pid`` exists and has not exited (a zombie has)."""
    try:
        return pid > 0 and "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def children(pid: int) -> set[int]:
    """The live child processes of ``pid`` (from ``/proc/<pid>/task/*/children``)."""
    out: set[int] = set()
    for f in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError, ValueError):
            out |= {int(c) for c in f.read_text().split()}
    return {c for c in out if running(c)}


def pid_alive(pid: int, marker: str) -> bool:
    """True when ``pid`` runs and its command line contains ``marker`` (a pid reused after a reboot is not ours).

    Only for pids read back from files: right after a start, during ``execve``, the command line can be empty
    for a moment, so a process just spawned is watched with :func:`running`.
    """
    return running(pid) and marker in cmdline(pid)


def read_pid(path: Path, marker: str) -> int | None:
    """The pid in the first line of ``path`` when that process runs and matches ``marker``; a stale file is removed."""
    try:
        pid = int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    if pid_alive(pid, marker):
        return pid
    with contextlib.suppress(OSError):
        path.unlink()
    return None


def spawn(
    argv: Sequence[str],
    log: Path,
    pidfile: Path,
    *,
    env: Mapping[str, str] | None = None,
    user: str | None = None,
    cwd: Path | str = "/",
    timeout: float = 10.0,
) -> int:
    """Start ``argv`` detached in a new session (``setsid -f``), stdout and stderr appended to ``log``.

    The started program's pid is written to ``pidfile`` (by a shell that then ``exec``s it, so the pid is the
    program's own) and returned. ``user``: drop to this OS user first (``setpriv``; only as root: PostgreSQL
    refuses to run as root).
    """
    if user is not None:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", *argv]
    pidfile.unlink(missing_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        out.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} start {' '.join(argv)}\n".encode())
        out.flush()
        rc = subprocess.call(
            ["setsid", "-f", "/bin/sh", "-c", 'echo $$ > "$0"; exec "$@"', str(pidfile), *argv],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
    if rc != 0:
        raise LocalNetBoxError(f"could not start {Path(argv[0]).name} (setsid exit {rc})", log=log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int(pidfile.read_text().split()[0])
        time.sleep(0.01)
    raise LocalNetBoxError(f"{Path(argv[0]).name} started but wrote no pid to {pidfile}", log=log)


def stop(pid: int, marker: str, *, sig: int = signal.SIGTERM, timeout: float = 30.0) -> None:
    """Send ``sig`` to ``pid`` and wait up to ``timeout`` seconds for it to exit; then SIGKILL it."""
    if not pid_alive(pid, marker):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid, marker):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    for _ in range(50):
        if not pid_alive(pid, marker):
            return
        time.sleep(0.1)


def port_free(port: int) -> bool:
    """True when a server could listen on 127.0.0.1:``port`` now (a socket in TIME_WAIT does not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((LOOPBACK, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def free_port() -> int:
    """An ephemeral loopback port that is free now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def listeners(port: int) -> set[int]:
    """Pids of the processes holding a listening TCP socket on ``port`` (scans ``/proc``; ours are visible)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                f = line.split()
                if len(f) > 9 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f[9])
    pids: set[int] = set()
    if inodes:
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                for fd in (proc / "fd").iterdir():
                    target = os.readlink(fd)
                    if target.startswith("socket:[") and target[8:-1] in inodes:
                        pids.add(int(proc.name))
                        break
    return pids


def port_owner(port: int) -> str:
    """Best effort: ``pid N (command)`` of a process listening on TCP ``port``, or "another program"."""
    for pid in sorted(listeners(port)):
        return f"pid {pid} ({' '.join(cmdline(pid).split())[:80]})"
    return "another program"


def require_port(port: int, env_name: str, what: str) -> None:
    """Raise a one-line error when ``port`` on 127.0.0.1 is taken, naming the holder and the env var to change."""
    if not port_free(port):
        raise LocalNetBoxError(
            f"port {port} on {LOOPBACK} ({what}) is in use by {port_owner(port)}; "
            f"stop it or set {env_name} to a free port"
        )


def tail(path: Path, lines: int = 25) -> str:
    """The last ``lines`` lines of a log file ("" when it does not exist)."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


@contextlib.contextmanager
def file_lock(path: Path, *, shared: bool = False, timeout: float = 1800.0, what: str = "") -> Iterator[int]:
    """Hold an ``flock`` on ``path`` (created if missing) for the ``with`` body; yields the descriptor.

    ``timeout`` in seconds (0: fail at once). Locks vanish with the process that held them, so a crash leaves
    nothing stale behind.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        acquire(fd, shared=shared, timeout=timeout, what=what or f"{path} is locked by another process")
        yield fd
    finally:
        os.close(fd)


def acquire(fd: int, *, shared: bool, timeout: float, what: str) -> None:
    """``flock`` ``fd`` shared or exclusive, polling for up to ``timeout`` seconds, else raise LocalNetBoxError."""
    mode = (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, mode)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LocalNetBoxError(f"{what} (waited {timeout:.0f} s)") from None
            time.sleep(0.2)
