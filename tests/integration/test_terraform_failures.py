"""Terraform with the provider aiinfra/hwaac when things go wrong: an invalid intent fails ``terraform plan`` with
a diagnostic naming the field; NetBox down before or in the middle of an apply fails it with an error, leaves a
state Terraform can use, and the next apply converges with no duplicate objects."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pynetbox
import pytest
from terraform_run import PROVIDER_BLOCK, Terraform, terraform_dir

from hwaac.netbox import procs
from hwaac.netbox.instances import Instance
from hwaac.netbox.plane_state import plan_from_text
from hwaac.plan.model import Plan, ip_str

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INTENT = REPO / "tests/fixtures/intents/valid/netbox-sync.yml"  # 1 plane, literal pools
FTAG = "hwaac-fabric-nbsync"

MAIN_TF = PROVIDER_BLOCK + """
resource "hwaac_fabric_plane" "plane0" {
  intent_file = "fabric.yml"
  plane       = 0
}
"""


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
        assert manager is not None
        self.server = manager._gunicorn(next(r for r in manager.records() if r["database"] == nb.database))

    def kill(self) -> None:
        os.killpg(os.getpgid(self.server.pid()), signal.SIGKILL)  # gunicorn runs in its own session
        deadline = time.monotonic() + 30
        while not procs.port_free(self.server.port) and time.monotonic() < deadline:
            time.sleep(0.2)

    def start(self) -> None:
        self.server.start()


def assert_converged(tf: Terraform, api: pynetbox.api, plan: Plan) -> None:
    tf.run("apply", "-input=false", "-auto-approve")
    assert tf.run("plan", "-input=false", "-detailed-exitcode").returncode == 0
    names = [d.name for d in api.dcim.devices.filter(tag=FTAG)]
    assert sorted(names) == sorted({s.name for s in plan.switches} | {n.name for n in plan.nodes})
    assert api.dcim.cables.count(tag=FTAG) == len(plan.links)
    addrs = [str(a.address) for a in api.ipam.ip_addresses.filter(tag=FTAG)]
    assert len(addrs) == len(set(addrs)) == planned_addresses(plan)  # no duplicate addresses


def test_invalid_intent_fails_plan_with_a_diagnostic_naming_the_field(netbox_db: Instance, tmp_path: Path) -> None:
    text = INTENT.read_text()
    tf = stack(netbox_db, tmp_path, text.replace("rails: 2", "rails: two"))
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.strip().startswith("rails:"))
    r = tf.run("plan", "-input=false", check=False)
    assert r.returncode == 1
    assert f"fabric.yml:{line}: fabric.rails" in r.stderr and "integer" in r.stderr, r.stderr
    assert 'hwaac_fabric_plane" "plane0"' in r.stderr  # Terraform points at the resource in main.tf
    # a semantic rule, not only the schema: more SUs than the spines are sized for
    (tf.dir / "fabric.yml").write_text(text.replace("su_count: 1", "su_count: 3"))
    r = tf.run("plan", "-input=false", check=False)
    assert r.returncode == 1 and "fabric.yml:8: fabric.su_capacity: smaller than su_count" in r.stderr, r.stderr
    assert pynetbox.api(netbox_db.url, token=netbox_db.token).dcim.devices.count() == 0


def test_netbox_down_before_apply_then_the_next_apply_converges(nb: Instance, tmp_path: Path) -> None:
    text = INTENT.read_text()
    plan = plan_from_text(text, "fabric.yml")
    tf = stack(nb, tmp_path, text)
    tf.run("plan", "-input=false", "-out=tfplan")
    server = Server(nb)
    server.kill()
    r = tf.run("apply", "-input=false", "tfplan", check=False)
    assert r.returncode == 1
    assert "sync to NetBox failed" in r.stderr and nb.url in r.stderr, r.stderr
    state = json.loads((tf.dir / "terraform.tfstate").read_text())  # written and readable
    assert [x for x in state.get("resources", []) if x["type"] == "hwaac_fabric_plane"] == []
    server.start()
    assert_converged(tf, pynetbox.api(nb.url, token=nb.token), plan)


def test_netbox_killed_in_the_middle_of_an_apply_then_the_next_apply_converges(nb: Instance,
                                                                              tmp_path: Path) -> None:
    # 2 SUs: the devices alone take NetBox several seconds, so the kill lands while the sync writes
    text = INTENT.read_text().replace("su_count: 1", "su_count: 2")
    plan = plan_from_text(text, "fabric.yml")
    tf = stack(nb, tmp_path, text)
    api = pynetbox.api(nb.url, token=nb.token)
    server = Server(nb)
    # first apply records a smaller fabric, so the interrupted apply is an update of a resource in the state
    tf_small = INTENT.read_text()
    (tf.dir / "fabric.yml").write_text(tf_small)
    tf.run("apply", "-input=false", "-auto-approve")
    before = json.loads((tf.dir / "terraform.tfstate").read_text())
    (tf.dir / "fabric.yml").write_text(text)
    known = api.dcim.devices.count(tag=FTAG)
    proc = tf.start("apply", "-input=false", "-auto-approve")
    deadline = time.monotonic() + 120
    while api.dcim.devices.count(tag=FTAG) == known:
        assert proc.poll() is None, "the apply ended before it wrote anything"
        assert time.monotonic() < deadline, "no device written within 120 s"
        time.sleep(0.2)
    server.kill()
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, out + err
    assert "sync to NetBox failed" in err and "stopped answering" in err, err
    after = json.loads((tf.dir / "terraform.tfstate").read_text())
    plane = next(x for x in after["resources"] if x["type"] == "hwaac_fabric_plane")
    old = next(x for x in before["resources"] if x["type"] == "hwaac_fabric_plane")
    # the state still describes what was applied before: the grown intent is not recorded as done
    assert plane["instances"][0]["attributes"]["intent"] == old["instances"][0]["attributes"]["intent"] == tf_small
    server.start()
    assert_converged(tf, api, plan)
    assert {ip_str(s.loopback) for s in plan.switches} <= {
        str(a.address).split("/")[0] for a in api.ipam.ip_addresses.filter(tag=FTAG)}


POOL_TF = PROVIDER_BLOCK + """
resource "hwaac_ipam_pool" "ops" {
  prefix = "10.99.0.0/16"
  role   = "%s"
}
"""


def test_a_pool_recorded_by_hand_is_adopted_untouched_and_left_on_destroy(nb: Instance, tmp_path: Path) -> None:
    api = pynetbox.api(nb.url, token=nb.token)
    role = api.ipam.roles.create(name="ops-p2p", slug="ops-p2p")
    other = api.ipam.roles.create(name="ops-other", slug="ops-other")
    pfx = api.ipam.prefixes.create(prefix="10.99.0.0/16", status="container", role=role.id,
                                   description="recorded by Ann")
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
