"""hwaac.apply: the JSON patch from a running CONFIG_DB to the demo fabric's rendered config_db, its refusals, and
the BGP gate on FRR's recorded ``show bgp summary json``."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonpatch
import pytest

from hwaac.apply import (
    OWNED_TABLES,
    UnsafePatchError,
    bgp_gate,
    bgp_neighbors,
    check_patch,
    config_patch,
    managed_tables,
    parse_bgp_summary,
    table_diffs,
    tables_changed,
    target_config,
)
from hwaac.plan import build_plan
from hwaac.render.sonic import render_config_db
from hwaac.validate import load_intent

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "tools" / "sonic"
LEAF = "leaf-p0-su01-r0"


@cache
def _rendered(name: str) -> str:
    plan = build_plan(load_intent(ROOT / "inventory" / "demo"))
    switch = next(s for s in plan.switches if s.name == name)
    return json.dumps(render_config_db(plan, switch))


def desired(name: str = LEAF) -> dict[str, Any]:
    """The demo switch's rendered config_db (a fresh copy)."""
    return json.loads(_rendered(name))


def factory(name: str = LEAF) -> dict[str, Any]:
    """What a freshly installed switch holds: platform metadata, management, PORT without hwaac's fields, a
    factory address and a bgpcfgd-shaped neighbour, FEATURE (a table hwaac never renders)."""
    d = desired(name)
    return {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": "sonic",
                "hwsku": "Mellanox-SN5600-O128",
                "mac": "00:00:5e:00:53:01",
                "platform": "x86_64-nvidia_sn5600-r0",
                "deployment_id": "1",
            }
        },
        "MGMT_INTERFACE": {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}},
        "MGMT_PORT": {"eth0": {"alias": "eth0", "admin_status": "up"}},
        "PORT": {
            k: {f: v for f, v in e.items() if f in ("alias", "lanes", "speed", "index")} for k, e in d["PORT"].items()
        },
        "INTERFACE": {"Ethernet0": {}, "Ethernet0|10.0.0.0/31": {}},
        "BGP_NEIGHBOR": {"10.0.0.1": {"asn": "65200", "name": "ARISTA01T2"}},
        "FEATURE": {"bgp": {"state": "enabled"}},
    }


def apply(running: dict[str, Any], patch: list[dict[str, Any]]) -> dict[str, Any]:
    return jsonpatch.apply_patch(running, patch)


def test_identical_configs_need_no_patch() -> None:
    assert config_patch(desired(), desired()) == []


def test_patch_brings_a_factory_switch_to_the_rendered_config_and_is_then_empty() -> None:
    running, want = factory(), desired()
    patch = config_patch(running, want)
    after = apply(running, patch)
    # every rendered value is there, and a second patch is empty (a second run changes nothing)
    for table, entries in want.items():
        for key, fields in entries.items():
            assert after[table][key] | fields == after[table][key], (table, key)
    assert config_patch(after, want) == []
    # only add/remove/replace, never move/copy
    assert {op["op"] for op in patch} <= {"add", "remove", "replace"}


def test_unmanaged_tables_and_unrendered_fields_stay() -> None:
    after = apply(factory(), config_patch(factory(), desired()))
    assert after["MGMT_INTERFACE"] == {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}}
    assert after["MGMT_PORT"] == {"eth0": {"alias": "eth0", "admin_status": "up"}}
    assert after["FEATURE"] == {"bgp": {"state": "enabled"}}
    meta = after["DEVICE_METADATA"]["localhost"]
    assert meta["mac"] == "00:00:5e:00:53:01" and meta["deployment_id"] == "1"  # platform fields kept (merged)
    assert meta["hostname"] == LEAF and meta["bgp_asn"] == "4200100000"  # rendered fields replaced


def test_owned_tables_lose_stale_entries_merged_tables_keep_them() -> None:
    running = factory()
    running["BUFFER_PG"] = {"Ethernet0|0": {"profile": "ingress_lossy_profile"}}  # the SKU template's lossy PG
    after = apply(running, config_patch(running, desired()))
    assert "Ethernet0|10.0.0.0/31" not in after["INTERFACE"]  # factory address removed (INTERFACE is owned)
    assert "Ethernet0|172.16.0.0/31" in after["INTERFACE"]
    assert "10.0.0.1" not in after["BGP_NEIGHBOR"]  # the bgpcfgd-shaped factory neighbour removed
    assert after["BUFFER_PG"]["Ethernet0|0"] == {"profile": "ingress_lossy_profile"}  # merged table keeps it
    assert after["BUFFER_PG"]["Ethernet0|3"] == {"profile": "NULL"}


def test_changed_neighbour_field_and_renumbered_link_give_minimal_ops() -> None:
    running = desired()
    running["BGP_NEIGHBOR"]["default|10.1.0.0"]["holdtime"] = "30"
    del running["INTERFACE"]["Ethernet0|172.16.0.0/31"]
    running["INTERFACE"]["Ethernet0|172.16.9.0/31"] = {}
    patch = config_patch(running, desired())
    assert patch == [
        {"op": "remove", "path": "/INTERFACE/Ethernet0|172.16.9.0~131"},
        {"op": "add", "path": "/INTERFACE/Ethernet0|172.16.0.0~131", "value": {}},
        {"op": "replace", "path": "/BGP_NEIGHBOR/default|10.1.0.0/holdtime", "value": "10"},
    ]
    assert tables_changed(patch) == {"INTERFACE": {"remove": 1, "add": 1}, "BGP_NEIGHBOR": {"replace": 1}}


def test_paths_escape_slash_and_tilde_per_rfc6901_and_keep_the_bar() -> None:
    running: dict[str, Any] = {"INTERFACE": {"Ethernet0": {}}}
    want = {"INTERFACE": {"Ethernet0": {}, "Ethernet0|172.16.0.0/31": {}}, "WEIRD": {"a~b/c": {"x": "1"}}}
    patch = sorted(config_patch(running, want), key=lambda op: op["path"])
    assert patch == [
        {"op": "add", "path": "/INTERFACE/Ethernet0|172.16.0.0~131", "value": {}},
        {"op": "add", "path": "/WEIRD", "value": {"a~b/c": {"x": "1"}}},
    ]
    fields = config_patch({"WEIRD": {"a~b/c": {"x": "1"}}}, {"WEIRD": {"a~b/c": {"x": "2"}}})
    assert fields == [{"op": "replace", "path": "/WEIRD/a~0b~1c/x", "value": "2"}]


def test_tables_narrow_the_push() -> None:
    running = factory()
    patch = config_patch(running, desired(), tables=["BGP_NEIGHBOR", "BGP_NEIGHBOR_AF"])
    assert set(tables_changed(patch)) == {"BGP_NEIGHBOR", "BGP_NEIGHBOR_AF"}
    with pytest.raises(ValueError, match=r"\['MGMT_PORTS'\] are not in the desired config"):
        managed_tables(desired(), ["MGMT_PORTS"])


def test_empty_managed_table_is_removed_not_left_empty() -> None:
    # CONFIG_DB has no empty tables; GCU refuses a patch that leaves one
    running = {"VLAN": {"Vlan1000": {"vlanid": "1000"}}}
    assert config_patch(running, {"VLAN": {}}) == [{"op": "remove", "path": "/VLAN"}]
    assert "VLAN" not in target_config(running, {"VLAN": {}})


def test_refuses_removing_or_changing_management_and_loopback0() -> None:
    running = factory()
    want = desired()
    want["MGMT_INTERFACE"] = {"eth0|192.0.2.99/24": {"gwaddr": "192.0.2.1"}}
    with pytest.raises(UnsafePatchError) as err:
        config_patch(running, want, owned=OWNED_TABLES | {"MGMT_INTERFACE"})
    assert err.value.paths == ["/MGMT_INTERFACE/eth0|192.0.2.10~124", "/MGMT_INTERFACE/eth0|192.0.2.99~124"]
    assert "remove /MGMT_INTERFACE/eth0|192.0.2.10~124" in str(err.value)

    # a renumbered Loopback0 in an owned LOOPBACK_INTERFACE would remove the old address
    lo_running = desired()
    lo_want = desired()
    lo_want["LOOPBACK_INTERFACE"] = {"Loopback0": {}, "Loopback0|10.0.0.99/32": {}}
    with pytest.raises(UnsafePatchError, match=r"remove /LOOPBACK_INTERFACE/Loopback0\|10\.0\.0\.1~132"):
        config_patch(lo_running, lo_want, owned=OWNED_TABLES | {"LOOPBACK_INTERFACE"})
    # merged (the default), the renumber only adds; the old address stays
    patch = config_patch(lo_running, lo_want)
    assert patch == [{"op": "add", "path": "/LOOPBACK_INTERFACE/Loopback0|10.0.0.99~132", "value": {}}]


def test_check_patch_allows_adding_what_a_fresh_switch_lacks_and_catches_hand_written_patches() -> None:
    fresh: dict[str, Any] = {"PORT": {}}
    check_patch(
        [
            {"op": "add", "path": "/LOOPBACK_INTERFACE", "value": {"Loopback0": {}}},
            {"op": "add", "path": "/MGMT_PORT", "value": {"eth0": {}}},
        ],
        fresh,
    )
    running = factory()
    for op in (
        {"op": "add", "path": "/MGMT_INTERFACE/eth0|192.0.2.11~124", "value": {}},
        {"op": "remove", "path": "/MGMT_PORT"},
        {"op": "replace", "path": "/MGMT_PORT/eth0/admin_status", "value": "down"},
        {"op": "move", "from": "/MGMT_INTERFACE/eth0|192.0.2.10~124", "path": "/X/y"},
        {"op": "remove", "path": ""},
    ):
        with pytest.raises(UnsafePatchError):
            check_patch([op], running)


def test_diff_per_changed_table() -> None:
    running = desired()
    running["BGP_NEIGHBOR"]["default|10.1.0.0"]["holdtime"] = "30"
    target = target_config(running, desired())
    (diff,) = table_diffs(running, target, list(tables_changed(config_patch(running, desired()))))
    assert diff["before_header"] == "CONFIG_DB BGP_NEIGHBOR (running)"
    assert '"holdtime": "30"' in diff["before"] and '"holdtime": "10"' in diff["after"]
    assert json.loads(diff["after"]) == desired()["BGP_NEIGHBOR"]


def test_inputs_are_not_modified() -> None:
    running, want = factory(), desired()
    before = copy.deepcopy((running, want))
    config_patch(running, want)
    assert (running, want) == before


def test_bgp_neighbors_of_the_rendered_leaf() -> None:
    d = desired()
    got = bgp_neighbors(d)
    assert len(got) == 32 and got[0] == "10.1.0.0"
    d["BGP_NEIGHBOR"]["default|10.1.0.0"]["admin_status"] = "false"
    assert "10.1.0.0" not in bgp_neighbors(d)
    assert bgp_neighbors({"BGP_NEIGHBOR": {"10.0.0.1": {"asn": "1"}}}) == ["10.0.0.1"]  # bgpcfgd shape


def test_parse_recorded_frr_summary() -> None:
    summary = parse_bgp_summary((FIXTURES / "vtysh-show-bgp-summary-json.out").read_text())
    assert summary.router_id == "10.200.255.2" and summary.local_as == 65100
    assert summary.established() == ["10.200.1.10", "10.200.1.19", "10.200.1.2"]
    verdict = bgp_gate(summary, ["10.200.1.2", "10.200.1.10", "10.200.1.99"])
    assert not verdict.passed
    assert verdict.established == ["10.200.1.2", "10.200.1.10"]
    assert verdict.down == {"10.200.1.99": "missing"}
    assert verdict.message() == "2/3 BGP sessions Established; not Established: 10.200.1.99 missing"
    assert bgp_gate(summary, ["10.200.1.2", "10.200.1.10", "10.200.1.99"], min_up=0.6).passed


def test_parse_recorded_frr_summary_with_an_idle_peer() -> None:
    summary = parse_bgp_summary((FIXTURES / "vtysh-show-bgp-summary-json-idle.out").read_text())
    assert summary.peers == {"10.0.0.254": "Established", "10.0.0.253": "Idle"}
    verdict = bgp_gate(summary)
    assert not verdict.passed and verdict.down == {"10.0.0.253": "Idle"}


def test_parse_rejects_non_json_and_accepts_no_peers() -> None:
    with pytest.raises(ValueError, match="Unknown command"):
        parse_bgp_summary("% Unknown command: show bgp summary jsn\n")
    empty = parse_bgp_summary("{}\n")
    assert empty.peers == {} and bgp_gate(empty, []).passed
    with pytest.raises(ValueError, match="min_up"):
        bgp_gate(empty, [], min_up=1.5)
