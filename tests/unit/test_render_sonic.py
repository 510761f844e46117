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
        "DEVICE_METADATA", "PORT", "LOOPBACK_INTERFACE", "INTERFACE", "ROUTE_MAP_SET", "ROUTE_MAP", "BGP_GLOBALS",
        "BGP_GLOBALS_AF", "BGP_GLOBALS_AF_NETWORK", "BGP_NEIGHBOR", "BGP_NEIGHBOR_AF",
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
    assert leaf["frr_mgmt_framework_config"] == "true"  # frrcfgd: BGP_GLOBALS, network statements, route maps
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
        assert (n["admin_status"], n["keepalive"], n["holdtime"]) == ("up", "3", "10")
    link_peers = {f"default|{ip_str(lk.b_ip)}" for lk in plan.links_by_device[LEAF] if lk.kind == "leaf_spine"}
    assert set(cfg["BGP_NEIGHBOR"]) == link_peers


@pytest.mark.parametrize("name", [LEAF, SPINE])
def test_every_neighbour_is_activated_with_in_and_out_policy(name):
    """frrcfgd sets 'no bgp default ipv4-unicast' and FRR requires an eBGP policy: each neighbour needs its AF."""
    cfg = render(name)
    assert set(cfg["BGP_NEIGHBOR_AF"]) == {f"{k}|ipv4_unicast" for k in cfg["BGP_NEIGHBOR"]}
    for af in cfg["BGP_NEIGHBOR_AF"].values():
        assert af == {"admin_status": "up", "route_map_in": ["HWAAC_PERMIT_ALL"],
                      "route_map_out": ["HWAAC_PERMIT_ALL"]}
    assert cfg["ROUTE_MAP"] == {"HWAAC_PERMIT_ALL|10": {"route_operation": "permit"}}
    assert cfg["ROUTE_MAP_SET"] == {"HWAAC_PERMIT_ALL": {}}


@pytest.mark.parametrize("name", [LEAF, SPINE])
def test_bgp_globals_ecmp_and_asn(name):
    sw = demo_plan().switch_by_name[name]
    cfg = render(name)
    assert cfg["BGP_GLOBALS"] == {"default": {"local_asn": str(sw.asn), "router_id": ip_str(sw.loopback),
                                              "load_balance_mp_relax": "true", "log_nbr_state_changes": "true"}}
    assert cfg["BGP_GLOBALS"]["default"]["local_asn"] == cfg["DEVICE_METADATA"]["localhost"]["bgp_asn"]
    assert cfg["BGP_GLOBALS_AF"] == {"default|ipv4_unicast": {"max_ebgp_paths": "64"}}


def _networks(cfg: dict) -> list[str]:
    """The prefixes of the network statements, in table order (BGP_GLOBALS_AF_NETWORK default|ipv4_unicast|P)."""
    assert all(k.startswith("default|ipv4_unicast|") and v == {} for k, v in cfg["BGP_GLOBALS_AF_NETWORK"].items())
    return [k.split("|")[2] for k in cfg["BGP_GLOBALS_AF_NETWORK"]]


def test_leaf_announces_its_loopback_and_each_host_link():
    plan = demo_plan()
    cfg = render(LEAF)
    hosts = [f"{ip_str(lk.network)}/{lk.prefixlen}" for lk in plan.links_by_device[LEAF] if lk.kind == "host"]
    assert _networks(cfg) == [f"{ip_str(plan.switch_by_name[LEAF].loopback)}/32", *sorted(
        hosts, key=lambda p: ipaddress.IPv4Network(p))]
    assert hosts[0] == "172.16.0.0/31" and len(hosts) == 32
    for table in ("ROUTE_REDISTRIBUTE", "PREFIX_SET", "PREFIX"):  # no redistribute connected (docs/render-sonic.md)
        assert table not in cfg


def test_spine_announces_its_loopback_only():
    assert _networks(render(SPINE)) == [f"{ip_str(demo_plan().switch_by_name[SPINE].loopback)}/32"]


def test_plane_1_leaf_announces_its_host_links_in_its_plane_block():
    plan = two_plane_plan()
    leaf = next(s for s in plan.switches_of("leaf") if s.plane == 1)
    cfg = render_config_db(plan, leaf)
    net, plen = plan.host_aggregate(1)
    block = ipaddress.IPv4Network(f"{ip_str(net)}/{plen}")
    assert str(block) == "172.16.128.0/17"
    hosts = _networks(cfg)[1:]
    assert hosts and all(ipaddress.IPv4Network(p).subnet_of(block) and p.endswith("/31") for p in hosts)
    assert validate_config_db(cfg, plan.intent) == []


def _announced(cfg: dict, net: ipaddress.IPv4Network) -> bool:
    """Whether BGP announces ``net``: only network statements announce (no redistribution is configured)."""
    assert "ROUTE_REDISTRIBUTE" not in cfg
    return str(net) in _networks(cfg)


@pytest.mark.parametrize(("name", "plan_fn"), [(LEAF, demo_plan), (SPINE, demo_plan),
                                                (LEAF, rail_subnet_plan), ("leaf-p0-su02-r3", rail_subnet_plan)])
def test_announces_host_links_and_never_fabric_links(name, plan_fn):
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
    assert _networks(render_config_db(plan, leaf)) == [f"{ip_str(leaf.loopback)}/32", f"{ip_str(net)}/{plen}"]
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
