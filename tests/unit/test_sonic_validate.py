"""hwaac's config_db validator (hwaac.render.sonic.validate): mutation tests, the release's admin_status values,
and agreement with SONiC's own YANG validator (``sonic-yang-validate`` from the SONiC toolkit) case by case."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from hwaac.plan import build_plan
from hwaac.plan.model import Plan
from hwaac.render.sonic import render_config_db, validate_config_db
from hwaac.render.sonic import yang_fields as yf
from hwaac.render.sonic.validate import config_db_schema
from hwaac.sonic_toolkit import Toolkit, yang_validate
from hwaac.validate import load_intent

ROOT = Path(__file__).resolve().parents[2]
LEAF = "leaf-p0-su01-r0"
NBR = "default|10.1.0.0"  # the leaf's neighbour spine-p0-01
AF = f"{NBR}|ipv4_unicast"


@cache
def demo_plan() -> Plan:
    return build_plan(load_intent(ROOT / "inventory" / "demo"))


@cache
def _leaf_text() -> str:
    plan = demo_plan()
    return json.dumps(render_config_db(plan, plan.switch_by_name[LEAF]))


def leaf() -> dict:
    return json.loads(_leaf_text())


Mutation = Callable[[dict], None]


def _set(*path_and_value) -> Mutation:
    *keys, last, value = path_and_value

    def mutate(cfg: dict) -> None:
        node = cfg
        for k in keys:
            node = node.setdefault(k, {})
        if value is None:
            del node[last]
        else:
            node[last] = value

    return mutate


def _rename(table: str, old: str, new: str) -> Mutation:
    def mutate(cfg: dict) -> None:
        cfg[table][new] = cfg[table].pop(old)

    return mutate


def _both(*mutations: Mutation) -> Mutation:
    def mutate(cfg: dict) -> None:
        for m in mutations:
            m(cfg)

    return mutate


def test_validator_accepts_every_demo_switch():
    plan = demo_plan()
    for sw in plan.switches:
        cfg = render_config_db(plan, sw)
        assert validate_config_db(cfg, plan.intent) == [], sw.name
        assert validate_config_db(cfg) == [], sw.name


# --- agreement with SONiC's YANG models ---------------------------------------------------------------------------
# (name, mutation of the demo leaf, whether SONiC's YANG accepts the result). Every case is one of the constraints
# the validator takes from YANG: an enumeration, a range (as sonic_yang reads it: int(value, 10)), a pattern or
# length, a leafref, a must condition, a field YANG does not define. Checked against sonic-yang-validate below.

HOST_VLAN = {"Vlan100": {"vlanid": "100"}}
YANG_CASES: list[tuple[str, Mutation, bool]] = [
    ("as rendered", lambda cfg: None, True),
    # ranges, read as sonic_yang reads them
    ("mtu 9300", _set("PORT", "Ethernet0", "mtu", "9300"), False),
    ("mtu not a number", _set("PORT", "Ethernet0", "mtu", "jumbo"), False),
    ("mtu with a leading zero", _set("PORT", "Ethernet0", "mtu", "09100"), True),
    ("mtu with a space", _set("PORT", "Ethernet0", "mtu", " 9100"), True),
    ("speed 0", _set("PORT", "Ethernet0", "speed", "0"), False),
    ("deployment_id above 65535", _set("DEVICE_METADATA", "localhost", "deployment_id", "70000"), True),
    ("neighbour asn 0", _set("BGP_NEIGHBOR", NBR, "asn", "0"), False),
    ("neighbour asn above 32 bits", _set("BGP_NEIGHBOR", NBR, "asn", "4294967296"), False),
    ("max paths 257", _set("BGP_GLOBALS_AF", "default|ipv4_unicast", "max_ebgp_paths", "257"), False),
    ("poll interval 50", _set("PFC_WD", "GLOBAL", "POLL_INTERVAL", "50"), False),
    ("dynamic_th 8", _set("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "AZURE", "default_dynamic_th", "8"), False),
    ("dynamic_th +1", _set("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "AZURE", "default_dynamic_th", "+1"), True),
    ("small packets 101%", _set("LOSSLESS_TRAFFIC_PATTERN", "AZURE", "small_packet_percentage", "101"), False),
    ("scheduler weight 0", _set("SCHEDULER", "scheduler.lossy", "weight", "0"), False),
    ("dscp to tc 15", _set("DSCP_TO_TC_MAP", "ROCE", "1", "15"), True),
    ("dscp to tc 16", _set("DSCP_TO_TC_MAP", "ROCE", "1", "16"), False),
    ("tc 16 to a queue", _set("TC_TO_QUEUE_MAP", "ROCE", "16", "1"), False),
    ("tc to queue 8", _set("TC_TO_QUEUE_MAP", "ROCE", "1", "8"), True),
    # enumerations and patterns
    ("bgp admin_status true", _set("BGP_NEIGHBOR", NBR, "admin_status", "true"), False),
    ("af admin_status true", _set("BGP_NEIGHBOR_AF", AF, "admin_status", "true"), False),
    ("port admin_status UP", _set("PORT", "Ethernet0", "admin_status", "UP"), False),
    ("fec fec91", _set("PORT", "Ethernet0", "fec", "fec91"), False),
    ("lanes any text", _set("PORT", "Ethernet0", "lanes", "abc"), True),
    ("boolean True", _set("BGP_GLOBALS", "default", "load_balance_mp_relax", "True"), False),
    ("boolean yes", _set("DEVICE_METADATA", "localhost", "frr_mgmt_framework_config", "yes"), False),
    ("device type SonicDpu", _set("DEVICE_METADATA", "localhost", "type", "SonicDpu"), False),
    ("device type MgmtLeafRouter", _set("DEVICE_METADATA", "localhost", "type", "MgmtLeafRouter"), True),
    ("hostname of 64 characters", _set("DEVICE_METADATA", "localhost", "hostname", "h" * 64), False),
    ("hostname with a space", _set("DEVICE_METADATA", "localhost", "hostname", "leaf 1"), True),
    ("mac too short", _set("DEVICE_METADATA", "localhost", "mac", "00:11:22"), False),
    ("cable length without m", _set("CABLE_LENGTH", "AZURE", "Ethernet0", "40"), False),
    ("dscp 64", _set("DSCP_TO_TC_MAP", "ROCE", "64", "0"), False),
    ("priority group 8", _set("BUFFER_PG", "Ethernet0|8", {"profile": "NULL"}), False),
    ("network prefix /33", _set("BGP_GLOBALS_AF_NETWORK", "default|ipv4_unicast|10.9.0.0/33", {}), False),
    ("vlan 1", _set("VLAN", "Vlan1", {"vlanid": "1"}), False),
    ("match_protocol any text", _set("ROUTE_MAP", "HWAAC_PERMIT_ALL|10", "match_protocol", "anything"), True),
    ("two route maps out", _set("BGP_NEIGHBOR_AF", AF, "route_map_out", ["HWAAC_PERMIT_ALL", "X"]), False),
    # fields
    ("field YANG does not define", _set("PFC_WD", "GLOBAL", "BIG_RED_SWITCH", "enable"), False),
    ("queue buffer_profile", _set("QUEUE", "Ethernet0|3", "buffer_profile", "x"), False),
    ("YANG field hwaac does not write", _set("PORT", "Ethernet0", "dhcp_rate_limit", "300"), True),
    ("bgpcfgd-shaped neighbour", _set("BGP_NEIGHBOR", "10.9.9.9", {"asn": "65000"}), True),
    # leafrefs
    ("undefined scheduler", _set("QUEUE", "Ethernet0|3", "scheduler", "NO_SUCH"), False),
    ("CPU queue", _set("QUEUE", "CPU|0", {"scheduler": "scheduler.lossy"}), True),
    ("undefined tc_to_pg map", _set("PORT_QOS_MAP", "Ethernet0", "tc_to_pg_map", "NO_SUCH"), False),
    ("port list as qos key", _rename("PORT_QOS_MAP", "Ethernet0", "Ethernet0,Ethernet4"), False),
    (
        "interface on an unknown port",
        _both(_set("INTERFACE", "Ethernet999", {}), _set("INTERFACE", "Ethernet999|10.9.9.9/31", {})),
        False,
    ),
    ("undefined buffer profile", _set("BUFFER_PG", "Ethernet0|3", "profile", "NO_SUCH"), False),
    ("undefined route map", _set("BGP_NEIGHBOR_AF", AF, "route_map_out", ["NO_SUCH"]), False),
    ("undefined peer group", _set("BGP_NEIGHBOR", NBR, "peer_group_name", "NO_SUCH"), False),
    ("undefined called route map", _set("ROUTE_MAP", "HWAAC_PERMIT_ALL|10", "call_route_map", "NO_SUCH"), False),
    (
        "undefined network policy",
        _set("BGP_GLOBALS_AF_NETWORK", "default|ipv4_unicast|10.0.0.1/32", "policy", "NO_SUCH"),
        False,
    ),
    ("VRF without VRF entry", _set("BGP_GLOBALS", "Vrf1", {"local_asn": "65000"}), False),
    ("neighbour names a loopback", _set("BGP_NEIGHBOR", NBR, "local_addr", "Loopback0"), True),
    ("neighbour names an unknown port", _set("BGP_NEIGHBOR", NBR, "local_addr", "Ethernet999"), False),
    ("device neighbour keyed by a name", _rename("DEVICE_NEIGHBOR", "Ethernet0", "spine-uplink"), True),
    # must conditions
    ("detection below poll interval", _set("PFC_WD", "Ethernet0", "detection_time", "150"), False),
    ("wred max below min", _set("WRED_PROFILE", "ROCE_LOSSLESS", "green_max_threshold", "1000"), False),
    ("wred max without min", _set("WRED_PROFILE", "ROCE_LOSSLESS", "green_min_threshold", None), False),
    ("vlanid other than its name", _set("VLAN", "Vlan100", {"vlanid": "101"}), False),
    (
        "routed port as vlan member",
        _both(
            _set("VLAN", "Vlan100", {"vlanid": "100"}),
            _set("VLAN_MEMBER", "Vlan100|Ethernet0", {"tagging_mode": "untagged"}),
        ),
        False,
    ),
    (
        "untagged in two vlans",
        _both(
            _set("VLAN", "Vlan100", {"vlanid": "100"}),
            _set("VLAN", "Vlan200", {"vlanid": "200"}),
            _set("VLAN_MEMBER", "Vlan100|Ethernet504", {"tagging_mode": "untagged"}),
            _set("VLAN_MEMBER", "Vlan200|Ethernet504", {"tagging_mode": "untagged"}),
        ),
        False,
    ),
    ("address without its interface key", _set("INTERFACE", "Ethernet128", None), False),
]
YANG_IDS = [c[0] for c in YANG_CASES]


def _mutated(mutate: Mutation) -> dict:
    cfg = leaf()
    mutate(cfg)
    return cfg


@pytest.mark.parametrize(("what", "mutate", "yang_valid"), YANG_CASES, ids=YANG_IDS)
def test_validator_verdict_on_yang_cases(what: str, mutate: Mutation, yang_valid: bool):
    errors = validate_config_db(_mutated(mutate))
    assert (errors == []) == yang_valid, f"{what}: {'valid' if yang_valid else 'invalid'} in YANG; ours: {errors}"


def test_sonic_yang_agrees_on_every_case(sonic_toolkit: Toolkit, tmp_path: Path):
    """SONiC's own verdict on each case equals the table's (and so the validator's, test above)."""
    files = []
    for i, (_what, mutate, _valid) in enumerate(YANG_CASES):
        path = tmp_path / f"case{i:02d}.json"
        path.write_text(json.dumps(_mutated(mutate)))
        files.append(path)
    results = yang_validate(files, toolkit=sonic_toolkit)
    wrong = [
        (what, valid, [str(e) for e in r.errors][:3])
        for (what, _m, valid), r in zip(YANG_CASES, results, strict=True)
        if r.valid != valid
    ]
    assert not wrong, f"SONiC's YANG disagrees with the table: {wrong}"


def test_modelled_fields_are_fields_yang_defines():
    """Every field the schema constrains is one YANG defines for the table (no field YANG would refuse)."""
    fields = yf.load()
    schema = json.loads((ROOT / "src/hwaac/render/sonic/config_db.schema.json").read_text())
    stack, wrong = [schema], []
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            name = node.get("x-yang-table")
            if name:
                wrong += [f"{name}.{f}" for f in node.get("properties", {}) if f not in fields[name]]
            stack += list(node.values())
        elif isinstance(node, list):
            stack += node
    assert not wrong


def test_yang_fields_file_is_generated_from_the_toolkit(sonic_toolkit: Toolkit):
    import subprocess

    proc = subprocess.run(
        [sonic_toolkit.env["SONIC_KIT_PYTHON"], yf.__file__],
        env=dict(sonic_toolkit.env),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    committed = (Path(yf.__file__).parent / yf.FILE).read_text()
    assert proc.stdout == committed, "regenerate src/hwaac/render/sonic/yang_fields.json (yang_fields.py docstring)"


def test_yang_int_reads_integers_as_sonic_yang_does():
    schema = config_db_schema()
    assert schema["$defs"]["port_mtu"]["yangInt"] == [68, 9216]
    for value, ok in (
        ("68", True),
        ("9216", True),
        ("67", False),
        ("9217", False),
        ("0x10", False),
        ("09216", True),
        ("", False),
        ("9.1", False),
    ):
        cfg = _mutated(_set("PORT", "Ethernet0", "mtu", value))
        assert (validate_config_db(cfg) == []) == ok, value


# --- the release decides which admin_status activates -------------------------------------------------------------


@pytest.mark.parametrize(
    ("release", "value", "activates"),
    [
        ("202505", "up", True),
        ("202511", "up", True),
        ("202411", "up", False),
        ("202305", "up", False),
        ("202411", "true", True),
        ("202505", "true", True),
    ],
)
def test_activation_follows_the_release(release: str, value: str, activates: bool):
    cfg = leaf()
    for af in cfg["BGP_NEIGHBOR_AF"].values():
        af["admin_status"] = value
    errors = [e for e in validate_config_db(cfg, release=release) if "no BGP_NEIGHBOR_AF activates it" in e]
    assert bool(errors) != activates, errors[:1]
    if errors:
        assert f"frrcfgd of SONiC {release} activates with admin_status 'true'" in errors[0]


def test_release_comes_from_the_intent_for_the_switch_role():
    plan = demo_plan()
    d = plan.intent.model_dump()
    d["switches"]["leaf"].update(sonic_release="202411", sonic_bgp_admin_status="yang")
    intent = type(plan.intent).model_validate(d)
    errors = validate_config_db(leaf(), intent)  # rendered "up": not activated by 202411's frrcfgd
    assert any("frrcfgd of SONiC 202411" in e for e in errors)
    with pytest.raises(KeyError):
        validate_config_db(leaf(), release="202406")


# --- hwaac's own checks (frrcfgd, FRR, buffers, QoS): beyond YANG -----------------------------------------------


def _add_lossy_profile(cfg: dict) -> None:
    cfg["BUFFER_PROFILE"] = {"lossy": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "7"}}
    cfg["BUFFER_PG"]["Ethernet0|3"]["profile"] = "lossy"


MUTATIONS = [
    ("missing lanes", _set("PORT", "Ethernet0", "lanes", None), "$.PORT.Ethernet0: 'lanes' is a required property"),
    ("speed 400G", _set("PORT", "Ethernet0", "speed", "400G"), "$.PORT.Ethernet0.speed: '400G' is not a speed"),
    ("mtu 9300", _set("PORT", "Ethernet0", "mtu", "9300"), "$.PORT.Ethernet0.mtu: '9300' is not an MTU 68..9216"),
    ("device type", _set("DEVICE_METADATA", "localhost", "type", "Leaf"), "$.DEVICE_METADATA.localhost.type"),
    ("asn 0", _set("BGP_NEIGHBOR", NBR, "asn", "0"), f"$.BGP_NEIGHBOR['{NBR}'].asn: '0' is not an AS number"),
    (
        "interface key",
        _set("INTERFACE", "Ethernet0|172.16.0.0/33", {}),
        "$.INTERFACE: unexpected key(s) 'Ethernet0|172.16.0.0/33': expected sonic-interface.yang",
    ),
    (
        "unknown field",
        _set("PFC_WD", "GLOBAL", "BIG_RED_SWITCH", "enable"),
        "$.PFC_WD.GLOBAL: field(s) 'BIG_RED_SWITCH' not defined in the SONiC YANG model",
    ),
    (
        "undefined scheduler",
        _set("QUEUE", "Ethernet0|3", "scheduler", "scheduler.nope"),
        "$.QUEUE['Ethernet0|3'].scheduler: 'scheduler.nope' is not defined in SCHEDULER",
    ),
    ("undefined wred", _set("QUEUE", "Ethernet0|3", "wred_profile", "NOPE"), "is not defined in WRED_PROFILE"),
    (
        "undefined map",
        _set("PORT_QOS_MAP", "Ethernet0", "tc_to_pg_map", "AZURE"),
        "$.PORT_QOS_MAP.Ethernet0.tc_to_pg_map: 'AZURE' is not defined in TC_TO_PRIORITY_GROUP_MAP",
    ),
    (
        "pfc_enable 3,4",
        _set("PORT_QOS_MAP", "Ethernet0", "pfc_enable", "3,4"),
        "$.PORT_QOS_MAP.Ethernet0.pfc_enable: '3,4' but the lossless classes are '3'",
    ),
    (
        "pfcwd on a lossy priority",
        _set("PORT_QOS_MAP", "Ethernet0", "pfcwd_sw_enable", "3,4"),
        "$.PORT_QOS_MAP.Ethernet0.pfcwd_sw_enable",
    ),
    (
        "detection < poll",
        _set("PFC_WD", "Ethernet0", "detection_time", "150"),
        "$.PFC_WD.Ethernet0.detection_time: 150 ms is below GLOBAL POLL_INTERVAL 200 ms",
    ),
    (
        "restoration < poll",
        _set("PFC_WD", "Ethernet4", "restoration_time", "100"),
        "$.PFC_WD.Ethernet4.restoration_time: 100 ms is below",
    ),
    (
        "wred max < min",
        _set("WRED_PROFILE", "ROCE_LOSSLESS", "green_max_threshold", "1000"),
        "$.WRED_PROFILE.ROCE_LOSSLESS.green_max_threshold: 1000 is below green_min_threshold 150000",
    ),
    (
        "wred max without min",
        _set("WRED_PROFILE", "ROCE_LOSSLESS", "green_min_threshold", None),
        "$.WRED_PROFILE.ROCE_LOSSLESS.green_max_threshold: given without green_min_threshold",
    ),
    (
        "queue on unknown port",
        _set("QUEUE", "Ethernet999|3", {"scheduler": "scheduler.lossless"}),
        "$.QUEUE['Ethernet999|3']: port 'Ethernet999' is not defined in PORT",
    ),
    (
        "bgp local_addr not on an interface",
        _set("BGP_NEIGHBOR", NBR, "local_addr", "10.9.9.9"),
        f"$.BGP_NEIGHBOR['{NBR}'].local_addr: 10.9.9.9 is not an address configured on an INTERFACE",
    ),
    (
        "bgp neighbour off subnet",
        _set("BGP_NEIGHBOR", NBR, "local_addr", "10.1.0.3"),
        f"$.BGP_NEIGHBOR['{NBR}']: neighbour 10.1.0.0 is not a peer address",
    ),
    ("vlanid", _set("VLAN", "Vlan100", {"vlanid": "101"}), "$.VLAN.Vlan100.vlanid: '101' is not the number in"),
    (
        "frrcfgd off",
        _set("DEVICE_METADATA", "localhost", "frr_mgmt_framework_config", "false"),
        "$.DEVICE_METADATA.localhost.frr_mgmt_framework_config: 'false': frrcfgd",
    ),
    (
        "routing mode absent",
        _set("DEVICE_METADATA", "localhost", "docker_routing_config_mode", None),
        "$.DEVICE_METADATA.localhost.docker_routing_config_mode: None: frrcfgd replays",
    ),
    (
        "admin_status true",
        _set("BGP_NEIGHBOR", NBR, "admin_status", "true"),
        f"$.BGP_NEIGHBOR['{NBR}'].admin_status: 'true' is not \"up\" or \"down\"",
    ),
    (
        "local_asn differs",
        _set("BGP_GLOBALS", "default", "local_asn", "65000"),
        "$.BGP_GLOBALS.default.local_asn: '65000' differs from DEVICE_METADATA bgp_asn '4200100000'",
    ),
    ("no BGP_GLOBALS", _set("BGP_GLOBALS", None), f"$.BGP_NEIGHBOR['{NBR}']: VRF 'default' has no BGP_GLOBALS"),
    (
        "af without neighbour",
        _set("BGP_NEIGHBOR_AF", "default|10.9.0.0|ipv4_unicast", {"admin_status": "up"}),
        "$.BGP_NEIGHBOR_AF['default|10.9.0.0|ipv4_unicast']: neighbour 'default|10.9.0.0' is not defined",
    ),
    (
        "neighbour never activated",
        _set("BGP_NEIGHBOR_AF", AF, "admin_status", "down"),
        f"$.BGP_NEIGHBOR['{NBR}']: no BGP_NEIGHBOR_AF activates it",
    ),
    (
        "no inbound policy",
        _set("BGP_NEIGHBOR_AF", AF, "route_map_in", None),
        f"$.BGP_NEIGHBOR_AF['{AF}']: no route_map_in: FRR's 'bgp ebgp-requires-policy'",
    ),
    (
        "undefined route map",
        _set("BGP_NEIGHBOR_AF", AF, "route_map_out", ["NOPE"]),
        f"$.BGP_NEIGHBOR_AF['{AF}'].route_map_out: route map 'NOPE' has no statement in ROUTE_MAP",
    ),
    (
        "route map not in set",
        _set("ROUTE_MAP_SET", "HWAAC_PERMIT_ALL", None),
        "$.ROUTE_MAP_SET: route map 'HWAAC_PERMIT_ALL' (used by $.BGP_NEIGHBOR_AF",
    ),
    # what the network statements announce
    (
        "host /31 not announced",
        _set("BGP_GLOBALS_AF_NETWORK", "default|ipv4_unicast|172.16.0.0/31", None),
        "$.INTERFACE['Ethernet0|172.16.0.0/31']: host-link subnet 172.16.0.0/31 is not announced: no network "
        "statement 'default|ipv4_unicast|172.16.0.0/31' and no redistribute connected",
    ),
    (
        "loopback not announced",
        _set("BGP_GLOBALS_AF_NETWORK", "default|ipv4_unicast|10.0.0.1/32", None),
        "$.LOOPBACK_INTERFACE['Loopback0|10.0.0.1/32']: the Loopback0 address 10.0.0.1/32 is not announced",
    ),
    (
        "fabric /31 announced",
        _set("BGP_GLOBALS_AF_NETWORK", "default|ipv4_unicast|10.1.0.0/31", {}),
        "$.INTERFACE['Ethernet128|10.1.0.1/31']: fabric link subnet (it carries a BGP session) 10.1.0.0/31 is "
        "announced by the network statement",
    ),
    (
        "nothing announced",
        _set("BGP_GLOBALS_AF_NETWORK", None),
        "$.BGP_GLOBALS_AF_NETWORK: nothing announces the 33 connected subnet(s)",
    ),
    # buffers
    (
        "lossless PG missing",
        _set("BUFFER_PG", "Ethernet4|3", None),
        "$.BUFFER_PG['Ethernet4|3']: missing: PFC priority 3 of Ethernet4 (pfc_enable) has no lossless priority group",
    ),
    (
        "lossless PG on another priority",
        _rename("BUFFER_PG", "Ethernet4|3", "Ethernet4|4"),
        "$.BUFFER_PG['Ethernet4|3']: missing",
    ),
    (
        "lossless PG with lossy profile",
        _add_lossy_profile,
        "$.BUFFER_PG['Ethernet0|3'].profile: 'lossy' is a lossy profile (no xoff) on PFC priority 3",
    ),
    (
        "PG profile undefined",
        _set("BUFFER_PG", "Ethernet0|0", {"profile": "ingress_lossy_profile"}),
        "$.BUFFER_PG['Ethernet0|0'].profile: 'ingress_lossy_profile' is not defined in BUFFER_PROFILE",
    ),
    (
        "PG ranges overlap",
        _set("BUFFER_PG", "Ethernet0|2-3", {"profile": "NULL"}),
        "$.BUFFER_PG['Ethernet0|2-3']: overlaps 'Ethernet0|3'",
    ),
    ("PG number 8", _set("BUFFER_PG", "Ethernet0|8", {"profile": "NULL"}), "$.BUFFER_PG: unexpected key(s)"),
    (
        "PG on unknown port",
        _set("BUFFER_PG", "Ethernet999|3", {"profile": "NULL"}),
        "$.BUFFER_PG['Ethernet999|3']: port 'Ethernet999' is not defined in PORT",
    ),
    (
        "traditional buffer model",
        _set("DEVICE_METADATA", "localhost", "buffer_model", "traditional"),
        "$.DEVICE_METADATA.localhost.buffer_model: 'traditional': BUFFER_PG profile NULL",
    ),
    (
        "no default lossless parameter",
        _set("DEFAULT_LOSSLESS_BUFFER_PARAMETER", None),
        "$.DEFAULT_LOSSLESS_BUFFER_PARAMETER: no entry with default_dynamic_th",
    ),
    (
        "dynamic_th out of range",
        _set("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "AZURE", "default_dynamic_th", "8"),
        "$.DEFAULT_LOSSLESS_BUFFER_PARAMETER.AZURE.default_dynamic_th: '8' is not a buffer dynamic threshold -8..7",
    ),
    ("no traffic pattern", _set("LOSSLESS_TRAFFIC_PATTERN", None), "$.LOSSLESS_TRAFFIC_PATTERN: no entry with mtu"),
    (
        "no cable length",
        _set("CABLE_LENGTH", "AZURE", "Ethernet0", None),
        "$.BUFFER_PG['Ethernet0|3']: port 'Ethernet0' has no CABLE_LENGTH",
    ),
    ("address without interface key", _set("INTERFACE", "Ethernet128", None), "address without the interface key"),
    # against the intent's QoS
    (
        "dscp 26 to lossy",
        _set("DSCP_TO_TC_MAP", "ROCE", "26", "1"),
        "$.DSCP_TO_TC_MAP.ROCE['26']: DSCP 26 maps to TC '1', the intent's qos wants 3",
    ),
    ("active port without qos", _set("PORT_QOS_MAP", "Ethernet4", None), "$.PORT_QOS_MAP: active port 'Ethernet4'"),
]


@pytest.mark.parametrize(("what", "mutate", "expected"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_validator_rejects_mutated_config(what, mutate, expected):
    errors = validate_config_db(_mutated(mutate), demo_plan().intent)
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
        _set("PREFIX", HOSTS, None),
        "$.INTERFACE['Ethernet0|172.16.0.0/31']: host-link subnet 172.16.0.0/31 is not announced: no network "
        "statement 'default|ipv4_unicast|172.16.0.0/31' and route map 'CONN' of redistribute connected denies it",
    ),
    (
        "host range exact",
        _rename("PREFIX", HOSTS, "CONN_V4|172.16.0.0/16|exact"),
        "$.INTERFACE['Ethernet4|172.16.0.2/31']: host-link subnet 172.16.0.2/31 is not announced",
    ),
    ("host prefix denied", _set("PREFIX", HOSTS, "action", "deny"), "host-link subnet 172.16.0.0/31 is not announced"),
    (
        "loopback not announced",
        _set("PREFIX", "CONN_V4|10.0.0.1/32|exact", None),
        "$.LOOPBACK_INTERFACE['Loopback0|10.0.0.1/32']: the Loopback0 address 10.0.0.1/32 is not announced",
    ),
    (
        "connected map matches all",
        _set("ROUTE_MAP", "CONN|10", "match_prefix_set", None),
        "$.INTERFACE['Ethernet128|10.1.0.1/31']: fabric link subnet (it carries a BGP session) 10.1.0.0/31 is "
        "announced by route map 'CONN' of redistribute connected",
    ),
    (
        "fabric /31s permitted",
        _set("PREFIX", "CONN_V4|30|10.1.0.0/20|31..31", {"action": "permit"}),
        "fabric link subnet (it carries a BGP session) 10.1.0.2/31 is announced",
    ),
    (
        "redistribute without map",
        _set("ROUTE_REDISTRIBUTE", "default|connected|bgp|ipv4", "route_map", None),
        "10.1.0.0/31 is announced by redistribute connected, which has no route map",
    ),
    (
        "route map not in set",
        _set("ROUTE_MAP_SET", "CONN", None),
        "$.ROUTE_MAP_SET: route map 'CONN' (used by $.ROUTE_REDISTRIBUTE",
    ),
    (
        "undefined prefix set",
        _set("PREFIX_SET", "CONN_V4", None),
        "$.ROUTE_MAP['CONN|10'].match_prefix_set: 'CONN_V4' is not defined in PREFIX_SET",
    ),
    (
        "prefix range below its length",
        _rename("PREFIX", HOSTS, "CONN_V4|172.16.0.0/16|8..31"),
        "$.PREFIX['CONN_V4|172.16.0.0/16|8..31']: length range 8..31 does not fit 172.16.0.0/16",
    ),
    (
        "prefix with a bad seq number",
        _rename("PREFIX", HOSTS, "CONN_V4|x|172.16.0.0/16|31..31"),
        "$.PREFIX: unexpected key(s)",
    ),
    (
        "duplicate prefix seq",
        _both(
            _set("PREFIX", "CONN_V4|20|10.9.0.0/16|exact", {"action": "permit"}),
            _set("PREFIX", "CONN_V4|20|10.8.0.0/16|exact", {"action": "permit"}),
        ),
        "sequence number 20 is also used by",
    ),
]


def test_redistribute_variant_is_valid():
    assert validate_config_db(_mutated(_as_redistribute), demo_plan().intent) == []


@pytest.mark.parametrize(
    ("what", "mutate", "expected"), REDISTRIBUTE_MUTATIONS, ids=[m[0] for m in REDISTRIBUTE_MUTATIONS]
)
def test_validator_evaluates_redistribute_connected(what, mutate, expected):
    errors = validate_config_db(_mutated(_both(_as_redistribute, mutate)), demo_plan().intent)
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


def test_validator_survives_garbage():
    assert validate_config_db({})  # DEVICE_METADATA and PORT are required
    errors = validate_config_db({"PORT": [], "QUEUE": {"x": 1}, "PFC_WD": {"GLOBAL": "y"}, "lower": {}})
    assert any("$.PORT" in e for e in errors) and any("lower" in e for e in errors)
    assert copy.deepcopy(errors) == validate_config_db(
        {"PORT": [], "QUEUE": {"x": 1}, "PFC_WD": {"GLOBAL": "y"}, "lower": {}}
    )
