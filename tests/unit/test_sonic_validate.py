"""hwaac's config_db validator (hwaac.render.sonic.validate): the release's admin_status values and agreement with
SONiC's own YANG validator (``sonic-yang-validate`` from the SONiC toolkit) case by case. Mutations that only
hwaac's own checks catch: test_sonic_validate_own_checks.py."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from hwaac.render.sonic import render_config_db, validate_config_db
from hwaac.render.sonic import yang_fields as yf
from hwaac.render.sonic.validate import config_db_schema
from hwaac.sonic_toolkit import Toolkit, yang_validate
from tests.unit.config_db_mutations import AF, NBR, Mutation, both, leaf, mutated, put, rename
from tests.unit.sonic_plans import ROOT, demo_plan


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

YANG_CASES: list[tuple[str, Mutation, bool]] = [
    ("as rendered", lambda cfg: None, True),
    # ranges, read as sonic_yang reads them
    ("mtu 9300", put("PORT", "Ethernet0", "mtu", "9300"), False),
    ("mtu not a number", put("PORT", "Ethernet0", "mtu", "jumbo"), False),
    ("mtu with a leading zero", put("PORT", "Ethernet0", "mtu", "09100"), True),
    ("mtu with a space", put("PORT", "Ethernet0", "mtu", " 9100"), True),
    ("speed 0", put("PORT", "Ethernet0", "speed", "0"), False),
    ("deployment_id above 65535", put("DEVICE_METADATA", "localhost", "deployment_id", "70000"), True),
    ("neighbour asn 0", put("BGP_NEIGHBOR", NBR, "asn", "0"), False),
    ("neighbour asn above 32 bits", put("BGP_NEIGHBOR", NBR, "asn", "4294967296"), False),
    ("max paths 257", put("BGP_GLOBALS_AF", "default|ipv4_unicast", "max_ebgp_paths", "257"), False),
    ("poll interval 50", put("PFC_WD", "GLOBAL", "POLL_INTERVAL", "50"), False),
    ("dynamic_th 8", put("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "AZURE", "default_dynamic_th", "8"), False),
    ("dynamic_th +1", put("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "AZURE", "default_dynamic_th", "+1"), True),
    ("small packets 101%", put("LOSSLESS_TRAFFIC_PATTERN", "AZURE", "small_packet_percentage", "101"), False),
    ("scheduler weight 0", put("SCHEDULER", "scheduler.lossy", "weight", "0"), False),
    ("dscp to tc 15", put("DSCP_TO_TC_MAP", "ROCE", "1", "15"), True),
    ("dscp to tc 16", put("DSCP_TO_TC_MAP", "ROCE", "1", "16"), False),
    ("tc 16 to a queue", put("TC_TO_QUEUE_MAP", "ROCE", "16", "1"), False),
    ("tc to queue 8", put("TC_TO_QUEUE_MAP", "ROCE", "1", "8"), True),
    # enumerations and patterns
    ("bgp admin_status true", put("BGP_NEIGHBOR", NBR, "admin_status", "true"), False),
    ("af admin_status true", put("BGP_NEIGHBOR_AF", AF, "admin_status", "true"), False),
    ("port admin_status UP", put("PORT", "Ethernet0", "admin_status", "UP"), False),
    ("fec fec91", put("PORT", "Ethernet0", "fec", "fec91"), False),
    ("lanes any text", put("PORT", "Ethernet0", "lanes", "abc"), True),
    ("boolean True", put("BGP_GLOBALS", "default", "load_balance_mp_relax", "True"), False),
    ("boolean yes", put("DEVICE_METADATA", "localhost", "frr_mgmt_framework_config", "yes"), False),
    ("device type SonicDpu", put("DEVICE_METADATA", "localhost", "type", "SonicDpu"), False),
    ("device type MgmtLeafRouter", put("DEVICE_METADATA", "localhost", "type", "MgmtLeafRouter"), True),
    ("hostname of 64 characters", put("DEVICE_METADATA", "localhost", "hostname", "h" * 64), False),
    ("hostname with a space", put("DEVICE_METADATA", "localhost", "hostname", "leaf 1"), True),
    ("mac too short", put("DEVICE_METADATA", "localhost", "mac", "00:11:22"), False),
    ("cable length without m", put("CABLE_LENGTH", "AZURE", "Ethernet0", "40"), False),
    ("dscp 64", put("DSCP_TO_TC_MAP", "ROCE", "64", "0"), False),
    ("priority group 8", put("BUFFER_PG", "Ethernet0|8", {"profile": "NULL"}), False),
    ("network prefix /33", put("BGP_GLOBALS_AF_NETWORK", "default|ipv4_unicast|10.9.0.0/33", {}), False),
    ("vlan 1", put("VLAN", "Vlan1", {"vlanid": "1"}), False),
    ("match_protocol any text", put("ROUTE_MAP", "HWAAC_PERMIT_ALL|10", "match_protocol", "anything"), True),
    ("two route maps out", put("BGP_NEIGHBOR_AF", AF, "route_map_out", ["HWAAC_PERMIT_ALL", "X"]), False),
    # fields
    ("field YANG does not define", put("PFC_WD", "GLOBAL", "BIG_RED_SWITCH", "enable"), False),
    ("queue buffer_profile", put("QUEUE", "Ethernet0|3", "buffer_profile", "x"), False),
    ("YANG field hwaac does not write", put("PORT", "Ethernet0", "dhcp_rate_limit", "300"), True),
    ("bgpcfgd-shaped neighbour", put("BGP_NEIGHBOR", "10.9.9.9", {"asn": "65000"}), True),
    # leafrefs
    ("undefined scheduler", put("QUEUE", "Ethernet0|3", "scheduler", "NO_SUCH"), False),
    ("CPU queue", put("QUEUE", "CPU|0", {"scheduler": "scheduler.lossy"}), True),
    ("undefined tc_to_pg map", put("PORT_QOS_MAP", "Ethernet0", "tc_to_pg_map", "NO_SUCH"), False),
    ("port list as qos key", rename("PORT_QOS_MAP", "Ethernet0", "Ethernet0,Ethernet4"), False),
    (
        "interface on an unknown port",
        both(put("INTERFACE", "Ethernet999", {}), put("INTERFACE", "Ethernet999|10.9.9.9/31", {})),
        False,
    ),
    ("undefined buffer profile", put("BUFFER_PG", "Ethernet0|3", "profile", "NO_SUCH"), False),
    ("undefined route map", put("BGP_NEIGHBOR_AF", AF, "route_map_out", ["NO_SUCH"]), False),
    ("undefined peer group", put("BGP_NEIGHBOR", NBR, "peer_group_name", "NO_SUCH"), False),
    ("undefined called route map", put("ROUTE_MAP", "HWAAC_PERMIT_ALL|10", "call_route_map", "NO_SUCH"), False),
    (
        "undefined network policy",
        put("BGP_GLOBALS_AF_NETWORK", "default|ipv4_unicast|10.0.0.1/32", "policy", "NO_SUCH"),
        False,
    ),
    ("VRF without VRF entry", put("BGP_GLOBALS", "Vrf1", {"local_asn": "65000"}), False),
    ("neighbour names a loopback", put("BGP_NEIGHBOR", NBR, "local_addr", "Loopback0"), True),
    ("neighbour names an unknown port", put("BGP_NEIGHBOR", NBR, "local_addr", "Ethernet999"), False),
    ("device neighbour keyed by a name", rename("DEVICE_NEIGHBOR", "Ethernet0", "spine-uplink"), True),
    # must conditions
    ("detection below poll interval", put("PFC_WD", "Ethernet0", "detection_time", "150"), False),
    ("wred max below min", put("WRED_PROFILE", "ROCE_LOSSLESS", "green_max_threshold", "1000"), False),
    ("wred max without min", put("WRED_PROFILE", "ROCE_LOSSLESS", "green_min_threshold", None), False),
    ("vlanid other than its name", put("VLAN", "Vlan100", {"vlanid": "101"}), False),
    (
        "routed port as vlan member",
        both(
            put("VLAN", "Vlan100", {"vlanid": "100"}),
            put("VLAN_MEMBER", "Vlan100|Ethernet0", {"tagging_mode": "untagged"}),
        ),
        False,
    ),
    (
        "untagged in two vlans",
        both(
            put("VLAN", "Vlan100", {"vlanid": "100"}),
            put("VLAN", "Vlan200", {"vlanid": "200"}),
            put("VLAN_MEMBER", "Vlan100|Ethernet504", {"tagging_mode": "untagged"}),
            put("VLAN_MEMBER", "Vlan200|Ethernet504", {"tagging_mode": "untagged"}),
        ),
        False,
    ),
    ("address without its interface key", put("INTERFACE", "Ethernet128", None), False),
]
YANG_IDS = [c[0] for c in YANG_CASES]


@pytest.mark.parametrize(("what", "mutate", "yang_valid"), YANG_CASES, ids=YANG_IDS)
def test_validator_verdict_on_yang_cases(what: str, mutate: Mutation, yang_valid: bool):
    errors = validate_config_db(mutated(mutate))
    assert (errors == []) == yang_valid, f"{what}: {'valid' if yang_valid else 'invalid'} in YANG; ours: {errors}"


def test_sonic_yang_agrees_on_every_case(sonic_toolkit: Toolkit, tmp_path: Path):
    """SONiC's own verdict on each case equals the table's (and so the validator's, test above)."""
    files = []
    for i, (_what, mutate, _valid) in enumerate(YANG_CASES):
        path = tmp_path / f"case{i:02d}.json"
        path.write_text(json.dumps(mutated(mutate)))
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
        cfg = mutated(put("PORT", "Ethernet0", "mtu", value))
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


def test_validator_survives_garbage():
    assert validate_config_db({})  # DEVICE_METADATA and PORT are required
    errors = validate_config_db({"PORT": [], "QUEUE": {"x": 1}, "PFC_WD": {"GLOBAL": "y"}, "lower": {}})
    assert any("$.PORT" in e for e in errors) and any("lower" in e for e in errors)
    assert copy.deepcopy(errors) == validate_config_db(
        {"PORT": [], "QUEUE": {"x": 1}, "PFC_WD": {"GLOBAL": "y"}, "lower": {}}
    )
