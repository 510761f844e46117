"""The intent's ``storage`` section (Lustre clients): schema, semantic rules and their messages.

Every storage rule also has a negative fixture in tests/fixtures/intents/invalid/storage-*.yml (file and line are
checked by test_intent_validation.py); here each message, value and 'valid' text is asserted on intents built in
code, with the edge cases around them (o2ib = o2ib0, host-name NIDs, twin planes).
"""

from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from hwaac.errors import IntentError, IntentIssue
from hwaac.model.intent import Intent
from hwaac.model.rules import RULES
from hwaac.model.storage_rules import check_storage, lnet_net_key, parse_nid
from hwaac.validate import load_intent, load_intent_source

REPO = Path(__file__).resolve().parents[2]
MINIMAL = REPO / "tests/fixtures/intents/valid/minimal.yml"  # 2 rails, 1 plane


def _yaml(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(io.StringIO(text))


def storage(**changes: Any) -> dict[str, Any]:
    """A valid storage section for the minimal fabric, with top-level keys replaced by ``changes``."""
    base: dict[str, Any] = {
        "client_version": "2.15.5",
        "lnet": {"networks": [{"net": "o2ib0", "rails": [0, 1], "routes": ["10.20.0.0/16"]}]},
        "filesystems": [{"name": "lfs1", "mgs": ["10.20.0.1@o2ib,10.20.1.1@o2ib", "10.20.0.2@o2ib"],
                         "mount_point": "/mnt/lfs1"}],
    }
    base.update(changes)
    return base


def intent_with(st: dict[str, Any] | None, **fabric: Any) -> Intent:
    data = _yaml(MINIMAL.read_text())
    data["fabric"].update(fabric)
    if st is not None:
        data["storage"] = st
    return Intent.model_validate(data)


def issues_of(st: dict[str, Any], **fabric: Any) -> list[IntentIssue]:
    return check_storage(intent_with(st, **fabric))


def only(issues: list[IntentIssue]) -> IntentIssue:
    assert len(issues) == 1, "\n".join(map(str, issues))
    return issues[0]


def fs(**changes: Any) -> list[dict[str, Any]]:
    return [{**storage()["filesystems"][0], **changes}]


def net(**changes: Any) -> dict[str, Any]:
    return {"lnet": {"networks": [{"net": "o2ib0", "rails": [0, 1], "routes": ["10.20.0.0/16"], **changes}]}}


# --- valid intents ----------------------------------------------------------------------------------------


def test_no_storage_section_means_no_issue_and_none() -> None:
    intent = intent_with(None)
    assert intent.storage is None and check_storage(intent) == []


def test_defaults_of_a_minimal_storage_section() -> None:
    st = intent_with({"client_version": "2.15.5"}).storage
    assert st is not None
    assert st.packages == "auto" and st.lnet.networks == [] and st.filesystems == []
    assert st.lnet.global_settings() == {}
    n = intent_with(storage()).storage.lnet.networks[0]  # type: ignore[union-attr]
    assert n.multi_rail is True and n.interfaces is None
    assert n.tunables.model_dump(exclude_none=True) == {} and n.lnd_tunables.model_dump(exclude_none=True) == {}


def test_the_demo_storage_section_is_valid() -> None:
    st = load_intent(REPO / "inventory/demo").storage
    assert st is not None and st.client_version == "2.15.5"
    assert [f.name for f in st.filesystems] == ["lfs1"] and len(st.filesystems[0].mgs) == 2


def test_o2ib_and_o2ib0_are_one_network_for_the_mgs_check() -> None:
    # NIDs print net 0 without its number (libcfs_net2str): o2ib0 declared, @o2ib NIDs, and the reverse
    assert issues_of(storage()) == []
    assert issues_of(storage(lnet={"networks": [{"net": "o2ib", "rails": [0], "routes": ["10.20.0.0/16"]}]},
                             filesystems=fs(mgs=["10.20.0.1@o2ib0"]))) == []


def test_host_name_nids_and_tcp_interfaces_are_accepted() -> None:
    st = storage(lnet={"networks": [{"net": "tcp1", "interfaces": ["eth2", "bond0.100"], "multi_rail": True,
                                     "lnd_tunables": {"conns_per_peer": 4}}]},
                 filesystems=fs(mgs=["mgs-a.storage.example@tcp1", "mgs-b@tcp1"]))
    assert issues_of(st) == []


def test_global_settings_keep_lnetctls_names_in_a_fixed_order() -> None:
    st = intent_with(storage(lnet={"networks": [], "retry_count": 2, "discovery": 0, "max_interfaces": 64})).storage
    assert st is not None
    assert list(st.lnet.global_settings().items()) == [("max_interfaces", 64), ("discovery", 0), ("retry_count", 2)]


# --- lnet_net_key / parse_nid -----------------------------------------------------------------------------


@pytest.mark.parametrize(("net", "key"), [("o2ib", "o2ib0"), ("o2ib0", "o2ib0"), ("o2ib12", "o2ib12"),
                                          ("tcp", "tcp0"), ("tcp3", "tcp3"), ("ib0", None), ("o2ib01", None),
                                          ("O2IB", None), ("tcp-1", None), ("", None), ("gni", None)])
def test_lnet_net_key(net: str, key: str | None) -> None:
    assert lnet_net_key(net) == key


@pytest.mark.parametrize(("nid", "parsed"), [
    ("10.20.0.1@o2ib", ("10.20.0.1", "o2ib0")),
    ("10.20.0.1@tcp2", ("10.20.0.1", "tcp2")),
    ("mgs1.lab@o2ib1", ("mgs1.lab", "o2ib1")),
    ("10.20.0.300@o2ib", None),   # not an address, and all-digit labels are no host name
    ("10.20.1@o2ib", None),
    ("10.20.0.1", None),          # no net
    ("10.20.0.1@", None),
    ("@o2ib", None),
    ("10.20.0.1@ib0", None),
    ("-mgs@tcp", None),
    ("mgs_1@tcp", None),
    ("10.20.0.1@o2ib@tcp", None),
])
def test_parse_nid(nid: str, parsed: tuple[str, str] | None) -> None:
    assert parse_nid(nid) == parsed


# --- each rule: path, message, value and what is valid ----------------------------------------------------


def test_client_version_must_be_numeric() -> None:
    i = only(issues_of(storage(client_version="2.15")))  # two parts: not X.Y.Z
    assert (i.rule, i.path, i.value) == ("storage-bad-client-version", "storage.client_version", "2.15")
    assert i.message == "not a Lustre version" and i.valid == "numbers joined by dots, e.g. 2.15.5"
    assert issues_of(storage(client_version="2.16.1.3")) == []


def test_bad_net_is_named_and_does_not_cascade_into_the_mgs_check() -> None:
    i = only(issues_of(storage(**net(net="ib0"))))
    assert (i.rule, i.path, i.value) == ("storage-bad-net", "storage.lnet.networks[0].net", "ib0")
    assert i.message == "not an LNet network hwaac configures"
    assert i.valid.startswith("o2ib or tcp, optionally numbered")


def test_the_same_network_twice_is_refused_even_when_spelled_differently() -> None:
    st = storage(lnet={"networks": [{"net": "o2ib", "rails": [0], "routes": ["10.20.0.0/16"]},
                                    {"net": "o2ib0", "rails": [1]}]})
    i = only(issues_of(st))
    assert (i.rule, i.path, i.value) == ("storage-duplicate-net", "storage.lnet.networks[1].net", "o2ib0")
    assert i.message == "the same network as 'o2ib' (LNet network o2ib0)"
    assert i.valid == "a network other than ['o2ib']"


@pytest.mark.parametrize("net_", [{"net": "o2ib0"}, {"net": "o2ib0", "rails": [0], "interfaces": ["eth2"]},
                                  {"net": "o2ib0", "rails": []}, {"net": "o2ib0", "interfaces": []}])
def test_a_network_names_rails_or_interfaces(net_: dict[str, Any]) -> None:
    i = only(issues_of(storage(lnet={"networks": [net_]})))
    assert (i.rule, i.path) == ("storage-net-interfaces", "storage.lnet.networks[0]")
    assert i.message == "name either rails or interfaces, not both or neither, and not an empty list"
    assert i.value == {"rails": net_.get("rails"), "interfaces": net_.get("interfaces")}
    assert i.valid == "rails: [0, 1, ...] (the fabric's rails) or interfaces: [eth2, ...]"


def test_rails_exist_and_are_listed_once() -> None:
    issues = issues_of(storage(**net(rails=[1, 2, 1, -1])))
    assert [(i.rule, i.path, i.message, i.value, i.valid) for i in issues] == [
        ("storage-bad-rail", "storage.lnet.networks[0].rails[1]", "rail does not exist", 2, "0-1"),
        ("storage-bad-rail", "storage.lnet.networks[0].rails[2]", "rail listed twice", 1, "each rail once"),
        ("storage-bad-rail", "storage.lnet.networks[0].rails[3]", "rail does not exist", -1, "0-1"),
    ]


@pytest.mark.parametrize("name", ["eth2:1", "eth 2", "a/b", "eth2,eth3", "o2ib0(ib0)", "", "x" * 16, ".."])
def test_bad_interface_names(name: str) -> None:
    st = storage(lnet={"networks": [{"net": "tcp", "interfaces": [name]}]}, filesystems=[])
    i = only(issues_of(st))
    assert (i.rule, i.path, i.value) == ("storage-bad-interface", "storage.lnet.networks[0].interfaces[0]", name)
    assert i.message == "not a Linux interface name"
    assert i.valid == "1-15 characters without white space, '/', ':', ',' or parentheses, e.g. eth2"


def test_an_interface_listed_twice() -> None:
    st = storage(lnet={"networks": [{"net": "tcp", "interfaces": ["eth2", "eth2"]}]}, filesystems=[])
    i = only(issues_of(st))
    assert (i.path, i.message, i.value) == ("storage.lnet.networks[0].interfaces[1]", "interface listed twice", "eth2")


def test_multi_rail_off_needs_a_single_interface() -> None:
    i = only(issues_of(storage(**net(multi_rail=False))))
    assert (i.rule, i.path, i.value) == ("storage-multi-rail-off", "storage.lnet.networks[0].multi_rail", False)
    assert i.message == "is false but the network has 2 interfaces (rails x planes)"
    assert i.valid == "true (LNet Multi-Rail), or a single interface"
    assert issues_of(storage(**net(rails=[1], multi_rail=False))) == []
    st = storage(lnet={"networks": [{"net": "tcp", "interfaces": ["eth2", "eth3"], "multi_rail": False}]},
                 filesystems=[])
    assert only(issues_of(st)).message == "is false but the network has 2 interfaces (interfaces)"


def test_multi_rail_off_counts_every_plane_of_a_rail() -> None:
    # twin planes: rail 0 has two NIC ports, so one rail is already two interfaces
    i = only(issues_of(storage(**net(rails=[0], multi_rail=False)), planes=2))
    assert i.message == "is false but the network has 2 interfaces (rails x planes)"


def test_lnd_tunables_follow_what_the_lnd_reads() -> None:
    st = storage(lnet={"networks": [{"net": "tcp", "interfaces": ["eth2"],
                                     "lnd_tunables": {"conns_per_peer": 4, "concurrent_sends": 64,
                                                      "map_on_demand": 1}}]}, filesystems=[])
    issues = issues_of(st)
    assert [(i.rule, i.path, i.value) for i in issues] == [
        ("storage-lnd-tunable-not-for-net", "storage.lnet.networks[0].lnd_tunables.concurrent_sends", 64),
        ("storage-lnd-tunable-not-for-net", "storage.lnet.networks[0].lnd_tunables.map_on_demand", 1),
    ]
    assert issues[0].message == "the tcp LND does not read it (lnetctl import ignores it)"
    assert issues[0].valid == "tcp LND tunables: conns_per_peer"
    o2ib = storage(**net(lnd_tunables={"conns_per_peer": 2, "concurrent_sends": 64, "map_on_demand": 1}))
    assert issues_of(o2ib) == []


@pytest.mark.parametrize("name", ["lustre-ai", "lfs-1", "toolongname", "", "lfs.1"])
def test_bad_fsnames(name: str) -> None:
    i = only(issues_of(storage(filesystems=fs(name=name))))
    assert (i.rule, i.path, i.value) == ("storage-bad-fsname", "storage.filesystems[0].name", name)
    assert i.message == "not a Lustre fsname hwaac accepts"
    assert i.valid == "1-8 letters, digits or '_' (no '-': tunables are scoped as <fsname>-*)"


def test_duplicate_file_system_names_and_mount_points() -> None:
    two = [*fs(), {**fs()[0], "mount_point": "/mnt/other"}]
    i = only(issues_of(storage(filesystems=two)))
    assert (i.rule, i.path, i.value) == ("storage-duplicate-fs", "storage.filesystems[1].name", "lfs1")
    assert i.message == "already declared as storage.filesystems[0]"
    assert i.valid == "a file system name not used before"
    two = [*fs(), {**fs()[0], "name": "lfs2"}]
    i = only(issues_of(storage(filesystems=two)))
    assert (i.rule, i.path, i.value) == ("storage-duplicate-mount-point", "storage.filesystems[1].mount_point",
                                         "/mnt/lfs1")
    assert i.message == "already used by storage.filesystems[0]"


@pytest.mark.parametrize("mp", ["mnt/lfs1", "/", "/mnt/lfs1/", "/mnt/../lfs1", "/mnt//lfs1", "//mnt",
                                "/mnt/my lfs", "/mnt/./lfs1", "/mnt/\tx"])
def test_bad_mount_points(mp: str) -> None:
    i = only(issues_of(storage(filesystems=fs(mount_point=mp))))
    assert (i.rule, i.path, i.value) == ("storage-bad-mount-point", "storage.filesystems[0].mount_point", mp)
    assert i.message == "not a usable mount point"
    assert i.valid.startswith("an absolute path without '..'")


def test_mgs_needs_a_node() -> None:
    i = only(issues_of(storage(filesystems=fs(mgs=[]))))
    assert (i.rule, i.path, i.message, i.value) == ("storage-bad-nid", "storage.filesystems[0].mgs", "no MGS node", [])


def test_each_bad_nid_of_an_mgs_node_is_named() -> None:
    issues = issues_of(storage(filesystems=fs(mgs=["10.20.0.1@o2ib,10.20.0.300@o2ib", "10.20.0.2@o2ib,"])))
    assert [(i.rule, i.path, i.message, i.value) for i in issues] == [
        ("storage-bad-nid", "storage.filesystems[0].mgs[0]", "'10.20.0.300@o2ib' is not a NID",
         "10.20.0.1@o2ib,10.20.0.300@o2ib"),
        ("storage-bad-nid", "storage.filesystems[0].mgs[1]", "'' is not a NID", "10.20.0.2@o2ib,"),
    ]
    assert issues[0].valid.startswith("comma-separated NIDs of one MGS node: <IPv4 or host name>@<o2ib[N]")


def test_a_nid_given_twice() -> None:
    i = only(issues_of(storage(filesystems=fs(mgs=["10.20.0.1@o2ib", "10.20.0.1@o2ib"]))))
    assert (i.rule, i.path, i.message) == ("storage-bad-nid", "storage.filesystems[0].mgs[1]",
                                           "NID 10.20.0.1@o2ib given twice")


def test_an_mgs_nid_on_an_undeclared_network_names_both_networks() -> None:
    i = only(issues_of(storage(filesystems=fs(mgs=["10.20.0.1@o2ib,10.30.0.1@tcp"]))))
    assert (i.rule, i.path, i.value) == ("storage-mgs-net-not-configured", "storage.filesystems[0].mgs[0]",
                                         "10.20.0.1@o2ib,10.30.0.1@tcp")
    assert i.message == ("NID 10.30.0.1@tcp is on LNet network tcp0, which storage.lnet.networks does not declare "
                         "(declared: o2ib0)")
    assert i.valid == "a NID on o2ib0"
    i = only(issues_of(storage(lnet={"networks": []}, filesystems=fs(mgs=["10.20.0.1@o2ib1"]))))
    assert i.message.endswith("(declared: none)") and i.valid == "declare o2ib1 in storage.lnet.networks"


@pytest.mark.parametrize("opt", ["flock,noatime", "", "no atime"])
def test_bad_mount_options(opt: str) -> None:
    i = only(issues_of(storage(filesystems=fs(options=["flock", opt]))))
    assert (i.rule, i.path, i.value) == ("storage-bad-mount-option", "storage.filesystems[0].options[1]", opt)
    assert i.message == "not a single mount option"
    assert i.valid == "one option per list item, without spaces or commas, e.g. [flock, noatime]"


@pytest.mark.parametrize("key", ["max_rpcs_in_flight", "ost.max_rpcs_in_flight", "osc.*.max_rpcs_in_flight",
                                 "osc.lfs1-OST*.max_rpcs_in_flight", "ldlm.lru_size", "osc.", "OSC.checksums"])
def test_tunable_keys_must_be_scopable(key: str) -> None:
    i = only(issues_of(storage(filesystems=fs(tunables={key: 32}))))
    assert (i.rule, i.path, i.value) == ("storage-bad-tunable", f"storage.filesystems[0].tunables.{key}", key)
    assert i.message == "not a client parameter hwaac can scope to the file system"
    assert i.valid == ("<type>.<parameter> with type osc, mdc, llite, ldlm.namespaces, e.g. "
                       "osc.max_rpcs_in_flight")


@pytest.mark.parametrize("value", ["", "16 M", "a\nb"])
def test_tunable_values_are_one_word(value: str) -> None:
    i = only(issues_of(storage(filesystems=fs(tunables={"osc.max_dirty_mb": value}))))
    assert (i.rule, i.path, i.value) == ("storage-bad-tunable", "storage.filesystems[0].tunables.osc.max_dirty_mb",
                                         value)
    assert i.message == "value is empty or contains white space"


def test_nested_parameters_are_accepted() -> None:
    tun = {"ldlm.namespaces.pool.limit": 1000, "llite.max_read_ahead_mb": "1024", "mdc.max_mod_rpcs_in_flight": 7}
    assert issues_of(storage(filesystems=fs(tunables=tun))) == []


# --- routes of rails networks and MGS reachability over the rails ---------------------------------------
# minimal.yml's pools: loopbacks 10.0.0.0/28 and 10.0.1.0/28, leaf_spine 10.1.0.0/24, host_links 172.16.0.0/24


@pytest.mark.parametrize(("route", "message", "valid"), [
    ("10.20.0.5/16", "host bits are set", "the network address 10.20.0.0/16"),
    ("10.20.0.0/016", "not written as a plain prefix", "10.20.0.0/16"),
    ("10.20.0.1", "not an IPv4 prefix in CIDR notation", "a prefix such as 10.20.0.0/16 (a single server: /32)"),
    ("10.20/16", "not an IPv4 prefix in CIDR notation", "a prefix such as 10.20.0.0/16 (a single server: /32)"),
    ("10.20.0.0/33", "not an IPv4 prefix in CIDR notation", "a prefix such as 10.20.0.0/16 (a single server: /32)"),
    ("storage", "not an IPv4 prefix in CIDR notation", "a prefix such as 10.20.0.0/16 (a single server: /32)"),
    ("fd00:20::/64", "IPv6 routes are not supported", "an IPv4 prefix such as 10.20.0.0/16"),
])
def test_bad_routes_are_named_and_keep_the_mgs_check_quiet(route: str, message: str, valid: str) -> None:
    # the MGS NIDs (10.20.x) are then not covered, but only the bad route is reported
    i = only(issues_of(storage(**net(routes=[route]))))
    assert (i.rule, i.path, i.value) == ("storage-bad-route", "storage.lnet.networks[0].routes[0]", route)
    assert (i.message, i.valid) == (message, valid)


def test_a_single_server_route_and_a_route_listed_twice() -> None:
    st = storage(**net(routes=["10.20.0.1/32", "10.20.0.2/32", "10.20.1.1/32"]))
    assert issues_of(st) == []  # every MGS NID of the base section (10.20.0.1, 10.20.1.1, 10.20.0.2) is covered
    i = only(issues_of(storage(**net(routes=["10.20.0.0/16", "10.20.0.0/16"]))))
    assert (i.rule, i.path, i.message, i.valid) == ("storage-bad-route", "storage.lnet.networks[0].routes[1]",
                                                    "route listed twice", "each prefix once")


def test_a_route_over_a_fabric_pool_names_the_route_and_each_pool() -> None:
    issues = issues_of(storage(**net(routes=["10.20.0.0/16", "10.0.0.0/15"])))
    assert [(i.rule, i.path, i.value, i.message) for i in issues] == [
        ("storage-route-overlaps-pool", "storage.lnet.networks[0].routes[1]", "10.0.0.0/15",
         f"overlaps {pool}, a pool of the fabric itself")
        for pool in ("addressing.loopbacks.leaf (10.0.0.0/28)", "addressing.loopbacks.spine (10.0.1.0/28)",
                     "addressing.leaf_spine (10.1.0.0/24)")
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
        st = storage(lnet={"networks": [{"net": "o2ib0", "rails": [0, 1], "routes": ["10.20.0.0/16"]},
                                        {"net": "tcp1", "interfaces": ["eth2"], "routes": routes}]})
        i = only(issues_of(st))
        assert (i.rule, i.path, i.value) == ("storage-routes-without-rails", "storage.lnet.networks[1].routes",
                                             routes)
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
        "172.16.0.0/24 and the network's routes (none): the rails' routing tables have no route to it")
    assert issues[1].valid == ("add its prefix to storage.lnet.networks[0].routes (the storage servers' subnet, "
                               "e.g. 10.20.0.0/16), or a NID in 172.16.0.0/24")
    i = only(issues_of(storage(**net(routes=["10.20.0.0/24", "10.30.0.0/16"]))))  # 10.20.1.1 is not in a /24
    assert i.message == (
        "NID 10.20.1.1@o2ib is on o2ib0, which runs over the rails, but lies outside the host-link block "
        "172.16.0.0/24 and the network's routes (10.20.0.0/24, 10.30.0.0/16): the rails' routing tables have no "
        "route to it")


def test_mgs_nids_in_the_host_link_block_or_named_by_host_are_accepted_without_routes() -> None:
    # an MGS on the rails themselves (an appliance in a node slot) is routed by the host-link block route;
    # a host name is resolved on the node, so hwaac cannot check it
    st = storage(**net(routes=None), filesystems=fs(mgs=["172.16.0.250@o2ib,mgs-b.lab@o2ib", "mgs-c@o2ib"]))
    assert issues_of(st) == []


def test_only_the_nids_own_network_routes_count() -> None:
    st = storage(lnet={"networks": [{"net": "o2ib0", "rails": [0], "routes": ["10.20.0.0/16"]},
                                    {"net": "o2ib1", "rails": [1]}]},
                 filesystems=fs(mgs=["10.20.0.1@o2ib", "10.20.0.2@o2ib1"]))
    i = only(issues_of(st))
    assert (i.rule, i.path) == ("storage-mgs-not-routed", "storage.filesystems[0].mgs[1]")
    assert "is on o2ib1" in i.message and i.valid.startswith("add its prefix to storage.lnet.networks[1].routes")


def test_nids_on_a_network_over_named_interfaces_are_not_checked() -> None:
    st = storage(lnet={"networks": [{"net": "tcp1", "interfaces": ["eth2"]}]},
                 filesystems=fs(mgs=["10.99.0.1@tcp1", "10.99.0.2@tcp1"]))
    assert issues_of(st) == []


def test_pools_kept_in_netbox_count_once_resolved_and_are_skipped_before() -> None:
    from hwaac.model.intent import NetBoxPrefixRef
    from hwaac.validate import resolve_netbox_pools

    data = _yaml(MINIMAL.read_text())
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


def test_every_storage_rule_is_registered_with_a_fixture() -> None:
    storage_rules = {r for r in RULES if r.startswith("storage-")}
    fixtures = {p.stem for p in (REPO / "tests/fixtures/intents/invalid").glob("storage-*.yml")}
    assert storage_rules == fixtures


# --- schema errors through the loader: file, line, field, value and what is valid -------------------------


def _load_error(storage_yaml: str) -> IntentError:
    text = MINIMAL.read_text() + storage_yaml  # minimal.yml is 17 lines: "storage:" is line 18
    with pytest.raises(IntentError) as info:
        load_intent_source(text, "f.yml")
    return info.value


def test_peercredits_hiw_is_not_an_lnd_tunable() -> None:
    err = _load_error("storage:\n  client_version: '2.15.5'\n  lnet:\n    networks:\n      - net: o2ib\n"
                      "        rails: [0]\n        lnd_tunables: {peercredits_hiw: 16}\n")
    assert str(err) == ("f.yml:24: storage.lnet.networks[0].lnd_tunables.peercredits_hiw: unknown field "
                        "'peercredits_hiw'; valid: one of concurrent_sends, conns_per_peer, map_on_demand")


def test_packages_and_global_values_are_checked_by_the_schema() -> None:
    err = _load_error("storage:\n  client_version: '2.15.5'\n  packages: rpm\n  lnet: {discovery: 2}\n")
    assert [str(i) for i in err.issues] == [
        "f.yml:20: storage.packages: invalid value (got 'rpm'); valid: 'kmod', 'dkms' or 'auto'",
        "f.yml:21: storage.lnet.discovery: invalid value (got 2); valid: 0 or 1",
    ]


def test_max_intf_is_spelled_max_interfaces() -> None:
    err = _load_error("storage:\n  client_version: '2.15.5'\n  lnet: {max_intf: 200}\n")
    assert str(err).startswith("f.yml:20: storage.lnet.max_intf: unknown field 'max_intf' (did you mean "
                               "'max_interfaces'?)")


def test_client_version_is_required() -> None:
    err = _load_error("storage:\n  packages: kmod\n")
    assert str(err) == "f.yml:18: storage.client_version: required field is missing"  # the storage: line


def test_semantic_errors_point_at_their_line() -> None:
    err = _load_error("storage:\n  client_version: '2.15.5'\n  lnet:\n    networks:\n      - net: o2ib\n"
                      "        rails: [0]\n        routes: [10.30.0.0/16]\n  filesystems:\n    - name: lfs1\n"
                      "      mgs:\n        - 10.20.0.1@o2ib\n        - 10.20.0.2@tcp\n      mount_point: /mnt/lfs1\n")
    assert [(i.line, i.path, i.rule) for i in err.issues] == [
        (28, "storage.filesystems[0].mgs[0]", "storage-mgs-not-routed"),
        (29, "storage.filesystems[0].mgs[1]", "storage-mgs-net-not-configured")]


def test_storage_survives_netbox_pool_resolution() -> None:
    # resolve_netbox_pools rebuilds the intent from model_dump(exclude_unset=True): storage must come through
    from hwaac.model.intent import NetBoxPrefixRef
    from hwaac.validate import resolve_netbox_pools

    data = _yaml(MINIMAL.read_text())
    data["addressing"]["leaf_spine"] = {"netbox_role": "p2p"}
    data["storage"] = copy.deepcopy(storage(lnet={"networks": [{"net": "o2ib", "rails": [0]}], "discovery": 1}))
    intent = Intent.model_validate(data)
    assert isinstance(intent.addressing.leaf_spine, NetBoxPrefixRef)
    out, issues = resolve_netbox_pools(intent, lambda ref, site: "10.1.0.0/24")
    assert issues == [] and out.storage == intent.storage
