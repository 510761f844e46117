"""The local NetBox (``hwaac netbox up|down|status|token``, :class:`hwaac.devnetbox.local.LocalNetBox`), for real.

NetBox 4.7.3 from PyPI with its own PostgreSQL and Redis on loopback, brought up by the session fixture
``local_netbox`` (tests/integration/conftest.py). These tests FAIL, not skip, when it cannot start.

Tests that use the shared main instance hold a lease (shared use) so that the down/up test, which takes sole
use, never stops it under another xdist worker. The down/up test comes first in the file, so on its worker no
module fixture of this file holds a lease yet.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pynetbox
import pytest

from hwaac.devnetbox import api, baseline, procs
from hwaac.devnetbox.errors import LocalNetBoxError
from hwaac.devnetbox.instances import Instance
from hwaac.devnetbox.local import TEMPLATE_MARK, VERSION, LocalNetBox
from hwaac.errors import NetBoxError

if TYPE_CHECKING:
    from tests.integration.conftest import NetBoxPool

pytestmark = pytest.mark.integration

TOKEN_FORM = re.compile(r"nbt_[A-Za-z0-9]+\.[A-Za-z0-9]+")


def hwaac(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """Run the ``hwaac`` command of this venv."""
    return subprocess.run(
        [sys.executable, "-m", "hwaac.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def main_netbox(local_netbox: LocalNetBox) -> Iterator[LocalNetBox]:
    """The main instance, up, for one test (a lease: no other process stops it meanwhile)."""
    with local_netbox.lease():
        yield local_netbox


# It needs the NetBox to itself (no other process's lease): in the netbox_lifecycle group it runs on that group's
# worker right after the group, while the other worker is in the twin's group and holds no lease; handed out
# among the other NetBox tests it waited up to two minutes for their leases.
@pytest.mark.xdist_group("netbox_lifecycle")
def test_down_then_up_keeps_data_and_the_template(local_netbox: LocalNetBox) -> None:
    nb = local_netbox
    migrate_log = nb.logs / "migrate.log"
    with nb.exclusive(timeout=1200):
        nb.up()
        client = pynetbox.api(nb.url, token=nb.token)
        name = f"keep-{uuid.uuid4().hex[:8]}"
        site = client.dcim.sites.create(name=name, slug=name)
        migrate_size = migrate_log.stat().st_size
        try:
            nb.down()
            st = nb.status()
            assert not st.up and st.gunicorn is None and st.postgres is None and st.redis is None
            down = hwaac("netbox", "status")
            assert down.returncode == 3 and "netbox: down" in down.stdout, down.stdout + down.stderr
            # as after a reboot: pid files that name a live process which is not ours
            for pidfile in ("gunicorn.pid", "redis.pid"):
                (nb.run / pidfile).write_text(f"{os.getpid()}\n")
            assert nb.up() is True
            assert nb.status().up
            again = pynetbox.api(nb.url, token=nb.token).dcim.sites.get(slug=name)
            assert again is not None and again.id == site.id, "the served database lost its data over down/up"
            # the template was not rebuilt: no migration ran, and it is still marked ready
            assert migrate_log.stat().st_size == migrate_size
            assert (nb.state / TEMPLATE_MARK).is_file()
        finally:
            with nb.lease():
                leftover = pynetbox.api(nb.url, token=nb.token).dcim.sites.get(slug=name)
                if leftover is not None:
                    leftover.delete()


def test_status_reports_the_version_and_pids(main_netbox: LocalNetBox) -> None:
    r = hwaac("netbox", "status")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"up at {main_netbox.url} (NetBox {VERSION})" in r.stdout
    for service in ("gunicorn", "postgres", "redis"):
        assert re.search(rf"{service}: pid \d+", r.stdout), r.stdout
    assert api.status(main_netbox.url, main_netbox.token)["netbox-version"] == VERSION


def test_second_up_is_a_fast_no_op(main_netbox: LocalNetBox) -> None:
    before = main_netbox.status()
    r = hwaac("netbox", "up")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "already up" in r.stdout and "nothing to do" in r.stdout
    after = main_netbox.status()
    assert (after.gunicorn, after.postgres, after.redis) == (before.gunicorn, before.postgres, before.redis)


def test_token_is_printed_only_on_request(main_netbox: LocalNetBox) -> None:
    r = hwaac("netbox", "token")
    assert r.returncode == 0, r.stderr
    token = r.stdout.strip()
    assert TOKEN_FORM.fullmatch(token), "token is not of the nbt_<key>.<token> form"
    assert token == main_netbox.token
    secret = token.split(".", 1)[1]
    outputs = [hwaac("netbox", "up"), hwaac("netbox", "status")]
    for out in outputs:
        text = out.stdout + out.stderr
        assert secret not in text and not TOKEN_FORM.search(text), "the token leaked into up/status output"
    readable = [p for d in ("logs", "run", "root") for p in (main_netbox.state / d).rglob("*") if p.is_file()]
    assert readable, "no logs to check"
    for path in readable:
        assert secret.encode() not in path.read_bytes(), f"the token is written in {path}"
    token_file = main_netbox.state / "api-token"
    assert token_file.stat().st_mode & 0o077 == 0 and (main_netbox.state / "secrets.json").stat().st_mode & 0o077 == 0


def test_pynetbox_creates_and_reads_a_site(netbox_db: Instance) -> None:
    client = pynetbox.api(netbox_db.url, token=netbox_db.token)
    assert client.status()["netbox-version"] == VERSION
    created = client.dcim.sites.create(name="Site A", slug="site-a", status="planned", description="hwaac test")
    read = client.dcim.sites.get(slug="site-a")
    assert read is not None and read.id == created.id
    assert (read.name, read.status.value, read.description) == ("Site A", "planned", "hwaac test")


@pytest.mark.cost(60)
def test_fresh_database_has_none_of_the_previous_modules_objects(
    local_netbox: LocalNetBox, netbox_db: Instance
) -> None:
    with local_netbox.fresh("previous module") as previous:
        pynetbox.api(previous.url, token=previous.token).dcim.sites.create(name="leftover", slug="leftover")
        assert previous.database != netbox_db.database
    with local_netbox.fresh("previous module") as nxt:
        client = pynetbox.api(nxt.url, token=nxt.token)
        assert client.dcim.sites.count() == 0
        assert client.users.users.get(username="admin") is not None  # the template's admin and token work
    assert pynetbox.api(netbox_db.url, token=netbox_db.token).dcim.sites.get(slug="leftover") is None
    assert all(i.database != nxt.database for i in local_netbox.status().instances), "stopped instance still runs"


def test_a_kept_instance_is_served_as_copies_until_its_template_is_dropped(
    local_netbox: LocalNetBox, netbox_db: Instance
) -> None:
    template = f"kept_{uuid.uuid4().hex[:8]}"
    client = pynetbox.api(netbox_db.url, token=netbox_db.token)
    site = client.dcim.sites.create(name="kept", slug="kept")
    try:
        local_netbox.keep(netbox_db, template)
        assert local_netbox.has_template(template)
        assert client.dcim.sites.get(slug="kept").id == site.id  # its server goes on (its sessions were ended)
        with local_netbox.fresh("kept copy", template=template) as copy:
            other = pynetbox.api(copy.url, token=copy.token)
            assert copy.database != netbox_db.database and other.dcim.sites.get(slug="kept").id == site.id
            other.dcim.sites.create(name="only in the copy", slug="only-in-the-copy")
        assert client.dcim.sites.get(slug="only-in-the-copy") is None
    finally:
        local_netbox.drop_template(template)
        site.delete()
    assert not local_netbox.has_template(template)
    with pytest.raises(LocalNetBoxError, match=f"no database {template} to copy"):
        local_netbox.fresh("gone", template=template)


@pytest.mark.cost(85)
def test_a_renewed_instance_is_a_fresh_copy_served_by_new_workers(local_netbox: LocalNetBox) -> None:
    first = local_netbox.fresh("renew first")
    try:
        pynetbox.api(first.url, token=first.token).dcim.sites.create(name="leftover", slug="leftover")
        workers = procs.children(first.pid)
        assert len(workers) == 2
        first.release()
        t0 = time.monotonic()
        second = local_netbox.fresh("renew second", reuse=first)
        elapsed = time.monotonic() - t0
    except BaseException:
        first.stop()
        raise
    try:
        print(f"renewed in {elapsed:.1f} s")
        assert (second.database, second.pid, second.url) == (first.database, first.pid, first.url)
        assert len(procs.children(second.pid)) == 2 and not procs.children(second.pid) & workers
        client = pynetbox.api(second.url, token=second.token)
        assert client.dcim.sites.count() == 0
        assert client.users.users.get(username="admin") is not None  # the template's admin and token work
    finally:
        second.stop()
    # a stopped instance is not renewed: another one starts
    with local_netbox.fresh("renew third", reuse=second) as third:
        assert third.pid != second.pid and pynetbox.api(third.url, token=third.token).dcim.sites.count() == 0
    assert all(i.pid not in (second.pid, third.pid) for i in local_netbox.status().instances)


def test_the_baseline_leaves_netbox_migrate_nothing_to_apply(
    main_netbox: LocalNetBox, monkeypatch: pytest.MonkeyPatch
) -> None:
    # restored into a scratch database, NetBox's own `migrate --check` finds every migration applied...
    main_netbox.check_baseline()
    # ...and it would find one that a baseline lacks
    sql = baseline.read(VERSION)
    assert sql is not None
    head, rows = sql.split(b"COPY public.django_migrations ", 1)
    columns, _dropped, rest = rows.split(b"\n", 2)
    monkeypatch.setattr(
        baseline, "read", lambda version: head + b"COPY public.django_migrations " + columns + b"\n" + rest
    )
    with pytest.raises(LocalNetBoxError, match="netbox migrate on database hwaac_baseline_scratch failed"):
        main_netbox.check_baseline()


def test_wrong_token_gives_a_clear_error(main_netbox: LocalNetBox) -> None:
    real_secret = main_netbox.token.split(".", 1)[1]
    wrong = "nbt_AAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
    with pytest.raises(NetBoxError) as err:
        api.status(main_netbox.url, wrong)
    msg = str(err.value)
    assert "rejected the API token" in msg and "HTTP 403" in msg and "\n" not in msg, msg
    assert wrong not in msg and real_secret not in msg
    with pytest.raises(pynetbox.RequestError) as perr:
        pynetbox.api(main_netbox.url, token=wrong).dcim.sites.count()
    assert perr.value.req.status_code == 403


def test_down_is_refused_while_another_process_uses_it(main_netbox: LocalNetBox) -> None:
    r = hwaac("netbox", "down")
    assert r.returncode == 1
    assert "in use by another process" in r.stderr, r.stderr
    assert main_netbox.status().up


def test_a_taken_port_is_a_one_line_error() -> None:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((procs.LOOPBACK, 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(LocalNetBoxError) as err:
            procs.require_port(port, "HWAAC_NETBOX_PORT", "NetBox HTTP")
    msg = str(err.value)
    assert "\n" not in msg and f"port {port}" in msg and "HWAAC_NETBOX_PORT" in msg
    assert f"pid {os.getpid()}" in msg, msg


def test_state_lives_outside_the_checkout(local_netbox: LocalNetBox) -> None:
    repo = Path(__file__).resolve().parents[2]
    assert not local_netbox.state.resolve().is_relative_to(repo)
    assert (local_netbox.venv / "bin" / "gunicorn").is_file()


def test_a_closed_pool_leaves_no_lock_of_its_run(netbox_pool: NetBoxPool) -> None:
    # the pool of tests/integration/conftest.py: the lock its workers share while one of them makes a synced copy
    # goes with the copy when the pool closes (each run has its own id; they would pile up in the state folder)
    pool = type(netbox_pool)(netbox_pool.local, uuid.uuid4().hex[:12])
    template = f"synced_gone_{pool.run}"
    lock = pool._lock(template)
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.touch()
    pool.kept.append(template)
    pool.close()
    assert not lock.exists() and not netbox_pool.local.has_template(template)
