"""Per-host renderers: golden files for gpu-su01-h01 plus behaviour checks that follow the plan and the intent
(the storage routes of the rail tables: test_render_host_routes.py).

Regenerate the golden files with ``HWAAC_UPDATE_GOLDEN=1 pytest tests/unit/test_render_host.py`` and review
the diff against docs/render-host.md (the files and the public sources of their settings) before committing it.
"""

from __future__ import annotations

import os

import orjson
import pytest

from hwaac.errors import IntentError
from hwaac.model.intent import Intent
from hwaac.plan import build_plan
from hwaac.plan.model import Plan, ip_str
from hwaac.render.host import render_host_files
from hwaac.render.host._context import neighbour_thresholds
from hwaac.validate import load_intent
from tests.unit.host_plans import (
    DEMO,
    FABRIC_POOLS,
    GOLDEN,
    GOLDEN_NODE,
    NCCL,
    NETPLAN,
    NIC,
    RAILS,
    SYSCTL,
    demo_dict,
    host_links,
    nccl_vars,
    node,
    plan_of,
    yaml_of,
)


@pytest.fixture(scope="module")
def demo() -> Plan:
    return build_plan(load_intent(DEMO))


@pytest.fixture(scope="module")
def h01(demo: Plan) -> dict[str, str]:
    return render_host_files(demo, node(demo, GOLDEN_NODE))


# --- golden -----------------------------------------------------------------------------------------------


def test_golden_files(h01: dict[str, str]) -> None:
    base = GOLDEN / GOLDEN_NODE
    if os.environ.get("HWAAC_UPDATE_GOLDEN") == "1":
        for rel, text in h01.items():
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text(text)
    on_disk = sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file())
    assert on_disk == sorted(h01), "golden file set differs; regenerate with HWAAC_UPDATE_GOLDEN=1"
    for rel, text in h01.items():
        assert (base / rel).read_text() == text, f"{rel} differs from the golden file"


def test_file_set_and_newlines(h01: dict[str, str]) -> None:
    assert list(h01) == [NETPLAN, SYSCTL, NIC, NCCL, "lustre-client.json"]
    assert all(text.endswith("\n") and not text.endswith("\n\n") for text in h01.values())


def test_deterministic(demo: Plan) -> None:
    again = build_plan(load_intent(DEMO))
    for n in demo.nodes[:5]:
        assert render_host_files(demo, n) == render_host_files(again, node(again, n.name))


# --- netplan ----------------------------------------------------------------------------------------------


def test_one_table_and_one_rule_per_rail(demo: Plan, h01: dict[str, str]) -> None:
    eths = yaml_of(h01[NETPLAN])["network"]["ethernets"]
    tables, priorities = [], []
    for i, (iface, cfg) in enumerate(eths.items()):
        assert iface == f"rail{i}"
        rules = cfg["routing-policy"]
        assert len(rules) == 1
        route_tables = {r["table"] for r in cfg["routes"]}
        assert route_tables == {rules[0]["table"]}, "every route of a rail lives in the rail's own table"
        tables.append(rules[0]["table"])
        priorities.append(rules[0]["priority"])
    assert len(eths) == 8
    assert tables == list(range(101, 109))
    assert priorities == [1010 + 10 * i for i in range(8)]
    assert len(set(tables)) == len(tables) and len(set(priorities)) == len(priorities)


def test_rail_addresses_equal_the_plan(demo: Plan) -> None:
    agg = "{}/{}".format(*(lambda a: (ip_str(a[0]), a[1]))(demo.host_aggregate(0)))
    for name in (GOLDEN_NODE, "gpu-su02-h05", demo.nodes[-1].name):
        eths = yaml_of(render_host_files(demo, node(demo, name))[NETPLAN])["network"]["ethernets"]
        links = host_links(demo, name)
        assert sorted(eths) == sorted(lk.a_port for lk in links)
        for lk in links:
            cfg = eths[lk.a_port]
            a, b = ip_str(lk.a_ip), ip_str(lk.b_ip)
            assert cfg["addresses"] == [f"{a}/{lk.prefixlen}"]
            assert cfg["routing-policy"][0]["from"] == a
            agg_routes = [r for r in cfg["routes"] if r["to"] == agg]
            assert len(agg_routes) == 1 and agg_routes[0]["via"] == b
            assert {
                "to": f"{ip_str(lk.network)}/{lk.prefixlen}",
                "scope": "link",
                "from": a,
                "table": cfg["routing-policy"][0]["table"],
            } in cfg["routes"]


def test_rail_interface_settings(demo: Plan, h01: dict[str, str]) -> None:
    text = h01[NETPLAN]
    eths = yaml_of(text)["network"]["ethernets"]
    assert list(eths) == RAILS  # the settings below hold for every rail, not vacuously for none
    for cfg in eths.values():
        assert cfg["mtu"] == demo.intent.qos.host_mtu == 9000
        assert cfg["dhcp4"] is False and cfg["link-local"] == []
    # Only rail interfaces: nothing that could touch the management network.
    assert set(yaml_of(text)["network"]) == {"version", "ethernets"}
    assert "default" not in text and "0.0.0.0/0" not in text


@pytest.mark.parametrize("parity", ["even", "odd"])
def test_host_address_parity_is_honoured(parity: str) -> None:
    data = demo_dict()
    data["addressing"]["host_links"]["host_address"] = parity
    plan = plan_of(data)
    eths = yaml_of(render_host_files(plan, node(plan, GOLDEN_NODE))[NETPLAN])["network"]["ethernets"]
    assert list(eths) == RAILS
    for cfg in eths.values():
        addr, plen = cfg["addresses"][0].split("/")
        via = next(r for r in cfg["routes"] if "via" in r)["via"]
        host_last, leaf_last = int(addr.rsplit(".", 1)[1]), int(via.rsplit(".", 1)[1])
        assert plen == "31"
        assert host_last % 2 == (0 if parity == "even" else 1)
        assert leaf_last == host_last + (1 if parity == "even" else -1)


def test_twin_plane_gives_16_rail_interfaces() -> None:
    data = demo_dict()
    data["fabric"]["planes"] = 2
    data["host"]["interface_name"] = "rail{rail}p{plane}"
    plan = plan_of(data)
    files = render_host_files(plan, node(plan, GOLDEN_NODE))
    eths = yaml_of(files[NETPLAN])["network"]["ethernets"]
    expected = [f"rail{r}p{p}" for r in range(8) for p in range(2)]  # NIC order: rail * planes + plane
    assert list(eths) == expected
    assert [c["routing-policy"][0]["table"] for c in eths.values()] == list(range(101, 117))
    assert [c["routing-policy"][0]["priority"] for c in eths.values()] == [1010 + 10 * i for i in range(16)]
    hcas = nccl_vars(files[NCCL])["NCCL_IB_HCA"].lstrip("=").split(",")
    assert hcas == [f"mlx5_{i}:1" for i in range(16)]
    ports = orjson.loads(files[NIC])["ports"]
    assert [(p["rail"], p["plane"], p["interface"]) for p in ports] == [
        (r, p, f"rail{r}p{p}") for r in range(8) for p in range(2)
    ]


def test_rail_subnet_mode_routes_via_the_leaf_gateway() -> None:
    data = demo_dict()
    data["addressing"]["host_links"]["mode"] = "rail_subnet"
    plan = plan_of(data)
    eths = yaml_of(render_host_files(plan, node(plan, "gpu-su01-h03"))[NETPLAN])["network"]["ethernets"]
    for lk in host_links(plan, "gpu-su01-h03"):
        cfg = eths[lk.a_port]
        assert lk.prefixlen < 31
        assert cfg["addresses"] == [f"{ip_str(lk.a_ip)}/{lk.prefixlen}"]
        # the host-link block, the switches' pools and the demo's storage prefix, all via the leaf's gateway
        assert [(r["to"], r["via"]) for r in cfg["routes"] if "via" in r] == [
            (p, ip_str(lk.b_ip)) for p in ("172.16.0.0/16", *FABRIC_POOLS, "10.20.0.0/16")
        ]
        assert cfg["routes"][0]["to"] == f"{ip_str(lk.network)}/{lk.prefixlen}"


# The intent rules (hwaac.model.rules) are the one place these are refused; the renderers trust the plan.


def test_reserved_routing_table_is_refused() -> None:
    data = demo_dict()
    data["host"]["routing"] = {"table_base": 250}
    with pytest.raises(IntentError) as info:
        plan_of(data)
    assert [i.path for i in info.value.issues] == ["host.routing.table_base"]


def test_rule_after_main_table_rule_is_refused() -> None:
    data = demo_dict()
    data["host"]["routing"] = {"rule_priority_base": 32700, "rule_priority_step": 10}
    with pytest.raises(IntentError) as info:
        plan_of(data)
    assert [i.path for i in info.value.issues] == ["host.routing.rule_priority_base"]


def test_renderer_does_not_repeat_the_intent_rules() -> None:
    # One set of rules with one meaning: a plan whose validation was skipped is rendered as it stands, so the
    # renderers cannot drift from hwaac.model.rules with checks of their own.
    data = demo_dict()
    data["host"]["routing"] = {"table_base": 250}
    data["host"]["nccl_env"] = {"nccl_debug": "INFO"}
    plan = build_plan(Intent.model_validate(data), validate=False)
    files = render_host_files(plan, node(plan, GOLDEN_NODE))
    assert "table: 257" in files[NETPLAN]
    assert nccl_vars(files[NCCL])["nccl_debug"] == "INFO"


# --- NCCL -------------------------------------------------------------------------------------------------


def test_nccl_env(h01: dict[str, str]) -> None:
    env = nccl_vars(h01[NCCL])
    assert env["NCCL_IB_HCA"].startswith("="), "exact match, so mlx5_1 does not also select mlx5_10.."
    lines = h01[NCCL].splitlines()
    note = lines[lines.index(next(ln for ln in lines if ln.startswith("NCCL_IB_HCA="))) - 1]
    assert note.startswith("# NCCL_IB_HCA starts with '='"), "the comment above NCCL_IB_HCA explains the '='"
    assert "exact" in note and "mlx5_10" in note
    assert env["NCCL_IB_HCA"][1:].split(",") == [f"mlx5_{i}:1" for i in range(8)]
    assert env["NCCL_IB_TC"] == "106"
    assert env["NCCL_IB_GID_INDEX"] == "3"


def test_nccl_extras_and_tos_from_dscp() -> None:
    data = demo_dict()
    data["qos"]["roce_dscp"] = [24]
    data["host"]["nccl_env"] = {"NCCL_IB_QPS_PER_CONNECTION": "4", "NCCL_IB_GID_INDEX": "-1"}
    plan = plan_of(data)
    files = render_host_files(plan, plan.nodes[0])
    env = nccl_vars(files[NCCL])
    assert list(env) == ["NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_TC", "NCCL_IB_QPS_PER_CONNECTION"]
    assert env["NCCL_IB_TC"] == str(24 << 2 | 2) == "98"
    assert env["NCCL_IB_GID_INDEX"] == "-1"
    assert orjson.loads(files[NIC])["ports"][0]["roce_tos"] == 98


@pytest.mark.parametrize(("key", "value"), [("NCCL_X", "a\nb"), ("nccl_x", "1"), ("NCCL-X", "1")])
def test_bad_nccl_extra_is_refused(key: str, value: str) -> None:
    data = demo_dict()
    data["host"]["nccl_env"] = {key: value}
    with pytest.raises(IntentError) as info:
        plan_of(data)
    assert [i.path for i in info.value.issues] == [f"host.nccl_env.{key}"]


def test_hca_note_only_above_an_exact_match_list() -> None:
    data = demo_dict()
    data["host"]["nccl_env"] = {"NCCL_IB_HCA": "mlx5"}  # an operator's own prefix match
    plan = plan_of(data)
    text = render_host_files(plan, node(plan, GOLDEN_NODE))[NCCL]
    assert nccl_vars(text)["NCCL_IB_HCA"] == "mlx5"
    assert "starts with '='" not in text


# --- NIC / RoCE -------------------------------------------------------------------------------------------


def test_nic_roce_state(demo: Plan, h01: dict[str, str]) -> None:
    text = h01[NIC]
    doc = orjson.loads(text)
    assert text == orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"
    assert doc["node"] == GOLDEN_NODE
    ports = doc["ports"]
    assert [(p["port"], p["interface"], p["hca"]) for p in ports] == [(i, f"rail{i}", f"mlx5_{i}") for i in range(8)]
    for p in ports:
        pfc = p["pfc"].split(",")
        assert len(pfc) == 8 and [i for i, v in enumerate(pfc) if v == "1"] == [3]
        assert set(pfc) == {"0", "1"}
        assert p["roce_tos"] == 106
        assert p["trust"] == "dscp"
        assert p["ecn"] == {"np_priorities": [3], "rp_priorities": [3]}
        assert p["cnp"] == {"dscp": 48, "priority": 6}
        assert p["dscp2prio"] == {"26": 3, "48": 6}
        assert p["mtu"] == 9000
        assert p["mlxconfig"] == dict(demo.intent.host.mlxconfig)


def test_pfc_vector_and_ecn_follow_the_intent() -> None:
    data = demo_dict()
    data["qos"]["pfc_priorities"] = [3, 4]
    data["host"]["ecn_priorities"] = [4, 3]
    plan = plan_of(data)
    port = orjson.loads(render_host_files(plan, plan.nodes[0])[NIC])["ports"][0]
    assert port["pfc"] == "0,0,0,1,1,0,0,0"
    assert port["ecn"] == {"np_priorities": [3, 4], "rp_priorities": [3, 4]}


# --- sysctl -----------------------------------------------------------------------------------------------


def sysctl_of(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, _, v = line.partition("=")
            out[k.strip()] = v.strip()
    return out


CONF_KEYS = {"arp_ignore": 1, "arp_announce": 2, "rp_filter": 2}


def conf_scopes(s: dict[str, str]) -> set[str]:
    """The interface scopes (all, default, rail0, ...) of the net.ipv4.conf keys, dotted or slash form."""
    out = set()
    for k in s:
        for prefix, sep in (("net.ipv4.conf.", "."), ("net/ipv4/conf/", "/")):
            if k.startswith(prefix):
                out.add(k[len(prefix) :].rsplit(sep, 1)[0])
    return out


def effective(s: dict[str, str], iface: str, leaf: str, iface_value: int) -> int:
    """The value the kernel applies on ``iface`` for arp_ignore, arp_announce or rp_filter: the maximum of
    conf/all and conf/<iface> (Documentation/networking/ip-sysctl.rst); ``iface_value`` is what the interface
    has when the file does not set it (conf/default when it was created, usually 0)."""
    own = s.get(f"net.ipv4.conf.{iface}.{leaf}", s.get(f"net/ipv4/conf/{iface}/{leaf}", iface_value))
    return max(int(s.get(f"net.ipv4.conf.all.{leaf}", 0)), int(own))


def test_sysctl(h01: dict[str, str]) -> None:
    s = sysctl_of(h01[SYSCTL])
    for leaf, value in CONF_KEYS.items():
        assert s[f"net.ipv4.conf.all.{leaf}"] == str(value)
    # No per-rail keys (they fail at boot before the rails exist); conf.all holds on every rail because the
    # kernel applies max(conf/all, conf/<iface>) for these three keys, whatever the interface itself has.
    assert conf_scopes(s) <= {"all", "default"}
    for i in range(8):
        for leaf, value in CONF_KEYS.items():
            assert effective(s, f"rail{i}", leaf, 0) == value
            assert effective(s, f"rail{i}", leaf, 1) >= value
    # 4 SUs of capacity x 32 nodes = 128 node slots, x 8 NICs^2 (HPE/Cray gc_thresh1 = nodes x NICs^2)
    assert [s[f"net.ipv4.neigh.default.gc_thresh{i}"] for i in (1, 2, 3)] == ["8192", "16384", "32768"]
    assert "128 x 8^2" in h01[SYSCTL]


def test_sysctl_does_not_change_when_the_fabric_grows() -> None:
    texts = {}
    for su_count in (2, 3):
        data = demo_dict()
        data["fabric"]["su_count"] = su_count
        assert data["fabric"]["su_capacity"] == 4
        plan = plan_of(data)
        assert len([n for n in plan.nodes if n.kind == "gpu"]) == 32 * su_count
        texts[su_count] = render_host_files(plan, node(plan, GOLDEN_NODE))
    assert texts[2][SYSCTL] == texts[3][SYSCTL]
    assert texts[2] == texts[3], "no file of an existing host changes when an SU is added"


def test_neighbour_thresholds_floor_and_cap() -> None:
    assert neighbour_thresholds(1, 1) == (128, 512, 1024)  # kernel defaults as the floor
    assert neighbour_thresholds(12_500, 8) == (65_536, 131_072, 262_144)  # capped
    t1, t2, t3 = neighbour_thresholds(100, 4)
    assert (t1, t2, t3) == (1600, 3200, 6400) and t1 < t2 < t3


def test_sysctl_intent_thresholds_win_and_no_interface_keys() -> None:
    data = demo_dict()
    data["host"]["sysctl"] = {"net.ipv4.conf.all.rp_filter": 2, "net.ipv4.neigh.default.gc_thresh1": 999}
    data["host"]["interface_name"] = "rail{rail}.100"
    plan = plan_of(data)
    text = render_host_files(plan, plan.nodes[0])[SYSCTL]
    s = sysctl_of(text)
    assert s["net.ipv4.neigh.default.gc_thresh1"] == "999"
    assert [ln for ln in text.splitlines() if ln.startswith("net.ipv4.neigh.default.gc_thresh1")] == [
        "net.ipv4.neigh.default.gc_thresh1 = 999"
    ]
    assert conf_scopes(s) == {"all"}  # exactly the intent's keys, no copies for rail0.100 ...
    assert effective(s, "rail0.100", "rp_filter", 0) == 2


# --- appliances -------------------------------------------------------------------------------------------


def test_appliance_gets_network_files_but_no_nccl() -> None:
    data = demo_dict()
    data["fabric"]["appliances"] = [{"name": "stor-01", "su": 1, "slot": 32, "rails": [0, 1, 2, 3]}]
    plan = plan_of(data)
    appliance = node(plan, "stor-01")
    assert appliance.kind == "appliance"
    files = render_host_files(plan, appliance)
    assert set(files) == {NETPLAN, SYSCTL, NIC}
    eths = yaml_of(files[NETPLAN])["network"]["ethernets"]
    assert list(eths) == ["rail0", "rail1", "rail2", "rail3"]
    assert [c["routing-policy"][0]["table"] for c in eths.values()] == [101, 102, 103, 104]
    assert conf_scopes(sysctl_of(files[SYSCTL])) <= {"all", "default"}


def test_each_plane_routes_only_its_own_host_block() -> None:
    data = demo_dict()
    data["fabric"]["planes"] = 2
    data["host"]["interface_name"] = "rail{rail}p{plane}"
    plan = plan_of(data)
    blocks = {p: plan.host_aggregate(p) for p in range(2)}
    # the /16 pool splits into one /17 per plane, and every host address lies in its plane's block
    assert {(ip_str(n), plen) for n, plen in blocks.values()} == {("172.16.0.0", 17), ("172.16.128.0", 17)}
    for link in plan.links:
        if link.kind == "host":
            net, plen = blocks[link.plane]
            assert net <= link.a_ip < net + (1 << (32 - plen))
    text = render_host_files(plan, plan.nodes[0])[NETPLAN]
    assert text.count("to: 172.16.0.0/17") == 8 and text.count("to: 172.16.128.0/17") == 8
