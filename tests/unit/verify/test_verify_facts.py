"""The parsers over the recorded outputs (tests/fixtures/verify/recorded): the facts each format gives."""

from __future__ import annotations

import pytest

from hwaac.verify import commands as C
from hwaac.verify.facts import (
    FactError,
    parse_bgp_summary,
    parse_links,
    parse_lldp,
    parse_ping,
    parse_route_get,
    parse_routes,
)
from hwaac.verify.raw import Raw
from tests.unit.verify.recordings import raw

LEAF = "leaf-p0-su01-r0"

BGP_CASES = [
    # scenario, device, peer, state, remote AS, pfxRcd, peerState
    ("healthy", LEAF, "10.1.0.0", "Established", 4200000001, 10, "OK"),
    ("healthy", "spine-p0-01", "10.1.0.1", "Established", 4200100000, 3, "OK"),
    ("link_down", LEAF, "10.1.0.0", "Active", 4200000001, 0, "OK"),
    ("wrong_asn", LEAF, "10.1.0.0", "Idle", 4200000099, 0, "OK"),
    ("session_shutdown", "spine-p0-01", "10.1.0.5", "Idle", 4200100000, 0, "Admin"),
    ("spine_down", LEAF, "10.1.0.2", "Active", 4200000001, 0, "OK"),
]


@pytest.mark.parametrize(("scenario", "device", "peer", "state", "remote_as", "pfx", "peer_state"), BGP_CASES)
def test_bgp_summary(
    scenario: str, device: str, peer: str, state: str, remote_as: int, pfx: int, peer_state: str
) -> None:
    s = parse_bgp_summary(raw(scenario, device, C.BGP_SUMMARY.key))
    p = s.peers[peer]
    assert (p.state, p.remote_as, p.prefixes_received, p.peer_state) == (state, remote_as, pfx, peer_state)
    assert len(s.peers) == (4 if device.startswith("leaf") else 8)


def test_bgp_summary_local_as_and_router_id() -> None:
    s = parse_bgp_summary(raw("healthy", "spine-p0-02", C.BGP_SUMMARY.key))
    assert (s.local_as, s.router_id) == (4200000001, "10.0.1.2")


def test_vtysh_with_frr_down_is_daemon_down() -> None:
    r = raw("spine_down", "spine-p0-02", C.BGP_SUMMARY.key)
    assert r.rc == 1 and "failed to connect to any daemons" in r.stderr
    with pytest.raises(FactError) as exc:
        parse_bgp_summary(r)
    assert exc.value.kind == "daemon_down"
    with pytest.raises(FactError) as exc:
        parse_routes(raw("spine_down", "spine-p0-02", C.ROUTES.key))
    assert exc.value.kind == "daemon_down"


@pytest.mark.parametrize(
    ("raw_output", "kind"),
    [
        (Raw(C.BGP_SUMMARY.argv, error="timed out after 30 s"), "timeout"),
        (Raw(C.BGP_SUMMARY.argv, error="RuntimeError: namespace hwl-demo-x is gone"), "unreachable"),
        (Raw(C.BGP_SUMMARY.argv, 0, "% Unknown command: show bgp summary json\n"), "malformed"),
        (Raw(C.BGP_SUMMARY.argv, 0, "[1, 2]"), "malformed"),
        (Raw(C.BGP_SUMMARY.argv, 1, "", "% Unknown command\n"), "failed"),
    ],
)
def test_bgp_summary_errors(raw_output: Raw, kind: str) -> None:
    with pytest.raises(FactError) as exc:
        parse_bgp_summary(raw_output)
    assert exc.value.kind == kind


def test_bgp_summary_of_no_neighbour_is_empty() -> None:
    assert parse_bgp_summary(Raw(C.BGP_SUMMARY.argv, 0, "{}\n")).peers == {}


ROUTE_CASES = [
    # scenario, device, prefix, protocol, fib next hops
    ("healthy", LEAF, "172.16.0.8/31", "bgp", ("10.1.0.0", "10.1.0.2", "10.1.0.4", "10.1.0.6")),
    ("link_down", LEAF, "172.16.0.8/31", "bgp", ("10.1.0.2", "10.1.0.4", "10.1.0.6")),
    ("ecmp_short", LEAF, "172.16.0.8/31", "bgp", ("10.1.0.0", "10.1.0.2")),
    ("healthy", LEAF, "172.16.0.0/31", "connected", ("Ethernet0",)),
    ("healthy", LEAF, "10.0.1.1/32", "bgp", ("10.1.0.0", "10.1.0.4")),
    ("healthy", "spine-p0-01", "10.0.0.1/32", "bgp", ("10.1.0.1", "10.1.0.5")),
]


@pytest.mark.parametrize(("scenario", "device", "prefix", "protocol", "fib"), ROUTE_CASES)
def test_routes(scenario: str, device: str, prefix: str, protocol: str, fib: tuple[str, ...]) -> None:
    route = parse_routes(raw(scenario, device, C.ROUTES.key))[prefix]
    assert (route.protocol, route.selected, route.installed) == (protocol, True, True)
    assert sorted(route.fib) == sorted(fib)


def test_spine_has_no_route_to_the_other_spine() -> None:
    routes = parse_routes(raw("healthy", "spine-p0-01", C.ROUTES.key))
    assert "10.0.1.2/32" not in routes and "10.0.0.4/32" in routes


LLDP_CASES = [
    # scenario, device, port, (sysname, port id) seen, or None for no neighbour
    ("healthy", LEAF, "Ethernet8", ("spine-p0-01", "Ethernet0")),
    ("healthy", LEAF, "Ethernet0", ("gpu-su01-h01", "rail0")),
    ("healthy", "gpu-su01-h01", "rail0", (LEAF, "Ethernet0")),
    ("swapped_uplinks", LEAF, "Ethernet8", ("spine-p0-02", "Ethernet0")),
    ("swapped_uplinks", "spine-p0-01", "Ethernet0", (LEAF, "Ethernet12")),
    ("swapped_hosts", LEAF, "Ethernet0", ("gpu-su01-h02", "rail0")),
    ("link_down", LEAF, "Ethernet8", None),
    ("link_down", "spine-p0-01", "Ethernet0", None),
]


@pytest.mark.parametrize(("scenario", "device", "port", "seen"), LLDP_CASES)
def test_lldp(scenario: str, device: str, port: str, seen: tuple[str, str] | None) -> None:
    lldp = parse_lldp(raw(scenario, device, C.LLDP.key))
    if seen is None:
        assert port not in lldp
    else:
        (n,) = lldp[port]
        assert (n.sysname, n.port_id, n.port_id_type) == (*seen, "ifname")


def test_lldp_not_json0_is_malformed() -> None:
    with pytest.raises(FactError) as exc:
        parse_lldp(Raw(C.LLDP.argv, 0, '{"lldp": {"interface": {"Ethernet0": {}}}}'))  # plain -f json
    assert exc.value.kind == "malformed"


LINK_CASES = [
    # scenario, device, port, admin up, oper up, operstate, mtu, NO-CARRIER
    ("healthy", LEAF, "Ethernet8", True, True, "UP", 9100, False),
    ("link_down", LEAF, "Ethernet8", False, False, "DOWN", 9100, False),
    ("link_down", "spine-p0-01", "Ethernet0", True, False, "DOWN", 9100, True),
    ("mtu_small", "leaf-p0-su02-r0", "Ethernet0", True, True, "UP", 1500, False),
    ("healthy", "gpu-su01-h01", "rail0", True, True, "UP", 9000, False),
]


@pytest.mark.parametrize(("scenario", "device", "port", "admin", "oper", "operstate", "mtu", "no_carrier"), LINK_CASES)
def test_links(
    scenario: str, device: str, port: str, admin: bool, oper: bool, operstate: str, mtu: int, no_carrier: bool
) -> None:
    link = parse_links(raw(scenario, device, C.LINKS.key))[port]
    assert (link.admin_up, link.oper_up, link.operstate, link.mtu) == (admin, oper, operstate, mtu)
    assert ("NO-CARRIER" in link.flags) is no_carrier


def test_loopback_operstate_unknown_counts_as_up_with_lower_up() -> None:
    lo = parse_links(raw("healthy", LEAF, C.LINKS.key))["lo"]
    assert lo.operstate == "UNKNOWN" and lo.oper_up


def test_route_get() -> None:
    r = parse_route_get(raw("healthy", "gpu-su01-h01", C.route_get("172.16.0.9", "172.16.0.1").key))
    assert (r.dev, r.gateway, r.table, r.error) == ("rail0", "172.16.0.0", "101", None)
    wrong = parse_route_get(raw("wrong_egress", "gpu-su01-h01", C.route_get("172.16.0.9", "172.16.0.1").key))
    assert (wrong.dev, wrong.table) == ("rail1", None)


def test_route_get_unreachable_is_a_fact() -> None:
    r = parse_route_get(
        Raw(C.route_get("1.2.3.4", "172.16.0.1").argv, 2, "", "RTNETLINK answers: Network is unreachable\n")
    )
    assert (r.dev, r.error) == (None, "Network is unreachable")


PING_CASES = [
    # scenario, host, command, transmitted, received, frag-needed mtu, local mtu
    ("healthy", "gpu-su01-h01", C.ping("172.16.0.9", "172.16.0.1"), 2, 2, None, None),
    ("healthy", "gpu-su01-h01", C.ping_df("172.16.0.9", "172.16.0.1", 9000), 2, 2, None, None),
    ("mtu_small", "gpu-su01-h01", C.ping_df("172.16.0.9", "172.16.0.1", 9000), 2, 0, 1500, 1500),
    ("host_mtu_small", "gpu-su01-h02", C.ping_df("172.16.0.15", "172.16.0.7", 9000), 2, 0, None, 1500),
    ("host_link_down", "gpu-su01-h01", C.ping("172.16.0.9", "172.16.0.1"), 2, 0, None, None),
]


@pytest.mark.parametrize(("scenario", "host", "command", "sent", "received", "frag", "local"), PING_CASES)
def test_ping(
    scenario: str, host: str, command: C.Command, sent: int, received: int, frag: int | None, local: int | None
) -> None:
    p = parse_ping(raw(scenario, host, command.key))
    assert (p.transmitted, p.received, p.frag_needed_mtu, p.local_mtu, p.error) == (sent, received, frag, local, None)
    assert p.ok is (received > 0)


def test_ping_that_cannot_bind_is_an_error_fact() -> None:
    p = parse_ping(Raw(C.ping("172.16.0.9", "10.9.9.9").argv, 2, "", "ping: bind: Cannot assign requested address\n"))
    assert not p.ok and p.error == "ping: bind: Cannot assign requested address"
