"""FRR's ``show bgp summary json`` over recorded outputs of FRR 7.2 to 10.5 (tests/fixtures/telemetry/frr/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hwaac.telemetry.model import canonical
from hwaac.telemetry.parsers.frr_bgp import BgpSummary, parse_bgp_summary

FIXTURES = Path(__file__).parents[2] / "fixtures"
FRR = FIXTURES / "telemetry" / "frr"
VERIFY = FIXTURES / "verify" / "recorded"
UPDATE_DELAY = FIXTURES / "tools" / "frr" / "show-bgp-summary-json-update-delay.out"
FRR_10_5 = FIXTURES / "tools" / "sonic" / "vtysh-show-bgp-summary-json.out"


def recorded(scenario: str, device: str) -> str:
    """``show bgp summary json`` of the twin's recording (FRR 8.4.4)."""
    data = json.loads((VERIFY / scenario / f"{device}.json").read_text())
    return data["outputs"]["vtysh -c 'show bgp summary json'"]["stdout"]


def text(name: str) -> str:
    return (FRR / name).read_text()


LEAF, SPINE = "leaf-p0-su01-r0", "spine-p0-01"
SOURCES = {
    "7.2 sonic": lambda: text("bgp-summary-7.2-sonic-t1.json"),
    "7.3 unnumbered": lambda: text("bgp-summary-7.3-unnumbered_derived.json"),
    "8.0dev admin": lambda: text("bgp-summary-8.0dev-idle-admin.json"),
    "8.4 unnumbered": lambda: text("bgp-summary-8.4-unnumbered.json"),
    "8.4 swp2 down": lambda: text("bgp-summary-8.4-unnumbered-swp2-down.json"),
    "8.4 after flap": lambda: text("bgp-summary-8.4-unnumbered-after-flap.json"),
    "8.4 vrf all": lambda: text("bgp-vrf-all-summary-8.4.json"),
    "8.4 ip bgp": lambda: text("ip-bgp-summary-8.4.json"),
    "8.4 flat": lambda: text("bgp-ipv4-unicast-summary-8.4.json"),
    "8.4 healthy": lambda: recorded("healthy", LEAF),
    "8.4 link down": lambda: recorded("link_down", LEAF),
    "8.4 shutdown": lambda: recorded("session_shutdown", SPINE),
    "8.4 wrong asn": lambda: recorded("wrong_asn", LEAF),
    "8.4 update delay": lambda: UPDATE_DELAY.read_text(),
    "10.5 spine": lambda: FRR_10_5.read_text(),
}

PEERS = [
    # source, peer key, (state, peer_state, remote AS, interface, hostname),
    #   (prefixes received, sent, connections established, dropped, uptime s), families
    ("7.2 sonic", "10.0.0.1", ("Established", "", 65200, "", ""), (6402, 1, 1, 0, 162683.0), ("ipv4Unicast",)),
    ("7.2 sonic", "10.0.0.33", ("Active", "", 64001, "", ""), (0, None, 0, 0, None), ("ipv4Unicast",)),
    (
        "7.3 unnumbered",
        "ens4f0",
        ("Established", "", 4200049152, "ens4f0", "edge000a"),
        (41, 1, 3, 2, 13377756.0),
        ("ipv4Unicast",),
    ),
    ("8.0dev admin", "192.168.0.1", ("Idle", "Admin", 100, "", "exit1-debian-9"), (0, 0, 1, 1, 9.0), ("ipv4Unicast",)),
    (
        "8.4 unnumbered",
        "swp1",
        ("Established", "OK", 65002, "swp1", "spineB"),
        (11, 13, 1, 0, 4.0),
        ("ipv4Unicast", "ipv6Unicast"),
    ),
    (
        "8.4 swp2 down",
        "swp2",
        ("Idle", "OK", 65002, "swp2", "spineB"),
        (0, 0, 1, 1, 6.0),
        ("ipv4Unicast", "ipv6Unicast"),
    ),
    (
        "8.4 after flap",
        "swp2",
        ("Established", "OK", 65002, "swp2", "spineB"),
        (11, 13, 2, 1, 5.0),
        ("ipv4Unicast", "ipv6Unicast"),
    ),
    ("8.4 vrf all", "RED/192.168.50.2", ("Idle", "OK", None, "", ""), (0, 0, 0, 0, None), ("ipv4Unicast",)),
    ("8.4 ip bgp", "swp1", ("Established", "OK", 65002, "swp1", "spineB"), (6, 7, 1, 0, 4.0), ("ipv4Unicast",)),
    ("8.4 flat", "swp2", ("Established", "OK", 65002, "swp2", "spineB"), (6, 7, 1, 0, 4.0), ("",)),
    (
        "8.4 healthy",
        "10.1.0.0",
        ("Established", "OK", 4200000001, "", "spine-p0-01"),
        (10, 14, 1, 0, 9.0),
        ("ipv4Unicast",),
    ),
    (
        "8.4 link down",
        "10.1.0.0",
        ("Active", "OK", 4200000001, "", "spine-p0-01"),
        (0, 0, 1, 1, 10.0),
        ("ipv4Unicast",),
    ),
    (
        "8.4 shutdown",
        "10.1.0.5",
        ("Idle", "Admin", 4200100000, "", "leaf-p0-su01-r0"),
        (0, 0, 1, 1, 12.0),
        ("ipv4Unicast",),
    ),
    ("8.4 wrong asn", "10.1.0.0", ("Idle", "OK", 4200000099, "", "spine-p0-01"), (0, 0, 1, 1, 8.0), ("ipv4Unicast",)),
    (
        "8.4 update delay",
        "10.1.0.0",
        ("Active", "OK", 4200000001, "", "spine-p0-01"),
        (0, 0, 5, 5, 5.0),
        ("ipv4Unicast",),
    ),
    ("10.5 spine", "10.200.1.19", ("Established", "OK", 65000, "", "edge"), (2, 5, 1, 0, 3.0), ("ipv4Unicast",)),
]


@pytest.mark.parametrize(("source", "key", "state", "counts", "families"), PEERS)
def test_peer_facts(source: str, key: str, state: tuple, counts: tuple, families: tuple[str, ...]) -> None:
    s = parse_bgp_summary(SOURCES[source](), device="sw1", version="x")
    assert s.parsed and s.unknown == []
    p = s.peers[key]
    assert (p.state, p.peer_state, p.remote_as, p.interface, p.hostname) == state
    assert (
        p.prefixes_received,
        p.prefixes_sent,
        p.connections_established,
        p.connections_dropped,
        p.uptime_s,
    ) == counts
    assert p.families == families
    assert (s.device, s.version) == ("sw1", "x")


SUMMARIES = [
    # source, peers, Established, router id, local AS, families, taken_at (epoch + uptime of a peer)
    ("7.2 sonic", 24, 8, "10.1.0.32", 65100, ["ipv4Unicast"], 1597732920 + 162683.0),
    ("8.0dev admin", 1, 0, "192.168.3.2", 200, ["ipv4Unicast"], 1606206209 + 9.0),
    ("8.4 vrf all", 3, 2, "10.0.0.1", 65001, ["ipv4Unicast", "ipv6Unicast", "RED/ipv4Unicast"], None),
    ("8.4 flat", 2, 2, "10.0.0.1", 65001, [""], None),
    ("8.4 healthy", 4, 4, "10.0.0.1", 4200100000, ["ipv4Unicast"], 1796160817 + 9.0),
    ("10.5 spine", 3, 3, "10.200.255.2", 65100, ["ipv4Unicast"], 1789875491 + 3.0),
]


@pytest.mark.parametrize(("source", "peers", "up", "router_id", "local_as", "families", "taken_at"), SUMMARIES)
def test_summary_facts(
    source: str, peers: int, up: int, router_id: str, local_as: int, families: list[str], taken_at: float | None
) -> None:
    s = parse_bgp_summary(SOURCES[source]())
    assert (len(s.peers), len(s.established()), s.router_id, s.local_as) == (peers, up, router_id, local_as)
    assert list(s.families) == families
    if taken_at is not None:
        assert s.taken_at == taken_at


def test_vrf_all_keeps_each_vrf_apart() -> None:
    s = parse_bgp_summary(SOURCES["8.4 vrf all"]())
    red = s.families["RED/ipv4Unicast"]
    assert (red.vrf, red.router_id, red.local_as, red.peers) == ("RED", "10.0.0.1", 65001, ("RED/192.168.50.2",))
    assert s.peers["RED/192.168.50.2"].name == "192.168.50.2" and s.peers["RED/192.168.50.2"].vrf == "RED"
    assert s.families["ipv4Unicast"].peers == ("swp1", "swp2") and s.peers["swp1"].vrf == "default"


def test_update_delay_and_table_version() -> None:
    fam = parse_bgp_summary(SOURCES["8.4 update delay"]()).families["ipv4Unicast"]
    assert fam.update_delay_in_progress and fam.table_version == 102
    assert not parse_bgp_summary(SOURCES["8.4 healthy"]()).families["ipv4Unicast"].update_delay_in_progress


def test_a_family_down_is_never_hidden_behind_an_established_one() -> None:
    doc = json.loads(SOURCES["8.4 unnumbered"]())
    # derived: swp1 over its IPv6 maximum-prefix, as bgp_show_summary prints it (state and peerState)
    doc["ipv6Unicast"]["peers"]["swp1"].update(state="Idle (PfxCt)", peerState="PfxCt")
    p = parse_bgp_summary(json.dumps(doc)).peers["swp1"]
    assert (p.state, p.peer_state) == ("Idle", "PfxCt")


@pytest.mark.parametrize(
    ("source", "key", "label"),
    [
        ("8.4 shutdown", "10.1.0.5", "Idle (Admin)"),  # peerState Admin (8.0+)
        ("8.0dev admin", "192.168.0.1", "Idle (Admin)"),  # the reason only in state (before 8.0)
        ("8.4 link down", "10.1.0.0", "Active"),  # peerState OK: no reason
        ("8.4 healthy", "10.1.0.0", "Established"),
    ],
)
def test_label_words_the_state_as_frr_text_does(source: str, key: str, label: str) -> None:
    assert parse_bgp_summary(SOURCES[source]()).peers[key].label == label


def test_asdot_remote_as() -> None:
    doc = json.loads(SOURCES["10.5 spine"]())
    doc["ipv4Unicast"]["peers"]["10.200.1.19"]["remoteAs"] = "1.10"  # lib/asn.c asn_asn2json in asdot notation
    assert parse_bgp_summary(json.dumps(doc)).peers["10.200.1.19"].remote_as == 65546


def test_snapshot_counts_flaps_per_peer() -> None:
    s = parse_bgp_summary(SOURCES["8.4 after flap"](), device="leafA")
    snap = s.snapshot()
    assert (snap.tool, snap.device, snap.taken_at) == ("show bgp summary json", "leafA", s.taken_at)
    assert snap.ports["swp2"].counters == {"bgp_established": 2, "bgp_dropped": 1}
    assert snap.ports["swp1"].counters == {"bgp_established": 1, "bgp_dropped": 0}
    assert snap.ports["swp2"].state["bgp_state"] == "Established" and snap.ports["swp2"].state["remote_as"] == "65002"
    assert all(canonical(c) for p in snap.ports.values() for c in p.counters)


def test_fields_an_older_frr_does_not_print_are_none_without_a_reason() -> None:
    doc = json.loads(SOURCES["7.2 sonic"]())
    peer = doc["ipv4Unicast"]["peers"]["10.0.0.1"]
    for key in ("connectionsEstablished", "connectionsDropped"):  # derived: FRR 7.0/7.1 print neither
        del peer[key]
    s = parse_bgp_summary(json.dumps(doc))
    assert s.peers["10.0.0.1"].connections_dropped is None and s.unknown == []
    assert s.snapshot().ports["10.0.0.1"].counters == {"bgp_established": None, "bgp_dropped": None}


@pytest.mark.parametrize(("field", "value"), [("pfxRcd", "N/A"), ("connectionsDropped", None), ("msgRcvd", 1.5)])
def test_an_unreadable_value_is_none_with_a_reason(field: str, value: object) -> None:
    doc = json.loads(SOURCES["8.4 healthy"]())
    doc["ipv4Unicast"]["peers"]["10.1.0.2"][field] = value  # derived from the recording: one value replaced
    s = parse_bgp_summary(json.dumps(doc))
    p = s.peers["10.1.0.2"]
    read = {"pfxRcd": p.prefixes_received, "connectionsDropped": p.connections_dropped, "msgRcvd": p.msg_rcvd}
    assert read[field] is None
    if value is not None:  # null: as if not printed
        assert any("10.1.0.2" in u and field in u for u in s.unknown)
    assert s.peers["10.1.0.0"].prefixes_received == 10  # the other peers still read


def test_a_peer_without_state_is_named() -> None:
    doc = json.loads(SOURCES["8.4 healthy"]())
    del doc["ipv4Unicast"]["peers"]["10.1.0.4"]["state"]
    s = parse_bgp_summary(json.dumps(doc))
    assert s.peers["10.1.0.4"].state is None and not s.peers["10.1.0.4"].established
    assert any("10.1.0.4" in u and "state" in u for u in s.unknown)


NOT_A_SUMMARY = [
    ("", "empty output"),
    ("% Unknown command: show bgp summary jsn\n", "Unknown command"),
    ("Exiting: failed to connect to any daemons.\n", "failed to connect"),
    ('[{"ifindex": 1, "ifname": "lo", "flags": ["LOOPBACK", "UP"], "mtu": 65536}]', "list"),  # ip -j link show
    ('{"lldp": [{"interface": [{"name": "Ethernet0"}]}]}', "not a BGP summary"),  # lldpcli -f json0
    ('{"10.0.0.1/32": [{"protocol": "connected", "selected": true}]}', "not a BGP summary"),  # show ip route json
]


@pytest.mark.parametrize(("raw", "why"), NOT_A_SUMMARY)
def test_other_output_is_unknown_and_gives_no_peer(raw: str, why: str) -> None:
    s = parse_bgp_summary(raw)
    assert not s.parsed and s.peers == {} and s.unknown
    assert any(why in u for u in s.unknown)


@pytest.mark.parametrize("raw", ["{}\n", '{\n"default":{}\n}\n'])
def test_no_neighbour_is_an_empty_summary(raw: str) -> None:
    s = parse_bgp_summary(raw)
    assert s.parsed and s.peers == {} and s.unknown == []


def test_two_documents_one_after_the_other() -> None:
    """vtysh prints one document per ``-c``: both are read."""
    s = parse_bgp_summary(SOURCES["8.4 ip bgp"]() + SOURCES["8.0dev admin"]())
    assert set(s.peers) == {"swp1", "swp2", "192.168.0.1"} and s.unknown == []


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("cut", [0.1, 0.5, 0.93])
def test_a_truncated_output_is_unknown_and_invents_nothing(source: str, cut: float) -> None:
    raw = SOURCES[source]()
    s = parse_bgp_summary(raw[: int(len(raw) * cut)])
    assert s.unknown and s.peers == {} and not s.parsed


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_never_raises_at_any_cut(source: str) -> None:
    raw = SOURCES[source]()
    for end in range(0, len(raw), max(1, len(raw) // 97)):
        assert isinstance(parse_bgp_summary(raw[:end]), BgpSummary)
    assert isinstance(parse_bgp_summary(raw.encode()), BgpSummary)
