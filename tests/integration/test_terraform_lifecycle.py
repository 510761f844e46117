"""End to end: real ``terraform`` with the provider from its local mirror, against a real NetBox.

A twin-plane fabric (tests/fixtures/intents/terraform/twin.yml) whose leaf-spine and host-link pools are
``hwaac_ipam_pool`` resources, one ``hwaac_fabric_plane`` per plane: init -> plan (writes nothing) -> apply ->
plan shows no changes -> the intent grows by one SU -> plan shows only additions -> apply -> import -> a manual
edit in NetBox shows as drift -> apply puts it back -> destroy leaves only what hwaac does not own. The NetBox
token is checked absent from every output, the state and Terraform's debug log.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pynetbox
import pytest
from terraform_run import PROVIDER_BLOCK, Terraform, resource_changes, terraform_dir

from hwaac.devnetbox.instances import Instance
from hwaac.netbox.plane_state import plan_from_text, pool_lookup_from
from hwaac.plan.model import Plan, ip_str

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INTENT = REPO / "tests/fixtures/intents/terraform/twin.yml"
FTAG = "hwaac-fabric-tftwin"
POOLS = {"tftwin-p2p": "10.31.0.0/24", "tftwin-hosts": "172.30.0.0/23"}
PLANES = ("hwaac_fabric_plane.plane[0]", "hwaac_fabric_plane.plane[1]")

MAIN_TF = (
    PROVIDER_BLOCK
    + """
resource "hwaac_ipam_pool" "p2p" {
  prefix      = "10.31.0.0/24"
  role        = "tftwin-p2p"
  description = "tftwin leaf-spine /31s"
}

resource "hwaac_ipam_pool" "hosts" {
  prefix = "172.30.0.0/23"
  role   = "tftwin-hosts"
}

locals {
  pools = {
    (hwaac_ipam_pool.p2p.role)   = hwaac_ipam_pool.p2p.prefix
    (hwaac_ipam_pool.hosts.role) = hwaac_ipam_pool.hosts.prefix
  }
}

resource "hwaac_fabric_plane" "plane" {
  count       = 2
  intent_file = "fabric.yml"
  plane       = count.index
  pools       = local.pools
}

data "hwaac_netbox_prefix" "hosts" {
  role       = "tftwin-hosts"
  depends_on = [hwaac_ipam_pool.hosts]
}

data "hwaac_fabric_plan" "all" {
  intent_file = "fabric.yml"
  pools       = local.pools
}

output "plane_counts" {
  value = { for p in hwaac_fabric_plane.plane : p.id => p.counts }
}

output "hosts_prefix" {
  value = data.hwaac_netbox_prefix.hosts.prefix
}

output "planned_switches" {
  value = data.hwaac_fabric_plan.all.counts["switches"]
}
"""
)


def plan_of(text: str) -> Plan:
    return plan_from_text(text, "fabric.yml", pool_lookup_from(POOLS, None))


def switches_of(plan: Plan, plane: int) -> dict[str, dict[str, object]]:
    return {s.name: {"loopback": ip_str(s.loopback), "asn": s.asn} for s in plan.switches if s.plane == plane}


def changelog(api: pynetbox.api) -> int:
    """NetBox's change log length: every create, update and delete of any object adds to it."""
    return api.core.object_changes.count()


def owned_names(api: pynetbox.api, tag: str = FTAG) -> set[str]:
    return {d.name for d in api.dcim.devices.filter(tag=tag)}


def planned_addresses(plan: Plan) -> set[str]:
    out = {f"{ip_str(s.loopback)}/32" for s in plan.switches}
    for link in plan.links:
        out |= {f"{ip_str(link.a_ip)}/{link.prefixlen}", f"{ip_str(link.b_ip)}/{link.prefixlen}"}
    return out


def assert_no_token(token: str, *texts: str) -> None:
    secret = token.split(".", 1)[-1]
    for i, text in enumerate(texts):
        assert token not in text and secret not in text, f"the NetBox token appears in text #{i}"


@pytest.mark.cost(200)
def test_plane_lifecycle(netbox_db: Instance, tmp_path: Path) -> None:
    nb = netbox_db
    api = pynetbox.api(nb.url, token=nb.token)
    tf: Terraform = terraform_dir(tmp_path / "stack", tmp_path / "mirror", nb.url, nb.token)
    shutil.copy(INTENT, tf.dir / "fabric.yml")
    (tf.dir / "main.tf").write_text(MAIN_TF)
    texts: list[str] = []

    # what a person recorded by hand: must survive every step, destroy included
    site = api.dcim.sites.create(name="ops-lab", slug="ops-lab")
    maker = api.dcim.manufacturers.create(name="Ops", slug="ops")
    dtype = api.dcim.device_types.create(manufacturer=maker.id, model="Jumphost", slug="jumphost")
    role = api.dcim.device_roles.create(name="ops", slug="ops", color="9e9e9e")
    api.dcim.devices.create(name="ops-jumphost", device_type=dtype.id, role=role.id, site=site.id)
    api.ipam.prefixes.create(prefix="192.168.99.0/24", status="active")

    # init: from the mirror, with a lock file
    tf.run("init", "-input=false")
    lock = (tf.dir / ".terraform.lock.hcl").read_text()
    assert 'provider "registry.terraform.io/aiinfra/hwaac"' in lock and "h1:" in lock

    # plan: shows the planes' contents, writes nothing
    before = changelog(api)
    r = tf.run("plan", "-input=false", "-out=tfplan")
    texts.append(r.stdout + r.stderr)
    assert changelog(api) == before, "terraform plan wrote to NetBox"
    ch = resource_changes(tf.show_plan())
    assert {a: c["actions"] for a, c in ch.items() if not a.startswith("data.")} == {
        "hwaac_ipam_pool.p2p": ["create"],
        "hwaac_ipam_pool.hosts": ["create"],
        PLANES[0]: ["create"],
        PLANES[1]: ["create"],
    }
    plan = plan_of(INTENT.read_text())
    for i, addr in enumerate(PLANES):
        after = ch[addr]["after"]
        assert after["devices"] == switches_of(plan, i)
        assert after["counts"]["gpu_nodes"] == len(plan.nodes) == 2
        assert after["counts"]["cables"] == sum(1 for link in plan.links if link.plane == i)
        assert after["id"] == f"tftwin/plane-{i}" and after["drift"] == []

    # apply: NetBox holds exactly the plan, each plane claims its switches, both claim the nodes
    log = tmp_path / "terraform-debug.log"
    r = tf.run("apply", "-input=false", "tfplan", extra_env={"TF_LOG": "DEBUG", "TF_LOG_PATH": str(log)})
    texts += [r.stdout + r.stderr, log.read_text()]
    assert owned_names(api) == {s.name for s in plan.switches} | {n.name for n in plan.nodes}
    for i in (0, 1):
        assert owned_names(api, f"hwaac-plane-tftwin-{i}") == set(switches_of(plan, i)) | {n.name for n in plan.nodes}
    assert api.dcim.cables.count(tag=FTAG) == len(plan.links)
    assert {str(a.address) for a in api.ipam.ip_addresses.filter(tag=FTAG)} == planned_addresses(plan)
    pool = api.ipam.prefixes.get(prefix="10.31.0.0/24")
    assert pool.role.slug == "tftwin-p2p" and str(pool.status.value) == "container"
    assert {t.slug for t in pool.tags} == {"hwaac"}
    out = json.loads(tf.run("output", "-json").stdout)
    assert out["hosts_prefix"]["value"] == "172.30.0.0/23"
    assert out["planned_switches"]["value"] == len(plan.switches)
    texts.append(json.dumps(out))

    # a second plan: no changes (and still no writes)
    before = changelog(api)
    r = tf.run("plan", "-input=false", "-detailed-exitcode")
    texts.append(r.stdout)
    assert r.returncode == 0 and "No changes." in r.stdout
    assert changelog(api) == before

    # the intent grows by one SU: only additions, existing objects keep their ids
    grown_text = INTENT.read_text().replace("su_count: 1", "su_count: 2")
    (tf.dir / "fabric.yml").write_text(grown_text)
    grown = plan_of(grown_text)
    ids = {d.name: d.id for d in api.dcim.devices.filter(tag=FTAG)}
    r = tf.run("plan", "-input=false", "-out=tfplan")
    texts.append(r.stdout)
    ch = resource_changes(tf.show_plan())
    assert ch["hwaac_ipam_pool.p2p"]["actions"] == ["no-op"] and ch["hwaac_ipam_pool.hosts"]["actions"] == ["no-op"]
    for i, addr in enumerate(PLANES):
        old, new = ch[addr]["before"], ch[addr]["after"]
        assert ch[addr]["actions"] == ["update"]
        assert new["devices"] == switches_of(grown, i)
        assert old["devices"].items() < new["devices"].items()  # only new switches; none changed or gone
        assert all(new["counts"][k] >= v for k, v in old["counts"].items())
        assert new["counts"]["gpu_nodes"] == 4 and old["counts"]["gpu_nodes"] == 2
    assert "su_count: 2" in r.stdout and "will be destroyed" not in r.stdout  # the intent's diff is in the plan
    tf.run("apply", "-input=false", "tfplan")
    now = {d.name: d.id for d in api.dcim.devices.filter(tag=FTAG)}
    assert set(now) == {s.name for s in grown.switches} | {n.name for n in grown.nodes}
    assert {k: now[k] for k in ids} == ids
    assert api.dcim.cables.count(tag=FTAG) == len(grown.links)
    assert tf.run("plan", "-input=false", "-detailed-exitcode").returncode == 0

    # import: a plane taken out of the state comes back from NetBox, with nothing to write
    tf.run("state", "rm", PLANES[1])
    tf.run("import", "-input=false", PLANES[1], "fabric.yml#1")
    r = tf.run("plan", "-input=false", "-out=tfplan")
    ch = resource_changes(tf.show_plan())[PLANES[1]]
    changed = {k for k in set(ch["before"]) | set(ch["after"]) if ch["before"].get(k) != ch["after"].get(k)}
    assert changed <= {"pools"}, changed  # the pools map is configuration only; NetBox matched
    before = changelog(api)
    tf.run("apply", "-input=false", "tfplan")
    assert changelog(api) == before, "applying an imported plane that matches NetBox wrote to NetBox"

    # a manual edit in NetBox is drift: the next plan shows it and apply puts it back
    leaf_name = next(n for n in switches_of(grown, 0) if n.startswith("leaf"))
    leaf = api.dcim.devices.get(name=leaf_name)
    planned_asn = leaf.custom_fields["hwaac_asn"]
    leaf.custom_fields["hwaac_asn"] = 64999
    leaf.save()
    cable = next(c for c in api.dcim.cables.filter(tag="hwaac-plane-tftwin-1", limit=1))
    cable_label = cable.label
    cable.delete()
    r = tf.run("plan", "-input=false", "-detailed-exitcode", "-out=tfplan", check=False)
    texts.append(r.stdout)
    assert r.returncode == 2, r.stdout + r.stderr
    # the plan reads as a review: the drifted object, NetBox's value -> the planned one
    assert f'- "devices: changed device {leaf_name}: custom_fields.hwaac_asn: 64999 -> {planned_asn}"' in r.stdout
    assert "asn      = 64999 -> " in r.stdout and "Plan: 0 to add, 2 to change, 0 to destroy." in r.stdout
    shown = tf.show_plan()
    drifted = {d["address"]: d["change"]["after"] for d in shown.get("resource_drift", [])}
    assert any(leaf_name in line and "64999" in line for line in drifted[PLANES[0]]["drift"])
    assert drifted[PLANES[0]]["devices"][leaf_name]["asn"] == 64999
    assert any("missing cable" in line for line in drifted[PLANES[1]]["drift"])
    ch = resource_changes(shown)
    assert ch[PLANES[0]]["actions"] == ["update"] and ch[PLANES[0]]["after"]["drift"] == []
    tf.run("apply", "-input=false", "tfplan")
    assert api.dcim.devices.get(name=leaf_name).custom_fields["hwaac_asn"] == planned_asn
    assert api.dcim.cables.count(tag=FTAG) == len(grown.links)
    assert api.dcim.cables.get(label=cable_label) is not None
    assert tf.run("plan", "-input=false", "-detailed-exitcode").returncode == 0

    # destroy: nothing hwaac owns is left; what the person recorded is untouched
    r = tf.run("destroy", "-auto-approve", "-input=false")
    texts.append(r.stdout + r.stderr)
    assert [t.slug for t in api.extras.tags.filter(slug__isw="hwaac")] == []
    assert api.dcim.sites.get(slug="tftwin-lab") is None  # hwaac created the site, nothing else uses it
    assert api.ipam.prefixes.count(q="10.31.") == 0 and api.ipam.prefixes.count(q="172.30.") == 0
    assert api.ipam.roles.get(slug="tftwin-p2p") is None and api.ipam.roles.get(slug="tftwin-hosts") is None
    assert api.ipam.ip_addresses.count(parent="10.30.0.0/16") == 0
    assert api.dcim.device_types.count(slug__isw="hwaac-node") == 0
    assert api.extras.custom_fields.get(name="hwaac_asn") is None
    assert {d.name for d in api.dcim.devices.all()} == {"ops-jumphost"}
    assert api.ipam.prefixes.get(prefix="192.168.99.0/24") is not None
    assert api.dcim.device_types.get(slug="jumphost") is not None and api.dcim.sites.get(slug="ops-lab")

    texts += [(tf.dir / "terraform.tfstate").read_text(), (tf.dir / "terraform.tfstate.backup").read_text()]
    assert_no_token(nb.token, *texts)
