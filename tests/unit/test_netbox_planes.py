"""What each plane of a fabric asks NetBox to hold (pure: no NetBox). The Terraform resource
``hwaac_fabric_plane`` syncs one plane; these are the sets it creates, claims and summarises."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.netbox.plane_state import plan_from_text, planned_state, pool_lookup_from
from hwaac.netbox.sync.desired import OWNED_KINDS, desired_state, node_type_slug, plane_tag
from hwaac.plan.model import Plan

REPO = Path(__file__).resolve().parents[2]
TWIN = REPO / "tests/fixtures/intents/terraform/twin.yml"
POOLS = {"tftwin-p2p": "10.31.0.0/24", "tftwin-hosts": "172.30.0.0/23"}


@pytest.fixture(scope="module")
def twin() -> Plan:
    return plan_from_text(TWIN.read_text(), str(TWIN), pool_lookup_from(POOLS, None))


def test_a_plane_holds_its_switches_its_cables_and_every_node_cabled_to_it(twin: Plan) -> None:
    nodes = {n.name for n in twin.nodes}
    for plane in (0, 1):
        d = desired_state(twin, [plane])
        assert set(d.kinds["devices"]) == {s.name for s in twin.switches if s.plane == plane} | nodes
        assert len(d.kinds["cables"]) == sum(1 for link in twin.links if link.plane == plane)
        assert all(w.planes == {plane} for w in d.kinds["cables"].values())
        assert all(w.planes == {0, 1} for k, w in d.kinds["devices"].items() if k in nodes)
        # only this plane's tag is made (the other plane's sync makes its own)
        assert plane_tag("tftwin", plane) in d.kinds["tags"] and plane_tag("tftwin", 1 - plane) not in d.kinds["tags"]
        assert d.claim_tags(d.kinds["devices"][next(iter(nodes))]) == {plane_tag("tftwin", plane)}


def test_the_planes_together_are_the_whole_fabric(twin: Plan) -> None:
    whole = desired_state(twin)
    per_plane = [desired_state(twin, [p]) for p in (0, 1)]
    for kind in OWNED_KINDS:
        assert set(whole.kinds[kind]) == set(per_plane[0].kinds[kind]) | set(per_plane[1].kinds[kind]), kind
    assert whole.claim_tags(whole.kinds["devices"][twin.nodes[0].name]) == {
        plane_tag("tftwin", 0),
        plane_tag("tftwin", 1),
    }


def test_removing_planes_asks_for_no_owned_object_but_keeps_the_catalogue(twin: Plan) -> None:
    d = desired_state(twin, [1], owned=False)
    assert all(not d.kinds[kind] for kind in OWNED_KINDS)
    assert d.kinds["device-types"] and d.kinds["sites"]


def test_a_plane_outside_the_fabric_is_an_error_naming_the_valid_planes(twin: Plan) -> None:
    with pytest.raises(ValueError, match=r"plane 2 is not in fabric tftwin, which has planes 0\.\.1"):
        desired_state(twin, [2])
    with pytest.raises(ValueError, match="plane 5"):
        planned_state(twin, 5)


def test_pools_taken_from_netbox_are_referenced_not_recorded(twin: Plan) -> None:
    assert twin.intent.netbox_pools == {
        "addressing.leaf_spine": "tftwin-p2p",
        "addressing.host_links.prefix": "tftwin-hosts",
    }
    prefixes = set(desired_state(twin).kinds["prefixes"])
    assert prefixes == {"10.30.0.0/27", "10.30.1.0/28"}  # the loopback pools, literal in the intent
    assert not prefixes & set(POOLS.values())


def test_the_node_device_type_has_a_template_for_every_cabled_nic_port() -> None:
    plan = plan_from_text(TWIN.read_text().replace("rails: 1", "rails: 2"), str(TWIN), pool_lookup_from(POOLS, None))
    d = desired_state(plan)
    slug = node_type_slug(plan, "gpu")
    templates = {name for (t, name) in d.kinds["interface-templates"] if t == slug}
    used = {link.a_port for link in plan.links if link.kind == "host"}
    assert used == templates == {"rail0p0", "rail0p1", "rail1p0", "rail1p1"}
    assert slug.startswith("hwaac-node-4x400g-")  # 2 rails x 2 planes; not the default naming: its own type


def test_planned_state_summarises_the_plane(twin: Plan) -> None:
    st = planned_state(twin, 0)
    switches = {s.name: s for s in twin.switches if s.plane == 0}
    assert st.counts["switches"] == len(switches) and st.counts["gpu_nodes"] == len(twin.nodes)
    assert st.counts["devices"] == len(switches) + len(twin.nodes)
    assert set(st.devices) == set(switches)
    assert all(st.devices[n]["asn"] == s.asn for n, s in switches.items())
    assert st.pools_used["addressing.host_links.prefix"] == "172.30.0.0/23" and st.drift == []
