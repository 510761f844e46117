"""SONiC config_db renderer and validator: golden files for the demo fabric, behaviour and mutation tests.

Regenerate the golden files with ``HWAAC_UPDATE_GOLDEN=1 pytest tests/unit/test_render_sonic.py`` and review
the diff before committing it.
"""

from __future__ import annotations

import copy
import ipaddress
import json
import os
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import orjson
import pytest
from ruamel.yaml import YAML

from hwaac.model.intent import Intent
from hwaac.model.loader import load_intent
from hwaac.plan import build_plan
from hwaac.plan.model import Plan, ip_str
from hwaac.render.sonic import render_config_db, validate_config_db
from hwaac.render.sonic.validate import config_db_schema

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "inventory" / "demo"
GOLDEN = ROOT / "tests" / "golden" / "demo" / "switches"
LEAF, SPINE = "leaf-p0-su01-r0", "spine-p0-01"


@cache
def demo_plan() -> Plan:
    return build_plan(load_intent(DEMO))


def demo_dict() -> dict:
    return YAML(typ="safe").load((DEMO / "fabric.yml").read_text())


def plan_from(d: dict) -> Plan:
    return build_plan(Intent.model_validate(d))


@cache
def rail_subnet_plan() -> Plan:
    d = demo_dict()
    d["addressing"]["host_links"]["mode"] = "rail_subnet"
    return plan_from(d)


@cache
def three_tier_plan() -> Plan:
    d = demo_dict()
    d["fabric"].update(tiers=3, su_count=2, su_capacity=2, nodes_per_su=32)
    d["switches"]["leaf"].update(model="SN5600-O128", downlinks=32)
    d["switches"]["spine"]["per_plane"] = 4  # 4 spines per pod: 1 SU per pod, so both pods are built
    d["switches"]["super_spine"] = {"model": "SN5600-O128"}
    d["addressing"]["loopbacks"]["super_spine"] = "10.0.2.0/26"
    d["addressing"]["spine_super_spine"] = "10.2.0.0/20"
    del d["naming"]["spine"]  # the 3-tier default pattern carries the pod, so names stay unique
    return plan_from(d)


def render(name: str, plan: Plan | None = None) -> dict:
    plan = plan or demo_plan()
    return render_config_db(plan, plan.switch_by_name[name])


def dump(cfg: dict) -> str:
    return json.dumps(cfg, indent=2, sort_keys=False) + "\n"


# --- golden files ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [LEAF, SPINE])
def test_golden_config_db(name):
    path = GOLDEN / name / "config_db.json"
    text = dump(render(name))
    if os.environ.get("HWAAC_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path} missing: run with HWAAC_UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"{name}: config_db differs from {path} (HWAAC_UPDATE_GOLDEN=1 to update)"


def test_orjson_output_matches_golden_format():
    """render_to_dir writes with orjson OPT_INDENT_2: byte-identical to the json.dumps golden form."""
    cfg = render(LEAF)
    assert orjson.dumps(cfg, option=orjson.OPT_INDENT_2) + b"\n" == dump(cfg).encode()


def test_table_order_is_fixed_and_values_are_strings():
    cfg = render(LEAF)
    assert list(cfg) == [
        "DEVICE_METADATA", "PORT", "LOOPBACK_INTERFACE", "INTERFACE", "BGP_NEIGHBOR", "DEVICE_NEIGHBOR",
        "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE",
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "SCHEDULER", "WRED_PROFILE", "QUEUE", "PORT_QOS_MAP", "PFC_WD",
        "CABLE_LENGTH",
    ]

    def leaves(node):
        if isinstance(node, dict):
            for v in node.values():
                yield from leaves(v)
        else:
            yield node

    assert all(isinstance(v, str) for v in leaves(cfg))


# --- PORT and metadata ----------------------------------------------------------------------------------------


def test_sn5600_o128_port_attributes():
    port = render(LEAF)["PORT"]
    assert len(port) == 128
    e0, e4, e8 = port["Ethernet0"], port["Ethernet4"], port["Ethernet8"]
    assert (e0["lanes"], e0["speed"], e0["alias"], e0["index"]) == ("0,1,2,3", "400000", "etp1a", "1")
    assert (e4["lanes"], e4["alias"], e4["index"]) == ("4,5,6,7", "etp1b", "1")
    assert (e8["alias"], e8["index"]) == ("etp2a", "2")
    assert port["Ethernet508"]["alias"] == "etp64b"
    assert {p["mtu"] for p in port.values()} == {"9100"}
    assert {p["fec"] for p in port.values()} == {"rs"}


@pytest.mark.parametrize("name", [LEAF, SPINE])
def test_admin_status_up_on_linked_ports_and_down_on_unused(name):
    cfg = render(name)
    linked = {lk.b_port if lk.b_device == name else lk.a_port for lk in demo_plan().links_by_device[name]}
    up = {p for p, e in cfg["PORT"].items() if e["admin_status"] == "up"}
    down = {p for p, e in cfg["PORT"].items() if e["admin_status"] == "down"}
    assert up == linked == set(cfg["DEVICE_NEIGHBOR"])
    assert down == set(cfg["PORT"]) - linked and down  # the demo uses 64 of 128 ports
    assert all("description" not in cfg["PORT"][p] for p in down)


def test_port_description_names_the_peer():
    cfg = render(LEAF)
    assert cfg["PORT"]["Ethernet0"]["description"] == "gpu-su01-h01:rail0"
    assert cfg["DEVICE_NEIGHBOR"]["Ethernet0"] == {"name": "gpu-su01-h01", "port": "rail0"}
    assert cfg["PORT"]["Ethernet128"]["description"] == "spine-p0-01:Ethernet0"


def test_device_metadata():
    plan = demo_plan()
    leaf, spine = render(LEAF)["DEVICE_METADATA"]["localhost"], render(SPINE)["DEVICE_METADATA"]["localhost"]
    sw = plan.switch_by_name[LEAF]
    assert leaf["type"] == "BackEndToRRouter" and spine["type"] == "BackEndLeafRouter"
    assert leaf["bgp_asn"] == str(sw.asn) and leaf["bgp_router_id"] == ip_str(sw.loopback)
    assert leaf["hwsku"] == "Mellanox-SN5600-O128" and leaf["platform"] == "x86_64-nvidia_sn5600-r0"
    assert leaf["buffer_model"] == "dynamic" and leaf["docker_routing_config_mode"] == "unified"
    assert leaf["default_pfcwd_status"] == "enable"
    assert render(LEAF)["LOOPBACK_INTERFACE"] == {"Loopback0": {}, f"Loopback0|{ip_str(sw.loopback)}/32": {}}


# --- addressing and BGP ---------------------------------------------------------------------------------------


def test_p2p31_every_linked_port_is_routed():
    cfg = render(LEAF)
    addressed = {k.split("|")[0]: k.split("|")[1] for k in cfg["INTERFACE"] if "|" in k}
    assert set(addressed) == set(cfg["DEVICE_NEIGHBOR"])
    assert addressed["Ethernet0"] == "172.16.0.0/31"  # leaf .0, host .1 (host_address: odd)
    assert all(k.split("|")[0] in cfg["INTERFACE"] for k in cfg["INTERFACE"])
    assert "VLAN" not in cfg and "VLAN_MEMBER" not in cfg and "VLAN_INTERFACE" not in cfg


def _interface_networks(cfg: dict) -> dict[ipaddress.IPv4Address, ipaddress.IPv4Interface]:
    out = {}
    for key in cfg["INTERFACE"]:
        if "|" in key:
            iface = ipaddress.IPv4Interface(key.split("|")[1])
            out[iface.ip] = iface
    return out


def test_every_leaf_bgp_neighbour_is_a_spine_on_one_of_its_31s():
    plan = demo_plan()
    cfg = render(LEAF)
    nets = _interface_networks(cfg)
    spines = {s.name: s for s in plan.switches_of("spine")}
    assert len(cfg["BGP_NEIGHBOR"]) == plan.design.leaf_uplinks
    for addr, n in cfg["BGP_NEIGHBOR"].items():
        local = nets[ipaddress.IPv4Address(n["local_addr"])]
        assert local.network.prefixlen == 31
        assert ipaddress.IPv4Address(addr) in local.network and addr != n["local_addr"]
        assert n["name"] in spines and n["asn"] == str(spines[n["name"]].asn)
        assert (n["admin_status"], n["holdtime"], n["keepalive"], n["nhopself"]) == ("up", "10", "3", "0")
    link_peers = {ip_str(lk.b_ip) for lk in plan.links_by_device[LEAF] if lk.kind == "leaf_spine"}
    assert set(cfg["BGP_NEIGHBOR"]) == link_peers


def test_spine_peers_with_leaves_only_and_never_with_hosts():
    plan = demo_plan()
    cfg = render(SPINE)
    names = {n["name"] for n in cfg["BGP_NEIGHBOR"].values()}
    assert {plan.switch_by_name[n].role for n in names} == {"leaf"}
    assert all(n["asn"] == str(plan.switch_by_name[n["name"]].asn) for n in cfg["BGP_NEIGHBOR"].values())
    nodes = {n.name for n in plan.nodes}
    leaf_names = {n["name"] for n in render(LEAF)["BGP_NEIGHBOR"].values()}
    assert not leaf_names & nodes


# --- QoS ---------------------------------------------------------------------------------------------------------


def test_dscp_map_lists_all_64_and_sends_roce_and_cnp_to_their_classes():
    m = render(LEAF)["DSCP_TO_TC_MAP"]["ROCE"]
    assert list(m) == [str(d) for d in range(64)]
    assert (m["26"], m["48"], m["0"], m["24"], m["46"]) == ("3", "6", "0", "0", "0")


def test_tc_maps_and_schedulers():
    cfg = render(LEAF)
    identity = {str(i): str(i) for i in range(8)}
    assert cfg["TC_TO_QUEUE_MAP"]["ROCE"] == identity
    assert cfg["MAP_PFC_PRIORITY_TO_QUEUE"]["ROCE"] == identity
    assert cfg["TC_TO_PRIORITY_GROUP_MAP"]["ROCE"] == {**dict.fromkeys(identity, "0"), "3": "3"}
    assert cfg["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"]["ROCE"] == {"3": "3"}
    assert cfg["SCHEDULER"] == {
        "scheduler.lossy": {"type": "DWRR", "weight": "50"},
        "scheduler.lossless": {"type": "DWRR", "weight": "50"},
        "scheduler.cnp": {"type": "STRICT"},
    }


def test_pfc_enable_and_queues_on_every_active_port():
    cfg = render(LEAF)
    active = list(cfg["DEVICE_NEIGHBOR"])
    pqm = cfg["PORT_QOS_MAP"]
    assert list(pqm) == ["global", *active]
    assert pqm["global"] == {"dscp_to_tc_map": "ROCE"}
    assert {(e["pfc_enable"], e["pfcwd_sw_enable"]) for k, e in pqm.items() if k != "global"} == {("3", "3")}
    assert set(cfg["QUEUE"]) == {f"{p}|{q}" for p in active for q in (0, 3, 6)}
    assert cfg["QUEUE"]["Ethernet0|3"] == {"scheduler": "scheduler.lossless", "wred_profile": "ROCE_LOSSLESS"}
    assert cfg["QUEUE"]["Ethernet0|6"] == {"scheduler": "scheduler.cnp"}
    assert cfg["QUEUE"]["Ethernet0|0"] == {"scheduler": "scheduler.lossy"}
    assert cfg["CABLE_LENGTH"] == {"AZURE": dict.fromkeys(active, "40m")}
    assert list(cfg["PFC_WD"]) == ["GLOBAL", *active]
    assert cfg["PFC_WD"]["GLOBAL"] == {"POLL_INTERVAL": "200"}
    assert cfg["PFC_WD"]["Ethernet0"] == {"action": "drop", "detection_time": "200", "restoration_time": "400"}


def test_wred_thresholds_equal_the_intent_bytes():
    ecn = demo_plan().intent.qos.ecn
    w = render(LEAF)["WRED_PROFILE"]["ROCE_LOSSLESS"]
    assert w["ecn"] == "ecn_all"
    for c in ("green", "yellow", "red"):
        assert w[f"wred_{c}_enable"] == "true"
        assert int(w[f"{c}_min_threshold"]) == ecn.min_threshold_bytes == 150_000
        assert int(w[f"{c}_max_threshold"]) == ecn.max_threshold_bytes == 1_500_000
        assert int(w[f"{c}_drop_probability"]) == ecn.mark_probability_percent


def test_pfc_watchdog_disabled_leaves_out_pfc_wd():
    d = demo_dict()
    d["qos"]["pfc_watchdog"]["enabled"] = False
    cfg = render(LEAF, plan_from(d))
    assert "PFC_WD" not in cfg
    assert cfg["DEVICE_METADATA"]["localhost"]["default_pfcwd_status"] == "disable"
    assert all("pfcwd_sw_enable" not in e for e in cfg["PORT_QOS_MAP"].values())
    assert validate_config_db(cfg, plan_from(d).intent) == []


# --- no shared mutable state -------------------------------------------------------------------------------------


def test_rendered_configs_share_no_dicts():
    a = render(LEAF)

    def ids(node, acc):
        if isinstance(node, dict):
            acc.append(id(node))
            for v in node.values():
                ids(v, acc)
        return acc

    ids_a = ids(a, [])
    assert len(ids_a) == len(set(ids_a)), "a dict appears twice in one config"
    a["DSCP_TO_TC_MAP"]["ROCE"]["26"] = "1"
    a["PORT"]["Ethernet0"]["mtu"] = "1500"
    a["QUEUE"]["Ethernet0|3"]["scheduler"] = "x"
    a["PORT_QOS_MAP"]["Ethernet4"]["pfc_enable"] = "4"
    b = render(LEAF)
    assert b["DSCP_TO_TC_MAP"]["ROCE"]["26"] == "3"
    assert b["PORT"]["Ethernet0"]["mtu"] == "9100"
    assert b["QUEUE"]["Ethernet0|3"]["scheduler"] == "scheduler.lossless"
    assert b["PORT_QOS_MAP"]["Ethernet4"]["pfc_enable"] == "3"
    assert not set(ids_a) & set(ids(b, []))


# --- validator ---------------------------------------------------------------------------------------------------


def test_validator_accepts_every_demo_switch():
    plan = demo_plan()
    for sw in plan.switches:
        cfg = render_config_db(plan, sw)
        assert validate_config_db(cfg, plan.intent) == [], sw.name
        assert validate_config_db(cfg) == [], sw.name


def _set(*path_and_value) -> Callable[[dict], None]:
    *keys, last, value = path_and_value

    def mutate(cfg: dict) -> None:
        node = cfg
        for k in keys:
            node = node[k]
        if value is None:
            del node[last]
        else:
            node[last] = value

    return mutate


MUTATIONS = [
    ("missing lanes", _set("PORT", "Ethernet0", "lanes", None), "$.PORT.Ethernet0: 'lanes' is a required property"),
    ("lanes not a list", _set("PORT", "Ethernet0", "lanes", "0-3"), "$.PORT.Ethernet0.lanes"),
    ("speed 400G", _set("PORT", "Ethernet0", "speed", "400G"), "$.PORT.Ethernet0.speed: '400G' is not a speed"),
    ("speed too high", _set("PORT", "Ethernet0", "speed", "1600001"), "$.PORT.Ethernet0.speed"),
    ("mtu 9300", _set("PORT", "Ethernet0", "mtu", "9300"), "$.PORT.Ethernet0.mtu: '9300' is not an MTU"),
    ("fec", _set("PORT", "Ethernet0", "fec", "fec91"), "$.PORT.Ethernet0.fec"),
    ("admin_status", _set("PORT", "Ethernet0", "admin_status", "UP"), "$.PORT.Ethernet0.admin_status"),
    ("device type", _set("DEVICE_METADATA", "localhost", "type", "Leaf"), "$.DEVICE_METADATA.localhost.type"),
    ("asn 0", _set("BGP_NEIGHBOR", "10.1.0.0", "asn", "0"), "$.BGP_NEIGHBOR['10.1.0.0'].asn: '0' is not an AS number"),
    ("asn too big", _set("BGP_NEIGHBOR", "10.1.0.0", "asn", "4294967296"),
     "$.BGP_NEIGHBOR['10.1.0.0'].asn"),
    ("interface key", _set("INTERFACE", "Ethernet0|172.16.0.0/33", {}),
     "$.INTERFACE: unexpected key(s) 'Ethernet0|172.16.0.0/33': expected sonic-interface.yang"),
    ("undefined scheduler", _set("QUEUE", "Ethernet0|3", "scheduler", "scheduler.nope"),
     "$.QUEUE['Ethernet0|3'].scheduler: 'scheduler.nope' is not defined in SCHEDULER"),
    ("undefined wred", _set("QUEUE", "Ethernet0|3", "wred_profile", "NOPE"), "is not defined in WRED_PROFILE"),
    ("undefined map", _set("PORT_QOS_MAP", "Ethernet0", "tc_to_pg_map", "AZURE"),
     "$.PORT_QOS_MAP.Ethernet0.tc_to_pg_map: 'AZURE' is not defined in TC_TO_PRIORITY_GROUP_MAP"),
    ("pfc_enable 3,4", _set("PORT_QOS_MAP", "Ethernet0", "pfc_enable", "3,4"),
     "$.PORT_QOS_MAP.Ethernet0.pfc_enable: '3,4' but the lossless classes are '3'"),
    ("pfcwd on a lossy priority", _set("PORT_QOS_MAP", "Ethernet0", "pfcwd_sw_enable", "3,4"),
     "$.PORT_QOS_MAP.Ethernet0.pfcwd_sw_enable"),
    ("detection < poll", _set("PFC_WD", "Ethernet0", "detection_time", "150"),
     "$.PFC_WD.Ethernet0.detection_time: 150 ms is below GLOBAL POLL_INTERVAL 200 ms"),
    ("restoration < poll", _set("PFC_WD", "Ethernet4", "restoration_time", "100"),
     "$.PFC_WD.Ethernet4.restoration_time: 100 ms is below"),
    ("poll out of range", _set("PFC_WD", "GLOBAL", "POLL_INTERVAL", "50"), "$.PFC_WD.GLOBAL.POLL_INTERVAL"),
    ("wred max < min", _set("WRED_PROFILE", "ROCE_LOSSLESS", "green_max_threshold", "1000"),
     "$.WRED_PROFILE.ROCE_LOSSLESS.green_max_threshold"),
    ("queue on unknown port", _set("QUEUE", "Ethernet999|3", {"scheduler": "scheduler.lossless"}),
     "$.QUEUE['Ethernet999|3']: port 'Ethernet999' is not defined in PORT"),
    ("interface on unknown port", _set("INTERFACE", "Ethernet999", {}),
     "$.INTERFACE.Ethernet999: port 'Ethernet999' is not defined in PORT"),
    ("bgp local_addr not on an interface", _set("BGP_NEIGHBOR", "10.1.0.0", "local_addr", "10.9.9.9"),
     "$.BGP_NEIGHBOR['10.1.0.0'].local_addr: 10.9.9.9 is not an address configured on an INTERFACE"),
    ("bgp neighbour off subnet", _set("BGP_NEIGHBOR", "10.1.0.0", "local_addr", "10.1.0.3"),
     "$.BGP_NEIGHBOR['10.1.0.0']: neighbour 10.1.0.0 is not a peer address"),
    ("address without interface key", _set("INTERFACE", "Ethernet128", None), "address without the interface key"),
    ("dscp 26 to lossy", _set("DSCP_TO_TC_MAP", "ROCE", "26", "1"),
     "$.DSCP_TO_TC_MAP.ROCE['26']: DSCP 26 maps to TC '1', the intent's qos wants 3"),
    ("dscp missing", _set("DSCP_TO_TC_MAP", "ROCE", "63", None), "$.DSCP_TO_TC_MAP.ROCE: {"),
    ("active port without qos", _set("PORT_QOS_MAP", "Ethernet4", None), "$.PORT_QOS_MAP: active port 'Ethernet4'"),
]


@pytest.mark.parametrize(("what", "mutate", "expected"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_validator_rejects_mutated_config(what, mutate, expected):
    cfg = copy.deepcopy(render(LEAF))
    mutate(cfg)
    errors = validate_config_db(cfg, demo_plan().intent)
    assert any(expected in e for e in errors), f"{what}: {expected!r} not in {errors}"


def test_pfc_enable_checked_without_intent_from_the_maps():
    cfg = copy.deepcopy(render(LEAF))
    cfg["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "3,4"
    errors = validate_config_db(cfg)
    assert any(e.startswith("$.PORT_QOS_MAP.Ethernet0.pfc_enable: '3,4' but the lossless classes are '3'")
               for e in errors), errors
    # consistent maps make "3,4" valid without an intent, but not against the demo intent ([3])
    cfg["TC_TO_PRIORITY_GROUP_MAP"]["ROCE"]["4"] = "4"
    cfg["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"]["ROCE"]["4"] = "4"
    for port, entry in cfg["PORT_QOS_MAP"].items():
        if port != "global":
            entry["pfc_enable"] = "3,4"
    assert validate_config_db(cfg) == []
    assert validate_config_db(cfg, demo_plan().intent)


def test_validator_survives_garbage():
    assert validate_config_db({})  # DEVICE_METADATA and PORT are required
    errors = validate_config_db({"PORT": [], "QUEUE": {"x": 1}, "PFC_WD": {"GLOBAL": "y"}, "lower": {}})
    assert any("$.PORT" in e for e in errors) and any("lower" in e for e in errors)


@pytest.mark.parametrize(("name", "lo", "hi", "span"), [
    ("mtu", 68, 9216, range(0, 10_000)),
    ("speed", 1, 1_600_000, [*range(0, 1001), 99_999, 100_000, 999_999, 1_000_000, 1_599_999,
                             1_600_000, 1_600_001, 1_999_999, 9_999_999]),
    ("asn", 1, 4_294_967_295, [0, 1, 9, 65_535, 4_200_000_000, 4_294_967_294, 4_294_967_295,
                               4_294_967_296, 4_299_999_999, 9_999_999_999, 10_000_000_000]),
    ("poll_interval", 100, 1000, range(0, 1200)),
    ("detection_time", 100, 5000, range(0, 6000)),
    ("restoration_time", 100, 60_000, range(0, 70_000)),
    ("weight", 1, 100, range(0, 300)),
    ("percent", 0, 100, range(0, 300)),
    ("uint16", 0, 65_535, range(0, 70_000)),
])
def test_schema_range_patterns_match_exactly_their_range(name, lo, hi, span):
    rx = re.compile(config_db_schema()["$defs"][name]["pattern"])
    wrong = [n for n in span if bool(rx.fullmatch(str(n))) != (lo <= n <= hi)]
    assert not wrong, f"{name}: {wrong[:10]}"
    assert not rx.fullmatch("0" + str(lo)) and not rx.fullmatch(f" {lo}")


# --- rail_subnet and 3 tiers -------------------------------------------------------------------------------------


def test_rail_subnet_uses_a_vlan_with_the_gateway_and_no_per_port_addresses():
    plan = rail_subnet_plan()
    for name, vlan in ((LEAF, "Vlan1000"), ("leaf-p0-su02-r3", "Vlan1003")):
        cfg = render(name, plan)
        hosts = [lk for lk in plan.links_by_device[name] if lk.kind == "host"]
        gateways = {f"{ip_str(lk.b_ip)}/{lk.prefixlen}" for lk in hosts}
        assert len(gateways) == 1
        assert cfg["VLAN"] == {vlan: {"vlanid": vlan[4:], "admin_status": "up", "mtu": "9100"}}
        assert cfg["VLAN_MEMBER"] == {f"{vlan}|{lk.b_port}": {"tagging_mode": "untagged"} for lk in hosts}
        assert cfg["VLAN_INTERFACE"] == {vlan: {}, f"{vlan}|{gateways.pop()}": {}}
        routed = {k.split("|")[0] for k in cfg["INTERFACE"]}
        assert not routed & {lk.b_port for lk in hosts}
        assert routed == {lk.a_port for lk in plan.links_by_device[name] if lk.kind == "leaf_spine"}
        assert all(k.endswith("/31") for k in cfg["INTERFACE"] if "|" in k)
        assert validate_config_db(cfg, plan.intent) == []
    assert "Vlan1000|172.16.0.1/26" in render(LEAF, plan)["VLAN_INTERFACE"]
    assert "VLAN" not in render(SPINE, plan)


def test_rail_subnet_port_cannot_be_routed_and_bridged():
    cfg = copy.deepcopy(render(LEAF, rail_subnet_plan()))
    cfg["INTERFACE"]["Ethernet0"] = {}
    assert any("also a routed port" in e for e in validate_config_db(cfg))


def test_three_tier_super_spines_render_and_validate():
    plan = three_tier_plan()
    ss = plan.switches_of("super_spine")
    assert ss
    for sw in ss:
        cfg = render_config_db(plan, sw)
        assert cfg["DEVICE_METADATA"]["localhost"]["type"] == "SpineRouter"
        assert cfg["BGP_NEIGHBOR"]
        assert {plan.switch_by_name[n["name"]].role for n in cfg["BGP_NEIGHBOR"].values()} == {"spine"}
        assert validate_config_db(cfg, plan.intent) == [], sw.name
    spine = plan.switches_of("spine")[0]
    cfg = render_config_db(plan, spine)
    roles = {plan.switch_by_name[n["name"]].role for n in cfg["BGP_NEIGHBOR"].values()}
    assert roles == {"leaf", "super_spine"}
    assert cfg["DEVICE_METADATA"]["localhost"]["type"] == "BackEndLeafRouter"
    assert validate_config_db(cfg, plan.intent) == []
