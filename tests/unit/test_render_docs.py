"""Fabric documents: golden files for the demo, and behaviour checks computed independently of the renderer.

Regenerate the golden files with ``HWAAC_UPDATE_GOLDEN=1 pytest tests/unit/test_render_docs.py`` and review
the diff before committing it.
"""

from __future__ import annotations

import copy
import csv
import io
import ipaddress
import os
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from hwaac.model.intent import Intent
from hwaac.plan import build_plan
from hwaac.render.docs import render_docs
from hwaac.validate import load_intent

REPO = Path(__file__).parents[2]
GOLDEN = REPO / "tests" / "golden" / "demo" / "docs"
SVG_NS = "{http://www.w3.org/2000/svg}"


def intent_dict(name: str) -> dict:
    path = REPO / "inventory" / ("demo" if name == "demo" else f"examples/{name}") / "fabric.yml"
    return YAML(typ="safe").load(path.read_text())


def docs_of(d: dict):
    plan = build_plan(Intent.model_validate(d))
    return plan, render_docs(plan)


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def md_table(report: str, heading: str) -> dict[str, list[str]]:
    """The first Markdown table under ``## heading``: first cell -> the other cells."""
    section = report.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in section.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            out[cells[0]] = cells[1:]
    return out


@pytest.fixture(scope="module")
def demo():
    plan = build_plan(load_intent(REPO / "inventory" / "demo"))
    return plan, render_docs(plan)


# --- golden files -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cabling.csv", "ip-plan.csv", "report.md", "topology.svg"])
def test_demo_matches_golden(demo, name):
    _, docs = demo
    path = GOLDEN / name
    if os.environ.get("HWAAC_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(docs[name])
    assert path.exists(), f"{path} missing: run with HWAAC_UPDATE_GOLDEN=1 and review it"
    assert docs[name] == path.read_text(), f"{name} differs from {path} (HWAAC_UPDATE_GOLDEN=1 to accept)"


def test_render_docs_returns_the_four_documents(demo):
    _, docs = demo
    assert list(docs) == ["cabling.csv", "ip-plan.csv", "report.md", "topology.svg"]


def test_rendering_twice_is_byte_identical(demo):
    plan, docs = demo
    again = render_docs(plan)
    assert {k: v.encode() for k, v in again.items()} == {k: v.encode() for k, v in docs.items()}
    plan2 = build_plan(load_intent(REPO / "inventory" / "demo"))
    assert render_docs(plan2) == docs


# --- cabling.csv ------------------------------------------------------------------------------------------


def test_cabling_one_row_per_link_with_unique_ids(demo):
    plan, docs = demo
    r = rows(docs["cabling.csv"])
    assert list(r[0]) == ["cable_id", "kind", "plane", "a_device", "a_port", "b_device", "b_port", "speed_gbps", "rail"]
    assert len(r) == len(plan.links) == 1024
    ids = [x["cable_id"] for x in r]
    assert len(set(ids)) == len(ids)
    assert ids == [ln.cable_id for ln in plan.links]  # plan order


def test_cabling_every_port_used_at_most_once(demo):
    _, docs = demo
    ends = Counter()
    for x in rows(docs["cabling.csv"]):
        ends[x["a_device"], x["a_port"]] += 1
        ends[x["b_device"], x["b_port"]] += 1
    dup = [k for k, n in ends.items() if n > 1]
    assert not dup
    # 16 leaves use 32 down + 32 up ports each; 8 spines 2 SUs x 8 rails x 4 links each
    leaf_ports = sum(1 for (dev, _) in ends if dev.startswith("leaf-"))
    spine_ports = sum(1 for (dev, _) in ends if dev.startswith("spine-"))
    assert (leaf_ports, spine_ports) == (16 * 64, 8 * 64)


def test_cabling_speed_and_rail(demo):
    _, docs = demo
    r = rows(docs["cabling.csv"])
    host = [x for x in r if x["kind"] == "host"]
    up = [x for x in r if x["kind"] == "leaf_spine"]
    assert {x["speed_gbps"] for x in r} == {"400"}
    # rail r NIC of every node goes to the rail-r leaf of its SU (the rail rule), and the rail is recorded
    for x in host:
        assert x["a_port"] == f"rail{x['rail']}"
        assert x["b_device"].endswith(f"-r{x['rail']}")
        assert x["b_device"].split("-")[2] == x["a_device"].split("-")[1]  # same SU
    assert all(x["rail"] == "" for x in up)


def test_cabling_speed_follows_switch_models():
    d = intent_dict("demo")
    d["fabric"]["host_port_speed_gbps"] = 800  # an 800G fabric: SN5600 as 64 x 800G at both tiers
    d["switches"]["leaf"]["model"] = d["switches"]["spine"]["model"] = "SN5600"
    _plan, docs = docs_of(d)
    speeds = {(x["kind"], x["speed_gbps"]) for x in rows(docs["cabling.csv"])}
    assert speeds == {("host", "800"), ("leaf_spine", "800")}


# --- ip-plan.csv ------------------------------------------------------------------------------------------


def test_ip_plan_addresses_unique_and_p2p_rows_pair(demo):
    _plan, docs = demo
    r = rows(docs["ip-plan.csv"])
    assert len(r) == 24 + 2 * 1024  # loopbacks + both ends of every /31
    addrs = [x["address"].split("/")[0] for x in r]
    assert len(set(addrs)) == len(addrs)
    by_end = {(x["device"], x["interface"]): x for x in r}
    assert len(by_end) == len(r)
    p2p = [x for x in r if x["address"].endswith("/31")]
    assert len(p2p) == 2048
    for x in p2p:
        peer = by_end[x["peer_device"], x["peer_interface"]]
        assert (peer["peer_device"], peer["peer_interface"]) == (x["device"], x["interface"])
        assert peer["cable_id"] == x["cable_id"] and peer["kind"] == x["kind"]
        net = ipaddress.ip_interface(x["address"]).network
        assert ipaddress.ip_interface(peer["address"]).network == net
        assert x["address"] != peer["address"]
    # host odd / leaf even (Juniper JVD convention, host_address: odd)
    first = by_end["gpu-su01-h01", "rail0"]
    assert first["address"] == "172.16.0.1/31"
    assert by_end["leaf-p0-su01-r0", "Ethernet0"]["address"] == "172.16.0.0/31"
    assert first["role"] == "node" and by_end["leaf-p0-su01-r0", "Ethernet0"]["role"] == "leaf"


def test_ip_plan_loopbacks(demo):
    plan, docs = demo
    lo = [x for x in rows(docs["ip-plan.csv"]) if x["interface"] == "Loopback0"]
    assert len(lo) == len(plan.switches) == 24
    assert all(x["address"].endswith("/32") and x["kind"] == "loopback" and x["peer_device"] == "" for x in lo)
    assert {x["device"]: x["address"] for x in lo}["spine-p0-01"] == "10.0.1.1/32"


def test_ip_plan_rail_subnet_lists_each_gateway_once():
    d = intent_dict("demo")
    d["addressing"]["host_links"]["mode"] = "rail_subnet"
    plan, docs = docs_of(d)
    r = rows(docs["ip-plan.csv"])
    gateways = [x for x in r if x["interface"].startswith("Vlan")]
    leaves = [s for s in plan.switches if s.role == "leaf"]
    assert len(gateways) == len(leaves) == 16
    assert len({x["device"] for x in gateways}) == 16
    hosts = [x for x in r if x["role"] == "node"]
    assert len(hosts) == 512
    assert len(r) == 24 + 16 + 512 + 2 * 512
    addrs = [x["address"].split("/")[0] for x in r]
    assert len(set(addrs)) == len(addrs)
    gw = {x["device"]: x for x in gateways}
    # 32 downlinks + network, gateway, broadcast -> /26 per leaf; the leaf takes the first host address
    assert gw["leaf-p0-su01-r0"]["address"] == "172.16.0.1/26"
    assert gw["leaf-p0-su01-r1"]["address"] == "172.16.0.65/26"
    for x in hosts:
        g = gw[x["peer_device"]]
        assert x["peer_interface"] == g["interface"]
        assert ipaddress.ip_interface(x["address"]).network == ipaddress.ip_interface(g["address"]).network


def test_ip_plan_roles_of_appliances():
    d = intent_dict("h100-4su")
    _plan, docs = docs_of(d)
    r = rows(docs["ip-plan.csv"])
    ufm = [x for x in r if x["device"] == "ufm-01"]
    assert len(ufm) == 4 and {x["role"] for x in ufm} == {"appliance"}
    assert sum(1 for x in r if x["role"] == "node") == 127 * 8


# --- report.md --------------------------------------------------------------------------------------------


def test_report_counts_match_intent_arithmetic(demo):
    _plan, docs = demo
    rep = docs["report.md"]
    f = intent_dict("demo")["fabric"]
    leaves = f["su_count"] * f["rails"] * f["planes"]  # 2 x 8 = 16
    uplinks = 32  # 32 downlinks at oversubscription 1.0
    spines = f["su_capacity"] * f["rails"] * uplinks // 128  # 128-port spines sized for 4 SUs = 8
    host_links = f["su_count"] * f["nodes_per_su"] * f["rails"]  # 512
    up_links = leaves * uplinks  # 512
    assert (leaves, spines, host_links, up_links) == (16, 8, 512, 512)

    dev = md_table(rep, "Devices")
    assert dev["leaf"][-1] == str(leaves) and dev["spine"][-1] == str(spines)
    assert dev["all switches"][-1] == str(leaves + spines)
    cab = md_table(rep, "Cables")
    assert cab["host"][0] == str(host_links) and cab["leaf_spine"][0] == str(up_links)
    assert cab["all"][0] == str(host_links + up_links)
    ports = md_table(rep, "Port usage")
    assert ports["leaf"][:4] == [str(leaves), "128", str(host_links + up_links), str(leaves * 128)]
    assert ports["spine"][2:4] == [str(up_links), str(spines * 128)]
    summ = md_table(rep, "Summary")
    assert summ["GPU nodes"] == ["64"] and summ["GPUs"] == ["512"] and summ["tiers"] == ["2"]
    over = md_table(rep, "Oversubscription")
    assert over["leaf downlinks (to nodes)"] == ["32", "400", "12800"]
    assert over["leaf uplinks (to spines)"] == ["32", "400", "12800"]
    assert "= 1.00:1" in rep
    size = md_table(rep, "Spine sizing")
    assert size["links per leaf-spine pair"] == [str(uplinks // spines)]


def test_report_pool_utilisation_by_hand(demo):
    _, docs = demo
    pools = md_table(docs["report.md"], "Address pools")
    # leaf-spine /31s: 16 leaves x 32 uplinks x 2 = 1024 of a /20 (4096) now; 32 leaves at capacity
    assert pools["leaf_spine"] == ["10.1.0.0/20", "1024", "2048", "4096", "25.00", "50.00"]
    # leaf loopbacks: 16 of 256 now, 32 at capacity + the unused first address
    assert pools["loopback_leaf"] == ["10.0.0.0/24", "16", "33", "256", "6.25", "12.89"]
    # host /31s: 512 links x 2 = 1024 of 65536 = 1.5625 %
    assert pools["host_links"][:5] == ["172.16.0.0/16", "1024", "2048", "65536", "1.56"]
    assert set(pools) == {"pool", "loopback_leaf", "loopback_spine", "leaf_spine", "host_links"}


def test_report_pool_in_use_counts_populated_links_only():
    # h100-4su: 127 GPU nodes x 8 + a 4-port UFM = 1020 host links (NVIDIA H100 RA, table 4)
    _, docs = docs_of(intent_dict("h100-4su"))
    pools = md_table(docs["report.md"], "Address pools")
    assert pools["host_links"] == ["172.16.0.0/16", "2040", "2048", "65536", "3.11", "3.12"]


def test_report_asns_and_qos(demo):
    _, docs = demo
    asn = md_table(docs["report.md"], "ASNs")
    assert asn["leaf"] == ["4200100000-4200100015", "16", "4200100000-4200199999"]
    assert asn["spine"] == ["4200000001-4200000001", "1", "4200000001-4200009999"]
    qos = md_table(docs["report.md"], "QoS (RoCE)")
    assert qos["DSCP -> priority (RoCE, lossless)"] == ["26 -> 3"]
    assert qos["DSCP -> priority (CNP, strict)"] == ["48 -> 6"]
    assert qos["ECN min threshold (bytes)"] == ["150000"] and qos["ECN max threshold (bytes)"] == ["1500000"]
    assert qos["switch MTU (bytes)"] == ["9100"] and qos["host MTU (bytes)"] == ["9000"]
    assert not re.search(r"20\d\d-\d\d-\d\d", docs["report.md"])  # no timestamps


def test_report_three_tiers_matches_published_b200():
    # NVIDIA DGX SuperPOD B200: 16 SUs -> 128 leaves, 128 spines, 64 core; 8 cables per node in each tier
    _, docs = docs_of(intent_dict("b200-3tier"))
    rep = docs["report.md"]
    dev = md_table(rep, "Devices")
    assert (dev["leaf"][-1], dev["spine"][-1], dev["super_spine"][-1]) == ("128", "128", "64")
    cab = md_table(rep, "Cables")
    nodes = 16 * 32
    assert (cab["host"][0], cab["leaf_spine"][0], cab["spine_super_spine"][0]) == (str(nodes * 8),) * 3
    assert "spine_super_spine" in md_table(rep, "Address pools")
    assert md_table(rep, "ASNs")["super_spine"][1] == "1"


def test_report_twin_plane_counts_per_plane():
    _, docs = docs_of(intent_dict("b300-twin-plane"))
    dev = md_table(docs["report.md"], "Devices")
    assert dev["role"] == ["model", "plane 0", "plane 1", "total"]
    assert dev["leaf"][1:] == ["32", "32", "64"]  # 4 SUs x 8 rails per plane


# --- topology.svg -----------------------------------------------------------------------------------------


def svg_texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(t.itertext()) for t in root.iter(f"{SVG_NS}text")]


def test_topology_svg_shows_su1(demo):
    plan, docs = demo
    texts = svg_texts(docs["topology.svg"])
    su1 = [s.name for s in plan.switches if s.role == "leaf" and s.su == 1]
    assert len(su1) == 8
    for name in su1 + [s.name for s in plan.switches if s.role == "spine"]:
        assert name in texts
    assert not any(s.name in texts for s in plan.switches if s.role == "leaf" and s.su == 2)
    # 32 nodes: the first 6, an ellipsis, the last
    assert "gpu-su01-h06" in texts and "gpu-su01-h32" in texts and "gpu-su01-h07" not in texts
    assert "25 more nodes" in texts
    # one labelled line per leaf-spine pair: 8 leaves x 8 spines, 4 links each
    assert texts.count("×4") == 64
    assert " id=" not in docs["topology.svg"]


def test_topology_svg_twin_plane_and_three_tiers():
    plan, docs = docs_of(intent_dict("b300-twin-plane"))
    texts = svg_texts(docs["topology.svg"])
    for s in plan.switches:
        if s.role == "leaf" and s.su == 1:
            assert s.name in texts
    assert any(t.startswith("Plane 1:") for t in texts)
    plan, docs = docs_of(intent_dict("b200-3tier"))
    texts = svg_texts(docs["topology.svg"])
    assert "64 super-spines of plane 0 (not drawn)" in texts
    pod1 = [s.name for s in plan.switches if s.role == "spine" and s.pod == 1]
    assert pod1[0] in texts and pod1[-1] in texts
    assert not any(s.name in texts for s in plan.switches if s.role == "spine" and s.pod == 2)


def test_topology_svg_draws_appliances_on_their_rails():
    d = copy.deepcopy(intent_dict("demo"))
    d["fabric"]["appliances"] = [{"name": "ufm-01", "su": 1, "slot": 2, "rails": [0, 1]}]
    _plan, docs = docs_of(d)
    svg = docs["topology.svg"]
    assert "ufm-01" in svg_texts(svg)
    ip = rows(docs["ip-plan.csv"])
    assert sum(1 for x in ip if x["role"] == "appliance") == 2
