"""SONiC config_db renderer and validator: golden files for the demo fabric, ports, addressing and BGP, no
shared state (QoS: test_render_sonic_qos.py; rail_subnet and three tiers: test_render_sonic_tiers.py).

Regenerate the golden files with ``HWAAC_UPDATE_GOLDEN=1 pytest tests/unit/test_render_sonic.py`` and review
the diff before committing it.
"""

from __future__ import annotations

import csv
import io
import ipaddress
import os

import orjson
import pytest

from hwaac.plan.model import ip_str
from hwaac.plan.ports import port_table
from hwaac.render.docs.ipplan import render_ip_plan_csv
from hwaac.render.sonic import render_config_db, validate_config_db
from hwaac.render.sonic.context import switch_model
from tests.unit.sonic_plans import (
    GOLDEN,
    LEAF,
    SPINE,
    announced_networks,
    demo_plan,
    dump,
    rail_subnet_partial_plan,
    rail_subnet_plan,
    render,
    two_plane_plan,
)

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
        "DEVICE_METADATA",
        "PORT",
        "LOOPBACK_INTERFACE",
        "INTERFACE",
        "ROUTE_MAP_SET",
        "ROUTE_MAP",
        "BGP_GLOBALS",
        "BGP_GLOBALS_AF",
        "BGP_GLOBALS_AF_NETWORK",
        "BGP_NEIGHBOR",
        "BGP_NEIGHBOR_AF",
        "DEVICE_NEIGHBOR",
        "DSCP_TO_TC_MAP",
        "TC_TO_QUEUE_MAP",
        "TC_TO_PRIORITY_GROUP_MAP",
        "MAP_PFC_PRIORITY_TO_QUEUE",
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
        "SCHEDULER",
        "WRED_PROFILE",
        "QUEUE",
        "PORT_QOS_MAP",
        "PFC_WD",
        "CABLE_LENGTH",
        "BUFFER_PG",
        "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
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
        "512",
        "etp65",
        "65",
        "25000",
        "down",
    )
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
        assert af == {"admin_status": "up", "route_map_in": ["HWAAC_PERMIT_ALL"], "route_map_out": ["HWAAC_PERMIT_ALL"]}
    assert cfg["ROUTE_MAP"] == {"HWAAC_PERMIT_ALL|10": {"route_operation": "permit"}}
    assert cfg["ROUTE_MAP_SET"] == {"HWAAC_PERMIT_ALL": {}}


@pytest.mark.parametrize("name", [LEAF, SPINE])
def test_bgp_globals_ecmp_and_asn(name):
    sw = demo_plan().switch_by_name[name]
    cfg = render(name)
    assert cfg["BGP_GLOBALS"] == {
        "default": {
            "local_asn": str(sw.asn),
            "router_id": ip_str(sw.loopback),
            "load_balance_mp_relax": "true",
            "log_nbr_state_changes": "true",
        }
    }
    assert cfg["BGP_GLOBALS"]["default"]["local_asn"] == cfg["DEVICE_METADATA"]["localhost"]["bgp_asn"]
    assert cfg["BGP_GLOBALS_AF"] == {"default|ipv4_unicast": {"max_ebgp_paths": "64"}}


def test_leaf_announces_its_loopback_and_each_host_link():
    plan = demo_plan()
    cfg = render(LEAF)
    hosts = [f"{ip_str(lk.network)}/{lk.prefixlen}" for lk in plan.links_by_device[LEAF] if lk.kind == "host"]
    assert announced_networks(cfg) == [
        f"{ip_str(plan.switch_by_name[LEAF].loopback)}/32",
        *sorted(hosts, key=lambda p: ipaddress.IPv4Network(p)),
    ]
    assert hosts[0] == "172.16.0.0/31" and len(hosts) == 32
    for table in ("ROUTE_REDISTRIBUTE", "PREFIX_SET", "PREFIX"):  # no redistribute connected (docs/render-sonic.md)
        assert table not in cfg


def test_spine_announces_its_loopback_only():
    assert announced_networks(render(SPINE)) == [f"{ip_str(demo_plan().switch_by_name[SPINE].loopback)}/32"]


def test_plane_1_leaf_announces_its_host_links_in_its_plane_block():
    plan = two_plane_plan()
    leaf = next(s for s in plan.switches_of("leaf") if s.plane == 1)
    cfg = render_config_db(plan, leaf)
    net, plen = plan.host_aggregate(1)
    block = ipaddress.IPv4Network(f"{ip_str(net)}/{plen}")
    assert str(block) == "172.16.128.0/17"
    hosts = announced_networks(cfg)[1:]
    assert hosts and all(ipaddress.IPv4Network(p).subnet_of(block) and p.endswith("/31") for p in hosts)
    assert validate_config_db(cfg, plan.intent) == []


def _announced(cfg: dict, net: ipaddress.IPv4Network) -> bool:
    """Whether BGP announces ``net``: only network statements announce (no redistribution is configured)."""
    assert "ROUTE_REDISTRIBUTE" not in cfg
    return str(net) in announced_networks(cfg)


@pytest.mark.parametrize(
    ("name", "plan_fn"),
    [(LEAF, demo_plan), (SPINE, demo_plan), (LEAF, rail_subnet_plan), ("leaf-p0-su02-r3", rail_subnet_plan)],
)
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
        configured = {
            k for t in ("LOOPBACK_INTERFACE", "INTERFACE", "VLAN_INTERFACE") for k in cfg.get(t, {}) if "|" in k
        }
        listed = {f"{r['interface']}|{r['address']}" for r in rows if r["device"] == sw.name}
        assert configured == listed, sw.name


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
