"""Fixtures shared by the integration tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from hwaac.netbox.errors import NetBoxError
from hwaac.netbox.instances import Instance
from hwaac.netbox.local import LocalNetBox


@pytest.fixture(scope="session")
def local_netbox() -> LocalNetBox:
    """The machine's local NetBox (``hwaac netbox up``), brought up by the test run itself.

    The first time on a machine it installs NetBox (~1 min) and migrates the template (~4 min); afterwards it
    takes seconds, or nothing when it runs. xdist workers wait for each other on the state folder's setup
    lock. When NetBox cannot start the tests FAIL (never skip): CI must not pass without them.
    """
    nb = LocalNetBox(log=lambda msg: print(f"netbox: {msg}", file=sys.__stderr__, flush=True))
    try:
        nb.up()
    except NetBoxError as exc:
        pytest.fail(f"the local NetBox did not start: {exc}", pytrace=False)
    return nb


@pytest.fixture(scope="module")
def netbox_db(local_netbox: LocalNetBox, request: pytest.FixtureRequest) -> Iterator[Instance]:
    """A NetBox for this test module alone: a fresh copy of the migrated template database, served by its own
    gunicorn (``.url``; ``.token`` is the admin's). Nothing of other modules is in it; it is dropped after the
    module."""
    try:
        inst = local_netbox.fresh(request.module.__name__.rsplit(".", 1)[-1])
    except NetBoxError as exc:
        pytest.fail(f"no fresh NetBox database: {exc}", pytrace=False)
    with inst:
        yield inst


@pytest.fixture
def nb(local_netbox: LocalNetBox, request: pytest.FixtureRequest) -> Iterator[Instance]:
    """A NetBox for this test alone (a fresh template copy): xdist may split a module's tests over workers, so
    tests that write fabrics do not share a database."""
    with local_netbox.fresh(f"{request.module.__name__.rsplit('.', 1)[-1]} {request.node.name}") as inst:
        yield inst
