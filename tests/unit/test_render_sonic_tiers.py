"""SONiC config_db renderer: rail_subnet host links (a VLAN with the gateway) and three-tier fabrics."""

from __future__ import annotations

import copy
from pathlib import Path

from ruamel.yaml import YAML

from hwaac.model.intent import Intent
from hwaac.plan import build_plan
from hwaac.plan.model import ip_str
from hwaac.render.sonic import render_config_db, validate_config_db
from tests.unit.sonic_plans import (
    LEAF,
    SPINE,
    announced_networks,
    rail_subnet_partial_plan,
    rail_subnet_plan,
    render,
    three_tier_plan,
)

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
    assert announced_networks(render_config_db(plan, leaf)) == [f"{ip_str(leaf.loopback)}/32", f"{ip_str(net)}/{plen}"]
    # SU 1 leaves are cabled: the same gateway as their host links' leaf end
    full = render(LEAF, plan)
    hosts = [lk for lk in plan.links_by_device[LEAF] if lk.kind == "host"]
    assert {f"Vlan1000|{ip_str(lk.b_ip)}/{lk.prefixlen}" for lk in hosts} == {
        k for k in full["VLAN_INTERFACE"] if "|" in k
    }
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
