"""The intent's ``storage`` section (Lustre clients): semantic rules and their messages (the routes and the MGS
reachability: test_intent_storage_routes.py; schema errors through the loader: test_intent_storage_schema.py).

Every storage rule also has a negative fixture in tests/fixtures/intents/invalid/storage-*.yml (file and line are
checked by test_intent_validation.py); here each message, value and 'valid' text is asserted on intents built in
code, with the edge cases around them (o2ib = o2ib0, host-name NIDs, twin planes).
"""

from __future__ import annotations

from typing import Any

import pytest

from hwaac.model.rules import RULES
from hwaac.model.storage_rules import check_storage, lnet_net_key, parse_nid
from hwaac.validate import load_intent
from tests.unit.storage_intents import REPO, fs, intent_with, issues_of, net, only, storage

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
    assert (
        issues_of(
            storage(
                lnet={"networks": [{"net": "o2ib", "rails": [0], "routes": ["10.20.0.0/16"]}]},
                filesystems=fs(mgs=["10.20.0.1@o2ib0"]),
            )
        )
        == []
    )


def test_host_name_nids_and_tcp_interfaces_are_accepted() -> None:
    st = storage(
        lnet={
            "networks": [
                {
                    "net": "tcp1",
                    "interfaces": ["eth2", "bond0.100"],
                    "multi_rail": True,
                    "lnd_tunables": {"conns_per_peer": 4},
                }
            ]
        },
        filesystems=fs(mgs=["mgs-a.storage.example@tcp1", "mgs-b@tcp1"]),
    )
    assert issues_of(st) == []


def test_global_settings_keep_lnetctls_names_in_a_fixed_order() -> None:
    st = intent_with(storage(lnet={"networks": [], "retry_count": 2, "discovery": 0, "max_interfaces": 64})).storage
    assert st is not None
    assert list(st.lnet.global_settings().items()) == [("max_interfaces", 64), ("discovery", 0), ("retry_count", 2)]


# --- lnet_net_key / parse_nid -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("net", "key"),
    [
        ("o2ib", "o2ib0"),
        ("o2ib0", "o2ib0"),
        ("o2ib12", "o2ib12"),
        ("tcp", "tcp0"),
        ("tcp3", "tcp3"),
        ("ib0", None),
        ("o2ib01", None),
        ("O2IB", None),
        ("tcp-1", None),
        ("", None),
        ("gni", None),
    ],
)
def test_lnet_net_key(net: str, key: str | None) -> None:
    assert lnet_net_key(net) == key


@pytest.mark.parametrize(
    ("nid", "parsed"),
    [
        ("10.20.0.1@o2ib", ("10.20.0.1", "o2ib0")),
        ("10.20.0.1@tcp2", ("10.20.0.1", "tcp2")),
        ("mgs1.lab@o2ib1", ("mgs1.lab", "o2ib1")),
        ("10.20.0.300@o2ib", None),  # not an address, and all-digit labels are no host name
        ("10.20.1@o2ib", None),
        ("10.20.0.1", None),  # no net
        ("10.20.0.1@", None),
        ("@o2ib", None),
        ("10.20.0.1@ib0", None),
        ("-mgs@tcp", None),
        ("mgs_1@tcp", None),
        ("10.20.0.1@o2ib@tcp", None),
    ],
)
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
    st = storage(
        lnet={"networks": [{"net": "o2ib", "rails": [0], "routes": ["10.20.0.0/16"]}, {"net": "o2ib0", "rails": [1]}]}
    )
    i = only(issues_of(st))
    assert (i.rule, i.path, i.value) == ("storage-duplicate-net", "storage.lnet.networks[1].net", "o2ib0")
    assert i.message == "the same network as 'o2ib' (LNet network o2ib0)"
    assert i.valid == "a network other than ['o2ib']"


@pytest.mark.parametrize(
    "net_",
    [
        {"net": "o2ib0"},
        {"net": "o2ib0", "rails": [0], "interfaces": ["eth2"]},
        {"net": "o2ib0", "rails": []},
        {"net": "o2ib0", "interfaces": []},
    ],
)
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
    st = storage(
        lnet={"networks": [{"net": "tcp", "interfaces": ["eth2", "eth3"], "multi_rail": False}]}, filesystems=[]
    )
    assert only(issues_of(st)).message == "is false but the network has 2 interfaces (interfaces)"


def test_multi_rail_off_counts_every_plane_of_a_rail() -> None:
    # twin planes: rail 0 has two NIC ports, so one rail is already two interfaces
    i = only(issues_of(storage(**net(rails=[0], multi_rail=False)), planes=2))
    assert i.message == "is false but the network has 2 interfaces (rails x planes)"


def test_lnd_tunables_follow_what_the_lnd_reads() -> None:
    st = storage(
        lnet={
            "networks": [
                {
                    "net": "tcp",
                    "interfaces": ["eth2"],
                    "lnd_tunables": {"conns_per_peer": 4, "concurrent_sends": 64, "map_on_demand": 1},
                }
            ]
        },
        filesystems=[],
    )
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
    assert (i.rule, i.path, i.value) == (
        "storage-duplicate-mount-point",
        "storage.filesystems[1].mount_point",
        "/mnt/lfs1",
    )
    assert i.message == "already used by storage.filesystems[0]"


@pytest.mark.parametrize(
    "mp",
    ["mnt/lfs1", "/", "/mnt/lfs1/", "/mnt/../lfs1", "/mnt//lfs1", "//mnt", "/mnt/my lfs", "/mnt/./lfs1", "/mnt/\tx"],
)
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
        (
            "storage-bad-nid",
            "storage.filesystems[0].mgs[0]",
            "'10.20.0.300@o2ib' is not a NID",
            "10.20.0.1@o2ib,10.20.0.300@o2ib",
        ),
        ("storage-bad-nid", "storage.filesystems[0].mgs[1]", "'' is not a NID", "10.20.0.2@o2ib,"),
    ]
    assert issues[0].valid.startswith("comma-separated NIDs of one MGS node: <IPv4 or host name>@<o2ib[N]")


def test_a_nid_given_twice() -> None:
    i = only(issues_of(storage(filesystems=fs(mgs=["10.20.0.1@o2ib", "10.20.0.1@o2ib"]))))
    assert (i.rule, i.path, i.message) == (
        "storage-bad-nid",
        "storage.filesystems[0].mgs[1]",
        "NID 10.20.0.1@o2ib given twice",
    )


def test_an_mgs_nid_on_an_undeclared_network_names_both_networks() -> None:
    i = only(issues_of(storage(filesystems=fs(mgs=["10.20.0.1@o2ib,10.30.0.1@tcp"]))))
    assert (i.rule, i.path, i.value) == (
        "storage-mgs-net-not-configured",
        "storage.filesystems[0].mgs[0]",
        "10.20.0.1@o2ib,10.30.0.1@tcp",
    )
    assert i.message == (
        "NID 10.30.0.1@tcp is on LNet network tcp0, which storage.lnet.networks does not declare (declared: o2ib0)"
    )
    assert i.valid == "a NID on o2ib0"
    i = only(issues_of(storage(lnet={"networks": []}, filesystems=fs(mgs=["10.20.0.1@o2ib1"]))))
    assert i.message.endswith("(declared: none)") and i.valid == "declare o2ib1 in storage.lnet.networks"


@pytest.mark.parametrize("opt", ["flock,noatime", "", "no atime"])
def test_bad_mount_options(opt: str) -> None:
    i = only(issues_of(storage(filesystems=fs(options=["flock", opt]))))
    assert (i.rule, i.path, i.value) == ("storage-bad-mount-option", "storage.filesystems[0].options[1]", opt)
    assert i.message == "not a single mount option"
    assert i.valid == "one option per list item, without spaces or commas, e.g. [flock, noatime]"


@pytest.mark.parametrize(
    "key",
    [
        "max_rpcs_in_flight",
        "ost.max_rpcs_in_flight",
        "osc.*.max_rpcs_in_flight",
        "osc.lfs1-OST*.max_rpcs_in_flight",
        "ldlm.lru_size",
        "osc.",
        "OSC.checksums",
    ],
)
def test_tunable_keys_must_be_scopable(key: str) -> None:
    i = only(issues_of(storage(filesystems=fs(tunables={key: 32}))))
    assert (i.rule, i.path, i.value) == ("storage-bad-tunable", f"storage.filesystems[0].tunables.{key}", key)
    assert i.message == "not a client parameter hwaac can scope to the file system"
    assert i.valid == ("<type>.<parameter> with type osc, mdc, llite, ldlm.namespaces, e.g. osc.max_rpcs_in_flight")


@pytest.mark.parametrize("value", ["", "16 M", "a\nb"])
def test_tunable_values_are_one_word(value: str) -> None:
    i = only(issues_of(storage(filesystems=fs(tunables={"osc.max_dirty_mb": value}))))
    assert (i.rule, i.path, i.value) == (
        "storage-bad-tunable",
        "storage.filesystems[0].tunables.osc.max_dirty_mb",
        value,
    )
    assert i.message == "value is empty or contains white space"


def test_nested_parameters_are_accepted() -> None:
    tun = {"ldlm.namespaces.pool.limit": 1000, "llite.max_read_ahead_mb": "1024", "mdc.max_mod_rpcs_in_flight": 7}
    assert issues_of(storage(filesystems=fs(tunables=tun))) == []


def test_every_storage_rule_is_registered_with_a_fixture() -> None:
    storage_rules = {r for r in RULES if r.startswith("storage-")}
    fixtures = {p.stem for p in (REPO / "tests/fixtures/intents/invalid").glob("storage-*.yml")}
    assert storage_rules == fixtures
