"""The intent's ``storage`` section: the routes of rails networks and the MGS reachability over the rails."""

from __future__ import annotations

import pytest

from hwaac.model.intent import Intent
from hwaac.model.storage_rules import check_storage
from hwaac.validate import load_intent
from tests.unit.storage_intents import MINIMAL, REPO, fs, issues_of, net, only, storage, yaml_of

# --- routes of rails networks and MGS reachability over the rails ---------------------------------------
# minimal.yml's pools: loopbacks 10.0.0.0/28 and 10.0.1.0/28, leaf_spine 10.1.0.0/24, host_links 172.16.0.0/24


@pytest.mark.parametrize(
    ("route", "message", "valid"),
    [
        ("10.20.0.5/16", "host bits are set", "the network address 10.20.0.0/16"),
        ("10.20.0.0/016", "not written as a plain prefix", "10.20.0.0/16"),
        ("10.20.0.1", "not an IPv4 prefix in CIDR notation", "a prefix such as 10.20.0.0/16 (a single server: /32)"),
        ("10.20/16", "not an IPv4 prefix in CIDR notation", "a prefix such as 10.20.0.0/16 (a single server: /32)"),
        ("10.20.0.0/33", "not an IPv4 prefix in CIDR notation", "a prefix such as 10.20.0.0/16 (a single server: /32)"),
        ("storage", "not an IPv4 prefix in CIDR notation", "a prefix such as 10.20.0.0/16 (a single server: /32)"),
        ("fd00:20::/64", "IPv6 routes are not supported", "an IPv4 prefix such as 10.20.0.0/16"),
    ],
)
def test_bad_routes_are_named_and_keep_the_mgs_check_quiet(route: str, message: str, valid: str) -> None:
    # the MGS NIDs (10.20.x) are then not covered, but only the bad route is reported
    i = only(issues_of(storage(**net(routes=[route]))))
    assert (i.rule, i.path, i.value) == ("storage-bad-route", "storage.lnet.networks[0].routes[0]", route)
    assert (i.message, i.valid) == (message, valid)


def test_a_single_server_route_and_a_route_listed_twice() -> None:
    st = storage(**net(routes=["10.20.0.1/32", "10.20.0.2/32", "10.20.1.1/32"]))
    assert issues_of(st) == []  # every MGS NID of the base section (10.20.0.1, 10.20.1.1, 10.20.0.2) is covered
    i = only(issues_of(storage(**net(routes=["10.20.0.0/16", "10.20.0.0/16"]))))
    assert (i.rule, i.path, i.message, i.valid) == (
        "storage-bad-route",
        "storage.lnet.networks[0].routes[1]",
        "route listed twice",
        "each prefix once",
    )


def test_a_route_over_a_fabric_pool_names_the_route_and_each_pool() -> None:
    issues = issues_of(storage(**net(routes=["10.20.0.0/16", "10.0.0.0/15"])))
    assert [(i.rule, i.path, i.value, i.message) for i in issues] == [
        (
            "storage-route-overlaps-pool",
            "storage.lnet.networks[0].routes[1]",
            "10.0.0.0/15",
            f"overlaps {pool}, a pool of the fabric itself",
        )
        for pool in (
            "addressing.loopbacks.leaf (10.0.0.0/28)",
            "addressing.loopbacks.spine (10.0.1.0/28)",
            "addressing.leaf_spine (10.1.0.0/24)",
        )
    ]
    assert issues[0].valid.startswith("a prefix of the storage servers that shares no address with the fabric's")
    # a default route covers everything, the host-link block included; one address of a pool is enough
    assert len(issues_of(storage(**net(routes=["0.0.0.0/0"])))) == 4
    i = only(issues_of(storage(**net(routes=["10.20.0.0/16", "172.16.0.255/32"]))))
    assert i.message == "overlaps addressing.host_links.prefix (172.16.0.0/24), a pool of the fabric itself"
    # right next to a pool is fine
    assert issues_of(storage(**net(routes=["10.20.0.0/16", "172.16.1.0/24", "10.0.0.16/28"]))) == []


def test_routes_on_a_network_over_named_interfaces_are_refused() -> None:
    for routes in (["10.40.0.0/16"], []):
        st = storage(
            lnet={
                "networks": [
                    {"net": "o2ib0", "rails": [0, 1], "routes": ["10.20.0.0/16"]},
                    {"net": "tcp1", "interfaces": ["eth2"], "routes": routes},
                ]
            }
        )
        i = only(issues_of(st))
        assert (i.rule, i.path, i.value) == ("storage-routes-without-rails", "storage.lnet.networks[1].routes", routes)
        assert i.message.startswith("routes are only for a network on rails")
        assert i.valid == "no routes here, or rails instead of interfaces"


def test_an_mgs_nid_outside_the_host_link_block_and_the_routes_is_refused() -> None:
    issues = issues_of(storage(**net(routes=[])))  # no routes: 10.20.x is not reachable over the rails
    assert [(i.rule, i.path, i.value) for i in issues] == [
        ("storage-mgs-not-routed", "storage.filesystems[0].mgs[0]", "10.20.0.1@o2ib,10.20.1.1@o2ib"),  # each NID
        ("storage-mgs-not-routed", "storage.filesystems[0].mgs[0]", "10.20.0.1@o2ib,10.20.1.1@o2ib"),
        ("storage-mgs-not-routed", "storage.filesystems[0].mgs[1]", "10.20.0.2@o2ib"),
    ]
    assert issues_of(storage(**net(routes=None))) == issues  # an absent list is the same as an empty one
    assert issues[1].message == (
        "NID 10.20.1.1@o2ib is on o2ib0, which runs over the rails, but lies outside the host-link block "
        "172.16.0.0/24 and the network's routes (none): the rails' routing tables have no route to it"
    )
    assert issues[1].valid == (
        "add its prefix to storage.lnet.networks[0].routes (the storage servers' subnet, "
        "e.g. 10.20.0.0/16), or a NID in 172.16.0.0/24"
    )
    i = only(issues_of(storage(**net(routes=["10.20.0.0/24", "10.30.0.0/16"]))))  # 10.20.1.1 is not in a /24
    assert i.message == (
        "NID 10.20.1.1@o2ib is on o2ib0, which runs over the rails, but lies outside the host-link block "
        "172.16.0.0/24 and the network's routes (10.20.0.0/24, 10.30.0.0/16): the rails' routing tables have no "
        "route to it"
    )


def test_mgs_nids_in_the_host_link_block_or_named_by_host_are_accepted_without_routes() -> None:
    # an MGS on the rails themselves (an appliance in a node slot) is routed by the host-link block route;
    # a host name is resolved on the node, so hwaac cannot check it
    st = storage(**net(routes=None), filesystems=fs(mgs=["172.16.0.250@o2ib,mgs-b.lab@o2ib", "mgs-c@o2ib"]))
    assert issues_of(st) == []


def test_only_the_nids_own_network_routes_count() -> None:
    st = storage(
        lnet={"networks": [{"net": "o2ib0", "rails": [0], "routes": ["10.20.0.0/16"]}, {"net": "o2ib1", "rails": [1]}]},
        filesystems=fs(mgs=["10.20.0.1@o2ib", "10.20.0.2@o2ib1"]),
    )
    i = only(issues_of(st))
    assert (i.rule, i.path) == ("storage-mgs-not-routed", "storage.filesystems[0].mgs[1]")
    assert "is on o2ib1" in i.message and i.valid.startswith("add its prefix to storage.lnet.networks[1].routes")


def test_nids_on_a_network_over_named_interfaces_are_not_checked() -> None:
    st = storage(
        lnet={"networks": [{"net": "tcp1", "interfaces": ["eth2"]}]},
        filesystems=fs(mgs=["10.99.0.1@tcp1", "10.99.0.2@tcp1"]),
    )
    assert issues_of(st) == []


def test_pools_kept_in_netbox_count_once_resolved_and_are_skipped_before() -> None:
    from hwaac.model.intent import NetBoxPrefixRef
    from hwaac.validate import resolve_netbox_pools

    data = yaml_of(MINIMAL.read_text())
    data["addressing"]["host_links"]["prefix"] = {"netbox_role": "gpu-host-links"}
    data["storage"] = storage(**net(routes=["10.20.0.0/24"]), filesystems=fs(mgs=["172.30.0.9@o2ib"]))
    intent = Intent.model_validate(data)
    assert isinstance(intent.addressing.host_links.prefix, NetBoxPrefixRef)
    assert check_storage(intent) == []  # the host-link block is unknown: nothing to compare with yet
    resolved, _ = resolve_netbox_pools(intent, lambda ref, site: "172.30.0.0/16")
    assert check_storage(resolved) == []  # 172.30.0.9 is in the resolved host-link block
    data["storage"] = storage(**net(routes=["172.30.5.0/24"]))
    resolved, _ = resolve_netbox_pools(Intent.model_validate(data), lambda ref, site: "172.30.0.0/16")
    assert [i.rule for i in check_storage(resolved)] == ["storage-route-overlaps-pool"]


def test_the_demo_routes_its_storage_servers_over_the_rails() -> None:
    st = load_intent(REPO / "inventory/demo").storage
    assert st is not None and st.lnet.networks[0].rails == list(range(8))
    assert st.lnet.networks[0].routes == ["10.20.0.0/16"]
