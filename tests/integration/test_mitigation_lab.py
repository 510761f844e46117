"""Mitigation on the real twin (the demo in namespaces: FRR, lldpd, hosts), no mocks: 5 % loss on one leaf-spine
cable is found by the hosts' probes and ``hwaac health fabric``, and ``hwaac remediate --apply`` drains it at both
ends through the rollout's patch path (``playbooks/mitigate.yml``: GCU, then FRR reloaded from CONFIG_DB), graceful
first; the probes running across the drain never lose a host pair, and see clean paths after it; once the fault is
restored and the link clean, it is undrained. A dry run changes nothing. Then the closed loop (hwaac.lab.loop:
Prometheus, Alertmanager and ansible-rulebook, real) does the same from the alert alone. Needs root, frr, lldpd,
netem or nftables, ansible-core, prometheus, alertmanager, ansible-rulebook and Java 17: it FAILS, not skips."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hwaac.cli import main as hwaac_main
from hwaac.lab import Lab, faults
from hwaac.lab.loop import Loop
from hwaac.lab.probe import probe_lab
from hwaac.lab.sweep import write_sweep
from hwaac.plan import build_plan
from hwaac.plan.model import Link, Plan
from hwaac.validate import load_intent
from tests.integration.lab_twin import planned_twin

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("lab")]

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "inventory" / "demo"
NAME = "mitigate"
LEAF = "leaf-p0-su01-r2"
COUNT, PEERS, SPORTS = 50, 1, 2  # 1,024 flows of 50 probes, as the closed loop sweeps
POLICY = """
guard_rails: {min_leaf_uplinks: 2, max_actions: 2, breaker_actions: 6, window_s: 600}
graceful_s: 3
rules:
  - name: lossy-fabric-link
    match: {kinds: [cable, optic, port, link], severity: fault, link_kinds: [leaf_spine]}
    action: drain_link
    persistence: 1
    hold_down_s: 0
    recheck_sweeps: 1
"""


@pytest.fixture(scope="module")
def plan() -> Plan:
    return build_plan(load_intent(DEMO))


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with planned_twin(tmp_path_factory.mktemp("mit-lab"), DEMO, NAME) as built:
        yield built


@pytest.fixture(scope="module")
def uplink(plan: Plan) -> Link:
    return next(lk for lk in plan.links if lk.kind == "leaf_spine" and lk.a_device == LEAF)


def _ip(n: int) -> str:
    return ".".join(str(n >> s & 255) for s in (24, 16, 8, 0))


def _remediate(tmp: Path, findings: Path, *extra: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    (tmp / "policy.yaml").write_text(POLICY)
    capsys.readouterr()
    code = hwaac_main(["remediate", str(DEMO), str(findings), "--state", str(tmp / "state"), "--policy",
                       str(tmp / "policy.yaml"), "--format", "json", *extra])
    return code, json.loads(capsys.readouterr().out)


def _health(lab: Lab, plan: Plan, folder: Path, capsys: pytest.CaptureFixture[str], *, probes: bool = True) -> Path:
    """Two sweeps (the second with every host's probes) judged by hwaac health fabric; the report's file."""
    write_sweep(lab, folder / "s1")
    write_sweep(lab, folder / "s2", probes=probe_lab(lab, plan, count=COUNT, peers=PEERS, sports=SPORTS)
                if probes else None)
    capsys.readouterr()
    hwaac_main(["health", "fabric", str(DEMO), "--samples", str(folder / "s1"), "--samples", str(folder / "s2"),
                "--format", "json", "-o", str(folder / "report.json")])
    return folder / "report.json"


def _session(lab: Lab, device: str, peer: str) -> str:
    out = json.loads(lab.vty(device, "bgpd", "show bgp summary json"))
    return out["ipv4Unicast"]["peers"][peer]["state"]


def _running(lab: Lab, device: str) -> dict:
    return json.loads((lab.folder / "switches" / device / "config_db.json").read_text()) \
        if (lab.folder / "switches" / device / "config_db.json").exists() else {}


def test_a_lossy_uplink_is_drained_gracefully_and_undrained(lab: Lab, plan: Plan, uplink: Link, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    leaf, spine = uplink.a_device, uplink.b_device
    faults.fail_link(lab, uplink.cable_id, mode="netem", loss=5.0)
    try:
        report = _health(lab, plan, tmp_path / "lossy", capsys)
        top = json.loads(report.read_text())["suspects"][0]
        assert top["components"][0]["name"] == uplink.cable_id, top

        code, dry = _remediate(tmp_path, report, capsys=capsys)  # the default: a dry run
        assert code == 0 and [(d["action"], d["target"], d["rule"]) for d in dry["decisions"]] == [
            ("drain_link", uplink.cable_id, "ok")]
        assert {(s["device"], s["stage"]) for s in dry["steps"]} == {
            (leaf, "graceful"), (spine, "graceful"), (leaf, "shut"), (spine, "shut")}
        assert not (tmp_path / "state").exists()
        assert _session(lab, leaf, _ip(uplink.b_ip)) == "Established"

        rounds: list[dict] = []
        stop = threading.Event()

        def probe() -> None:  # probes across the drain, round after round
            while not stop.is_set():
                rounds.append(probe_lab(lab, plan, count=200, interval=0.02, peers=PEERS, sports=1,
                                        learn_paths=False))

        prober = threading.Thread(target=probe)
        prober.start()
        try:
            start = time.time()
            code, done = _remediate(tmp_path, report, "--apply", "--lab", NAME, capsys=capsys)
            end = time.time()
        finally:
            stop.set()
            prober.join()
        assert code == 0 and done["outcome"] == {f"drain_link|{uplink.cable_id}": "done"}, done
        spans = sorted((res.started, res.ended) for r in rounds for res in list(r.values())[:1])
        print("probe rounds", [(round(a - start, 1), round(b - start, 1)) for a, b in spans], round(end - start, 1))
        assert spans[0][0] <= start + 1 and spans[-1][1] >= end  # probing from before the drain to after it
        for n, r in enumerate(rounds):  # no host pair loses connectivity at any moment
            cut = [(f.flow.src_host, f.flow.dst_host) for res in r.values() for f in res.flows
                   if f.received_back == 0]
            assert cut == [], f"round {n}: {cut[:5]}"
        assert _session(lab, leaf, _ip(uplink.b_ip)) == "Idle (Admin)"
        assert _session(lab, spine, _ip(uplink.a_ip)) == "Idle (Admin)"
        after = probe_lab(lab, plan, count=COUNT, peers=PEERS, sports=SPORTS)
        lost = sum(f.sent - f.received_back for res in after.values() for f in res.flows)
        assert lost == 0  # the lossy cable carries no traffic: the prober sees clean paths

        code, again = _remediate(tmp_path, report, "--apply", "--lab", NAME, capsys=capsys)
        assert code == 0 and again["decisions"] == [] and again["steps"] == []  # drained stays drained
    finally:
        faults.restore(lab, uplink.cable_id)

    clean = _health(lab, plan, tmp_path / "clean", capsys, probes=False)  # the switches' counters: no suspect
    code, back = _remediate(tmp_path, clean, "--apply", "--lab", NAME, capsys=capsys)
    assert code == 0 and [(d["action"], d["rule"]) for d in back["decisions"]] == [("undrain_link", "ok")]
    assert _session(lab, leaf, _ip(uplink.b_ip)) == "Established"
    log = [json.loads(x) for x in (tmp_path / "state" / "decisions.jsonl").read_text().splitlines()]
    assert [(x["action"], x["outcome"]) for x in log] == [("drain_link", "done"), ("undrain_link", "done")]
    assert log[0]["findings"][0]["cable"] == uplink.cable_id and log[0]["findings"][0]["evidence"]


def _uses(lab: Lab, device: str, nexthop: str) -> int:
    """Routes of ``device`` that forward over ``nexthop`` (zebra's table)."""
    routes = json.loads(lab.vty(device, "zebra", "show ip route json"))
    return sum(1 for entries in routes.values() for r in entries if r.get("selected")
               for nh in r.get("nexthops", ()) if nh.get("ip") == nexthop and nh.get("active"))


def test_the_closed_loop_drains_a_lossy_uplink_and_brings_it_back(lab: Lab, plan: Plan) -> None:
    """Real parts only: sweeps -> hwaac health exporter -> Prometheus (HwaacMitigate) -> Alertmanager -> the
    rulebook (ansible-rulebook) -> playbooks/remediate.yml -> hwaac remediate --apply -> playbooks/mitigate.yml."""
    link = next(lk for lk in plan.links if lk.kind == "leaf_spine" and lk.a_device == "leaf-p0-su02-r5")
    leaf, spine, leaf_ip, spine_ip = link.a_device, link.b_device, _ip(link.a_ip), _ip(link.b_ip)
    assert _uses(lab, leaf, spine_ip) > 0 and _uses(lab, spine, leaf_ip) > 0
    with Loop(lab, plan, DEMO) as loop:
        assert loop.alerts() == []
        faults.fail_link(lab, link.cable_id, mode="netem", loss=5.0)
        fault_at = time.time()
        try:
            alert, alert_at = loop.wait(lambda: [a for a in loop.alerts() if a["labels"].get("cable")
                                                 == link.cable_id], 120)
            _, moved_at = loop.wait(lambda: _uses(lab, leaf, spine_ip) == 0 and _uses(lab, spine, leaf_ip) == 0,
                                    120, poll=0.1)
            _, shut_at = loop.wait(lambda: _session(lab, leaf, spine_ip) == _session(lab, spine, leaf_ip)
                                   == "Idle (Admin)", 60, poll=0.1)
            print(f"MTTD {alert_at - fault_at:.1f} s, MTTM {moved_at - alert_at:.1f} s (traffic off the link), "
                  f"sessions shut {shut_at - alert_at:.1f} s after the alert")
            drains = loop.wait(lambda: [d for d in loop.decisions() if d["action"] == "drain_link"
                                        and d.get("outcome") == "done"], 60)[0]
            assert [d["target"] for d in drains] == [link.cable_id]
            assert drains[0]["findings"][0]["rule"] == alert[0]["labels"]["rule"]
            clean = loop.wait(lambda: [r for r in loop.rounds if r.started > shut_at + 1], 120)[0]
            assert clean[0].lost == 0  # the prober sees clean paths
        finally:
            faults.restore(lab, link.cable_id)
        loop.wait(lambda: [d for d in loop.decisions() if d["action"] == "undrain_link"
                           and d.get("outcome") == "done"], 180)
        loop.wait(lambda: _session(lab, leaf, spine_ip) == "Established" and _uses(lab, leaf, spine_ip) > 0, 60)
        cut = [(n, r.cut[:3]) for n, r in enumerate(loop.rounds) if r.cut]
        assert cut == []  # no host pair lost connectivity in any round, across the drain and the undrain
        assert [d["action"] for d in loop.decisions() if d.get("outcome") == "done"] == ["drain_link",
                                                                                       "undrain_link"]
