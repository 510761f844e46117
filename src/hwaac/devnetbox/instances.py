"""Fresh NetBox instances for tests: a copy of the template database served by its own gunicorn.

Each instance: database ``fresh_<name>_<owner pid>_<slot>`` created from the template (seconds), Redis databases
``2*slot`` and ``2*slot+1`` (flushed), gunicorn on a free loopback port. A record in ``run/instances/`` names the
owning process; instances whose owner died (a crashed test run, a reboot) are reaped on the next ``up`` or
``fresh``, and so are databases with that prefix left without a record.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hwaac.devnetbox import api, procs
from hwaac.devnetbox.errors import LocalNetBoxError
from hwaac.devnetbox.pg import Postgres
from hwaac.devnetbox.redis_server import DATABASES, Redis
from hwaac.devnetbox.server import Gunicorn, Runtime

PREFIX = "fresh_"
SLOTS = range(1, DATABASES // 2)  # slot 0 (Redis databases 0 and 1) is the main instance's


def slug(name: str) -> str:
    """``name`` as a lowercase identifier fragment (letters, digits, underscores; at most 30 characters)."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:30] or "x"


@dataclass
class Instance:
    """A running fresh NetBox: ``url``, ``database``; the admin token of the template works on it."""

    name: str
    database: str
    url: str
    pid: int
    slot: int
    token: str = field(repr=False)
    _manager: Instances | None = field(default=None, repr=False, compare=False)
    _on_stop: list[Callable[[], object]] = field(default_factory=list, repr=False, compare=False)

    def on_stop(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once when the instance stops (what it returns is ignored)."""
        self._on_stop.append(callback)

    def release(self) -> None:
        """Let go of it, leaving it running for :meth:`Instances.renew` (a test pool's next test)."""
        callbacks, self._on_stop = self._on_stop, []
        for cb in callbacks:
            cb()

    def stop(self) -> None:
        """Stop its gunicorn and drop its database (idempotent)."""
        try:
            if self._manager is not None:
                self._manager.remove(self.database)
                self._manager = None
        finally:
            callbacks, self._on_stop = self._on_stop, []
            for cb in callbacks:
                cb()

    def __enter__(self) -> Instance:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Instances:
    """The instances recorded in ``folder`` (``<database>.json`` each)."""

    def __init__(
        self,
        folder: Path,
        runtime: Runtime,
        pg: Postgres | None,
        redis: Redis,
        logs: Path,
        token: Callable[[], str] | None = None,
    ) -> None:
        self.folder, self.runtime, self.pg, self.redis, self.logs = folder, runtime, pg, redis, logs
        self.token = token or (lambda: "")

    def _gunicorn(self, rec: dict) -> Gunicorn:
        return Gunicorn(
            self.runtime,
            int(rec["port"]),
            rec["database"],
            2 * int(rec["slot"]),
            self.folder / f"{rec['database']}.pid",
            self.logs / "gunicorn-fresh.log",
            workers=int(rec.get("workers", 2)),
            port_env="(a free port)",
        )

    def records(self) -> list[dict]:
        """Every record, oldest first."""
        out = []
        for p in sorted(self.folder.glob(f"{PREFIX}*.json")):
            with contextlib.suppress(OSError, ValueError):
                out.append(json.loads(p.read_text()))
        return out

    def running(self) -> list[Instance]:
        """Instances whose gunicorn runs."""
        out = []
        for rec in self.records():
            g = self._gunicorn(rec)
            if pid := g.pid():
                out.append(Instance(rec["name"], rec["database"], g.url, pid, int(rec["slot"]), token=""))
        return out

    def create(self, name: str, template: str, *, workers: int = 2) -> Instance:
        """Create the database from ``template``, serve it, record it. Caller holds the setup lock."""
        assert self.pg is not None
        self.reap()
        self.folder.mkdir(parents=True, exist_ok=True)
        used = {int(r["slot"]) for r in self.records()}
        slot = next((s for s in SLOTS if s not in used), None)
        if slot is None:
            raise LocalNetBoxError(f"too many fresh NetBox instances running ({len(used)}); stop some")
        database = f"{PREFIX}{slug(name)}_{os.getpid()}_{slot}"
        self.pg.drop(database)
        self.pg.create_from(database, template)
        self.redis.flush(2 * slot, 2 * slot + 1)
        rec = {
            "name": name,
            "database": database,
            "slot": slot,
            "port": procs.free_port(),
            "owner": os.getpid(),
            "workers": workers,
        }
        (self.folder / f"{database}.json").write_text(json.dumps(rec) + "\n")
        g = self._gunicorn(rec)
        try:
            pid = g.start()
        except BaseException:
            self.remove(database)
            raise
        return Instance(name, database, g.url, pid, slot, token=self.token(), _manager=self)

    def renew(self, inst: Instance, name: str, template: str, *, timeout: float = 60.0) -> Instance | None:
        """``inst``, released by this process, serving a new copy of ``template``: its database created again
        from the template, its Redis databases flushed, its idle gunicorn workers killed (the master forks new
        ones from the preloaded application, so nothing of the previous user stays in a process that serves
        requests; a graceful exit would spend seconds in the interpreter's finalisation). About a second, where
        :meth:`create` starts Django again. None when it no longer runs (it is then removed). Caller holds the
        setup lock."""
        assert self.pg is not None
        path = self.folder / f"{inst.database}.json"
        try:
            rec = json.loads(path.read_text())
        except (OSError, ValueError):
            return None  # stopped, or removed by `hwaac netbox down`
        g = self._gunicorn(rec)
        pid = g.pid()
        if inst._manager is None or rec.get("owner") != os.getpid() or pid is None:  # stopped, not ours, or dead
            self.remove(inst.database)
            return None
        old = procs.children(pid)
        self.pg.drop(inst.database)
        self.pg.create_from(inst.database, template)
        self.redis.flush(2 * inst.slot, 2 * inst.slot + 1)
        for worker in old:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, signal.SIGKILL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and procs.running(pid):
            now = procs.children(pid)
            if not now & old and len(now) >= int(rec.get("workers", 2)) and api.answers(g.url):
                rec["name"] = name
                path.write_text(json.dumps(rec) + "\n")
                return Instance(name, inst.database, g.url, pid, inst.slot, token=self.token(), _manager=self)
            time.sleep(0.1)
        self.remove(inst.database)
        return None

    def remove(self, database: str) -> None:
        """Stop the instance's gunicorn, drop its database, delete its record."""
        path = self.folder / f"{database}.json"
        with contextlib.suppress(OSError, ValueError):
            self._gunicorn(json.loads(path.read_text())).stop()
        if self.pg is not None and self.pg.pid():
            self.pg.drop(database)
        path.unlink(missing_ok=True)
        (self.folder / f"{database}.pid").unlink(missing_ok=True)

    def reap(self) -> None:
        """Remove instances whose owning process is gone, and prefixed databases that have no record."""
        recorded = set()
        for rec in self.records():
            if _alive(int(rec.get("owner", 0))):
                recorded.add(rec["database"])
            else:
                self.remove(rec["database"])
        if self.pg is not None and self.pg.pid():
            for db in self.pg.databases():
                if db.startswith(PREFIX) and db not in recorded:
                    self.pg.drop(db)

    def stop_all(self) -> None:
        """Remove every instance (for ``down``)."""
        for rec in self.records():
            self.remove(rec["database"])


def _alive(pid: int) -> bool:
    return pid > 0 and Path(f"/proc/{pid}").exists()
