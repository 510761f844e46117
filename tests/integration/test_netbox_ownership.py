"""What a person made in NetBox stays theirs (:mod:`hwaac.netbox.sync.ownership`), against a real NetBox 4.7.3.

A person records a spine, a leaf, a GPU node and two pool prefixes by hand; the sync adopts them without
overwriting what they entered, and shrinking the fabric, moving a pool and removing the plane (Terraform's
destroy) release them instead of deleting them. A device hwaac made that is active in NetBox is deleted only
when asked; a planned name a device of another site already holds stops the sync before it writes.
"""

from __future__ import annotations

from pathlib import Path

import pynetbox
import pytest
import yaml

from hwaac.devnetbox.instances import Instance
from hwaac.netbox.sync import SyncConflict, sync_plan
from hwaac.netbox.sync.desired import ADOPTED_TAG
from hwaac.plan import build_plan
from hwaac.plan.model import Plan
from hwaac.validate import load_intent

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INTENT = REPO / "tests/fixtures/intents/valid/netbox-sync.yml"
FTAG = "hwaac-fabric-nbsync"
OURS = {"hwaac", FTAG, "hwaac-plane-nbsync-0"}


def plan_of(tmp_path: Path, su_count: int = 2, host_links: str = "172.20.0.0/24") -> Plan:
    data = yaml.safe_load(INTENT.read_text())
    data["fabric"]["su_count"] = su_count
    data["addressing"]["host_links"]["prefix"] = host_links
    path = tmp_path / f"fabric-{len(list(tmp_path.iterdir()))}.yml"
    path.write_text(yaml.safe_dump(data))
    return build_plan(load_intent(path))


def tags(obj: object) -> set[str]:
    return {t.slug for t in obj.tags}  # type: ignore[attr-defined]


def by_hand(c: pynetbox.api, name: str, **fields: object) -> object:
    """The person's own record of a device the first sync made: same type and site, entered again by hand."""
    old = c.dcim.devices.get(name=name)
    base = {"device_type": old.device_type.id, "role": old.role.id, "site": old.site.id}
    old.delete()
    return c.dcim.devices.create(name=name, **{**base, **fields})


def journal(c: pynetbox.api, kind: str, oid: int) -> list[str]:
    return [j.comments for j in c.extras.journal_entries.filter(assigned_object_type=kind, assigned_object_id=oid)]


@pytest.mark.cost(200)
def test_adopted_objects_stay_the_persons(nb: Instance, tmp_path: Path) -> None:
    plan = plan_of(tmp_path)
    sync_plan(plan, nb.url, nb.token)
    c = pynetbox.api(nb.url, token=nb.token)
    spine = plan.switches_of("spine")[0].name
    leaf2 = next(s.name for s in plan.switches_of("leaf") if s.su == 2)
    node2 = next(n.name for n in plan.nodes if n.su == 2)
    made_leaf2 = next(s.name for s in plan.switches_of("leaf") if s.su == 2 and s.name != leaf2)

    # the person's records: a spine under their own role, an active leaf and a node with serials and notes, the
    # two pools as prefixes of their own status and site
    core = c.dcim.device_roles.create(name="core-switch", slug="core-switch", color="f44336")
    ann_dc = c.dcim.sites.create(name="ann-dc", slug="ann-dc")
    sp = by_hand(c, spine, role=core.id, serial="SP-1", comments="Ann's spine")
    lf = by_hand(c, leaf2, serial="LF-2", asset_tag="A-2", status="active", comments="do not power-cycle")
    c.extras.tags.create(name="keep-me", slug="keep-me")
    nd = by_hand(c, node2, serial="ND-2", tags=[{"slug": "keep-me"}])
    pfx = {}
    for pool, status in ((plan.pools.host_links.cidr, "active"), (plan.pools.leaf_spine.cidr, "reserved")):
        c.ipam.prefixes.get(prefix=pool).delete()
        pfx[pool] = c.ipam.prefixes.create(
            prefix=pool, status=status, scope_type="dcim.site", scope_id=ann_dc.id, description="typed by Ann"
        )

    adopt = sync_plan(plan, nb.url, nb.token)
    assert adopt.counts("devices")[1] == 3 and adopt.counts("prefixes") == (0, 2, 0)
    sp2 = c.dcim.devices.get(sp.id)
    assert sp2.role.slug == "core-switch" and (sp2.serial, sp2.comments) == ("SP-1", "Ann's spine")
    assert sp2.custom_fields["hwaac_asn"] == plan.switch_by_name[spine].asn  # empty: filled in
    assert tags(sp2) == OURS | {ADOPTED_TAG}
    for pool, status in ((plan.pools.host_links.cidr, "active"), (plan.pools.leaf_spine.cidr, "reserved")):
        p = c.ipam.prefixes.get(pfx[pool].id)
        assert (p.status.value, p.scope_id, p.description) == (status, ann_dc.id, "typed by Ann")
        assert ADOPTED_TAG in tags(p)
    assert sync_plan(plan, nb.url, nb.token).writes == 0  # kept values are no difference to put back

    # a device hwaac made, put in service by a person: shrinking stops at it unless asked to delete active ones
    c.dcim.devices.get(name=made_leaf2).update({"status": "active"})
    one_su = plan_of(tmp_path, su_count=1)
    before = c.dcim.devices.count()
    with pytest.raises(SyncConflict, match=f"device {made_leaf2} .* is active in NetBox"):
        sync_plan(one_su, nb.url, nb.token)
    assert c.dcim.devices.count() == before
    shrink = sync_plan(one_su, nb.url, nb.token, delete_active=True)
    assert c.dcim.devices.get(name=made_leaf2) is None
    # the person's leaf and node of the removed SU are released with their fields, and the journal says why
    assert {k for k, _ in shrink.changes["devices"].releases} == {leaf2, node2}
    lf2, nd2 = c.dcim.devices.get(lf.id), c.dcim.devices.get(nd.id)
    assert (lf2.serial, lf2.asset_tag, lf2.status.value, lf2.comments) == (
        "LF-2",
        "A-2",
        "active",
        "do not power-cycle",
    )
    assert tags(lf2) == set() and tags(nd2) == {"keep-me"} and nd2.serial == "ND-2"
    assert any("Released by hwaac" in j for j in journal(c, "dcim.device", lf.id))
    assert sync_plan(one_su, nb.url, nb.token).writes == 0

    # a pool moved: the person's prefix of the old pool is released, not deleted
    moved = plan_of(tmp_path, su_count=1, host_links="172.21.0.0/24")
    sync_plan(moved, nb.url, nb.token)
    old = c.ipam.prefixes.get(pfx[plan.pools.host_links.cidr].id)
    assert old is not None and tags(old) == set() and old.description == "typed by Ann"
    assert c.ipam.prefixes.get(prefix="172.21.0.0/24", tag=FTAG) is not None

    # a planned device name a device of another site holds: the sync stops before any write
    type_id = c.dcim.devices.get(name=spine).device_type.id
    c.dcim.devices.create(name=node2, device_type=type_id, role=core.id, site=ann_dc.id)
    back = plan_of(tmp_path, su_count=2, host_links="172.21.0.0/24")
    before = c.dcim.devices.count()
    with pytest.raises(
        SyncConflict,
        match=f"device {node2} is planned in site nbsync-lab, but NetBox holds a device of that name in site ann-dc",
    ):
        sync_plan(back, nb.url, nb.token)
    assert c.dcim.devices.count() == before

    # the plane removed (Terraform's destroy): the adopted spine and pool prefix stay, with the person's fields
    sync_plan(moved, nb.url, nb.token, planes=[0], remove=True)
    # nothing of the fabric is left but the catalogue the person's devices still use (site, types, roles)
    assert all(
        ep.count(tag=FTAG) == 0
        for ep in (c.dcim.devices, c.dcim.cables, c.ipam.prefixes, c.ipam.ip_addresses, c.ipam.asns)
    )
    sp3 = c.dcim.devices.get(sp.id)
    assert sp3.role.slug == "core-switch" and sp3.serial == "SP-1" and tags(sp3) == set()
    kept = c.ipam.prefixes.get(pfx[plan.pools.leaf_spine.cidr].id)
    assert (kept.status.value, kept.scope_id, tags(kept)) == ("reserved", ann_dc.id, set())
    assert any("plane(s) 0" in j for j in journal(c, "dcim.device", sp.id))
