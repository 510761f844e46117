"""Hop addresses to planned cables on the demo plan: an inbound interface address names the exact cable, a
loopback (or an address on another cable of the device) the set of parallel cables, an unknown address or a
silent hop leaves the path incomplete with the reason."""

from __future__ import annotations

from functools import cache

import pytest

from hwaac.plan.model import ip_str
from hwaac.probe.model import FlowResult
from hwaac.probe.paths import PathIndex
from tests.unit.probe.synth import between, demo, demo_flows, host_link, route

LEAF_A, SPINE = "leaf-p0-su01-r0", "spine-p0-03"


@cache
def flow_and_route() -> tuple:
    plan = demo()
    f = next(
        f
        for f in demo_flows()
        if f.src_host == "gpu-su01-h01" and f.rail == 0 and plan.links[route(plan, f)[1]].b_device == SPINE
    )
    return f, route(plan, f)


def addr(i: int, end: str) -> str:
    lk = demo().links[i]
    return ip_str(lk.a_ip if end == "a" else lk.b_ip)


def loopback(device: str) -> str:
    return ip_str(demo().switch_by_name[device].loopback)


def hops_of(kind: str) -> tuple[str, ...]:
    f, (src, up, down, _dst) = flow_and_route()
    other_leaf_cable = between(demo(), "leaf-p0-su02-r7", SPINE)[0]
    spine = {
        "inbound": addr(up, "b"),
        "loopback": loopback(SPINE),
        "unknown": "192.0.2.1",
        "silent": "*",
        "other interface": addr(other_leaf_cable, "b"),
    }[kind]
    return addr(src, "b"), spine, addr(down, "a"), f.dst_ip


# how hop 2 (the spine) answered, inbound-address mode -> hop 2's candidates ("up": the exact uplink, "set": the
# four parallel cables leaf-spine, "none": unknown), complete, a word of the notes
CASES = [
    ("inbound", True, "up", True, ""),
    ("loopback", True, "set", True, "one of 4 parallel cables"),
    ("other interface", True, "set", True, "icmp_errors_use_inbound_ifaddr"),
    ("inbound", False, "set", True, "one of 4 parallel cables"),
    ("unknown", True, "none", False, "192.0.2.1 is no address of the plan"),
    ("silent", True, "none", False, "hop 2 did not answer"),
]


@pytest.mark.parametrize(
    ("kind", "inbound", "want", "complete", "note"),
    CASES,
    ids=[f"{c[0]}-{'inbound' if c[1] else 'device'}" for c in CASES],
)
def test_hop_to_cable(kind: str, inbound: bool, want: str, complete: bool, note: str) -> None:
    f, (src, up, down, dst) = flow_and_route()
    m = PathIndex.from_plan(demo(), inbound=inbound).map(FlowResult(f, path=hops_of(kind), path_complete=True))
    hop2 = {"up": frozenset({up}), "set": frozenset(between(demo(), LEAF_A, SPINE)), "none": frozenset()}[want]
    assert m.cables[0] == {src} and m.cables[1] == hop2 and m.cables[3] == {dst}
    assert m.complete is complete
    if note:
        assert note in " ".join(m.notes)
    else:
        assert not m.notes
    if kind != "silent" and inbound:  # the next hop's inbound address still names its cable
        assert m.cables[2] == {down}


def test_no_path_and_a_path_that_stops_short() -> None:
    f, (src, *_rest) = flow_and_route()
    index = PathIndex.from_plan(demo())
    assert index.map(FlowResult(f)).notes == ("no path learned",)
    m = index.map(FlowResult(f, path=(addr(src, "b"), "*", "*"), path_complete=False))
    assert not m.complete and "the path does not reach the destination" in m.notes


def test_host_links_and_names() -> None:
    f, (src, _up, _down, dst) = flow_and_route()
    index = PathIndex.from_plan(demo())
    assert index.ends(f) == (src, dst) == (host_link(demo(), f.src_ip), host_link(demo(), f.dst_ip))
    ids = sorted(demo().links[i].cable_id for i in between(demo(), LEAF_A, SPINE))
    assert index.name(frozenset(between(demo(), LEAF_A, SPINE))) == f"{LEAF_A} - {SPINE} (one of 4: {', '.join(ids)})"
    assert isinstance(index.locate("not an address"), str)
