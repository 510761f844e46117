"""``hwaac lab deploy`` for real: the collection's rollout (playbooks/fabric_deploy.yml, role switch_config, run by
ansible-playbook) against a lab whose switches run SONiC's GCU and real FRR.

The tiny fabric of tests/fixtures/verify/fabric (2 spines, 4 leaves, 4 nodes) keeps the module within a few
minutes: GCU's sorter needs about 20 s per switch for a first push (a demo leaf: about 60 s; docs/lab-deploy.md).
One lab for the module, reset to factory configs (no BGP), torn down in a finalizer. A bare fabric is deployed
and every session comes up; a second deploy changes nothing; a config GCU refuses changes nothing on its switch
(running config and FRR) and stops the rollout; a leaf whose sessions do not come up (wrong peer ASN) is rolled
back to its checkpoint and the next batch never starts; with the verify gate, a change to a healthy leaf is saved and
one to a leaf with a host cable down is rolled back, the report naming that cable. Needs root, frr, lldpd,
ansible-core and the SONiC toolkit (``sonic_toolkit`` fixture: FAILS without it where HWAAC_REQUIRE_SONIC_TOOLKIT=1).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hwaac.apply import bgp_neighbors, config_patch
from hwaac.apply.bgp import parse_bgp_summary
from hwaac.lab import Lab, faults
from hwaac.lab.deploy import DeployResult, deploy
from hwaac.lab.down import down
from hwaac.lab.factory import reset
from hwaac.lab.sonic_cli import Switch
from hwaac.lab.status import status
from hwaac.lab.up import up
from hwaac.plan import build_plan
from hwaac.render import render_to_dir
from hwaac.validate import load_intent

# the twin modules run one after another on one worker (make test: xdist --dist loadgroup): each module's lab has
# a fixed name, and test_lab checks that nothing but its own labs changed the machine
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("lab")]

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "fixtures" / "verify" / "fabric" / "fabric.yml"
NAME = "tdeploy"
SPINES = ["spine-p0-01", "spine-p0-02"]
BATCH3 = ["leaf-p0-su01-r0", "leaf-p0-su01-r1"]  # with --serial 50%: [spine-01] [spine-02] BATCH3 BATCH4
BATCH4 = ["leaf-p0-su02-r0", "leaf-p0-su02-r1"]
CHECKPOINT = "hwaac-pre-push"


@pytest.fixture(scope="module")
def render(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("render") / "tiny"
    render_to_dir(build_plan(load_intent(TINY)), out)
    return out


@pytest.fixture(scope="module")
def lab(render: Path, sonic_toolkit: Any) -> Iterator[Lab]:
    """The tiny fabric in a lab (in the default state folder, which the frr user can reach), every switch reset to
    its factory config; GCU decides (HWAAC_SONIC_TOOLKIT)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HWAAC_SONIC_TOOLKIT", str(sonic_toolkit.home))
        down(NAME)  # what a killed earlier run left
        up(render, name=NAME)
        try:
            reset(Lab.load(NAME))
            yield Lab.load(NAME)
        finally:
            down(NAME)


def switch(lab: Lab, name: str) -> Switch:
    return Switch.of_lab(lab.folder, name)


def bgpd_config(lab: Lab, name: str) -> str:
    return lab.run(name, ["vtysh", "-c", "show running-config bgpd"], timeout=30, check=True).stdout


def sessions(lab: Lab, name: str) -> dict[str, str]:
    return parse_bgp_summary(
        lab.run(name, ["vtysh", "-c", "show bgp summary json"], timeout=30, check=True).stdout
    ).peers


def rendered(render: Path, name: str) -> dict[str, Any]:
    return json.loads((render / "switches" / name / "config_db.json").read_text())


def all_established(lab: Lab, render: Path, timeout: float = 30.0) -> dict[str, dict[str, Any]]:
    """Every switch's rendered sessions Established, as ``hwaac lab status`` reads them; the status devices."""
    deadline = time.monotonic() + timeout
    while True:
        st = status(Lab.load(lab.name))  # the lab's record of the expected sessions follows the deploy
        bgp = {n: st["devices"][n].get("bgp", {}) for n in lab.switches}
        if all(
            b.get("established") == b.get("expected") == len(bgp_neighbors(rendered(render, n))) for n, b in bgp.items()
        ):
            return bgp
        if time.monotonic() > deadline:
            counts = {n: (b.get("established"), b.get("expected")) for n, b in bgp.items()}
            pytest.fail(
                f"sessions not all Established within {timeout:.0f} s: (established, expected) {counts}; "
                f"{st['problems']}",
                pytrace=False,
            )
        time.sleep(1)


def copy_render(render: Path, dest: Path, name: str, edit: Any) -> Path:
    """A copy of the render with ``edit(config_db)`` applied to switch ``name``'s config."""
    shutil.copytree(render, dest)
    path = dest / "switches" / name / "config_db.json"
    cfg = json.loads(path.read_text())
    edit(cfg)
    path.write_text(json.dumps(cfg, indent=2))
    return dest


@pytest.fixture(scope="module")
def first(lab: Lab) -> DeployResult:
    """The first deploy of the bare fabric (both spines in one batch, then all leaves)."""
    assert all(not switch(lab, n).state.running().get("BGP_NEIGHBOR") for n in lab.switches)  # bare
    assert all(sessions(lab, n) == {} for n in lab.switches)
    return deploy(lab, serial="100%")


def test_a_bare_fabric_is_deployed_and_every_session_comes_up(lab: Lab, render: Path, first: DeployResult) -> None:
    assert first.rc == 0, first.output[-4000:]
    assert first.batches == [SPINES, BATCH3 + BATCH4]
    assert {n: (c["changed"], c["failed"]) for n, c in first.recap.items() if n in lab.switches} == {
        n: (1, 0) for n in lab.switches
    }
    bgp = all_established(lab, render)
    assert {n: b["expected"] for n, b in bgp.items()} == {**{s: 8 for s in SPINES}, **{n: 4 for n in BATCH3 + BATCH4}}
    for name in lab.switches:
        sw = switch(lab, name)
        running = sw.state.running()
        assert config_patch(running, rendered(render, name)) == [], name  # holds the render
        assert running["MGMT_INTERFACE"] == {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}}  # untouched
        assert sw.state.saved() == running and sw.state.checkpoints() == []  # confirmed after the gate
    # the inventory the rollout ran with: the switch's own tools first on PATH, the gate's shares
    inv = json.loads((lab.folder / "deploy" / "inventory.json").read_text())["all"]["children"]["switches"]
    assert list(inv["hosts"]) == SPINES + BATCH3 + BATCH4
    assert inv["hosts"][SPINES[0]]["switch_config_bgp_min_up"] == 0.0  # its leaves came in a later batch
    assert inv["hosts"][BATCH3[0]]["switch_config_bgp_min_up"] == 1.0
    assert inv["hosts"][BATCH3[0]]["fabric_deploy_environment"]["PATH"].startswith(
        str(lab.layout.bin_dir(BATCH3[0])) + ":"
    )


def test_a_second_deploy_changes_nothing(lab: Lab, first: DeployResult) -> None:
    again = deploy(lab, serial="50%")
    assert again.rc == 0, again.output[-4000:]
    assert {n: c["changed"] for n, c in again.recap.items() if n in lab.switches} == {n: 0 for n in lab.switches}
    assert again.not_started == [] and again.failed == []


def test_a_config_gcu_refuses_changes_nothing_and_stops_the_rollout(
    lab: Lab, render: Path, tmp_path: Path, first: DeployResult
) -> None:
    bad = BATCH3[0]

    def dangling_scheduler(cfg: dict[str, Any]) -> None:
        cfg["QUEUE"]["Ethernet0|3"]["scheduler"] = "NO_SUCH"

    before, frr_before = switch(lab, bad).state.running(), bgpd_config(lab, bad)
    res = deploy(lab, render_dir=copy_render(render, tmp_path / "bad", bad, dangling_scheduler), serial="50%")
    assert res.rc != 0
    assert res.failed == [bad] and res.not_started == BATCH4
    assert 'Invalid leafref value \\"NO_SUCH\\"' in res.output or 'Invalid leafref value "NO_SUCH"' in res.output
    assert "config apply-patch failed" in res.output
    sw = switch(lab, bad)
    assert sw.state.running() == before and sw.state.checkpoints() == []
    assert bgpd_config(lab, bad) == frr_before
    assert set(sessions(lab, bad).values()) == {"Established"}


def test_a_leaf_whose_sessions_do_not_come_up_is_rolled_back(
    lab: Lab, render: Path, tmp_path: Path, first: DeployResult
) -> None:
    leaf = BATCH3[1]
    peer = bgp_neighbors(rendered(render, leaf))[0]

    def wrong_peer_asn(cfg: dict[str, Any]) -> None:
        cfg["BGP_NEIGHBOR"][f"default|{peer}"]["asn"] = "4200000999"

    before, frr_before = switch(lab, leaf).state.running(), bgpd_config(lab, leaf)
    res = deploy(lab, render_dir=copy_render(render, tmp_path / "asn", leaf, wrong_peer_asn), serial="50%", gate_s=8)
    assert res.rc != 0
    assert res.failed == [leaf] and res.recap[leaf]["rescued"] == 1
    assert res.not_started == BATCH4  # max_fail_percentage 0: the next batch never started
    assert (
        f"BGP health gate failed after 9 read(s): 3/4 BGP sessions Established; not Established: {peer}" in res.output
    )
    assert f"the switch was rolled back to checkpoint {CHECKPOINT}" in res.output
    sw = switch(lab, leaf)
    assert sw.state.running() == before and sw.state.checkpoints() == [] and sw.state.saved() == before
    assert bgpd_config(lab, leaf) == frr_before
    all_established(lab, render)  # the rolled-back session is up again
    assert os.path.exists(res.log_file)


def test_the_verify_gate_passes_a_healthy_leaf_and_rolls_back_one_with_a_cable_down(
    lab: Lab, render: Path, tmp_path: Path, first: DeployResult
) -> None:
    leaf = BATCH3[0]
    reports = lab.folder / "deploy" / "verify-gate"

    def described(text: str) -> Any:
        def edit(cfg: dict[str, Any]) -> None:
            cfg["PORT"]["Ethernet0"]["description"] = text

        return edit

    ok = deploy(
        lab,
        render_dir=copy_render(render, tmp_path / "ok", leaf, described("verify gate: healthy")),
        serial="50%",
        verify_gate=True,
    )
    assert ok.rc == 0, ok.output[-4000:]
    assert {n: c["changed"] for n, c in ok.recap.items() if n in lab.switches} == {
        n: int(n == leaf) for n in lab.switches
    }
    doc = json.loads((reports / leaf / "verify.json").read_text())
    assert doc["passed"] is True and doc["devices"] == [leaf] and doc["counts"]["PASS"] > 0
    assert switch(lab, leaf).state.running()["PORT"]["Ethernet0"]["description"] == "verify gate: healthy"

    cid = next(
        c
        for c, link in lab.state["links"].items()
        if leaf in (link["a"][0], link["b"][0]) and {link["a"][0], link["b"][0]} & set(lab.hosts)
    )
    before, frr_before = switch(lab, leaf).state.running(), bgpd_config(lab, leaf)
    faults.fail_link(lab, cid)
    try:
        bad = deploy(
            lab,
            render_dir=copy_render(render, tmp_path / "bad", leaf, described("verify gate: cable")),
            serial="50%",
            verify_gate=True,
        )
        assert bad.rc != 0
        assert bad.failed == [leaf] and bad.recap[leaf]["rescued"] == 1 and bad.not_started == BATCH4
        assert f"the switch was rolled back to checkpoint {CHECKPOINT}" in bad.output
        doc = json.loads((reports / leaf / "verify.json").read_text())
        assert doc["passed"] is False and [f["fault"] for f in doc["faults"]] == [cid]
        sw = switch(lab, leaf)
        assert sw.state.running() == before and sw.state.checkpoints() == [] and sw.state.saved() == before
        assert bgpd_config(lab, leaf) == frr_before
    finally:
        faults.restore(lab, cid)
