"""Inputs derived from a plan: sessions, probes, MTUs, host prefixes; the expectations the routing model gives for
the demo (16 leaves x 32 uplinks, 4 parallel links per spine); bad files refused naming the file and field."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hwaac.verify.checks.base import Context
from hwaac.verify.facts import Facts
from hwaac.verify.inputs import InputError, Inputs, load_inputs
from tests.unit.verify.recordings import PLAN

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Inputs:
    """The demo fabric planned by `hwaac plan inventory/demo`."""
    out = tmp_path_factory.mktemp("demo") / "plan"
    subprocess.run(
        [sys.executable, "-m", "hwaac.cli", "plan", str(REPO / "inventory" / "demo"), "-o", str(out)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return load_inputs(out)


def test_fixture_fabric_inputs() -> None:
    i = load_inputs(PLAN)
    assert (len(i.switches), len(i.hosts), len(i.cables), len(i.sessions), len(i.probes)) == (6, 4, 24, 16, 8)
    s = i.session_by_cable["L0000000"]
    assert (s.a.device, s.a.ip, s.a.asn, s.b.device, s.b.ip, s.b.asn) == (
        "leaf-p0-su01-r0",
        "10.1.0.1",
        4200100000,
        "spine-p0-01",
        "10.1.0.0",
        4200000001,
    )
    p = i.probes[0]
    assert (p.host, p.iface, p.src, p.dst_host, p.dst_iface, p.dst, p.mtu, p.cables) == (
        "gpu-su01-h01",
        "rail0",
        "172.16.0.1",
        "gpu-su02-h01",
        "rail0",
        "172.16.0.9",
        9000,
        ("H0000000", "H0000004"),
    )
    assert i.port_mtu[("leaf-p0-su01-r0", "Ethernet8")] == 9100
    assert i.port_alias[("leaf-p0-su01-r0", "Ethernet0")] == "etp1a"
    assert i.max_paths["leaf-p0-su01-r0"] == 64
    assert i.host_prefixes["leaf-p0-su01-r0"] == {"172.16.0.0/31": ["H0000000"], "172.16.0.2/31": ["H0000001"]}


def test_demo_inputs_and_planned_expectations(demo: Inputs) -> None:
    i = demo
    assert (len(i.sessions), len(i.probes), len(i.cables)) == (512, 512, 1024)
    ctx = Context(i, Facts({}), frozenset(i.devices()))
    leaf, other, spine = "leaf-p0-su01-r0", "leaf-p0-su02-r7", "spine-p0-03"
    # every uplink session is a next hop: 8 spines x 4 parallel links
    assert ctx.planned.width(leaf, other) == 32
    # a leaf's uplink carries the other 15 leaves' 32 host prefixes and loopback, and the spine's loopback
    up = next(s for s in i.sessions_of[leaf] if s.b.device == spine)
    assert ctx.planned.received(leaf, up.id, spine) == 15 * 33 + 1
    # the spine gets the leaf's own 32 host prefixes and loopback
    assert ctx.planned.received(spine, up.id, leaf) == 33
    # a spine reaches every leaf's loopback but no other spine's (one spine ASN: RFC 7938 5.2.1)
    assert ctx.planned.reaches(spine, leaf) and not ctx.planned.reaches(spine, "spine-p0-04")
    assert ctx.planned.reaches(leaf, spine)


def test_probes_cover_every_rail_of_every_host_once(demo: Inputs) -> None:
    i = demo
    assert sorted((p.host, p.iface) for p in i.probes) == sorted(
        (h, r.iface) for h in i.hosts for r in i.hosts[h].rails
    )
    assert all(i.hosts[p.host].su != i.hosts[p.dst_host].su and p.iface == p.dst_iface for p in i.probes)


def copy_plan(tmp_path: Path) -> Path:
    dst = tmp_path / "plan"
    shutil.copytree(PLAN, dst)
    return dst


def test_no_plan_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no plan.json \(write one with `hwaac plan FABRIC"):
        load_inputs(tmp_path)


def test_plan_of_another_format_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text('{"format": "other/1"}')
    with pytest.raises(InputError, match="not an hwaac plan"):
        load_inputs(tmp_path)


def test_bad_bgp_neighbour_asn_names_file_and_field(tmp_path: Path) -> None:
    plan = copy_plan(tmp_path)
    f = plan / "switches" / "spine-p0-01" / "config_db.json"
    cdb = json.loads(f.read_text())
    cdb["BGP_NEIGHBOR"]["default|10.1.0.1"]["asn"] = "four"
    f.write_text(json.dumps(cdb))
    with pytest.raises(
        InputError,
        match=r"spine-p0-01/config_db.json: BGP_NEIGHBOR 'default\|10.1.0.1': asn must "
        r"be a number, got 'four'",
    ):
        load_inputs(plan)


def test_bad_netplan_mtu_names_file_and_field(tmp_path: Path) -> None:
    plan = copy_plan(tmp_path)
    f = plan / "hosts" / "gpu-su01-h01" / "netplan" / "60-hwaac-rails.yaml"
    f.write_text(f.read_text().replace("mtu: 9000", "mtu: jumbo", 1))
    with pytest.raises(InputError, match=r"network.ethernets.rail0.mtu must be an integer >= 576, got 'jumbo'"):
        load_inputs(plan)


def test_without_rendered_files_the_plan_stands_in(tmp_path: Path) -> None:
    plan = tmp_path / "bare"
    plan.mkdir()
    shutil.copy(PLAN / "plan.json", plan / "plan.json")
    i = load_inputs(plan)
    assert len(i.sessions) == 16 and not i.port_mtu and all(p.mtu is None for p in i.probes)


def test_within_a_twin_that_holds_some_nodes() -> None:
    i = load_inputs(PLAN)
    assert i.within(i.devices()) is i
    gone = "gpu-su02-h02"
    part = i.within(d for d in i.devices() if d != gone)
    assert gone not in part.hosts and len(part.hosts) == 3 and part.switches == i.switches
    lost = {c.id for c in i.cables_of[gone]}
    assert len(lost) == 2 and set(part.cables) == set(i.cables) - lost
    assert part.sessions == i.sessions  # leaf-spine sessions only
    assert len(part.probes) == 4 and all(gone not in (p.host, p.dst_host) for p in part.probes)
    left = {c for prefixes in part.host_prefixes.values() for cables in prefixes.values() for c in cables}
    assert not left & lost and left == {c for c in part.cables if c.startswith("H")}
