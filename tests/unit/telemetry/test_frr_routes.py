"""FRR's ``show ip route json`` / ``show ipv6 route json`` over recorded outputs of FRR 7.2 and 8.4
(tests/fixtures/telemetry/frr/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hwaac.telemetry.parsers.frr_routes import Nexthop, RouteTable, parse_routes

FIXTURES = Path(__file__).parents[2] / "fixtures"
FRR = FIXTURES / "telemetry" / "frr"
VERIFY = FIXTURES / "verify" / "recorded"
LEAF = "leaf-p0-su01-r0"
LL1, LL2 = "fe80::80c3:7ff:fe66:afd0", "fe80::fc34:28ff:fe83:4a6"  # spineB's link-local addresses on swp1, swp2


def recorded(scenario: str, device: str = LEAF) -> str:
    """``show ip route json`` of the twin's recording (FRR 8.4.4)."""
    data = json.loads((VERIFY / scenario / f"{device}.json").read_text())
    return data["outputs"]["vtysh -c 'show ip route json'"]["stdout"]


SOURCES = {
    "7.2 sonic": lambda: (FRR / "ip-route-7.2-sonic-t1.json").read_text(),
    "8.4 unnumbered": lambda: (FRR / "ip-route-8.4-unnumbered.json").read_text(),
    "8.4 swp2 down": lambda: (FRR / "ip-route-8.4-unnumbered-swp2-down.json").read_text(),
    "8.4 ipv6": lambda: (FRR / "ipv6-route-8.4-unnumbered.json").read_text(),
    "8.4 healthy": lambda: recorded("healthy"),
    "8.4 link down": lambda: recorded("link_down"),
    "8.4 ecmp short": lambda: recorded("ecmp_short"),
}

ROUTES = [
    # source, prefix, protocol, selected, installed, entries, ECMP width, FIB next hops (any order)
    ("7.2 sonic", "0.0.0.0/0", "bgp", True, True, 3, 2, {"10.0.0.1", "10.0.0.5"}),
    ("7.2 sonic", "10.1.0.32/32", "connected", True, True, 1, 1, {"Loopback0"}),
    ("7.2 sonic", "100.1.0.3/32", "bgp", True, True, 1, 1, {"10.0.0.5"}),
    ("8.4 unnumbered", "172.16.1.0/24", "bgp", True, True, 1, 2, {f"{LL1}%swp1", f"{LL2}%swp2"}),
    ("8.4 unnumbered", "192.168.50.0/30", "connected", True, True, 1, 1, {"red1"}),
    ("8.4 swp2 down", "172.16.1.0/24", "bgp", True, True, 1, 1, {f"{LL1}%swp1"}),
    ("8.4 ipv6", "2001:db8:1:2::/64", "bgp", True, True, 1, 2, {f"{LL1}%swp1", f"{LL2}%swp2"}),
    ("8.4 ipv6", "::/0", "kernel", True, True, 1, 1, {f"{LL2}%swp2"}),
    ("8.4 ipv6", "fe80::/64", "connected", True, True, 3, 1, {"red1"}),
    ("8.4 healthy", "172.16.0.8/31", "bgp", True, True, 1, 4, {"10.1.0.0", "10.1.0.2", "10.1.0.4", "10.1.0.6"}),
    ("8.4 link down", "172.16.0.8/31", "bgp", True, True, 1, 3, {"10.1.0.2", "10.1.0.4", "10.1.0.6"}),
    ("8.4 ecmp short", "172.16.0.8/31", "bgp", True, True, 1, 2, {"10.1.0.0", "10.1.0.2"}),
    ("8.4 healthy", "172.16.0.0/31", "connected", True, True, 1, 1, {"Ethernet0"}),
]


@pytest.mark.parametrize(("source", "prefix", "protocol", "selected", "installed", "entries", "ecmp", "fib"), ROUTES)
def test_route_facts(
    source: str, prefix: str, protocol: str, selected: bool, installed: bool, entries: int, ecmp: int, fib: set[str]
) -> None:
    t = parse_routes(SOURCES[source](), device="leaf", version="x")
    assert t.parsed and t.unknown == [] and (t.device, t.version) == ("leaf", "x")
    r = t.routes[prefix]
    assert (r.prefix, r.protocol, r.selected, r.installed) == (prefix, protocol, selected, installed)
    assert r.entries == entries
    assert r.ecmp == ecmp and set(r.fib) == fib and len(r.fib) == ecmp
    assert t.ecmp()[prefix] == ecmp


def test_next_hops_as_listed() -> None:
    r = parse_routes(SOURCES["8.4 unnumbered"]()).routes["172.16.1.0/24"]
    assert set(r.nexthops) == {Nexthop(LL1, "swp1", True, True), Nexthop(LL2, "swp2", True, True)}
    assert (r.vrf, r.table, r.distance, r.metric) == ("default", 254, 20, 0)
    conn = parse_routes(SOURCES["7.2 sonic"]()).routes["10.1.0.32/32"]
    assert conn.nexthops == (Nexthop("", "Loopback0", True, True),) and conn.table == 254 and conn.vrf == "default"


def test_prefix_counts() -> None:
    assert len(parse_routes(SOURCES["7.2 sonic"]()).routes) == 38
    assert len(parse_routes(SOURCES["8.4 unnumbered"]()).routes) == 7


def test_a_next_hop_out_of_the_fib_is_listed_but_not_counted() -> None:
    doc = json.loads(SOURCES["8.4 healthy"]())
    hops = doc["172.16.0.8/31"][0]["nexthops"]
    del hops[1]["fib"]  # derived: zebra prints "fib" only for a next hop installed (show_nexthop_json_helper)
    del hops[2]["active"]
    r = parse_routes(json.dumps(doc)).routes["172.16.0.8/31"]
    assert len(r.nexthops) == 4 and r.ecmp == 2 and set(r.fib) == {"10.1.0.0", "10.1.0.6"}


def test_a_recursive_next_hop_counts_through_its_resolvers() -> None:
    doc = json.loads(SOURCES["7.2 sonic"]())
    # derived: a recursive next hop before its resolvers, as zebra lists them (flags 5, "recursive", no "fib")
    doc["100.1.0.3/32"][0]["nexthops"].insert(
        0, {"flags": 5, "ip": "10.1.0.34", "afi": "ipv4", "active": True, "recursive": True}
    )
    r = parse_routes(json.dumps(doc)).routes["100.1.0.3/32"]
    assert r.nexthops[0] == Nexthop("10.1.0.34", "", True, False) and r.ecmp == 1 and r.fib == ("10.0.0.5",)


def test_no_selected_entry_keeps_the_first_unselected() -> None:
    doc = json.loads(SOURCES["7.2 sonic"]())
    del doc["0.0.0.0/0"][1]["selected"]  # derived: no entry selected (e.g. every BGP next hop unresolved)
    r = parse_routes(json.dumps(doc)).routes["0.0.0.0/0"]
    assert (r.protocol, r.selected, r.installed, r.ecmp) == ("static", False, False, 0)
    assert parse_routes(json.dumps(doc)).ecmp()["0.0.0.0/0"] == 0


def test_vrf_keyed_output_of_frr_10_1() -> None:
    """``show ip route vrf all json`` since 10.1: one object keyed by VRF (zebra_vty.c show_route, vty_json_key)."""
    both = {"default": json.loads(SOURCES["8.4 unnumbered"]()), "RED": json.loads(SOURCES["7.2 sonic"]()), "BLUE": {}}
    t = parse_routes(json.dumps(both))
    assert t.parsed and t.unknown == []
    assert t.routes["172.16.1.0/24"].vrf == "default" and t.routes["RED/100.1.0.3/32"].vrf == "RED"
    assert t.routes["RED/100.1.0.3/32"].prefix == "100.1.0.3/32" and len(t.routes) == 7 + 38


def test_one_document_per_vrf_up_to_frr_10_0() -> None:
    """Up to 10.0 ``vrf all`` printed one document per VRF; vtysh does the same for several ``-c``."""
    t = parse_routes(SOURCES["8.4 unnumbered"]() + SOURCES["8.4 healthy"]())
    assert t.unknown == [] and "172.16.1.0/24" in t.routes and t.routes["172.16.0.8/31"].ecmp == 4


def test_a_malformed_prefix_is_named_and_the_rest_read() -> None:
    doc = json.loads(SOURCES["8.4 healthy"]())
    doc["172.16.0.8/31"] = "N/A"
    doc["10.0.0.2/32"][0]["nexthops"][0] = "?"
    t = parse_routes(json.dumps(doc))
    assert "172.16.0.8/31" not in t.routes and t.routes["10.0.0.2/32"].ecmp == 3
    assert any("172.16.0.8/31" in u for u in t.unknown) and any("10.0.0.2/32" in u for u in t.unknown)


NOT_ROUTES = [
    ("", "empty output"),
    ("% Unknown command: show ip route jsn\n", "Unknown command"),
    ("Exiting: failed to connect to any daemons.\n", "failed to connect"),
    ('[{"dst": "default", "gateway": "10.0.0.1", "dev": "eth0"}]', "list"),  # ip -j route
    ('{"ipv4Unicast": {"routerId": "10.0.0.1", "as": 65001, "peers": {}}}', "not a route table"),  # a BGP summary
]


@pytest.mark.parametrize(("raw", "why"), NOT_ROUTES)
def test_other_output_is_unknown_and_gives_no_route(raw: str, why: str) -> None:
    t = parse_routes(raw)
    assert not t.parsed and t.routes == {} and any(why in u for u in t.unknown)


def test_no_route_is_an_empty_table() -> None:
    t = parse_routes("{}\n")
    assert t.parsed and t.routes == {} and t.unknown == []


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("cut", [0.1, 0.5, 0.93])
def test_a_truncated_output_is_unknown_and_invents_nothing(source: str, cut: float) -> None:
    raw = SOURCES[source]()
    t = parse_routes(raw[: int(len(raw) * cut)])
    assert t.unknown and t.routes == {} and not t.parsed


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_never_raises_at_any_cut(source: str) -> None:
    raw = SOURCES[source]()
    for end in range(0, len(raw), max(1, len(raw) // 97)):
        assert isinstance(parse_routes(raw[:end]), RouteTable)
    assert isinstance(parse_routes(raw.encode()), RouteTable)
