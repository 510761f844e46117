"""hwaac's config_db validator (hwaac.render.sonic.validate) beyond YANG: mutation tests of its own checks (frrcfgd,
FRR, buffers, QoS) and the ``redistribute connected`` form it still evaluates."""

from __future__ import annotations

import pytest

from hwaac.render.sonic import validate_config_db
from tests.unit.config_db_mutations import AF, NBR, both, leaf, mutated, put, rename
from tests.unit.sonic_plans import demo_plan

# --- hwaac's own checks (frrcfgd, FRR, buffers, QoS): beyond YANG -----------------------------------------------


def _add_lossy_profile(cfg: dict) -> None:
    cfg["BUFFER_PROFILE"] = {"lossy": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "7"}}
    cfg["BUFFER_PG"]["Ethernet0|3"]["profile"] = "lossy"


MUTATIONS = [
    ("missing lanes", put("PORT", "Ethernet0", "lanes", None), "$.PORT.Ethernet0: 'lanes' is a required property"),
    ("speed 400G", put("PORT", "Ethernet0", "speed", "400G"), "$.PORT.Ethernet0.speed: '400G' is not a speed"),
    ("mtu 9300", put("PORT", "Ethernet0", "mtu", "9300"), "$.PORT.Ethernet0.mtu: '9300' is not an MTU 68..9216"),
    ("device type", put("DEVICE_METADATA", "localhost", "type", "Leaf"), "$.DEVICE_METADATA.localhost.type"),
    ("asn 0", put("BGP_NEIGHBOR", NBR, "asn", "0"), f"$.BGP_NEIGHBOR['{NBR}'].asn: '0' is not an AS number"),
    (
        "interface key",
        put("INTERFACE", "Ethernet0|172.16.0.0/33", {}),
        "$.INTERFACE: unexpected key(s) 'Ethernet0|172.16.0.0/33': expected sonic-interface.yang",
    ),
    (
        "unknown field",
        put("PFC_WD", "GLOBAL", "BIG_RED_SWITCH", "enable"),
        "$.PFC_WD.GLOBAL: field(s) 'BIG_RED_SWITCH' not defined in the SONiC YANG model",
    ),
    (
        "undefined scheduler",
        put("QUEUE", "Ethernet0|3", "scheduler", "scheduler.nope"),
        "$.QUEUE['Ethernet0|3'].scheduler: 'scheduler.nope' is not defined in SCHEDULER",
    ),
    ("undefined wred", put("QUEUE", "Ethernet0|3", "wred_profile", "NOPE"), "is not defined in WRED_PROFILE"),
    (
        "undefined map",
        put("PORT_QOS_MAP", "Ethernet0", "tc_to_pg_map", "AZURE"),
        "$.PORT_QOS_MAP.Ethernet0.tc_to_pg_map: 'AZURE' is not defined in TC_TO_PRIORITY_GROUP_MAP",
    ),
    (
        "pfc_enable 3,4",
        put("PORT_QOS_MAP", "Ethernet0", "pfc_enable", "3,4"),
        "$.PORT_QOS_MAP.Ethernet0.pfc_enable: '3,4' but the lossless classes are '3'",
    ),
    (
        "pfcwd on a lossy priority",
        put("PORT_QOS_MAP", "Ethernet0", "pfcwd_sw_enable", "3,4"),
        "$.PORT_QOS_MAP.Ethernet0.pfcwd_sw_enable",
    ),
    (
        "detection < poll",
        put("PFC_WD", "Ethernet0", "detection_time", "150"),
        "$.PFC_WD.Ethernet0.detection_time: 150 ms is below GLOBAL POLL_INTERVAL 200 ms",
    ),
    (
        "restoration < poll",
        put("PFC_WD", "Ethernet4", "restoration_time", "100"),
        "$.PFC_WD.Ethernet4.restoration_time: 100 ms is below",
    ),
    (
        "wred max < min",
        put("WRED_PROFILE", "ROCE_LOSSLESS", "green_max_threshold", "1000"),
        "$.WRED_PROFILE.ROCE_LOSSLESS.green_max_threshold: 1000 is below green_min_threshold 150000",
    ),
    (
        "wred max without min",
        put("WRED_PROFILE", "ROCE_LOSSLESS", "green_min_threshold", None),
        "$.WRED_PROFILE.ROCE_LOSSLESS.green_max_threshold: given without green_min_threshold",
    ),
    (
        "queue on unknown port",
        put("QUEUE", "Ethernet999|3", {"scheduler": "scheduler.lossless"}),
        "$.QUEUE['Ethernet999|3']: port 'Ethernet999' is not defined in PORT",
    ),
    (
        "bgp local_addr not on an interface",
        put("BGP_NEIGHBOR", NBR, "local_addr", "10.9.9.9"),
        f"$.BGP_NEIGHBOR['{NBR}'].local_addr: 10.9.9.9 is not an address configured on an INTERFACE",
    ),
    (
        "bgp neighbour off subnet",
        put("BGP_NEIGHBOR", NBR, "local_addr", "10.1.0.3"),
        f"$.BGP_NEIGHBOR['{NBR}']: neighbour 10.1.0.0 is not a peer address",
    ),
    ("vlanid", put("VLAN", "Vlan100", {"vlanid": "101"}), "$.VLAN.Vlan100.vlanid: '101' is not the number in"),
    (
        "frrcfgd off",
        put("DEVICE_METADATA", "localhost", "frr_mgmt_framework_config", "false"),
        "$.DEVICE_METADATA.localhost.frr_mgmt_framework_config: 'false': frrcfgd",
    ),
    (
        "routing mode absent",
        put("DEVICE_METADATA", "localhost", "docker_routing_config_mode", None),
        "$.DEVICE_METADATA.localhost.docker_routing_config_mode: None: frrcfgd replays",
    ),
    (
        "admin_status true",
        put("BGP_NEIGHBOR", NBR, "admin_status", "true"),
        f"$.BGP_NEIGHBOR['{NBR}'].admin_status: 'true' is not \"up\" or \"down\"",
    ),
    (
        "local_asn differs",
        put("BGP_GLOBALS", "default", "local_asn", "65000"),
        "$.BGP_GLOBALS.default.local_asn: '65000' differs from DEVICE_METADATA bgp_asn '4200100000'",
    ),
    ("no BGP_GLOBALS", put("BGP_GLOBALS", None), f"$.BGP_NEIGHBOR['{NBR}']: VRF 'default' has no BGP_GLOBALS"),
    (
        "af without neighbour",
        put("BGP_NEIGHBOR_AF", "default|10.9.0.0|ipv4_unicast", {"admin_status": "up"}),
        "$.BGP_NEIGHBOR_AF['default|10.9.0.0|ipv4_unicast']: neighbour 'default|10.9.0.0' is not defined",
    ),
    (
        "neighbour never activated",
        put("BGP_NEIGHBOR_AF", AF, "admin_status", "down"),
        f"$.BGP_NEIGHBOR['{NBR}']: no BGP_NEIGHBOR_AF activates it",
    ),
    (
        "no inbound policy",
        put("BGP_NEIGHBOR_AF", AF, "route_map_in", None),
        f"$.BGP_NEIGHBOR_AF['{AF}']: no route_map_in: FRR's 'bgp ebgp-requires-policy'",
    ),
    (
        "undefined route map",
        put("BGP_NEIGHBOR_AF", AF, "route_map_out", ["NOPE"]),
        f"$.BGP_NEIGHBOR_AF['{AF}'].route_map_out: route map 'NOPE' has no statement in ROUTE_MAP",
    ),
    (
        "route map not in set",
        put("ROUTE_MAP_SET", "HWAAC_PERMIT_ALL", None),
        "$.ROUTE_MAP_SET: route map 'HWAAC_PERMIT_ALL' (used by $.BGP_NEIGHBOR_AF",
    ),
    # what the network statements announce
    (
        "host /31 not announced",
        put("BGP_GLOBALS_AF_NETWORK", "default|ipv4_unicast|172.16.0.0/31", None),
        "$.INTERFACE['Ethernet0|172.16.0.0/31']: host-link subnet 172.16.0.0/31 is not announced: no network "
        "statement 'default|ipv4_unicast|172.16.0.0/31' and no redistribute connected",
    ),
    (
        "loopback not announced",
        put("BGP_GLOBALS_AF_NETWORK", "default|ipv4_unicast|10.0.0.1/32", None),
        "$.LOOPBACK_INTERFACE['Loopback0|10.0.0.1/32']: the Loopback0 address 10.0.0.1/32 is not announced",
    ),
    (
        "fabric /31 announced",
        put("BGP_GLOBALS_AF_NETWORK", "default|ipv4_unicast|10.1.0.0/31", {}),
        "$.INTERFACE['Ethernet128|10.1.0.1/31']: fabric link subnet (it carries a BGP session) 10.1.0.0/31 is "
        "announced by the network statement",
    ),
    (
        "nothing announced",
        put("BGP_GLOBALS_AF_NETWORK", None),
        "$.BGP_GLOBALS_AF_NETWORK: nothing announces the 33 connected subnet(s)",
    ),
    # buffers
    (
        "lossless PG missing",
        put("BUFFER_PG", "Ethernet4|3", None),
        "$.BUFFER_PG['Ethernet4|3']: missing: PFC priority 3 of Ethernet4 (pfc_enable) has no lossless priority group",
    ),
    (
        "lossless PG on another priority",
        rename("BUFFER_PG", "Ethernet4|3", "Ethernet4|4"),
        "$.BUFFER_PG['Ethernet4|3']: missing",
    ),
    (
        "lossless PG with lossy profile",
        _add_lossy_profile,
        "$.BUFFER_PG['Ethernet0|3'].profile: 'lossy' is a lossy profile (no xoff) on PFC priority 3",
    ),
    (
        "PG profile undefined",
        put("BUFFER_PG", "Ethernet0|0", {"profile": "ingress_lossy_profile"}),
        "$.BUFFER_PG['Ethernet0|0'].profile: 'ingress_lossy_profile' is not defined in BUFFER_PROFILE",
    ),
    (
        "PG ranges overlap",
        put("BUFFER_PG", "Ethernet0|2-3", {"profile": "NULL"}),
        "$.BUFFER_PG['Ethernet0|2-3']: overlaps 'Ethernet0|3'",
    ),
    ("PG number 8", put("BUFFER_PG", "Ethernet0|8", {"profile": "NULL"}), "$.BUFFER_PG: unexpected key(s)"),
    (
        "PG on unknown port",
        put("BUFFER_PG", "Ethernet999|3", {"profile": "NULL"}),
        "$.BUFFER_PG['Ethernet999|3']: port 'Ethernet999' is not defined in PORT",
    ),
    (
        "traditional buffer model",
        put("DEVICE_METADATA", "localhost", "buffer_model", "traditional"),
        "$.DEVICE_METADATA.localhost.buffer_model: 'traditional': BUFFER_PG profile NULL",
    ),
    (
        "no default lossless parameter",
        put("DEFAULT_LOSSLESS_BUFFER_PARAMETER", None),
        "$.DEFAULT_LOSSLESS_BUFFER_PARAMETER: no entry with default_dynamic_th",
    ),
    (
        "dynamic_th out of range",
        put("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "AZURE", "default_dynamic_th", "8"),
        "$.DEFAULT_LOSSLESS_BUFFER_PARAMETER.AZURE.default_dynamic_th: '8' is not a buffer dynamic threshold -8..7",
    ),
    ("no traffic pattern", put("LOSSLESS_TRAFFIC_PATTERN", None), "$.LOSSLESS_TRAFFIC_PATTERN: no entry with mtu"),
    (
        "no cable length",
        put("CABLE_LENGTH", "AZURE", "Ethernet0", None),
        "$.BUFFER_PG['Ethernet0|3']: port 'Ethernet0' has no CABLE_LENGTH",
    ),
    ("address without interface key", put("INTERFACE", "Ethernet128", None), "address without the interface key"),
    # against the intent's QoS
    (
        "dscp 26 to lossy",
        put("DSCP_TO_TC_MAP", "ROCE", "26", "1"),
        "$.DSCP_TO_TC_MAP.ROCE['26']: DSCP 26 maps to TC '1', the intent's qos wants 3",
    ),
    ("active port without qos", put("PORT_QOS_MAP", "Ethernet4", None), "$.PORT_QOS_MAP: active port 'Ethernet4'"),
]


@pytest.mark.parametrize(("what", "mutate", "expected"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_validator_rejects_mutated_config(what, mutate, expected):
    errors = validate_config_db(mutated(mutate), demo_plan().intent)
    assert any(expected in e for e in errors), f"{what}: {expected!r} not in {errors}"


def _as_redistribute(cfg: dict) -> None:
    """The leaf's announcements as ``redistribute connected`` through a prefix-list route map (the form older hwaac
    rendered; still a valid config the validator evaluates)."""
    del cfg["BGP_GLOBALS_AF_NETWORK"]
    cfg["PREFIX_SET"] = {"CONN_V4": {"mode": "IPv4"}}
    cfg["PREFIX"] = {
        "CONN_V4|10.0.0.1/32|exact": {"action": "permit"},
        "CONN_V4|172.16.0.0/16|31..31": {"action": "permit"},
    }
    cfg["ROUTE_MAP_SET"]["CONN"] = {}
    cfg["ROUTE_MAP"]["CONN|10"] = {"route_operation": "permit", "match_prefix_set": "CONN_V4"}
    cfg["ROUTE_REDISTRIBUTE"] = {"default|connected|bgp|ipv4": {"route_map": ["CONN"]}}


HOSTS = "CONN_V4|172.16.0.0/16|31..31"
REDISTRIBUTE_MUTATIONS = [
    (
        "host /31s not announced",
        put("PREFIX", HOSTS, None),
        "$.INTERFACE['Ethernet0|172.16.0.0/31']: host-link subnet 172.16.0.0/31 is not announced: no network "
        "statement 'default|ipv4_unicast|172.16.0.0/31' and route map 'CONN' of redistribute connected denies it",
    ),
    (
        "host range exact",
        rename("PREFIX", HOSTS, "CONN_V4|172.16.0.0/16|exact"),
        "$.INTERFACE['Ethernet4|172.16.0.2/31']: host-link subnet 172.16.0.2/31 is not announced",
    ),
    ("host prefix denied", put("PREFIX", HOSTS, "action", "deny"), "host-link subnet 172.16.0.0/31 is not announced"),
    (
        "loopback not announced",
        put("PREFIX", "CONN_V4|10.0.0.1/32|exact", None),
        "$.LOOPBACK_INTERFACE['Loopback0|10.0.0.1/32']: the Loopback0 address 10.0.0.1/32 is not announced",
    ),
    (
        "connected map matches all",
        put("ROUTE_MAP", "CONN|10", "match_prefix_set", None),
        "$.INTERFACE['Ethernet128|10.1.0.1/31']: fabric link subnet (it carries a BGP session) 10.1.0.0/31 is "
        "announced by route map 'CONN' of redistribute connected",
    ),
    (
        "fabric /31s permitted",
        put("PREFIX", "CONN_V4|30|10.1.0.0/20|31..31", {"action": "permit"}),
        "fabric link subnet (it carries a BGP session) 10.1.0.2/31 is announced",
    ),
    (
        "redistribute without map",
        put("ROUTE_REDISTRIBUTE", "default|connected|bgp|ipv4", "route_map", None),
        "10.1.0.0/31 is announced by redistribute connected, which has no route map",
    ),
    (
        "route map not in set",
        put("ROUTE_MAP_SET", "CONN", None),
        "$.ROUTE_MAP_SET: route map 'CONN' (used by $.ROUTE_REDISTRIBUTE",
    ),
    (
        "undefined prefix set",
        put("PREFIX_SET", "CONN_V4", None),
        "$.ROUTE_MAP['CONN|10'].match_prefix_set: 'CONN_V4' is not defined in PREFIX_SET",
    ),
    (
        "prefix range below its length",
        rename("PREFIX", HOSTS, "CONN_V4|172.16.0.0/16|8..31"),
        "$.PREFIX['CONN_V4|172.16.0.0/16|8..31']: length range 8..31 does not fit 172.16.0.0/16",
    ),
    (
        "prefix with a bad seq number",
        rename("PREFIX", HOSTS, "CONN_V4|x|172.16.0.0/16|31..31"),
        "$.PREFIX: unexpected key(s)",
    ),
    (
        "duplicate prefix seq",
        both(
            put("PREFIX", "CONN_V4|20|10.9.0.0/16|exact", {"action": "permit"}),
            put("PREFIX", "CONN_V4|20|10.8.0.0/16|exact", {"action": "permit"}),
        ),
        "sequence number 20 is also used by",
    ),
]


def test_redistribute_variant_is_valid():
    assert validate_config_db(mutated(_as_redistribute), demo_plan().intent) == []


@pytest.mark.parametrize(
    ("what", "mutate", "expected"), REDISTRIBUTE_MUTATIONS, ids=[m[0] for m in REDISTRIBUTE_MUTATIONS]
)
def test_validator_evaluates_redistribute_connected(what, mutate, expected):
    errors = validate_config_db(mutated(both(_as_redistribute, mutate)), demo_plan().intent)
    assert any(expected in e for e in errors), f"{what}: {expected!r} not in {errors}"


def test_pfc_enable_checked_without_intent_from_the_maps():
    cfg = leaf()
    cfg["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "3,4"
    errors = validate_config_db(cfg)
    assert any(
        e.startswith("$.PORT_QOS_MAP.Ethernet0.pfc_enable: '3,4' but the lossless classes are '3'") for e in errors
    ), errors
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
