"""plugins/module_utils/lnet.py on the recorded lnetctl samples (tests/fixtures/tools/lnetctl, sources in its README)
and the change planner's rules.

Expected models are written out by hand from the sample texts (not copied from the parser's output).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.aiinfra.hwaac.plugins.module_utils import lnet as L
from ansible_collections.aiinfra.hwaac.plugins.module_utils import lnet_plan as P

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "tools" / "lnetctl"

O2IB_TUN = {"peer_timeout": 180, "peer_credits": 32, "peer_buffer_credits": 0, "credits": 256}
O2IB_LND = {
    "peercredits_hiw": 16,
    "map_on_demand": 0,
    "concurrent_sends": 64,
    "fmr_pool_size": 512,
    "fmr_flush_trigger": 384,
    "fmr_cache": 1,
    "ntx": 512,
    "conns_per_peer": 1,
}
GLOBAL_215 = {
    "numa_range": 0,
    "max_interfaces": 200,
    "discovery": 1,
    "drop_asym_route": 0,
    "retry_count": 2,
    "transaction_timeout": 50,
    "health_sensitivity": 100,
    "recovery_interval": 1,
    "router_sensitivity": 100,
    "lnd_timeout": 16,
    "response_tracking": 3,
    "recovery_limit": 0,
}


def text(name: str) -> str:
    return (FIX / name).read_text()


def ni(interface, nid=None, status=None, tunables=None, lnd=None):
    return {"interface": interface, "nid": nid, "status": status, "tunables": tunables or {}, "lnd_tunables": lnd or {}}


# --- parsing ------------------------------------------------------------------------------------------------------


def test_export_backup_215_and_216_load_to_the_same_model() -> None:
    expected_nets = [
        {"net": "o2ib", "nis": [ni("ib0", tunables=O2IB_TUN, lnd=O2IB_LND), ni("ib1", tunables=O2IB_TUN, lnd=O2IB_LND)]}
    ]
    old = L.parse_state(text("2.15/export_backup_o2ib_mr.txt"))
    new = L.parse_state(text("2.16/export_backup_o2ib_mr.txt"))
    assert old["nets"] == expected_nets
    assert new["nets"] == expected_nets
    assert old["global"] == GLOBAL_215
    assert new["global"] == {**GLOBAL_215, "max_recovery_ping_interval": 900}


def test_net_show_both_layouts() -> None:
    assert L.parse_state(text("2.15/net_show_o2ib_mr.txt")) == {
        "nets": [{"net": "o2ib", "nis": [ni("ib0", "10.20.0.5@o2ib", "up"), ni("ib1", "10.20.1.5@o2ib", "up")]}],
        "global": {},
    }
    assert L.parse_state(text("2.16/net_show_o2ib_mr_tcp.txt")) == {
        "nets": [
            {"net": "o2ib", "nis": [ni("enp6s0", "10.20.0.5@o2ib", "up"), ni("enp7s0", "10.20.1.5@o2ib", "up")]},
            {"net": "tcp", "nis": [ni("enp5s0", "10.30.0.5@tcp", "up")]},
        ],
        "global": {},
    }
    assert L.parse_state(text("2.16/net_show_tcp.txt"))["nets"] == [
        {"net": "tcp", "nis": [ni("eth0", "10.20.0.5@tcp", "up")]}
    ]


def test_net_show_verbose_samples() -> None:
    tcp = L.parse_state(text("2.15/net_show_v_tcp.txt"))
    assert tcp["nets"] == [
        {
            "net": "tcp",
            "nis": [
                ni(
                    "bond0",
                    "10.20.0.5@tcp",
                    "up",
                    {"peer_timeout": 180, "peer_credits": 8, "peer_buffer_credits": 0, "credits": 256},
                    {"conns_per_peer": 1},
                )
            ],
        }
    ]
    v216 = L.parse_state(text("2.16/net_show_v_o2ib.txt"))
    assert v216["nets"] == [{"net": "o2ib", "nis": [ni("ib0", "10.20.0.5@o2ib", "up", O2IB_TUN, O2IB_LND)]}]


def test_older_layout_with_lnd_tunables_inside_tunables() -> None:
    """DDN's recorded sample prints o2ib's LND keys under tunables: and an empty lnd tunables: (None)."""
    state = L.parse_state(text("older/net_show_v2_o2ib_mr_lnd_in_tunables.txt"))
    assert state["nets"] == [
        {
            "net": "o2ib",
            "nis": [
                ni("ib0", "10.20.0.5@o2ib", "up", O2IB_TUN, O2IB_LND),
                ni("ib1", "10.20.1.5@o2ib", "up", O2IB_TUN, O2IB_LND),
            ],
        }
    ]


def test_names_are_normalised() -> None:
    assert L.normalise_net("o2ib0") == "o2ib"
    assert L.normalise_net("o2ib") == "o2ib"
    assert L.normalise_net("o2ib00") == "o2ib"
    assert L.normalise_net("o2ib1") == "o2ib1"
    assert L.normalise_net("tcp0") == "tcp"
    assert L.normalise_net("tcp10") == "tcp10"
    assert L.nid_net("10.20.0.5@o2ib0") == "o2ib"
    assert L.nid_net("mgs-host") is None
    assert L.nid_net("10.20.0.5@o2ib-1") is None
    doc = (
        "net:\n    - net type: o2ib0\n      local NI(s):\n        - interfaces:\n              0: ib0\n"
        "global:\n    max_intf: 200\n"
    )
    assert L.parse_state(doc) == {"nets": [{"net": "o2ib", "nis": [ni("ib0")]}], "global": {"max_interfaces": 200}}


def test_lnet_down_is_recognised_in_every_layout() -> None:
    assert [(e.op, e.entity, e.errno, e.descr) for e in L.parse_errors(text("2.15/lnet_down.stderr"))] == [
        ("show", "net", -100, "cannot get networks: Network is down")
    ]
    assert [(e.op, e.entity, e.errno, e.descr) for e in L.parse_errors(text("2.16/lnet_down_2.15.90.stderr"))] == [
        ("show", "net", -3, "Network is down")
    ]
    assert [(e.op, e.entity, e.errno, e.descr) for e in L.parse_errors(text("2.16/lnet_down.stderr"))] == [
        ("show", "net", -100, "LNet stack down")
    ]
    for name in ("2.15/lnet_down.stderr", "2.16/lnet_down_2.15.90.stderr", "2.16/lnet_down.stderr"):
        assert L.lnet_down(text(name)), name
        assert not L.modules_missing(text(name)), name
    for name in (
        "2.15/net_show_o2ib_mr.txt",
        "2.16/net_show_tcp.txt",
        "2.15/error_add_eexist.stderr",
        "2.15/not_loaded.stderr",
    ):
        assert not L.lnet_down(text(name)), name


def test_modules_not_loaded() -> None:
    sample = text("2.15/not_loaded.stderr")
    assert L.modules_missing(sample)
    assert [(e.op, e.entity, e.errno, e.descr) for e in L.parse_errors(sample)] == [
        ("show", "net", -19, "cannot get networks: No such device")
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("2.15/error_add_couldnt_query_intf.stderr", ("add", "net", -1, "couldn't query intf ib0")),
        ("2.15/error_add_eexist.stderr", ("add", "net", -17, "cannot add network: File exists")),
        ("2.16/error_add_eexist.stderr", ("add", "net", -17, "cannot add network: File exists")),
        ("2.15/error_del_enoent.stderr", ("del", "net", -2, "cannot del network: No such file or directory")),
        (
            "2.15/error_unconfigure_ebusy.stderr",
            ("unconfigure", "lnet", -16, "LNet unconfigure error: Device or resource busy"),
        ),
    ],
)
def test_errors_are_parsed(name: str, expected: tuple) -> None:
    assert [(e.op, e.entity, e.errno, e.descr) for e in L.parse_errors(text(name))] == [expected]


@pytest.mark.parametrize(
    "name",
    [
        "2.15/net_show_o2ib_mr.txt",
        "2.15/export_backup_o2ib_mr.txt",
        "2.16/export_backup_o2ib_mr.txt",
        "2.16/net_show_v_o2ib.txt",
        "older/net_show_v2_o2ib_mr_lnd_in_tunables.txt",
    ],
)
def test_cut_reason_of_whole_and_cut_output(name: str) -> None:
    """lnetctl's whole output is not cut; cut inside its last NI (before ``CPT``, which every NI of these has) it
    is, and the module fails instead of configuring from a partial view."""
    whole, export = text(name), "export" in name
    assert L.cut_reason(whole, export=export) is None
    cut = whole[: whole.rindex("CPT:")] if "CPT:" in whole else whole[: whole.rindex("0: ib1")]
    assert "cut short" in (L.cut_reason(cut, export=export) or "")
    if export:  # cut after the networks, before the peers and global settings
        assert "no 'global:'" in (L.cut_reason(whole[: whole.index("\npeer:") + 1], export=True) or "")


def test_output_that_is_not_yaml() -> None:
    with pytest.raises(L.LnetError, match="not YAML"):
        L.parse_state("net:\n  - net type: [o2ib\n")
    assert L.parse_errors("Segmentation fault") == []
    with pytest.raises(L.LnetError, match="unexpected entry"):
        L.parse_state("net:\n    - foo: bar\n")


# --- cYAML printer against the recorded layout ----------------------------------------------------------------------


def test_cyaml_printer_reproduces_recorded_215_output() -> None:
    """cyaml_dump of the loaded recorded samples gives their text back, byte for byte (CPT and descr carry their
    quotes in the text, as liblnetconfig writes them)."""
    sample = text("2.15/net_show_v_tcp.txt")
    tree = yaml.safe_load(sample)
    tree["net"][0]["local NI(s)"][0]["CPT"] = '"[0]"'
    assert P.cyaml_dump(tree) == sample
    down = text("2.15/lnet_down.stderr")
    tree = yaml.safe_load(down)
    tree["show"][0]["net"]["descr"] = f'"{tree["show"][0]["net"]["descr"]}"'
    assert P.cyaml_dump(tree) == down


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
    expected = P.LNET_CONF_HEADER + (
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
    rendered = P.render_lnet_conf(desired)
    assert rendered == expected
    assert P.render_lnet_conf(desired) == rendered  # deterministic
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


# --- mounts -------------------------------------------------------------------------------------------------------


def test_proc_mounts() -> None:
    mounts = L.parse_proc_mounts(
        "sysfs /sys sysfs rw 0 0\n"
        "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.2@o2ib:/lfs1 /mnt/lfs\\0401 lustre rw,flock,lazystatfs 0 0\n"
        "10.20.0.9@tcp:/scratch/sub /scratch lustre rw 0 0\n"
    )
    assert mounts == [
        {
            "source": "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.2@o2ib:/lfs1",
            "mount_point": "/mnt/lfs 1",
            "fsname": "lfs1",
            "nids": ["10.20.0.1@o2ib", "10.20.1.1@o2ib", "10.20.0.2@o2ib"],
        },
        {
            "source": "10.20.0.9@tcp:/scratch/sub",
            "mount_point": "/scratch",
            "fsname": "scratch",
            "nids": ["10.20.0.9@tcp"],
        },
    ]


# --- planning -----------------------------------------------------------------------------------------------------

MOUNT = [{"source": "10.20.0.1@o2ib:/lfs1", "mount_point": "/mnt/lfs1", "fsname": "lfs1", "nids": ["10.20.0.1@o2ib"]}]


def current(*nets, glob=None) -> dict:
    """nets: (name, [(interface, peer_credits), ...])"""
    return {
        "nets": [
            {
                "net": name,
                "nis": [
                    ni(i, f"10.20.{k}.5@{name}", "up", {**O2IB_TUN, "peer_credits": pc}, {"conns_per_peer": 1})
                    for k, (i, pc) in enumerate(nis)
                ],
            }
            for name, nis in nets
        ],
        "global": glob if glob is not None else dict(GLOBAL_215),
    }


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
    assert P.op_command(plan["ops"][0])[0] == [
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
    assert P.op_command(plan["ops"][0])[0] == ["lnetctl", "set", "discovery", "0"]


def test_add_goes_through_import_when_net_add_has_no_flag() -> None:
    op = {
        "op": "add",
        "net": "o2ib",
        "interfaces": ["ib0"],
        "tunables": {"peer_credits": 32},
        "lnd_tunables": {"concurrent_sends": 64, "conns_per_peer": 1},
        "reason": "",
    }
    argv, stdin, display = P.op_command(op)
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
    assert P.op_command(op)[:2] == (
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


@pytest.mark.parametrize(
    "joint",
    ["...\n", "---\n", "...\n---\n"],
    ids=["document end", "document start", "end and start"],
)
@pytest.mark.parametrize("explicit_start", [False, True])
def test_export_in_several_documents_is_merged(joint: str, explicit_start: bool) -> None:
    """2.16+ ``export`` prints the Netlink part (libyaml, which may mark its document with ``---``/``...``) and then
    the global settings through cYAML (lnetctl.c ``jt_export``); every document is read and merged, nothing is
    dropped."""
    sample = text("2.16/export_backup_o2ib_mr.txt")
    cut = sample.index("\nglobal:\n") + 1
    joined = ("---\n" if explicit_start else "") + sample[:cut] + joint + sample[cut:]
    expected = L.parse_state(sample)
    assert expected["nets"] and expected["global"]
    assert L.parse_state(joined) == expected


def test_documents_with_the_same_key_are_joined_and_a_bad_one_fails() -> None:
    first = "net:\n-     net type: o2ib\n      local NI(s):\n      -     interfaces:\n                  0: ib0\n"
    second = "net:\n    - net type: tcp\n      local NI(s):\n        - interfaces:\n              0: eth0\n"
    state = L.parse_state(first + "...\n" + second + "global:\n    discovery: 0\n")
    assert [(n["net"], [i["interface"] for i in n["nis"]]) for n in state["nets"]] == [
        ("o2ib", ["ib0"]),
        ("tcp", ["eth0"]),
    ]
    assert state["global"] == {"discovery": 0}
    with pytest.raises(L.LnetError, match="not YAML"):
        L.parse_state(first + "---\nglobal: [discovery\n")


def test_net_names_and_mount_table_have_one_host_copy() -> None:
    """Network names and /proc/mounts are read by module_utils/lustre_mount.py only; lnet.py uses it (the same
    function objects, so the two modules cannot drift apart)."""
    import inspect

    from ansible_collections.aiinfra.hwaac.plugins.module_utils import lustre_mount as M

    assert L.normalise_net is M.normalise_net and L.parse_mounts is M.parse_mounts
    assert L.parse_source is M.parse_source
    source = inspect.getsource(L)
    assert "def normalize_net" not in source and "def _unescape" not in source
    # an unreadable network name in lnetctl output says what a network name is
    with pytest.raises(
        L.LnetError,
        match=r"^lnetctl printed net type '0@x': '0@x' is not an LNet network name "
        r"\(expected an LND name and an optional number",
    ):
        L.parse_state("net:\n    - net type: 0@x\n")
    # a mount whose source cannot be read counts as using every local network (the planner refuses conservatively)
    (odd,) = L.parse_proc_mounts("lustre-odd:/x /mnt/odd lustre rw 0 0\n")
    assert odd == {"source": "lustre-odd:/x", "mount_point": "/mnt/odd", "fsname": "", "nids": []}
    assert L.used_nets([odd], current(("o2ib", [("ib0", 32)]), ("tcp", [("eth0", 8)]))) == {
        "o2ib": ["/mnt/odd"],
        "tcp": ["/mnt/odd"],
    }
