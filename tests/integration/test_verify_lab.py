"""hwaac verify against the real twin: the demo fabric in namespaces (hwaac.lab: FRR, lldpd, hosts from their
rendered files), no mocks.

One lab of the demo for the module (torn down in a finalizer, also when a test fails). A converged twin is all
PASS, within the time budget; two uplinks swapped (their veths re-made crosswise) are caught by LLDP naming both
ends of each and the other cable; a cable down (hwaac.lab.faults.fail_link) is named exactly: its link checks and
its session, both ends, the cable id, and nothing else FAILs; a spine down (fail_switch) is named as the switch
with its sessions; the same through playbooks/verify.yml (ansible-playbook, every lab device a host, the run
limited by verify_hosts to the link's ends and a node on each side, as a rollout batch is); after each
restore all PASS again. A verdict is a snapshot, so each waits (bounded) for the fabric to settle. Needs root,
iproute2, frr, lldpd, iputils-ping: it FAILS, not skips, without them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from hwaac.cli import main as hwaac_main
from hwaac.lab import Lab, faults
from hwaac.lab.status import converge
from hwaac.verify import LabCollector, Report, Status, load_inputs, verify
from hwaac.verify.inputs import Cable, Inputs
from hwaac.verify.report import faults as report_faults
from hwaac.verify.results import Result

# the twin modules run one after another on one worker (make test: xdist --dist loadgroup): each module's lab has
# a fixed name, and test_lab checks that nothing but its own labs changed the machine
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("lab")]

REPO = Path(__file__).resolve().parents[2]
LEAF = "leaf-p0-su01-r0"
SPINE = "spine-p0-02"
BUDGET_S = 10.0  # collect + judge of the demo on an otherwise idle machine


@pytest.fixture(scope="module")
def lab(demo_twin: Lab) -> Lab:
    return demo_twin


@pytest.fixture(scope="module")
def render(lab: Lab) -> Path:
    """The twin's rendered folder (``hwaac plan inventory/demo -o DIR``)."""
    return Path(lab.render_dir)


@pytest.fixture(scope="module")
def inputs(render: Path) -> Inputs:
    return load_inputs(render)


def run(lab: Lab, inputs: Inputs) -> Report:
    report, _ = verify(inputs, LabCollector(lab))
    return report


def until(lab: Lab, inputs: Inputs, ok: Callable[[Report], bool], what: str, timeout: float = 180.0) -> Report:
    """Verify again (a snapshot) until ``ok``; fail naming what the last report still had."""
    deadline = time.monotonic() + timeout
    while True:
        report = run(lab, inputs)
        if ok(report):
            return report
        if time.monotonic() > deadline:
            left = [
                f"{r.status.value} {r.check} {r.object}: {r.actual}"
                for r in report.results
                if r.status is not Status.PASS or r.explained_by
            ][:12]
            pytest.fail(f"{what}: not within {timeout:.0f} s; last report: {report.counts()}: {left}", pytrace=False)
        time.sleep(3)


def restored(lab: Lab, inputs: Inputs, what: str, timeout: float = 180.0) -> Report:
    """All PASS again after a restore: first the lab's own convergence signal (sessions Established, routes and
    BGP table versions steady: a few vty reads), then verify, so verify does not run while BGP still recovers."""
    converge(lab, timeout=timeout)
    return until(lab, inputs, all_pass, what, timeout)


def fails(report: Report) -> set[tuple[str, str | None, str | None]]:
    return {(r.check, r.cable, r.fault) for r in report.results if r.status is Status.FAIL}


def all_pass(report: Report) -> bool:
    return all(r.status is Status.PASS and not r.explained_by for r in report.results)


def test_converged_twin_is_all_pass_within_budget(lab: Lab, inputs: Inputs) -> None:
    report = until(lab, inputs, all_pass, "all PASS on the converged twin")
    counts = report.counts()
    assert counts == {"PASS": 5760, "FAIL": 0, "SKIP": 0, "ERROR": 0}
    # the budget holds on an idle machine; a loaded one (other suites on 2 cores) scales it by the load per core
    took = report.timings["collect_s"] + report.timings["judge_s"]
    load = max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    print(
        f"verify of the demo: collect {report.timings['collect_s']:.1f} s, judge {report.timings['judge_s']:.1f} s"
        f" (load per core {load:.1f})"
    )
    assert took <= BUDGET_S * load


def test_cli_on_the_lab(lab: Lab, tmp_path: Path) -> None:
    out = tmp_path / "verify.json"
    assert hwaac_main(["verify", f"lab:{lab.name}", "--format", "json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["passed"] and doc["counts"]["PASS"] == 5760 and doc["faults"] == []


def _veth(lab: Lab, a: tuple[str, str], b: tuple[str, str]) -> list[list[str]]:
    """``ip`` commands for a veth between ends a and b (device, port) of the lab."""
    return [
        [
            "ip",
            "link",
            "add",
            a[1],
            "netns",
            lab.netns(a[0]),
            "type",
            "veth",
            "peer",
            "name",
            b[1],
            "netns",
            lab.netns(b[0]),
        ]
    ]


def _configure(lab: Lab, inputs: Inputs, end: tuple[str, str]) -> list[list[str]]:
    cable = inputs.cables[inputs.cable_at[end]]
    e = cable.a if (cable.a.device, cable.a.port) == end else cable.b
    ns = lab.netns(end[0])
    return [
        ["ip", "-n", ns, "link", "set", end[1], "mtu", str(inputs.port_mtu[end])],
        ["ip", "-n", ns, "address", "add", f"{e.ip}/{cable.prefixlen}", "dev", end[1]],
        ["ip", "-n", ns, "link", "set", end[1], "up"],
    ]


def recable(lab: Lab, inputs: Inputs, pairs: list[tuple[tuple[str, str], tuple[str, str]]], old: list[Cable]) -> None:
    """Remove the veths of ``old`` and make one per pair of ends (a re-cabling at the patch panel)."""
    cmds = [["ip", "-n", lab.netns(c.a.device), "link", "del", c.a.port] for c in old]
    for a, b in pairs:
        cmds += _veth(lab, a, b) + _configure(lab, inputs, a) + _configure(lab, inputs, b)
    for cmd in cmds:
        subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=30)


def test_swapped_uplinks_are_named_by_lldp_at_both_ends(lab: Lab, inputs: Inputs) -> None:
    # two uplinks of one leaf to two spines, swapped: Ethernet128 now meets spine-p0-02, Ethernet132 spine-p0-01
    c1, c2 = (inputs.cables[c] for c in ("L0000000", "L0000001"))
    assert (c1.a.device, c2.a.device, c1.b.device, c2.b.device) == (LEAF, LEAF, "spine-p0-01", SPINE)
    ends = lambda e: (e.device, e.port)  # noqa: E731
    try:
        recable(lab, inputs, [(ends(c1.a), ends(c2.b)), (ends(c2.a), ends(c1.b))], [c1, c2])
        want = {
            ("VerifyLldpNeighbors", "L0000000", "L0000000"),
            ("VerifyLldpNeighbors", "L0000001", "L0000001"),
            ("VerifyBgpSessions", "L0000000", "L0000000"),
            ("VerifyBgpSessions", "L0000001", "L0000001"),
        }

        # lldpd at each of the four ends learns its new neighbour on its own time: wait until every end has
        # (a half-learnt swap FAILs the same cables, with a stale neighbour at one end)
        def lldp(r: Report) -> dict[str | None, Result]:
            return {x.cable: x for x in r.results if x.check == "VerifyLldpNeighbors" and x.cable in (c1.id, c2.id)}

        def settled(r: Report) -> bool:
            other = {c1.id: c2.id, c2.id: c1.id}
            return (
                fails(r) == want
                and not r.counts()["ERROR"]
                and all(
                    len(parts := x.actual.split("; ")) == 2 and all(p.endswith(f"(end of {other[cid]})") for p in parts)
                    for cid, x in lldp(r).items()
                )
            )

        report = until(lab, inputs, settled, "the swap named")
        named = lldp(report)
        assert named["L0000000"].ends == (f"{LEAF} Ethernet128", "spine-p0-01 Ethernet0")
        assert named["L0000000"].actual == (
            f"{LEAF} Ethernet128 sees {SPINE} Ethernet0 (end of L0000001); "
            f"spine-p0-01 Ethernet0 sees {LEAF} Ethernet132 (end of L0000001)"
        )
        assert (named["L0000000"].message, named["L0000001"].message) == (
            "swapped with L0000001",
            "swapped with L0000000",
        )
        assert [f["fault"] for f in report_faults(report)] == ["L0000000", "L0000001"]
    finally:
        recable(
            lab,
            inputs,
            [(ends(c1.a), ends(c1.b)), (ends(c2.a), ends(c2.b))],
            [inputs.cables["L0000000"], inputs.cables["L0000001"]],
        )
    restored(lab, inputs, "all PASS after the cables are put back")


def test_link_down_is_named_exactly(lab: Lab, inputs: Inputs) -> None:
    cid = next(s.cable for s in inputs.sessions_of[LEAF] if s.b.device == "spine-p0-05")
    cable = inputs.cables[cid]
    faults.fail_link(lab, cid)
    try:
        want = {("VerifyInterfaceState", cid, cid), ("VerifyLldpNeighbors", cid, cid), ("VerifyBgpSessions", cid, cid)}
        report = until(lab, inputs, lambda r: fails(r) == want and not r.counts()["ERROR"], f"{cid} named")
        for r in report.results:
            if r.status is Status.FAIL:
                assert r.ends == (str(cable.a), str(cable.b)) and r.cable == cid
        ecmp = next(r for r in report.results if r.check == "VerifyEcmpRoutes" and r.object == LEAF)
        assert (ecmp.status, ecmp.explained_by) == (Status.PASS, (cid,))
        explained = {x for r in report.results for x in r.explained_by}
        assert explained == {cid}
    finally:
        faults.restore(lab, cid)
    restored(lab, inputs, f"all PASS after {cid} is restored")


def test_switch_down_is_named_as_the_switch(lab: Lab, inputs: Inputs) -> None:
    faults.fail_switch(lab, SPINE)
    try:
        sessions = {s.cable for s in inputs.sessions_of[SPINE]}
        want = {("VerifyDevicesAnswer", None, SPINE)} | {("VerifyBgpSessions", c, SPINE) for c in sessions}
        report = until(lab, inputs, lambda r: fails(r) == want and not r.counts()["ERROR"], f"{SPINE} named")
        assert [f["fault"] for f in report_faults(report)] == [SPINE]
        assert {x for r in report.results for x in r.explained_by} == {SPINE}
        leaves = [r for r in report.results if r.check == "VerifyEcmpRoutes"]
        assert len(leaves) == 16 and all(r.status is Status.PASS and r.explained_by == (SPINE,) for r in leaves)
    finally:
        faults.restore(lab, SPINE)
    restored(lab, inputs, f"all PASS after {SPINE} is restored", timeout=240)


def inventory(lab: Lab, path: Path, render: Path, out: Path) -> Path:
    """Every lab device as a host, run from here in its namespace with its vtysh/lldpcli wrappers on PATH."""
    hosts = {d: {"hwaac_netns": lab.netns(d), "hwaac_environment": {"PATH": lab.env(d)["PATH"]}} for d in lab.devices}
    doc = {
        "all": {
            "hosts": hosts,
            "vars": {
                "ansible_connection": "local",
                "ansible_python_interpreter": sys.executable,
                "verify_plan": str(render),
                "verify_dir": str(out),
                "verify_become": False,
            },
        }
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def playbook(inv: Path, hosts: list[str]) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "ANSIBLE_COLLECTIONS_PATH": str(REPO),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORKS": "16",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
        "ANSIBLE_LOCALHOST_WARNING": "0",
        "PYTHONPATH": str(REPO / "src"),
    }
    return subprocess.run(
        [
            str(Path(sys.executable).parent / "ansible-playbook"),
            "-i",
            str(inv),
            str(REPO / "playbooks" / "verify.yml"),
            "-e",
            json.dumps({"verify_hosts": ",".join(hosts)}),
        ],
        cwd=inv.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_playbook_names_a_link_down_and_passes_after(lab: Lab, inputs: Inputs, render: Path, tmp_path: Path) -> None:
    leaf, spine = "leaf-p0-su02-r3", "spine-p0-07"
    cid = next(s.cable for s in inputs.sessions_of[leaf] if s.b.device == spine)
    # the link's two ends, a node on its leaf and one in the other SU (the rail probes between them): every lab
    # device is in the inventory, verify_hosts limits the run to these, and only objects touching them are judged
    targets = [leaf, spine, "gpu-su02-h01", "gpu-su01-h01"]
    inv = inventory(lab, tmp_path / "lab.yml", render, tmp_path / "verify")
    faults.fail_link(lab, cid)
    try:
        want = {("VerifyInterfaceState", cid, cid), ("VerifyLldpNeighbors", cid, cid), ("VerifyBgpSessions", cid, cid)}
        until(lab, inputs, lambda r: fails(r) == want, f"{cid} named (before the playbook)")
        ran = playbook(inv, targets)
        assert ran.returncode == 2, ran.stdout[-3000:] + ran.stderr[-2000:]
        doc = json.loads((tmp_path / "verify" / "verify.json").read_text())
        assert [f["fault"] for f in doc["faults"]] == [cid]
        assert doc["counts"]["FAIL"] == 3 and doc["counts"]["ERROR"] == 0
        assert sorted(p.stem for p in (tmp_path / "verify" / "facts").glob("*.json")) == sorted(targets)
        assert sorted(doc["devices"]) == sorted(targets)
        assert all(set(r["devices"]) & set(targets) for r in doc["results"])
    finally:
        faults.restore(lab, cid)
    restored(lab, inputs, f"all PASS after {cid} is restored")
    ran = playbook(inv, targets)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert json.loads((tmp_path / "verify" / "verify.json").read_text())["passed"] is True
