"""Fixtures shared by the integration tests."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import pytest

from hwaac.netbox.errors import NetBoxError
from hwaac.netbox.instances import Instance
from hwaac.netbox.local import LocalNetBox


@pytest.fixture(scope="session")
def local_netbox() -> LocalNetBox:
    """The machine's local NetBox (``hwaac netbox up``), brought up by the test run itself.

    The first time on a machine it installs NetBox (~1 min) and creates the template from NetBox's migrated
    baseline (hwaac.netbox.baseline); afterwards it takes seconds, or nothing when it runs. xdist workers wait for
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

    def __init__(self, local: LocalNetBox) -> None:
        self.local = local
        self.idle: list[Instance] = []

    @contextlib.contextmanager
    def fresh(self, name: str) -> Iterator[Instance]:
        try:
            inst = self.local.fresh(name, reuse=self.idle.pop() if self.idle else None)
        except NetBoxError as exc:
            pytest.fail(f"no fresh NetBox database: {exc}", pytrace=False)
        try:
            yield inst
        finally:
            inst.release()
            self.idle.append(inst)

    def close(self) -> None:
        while self.idle:
            self.idle.pop().stop()


@pytest.fixture(scope="session")
def netbox_pool(local_netbox: LocalNetBox) -> Iterator[NetBoxPool]:
    pool = NetBoxPool(local_netbox)
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
