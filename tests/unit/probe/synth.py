"""Synthetic probe results on the demo plan for the tomography and path tests, built from the plan here (not by
the code under test): a flow goes up its leaf's uplink and down the spine's cable to the destination leaf that a
CRC-32 of its 5-tuple picks (as an ECMP hash would), each hop answers from its inbound address (or from its
device's loopback), and each probe crosses each cable of the path with that cable's loss (a seeded RNG)."""

from __future__ import annotations

import random
import zlib
from collections.abc import Collection, Mapping
from functools import cache
from pathlib import Path

from hwaac.plan import build_plan
from hwaac.plan.model import Link, Plan, ip_str
from hwaac.probe.model import Flow, FlowResult
from hwaac.probe.pinglist import pinglist
from hwaac.validate import load_intent

DEMO = Path(__file__).parents[3] / "inventory" / "demo"


@cache
def demo() -> Plan:
    return build_plan(load_intent(DEMO))


@cache
def demo_flows() -> tuple[Flow, ...]:
    return tuple(pinglist(demo()))


_TABLES: dict[int, tuple] = {}


def _tables(plan: Plan) -> tuple[dict[str, int], dict[tuple[str, str], list[int]], dict[str, list[int]]]:
    if id(plan) in _TABLES:
        return _TABLES[id(plan)]
    hosts = {ip_str(lk.a_ip): i for i, lk in enumerate(plan.links) if lk.kind == "host"}
    pairs: dict[tuple[str, str], list[int]] = {}
    ups: dict[str, list[int]] = {}
    for i, lk in enumerate(plan.links):
        pairs.setdefault((lk.a_device, lk.b_device), []).append(i)
        if lk.kind == "leaf_spine":
            ups.setdefault(lk.a_device, []).append(i)
    for v in (*pairs.values(), *ups.values()):
        v.sort(key=lambda i: plan.links[i].cable_id)
    _TABLES[id(plan)] = (hosts, pairs, ups)
    return hosts, pairs, ups


def host_link(plan: Plan, ip: str) -> int:
    return _tables(plan)[0][ip]


def between(plan: Plan, a: str, b: str) -> list[int]:
    """The cables between devices ``a`` (lower) and ``b`` (upper), by cable id."""
    return _tables(plan)[1].get((a, b), [])


def route(plan: Plan, f: Flow) -> list[int]:
    """The flow's cables: its host link, the uplink, the downlink, the destination's host link."""
    src, dst = host_link(plan, f.src_ip), host_link(plan, f.dst_ip)
    leaf_a, leaf_b = plan.links[src].b_device, plan.links[dst].b_device
    h = zlib.crc32(f"{f.src_ip} {f.dst_ip} 17 {f.sport} {f.dport}".encode())
    ups = _tables(plan)[2][leaf_a]
    up = ups[h % len(ups)]
    downs = between(plan, leaf_b, plan.links[up].b_device)
    return [src, up, downs[(h >> 8) % len(downs)], dst]


def hops(plan: Plan, f: Flow, cables: list[int], *, loopbacks: bool = False) -> tuple[str, ...]:
    """What each hop answers: the inbound address (or the device's loopback), then the destination."""
    sw = plan.switch_by_name
    links: list[Link] = [plan.links[i] for i in cables]
    if loopbacks:
        return (
            ip_str(links[0].b_ip),
            ip_str(sw[links[1].b_device].loopback),
            ip_str(sw[links[2].a_device].loopback),
            f.dst_ip,
        )
    return ip_str(links[0].b_ip), ip_str(links[1].b_ip), ip_str(links[2].a_ip), f.dst_ip


def results(
    loss: Mapping[int, float],
    seed: int,
    *,
    count: int = 100,
    dead: Collection[str] = (),
    loopbacks: bool = False,
    stray: int = 0,
) -> list[FlowResult]:
    """One sweep of the demo pinglist. ``loss``: cable index -> probability a probe is lost crossing it; ``dead``:
    hosts or rail addresses of which nothing comes back; ``stray``: that many random flows lose one probe."""
    plan, rng = demo(), random.Random(seed)
    out = []
    for f in demo_flows():
        if {f.src_host, f.dst_host, f.src_ip, f.dst_ip} & set(dead):
            out.append(FlowResult(f, sent=count, received_forward=None, received_back=0))
            continue
        cables = route(plan, f)
        p = [loss[c] for c in cables if c in loss]
        lost = sum(1 for _ in range(count) if any(rng.random() < x for x in p)) if p else 0
        out.append(
            FlowResult(
                f,
                sent=count,
                received_forward=count - lost,
                received_back=count - lost,
                path=hops(plan, f, cables, loopbacks=loopbacks),
                path_complete=True,
            )
        )
    for n in rng.sample(range(len(out)), stray):
        r = out[n]
        if r.received_forward:
            r.received_forward -= 1
    return out
