"""SONiC config_db renderer: the QoS tables (DSCP and TC maps, schedulers, PFC, WRED, buffer profiles) and
the QoS cache."""

from __future__ import annotations

import copy

from pydantic import BaseModel

from hwaac.model.intent import QosSection
from hwaac.render.sonic import validate_config_db
from hwaac.render.sonic.context import QosInvariants, pg_ranges, qos_invariants
from tests.unit.sonic_plans import LEAF, demo_dict, demo_plan, plan_from, render

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
    cfg["BUFFER_PROFILE"] = {
        "pg_lossless_static": {
            "pool": "ingress_lossless_pool",
            "xon": "19456",
            "xoff": "90112",
            "size": "109568",
            "dynamic_th": "0",
        }
    }
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
