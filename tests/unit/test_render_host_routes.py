"""Host renderers: the storage routes of the rail tables (storage.lnet.networks[].routes)."""

from __future__ import annotations

from typing import Any

import pytest

from hwaac.plan import build_plan
from hwaac.plan.model import Plan, ip_str
from hwaac.validate import load_intent
from tests.unit.host_plans import DEMO, FABRIC_POOLS, GOLDEN_NODE, RAILS, demo_dict, host_links, plan_of, rail_ethernets


@pytest.fixture(scope="module")
def demo() -> Plan:
    return build_plan(load_intent(DEMO))


# --- netplan: storage routes (storage.lnet.networks[].routes) ----------------------------------------------
# The demo runs o2ib0 over all 8 rails with routes [10.20.0.0/16] (inventory/demo/fabric.yml): every rail table
# of a GPU node must reach the storage servers through the same leaf as the host-link block, from the rail's own
# address, because LNet o2ib connects from the NI's address (RDMA CM routes with that source).

STORAGE_PREFIX = "10.20.0.0/16"
FIRST_STORAGE = 2 + len(FABRIC_POOLS)


def storage_routes_of(cfg: dict[str, Any]) -> list[str]:
    """Destinations of a rail's routes after the link subnet, the host-link block and the switch pools."""
    return [r["to"] for r in cfg["routes"][FIRST_STORAGE:]]


def test_every_rail_table_routes_the_switch_pools_via_its_leaf(demo: Plan) -> None:
    assert FABRIC_POOLS == ("10.0.0.0/24", "10.0.1.0/26", "10.1.0.0/20")
    for name in (GOLDEN_NODE, demo.nodes[-1].name):
        eths = rail_ethernets(demo, name)
        for lk in host_links(demo, name):
            cfg = eths[lk.a_port]
            a, b, table = ip_str(lk.a_ip), ip_str(lk.b_ip), cfg["routing-policy"][0]["table"]
            assert cfg["routes"][2:FIRST_STORAGE] == [
                {"to": p, "via": b, "from": a, "table": table} for p in FABRIC_POOLS
            ]


def test_every_rail_table_of_a_gpu_node_routes_the_storage_prefix_via_its_leaf(demo: Plan) -> None:
    assert demo.intent.storage is not None and demo.intent.storage.lnet.networks[0].routes == [STORAGE_PREFIX]
    agg = "{}/{}".format(*(lambda a: (ip_str(a[0]), a[1]))(demo.host_aggregate(0)))
    for name in (GOLDEN_NODE, "gpu-su02-h17", demo.nodes[-1].name):
        eths = rail_ethernets(demo, name)
        links = host_links(demo, name)
        assert len(links) == 8
        for lk in links:
            cfg = eths[lk.a_port]
            a, b, table = ip_str(lk.a_ip), ip_str(lk.b_ip), cfg["routing-policy"][0]["table"]
            assert cfg["routes"][1] == {"to": agg, "via": b, "from": a, "table": table}
            assert cfg["routes"][FIRST_STORAGE] == {"to": STORAGE_PREFIX, "via": b, "from": a, "table": table}
            assert len(cfg["routes"]) == FIRST_STORAGE + 1


def test_storage_routes_go_only_to_the_rails_of_their_network_in_intent_order() -> None:
    data = demo_dict()
    data["storage"]["lnet"]["networks"] = [
        {"net": "o2ib0", "rails": [3, 0], "routes": ["10.20.0.0/16", "10.21.0.0/16"]},
        {"net": "o2ib1", "rails": [5, 3], "routes": ["10.22.0.0/16", "10.21.0.0/16"]},
        {"net": "tcp1", "interfaces": ["eth2"]},
    ]
    plan = plan_of(data)
    eths = rail_ethernets(plan, GOLDEN_NODE)
    assert {iface: storage_routes_of(cfg) for iface, cfg in eths.items()} == {
        "rail0": ["10.20.0.0/16", "10.21.0.0/16"],
        "rail1": [],
        "rail2": [],
        "rail3": ["10.20.0.0/16", "10.21.0.0/16", "10.22.0.0/16"],  # o2ib1 repeats 10.21.0.0/16: once
        "rail4": [],
        "rail5": ["10.22.0.0/16", "10.21.0.0/16"],
        "rail6": [],
        "rail7": [],
    }


def test_twin_planes_route_storage_through_each_ports_own_plane() -> None:
    data = demo_dict()
    data["fabric"]["planes"] = 2
    data["host"]["interface_name"] = "rail{rail}p{plane}"
    data["storage"]["lnet"]["networks"][0]["rails"] = [1]
    plan = plan_of(data)
    eths = rail_ethernets(plan, GOLDEN_NODE)
    with_routes = {iface: cfg for iface, cfg in eths.items() if storage_routes_of(cfg)}
    assert sorted(with_routes) == ["rail1p0", "rail1p1"]
    vias = set()
    for lk in host_links(plan, GOLDEN_NODE):
        if lk.rail == 1:
            cfg = eths[lk.a_port]
            assert cfg["routes"][FIRST_STORAGE] == {
                "to": STORAGE_PREFIX,
                "via": ip_str(lk.b_ip),
                "from": ip_str(lk.a_ip),
                "table": cfg["routing-policy"][0]["table"],
            }
            vias.add(ip_str(lk.b_ip))
    assert len(vias) == 2  # a leaf of plane 0 and a leaf of plane 1


def test_appliances_and_fabrics_without_routes_get_no_storage_route() -> None:
    data = demo_dict()
    data["fabric"]["appliances"] = [{"name": "ufm-01", "su": 1, "slot": 32, "rails": [0, 1]}]
    plan = plan_of(data)
    appliance = rail_ethernets(plan, "ufm-01")
    assert list(appliance) == ["rail0", "rail1"]  # its rails do have routing tables
    assert all(storage_routes_of(cfg) == [] for cfg in appliance.values())  # not a Lustre client
    gpu = rail_ethernets(plan, GOLDEN_NODE)
    assert list(gpu) == RAILS
    assert all(storage_routes_of(cfg) == [STORAGE_PREFIX] for cfg in gpu.values())
    # MGS NIDs in the host-link block need no routes, and then the tables hold only the link, the block and the
    # switch pools
    data = demo_dict()
    del data["storage"]["lnet"]["networks"][0]["routes"]
    data["storage"]["filesystems"][0]["mgs"] = ["172.16.255.1@o2ib"]
    plan = plan_of(data)
    eths = rail_ethernets(plan, GOLDEN_NODE)
    assert list(eths) == RAILS
    assert all(len(cfg["routes"]) == FIRST_STORAGE for cfg in eths.values())


def test_storage_routes_mapping() -> None:
    from hwaac.render.host.netplan import storage_routes

    assert storage_routes(None) == {}
    st = load_intent(DEMO).storage
    assert storage_routes(st) == {r: (STORAGE_PREFIX,) for r in range(8)}
