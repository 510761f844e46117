"""Pinglists from the plan: counts, determinism, peers across SUs on the same rail, every rail and leaf pair
covered, distinct source ports per address; one SU: peers under the same leaf."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from hwaac.plan import build_plan
from hwaac.plan.model import Plan, ip_str
from hwaac.probe.pinglist import DPORT, SPORT_BASE, pinglist
from hwaac.validate import load_intent
from tests.unit.probe.synth import demo

MINIMAL = Path(__file__).parents[2] / "fixtures" / "intents" / "valid" / "minimal.yml"


def rail_ports(plan: Plan) -> dict[str, tuple[str, int, int, str]]:
    """Address -> (node, SU, rail, leaf), read from the plan's host links."""
    su = {n.name: n.su for n in plan.nodes}
    return {
        ip_str(lk.a_ip): (lk.a_device, su[lk.a_device], lk.rail or 0, lk.b_device)
        for lk in plan.links
        if lk.kind == "host"
    }


# plan, peers, sports -> flows expected (nodes x rails x peers x sports)
COUNTS = [
    ("demo", 2, 8, 64 * 8 * 2 * 8),
    ("demo", 1, 1, 64 * 8),
    ("demo", 3, 4, 64 * 8 * 3 * 4),
    ("minimal", 2, 8, 4 * 2 * 2 * 8),
]


def plan_of(name: str) -> Plan:
    return demo() if name == "demo" else build_plan(load_intent(MINIMAL))


@pytest.mark.parametrize(("name", "peers", "sports", "expected"), COUNTS)
def test_counts_and_determinism(name: str, peers: int, sports: int, expected: int) -> None:
    plan = plan_of(name)
    flows = pinglist(plan, peers=peers, sports=sports)
    assert len(flows) == expected
    assert flows == pinglist(plan_of(name), peers=peers, sports=sports)
    assert len({(f.src_ip, f.sport) for f in flows}) == len(flows)  # every flow can bind its own socket
    assert {f.dport for f in flows} == {DPORT}
    assert {f.sport for f in flows} == set(range(SPORT_BASE, SPORT_BASE + peers * sports))


def test_demo_peers_cross_sus_on_the_same_rail_and_cover_every_leaf_pair() -> None:
    plan = demo()
    ports = rail_ports(plan)
    flows = pinglist(plan)
    pairs: set[tuple[str, str]] = set()
    for f in flows:
        node, su, rail, leaf = ports[f.src_ip]
        dnode, dsu, drail, dleaf = ports[f.dst_ip]
        assert node == f.src_host and dnode == f.dst_host
        assert su != dsu and rail == drail == f.rail and f.src_if == f"rail{rail}"
        pairs.add((leaf, dleaf))
    leaves = {(s.rail, s.su): s.name for s in plan.switches if s.role == "leaf"}
    want = {(leaves[(r, a)], leaves[(r, b)]) for r in range(8) for a in (1, 2) for b in (1, 2) if a != b}
    assert pairs == want
    assert {f.rail for f in flows} == set(range(8))
    per_src = Counter(f.src_ip for f in flows)
    per_dst = Counter(f.dst_ip for f in flows)
    assert set(per_src.values()) == {16} and set(per_dst.values()) == {16}  # every port sends and answers alike


def test_one_su_probes_the_other_nodes_under_the_same_leaf() -> None:
    plan = plan_of("minimal")
    ports = rail_ports(plan)
    flows = pinglist(plan)
    for f in flows:
        assert f.src_host != f.dst_host and ports[f.src_ip][3] == ports[f.dst_ip][3]
    assert len({(f.src_host, f.dst_host) for f in flows}) == 4 * 2


def test_one_host_and_bad_options() -> None:
    flows = pinglist(demo(), hosts=["gpu-su02-h05"])
    assert len(flows) == 8 * 2 * 8 and {f.src_host for f in flows} == {"gpu-su02-h05"}
    for kwargs in ({"peers": 0}, {"sports": 0}, {"sport_base": 65530}, {"dport": 70000}):
        with pytest.raises(ValueError):
            pinglist(demo(), **kwargs)
