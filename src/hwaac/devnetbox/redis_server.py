"""A private Redis for the local NetBox: loopback only, password, no persistence (cache and task queue only).

NetBox uses two Redis databases per instance (``tasks`` and ``caching``, NetBox docs configuration/required-
parameters#redis). Each NetBox served by hwaac gets its own pair out of :data:`DATABASES`, so a fresh test
database never sees another instance's cache.
"""

from __future__ import annotations

import shutil
import socket
import time
from pathlib import Path

from hwaac.devnetbox import procs
from hwaac.devnetbox.errors import LocalNetBoxError

DATABASES = 256  # Redis' own default is 16; two per NetBox instance


class Redis:
    """``redis-server`` on 127.0.0.1:``port``, config ``run/redis.conf`` (0600: it holds the password)."""

    def __init__(self, run: Path, port: int, password: str, log: Path) -> None:
        self.run, self.port, self.password, self.log = run, port, password, log
        self.pidfile = run / "redis.pid"
        self.conf = run / "redis.conf"

    def pid(self) -> int | None:
        """The server's pid when it runs."""
        return procs.read_pid(self.pidfile, "redis-server")

    def start(self, timeout: float = 30.0) -> int:
        """Start the server unless it runs; wait until it answers PING. Returns its pid."""
        if pid := self.pid():
            return pid
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(binary).is_file():
            raise LocalNetBoxError(
                "redis-server not found; install it (Debian: apt-get install redis-server, "
                "or scripts/install-system-deps.sh)"
            )
        procs.require_port(self.port, "HWAAC_NETBOX_REDIS_PORT", "Redis")
        self.conf.write_text(
            "\n".join(
                [
                    f"bind {procs.LOOPBACK}",
                    f"port {self.port}",
                    "protected-mode yes",
                    "daemonize no",
                    'logfile ""',
                    f"dir {self.run}",
                    'save ""',
                    "appendonly no",
                    f"databases {DATABASES}",
                    f"requirepass {self.password}",
                    "",
                ]
            )
        )
        self.conf.chmod(0o600)
        pid = procs.spawn([binary, str(self.conf)], self.log, self.pidfile)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and procs.running(pid):
            if self._ping():
                return pid
            time.sleep(0.1)
        raise LocalNetBoxError(
            f"Redis did not answer on {procs.LOOPBACK}:{self.port} within {timeout:.0f} s", log=self.log
        )

    def stop(self) -> None:
        """SIGTERM and wait (nothing is saved: persistence is off)."""
        if pid := self.pid():
            procs.stop(pid, "redis-server")

    def flush(self, *databases: int) -> None:
        """Empty the given Redis databases (FLUSHDB in each)."""
        commands = [["AUTH", self.password]]
        for db in databases:
            commands += [["SELECT", str(db)], ["FLUSHDB"]]
        replies = self._call(commands)
        if any(not r.startswith("+") for r in replies):
            raise LocalNetBoxError(f"Redis refused FLUSHDB on databases {list(databases)}: {replies[-1]}")

    def _ping(self) -> bool:
        try:
            return self._call([["AUTH", self.password], ["PING"]])[-1] == "+PONG"
        except OSError:
            return False

    def _call(self, commands: list[list[str]]) -> list[str]:
        """Send RESP commands, return each reply's first line (enough for status replies)."""
        payload = b"".join(_encode(c) for c in commands)
        with socket.create_connection((procs.LOOPBACK, self.port), timeout=5) as s:
            s.sendall(payload)
            buf = b""
            while buf.count(b"\r\n") < len(commands):
                chunk = s.recv(4096)
                if not chunk:
                    break
                buf += chunk
        return [line.decode(errors="replace") for line in buf.split(b"\r\n")[: len(commands)]]


def _encode(args: list[str]) -> bytes:
    out = [f"*{len(args)}\r\n".encode()]
    for a in args:
        b = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)
