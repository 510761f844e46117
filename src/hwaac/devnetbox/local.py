"""A real NetBox on this machine for development, tests and the demo: ``LocalNetBox(state).up()``.

Everything lives in one state folder outside any git checkout (default
``${XDG_STATE_HOME:-~/.local/state}/hwaac/netbox-4.7.3``, or ``HWAAC_NETBOX_STATE``). A template database, built
once from NetBox's migrated baseline (:mod:`hwaac.devnetbox.baseline`) with the admin user and token in it, is
copied for the served database and for every fresh test database. Ports on 127.0.0.1: ``HWAAC_NETBOX_PORT``
(8473), ``HWAAC_NETBOX_PG_PORT`` (54373), ``HWAAC_NETBOX_REDIS_PORT`` (63793). The folder's layout, the locks and
the databases: docs/devnetbox.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from hwaac.devnetbox import api, baseline, config, install, procs
from hwaac.devnetbox.errors import LocalNetBoxError
from hwaac.devnetbox.instances import Instance, Instances
from hwaac.devnetbox.pg import Postgres, cluster_dir
from hwaac.devnetbox.redis_server import Redis
from hwaac.devnetbox.server import Gunicorn, Runtime
from hwaac.devnetbox.usage import UsageLock
from hwaac.errors import NetBoxError

VERSION = "4.7.3"
DEFAULT_PORTS = {"http_port": 8473, "pg_port": 54373, "redis_port": 63793}
PORT_ENV = {
    "http_port": "HWAAC_NETBOX_PORT",
    "pg_port": "HWAAC_NETBOX_PG_PORT",
    "redis_port": "HWAAC_NETBOX_REDIS_PORT",
}
PORT_WHAT = {"http_port": "NetBox HTTP", "pg_port": "PostgreSQL", "redis_port": "Redis"}
TEMPLATE_DB, MAIN_DB = "netbox_template", "netbox"
ADMIN = "admin"
TEMPLATE_MARK = "template-ready"
# Django's system checks before a management command import NetBox's URLs and build its GraphQL schema: about
# 13 of the 18 CPU seconds of a `netbox migrate` with nothing to apply on 2 cores. They check NetBox's own pinned
# code and our generated configuration, which the server imports again when it starts and /api/status/ answers.
SKIP_CHECKS = "--skip-checks"


def default_state_dir() -> Path:
    """``HWAAC_NETBOX_STATE``, else ``${XDG_STATE_HOME:-$HOME/.local/state}/hwaac/netbox-<VERSION>``."""
    if env := os.environ.get("HWAAC_NETBOX_STATE"):
        return Path(env).expanduser().absolute()
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base).expanduser().absolute() / "hwaac" / f"netbox-{VERSION}"


def _ports_from_env() -> dict[str, int]:
    ports = {}
    for key, default in DEFAULT_PORTS.items():
        raw = os.environ.get(PORT_ENV[key], str(default))
        if not raw.isdigit() or not 0 < int(raw) < 65536:
            raise LocalNetBoxError(f"{PORT_ENV[key]}={raw!r} is not a TCP port number")
        ports[key] = int(raw)
    return ports


def _workers() -> int:
    raw = os.environ.get("HWAAC_NETBOX_WORKERS", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else max(2, min(4, os.cpu_count() or 2))


@dataclass(frozen=True)
class Status:
    """What runs: pids (None when not running), the URL, and NetBox's version when it answered."""

    url: str
    gunicorn: int | None
    postgres: int | None
    redis: int | None
    version: str | None
    instances: list[Instance]
    problem: str | None = None

    @property
    def up(self) -> bool:
        """All three services run and NetBox answered /api/status/ with our token."""
        return bool(self.gunicorn and self.postgres and self.redis and self.version)


class LocalNetBox:
    """The local NetBox of one state folder. ``log``: where progress lines go (default: nowhere)."""

    def __init__(self, state_dir: Path | str | None = None, *, log: Callable[[str], None] | None = None) -> None:
        self.state = Path(state_dir).absolute() if state_dir else default_state_dir()
        self.log = log or (lambda _msg: None)
        self.venv = self.state / "venv"
        self.netbox_root = self.state / "root"
        self.run = self.state / "run"
        self.logs = self.state / "logs"
        self._usage = UsageLock(self.state / "users.lock")

    # --- public API ------------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """Base URL of the main NetBox (no trailing slash)."""
        return f"http://{procs.LOOPBACK}:{self._ports()['http_port']}"

    @property
    def token(self) -> str:
        """The admin's v2 API token, ``nbt_<key>.<token>``. Keep it out of logs and output."""
        try:
            return (self.state / "api-token").read_text().strip()
        except OSError:
            raise LocalNetBoxError(f"no API token yet in {self.state}; run `hwaac netbox up` first") from None

    def up(self, *, setup_timeout: float = 1800.0) -> bool:
        """Install, start and serve (idempotent). Returns False when everything was already up (nothing done)."""
        with self._setup_lock(setup_timeout):
            if self._serving():
                self.log(f"already up at {self.url} (nothing to do)" + self._ports_note())
                return False
            t0 = time.monotonic()
            self._prepare()
            pg, redis = self._start_backends()
            self._ensure_template(pg, redis)
            if MAIN_DB not in pg.databases():
                self.log(f"creating database {MAIN_DB} from {TEMPLATE_DB}")
                pg.create_from(MAIN_DB, TEMPLATE_DB)
            self.instances(pg, redis).reap()
            self._main(redis).start()
            api.status(self.url, self.token)  # the token works and NetBox serves its API
            self.log(f"up at {self.url} (NetBox {VERSION}) in {time.monotonic() - t0:.1f} s")
            return True

    def down(self, *, wait: float = 0.0) -> None:
        """Stop gunicorn (main and fresh instances), Redis and PostgreSQL; data is kept.

        ``wait``: seconds to wait while another process uses the NetBox (a test run); then LocalNetBoxError.
        """
        with self.exclusive(wait), self._setup_lock(60):
            self._down_locked()

    def status(self) -> Status:
        """What runs now, probing NetBox's /api/status/ with the token (never shown)."""
        if not (self.state / config.SECRET_FILE).is_file():
            return Status(self.url, None, None, None, None, [], f"not set up yet ({self.state})")
        ports = self._ports()
        redis = self._redis(ports)
        pg_pid = self._pg(ports).pid() if (self.state / "pg" / "data").exists() else None
        gunicorn = self._main(redis).pid()
        version, problem = None, None
        if gunicorn:
            try:
                version = str(api.status(self.url, self.token).get("netbox-version"))
            except NetBoxError as exc:
                problem = str(exc)
        insts = self.instances(None, redis).running()
        return Status(self.url, gunicorn, pg_pid, redis.pid(), version, insts, problem)

    def fresh(
        self, name: str, *, workers: int = 2, reuse: Instance | None = None, template: str | None = None
    ) -> Instance:
        """A second NetBox serving a new copy of the template database (empty but for the admin and token), or of
        ``template``, a copy kept by :meth:`keep`.

        Takes seconds. The instance holds a shared use of this NetBox (``down`` waits for it); call
        ``stop()`` (or use it as a context manager) to stop its gunicorn and drop its database, or
        ``release()`` to leave it running for the next ``fresh(reuse=...)`` of this process, which renews it
        (:meth:`Instances.renew`) instead of starting another gunicorn. The same :attr:`token` works on it.
        """
        lease = self._usage.shared()
        lease.__enter__()
        try:
            self._ensure_up()
            with self._setup_lock(600):
                ports = self._ports()
                pg, redis = self._pg(ports), self._redis(ports)
                insts = self.instances(pg, redis)
                source = template or TEMPLATE_DB  # the setup made TEMPLATE_DB; a kept one may have been dropped
                if template is not None and template not in pg.databases():
                    raise LocalNetBoxError(f"no database {template} to copy")
                inst = (reuse is not None and insts.renew(reuse, name, source)) or insts.create(
                    name, source, workers=workers
                )
        except BaseException:
            lease.__exit__(None, None, None)
            raise
        inst.on_stop(lambda: lease.__exit__(None, None, None))
        return inst

    def keep(self, inst: Instance, template: str) -> None:
        """Keep what ``inst`` holds now as ``template`` (a frozen copy; :meth:`fresh` ``template=`` serves copies
        of it in seconds). Its server goes on; its open sessions are ended."""
        with self._setup_lock(600):
            self._pg(self._ports()).copy(inst.database, template)

    def has_template(self, template: str) -> bool:
        """Whether ``template`` (a copy made by :meth:`keep`) exists."""
        with self._setup_lock(600):
            return template in self._pg(self._ports()).databases()

    def drop_template(self, template: str) -> None:
        """Drop ``template`` (made by :meth:`keep`); nothing when it does not exist or PostgreSQL is down."""
        with self._setup_lock(600):
            pg = self._pg(self._ports())
            if pg.pid():
                pg.drop(template)

    @contextlib.contextmanager
    def lease(self, timeout: float = 1800.0) -> Iterator[LocalNetBox]:
        """Use the main NetBox for the ``with`` body: ensures it is up and keeps another process's ``down`` out."""
        with self._usage.shared(timeout):
            self._ensure_up()
            yield self

    def exclusive(self, timeout: float = 0.0) -> contextlib.AbstractContextManager[None]:
        """Sole use (no other process's lease) for the ``with`` body, e.g. ``down()`` then ``up()``."""
        return self._usage.exclusive(timeout)

    def instances(self, pg: Postgres | None, redis: Redis) -> Instances:
        """The fresh-database instances of this state folder."""
        return Instances(self.run / "instances", self._runtime(), pg, redis, self.logs, token=lambda: self.token)

    # --- steps of up -----------------------------------------------------------------------------------------
    def _prepare(self) -> None:
        if not self.state.exists():  # logs, pid files and the venv are nobody else's business
            self.state.parent.mkdir(parents=True, exist_ok=True)
            self.state.mkdir(mode=0o700)
        for d in (self.run, self.logs, self.netbox_root):
            d.mkdir(parents=True, exist_ok=True)
        _, new = config.load_secrets(self.state)
        old_data = cluster_dir(self.state) / "data"  # as root outside STATE: it outlives a deleted STATE
        if new and old_data.exists():  # a cluster of earlier secrets: its password is lost
            self.log(f"new secrets: discarding the old PostgreSQL cluster {old_data}")
            Postgres(old_data.parent, 0, "", self.logs / "postgres.log", self.run).stop()
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(old_data)
            (self.state / "api-token").unlink(missing_ok=True)
            (self.state / TEMPLATE_MARK).unlink(missing_ok=True)
        if not install.installed(self.venv, VERSION):
            self.log(f"installing NetBox {VERSION} from PyPI into {self.venv} (once; about a minute)")
            install.install(self.venv, VERSION, self.logs / "install.log")
        config.write_configuration(self.state, self.netbox_root)
        if not self._running_ports():
            ports = _ports_from_env()
            (self.run / "services.json").write_text(json.dumps(ports) + "\n")

    def _start_backends(self) -> tuple[Postgres, Redis]:
        ports = self._ports()
        pg = self._pg(ports)
        redis = self._redis(ports)
        # every port first, so a taken one stops `up` before anything starts
        for key, running in (
            ("pg_port", pg.initialized() and pg.pid()),
            ("redis_port", redis.pid()),
            ("http_port", self._main(redis).pid()),
        ):
            if not running:
                procs.require_port(ports[key], PORT_ENV[key], PORT_WHAT[key])
        if not pg.initialized():
            self.log(f"initdb {pg.data}")
            pg.init()
            (self.state / TEMPLATE_MARK).unlink(missing_ok=True)
        pg.start()
        redis.start()
        return pg, redis

    def _ensure_template(self, pg: Postgres, redis: Redis) -> None:
        if (self.state / TEMPLATE_MARK).is_file() and TEMPLATE_DB in pg.databases():
            return
        secrets = config.read_secrets(self.state)
        migrate_log = self.logs / "migrate.log"
        t0 = time.monotonic()
        pg.drop(MAIN_DB)  # built from an older template
        pg.drop(TEMPLATE_DB)
        pg.sql(f'CREATE DATABASE "{TEMPLATE_DB}"')
        self._restore_baseline(pg)
        rt = self._runtime()
        rt.manage(["migrate", "--no-input", SKIP_CHECKS], database=TEMPLATE_DB, log=migrate_log)
        rt.manage(
            ["createsuperuser", "--no-input", SKIP_CHECKS, "--username", ADMIN, "--email", "admin@localhost"],
            database=TEMPLATE_DB,
            log=migrate_log,
            env={"DJANGO_SUPERUSER_PASSWORD": secrets["admin_password"]},
        )
        self.log(f"migrated in {time.monotonic() - t0:.0f} s; creating the admin's API token")
        redis.flush(0, 1)
        temp = self._main(redis, database=TEMPLATE_DB)
        temp.start()
        try:
            token = api.provision_token(temp.url, ADMIN, secrets["admin_password"], "hwaac local NetBox")
        finally:
            temp.stop()
        config.write_private(self.state / "api-token", token + "\n")
        pg.freeze_template(TEMPLATE_DB)
        (self.state / TEMPLATE_MARK).write_text(f"{VERSION}\n")

    def _restore_baseline(self, pg: Postgres) -> None:
        """Fill the new, empty template from NetBox's migrated baseline (hwaac.devnetbox.baseline); without one, or
        when it does not restore, the template stays empty and ``netbox migrate`` builds all of it."""
        migrate_log = self.logs / "migrate.log"
        sql = baseline.read(VERSION)
        if sql is None:
            self.log(f"migrating {TEMPLATE_DB} from empty (once; 4-16 minutes on 2 cores; log {migrate_log})")
            return
        try:
            pg.restore(TEMPLATE_DB, sql)
        except LocalNetBoxError as exc:
            self.log(
                f"the baseline {baseline.path(VERSION).name} did not restore ({exc}); migrating {TEMPLATE_DB} "
                f"from empty (once; 4-16 minutes on 2 cores; log {migrate_log})"
            )
            pg.drop(TEMPLATE_DB)
            pg.sql(f'CREATE DATABASE "{TEMPLATE_DB}"')
            return
        self.log(
            f"{TEMPLATE_DB} restored from {baseline.path(VERSION).name}; `netbox migrate` applies what it "
            f"lacks (log {migrate_log})"
        )

    def migrated_dump(self) -> bytes:
        """``pg_dump`` of a scratch database that ``netbox migrate`` built from empty (for hwaac.devnetbox.baseline:
        no user, token or object in it). Needs the NetBox up."""
        with self._scratch() as (pg, scratch):
            self.log(f"migrating {scratch} from empty (4-16 minutes on 2 cores; log {self.logs / 'migrate.log'})")
            self._runtime().manage(
                ["migrate", "--no-input", SKIP_CHECKS], database=scratch, log=self.logs / "migrate.log"
            )
            return pg.dump(scratch)

    def check_baseline(self) -> None:
        """Restore this version's baseline into a scratch database and ask ``netbox migrate --check`` whether any
        migration is left to apply. Needs the NetBox up.

        Raises:
            LocalNetBoxError: there is no baseline, it does not restore, or migrations are missing from it.
        """
        sql = baseline.read(VERSION)
        if sql is None:
            raise LocalNetBoxError(f"no baseline for NetBox {VERSION} ({baseline.path(VERSION)})")
        with self._scratch() as (pg, scratch):
            pg.restore(scratch, sql)
            self._runtime().manage(
                ["migrate", "--check", "--plan", SKIP_CHECKS], database=scratch, log=self.logs / "migrate.log"
            )

    @contextlib.contextmanager
    def _scratch(self) -> Iterator[tuple[Postgres, str]]:
        pg, scratch = self._pg(self._ports()), "hwaac_baseline_scratch"
        with self._setup_lock(600):
            pg.drop(scratch)
            pg.sql(f'CREATE DATABASE "{scratch}"')
        try:
            yield pg, scratch
        finally:
            with self._setup_lock(600):
                pg.drop(scratch)

    def _down_locked(self) -> None:
        if not (self.state / config.SECRET_FILE).is_file():
            self.log(f"not set up in {self.state}; nothing to stop")
            return
        ports = self._ports()
        redis = self._redis(ports)
        pg = self._pg(ports) if (self.state / "pg" / "data").exists() else None
        stopped = []
        self.instances(pg if pg is not None and pg.pid() else None, redis).stop_all()
        if self._main(redis).pid():
            self._main(redis).stop()
            stopped.append("gunicorn")
        if redis.pid():
            redis.stop()
            stopped.append("redis")
        if pg is not None and pg.pid():
            pg.stop()
            stopped.append("postgres")
        self.log(f"stopped {', '.join(stopped)} (data kept in {self.state})" if stopped else "already down")

    # --- helpers ---------------------------------------------------------------------------------------------
    def _serving(self) -> bool:
        if not (self.state / config.SECRET_FILE).is_file():
            return False
        ports = self._ports()
        redis = self._redis(ports)
        if not (
            self._main(redis).pid()
            and redis.pid()
            and (self.state / "pg" / "data").exists()
            and self._pg(ports).pid()
            and (self.state / TEMPLATE_MARK).is_file()
        ):
            return False
        try:
            api.status(self.url, self.token, timeout=10)
        except NetBoxError:
            return False
        return True

    def _ports_note(self) -> str:
        try:
            wanted = _ports_from_env()
        except LocalNetBoxError as exc:
            return f"; note: {exc}"
        changed = [PORT_ENV[k] for k, v in self._ports().items() if wanted[k] != v]
        return f"; {', '.join(changed)} take effect after `hwaac netbox down`" if changed else ""

    def _ensure_up(self) -> None:
        if not self._serving():
            self.up()

    def _running_ports(self) -> bool:
        """True when one of our services still runs (then the recorded ports stay)."""
        if not (self.run / "services.json").is_file():
            return False
        ports = self._ports()
        return bool(
            self._redis(ports).pid()
            or self._main(self._redis(ports)).pid()
            or ((self.state / "pg" / "data").exists() and self._pg(ports).pid())
        )

    def _ports(self) -> dict[str, int]:
        try:
            recorded = json.loads((self.run / "services.json").read_text())
            return {k: int(recorded[k]) for k in DEFAULT_PORTS}
        except (OSError, ValueError, KeyError, TypeError):
            return _ports_from_env()

    def _runtime(self) -> Runtime:
        ports = self._ports()
        return Runtime(self.venv, self.netbox_root, ports["pg_port"], ports["redis_port"])

    def _pg(self, ports: dict[str, int]) -> Postgres:
        secrets = config.read_secrets(self.state)
        return Postgres(
            cluster_dir(self.state), ports["pg_port"], secrets["db_password"], self.logs / "postgres.log", self.run
        )

    def _redis(self, ports: dict[str, int]) -> Redis:
        secrets = config.read_secrets(self.state)
        return Redis(self.run, ports["redis_port"], secrets["redis_password"], self.logs / "redis.log")

    def _main(self, redis: Redis, database: str = MAIN_DB) -> Gunicorn:
        return Gunicorn(
            self._runtime(),
            self._ports()["http_port"],
            database,
            0,
            self.run / "gunicorn.pid",
            self.logs / "gunicorn.log",
            workers=_workers(),
        )

    def _setup_lock(self, timeout: float) -> contextlib.AbstractContextManager[int]:
        self.state.mkdir(parents=True, exist_ok=True)
        return procs.file_lock(
            self.state / "setup.lock",
            timeout=timeout,
            what=f"another process is setting up the local NetBox ({self.state / 'setup.lock'})",
        )
