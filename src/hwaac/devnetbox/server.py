"""Running NetBox itself: its management commands (``netbox migrate`` ...) and gunicorn serving one database.

Every NetBox process gets ``NETBOX_ROOT`` (where ``conf/configuration.py`` lives) and ``HWAAC_NB_*`` (database,
Redis databases, ports; read by that configuration). gunicorn is what NetBox's docs deploy with
(installation/4-gunicorn); it runs detached, ``--preload`` (Django loads once, then forks the workers), without
gunicorn 26's control socket (one per user by default: several instances would fight over it).
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from hwaac.devnetbox import api, procs
from hwaac.devnetbox.errors import LocalNetBoxError


def request_timeout() -> str:
    """gunicorn's worker timeout in seconds: ``HWAAC_NETBOX_REQUEST_TIMEOUT`` or 600. A single bulk request of
    thousands of cables takes NetBox longer than that on 2 cores (benchmarks/netbox_sync.py's floor raises it)."""
    value = os.environ.get("HWAAC_NETBOX_REQUEST_TIMEOUT", "600")
    return value if value.isdigit() and int(value) > 0 else "600"


@dataclass(frozen=True)
class Runtime:
    """An installed NetBox: its venv, NETBOX_ROOT, and the ports of its PostgreSQL and Redis."""

    venv: Path
    netbox_root: Path
    pg_port: int
    redis_port: int

    def env(self, database: str, redis_db: int) -> dict[str, str]:
        """Environment for a NetBox process serving ``database`` with Redis databases ``redis_db``, ``+1``."""
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "DJANGO_SETTINGS_MODULE")
            and not k.startswith("HWAAC_NB_")
        }
        env.update(
            NETBOX_ROOT=str(self.netbox_root),
            PATH=f"{self.venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}",
            HWAAC_NB_DATABASE=database,
            HWAAC_NB_REDIS_DB=str(redis_db),
            HWAAC_NB_PG_PORT=str(self.pg_port),
            HWAAC_NB_REDIS_PORT=str(self.redis_port),
        )
        return env

    def manage(
        self, args: list[str], *, database: str, log: Path, env: dict[str, str] | None = None, timeout: float = 1800.0
    ) -> None:
        """Run ``netbox ARGS`` (a Django management command) against ``database``; output appended to ``log``."""
        full_env = {**self.env(database, 0), **(env or {})}
        with log.open("ab") as out:
            out.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} netbox {args[0]} ({database})\n".encode())
            out.flush()
            try:
                rc = subprocess.call(
                    [str(self.venv / "bin" / "netbox"), *args],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=out,
                    env=full_env,
                    cwd=self.netbox_root,
                    timeout=timeout,
                )
            except subprocess.TimeoutExpired:
                rc = -1
        if rc != 0:
            raise LocalNetBoxError(f"netbox {args[0]} on database {database} failed (exit {rc})", log=log)


@dataclass(frozen=True)
class Gunicorn:
    """gunicorn serving NetBox on 127.0.0.1:``port`` from ``database``; pid in ``pidfile``, output in ``log``."""

    runtime: Runtime
    port: int
    database: str
    redis_db: int
    pidfile: Path
    log: Path
    workers: int = 2
    port_env: str = "HWAAC_NETBOX_PORT"

    @property
    def url(self) -> str:
        """Base URL, no trailing slash."""
        return f"http://{procs.LOOPBACK}:{self.port}"

    def pid(self) -> int | None:
        """The gunicorn master's pid when it runs."""
        return procs.read_pid(self.pidfile, "gunicorn")

    def start(self, timeout: float = 120.0) -> int:
        """Start gunicorn unless it runs; wait until ``/api/status/`` answers. Returns the master's pid."""
        if pid := self.pid():
            return pid
        procs.require_port(self.port, self.port_env, "NetBox HTTP")
        argv = [
            str(self.runtime.venv / "bin" / "gunicorn"),
            "netbox.wsgi",
            "--preload",
            "--bind",
            f"{procs.LOOPBACK}:{self.port}",
            "--workers",
            str(self.workers),
            "--threads",
            "1",
            "--timeout",
            request_timeout(),
            "--graceful-timeout",
            "10",
            "--no-control-socket",
            "--name",
            f"hwaac-netbox-{self.database}",
        ]
        pid = procs.spawn(
            argv,
            self.log,
            self.pidfile,
            env=self.runtime.env(self.database, self.redis_db),
            cwd=self.runtime.netbox_root,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and procs.running(pid):
            if api.answers(self.url) and pid in procs.listeners(self.port):  # ours answers, not a squatter
                return pid
            time.sleep(0.2)
        procs.stop(pid, "")
        self.pidfile.unlink(missing_ok=True)
        raise LocalNetBoxError(
            f"NetBox (gunicorn, database {self.database}) did not answer at {self.url}", log=self.log
        )

    def stop(self) -> None:
        """Graceful stop (SIGTERM; workers finish their request within the graceful timeout)."""
        if pid := self.pid():
            procs.stop(pid, "gunicorn", timeout=30)
        self.pidfile.unlink(missing_ok=True)
