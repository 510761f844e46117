"""The re-check before an undrain: recorded iputils outputs judged against the policy's loss limit, and sweeps of
``hwaac remediate --apply`` (the playbook run stubbed, the pings answering as recorded) that undrain a link only
when its pings pass, drain it again when they do not, and never reopen a link a switch undrain should leave shut."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest
from conftest import ping_result

from hwaac.cli import main as hwaac_main
from hwaac.mitigation import recheck
from hwaac.mitigation.policy import Recheck
from hwaac.plan import build_plan
from hwaac.validate import load_intent

DEMO = Path(__file__).parents[3] / "inventory" / "demo"
POLICY = (
    "guard_rails: {min_plane_spines: 2}\ngraceful_s: 0\nrecheck: {max_loss_pct: %g}\nrules:\n"
    "  - name: lossy\n    match: {kinds: [link], link_kinds: [leaf_spine]}\n    action: drain_link\n"
    "    persistence: 1\n    hold_down_s: 0\n    recheck_sweeps: 1\n"
)


@pytest.fixture(scope="module")
def plan():
    return build_plan(load_intent(DEMO))


# (recorded answer, max_loss_pct, passes, what the verdict says)
CASES = [
    ("clean", 0, True, "200/200 replies (0.0% lost, at most 0% allowed)"),
    ("lossy", 0, False, "191/200 replies (4.5% lost, at most 0% allowed)"),
    ("lossy", 5, True, "191/200 replies (4.5% lost, at most 5% allowed)"),
    ("dead", 50, False, "0/200 replies (100.0% lost"),
    ("nosrc", 0, False, "ping: bind: Cannot assign requested address"),
]


@pytest.mark.parametrize(("answer", "limit", "ok", "says"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_a_recorded_ping_is_judged_against_the_loss_limit(tmp_path, answer, limit, ok, says):
    probe = recheck.Probe("C1", "leaf-1", "10.99.0.0", "10.99.0.1")
    item = {"cable": "C1", "src": probe.src, "dst": probe.dst}
    (tmp_path / "leaf-1.json").write_text(json.dumps([ping_result(item, answer)]))
    verdict = recheck.judge([probe], tmp_path, Recheck(max_loss_pct=limit))["C1"]
    assert verdict.ok is ok and says in verdict.detail


def test_a_link_with_no_result_fails_its_recheck(tmp_path):
    probes = [
        recheck.Probe("C1", "leaf-1", "10.99.0.0", "10.99.0.1"),
        recheck.Probe("C2", "leaf-2", "10.99.0.2", "10.99.0.3"),
    ]
    (tmp_path / "leaf-1.json").write_text(json.dumps([ping_result({"cable": "C1"}, "clean")]))
    (tmp_path / "leaf-2.json").write_text("{not json")
    got = recheck.judge(probes, tmp_path, Recheck())
    assert got["C1"].ok and not got["C2"].ok and got["C2"].detail == "no ping result from leaf-2"


def test_probes_ping_from_the_a_end_to_the_b_end(plan):
    link = next(x for x in plan.links if x.kind == "leaf_spine")
    (p,) = recheck.probes([link])
    assert (p.cable, p.device) == (link.cable_id, link.a_device)
    assert (p.src, p.dst) == ("10.1.0.1", "10.1.0.0")  # the leaf's /31 address and the spine's


def _sweep(tmp_path: Path, capsys, cable: str | None, minute: int, limit: float = 0) -> tuple[int, dict]:
    """One sweep at T+minute, with a lossy ``cable`` found (None: nothing found)."""
    labels = {
        "alertname": "HwaacMitigate",
        "rule": "probe_path_loss",
        "severity": "fault",
        "kind": "link",
        "component": cable or "",
        "cable": cable or "",
        "device": "",
        "port": "",
        "hosts": "",
    }
    alerts = [{"status": "firing", "labels": labels, "annotations": {}, "startsAt": "2026-12-05T03:00:00Z"}]
    (tmp_path / "alert.json").write_text(
        json.dumps({"version": "4", "status": "firing", "alerts": alerts if cable else []})
    )
    (tmp_path / "policy.yaml").write_text(POLICY % limit)
    capsys.readouterr()
    code = hwaac_main(
        [
            "remediate",
            str(DEMO),
            str(tmp_path / "alert.json"),
            "--state",
            str(tmp_path / "state"),
            "--policy",
            str(tmp_path / "policy.yaml"),
            "--now",
            f"2026-12-05T03:{minute:02d}:00+00:00",
            "--format",
            "json",
            "--apply",
            "-i",
            "inv.yml",
        ]
    )
    return code, json.loads(capsys.readouterr().out)


def _state(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "state" / "state.json").read_text())


def test_an_undrain_waits_for_a_clean_recheck_and_drains_again_until_then(plan, tmp_path, capsys, switches):
    link = next(x for x in plan.links if x.kind == "leaf_spine")
    cable, key = link.cable_id, f"drain_link|{link.cable_id}"
    code, out = _sweep(tmp_path, capsys, cable, 0)
    assert code == 0 and out["outcome"] == {key: "done"} and len(switches.runs) == 1
    assert switches.runs[0]["recheck"] == []  # a drain pings nothing

    switches.answers[cable] = "lossy"
    code, out = _sweep(tmp_path, capsys, None, 1)
    assert code == 0 and out["outcome"][f"undrain_link|{cable}"].startswith(
        f"re-check failed, drained again: {link.a_device} 10.1.0.1 -> 10.1.0.0: 191/200 replies (4.5% lost"
    )
    assert out["outcome"][key] == "done"
    assert [r["recheck"] for r in switches.runs[1:]] == [[cable], []]
    opened, then = switches.runs[1:]
    for device in (link.a_device, link.b_device):  # opened still marked, then shut again: never restored
        (nbr,) = opened["stage1"][device]["BGP_NEIGHBOR"].values()
        assert nbr == {"admin_status": "up"}
        assert then["stage2"][device] == {
            "BGP_NEIGHBOR": {k: {"admin_status": "down"} for k in opened["stage1"][device]["BGP_NEIGHBOR"]}
        }
    assert _state(tmp_path)["out"][key]["since"] == "2026-12-05T03:01:00+00:00"  # the hold-down starts over
    log = [json.loads(x) for x in (tmp_path / "state" / "decisions.jsonl").read_text().splitlines()]
    assert [(x["action"], x["rule"], x["outcome"][:15]) for x in log[1:]] == [
        ("undrain_link", "ok", "re-check failed"),
        ("drain_link", "ok", "done"),
    ]
    assert log[2]["reason"].startswith(f"the re-check before undrain_link {cable} failed: ")

    switches.answers[cable] = "clean"
    code, out = _sweep(tmp_path, capsys, None, 2)
    assert code == 0 and out["outcome"] == {f"undrain_link|{cable}": "done"}
    restored = switches.runs[-1]["stage2"][link.a_device]["BGP_NEIGHBOR_AF"]
    assert all(not any(m.startswith("HWAAC_GSHUT") for m in v["route_map_out"]) for v in restored.values())
    assert _state(tmp_path)["out"] == {}


def test_a_loss_limit_lets_a_slightly_lossy_link_back(plan, tmp_path, capsys, switches):
    cable = next(x for x in plan.links if x.kind == "leaf_spine").cable_id
    _sweep(tmp_path, capsys, cable, 0, limit=5)
    switches.answers[cable] = "lossy"
    code, out = _sweep(tmp_path, capsys, None, 1, limit=5)
    assert code == 0 and out["outcome"] == {f"undrain_link|{cable}": "done"}


def test_a_switch_undrain_leaves_a_link_drained_on_its_own_shut(plan, tmp_path, capsys, switches):
    spine = "spine-p0-01"
    mine = [x for x in plan.links if spine in (x.a_device, x.b_device)]
    lossy, failing = mine[0], mine[5]
    _sweep(tmp_path, capsys, lossy.cable_id, 0)
    base = ["remediate", str(DEMO), "--state", str(tmp_path / "state"), "--format", "json", "--apply", "-i", "x"]
    assert hwaac_main([*base, "--drain-switch", spine, "--reason", "optics swap"]) == 0
    switches.answers[failing.cable_id] = "dead"
    capsys.readouterr()
    assert hwaac_main([*base, "--undrain-switch", spine, "--reason", "swapped"]) == 1  # a link failed: exit 1
    out = json.loads(capsys.readouterr().out)
    opened = switches.runs[-2]
    assert lossy.cable_id not in opened["recheck"] and len(opened["recheck"]) == len(mine) - 1
    opened_there = opened["stage1"].get(lossy.a_device, {}).get("BGP_NEIGHBOR", {})
    assert f"default|{ipaddress.IPv4Address(lossy.b_ip)}" not in opened_there  # the session on the lossy link
    assert {
        f"default|{ipaddress.IPv4Address(x.b_ip)}" for x in mine if x.a_device == lossy.a_device and x != lossy
    } <= set(opened_there)  # its parallel links: opened
    assert out["outcome"][f"undrain_switch|{spine}"].startswith("done, but 1 link(s) failed the re-check")
    out_now = _state(tmp_path)["out"]
    assert set(out_now) == {f"drain_link|{lossy.cable_id}", f"drain_link|{failing.cable_id}"}
    assert out_now[f"drain_link|{failing.cable_id}"] | {"since": ""} == {
        "action": "drain_link",
        "target": failing.cable_id,
        "rule": "manual",
        "since": "",
        "clean": 0,
        "evidence": [{"recheck": out_now[f"drain_link|{failing.cable_id}"]["evidence"][0]["recheck"]}],
        "manual": True,
        "note": "optics swap",
    }  # out as its switch was: a person's drain, with its reason
    assert "0/200 replies" in out_now[f"drain_link|{failing.cable_id}"]["evidence"][0]["recheck"]


def test_a_persons_undrain_that_fails_its_recheck_leaves_the_link_to_the_sweeps(plan, tmp_path, capsys, switches):
    cable = next(x for x in plan.links if x.kind == "leaf_spine").cable_id
    _sweep(tmp_path, capsys, cable, 0)
    switches.answers[cable] = "dead"
    capsys.readouterr()
    code = hwaac_main(
        [
            "remediate",
            str(DEMO),
            "--state",
            str(tmp_path / "state"),
            "--policy",
            str(tmp_path / "policy.yaml"),
            "--format",
            "json",
            "--apply",
            "-i",
            "x",
            "--undrain-link",
            cable,
            "--reason",
            "optic reseated",
            "--now",
            "2026-12-05T03:10:00+00:00",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["outcome"][f"undrain_link|{cable}"].startswith("re-check failed, drained again")
    assert "0/200 replies" in out["rechecks"][cable] and out["rechecks"][cable].startswith("FAILED: ")
    kept = _state(tmp_path)["out"][f"drain_link|{cable}"]
    assert (kept["rule"], kept.get("manual", False)) == ("lossy", False)  # still the sweeps' to bring back
    switches.answers[cable] = "clean"
    code, out = _sweep(tmp_path, capsys, None, 30)
    assert code == 0 and out["outcome"] == {f"undrain_link|{cable}": "done"}
