"""Drain and undrain steps on the demo plan: what each stage changes on which switch, that SONiC's generic config
updater accepts every step (GCU with the toolkit, hwaac's validator without), and the bgpd configuration each step
leads to (frrcfgd's templates, as the twin derives it)."""

from __future__ import annotations

import copy
import ipaddress
from pathlib import Path

import pytest

from hwaac.apply import OWNED_TABLES
from hwaac.apply.sonic_patch import config_patch
from hwaac.lab.frr_config import frr_config
from hwaac.lab.gcu import decide
from hwaac.lab.sonic_state import SonicVersion, asic_type, build_version, default_release
from hwaac.mitigation import drain
from hwaac.plan import build_plan
from hwaac.render.sonic import render_config_db
from hwaac.validate import load_intent

DEMO = Path(__file__).parents[3] / "inventory" / "demo"


@pytest.fixture(scope="module")
def demo():
    plan = build_plan(load_intent(DEMO))
    rendered = {s.name: render_config_db(plan, s) for s in plan.switches}
    link = next(x for x in plan.links if x.kind == "leaf_spine")
    return plan, rendered, link


def _ip(n: int) -> str:
    return str(ipaddress.IPv4Address(n))


def test_a_link_drains_at_both_ends_graceful_first(demo):
    _, rendered, link = demo
    sessions = drain.link_sessions(link, rendered)
    assert [(s.device, s.neighbor) for s in sessions] == [
        (link.a_device, _ip(link.b_ip)),
        (link.b_device, _ip(link.a_ip)),
    ]
    steps = drain.drain_steps(sessions)
    assert [(s.device, s.stage) for s in steps] == [
        (link.a_device, "graceful"),
        (link.b_device, "graceful"),
        (link.a_device, "shut"),
        (link.b_device, "shut"),
    ]
    graceful = steps[0].config
    assert graceful["BGP_NEIGHBOR_AF"] == {
        f"default|{_ip(link.b_ip)}|ipv4_unicast": {"route_map_out": ["HWAAC_GSHUT_HWAAC_PERMIT_ALL"]}
    }
    assert graceful["ROUTE_MAP"]["HWAAC_GSHUT_HWAAC_PERMIT_ALL|10"] == {
        "route_operation": "permit",
        "set_community_inline": ["graceful-shutdown", "additive"],
        "call_route_map": "HWAAC_PERMIT_ALL",
    }
    assert steps[2].config == {"BGP_NEIGHBOR": {f"default|{_ip(link.b_ip)}": {"admin_status": "down"}}}


def test_a_spine_drains_with_every_peer(demo):
    plan, rendered, _ = demo
    spine = next(s.name for s in plan.switches if s.role == "spine")
    sessions = drain.switch_sessions(plan, spine, rendered)
    mine = [s for s in sessions if s.device == spine]
    peers = {s.device for s in sessions} - {spine}
    planned = [x for x in plan.links if x.b_device == spine]
    assert len(mine) == len(planned) == len(rendered[spine]["BGP_NEIGHBOR"])
    assert peers == {x.a_device for x in planned}
    steps = drain.drain_steps(sessions)
    assert {s.stage for s in steps[: len(peers) + 1]} == {"graceful"}
    assert len(steps) == 2 * (len(peers) + 1)


@pytest.mark.parametrize(
    ("case", "what", "message"),
    [
        ("host link", "host", "host link"),
        ("no rendered config", "missing", "no rendered config_db"),
        ("no such neighbour", "neighbour", "no BGP_NEIGHBOR for"),
    ],
)
def test_a_drain_that_cannot_be_built_says_why(demo, case, what, message):
    plan, rendered, link = demo
    configs = dict(rendered)
    target = link
    if what == "host":
        target = next(x for x in plan.links if x.kind == "host")
    elif what == "missing":
        del configs[link.b_device]
    else:
        configs[link.a_device] = copy.deepcopy(rendered[link.a_device])
        del configs[link.a_device]["BGP_NEIGHBOR"][f"default|{_ip(link.b_ip)}"]
    with pytest.raises(drain.DrainError, match=message):
        drain.link_sessions(target, configs)


def test_every_step_is_accepted_and_bgpd_runs_what_it_means(demo):
    """Drain then undrain one link, each step judged as the twin's `config apply-patch` judges it."""
    _, rendered, link = demo
    running = {d: copy.deepcopy(rendered[d]) for d in (link.a_device, link.b_device)}
    sessions = drain.link_sessions(link, rendered)
    far = {link.a_device: _ip(link.b_ip), link.b_device: _ip(link.a_ip)}
    seen: dict[tuple[str, str], str] = {}
    drained: dict[str, dict] = {}
    for step in drain.drain_steps(sessions) + drain.undrain_steps(sessions):
        cfg = running[step.device]
        patch = config_patch(cfg, step.config, owned=())
        version = SonicVersion(asic_type(cfg), build_version(default_release()), default_release())
        running[step.device] = decide(cfg, patch, version).config
        seen[(step.device, step.stage)] = frr_config(running[step.device])
        if step.stage == "shut":
            drained[step.device] = copy.deepcopy(running[step.device])
    for device, cfg in drained.items():  # a rollout of the rendered config keeps the drain (its owned tables)
        undrains = config_patch(cfg, rendered[device], owned=OWNED_TABLES)
        assert {
            "op": "replace",
            "path": f"/BGP_NEIGHBOR/default|{far[device]}/admin_status",
            "value": "up",
        } in undrains  # without keep_drains the rollout would open the drained session, unmarked
        assert config_patch(cfg, drain.keep_drains(cfg, rendered[device]), owned=OWNED_TABLES) == []
        assert drain.keep_drains(rendered[device], rendered[device]) == rendered[device]
    for device, peer in far.items():
        marked = f"  neighbor {peer} route-map HWAAC_GSHUT_HWAAC_PERMIT_ALL out"
        graceful, shut = seen[(device, "graceful")], seen[(device, "shut")]
        assert marked in graceful.splitlines() and f" neighbor {peer} shutdown" not in graceful
        assert "route-map HWAAC_GSHUT_HWAAC_PERMIT_ALL permit 10" in graceful
        assert " set community graceful-shutdown additive" in graceful.splitlines()
        assert " call HWAAC_PERMIT_ALL" in graceful.splitlines()
        assert f" neighbor {peer} shutdown" in shut.splitlines() and marked in shut.splitlines()
        opened = seen[(device, "open")]
        assert f" neighbor {peer} shutdown" not in opened and marked in opened.splitlines()
        restored = seen[(device, "restore")]
        assert restored.replace(_stanza(restored), "") == frr_config(rendered[device])


def _stanza(text: str) -> str:
    """The marking route map's stanza, which stays after an undrain (other drains may use it)."""
    lines = text.splitlines(keepends=True)
    start = lines.index("route-map HWAAC_GSHUT_HWAAC_PERMIT_ALL permit 10\n") - 1
    return "".join(lines[start : start + 4])
