"""Fixtures shared by the integration tests."""

from __future__ import annotations

import contextlib
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from hwaac.devnetbox import procs
from hwaac.devnetbox.instances import Instance, slug
from hwaac.devnetbox.local import LocalNetBox
from hwaac.lab import Lab
from hwaac.netbox.errors import NetBoxError
from hwaac.netbox.sync import sync_plan
from hwaac.plan import build_plan
from hwaac.validate import load_intent
from tests.integration.lab_twin import planned_twin

DEMO = Path(__file__).resolve().parents[2] / "inventory" / "demo"


@pytest.fixture(scope="session")
def local_netbox() -> LocalNetBox:
    """The machine's local NetBox (``hwaac netbox up``), brought up by the test run itself.

    The first time on a machine it installs NetBox (~1 min) and creates the template from NetBox's migrated
    baseline (hwaac.devnetbox.baseline); afterwards it takes seconds, or nothing when it runs. xdist workers wait for
    each other on the state folder's setup lock. When NetBox cannot start the tests FAIL (never skip): CI must not
    pass without them.
    """
    nb = LocalNetBox(log=lambda msg: print(f"netbox: {msg}", file=sys.__stderr__, flush=True))
    try:
        nb.up()
    except NetBoxError as exc:
        pytest.fail(f"the local NetBox did not start: {exc}", pytrace=False)
    return nb


class NetBoxPool:
    """The fresh NetBox instances of this test process: one that a test or module is done with is renewed for
    the next (a new copy of the template database, flushed Redis, new gunicorn workers: Instances.renew) instead
    of stopped and started again, which costs Django's start-up each time."""

    def __init__(self, local: LocalNetBox, run: str) -> None:
        self.local = local
        self.run = run
        self.idle: list[Instance] = []
        self.kept: list[str] = []

    def take(self, name: str, template: str | None = None) -> Instance:
        """A fresh instance (an idle one renewed when there is one); give it back with :meth:`give`."""
        try:
            return self.local.fresh(name, reuse=self.idle.pop() if self.idle else None, template=template)
        except NetBoxError as exc:
            pytest.fail(f"no fresh NetBox database: {exc}", pytrace=False)

    def give(self, inst: Instance) -> None:
        inst.release()
        self.idle.append(inst)

    @contextlib.contextmanager
    def fresh(self, name: str) -> Iterator[Instance]:
        inst = self.take(name)
        try:
            yield inst
        finally:
            self.give(inst)

    @contextlib.contextmanager
    def synced(self, name: str, intent: Path) -> Iterator[Instance]:
        """A fresh NetBox holding ``intent``'s fabric as ``hwaac netbox sync`` writes it. The run's first test
        that asks syncs it and keeps a copy (a template database of this run); later ones, on any worker, get a
        copy of that in seconds instead of NetBox's minute of work per sync. The sync itself is proven by
        test_netbox_sync."""
        template = f"synced_{slug(intent.stem)[:20]}_{self.run}"
        lock = self._lock(template)
        lock.parent.mkdir(parents=True, exist_ok=True)
        with procs.file_lock(lock, timeout=1800, what=f"another test worker is syncing {intent.name}"):
            have = self.local.has_template(template)
            inst = self.take(name, template if have else None)
            try:
                if not have:
                    sync_plan(build_plan(load_intent(intent)), inst.url, inst.token)
                    self.local.keep(inst, template)
                    self.kept.append(template)
            except BaseException:
                self.give(inst)
                raise
        try:
            yield inst
        finally:
            self.give(inst)

    def _lock(self, template: str) -> Path:
        """The file the run's workers lock while one of them makes ``template``."""
        return self.local.state / "run" / f"{template}.lock"

    def close(self) -> None:
        while self.idle:
            self.idle.pop().stop()
        for template in self.kept:  # a worker still running makes it again if it needs it
            with contextlib.suppress(NetBoxError):
                self.local.drop_template(template)
            self._lock(template).unlink(missing_ok=True)


@pytest.fixture(scope="session")
def netbox_pool(local_netbox: LocalNetBox, request: pytest.FixtureRequest) -> Iterator[NetBoxPool]:
    # one id for the run, the same on every xdist worker: the synced copies are shared within the run only
    run = getattr(request.config, "workerinput", {}).get("testrunuid") or uuid.uuid4().hex
    pool = NetBoxPool(local_netbox, run[:12])
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="module")
def netbox_db(netbox_pool: NetBoxPool, request: pytest.FixtureRequest) -> Iterator[Instance]:
    """A NetBox for this test module alone: a fresh copy of the migrated template database, served by its own
    gunicorn (``.url``; ``.token`` is the admin's). Nothing of other modules is in it."""
    with netbox_pool.fresh(request.module.__name__.rsplit(".", 1)[-1]) as inst:
        yield inst


@pytest.fixture
def nb(netbox_pool: NetBoxPool, request: pytest.FixtureRequest) -> Iterator[Instance]:
    """A NetBox for this test alone (a fresh template copy): xdist may split a module's tests over workers, so
    tests that write fabrics do not share a database."""
    with netbox_pool.fresh(f"{request.module.__name__.rsplit('.', 1)[-1]} {request.node.name}") as inst:
        yield inst


@pytest.fixture
def synced_nb(netbox_pool: NetBoxPool, request: pytest.FixtureRequest) -> Iterator[Instance]:
    """A NetBox for this test alone holding the fabric of the test module's ``INTENT`` as ``hwaac netbox sync``
    writes it (NetBoxPool.synced: a copy of the run's one sync of that fabric)."""
    with netbox_pool.synced(request.node.name, request.module.INTENT) as inst:
        yield inst


class SharedTwin:
    """The demo's twin, brought up for the first module that asks and taken down after the last one (an idle twin
    of 88 namespaces keeps two cores busy enough to slow the rest of the run)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.stack = contextlib.ExitStack()
        self.lab: Lab | None = None

    def get(self) -> Lab:
        if self.lab is None:
            self.lab = self.stack.enter_context(planned_twin(self.folder, DEMO, "demotwin"))
        return self.lab

    def close(self) -> None:
        self.lab = None
        self.stack.close()


@pytest.fixture(scope="session")
def demo_twins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedTwin]:
    twins = SharedTwin(tmp_path_factory.mktemp("demo-twin"))
    try:
        yield twins
    finally:
        twins.close()


@pytest.fixture(scope="module")
def demo_twin(demo_twins: SharedTwin, request: pytest.FixtureRequest) -> Iterator[Lab]:
    """The demo's twin (every node), rendered as ``hwaac plan inventory/demo -o DIR`` writes it and converged, shared
    by the twin modules that leave it as they found it (verify, network health, mitigation: each undoes its faults
    and drains): one bring-up for them all. They are in xdist group ``lab``, which one worker runs in collection
    order, so the twin goes down after the last module of the collection that uses it (``hwaac lab down`` in
    ``.ci/run`` takes it down after a killed run)."""
    yield demo_twins.get()
    items = request.session.items
    last = max((k for k, item in enumerate(items) if item.module is request.module), default=len(items))
    if not any("demo_twin" in getattr(item, "fixturenames", ()) for item in items[last + 1 :]):
        demo_twins.close()
