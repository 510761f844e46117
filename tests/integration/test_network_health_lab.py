"""Network health on the real twin (the demo in namespaces: FRR, lldpd, hosts from their rendered files), no mocks:
sweeps of the switches (``hwaac lab sweep``: portstat -j from the veths, FRR's BGP summary and routes) and every
host's active probes (UDP from each host's namespace, paths learned from the switches' TTL-expired answers), judged
by ``hwaac health fabric``.

A clean twin gives no suspect and full availability; 2 % loss on one leaf-spine cable (``hwaac lab fail link
--loss 2``: netem, or nftables where the kernel has no netem) is named by the probes' tomography as that cable, both
ends, with the GPU nodes whose probes crossed it, and it is the top suspect; a cable taken down lowers availability
of its leaf, rail and SU and is named. Needs root, iproute2, frr, lldpd, nftables or netem: it FAILS, not skips.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hwaac.cli import main as hwaac_main
from hwaac.lab import Lab, faults
from hwaac.lab.probe import probe_lab
from hwaac.lab.status import converge
from hwaac.lab.sweep import write_sweep
from hwaac.plan import build_plan
from hwaac.plan.model import Plan
from hwaac.validate import load_intent

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("lab")]

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "inventory" / "demo"
LEAF = "leaf-p0-su01-r3"
COUNT = 100  # probes per flow: 2 % loss on a cable crossed by ~16 flows is then ~32 probes lost
PEERS = 1  # one peer per rail port (4,096 flows): every leaf-spine cable is still crossed both ways


@pytest.fixture(scope="module")
def plan() -> Plan:
    return build_plan(load_intent(DEMO))


@pytest.fixture(scope="module")
def lab(demo_twin: Lab) -> Lab:
    return demo_twin


@pytest.fixture(scope="module")
def uplink(plan: Plan) -> tuple[str, tuple[str, str], tuple[str, str]]:
    """A leaf-spine cable of LEAF, from the plan: (cable id, leaf end, spine end)."""
    link = next(lk for lk in plan.links if lk.kind == "leaf_spine" and lk.a_device == LEAF)
    return link.cable_id, (link.a_device, link.a_port), (link.b_device, link.b_port)


def sweep(lab: Lab, plan: Plan, folder: Path, *, probes: bool) -> Path:
    results = probe_lab(lab, plan, count=COUNT, peers=PEERS) if probes else None
    return write_sweep(lab, folder, probes=results)


def health(*sweeps: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    capsys.readouterr()
    args = ["health", "fabric", str(DEMO), "--format", "json"]
    for s in sweeps:
        args += ["--samples", str(s)]
    code = hwaac_main(args)
    return code, json.loads(capsys.readouterr().out)


def scope(report: dict, kind: str, key: str) -> dict:
    return next(a for a in report["slis"] if a["scope"] == kind and a["key"] == key)["values"]


@pytest.fixture(scope="module")
def clean(lab: Lab, plan: Plan, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two sweeps of the clean twin, the second with every host's probes (their paths learned)."""
    base = tmp_path_factory.mktemp("nh-sweeps")
    sweep(lab, plan, base / "s1", probes=False)
    sweep(lab, plan, base / "s2", probes=True)
    return base


def test_a_clean_twin_has_no_suspect(clean: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = health(clean / "s1", clean / "s2", capsys=capsys)
    assert report["suspects"] == [] and code == 0, report["suspects"]
    probes = report["probes"]
    assert probes["flows"] == 64 * 8 * PEERS * 8 and probes["hosts"] == 64
    assert probes["cables_crossed"] == probes["cables_planned"] == 1024  # every cable probed, none lossy
    assert probes["cables_exonerated"] == 1024 and probes["unreachable_pairs"] == 0
    fabric = scope(report, "fabric", "")
    assert fabric["availability"] == 1.0 and fabric["coverage"] == 1.0
    assert scope(report, "leaf", LEAF)["path_diversity"] == 1.0


def test_loss_on_a_cable_is_named_by_the_probes(
    lab: Lab,
    plan: Plan,
    clean: Path,
    uplink: tuple[str, tuple[str, str], tuple[str, str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    cable, leaf_end, spine_end = uplink
    faults.fail_link(lab, cable, mode="netem", loss=2.0)
    try:
        lossy = sweep(lab, plan, clean / "s3", probes=True)
    finally:
        faults.restore(lab, cable)
    code, report = health(clean / "s2", lossy, capsys=capsys)
    assert code == 1
    top = report["suspects"][0]
    assert top["severity"] == "fault"
    assert "probe_path_loss" in (top["rule"], *top["also"]), top
    assert [c["name"] for c in top["components"]] == [cable, " ".join(leaf_end), " ".join(spine_end)]
    probe = next(e for e in top["evidence"] if e["what"] == "probe forward loss")
    assert 0.005 < probe["value"] < 0.05  # ~2 % of the probes that crossed it
    # the GPU nodes behind it: SU 1's, under the leaf (and, from the probes, SU 2's whose probes crossed it)
    assert {n.name for n in plan.nodes if n.su == 1} & set(top["nodes"])
    others = [s for s in report["suspects"][1:] if s["severity"] == "fault"]
    assert others == [], others  # nothing else is blamed
    assert report["probes"]["suspects"] == 1  # the tomography names that cable alone


def test_a_cable_down_lowers_availability_and_is_named(
    lab: Lab,
    plan: Plan,
    clean: Path,
    uplink: tuple[str, tuple[str, str], tuple[str, str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    cable, leaf_end, spine_end = uplink
    before = sweep(lab, plan, clean / "s4", probes=False)  # after the loss test: its drops are not in this interval
    faults.fail_link(lab, cable, mode="down")
    try:
        converge(lab, timeout=120)  # the routes without the cable, as a sweep some time after the fault sees them
        cut = sweep(lab, plan, clean / "s5", probes=False)
    finally:
        faults.restore(lab, cable)
    code, report = health(before, cut, capsys=capsys)
    assert code == 1
    top = report["suspects"][0]
    assert (top["rule"], top["severity"]) == ("links_down", "fault")
    assert [c["name"] for c in top["components"]] == [cable, " ".join(leaf_end), " ".join(spine_end)]
    leaf = scope(report, "leaf", LEAF)
    assert leaf["availability"] == pytest.approx(63 / 64)  # 32 host links + 32 uplinks, one down
    assert scope(report, "rail", "3")["availability"] == pytest.approx(127 / 128)
    assert scope(report, "rail", "2")["availability"] == 1.0
    assert leaf["path_diversity"] == pytest.approx(31 / 32)
