"""SONiC config_db renderer and validator: golden files for the demo fabric, behaviour and mutation tests.

Regenerate the golden files with ``HWAAC_UPDATE_GOLDEN=1 pytest tests/unit/test_render_sonic.py`` and review
the diff before committing it.
"""

from __future__ import annotations

import copy
import csv
import io
import ipaddress
import json
import os
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import orjson
import pytest
from pydantic import BaseModel
from ruamel.yaml import YAML

from hwaac.model.intent import Intent, QosSection
from hwaac.plan import build_plan
from hwaac.plan.model import Plan, ip_str
from hwaac.plan.ports import port_table
from hwaac.render.docs.ipplan import render_ip_plan_csv
from hwaac.render.sonic import render_config_db, validate_config_db
from hwaac.render.sonic.context import QosInvariants, pg_ranges, qos_invariants, switch_model
from hwaac.render.sonic.validate import config_db_schema
from hwaac.validate import load_intent

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
def rail_subnet_partial_plan() -> Plan:
    """rail_subnet with a partly populated fabric: 32 nodes fill SU 1, SU 2's leaves have no host yet."""
    d = demo_dict()
    d["addressing"]["host_links"]["mode"] = "rail_subnet"
    d["fabric"]["nodes"] = 32
    return plan_from(d)


@cache
def two_plane_plan() -> Plan:
    d = demo_dict()
    d["fabric"]["planes"] = 2
    d["host"]["interface_name"] = "rail{rail}p{plane}"
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
        "DEVICE_METADATA", "PORT", "LOOPBACK_INTERFACE", "INTERFACE", "PREFIX_SET", "PREFIX", "ROUTE_MAP_SET",
        "ROUTE_MAP", "BGP_GLOBALS", "BGP_GLOBALS_AF", "ROUTE_REDISTRIBUTE", "BGP_NEIGHBOR", "BGP_NEIGHBOR_AF",
        "DEVICE_NEIGHBOR", "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP",
        "MAP_PFC_PRIORITY_TO_QUEUE", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "SCHEDULER", "WRED_PROFILE", "QUEUE",
        "PORT_QOS_MAP", "PFC_WD", "CABLE_LENGTH", "BUFFER_PG", "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
        "LOSSLESS_TRAFFIC_PATTERN",
    ]

    def leaves(node):
        if isinstance(node, dict):
            for v in node.values():
                yield from leaves(v)
        elif isinstance(node, list):  # YANG leaf-lists (route maps) are JSON lists of strings
            yield from node
        else:
            yield node

    assert all(isinstance(v, str) for v in leaves(cfg))


# --- PORT and metadata ----------------------------------------------------------------------------------------


def test_sn5600_o128_port_attributes():
    port = render(LEAF)["PORT"]
    assert len(port) == 129  # Ethernet0..508 and the SKU's Ethernet512
    e0, e4, e8 = port["Ethernet0"], port["Ethernet4"], port["Ethernet8"]
    assert (e0["lanes"], e0["speed"], e0["alias"], e0["index"]) == ("0,1,2,3", "400000", "etp1a", "1")
    assert (e4["lanes"], e4["alias"], e4["index"]) == ("4,5,6,7", "etp1b", "1")
    assert (e8["alias"], e8["index"]) == ("etp2a", "2")
    assert port["Ethernet508"]["alias"] == "etp64b"
    assert {p["mtu"] for p in port.values()} == {"9100"}
    assert {p.get("fec") for n, p in port.items() if n != "Ethernet512"} == {"rs"}


def test_port_table_covers_every_port_of_the_model_incl_the_25g_extra_port():
    """config reload deletes a port that PORT leaves out: every port of the SKU's port_config.ini is written."""
    plan = demo_plan()
    for name in (LEAF, SPINE):
        model = switch_model(plan, plan.switch_by_name[name])
        assert list(render(name)["PORT"]) == [p.name for p in port_table(model)]
    e512 = render(LEAF)["PORT"]["Ethernet512"]
    assert (e512["lanes"], e512["alias"], e512["index"], e512["speed"], e512["admin_status"]) == (
        "512", "etp65", "65", "25000", "down")
    assert "fec" not in e512  # a 25G port: its FEC is the platform's, not the 400G ports' RS


@pytest.mark.parametrize("name", [LEAF, SPINE])
def test_admin_status_up_on_linked_ports_and_down_on_unused(name):
    cfg = render(name)
    linked = {lk.b_port if lk.b_device == name else lk.a_port for lk in demo_plan().links_by_device[name]}
    up = {p for p, e in cfg["PORT"].items() if e["admin_status"] == "up"}
    down = {p for p, e in cfg["PORT"].items() if e["admin_status"] == "down"}
    assert up == linked == set(cfg["DEVICE_NEIGHBOR"])
    assert down == set(cfg["PORT"]) - linked and down  # the demo uses 64 of 129 ports
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
    assert leaf["frr_mgmt_framework_config"] == "true"  # frrcfgd: BGP_GLOBALS, route maps, redistribution
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
    assert "default|10.1.0.0" in cfg["BGP_NEIGHBOR"]  # frrcfgd's "vrf|address" key, never the bare address
    for key, n in cfg["BGP_NEIGHBOR"].items():
        vrf, addr = key.split("|")
        assert vrf == "default"
        local = nets[ipaddress.IPv4Address(n["local_addr"])]
        assert local.network.prefixlen == 31
        assert ipaddress.IPv4Address(addr) in local.network and addr != n["local_addr"]
        assert n["name"] in spines and n["asn"] == str(spines[n["name"]].asn)
        assert (n["admin_status"], n["keepalive"], n["holdtime"]) == ("true", "3", "10")
    link_peers = {f"default|{ip_str(lk.b_ip)}" for lk in plan.links_by_device[LEAF] if lk.kind == "leaf_spine"}
    assert set(cfg["BGP_NEIGHBOR"]) == link_peers


@pytest.mark.parametrize("name", [LEAF, SPINE])
def test_every_neighbour_is_activated_with_in_and_out_policy(name):
    """frrcfgd sets 'no bgp default ipv4-unicast' and FRR requires an eBGP policy: each neighbour needs its AF."""
    cfg = render(name)
    assert set(cfg["BGP_NEIGHBOR_AF"]) == {f"{k}|ipv4_unicast" for k in cfg["BGP_NEIGHBOR"]}
    for af in cfg["BGP_NEIGHBOR_AF"].values():
        assert af == {"admin_status": "true", "route_map_in": ["HWAAC_PERMIT_ALL"],
                      "route_map_out": ["HWAAC_PERMIT_ALL"]}
    assert cfg["ROUTE_MAP"]["HWAAC_PERMIT_ALL|10"] == {"route_operation": "permit"}
    assert set(cfg["ROUTE_MAP_SET"]) == {"HWAAC_PERMIT_ALL", "HWAAC_CONNECTED"}


@pytest.mark.parametrize("name", [LEAF, SPINE])
def test_bgp_globals_ecmp_and_asn(name):
    sw = demo_plan().switch_by_name[name]
    cfg = render(name)
    assert cfg["BGP_GLOBALS"] == {"default": {"local_asn": str(sw.asn), "router_id": ip_str(sw.loopback),
                                              "load_balance_mp_relax": "true", "log_nbr_state_changes": "true"}}
    assert cfg["BGP_GLOBALS"]["default"]["local_asn"] == cfg["DEVICE_METADATA"]["localhost"]["bgp_asn"]
    assert cfg["BGP_GLOBALS_AF"] == {"default|ipv4_unicast": {"max_ebgp_paths": "64"}}


def test_leaf_redistributes_loopback_and_plane_host_block_only():
    cfg = render(LEAF)
    lo = ip_str(demo_plan().switch_by_name[LEAF].loopback)
    assert cfg["ROUTE_REDISTRIBUTE"] == {"default|connected|bgp|ipv4": {"route_map": ["HWAAC_CONNECTED"]}}
    assert cfg["ROUTE_MAP"]["HWAAC_CONNECTED|10"] == {"route_operation": "permit",
                                                      "match_prefix_set": "HWAAC_CONNECTED_V4"}
    assert cfg["PREFIX_SET"] == {"HWAAC_CONNECTED_V4": {"mode": "IPv4"}}
    assert cfg["PREFIX"] == {
        f"HWAAC_CONNECTED_V4|{lo}/32|exact": {"action": "permit"},
        "HWAAC_CONNECTED_V4|172.16.0.0/16|31..31": {"action": "permit"},  # plane 0 host block, /31s only
    }


def test_spine_redistributes_its_loopback_only():
    cfg = render(SPINE)
    lo = ip_str(demo_plan().switch_by_name[SPINE].loopback)
    assert cfg["PREFIX"] == {f"HWAAC_CONNECTED_V4|{lo}/32|exact": {"action": "permit"}}


def test_plane_1_leaf_permits_its_own_plane_block():
    plan = two_plane_plan()
    leaf = next(s for s in plan.switches_of("leaf") if s.plane == 1)
    cfg = render_config_db(plan, leaf)
    net, plen = plan.host_aggregate(1)
    assert f"HWAAC_CONNECTED_V4|{ip_str(net)}/{plen}|31..31" in cfg["PREFIX"]
    assert ip_str(net) == "172.16.128.0" and plen == 17
    assert validate_config_db(cfg, plan.intent) == []


def _announced(cfg: dict, net: ipaddress.IPv4Network) -> bool:
    """FRR's verdict on a connected route under the connected route map (a test-side re-implementation)."""
    rmap = cfg["ROUTE_REDISTRIBUTE"]["default|connected|bgp|ipv4"]["route_map"][0]
    stmts = sorted((int(k.split("|")[1]), e) for k, e in cfg["ROUTE_MAP"].items() if k.split("|")[0] == rmap)
    for _seq, stmt in stmts:
        # sequence-less keys (set|prefix|range) are disjoint here, so their order does not matter
        entries = [(*k.split("|")[-2:], e["action"]) for k, e in cfg["PREFIX"].items()
                   if k.split("|")[0] == stmt["match_prefix_set"]]
        for prefix, rng, action in entries:
            p = ipaddress.IPv4Network(prefix)
            lo, hi = (p.prefixlen, p.prefixlen) if rng == "exact" else map(int, rng.split(".."))
            if net.subnet_of(p) and lo <= net.prefixlen <= hi:
                return action == "permit" and stmt["route_operation"] == "permit"
    return False


@pytest.mark.parametrize(("name", "plan_fn"), [(LEAF, demo_plan), (SPINE, demo_plan),
                                                (LEAF, rail_subnet_plan), ("leaf-p0-su02-r3", rail_subnet_plan)])
def test_connected_route_map_announces_host_links_and_never_fabric_links(name, plan_fn):
    plan = plan_fn()
    cfg = render(name, plan)
    sw = plan.switch_by_name[name]
    assert _announced(cfg, ipaddress.IPv4Network(f"{ip_str(sw.loopback)}/32"))
    host = fabric = 0
    for lk in plan.links_by_device[name]:
        net = ipaddress.IPv4Network(f"{ip_str(lk.network)}/{lk.prefixlen}")
        if lk.kind == "host":
            host += 1
            assert _announced(cfg, net), f"host link {net} of {name} not announced"
        else:
            fabric += 1
            assert not _announced(cfg, net), f"fabric link {net} of {name} announced"
    assert fabric and (host or sw.role != "leaf")
    assert not _announced(cfg, ipaddress.IPv4Network("172.16.0.0/16"))  # never the aggregate itself
    assert not _announced(cfg, ipaddress.IPv4Network("0.0.0.0/0"))


def test_spine_peers_with_leaves_only_and_never_with_hosts():
    plan = demo_plan()
    cfg = render(SPINE)
    names = {n["name"] for n in cfg["BGP_NEIGHBOR"].values()}
    assert {plan.switch_by_name[n].role for n in names} == {"leaf"}
    assert all(n["asn"] == str(plan.switch_by_name[n["name"]].asn) for n in cfg["BGP_NEIGHBOR"].values())
    nodes = {n.name for n in plan.nodes}
    leaf_names = {n["name"] for n in render(LEAF)["BGP_NEIGHBOR"].values()}
    assert not leaf_names & nodes


@pytest.mark.parametrize("plan_fn", [demo_plan, rail_subnet_plan, rail_subnet_partial_plan, two_plane_plan])
def test_switch_addresses_equal_the_ip_plan(plan_fn):
    """Every address docs/ip-plan.csv gives a switch is configured on it, and nothing else."""
    plan = plan_fn()
    rows = list(csv.DictReader(io.StringIO(render_ip_plan_csv(plan))))
    for sw in plan.switches:
        cfg = render_config_db(plan, sw)
        configured = {k for t in ("LOOPBACK_INTERFACE", "INTERFACE", "VLAN_INTERFACE") for k in cfg.get(t, {})
                      if "|" in k}
        listed = {f"{r['interface']}|{r['address']}" for r in rows if r["device"] == sw.name}
        assert configured == listed, sw.name


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


def test_lossless_pgs_get_dynamic_headroom_on_every_active_port():
    cfg = render(LEAF)
    active = list(cfg["DEVICE_NEIGHBOR"])
    assert cfg["BUFFER_PG"] == {f"{p}|3": {"profile": "NULL"} for p in active}
    assert "Ethernet256|3" not in cfg["BUFFER_PG"]  # an unused port
    assert not any(k.endswith("|0") for k in cfg["BUFFER_PG"])  # lossy PG 0 is the SKU template's
    assert cfg["DEFAULT_LOSSLESS_BUFFER_PARAMETER"] == {"AZURE": {"default_dynamic_th": "0"}}
    assert cfg["LOSSLESS_TRAFFIC_PATTERN"] == {"AZURE": {"mtu": "1024", "small_packet_percentage": "100"}}
    assert cfg["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic"
    assert set(cfg["CABLE_LENGTH"]["AZURE"]) == set(active)


def test_a_static_lossless_profile_also_satisfies_pfc():
    cfg = copy.deepcopy(render(LEAF))
    cfg["BUFFER_PROFILE"] = {"pg_lossless_static": {"pool": "ingress_lossless_pool", "xon": "19456",
                                                    "xoff": "90112", "size": "109568", "dynamic_th": "0"}}
    cfg["BUFFER_PG"]["Ethernet0|3"]["profile"] = "pg_lossless_static"
    assert validate_config_db(cfg, demo_plan().intent) == []


def test_consecutive_pfc_priorities_share_one_pg_range():
    d = demo_dict()
    d["qos"]["pfc_priorities"] = [3, 4]
    plan = plan_from(d)
    cfg = render(LEAF, plan)
    assert cfg["BUFFER_PG"]["Ethernet0|3-4"] == {"profile": "NULL"}
    assert not any(k.endswith("|3") for k in cfg["BUFFER_PG"])
    assert validate_config_db(cfg, plan.intent) == []
    assert pg_ranges([5, 2, 3]) == ("2-3", "5") and pg_ranges([3]) == ("3",) and pg_ranges([]) == ()


def _leaf_values(model, path=()):
    for name, value in model:
        if isinstance(value, BaseModel):
            yield from _leaf_values(value, (*path, name))
        else:
            yield (*path, name), value


def test_qos_cache_is_keyed_on_the_whole_qos_section():
    """A change to any qos field, nested ones included, is a new cache entry (no stale invariants)."""
    base = QosSection()
    assert qos_invariants(QosSection()) is qos_invariants(base)
    assert "pfc_enable" not in QosInvariants.__dataclass_fields__  # per-port fields come from port_qos
    for path, value in _leaf_values(base):
        if isinstance(value, bool):
            new = not value
        elif isinstance(value, int):
            new = value + 1 if path[-1] != "mark_probability_percent" else value - 1
        elif isinstance(value, list):
            new = [*value, 5] if path[-1] != "pfc_priorities" else [3, 4]
        elif path[-1] == "action":
            new = "forward"
        else:
            raise AssertionError(f"unhandled qos field {path}: {value!r}")
        d = base.model_dump()
        node = d
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = new
        changed = QosSection.model_validate(d)
        assert qos_invariants(changed) is not qos_invariants(base), path


# --- no shared mutable state -------------------------------------------------------------------------------------


def test_rendered_configs_share_no_dicts():
    a = render(LEAF)

    def ids(node, acc):
        if isinstance(node, dict):
            acc.append(id(node))
            for v in node.values():
                ids(v, acc)
        elif isinstance(node, list):
            acc.append(id(node))
        return acc

    ids_a = ids(a, [])
    assert len(ids_a) == len(set(ids_a)), "a dict or list appears twice in one config"
    a["DSCP_TO_TC_MAP"]["ROCE"]["26"] = "1"
    a["PORT"]["Ethernet0"]["mtu"] = "1500"
    a["QUEUE"]["Ethernet0|3"]["scheduler"] = "x"
    a["PORT_QOS_MAP"]["Ethernet4"]["pfc_enable"] = "4"
    a["BGP_NEIGHBOR_AF"]["default|10.1.0.0|ipv4_unicast"]["route_map_in"].append("X")
    b = render(LEAF)
    assert b["DSCP_TO_TC_MAP"]["ROCE"]["26"] == "3"
    assert b["PORT"]["Ethernet0"]["mtu"] == "9100"
    assert b["QUEUE"]["Ethernet0|3"]["scheduler"] == "scheduler.lossless"
    assert b["PORT_QOS_MAP"]["Ethernet4"]["pfc_enable"] == "3"
    assert b["BGP_NEIGHBOR_AF"]["default|10.1.0.2|ipv4_unicast"]["route_map_in"] == ["HWAAC_PERMIT_ALL"]
    assert b["BGP_NEIGHBOR_AF"]["default|10.1.0.0|ipv4_unicast"]["route_map_in"] == ["HWAAC_PERMIT_ALL"]
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


NBR = "default|10.1.0.0"  # the leaf's neighbour spine-p0-01
HOSTS = "HWAAC_CONNECTED_V4|172.16.0.0/16|31..31"  # the leaf's host-link entry


def _rename(table: str, old: str, new: str) -> Callable[[dict], None]:
    def mutate(cfg: dict) -> None:
        cfg[table][new] = cfg[table].pop(old)

    return mutate


def _both(*mutations: Callable[[dict], None]) -> Callable[[dict], None]:
    def mutate(cfg: dict) -> None:
        for m in mutations:
            m(cfg)

    return mutate


def _add_lossy_profile(cfg: dict) -> None:
    cfg["BUFFER_PROFILE"] = {"lossy": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "7"}}
    cfg["BUFFER_PG"]["Ethernet0|3"]["profile"] = "lossy"


MUTATIONS = [
    ("missing lanes", _set("PORT", "Ethernet0", "lanes", None), "$.PORT.Ethernet0: 'lanes' is a required property"),
    ("lanes not a list", _set("PORT", "Ethernet0", "lanes", "0-3"), "$.PORT.Ethernet0.lanes"),
    ("speed 400G", _set("PORT", "Ethernet0", "speed", "400G"), "$.PORT.Ethernet0.speed: '400G' is not a speed"),
    ("speed too high", _set("PORT", "Ethernet0", "speed", "1600001"), "$.PORT.Ethernet0.speed"),
    ("mtu 9300", _set("PORT", "Ethernet0", "mtu", "9300"), "$.PORT.Ethernet0.mtu: '9300' is not an MTU"),
    ("fec", _set("PORT", "Ethernet0", "fec", "fec91"), "$.PORT.Ethernet0.fec"),
    ("admin_status", _set("PORT", "Ethernet0", "admin_status", "UP"), "$.PORT.Ethernet0.admin_status"),
    ("device type", _set("DEVICE_METADATA", "localhost", "type", "Leaf"), "$.DEVICE_METADATA.localhost.type"),
    ("asn 0", _set("BGP_NEIGHBOR", NBR, "asn", "0"), f"$.BGP_NEIGHBOR['{NBR}'].asn: '0' is not an AS number"),
    ("asn too big", _set("BGP_NEIGHBOR", NBR, "asn", "4294967296"), f"$.BGP_NEIGHBOR['{NBR}'].asn"),
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
    ("bgp local_addr not on an interface", _set("BGP_NEIGHBOR", NBR, "local_addr", "10.9.9.9"),
     f"$.BGP_NEIGHBOR['{NBR}'].local_addr: 10.9.9.9 is not an address configured on an INTERFACE"),
    ("bgp neighbour off subnet", _set("BGP_NEIGHBOR", NBR, "local_addr", "10.1.0.3"),
     f"$.BGP_NEIGHBOR['{NBR}']: neighbour 10.1.0.0 is not a peer address"),
    # frrcfgd routing
    ("bgpcfgd neighbour key", _rename("BGP_NEIGHBOR", NBR, "10.1.0.0"),
     "$.BGP_NEIGHBOR: unexpected key(s) '10.1.0.0': expected sonic-bgp-neighbor.yang BGP_NEIGHBOR_LIST (frrcfgd)"),
    ("frrcfgd off", _set("DEVICE_METADATA", "localhost", "frr_mgmt_framework_config", "false"),
     "$.DEVICE_METADATA.localhost.frr_mgmt_framework_config: 'false': frrcfgd"),
    ("routing mode absent", _set("DEVICE_METADATA", "localhost", "docker_routing_config_mode", None),
     "$.DEVICE_METADATA.localhost.docker_routing_config_mode: None: frrcfgd replays"),
    ("admin_status up", _set("BGP_NEIGHBOR", NBR, "admin_status", "up"), f"$.BGP_NEIGHBOR['{NBR}'].admin_status"),
    ("local_asn differs", _set("BGP_GLOBALS", "default", "local_asn", "65000"),
     "$.BGP_GLOBALS.default.local_asn: '65000' differs from DEVICE_METADATA bgp_asn '4200100000'"),
    ("no BGP_GLOBALS", _set("BGP_GLOBALS", None), f"$.BGP_NEIGHBOR['{NBR}']: VRF 'default' has no BGP_GLOBALS"),
    ("max paths 0", _set("BGP_GLOBALS_AF", "default|ipv4_unicast", "max_ebgp_paths", "0"),
     "$.BGP_GLOBALS_AF['default|ipv4_unicast'].max_ebgp_paths"),
    ("af without neighbour", _set("BGP_NEIGHBOR_AF", "default|10.9.0.0|ipv4_unicast", {"admin_status": "true"}),
     "$.BGP_NEIGHBOR_AF['default|10.9.0.0|ipv4_unicast']: neighbour 'default|10.9.0.0' is not defined"),
    ("neighbour never activated", _set("BGP_NEIGHBOR_AF", f"{NBR}|ipv4_unicast", "admin_status", "false"),
     f"$.BGP_NEIGHBOR['{NBR}']: no BGP_NEIGHBOR_AF activates it"),
    ("no inbound policy", _set("BGP_NEIGHBOR_AF", f"{NBR}|ipv4_unicast", "route_map_in", None),
     f"$.BGP_NEIGHBOR_AF['{NBR}|ipv4_unicast']: no route_map_in: FRR's 'bgp ebgp-requires-policy'"),
    ("undefined route map", _set("BGP_NEIGHBOR_AF", f"{NBR}|ipv4_unicast", "route_map_out", ["NOPE"]),
     f"$.BGP_NEIGHBOR_AF['{NBR}|ipv4_unicast'].route_map_out: route map 'NOPE' has no statement in ROUTE_MAP"),
    ("two route maps", _set("BGP_NEIGHBOR_AF", f"{NBR}|ipv4_unicast", "route_map_out", ["A", "B"]),
     f"$.BGP_NEIGHBOR_AF['{NBR}|ipv4_unicast'].route_map_out"),
    ("route map not in set", _set("ROUTE_MAP_SET", "HWAAC_CONNECTED", None),
     "$.ROUTE_MAP_SET: route map 'HWAAC_CONNECTED' (used by $.ROUTE_REDISTRIBUTE"),
    ("undefined prefix set", _set("PREFIX_SET", "HWAAC_CONNECTED_V4", None),
     "$.ROUTE_MAP['HWAAC_CONNECTED|10'].match_prefix_set: 'HWAAC_CONNECTED_V4' is not defined in PREFIX_SET"),
    ("prefix range below its length", _rename("PREFIX", HOSTS, "HWAAC_CONNECTED_V4|172.16.0.0/16|8..31"),
     "$.PREFIX['HWAAC_CONNECTED_V4|172.16.0.0/16|8..31']: length range 8..31 does not fit 172.16.0.0/16"),
    ("prefix without seq number field", _rename("PREFIX", HOSTS, "HWAAC_CONNECTED_V4|x|172.16.0.0/16|31..31"),
     "$.PREFIX: unexpected key(s)"),
    ("duplicate prefix seq", _both(_set("PREFIX", "HWAAC_CONNECTED_V4|20|10.9.0.0/16|exact", {"action": "permit"}),
                                   _set("PREFIX", "HWAAC_CONNECTED_V4|20|10.8.0.0/16|exact", {"action": "permit"})),
     "sequence number 20 is also used by"),
    # what redistribute connected announces
    ("host /31s not announced", _set("PREFIX", HOSTS, None),
     "$.INTERFACE['Ethernet0|172.16.0.0/31']: host-link subnet 172.16.0.0/31 is not announced: route map "
     "'HWAAC_CONNECTED'"),
    ("host range exact", _rename("PREFIX", HOSTS, "HWAAC_CONNECTED_V4|172.16.0.0/16|exact"),
     "$.INTERFACE['Ethernet4|172.16.0.2/31']: host-link subnet 172.16.0.2/31 is not announced"),
    ("host prefix denied", _set("PREFIX", HOSTS, "action", "deny"), "host-link subnet 172.16.0.0/31 is not announced"),
    ("loopback not announced", _set("PREFIX", "HWAAC_CONNECTED_V4|10.0.0.1/32|exact", None),
     "$.LOOPBACK_INTERFACE['Loopback0|10.0.0.1/32']: the Loopback0 address 10.0.0.1/32 is not announced"),
    ("connected map matches all", _set("ROUTE_MAP", "HWAAC_CONNECTED|10", "match_prefix_set", None),
     "$.INTERFACE['Ethernet128|10.1.0.1/31']: fabric link subnet (it carries a BGP session) 10.1.0.0/31 is "
     "announced"),
    ("fabric /31s permitted", _set("PREFIX", "HWAAC_CONNECTED_V4|30|10.1.0.0/20|31..31", {"action": "permit"}),
     "fabric link subnet (it carries a BGP session) 10.1.0.2/31 is announced"),
    ("redistribute without map", _set("ROUTE_REDISTRIBUTE", "default|connected|bgp|ipv4", "route_map", None),
     "10.1.0.0/31 is announced: redistribute connected has no route map"),
    ("no redistribute", _set("ROUTE_REDISTRIBUTE", None),
     "$.ROUTE_REDISTRIBUTE: no 'default|connected|bgp|ipv4' entry: 33 connected subnet(s)"),
    # buffers
    ("lossless PG missing", _set("BUFFER_PG", "Ethernet4|3", None),
     "$.BUFFER_PG['Ethernet4|3']: missing: PFC priority 3 of Ethernet4 (pfc_enable) has no lossless priority group"),
    ("lossless PG on another priority", _rename("BUFFER_PG", "Ethernet4|3", "Ethernet4|4"),
     "$.BUFFER_PG['Ethernet4|3']: missing"),
    ("lossless PG with lossy profile", _add_lossy_profile, "$.BUFFER_PG['Ethernet0|3'].profile: 'lossy' is a lossy "
     "profile (no xoff) on PFC priority 3"),
    ("PG profile undefined", _set("BUFFER_PG", "Ethernet0|0", {"profile": "ingress_lossy_profile"}),
     "$.BUFFER_PG['Ethernet0|0'].profile: 'ingress_lossy_profile' is not defined in BUFFER_PROFILE"),
    ("PG ranges overlap", _set("BUFFER_PG", "Ethernet0|2-3", {"profile": "NULL"}),
     "$.BUFFER_PG['Ethernet0|2-3']: overlaps 'Ethernet0|3'"),
    ("PG number 8", _set("BUFFER_PG", "Ethernet0|8", {"profile": "NULL"}), "$.BUFFER_PG: unexpected key(s)"),
    ("PG on unknown port", _set("BUFFER_PG", "Ethernet999|3", {"profile": "NULL"}),
     "$.BUFFER_PG['Ethernet999|3']: port 'Ethernet999' is not defined in PORT"),
    ("traditional buffer model", _set("DEVICE_METADATA", "localhost", "buffer_model", "traditional"),
     "$.DEVICE_METADATA.localhost.buffer_model: 'traditional': BUFFER_PG profile NULL"),
    ("no default lossless parameter", _set("DEFAULT_LOSSLESS_BUFFER_PARAMETER", None),
     "$.DEFAULT_LOSSLESS_BUFFER_PARAMETER: no entry with default_dynamic_th"),
    ("dynamic_th out of range", _set("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "AZURE", "default_dynamic_th", "8"),
     "$.DEFAULT_LOSSLESS_BUFFER_PARAMETER.AZURE.default_dynamic_th"),
    ("no traffic pattern", _set("LOSSLESS_TRAFFIC_PATTERN", None), "$.LOSSLESS_TRAFFIC_PATTERN: no entry with mtu"),
    ("small packets over 100%", _set("LOSSLESS_TRAFFIC_PATTERN", "AZURE", "small_packet_percentage", "101"),
     "$.LOSSLESS_TRAFFIC_PATTERN.AZURE.small_packet_percentage"),
    ("no cable length", _set("CABLE_LENGTH", "AZURE", "Ethernet0", None),
     "$.BUFFER_PG['Ethernet0|3']: port 'Ethernet0' has no CABLE_LENGTH"),
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
    assert any("$.BUFFER_PG['Ethernet0|4']: missing" in e for e in validate_config_db(cfg))  # no headroom yet
    for key in [k for k in cfg["BUFFER_PG"] if k.endswith("|3")]:
        cfg["BUFFER_PG"][key + "-4"] = cfg["BUFFER_PG"].pop(key)
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
    ("stmt", 1, 65_535, range(0, 70_000)),
    ("max_paths", 1, 256, range(0, 1000)),
    ("lossless_mtu", 1, 9216, range(0, 10_000)),
    ("dynamic_th", -8, 7, range(-20, 20)),
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


def test_rail_subnet_leaf_without_hosts_still_has_its_vlan_and_gateway():
    """A partly populated SU: SU 2's leaves have no host yet, but their gateway is configured (and in ip-plan)."""
    plan = rail_subnet_partial_plan()
    empty = [s for s in plan.switches_of("leaf") if s.su == 2]
    assert empty and not any(lk.kind == "host" for s in empty for lk in plan.links_by_device[s.name])
    for leaf in empty:
        cfg = render_config_db(plan, leaf)
        vlan = f"Vlan{1000 + leaf.rail}"
        _net, plen, gateway = plan.rail_subnet(leaf)
        assert cfg["VLAN"] == {vlan: {"vlanid": vlan[4:], "admin_status": "up", "mtu": "9100"}}
        assert cfg["VLAN_INTERFACE"] == {vlan: {}, f"{vlan}|{ip_str(gateway)}/{plen}": {}}
        assert "VLAN_MEMBER" not in cfg  # members only for cabled ports
        assert validate_config_db(cfg, plan.intent) == [], leaf.name
    leaf = plan.switch_by_name["leaf-p0-su02-r3"]
    net, plen, _gw = plan.rail_subnet(leaf)
    assert render_config_db(plan, leaf)["VLAN_INTERFACE"] == {"Vlan1003": {}, "Vlan1003|172.16.2.193/26": {}}
    assert f"HWAAC_CONNECTED_V4|{ip_str(net)}/{plen}|exact" in render_config_db(plan, leaf)["PREFIX"]
    # SU 1 leaves are cabled: the same gateway as their host links' leaf end
    full = render(LEAF, plan)
    hosts = [lk for lk in plan.links_by_device[LEAF] if lk.kind == "host"]
    assert {f"Vlan1000|{ip_str(lk.b_ip)}/{lk.prefixlen}" for lk in hosts} == {k for k in full["VLAN_INTERFACE"]
                                                                             if "|" in k}
    assert len(full["VLAN_MEMBER"]) == len(hosts) == 32


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


def test_ecmp_width_covers_every_uplink():
    assert render(LEAF)["BGP_GLOBALS_AF"]["default|ipv4_unicast"]["max_ebgp_paths"] == "64"  # 32 uplinks: default
    d = YAML(typ="safe").load((Path(__file__).parents[2] / "inventory" / "demo" / "fabric.yml").read_text())
    d["switches"]["leaf"].update(downlinks=32, uplinks=96, oversubscription=1.0)
    d["switches"]["spine"]["model"] = "SN5600-O128"
    d["addressing"]["leaf_spine"] = "10.2.0.0/17"
    plan = build_plan(Intent.model_validate(d))
    cfg = render_config_db(plan, plan.switch_by_name[LEAF])
    assert len(cfg["BGP_NEIGHBOR"]) == 96
    assert cfg["BGP_GLOBALS_AF"]["default|ipv4_unicast"]["max_ebgp_paths"] == "96"
