"""Terraform with the provider aiinfra/hwaac when things go wrong: an invalid intent fails ``terraform plan`` with
a diagnostic naming the field; NetBox down before or killed in the middle of an apply fails it with an error,
leaves a state Terraform can use, and the next apply converges with no duplicate objects; a pool a person recorded
is adopted untouched.

The tests share one NetBox (``netbox_db``): each works on objects of its own (the fabric tfplane, the prefix
10.99.0.0/16) and asserts on those, so their order does not matter.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pynetbox
import pytest
from terraform_run import PROVIDER_BLOCK, Terraform, terraform_dir

from hwaac.devnetbox import procs
from hwaac.devnetbox.instances import Instance
from hwaac.netbox.plane_state import plan_from_text
from hwaac.plan.model import Plan, ip_str

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INTENT = REPO / "tests/fixtures/intents/terraform/plane.yml"  # 1 plane, literal pools, 4-port switches
FTAG = "hwaac-fabric-tfplane"

MAIN_TF = (
    PROVIDER_BLOCK
    + """
resource "hwaac_fabric_plane" "plane0" {
  intent_file = "fabric.yml"
  plane       = 0
}
"""
)


def stack(nb: Instance, tmp_path: Path, intent_text: str) -> Terraform:
    tf = terraform_dir(tmp_path / "stack", tmp_path / "mirror", nb.url, nb.token)
    (tf.dir / "fabric.yml").write_text(intent_text)
    (tf.dir / "main.tf").write_text(MAIN_TF)
    tf.run("init", "-input=false")
    return tf


def planned_addresses(plan: Plan) -> int:
    return len(plan.switches) + sum(2 for _ in plan.links)


class Server:
    """The gunicorn serving one fresh NetBox instance: kill it (master and workers) and start it again."""

    def __init__(self, nb: Instance) -> None:
        manager = nb._manager
        assert manager is not None and manager.pg is not None
        self.server = manager._gunicorn(next(r for r in manager.records() if r["database"] == nb.database))
        self.pg, self.database = manager.pg, nb.database

    def kill(self) -> None:
        os.killpg(os.getpgid(self.server.pid()), signal.SIGKILL)  # gunicorn runs in its own session
        deadline = time.monotonic() + 30
        while not procs.port_free(self.server.port) and time.monotonic() < deadline:
            time.sleep(0.2)

    def start(self) -> None:
        self.server.start()

    @contextlib.contextmanager
    def cables_locked(self) -> Iterator[None]:
        """Hold a lock on NetBox's cable table in PostgreSQL (reads go on, writes wait), as a long transaction of
        another client would: an apply that reaches its cables waits there, so a kill lands mid-apply however
        fast or busy the machine is."""
        pg = self.pg
        psql = subprocess.Popen(
            [
                str(pg.bindir / "psql"),
                "-h",
                procs.LOOPBACK,
                "-p",
                str(pg.port),
                "-U",
                "postgres",
                "-d",
                self.database,
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=pg._env(),
        )
        assert psql.stdin is not None and psql.stdout is not None
        try:
            psql.stdin.write("BEGIN;\nLOCK TABLE dcim_cable IN SHARE ROW EXCLUSIVE MODE;\nSELECT 'locked';\n")
            psql.stdin.flush()
            assert psql.stdout.readline().strip() == "locked", psql.stderr.read() if psql.stderr else ""
            yield
        finally:
            with contextlib.suppress(OSError):
                psql.stdin.write("ROLLBACK;\n")
                psql.stdin.close()
            psql.wait(timeout=30)


def assert_converged(tf: Terraform, api: pynetbox.api, plan: Plan) -> None:
    tf.run("apply", "-input=false", "-auto-approve")
    assert tf.run("plan", "-input=false", "-detailed-exitcode").returncode == 0
    names = [d.name for d in api.dcim.devices.filter(tag=FTAG)]
    assert sorted(names) == sorted({s.name for s in plan.switches} | {n.name for n in plan.nodes})
    assert api.dcim.cables.count(tag=FTAG) == len(plan.links)
    addrs = [str(a.address) for a in api.ipam.ip_addresses.filter(tag=FTAG)]
    assert len(addrs) == len(set(addrs)) == planned_addresses(plan)  # no duplicate addresses


def changelog(api: pynetbox.api) -> int:
    """NetBox's change log length: every create, update and delete of any object adds to it."""
    return int(api.core.object_changes.count())


def test_invalid_intent_fails_plan_with_a_diagnostic_naming_the_field(netbox_db: Instance, tmp_path: Path) -> None:
    api = pynetbox.api(netbox_db.url, token=netbox_db.token)
    before = changelog(api)
    text = INTENT.read_text()
    tf = stack(netbox_db, tmp_path, text.replace("rails: 1", "rails: one"))
    lines = {t.strip().split(":")[0]: i for i, t in enumerate(text.splitlines(), 1) if ":" in t}
    r = tf.run("plan", "-input=false", check=False)
    assert r.returncode == 1
    assert f"fabric.yml:{lines['rails']}: fabric.rails" in r.stderr and "integer" in r.stderr, r.stderr
    assert 'hwaac_fabric_plane" "plane0"' in r.stderr  # Terraform points at the resource in main.tf
    # a semantic rule, not only the schema: more SUs than the spines are sized for
    (tf.dir / "fabric.yml").write_text(text.replace("su_count: 1", "su_count: 3"))
    r = tf.run("plan", "-input=false", check=False)
    assert r.returncode == 1, r.stderr
    assert f"fabric.yml:{lines['su_capacity']}: fabric.su_capacity: smaller than su_count" in r.stderr, r.stderr
    assert changelog(api) == before, "a plan of an invalid intent wrote to NetBox"


@pytest.mark.cost(100)
def test_netbox_down_before_or_killed_in_an_apply_then_the_next_apply_converges(
    netbox_db: Instance, tmp_path: Path
) -> None:
    nb = netbox_db
    api = pynetbox.api(nb.url, token=nb.token)
    server = Server(nb)

    # NetBox down before the apply of a saved plan: it fails naming NetBox, records nothing, the next converges
    text = INTENT.read_text()
    tf = stack(nb, tmp_path, text)
    tf.run("plan", "-input=false", "-out=tfplan")
    server.kill()
    try:
        r = tf.run("apply", "-input=false", "tfplan", check=False)
    finally:
        server.start()
    assert r.returncode == 1
    assert "sync to NetBox failed" in r.stderr and nb.url in r.stderr, r.stderr
    state = json.loads((tf.dir / "terraform.tfstate").read_text())  # written and readable
    assert [x for x in state.get("resources", []) if x["type"] == "hwaac_fabric_plane"] == []
    assert_converged(tf, api, plan_from_text(text, "fabric.yml"))

    # NetBox killed in the middle of an apply that grows the plane (an update of the resource in the state): the
    # grown intent's devices are written, its cables wait on a lock (Server.cables_locked) when NetBox dies
    before = json.loads((tf.dir / "terraform.tfstate").read_text())
    grown = text.replace("su_count: 1", "su_count: 2")
    plan = plan_from_text(grown, "fabric.yml")
    (tf.dir / "fabric.yml").write_text(grown)
    known = api.dcim.devices.count(tag=FTAG)
    try:
        with server.cables_locked():
            proc = tf.start("apply", "-input=false", "-auto-approve")
            deadline = time.monotonic() + 120
            while api.dcim.devices.count(tag=FTAG) == known:
                assert proc.poll() is None, "the apply ended before it wrote anything"
                assert time.monotonic() < deadline, "no device written within 120 s"
                time.sleep(0.2)
            assert proc.poll() is None, "the apply ended before NetBox was killed"
            server.kill()
            out, err = proc.communicate(timeout=300)
    finally:
        server.start()
    assert proc.returncode == 1, out + err
    assert "sync to NetBox failed" in err and "stopped answering" in err, err
    after = json.loads((tf.dir / "terraform.tfstate").read_text())
    plane = next(x for x in after["resources"] if x["type"] == "hwaac_fabric_plane")
    old = next(x for x in before["resources"] if x["type"] == "hwaac_fabric_plane")
    # the state still describes what was applied before: the grown intent is not recorded as done
    assert plane["instances"][0]["attributes"]["intent"] == old["instances"][0]["attributes"]["intent"] == text
    assert api.dcim.cables.count(tag=FTAG) < len(plan.links)  # the kill left the grown plane half written
    assert_converged(tf, api, plan)
    assert {ip_str(s.loopback) for s in plan.switches} <= {
        str(a.address).split("/")[0] for a in api.ipam.ip_addresses.filter(tag=FTAG)
    }


POOL_TF = (
    PROVIDER_BLOCK
    + """
resource "hwaac_ipam_pool" "ops" {
  prefix = "10.99.0.0/16"
  role   = "%s"
}
"""
)


@pytest.mark.cost(30)
def test_a_pool_recorded_by_hand_is_adopted_untouched_and_left_on_destroy(netbox_db: Instance, tmp_path: Path) -> None:
    nb = netbox_db
    api = pynetbox.api(nb.url, token=nb.token)
    role = api.ipam.roles.create(name="ops-p2p", slug="ops-p2p")
    other = api.ipam.roles.create(name="ops-other", slug="ops-other")
    pfx = api.ipam.prefixes.create(
        prefix="10.99.0.0/16", status="container", role=role.id, description="recorded by Ann"
    )
    tf = terraform_dir(tmp_path / "stack", tmp_path / "mirror", nb.url, nb.token)
    (tf.dir / "main.tf").write_text(POOL_TF % "ops-other")
    tf.run("init", "-input=false")
    r = tf.run("apply", "-input=false", "-auto-approve", check=False)  # the person's prefix has another role
    assert r.returncode == 1 and "10.99.0.0/16" in r.stderr and "'ops-p2p'" in r.stderr and "'ops-other'" in r.stderr
    assert other.id and api.ipam.prefixes.get(pfx.id).role.slug == "ops-p2p"
    (tf.dir / "main.tf").write_text(POOL_TF % "ops-p2p")
    before = api.core.object_changes.count()
    tf.run("apply", "-input=false", "-auto-approve")
    state = json.loads((tf.dir / "terraform.tfstate").read_text())
    attrs = state["resources"][0]["instances"][0]["attributes"]
    assert attrs["adopted"] is True and attrs["id"] == str(pfx.id)
    assert api.core.object_changes.count() == before  # adopted: nothing of it written
    assert tf.run("plan", "-input=false", "-detailed-exitcode").returncode == 0
    tf.run("destroy", "-auto-approve", "-input=false")
    kept = api.ipam.prefixes.get(pfx.id)
    assert kept is not None and kept.description == "recorded by Ann" and not kept.tags
