"""Mitigation on the real twin (the demo in namespaces: FRR, lldpd, hosts), no mocks, through the closed loop
(hwaac.lab.loop: the hosts' probes, ``hwaac health exporter``, Prometheus, Alertmanager and ansible-rulebook, real):
5 % loss on one leaf-spine cable raises the alert, and ``hwaac remediate --apply`` (run by the rulebook's playbook)
drains it at both ends through the rollout's patch path (``playbooks/mitigate.yml``: GCU, then FRR reloaded from
CONFIG_DB), graceful first; the probes, round after round, never lose a host pair and see clean paths after the
drain; a dry run beside it writes nothing. With the
fault still there, a person's undrain opens the link, its re-check's pings across it lose frames and it is drained
again; once the fault is restored, the loop brings the link back after its hold-down, its re-check clean. Needs
root, frr, lldpd, netem or nftables, ansible-core, prometheus, alertmanager, ansible-rulebook and Java 17: it FAILS,
not skips. The same loop recording in NetBox: ``benchmarks/mitigation_loop.py --netbox`` (a sync of the demo into a
fresh NetBox takes about 5 minutes, more than this suite can spend; the journals are tested against a real NetBox in
test_netbox_mitigation.py)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from hwaac.cli import main as hwaac_main
from hwaac.lab import Lab, faults
from hwaac.lab.loop import TWIN_POLICY, Loop, Settings
from hwaac.lab.status import routes_via
from hwaac.plan import build_plan
from hwaac.plan.model import Plan
from hwaac.validate import load_intent

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("lab")]

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "inventory" / "demo"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return build_plan(load_intent(DEMO))


@pytest.fixture(scope="module")
def lab(demo_twin: Lab) -> Lab:
    return demo_twin


def _ip(n: int) -> str:
    return ".".join(str(n >> s & 255) for s in (24, 16, 8, 0))


def _session(lab: Lab, device: str, peer: str) -> str:
    out = json.loads(lab.vty(device, "bgpd", "show bgp summary json"))
    return out["ipv4Unicast"]["peers"][peer]["state"]


def _dry_run_writes_nothing(loop: Loop, tmp: Path) -> None:
    """``hwaac remediate --alertmanager`` (a dry run) on a copy of the loop's state: it decides, prints, and leaves
    the copy as it was."""
    copy = tmp / "state"
    shutil.copytree(loop.state, copy)
    before = {p.name: p.read_bytes() for p in copy.iterdir()}
    assert (
        hwaac_main(
            [
                "remediate",
                str(DEMO),
                "--alertmanager",
                f"http://127.0.0.1:{loop.ports['alertmanager']}",
                "--state",
                str(copy),
                "--policy",
                str(loop.work / "policy.yaml"),
            ]
        )
        == 0
    )
    assert {p.name: p.read_bytes() for p in copy.iterdir()} == before


def _person_undrains(loop: Loop, lab: Lab, cable: str, capsys: pytest.CaptureFixture[str]) -> str:
    """``hwaac remediate --undrain-link CABLE --apply --lab`` on the loop's state (its lock keeps the rulebook's
    sweeps out meanwhile); the undrain's outcome."""
    capsys.readouterr()
    code = hwaac_main(
        [
            "remediate",
            str(DEMO),
            "--state",
            str(loop.state),
            "--policy",
            str(loop.work / "policy.yaml"),
            "--apply",
            "--lab",
            lab.name,
            "--format",
            "json",
            "--undrain-link",
            cable,
            "--reason",
            "optic reseated",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 1, out  # a person's undrain that did not happen
    return str(out["outcome"][f"undrain_link|{cable}"])


def test_the_closed_loop_drains_a_lossy_uplink_and_brings_it_back(
    lab: Lab, plan: Plan, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real parts only: sweeps -> hwaac health exporter -> Prometheus (HwaacMitigate) -> Alertmanager -> the
    rulebook (ansible-rulebook) -> playbooks/remediate.yml -> hwaac remediate --apply -> playbooks/mitigate.yml."""
    link = next(lk for lk in plan.links if lk.kind == "leaf_spine" and lk.a_device == "leaf-p0-su02-r5")
    leaf, spine, leaf_ip, spine_ip = link.a_device, link.b_device, _ip(link.a_ip), _ip(link.b_ip)
    assert routes_via(lab, leaf, spine_ip) > 0 and routes_via(lab, spine, leaf_ip) > 0
    policy = TWIN_POLICY.replace("hold_down_s: 20", "hold_down_s: 10")
    # monitor_nice 0: in the suite the other worker's tests are not the drain, and at nice 10 the sweeps starve
    with Loop(lab, plan, DEMO, Settings(tick_s=10, policy=policy, monitor_nice=0)) as loop:
        assert loop.alerts() == []
        faults.fail_link(lab, link.cable_id, mode="netem", loss=5.0)
        fault_at = time.time()
        try:
            alert, alert_at = loop.wait(
                lambda: [a for a in loop.alerts() if a["labels"].get("cable") == link.cable_id], 120
            )
            _, moved_at = loop.wait(
                lambda: routes_via(lab, leaf, spine_ip) == 0 and routes_via(lab, spine, leaf_ip) == 0, 120, poll=0.1
            )
            _, shut_at = loop.wait(
                lambda: _session(lab, leaf, spine_ip) == _session(lab, spine, leaf_ip) == "Idle (Admin)", 60, poll=0.1
            )
            print(
                f"MTTD {alert_at - fault_at:.1f} s, MTTM {moved_at - alert_at:.1f} s (traffic off the link), "
                f"sessions shut {shut_at - alert_at:.1f} s after the alert"
            )
            drains = loop.wait(
                lambda: [d for d in loop.decisions() if d["action"] == "drain_link" and d.get("outcome") == "done"], 60
            )[0]
            assert [d["target"] for d in drains] == [link.cable_id]
            assert drains[0]["findings"][0]["rule"] == alert[0]["labels"]["rule"]
            clean = loop.wait(lambda: [r for r in loop.rounds if r.started > shut_at + 1], 120)[0]
            assert clean[0].lost == 0  # the prober sees clean paths
            _dry_run_writes_nothing(loop, tmp_path)
            # a person undrains it while the cable still loses frames: the undrain opens the link, the re-check's
            # pings across it lose some, and it is shut again, still the sweeps' to bring back
            failed = _person_undrains(loop, lab, link.cable_id, capsys)
            assert failed.startswith(f"re-check failed, drained again: {leaf} {leaf_ip} -> {spine_ip}: "), failed
            again = loop.decisions()[-1]
            assert (again["action"], again["policy_rule"], again["outcome"]) == (
                "drain_link",
                "lossy-fabric-link",
                "done",
            )
            assert again["reason"].startswith(f"the re-check before undrain_link {link.cable_id} failed: ")
            assert _session(lab, leaf, spine_ip) == "Idle (Admin)"
        finally:
            faults.restore(lab, link.cable_id)
        loop.wait(
            lambda: [d for d in loop.decisions() if d["action"] == "undrain_link" and d.get("outcome") == "done"],
            180,
            name="an undrain that passes its re-check",
        )
        loop.wait(lambda: _session(lab, leaf, spine_ip) == "Established" and routes_via(lab, leaf, spine_ip) > 0, 60)
        cut = [(n, r.cut[:3]) for n, r in enumerate(loop.rounds) if r.cut]
        assert cut == []  # no host pair lost connectivity in any round, across the drain, re-check and undrain
        done = [d["action"] for d in loop.decisions() if d.get("outcome") == "done"]
        assert done[0] == "drain_link" and set(done[1:-1]) == {"drain_link"} and done[-1] == "undrain_link"
