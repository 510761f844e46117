"""plugins/module_utils/lnet_plan.py: the cYAML printer against the recorded lnetctl layout, desired state
validation and the change planner's rules. Parsing: test_lnet_parser.py.

Expected models are written out by hand from the sample texts (not copied from the parser's output).
"""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.aiinfra.hwaac.plugins.module_utils import lnet as L
from ansible_collections.aiinfra.hwaac.plugins.module_utils import lnet_commands as C
from ansible_collections.aiinfra.hwaac.plugins.module_utils import lnet_plan as P
from tests.unit.ansible.lnet_samples import GLOBAL_215, current, ni, text

# --- cYAML printer against the recorded layout ----------------------------------------------------------------------


def test_cyaml_printer_reproduces_recorded_215_output() -> None:
    """cyaml_dump of the loaded recorded samples gives their text back, byte for byte (CPT and descr carry their
    quotes in the text, as liblnetconfig writes them)."""
    sample = text("2.15/net_show_v_tcp.txt")
    tree = yaml.safe_load(sample)
    tree["net"][0]["local NI(s)"][0]["CPT"] = '"[0]"'
    assert C.cyaml_dump(tree) == sample
    down = text("2.15/lnet_down.stderr")
    tree = yaml.safe_load(down)
    tree["show"][0]["net"]["descr"] = f'"{tree["show"][0]["net"]["descr"]}"'
    assert C.cyaml_dump(tree) == down


def test_render_lnet_conf_is_lnetctls_own_layout() -> None:
    desired = P.desired_state(
        [
            {
                "net": "o2ib0",
                "interfaces": ["ib0", "ib1"],
                "tunables": {"credits": 256, "peer_credits": 32},
                "lnd_tunables": {"conns_per_peer": 1, "concurrent_sends": 64},
            },
            {"net": "tcp", "interfaces": ["eth2"]},
        ],
        {"discovery": 1, "max_intf": 200},
    )
    expected = C.LNET_CONF_HEADER + (
        "net:\n"
        "    - net type: o2ib\n"
        "      local NI(s):\n"
        "        - interfaces:\n"
        "              0: ib0\n"
        "          tunables:\n"
        "              peer_credits: 32\n"
        "              credits: 256\n"
        "          lnd tunables:\n"
        "              concurrent_sends: 64\n"
        "              conns_per_peer: 1\n"
        "        - interfaces:\n"
        "              0: ib1\n"
        "          tunables:\n"
        "              peer_credits: 32\n"
        "              credits: 256\n"
        "          lnd tunables:\n"
        "              concurrent_sends: 64\n"
        "              conns_per_peer: 1\n"
        "    - net type: tcp\n"
        "      local NI(s):\n"
        "        - interfaces:\n"
        "              0: eth2\n"
        "global:\n"
        "    max_interfaces: 200\n"
        "    discovery: 1\n"
    )
    rendered = C.render_lnet_conf(desired)
    assert rendered == expected
    assert C.render_lnet_conf(desired) == rendered  # deterministic
    # every NI line sits where the recorded 2.15 export puts the same key
    recorded = {
        line.strip().split(":")[0]: len(line) - len(line.lstrip())
        for line in text("2.15/export_backup_o2ib_mr.txt").splitlines()
        if line.strip()
    }
    for line in rendered.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        key = line.strip().split(":")[0]
        if key in recorded:
            assert len(line) - len(line.lstrip()) == recorded[key], line
    loaded = yaml.safe_load(rendered)
    assert L.parse_state(rendered)["nets"] == [
        {
            "net": "o2ib",
            "nis": [
                ni(
                    "ib0",
                    tunables={"peer_credits": 32, "credits": 256},
                    lnd={"concurrent_sends": 64, "conns_per_peer": 1},
                ),
                ni(
                    "ib1",
                    tunables={"peer_credits": 32, "credits": 256},
                    lnd={"concurrent_sends": 64, "conns_per_peer": 1},
                ),
            ],
        },
        {"net": "tcp", "nis": [ni("eth2")]},
    ]
    assert loaded["global"] == {"max_interfaces": 200, "discovery": 1}


# --- desired state validation ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("networks", "global_", "option", "valid"),
    [
        ([{"net": "ib0", "interfaces": ["ib0"]}], {}, "networks[0].net", "o2ib or tcp"),
        ([{"net": "lo", "interfaces": ["lo"]}], {}, "networks[0].net", "o2ib or tcp"),
        ([{"net": "gni", "interfaces": ["ipogif0"]}], {}, "networks[0].net", "o2ib or tcp"),
        ([{"net": "o2ib", "interfaces": []}], {}, "networks[0].interfaces", "non-empty list"),
        ([{"net": "o2ib", "interfaces": ["ib 0"]}], {}, "networks[0].interfaces[0]", "Linux interface name"),
        (
            [{"net": "o2ib", "interfaces": ["ib0"]}, {"net": "o2ib1", "interfaces": ["ib1", "ib0"]}],
            {},
            "networks[1].interfaces[1]",
            "not already used by networks[0] (o2ib)",
        ),
        ([{"net": "o2ib", "interfaces": ["ib0", "ib0"]}], {}, "networks[0].interfaces[1]", "not already used"),
        (
            [{"net": "o2ib", "interfaces": ["ib0"]}, {"net": "o2ib0", "interfaces": ["ib1"]}],
            {},
            "networks[1].net",
            "same LNet network o2ib",
        ),
        (
            [{"net": "o2ib", "interfaces": ["ib0"], "tunables": {"peer_credit": 8}}],
            {},
            "networks[0].tunables",
            "peer_timeout, peer_credits",
        ),
        (
            [{"net": "o2ib", "interfaces": ["ib0"], "tunables": {"peer_credits": 0}}],
            {},
            "networks[0].tunables.peer_credits",
            ">= 1",
        ),
        (
            [{"net": "tcp", "interfaces": ["eth0"], "lnd_tunables": {"concurrent_sends": 64}}],
            {},
            "networks[0].lnd_tunables",
            "conns_per_peer for tcp",
        ),
        (
            [{"net": "o2ib", "interfaces": ["ib0"], "lnd_tunables": {"peercredits_hiw": 16}}],
            {},
            "networks[0].lnd_tunables",
            "modprobe.d",
        ),
        ([], {"routing": 1}, "global", "numa_range, max_interfaces"),
        ([], {"discovery": 2}, "global.discovery", "0..1"),
        ([], {"max_intf": 200, "max_interfaces": 300}, "global", "given once"),
    ],
)
def test_bad_input_names_option_value_and_what_is_valid(networks, global_, option, valid) -> None:
    with pytest.raises(L.LnetInputError) as err:
        P.desired_state(networks, global_)
    assert err.value.option == option
    assert valid in err.value.valid
    assert option in str(err.value)


def test_desired_state_keeps_order_and_normalises() -> None:
    desired = P.desired_state(
        [{"net": "o2ib0", "interfaces": ["rail1", "rail0"], "tunables": {"credits": "256", "peer_credits": 32}}],
        {"max_intf": 300},
    )
    assert desired == {
        "nets": [
            {
                "net": "o2ib",
                "declared": "o2ib0",
                "interfaces": ["rail1", "rail0"],
                "tunables": {"peer_credits": 32, "credits": 256},
                "lnd_tunables": {},
            }
        ],
        "global": {"max_interfaces": 300},
    }


# --- planning -----------------------------------------------------------------------------------------------------

MOUNT = [{"source": "10.20.0.1@o2ib:/lfs1", "mount_point": "/mnt/lfs1", "fsname": "lfs1", "nids": ["10.20.0.1@o2ib"]}]


def want(*nets, glob=None) -> dict:
    """nets: (name, [interfaces], peer_credits)"""
    return P.desired_state(
        [{"net": n, "interfaces": i, "tunables": {"peer_credits": pc}} for n, i, pc in nets], glob or {}
    )


def test_adding_a_rail_to_a_mounted_client_only_adds_that_ni() -> None:
    plan = P.plan_changes(want(("o2ib0", ["ib0", "ib1"], 32)), current(("o2ib", [("ib0", 32)])), MOUNT)
    assert plan["refused"] == []
    assert plan["ops"] == [
        {
            "op": "add",
            "net": "o2ib",
            "interfaces": ["ib1"],
            "tunables": {"peer_credits": 32},
            "lnd_tunables": {},
            "reason": "ib1 is not configured",
        }
    ]
    assert C.op_command(plan["ops"][0])[0] == [
        "lnetctl",
        "net",
        "add",
        "--net",
        "o2ib",
        "--if",
        "ib1",
        "--peer-credits",
        "32",
    ]


def test_tunable_change_on_a_mounted_primary_ni_is_refused_with_the_reason() -> None:
    plan = P.plan_changes(want(("o2ib", ["ib0", "ib1"], 32)), current(("o2ib", [("ib0", 8), ("ib1", 32)])), MOUNT)
    assert len(plan["refused"]) == 1
    reason = plan["refused"][0]
    assert "primary NI ib0 (10.20.0.5@o2ib) needs new tunables (peer_credits 8 -> 32)" in reason
    assert "the Lustre mount(s) /mnt/lfs1" in reason
    # unmounted, the same change re-creates the net in the declared order
    free = P.plan_changes(want(("o2ib", ["ib0", "ib1"], 32)), current(("o2ib", [("ib0", 8), ("ib1", 32)])), [])
    assert [(o["op"], o.get("interfaces")) for o in free["ops"]] == [("del_net", None), ("add", ["ib0", "ib1"])]
    assert free["refused"] == []


def test_tunable_change_on_a_secondary_ni() -> None:
    cur = current(("o2ib", [("ib0", 32), ("ib1", 8)]))
    free = P.plan_changes(want(("o2ib", ["ib0", "ib1"], 32)), cur, [])
    assert [(o["op"], o.get("interface"), o.get("interfaces")) for o in free["ops"]] == [
        ("del_ni", "ib1", None),
        ("add", None, ["ib1"]),
    ]
    assert "LNet cannot change an existing NI's tunables" in free["ops"][0]["reason"]
    mounted = P.plan_changes(want(("o2ib", ["ib0", "ib1"], 32)), cur, MOUNT)
    assert len(mounted["refused"]) == 1
    assert "RPCs in flight on it would be dropped" in mounted["refused"][0]


def test_name_normalisation_means_no_change() -> None:
    cur = current(("o2ib", [("ib0", 32), ("ib1", 32)]), glob={**GLOBAL_215, "max_interfaces": 300})
    plan = P.plan_changes(want(("o2ib0", ["ib0", "ib1"], 32), glob={"max_intf": 300, "discovery": 1}), cur, MOUNT)
    assert plan == {"ops": [], "refused": [], "warnings": []}


def test_primary_order_change() -> None:
    cur = current(("o2ib", [("ib1", 32), ("ib0", 32)]))
    free = P.plan_changes(want(("o2ib", ["ib0", "ib1"], 32)), cur, [])
    assert [(o["op"], o.get("interfaces")) for o in free["ops"]] == [("del_net", None), ("add", ["ib0", "ib1"])]
    assert "the primary NI must be ib0 (now ib1" in free["ops"][0]["reason"]
    mounted = P.plan_changes(want(("o2ib", ["ib0", "ib1"], 32)), cur, MOUNT)
    assert mounted["refused"] and "deleting net o2ib" in mounted["refused"][0]


def test_removing_the_declared_first_ni_keeps_the_rest() -> None:
    plan = P.plan_changes(want(("o2ib", ["ib1"], 32)), current(("o2ib", [("ib0", 32), ("ib1", 32)])), [])
    assert [(o["op"], o.get("interface")) for o in plan["ops"]] == [("del_ni", "ib0")]


def test_purge_of_an_unused_net_while_mounted() -> None:
    cur = current(("o2ib", [("ib0", 32)]), ("tcp", [("eth0", 8)]))
    plan = P.plan_changes(want(("o2ib", ["ib0"], 32)), cur, MOUNT)
    assert plan["refused"] == []
    assert [(o["op"], o["net"]) for o in plan["ops"]] == [("del_net", "tcp")]
    kept = P.plan_changes(want(("o2ib", ["ib0"], 32)), cur, MOUNT, purge=False)
    assert kept["ops"] == []
    assert kept["warnings"] == ["nets not declared are kept (purge=false): tcp"]


def test_the_nodes_primary_nid_is_not_deleted_while_mounted() -> None:
    """tcp came first (LNet's default when a mount loads it unconfigured): it holds the node's primary NID."""
    cur = current(("tcp", [("eth0", 8)]), ("o2ib", [("ib0", 32)]))
    plan = P.plan_changes(want(("o2ib", ["ib0"], 32)), cur, MOUNT)
    assert len(plan["refused"]) == 1
    assert "removes the node's primary NID 10.20.0.5@tcp" in plan["refused"][0]
    assert P.plan_changes(want(("o2ib", ["ib0"], 32)), cur, [])["refused"] == []


def test_a_routed_mount_counts_every_local_net_as_used() -> None:
    routed = [{"source": "10.40.0.1@o2ib5:/far", "mount_point": "/far", "fsname": "far", "nids": ["10.40.0.1@o2ib5"]}]
    cur = current(("o2ib", [("ib0", 32), ("ib1", 32)]))
    assert L.used_nets(routed, cur) == {"o2ib": ["/far"]}
    plan = P.plan_changes(want(("o2ib", ["ib0"], 32)), cur, routed)
    assert plan["refused"] == [
        "NI ib1 (10.20.1.5@o2ib) of net o2ib is not declared: deleting NI ib1 of net o2ib "
        "(RPCs in flight on it would be dropped) while /far is mounted"
    ]


def test_purge_false_keeps_undeclared_nis() -> None:
    cur = current(("o2ib", [("ib9", 32), ("ib0", 32)]))
    plan = P.plan_changes(want(("o2ib", ["ib0", "ib1"], 32)), cur, [], purge=False)
    assert [(o["op"], o.get("interfaces")) for o in plan["ops"]] == [("add", ["ib1"])]
    assert plan["warnings"] == [
        "net o2ib: the primary NI is ib9, which is not declared; with purge=false it stays first (declared first: ib0)"
    ]


def test_globals_that_differ_are_set() -> None:
    plan = P.plan_changes(want(glob={"discovery": 0, "max_interfaces": 200}), current(), [])
    assert plan["ops"] == [
        {"op": "set", "key": "discovery", "value": 0, "current": 1, "reason": "discovery is 1, want 0"}
    ]
    assert C.op_command(plan["ops"][0])[0] == ["lnetctl", "set", "discovery", "0"]


def test_add_goes_through_import_when_net_add_has_no_flag() -> None:
    op = {
        "op": "add",
        "net": "o2ib",
        "interfaces": ["ib0"],
        "tunables": {"peer_credits": 32},
        "lnd_tunables": {"concurrent_sends": 64, "conns_per_peer": 1},
        "reason": "",
    }
    argv, stdin, display = C.op_command(op)
    assert argv == ["lnetctl", "import"]
    assert stdin == (
        "net:\n"
        "    - net type: o2ib\n"
        "      local NI(s):\n"
        "        - interfaces:\n"
        "              0: ib0\n"
        "          tunables:\n"
        "              peer_credits: 32\n"
        "          lnd tunables:\n"
        "              concurrent_sends: 64\n"
        "              conns_per_peer: 1\n"
    )
    assert display == "lnetctl import <<'EOF'\n" + stdin + "EOF"
    op["lnd_tunables"] = {"conns_per_peer": 2}
    assert C.op_command(op)[:2] == (
        ["lnetctl", "net", "add", "--net", "o2ib", "--if", "ib0", "--peer-credits", "32", "--conns-per-peer", "2"],
        None,
    )


def test_simulate_follows_the_ops() -> None:
    cur = current(("o2ib", [("ib0", 8), ("ib1", 8)]), ("tcp", [("eth0", 8)]))
    plan = P.plan_changes(want(("o2ib", ["ib0", "ib1", "ib2"], 32)), cur, [])
    after = P.simulate(cur, plan["ops"])
    assert [(n["net"], [x["interface"] for x in n["nis"]]) for n in after["nets"]] == [("o2ib", ["ib0", "ib1", "ib2"])]
    assert all(x["tunables"]["peer_credits"] == 32 for x in after["nets"][0]["nis"])
    assert P.plan_changes(want(("o2ib", ["ib0", "ib1", "ib2"], 32)), after, [])["ops"] == []
