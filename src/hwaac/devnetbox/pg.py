"""A private PostgreSQL cluster for the local NetBox: initdb, start, stop and SQL through ``psql``.

The server listens on 127.0.0.1 only (no Unix socket) and asks for the password of the ``postgres`` role
(scram-sha-256), so other local users cannot use it. PostgreSQL refuses to run as root: when hwaac runs as root
the cluster runs as the ``postgres`` OS user (created by Debian's ``postgresql`` package), and its folder lives
where that user can reach it (see :func:`cluster_dir`). Binaries: ``HWAAC_PG_BINDIR``, else the newest
``/usr/lib/postgresql/<N>/bin`` (Debian/Ubuntu layout), else ``initdb`` on PATH.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pwd
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from hwaac.devnetbox import procs
from hwaac.devnetbox.errors import LocalNetBoxError

MIN_VERSION = 14  # NetBox 4.x needs PostgreSQL 14 or later (NetBox docs, installation/1-postgresql)
ROOT_CLUSTERS = Path("/var/lib/hwaac/netbox-pg")


def find_bindir() -> Path:
    """The folder holding ``initdb``, ``postgres`` and ``psql`` of PostgreSQL >= 14."""
    env = os.environ.get("HWAAC_PG_BINDIR")
    candidates = [Path(env)] if env else []
    if not env:
        found = []
        for d in Path("/usr/lib/postgresql").glob("*/bin"):
            with contextlib.suppress(ValueError):
                found.append((int(d.parent.name), d))
        candidates += [d for v, d in sorted(found, reverse=True) if v >= MIN_VERSION]
        if which := shutil.which("initdb"):
            candidates.append(Path(which).resolve().parent)
    for d in candidates:
        if all((d / b).is_file() for b in ("initdb", "postgres", "psql")):
            return d
    raise LocalNetBoxError(
        f"PostgreSQL >= {MIN_VERSION} server binaries (initdb, postgres, psql) not found in /usr/lib/postgresql/*/bin "
        "or on PATH; install them (Debian: apt-get install postgresql, or scripts/install-system-deps.sh) "
        "or set HWAAC_PG_BINDIR"
    )


def os_user() -> str | None:
    """The OS user the cluster runs as: None (ourselves) unless we are root, then ``postgres``."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise LocalNetBoxError(
            "running as root, the local PostgreSQL must run as the 'postgres' OS user, which "
            "does not exist; install Debian's postgresql package or run hwaac as a normal user"
        ) from None
    return "postgres"


def cluster_dir(state: Path) -> Path:
    """Where the cluster lives: ``STATE/pg``, except as root, where it is a symlink into /var/lib/hwaac.

    Root's home is not searchable by the ``postgres`` user, so as root the folder is
    ``/var/lib/hwaac/netbox-pg/<hash of STATE>`` and ``STATE/pg`` points at it.
    """
    link = state / "pg"
    if os.geteuid() != 0:
        return link
    target = ROOT_CLUSTERS / hashlib.sha256(str(state.resolve()).encode()).hexdigest()[:16]
    if not link.is_symlink():
        if link.exists():
            shutil.rmtree(link)
        link.symlink_to(target)
    return target


class Postgres:
    """One cluster: ``folder/data`` (PGDATA), listening on 127.0.0.1:``port``; ``password`` of role postgres."""

    def __init__(self, folder: Path, port: int, password: str, log: Path, run: Path) -> None:
        self.folder, self.port, self.password, self.log = folder, port, password, log
        self.spawn_pidfile = run / "postgres.pid"
        self.data = folder / "data"
        self.user = os_user()
        self.bindir = find_bindir()

    # --- lifecycle -------------------------------------------------------------------------------------------
    def initialized(self) -> bool:
        """True when ``data`` holds a cluster (PG_VERSION written by initdb)."""
        return (self.data / "PG_VERSION").is_file()

    def init(self) -> None:
        """Create the cluster: superuser ``postgres`` with our password, scram-sha-256 on TCP, UTF-8."""
        if self.data.exists():
            shutil.rmtree(self.data)
        self.folder.mkdir(parents=True, exist_ok=True)
        pwfile = self.folder / "initdb.pw"
        pwfile.write_text(self.password + "\n")
        pwfile.chmod(0o600)
        if self.user:
            uid, gid = pwd.getpwnam(self.user).pw_uid, pwd.getpwnam(self.user).pw_gid
            self.folder.parent.mkdir(parents=True, exist_ok=True)
            for p in (self.folder, pwfile):
                os.chown(p, uid, gid)
            self.folder.chmod(0o700)
        argv = [
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--pwfile",
            str(pwfile),
            "--auth-host=scram-sha-256",
            "--auth-local=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ]
        try:
            with self.log.open("ab") as out:
                rc = subprocess.call(
                    argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd="/", **self._user_kwargs()
                )
        finally:
            pwfile.unlink(missing_ok=True)
        if rc != 0:
            raise LocalNetBoxError(f"initdb failed (exit {rc})", log=self.log)

    def pid(self) -> int | None:
        """The postmaster's pid when it runs (first line of ``postmaster.pid``)."""
        try:
            pid = int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None
        return pid if procs.pid_alive(pid, "postgres") else None

    def start(self, timeout: float = 60.0) -> int:
        """Start the server unless it runs; wait until it accepts SQL. Returns the postmaster pid."""
        if pid := self.pid():
            return pid
        stale = self.data / "postmaster.pid"
        if stale.exists():  # left by a crash or a reboot; its pid may now belong to another process
            stale.unlink()
        procs.require_port(self.port, "HWAAC_NETBOX_PG_PORT", "PostgreSQL")
        argv = [
            str(self.bindir / "postgres"),
            "-D",
            str(self.data),
            "-p",
            str(self.port),
            "-c",
            f"listen_addresses={procs.LOOPBACK}",
            "-c",
            "unix_socket_directories=",
            "-c",
            "synchronous_commit=off",
            "-c",
            "max_connections=200",
        ]
        spawned = procs.spawn(argv, self.log, self.spawn_pidfile, user=self.user)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid = self.pid()
            if pid and self._ready():
                return pid
            if not procs.running(spawned):
                break
            time.sleep(0.2)
        raise LocalNetBoxError(
            f"PostgreSQL did not accept connections on {procs.LOOPBACK}:{self.port} within {timeout:.0f} s",
            log=self.log,
        )

    def stop(self, timeout: float = 60.0) -> None:
        """Fast shutdown (SIGINT: roll back open transactions, write a checkpoint), then wait."""
        if pid := self.pid():
            procs.stop(pid, "postgres", sig=signal.SIGINT, timeout=timeout)

    # --- SQL -------------------------------------------------------------------------------------------------
    def sql(self, statement: str, database: str = "postgres", *, check: bool = True) -> str:
        """Run one statement with ``psql`` and return its unaligned output (rows on lines, fields by ``|``)."""
        argv = self._client("psql", "-d", database, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", statement)
        r = subprocess.run(argv, capture_output=True, text=True, env=self._env(), stdin=subprocess.DEVNULL)
        if check and r.returncode != 0:
            raise LocalNetBoxError(
                f"PostgreSQL: {r.stderr.strip() or 'psql exit ' + str(r.returncode)} (statement: {statement[:120]})"
            )
        return r.stdout.strip()

    def dump(self, database: str) -> bytes:
        """``pg_dump`` of ``database`` as plain SQL, without owners and privileges (restorable by any role)."""
        _check_name(database)
        argv = self._client("pg_dump", "--no-owner", "--no-privileges", "-d", database)
        r = subprocess.run(argv, capture_output=True, env=self._env(), stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise LocalNetBoxError(f"pg_dump {database}: {r.stderr.decode(errors='replace').strip()[-500:]}")
        return r.stdout

    def restore(self, database: str, sql: bytes) -> None:
        """Run the SQL script ``sql`` (a plain ``pg_dump``) in ``database`` as one transaction, stopping at the
        first error (then nothing of it stays)."""
        _check_name(database)
        argv = self._client("psql", "-d", database, "-X", "-q", "-1", "-v", "ON_ERROR_STOP=1", "-f", "-")
        r = subprocess.run(argv, input=sql, capture_output=True, env=self._env())
        if r.returncode != 0:
            raise LocalNetBoxError(f"restoring into {database}: {r.stderr.decode(errors='replace').strip()[-500:]}")

    def databases(self) -> set[str]:
        """Names of the databases in the cluster."""
        return set(self.sql("SELECT datname FROM pg_database").splitlines())

    def create_from(self, name: str, template: str) -> None:
        """``CREATE DATABASE name TEMPLATE template`` (a file-level copy: seconds, however many migrations)."""
        _check_name(name)
        self.sql(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')

    def drop(self, name: str) -> None:
        """Drop ``name`` if it exists, ending its connections (a template is unmarked first)."""
        _check_name(name)
        if name in self.databases():
            self.sql(f'ALTER DATABASE "{name}" WITH IS_TEMPLATE false')
            self.sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def copy(self, source: str, name: str) -> None:
        """``name`` as a frozen template copy of ``source``, whose sessions are ended first (a database with
        other sessions cannot be copied; its server's next request connects again)."""
        _check_name(source)
        _check_name(name)
        self.sql(
            f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{source}' "
            "AND pid <> pg_backend_pid()"
        )
        self.drop(name)
        self.create_from(name, source)
        self.freeze_template(name)

    def freeze_template(self, name: str) -> None:
        """Mark ``name`` a template that accepts no connections, so nothing changes it after it was built."""
        _check_name(name)
        self.sql(f'ALTER DATABASE "{name}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false')

    # --- internals -------------------------------------------------------------------------------------------
    def _client(self, tool: str, *options: str) -> list[str]:
        """The command line of the client program ``tool`` (``psql``, ``pg_dump``) connecting to this cluster as
        ``postgres`` over loopback TCP, then ``options``."""
        return [str(self.bindir / tool), "-h", procs.LOOPBACK, "-p", str(self.port), "-U", "postgres", *options]

    def _env(self) -> dict[str, str]:
        return {**os.environ, "PGPASSWORD": self.password, "PGCONNECT_TIMEOUT": "5"}

    def _ready(self) -> bool:
        try:
            return self.sql("SELECT 1", check=True) == "1"
        except LocalNetBoxError:
            return False

    def _user_kwargs(self) -> dict:
        if not self.user:
            return {}
        pw = pwd.getpwnam(self.user)
        return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": os.getgrouplist(self.user, pw.pw_gid)}


def _check_name(name: str) -> None:
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
        raise ValueError(f"not a plain PostgreSQL identifier: {name!r}")
