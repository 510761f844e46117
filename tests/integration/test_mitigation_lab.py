"""Mitigation on the real twin (the demo in namespaces: FRR, lldpd, hosts), no mocks: 2 % loss on one leaf-spine
cable is found by the hosts' probes and ``hwaac health fabric``, and ``hwaac remediate --apply`` drains it at both
ends through the rollout's patch path (``playbooks/mitigate.yml``: GCU, then FRR reloaded from CONFIG_DB), graceful
first; the probes running across the drain never lose a host pair, and see clean paths after it; once the fault is
restored and the link clean, it is undrained. A dry run changes nothing. Needs root, frr, lldpd, netem or nftables
and ansible-core: it FAILS, not skips."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hwaac.cli import main as hwaac_main
from hwaac.lab import Lab, faults
from hwaac.lab.probe import probe_lab
from hwaac.lab.sweep import write_sweep
from hwaac.plan import build_plan
from hwaac.plan.model import Link, Plan
from hwaac.validate import load_intent
from tests.integration.lab_twin import twin

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("lab")]

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "inventory" / "demo"
NAME = "mitigate"
LEAF = "leaf-p0-su01-r2"
COUNT, PEERS = 100, 1
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
    render = tmp_path_factory.mktemp("mit-lab") / "demo"
    assert hwaac_main(["plan", str(DEMO), "-o", str(render)]) == 0
    with twin(render, NAME) as built:
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
    write_sweep(lab, folder / "s2", probes=probe_lab(lab, plan, count=COUNT, peers=PEERS) if probes else None)
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
    faults.fail_link(lab, uplink.cable_id, mode="netem", loss=2.0)
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
        after = probe_lab(lab, plan, count=50, peers=PEERS, learn_paths=False)
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
