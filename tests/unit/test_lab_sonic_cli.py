"""The lab switch's SONiC tools (hwaac.lab.sonic_cli) on a temp state folder without FRR, the factory config, and
the deploy's pure parts (batches, gate shares, recap).

apply-patch without the toolkit goes through jsonpatch and hwaac's validator and says that GCU did not judge it;
with the toolkit (``sonic_toolkit`` fixture) SONiC's own GCU decides. The switch is a leaf of the tiny fabric in
tests/fixtures/verify/fabric (6 switches), rendered here.
"""

from __future__ import annotations

import copy
import ipaddress
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from hwaac.lab.api import Lab
from hwaac.lab.deploy import batches, gate_shares, parse_serial, recap
from hwaac.lab.errors import LabError
from hwaac.lab.factory import factory_config
from hwaac.lab.sonic_cli import main
from hwaac.lab.sonic_state import SonicVersion, SwitchState, asic_type
from hwaac.plan import build_plan
from hwaac.render.sonic import render_config_db
from hwaac.validate import load_intent

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "fixtures" / "verify" / "fabric" / "fabric.yml"
LEAF, SPINE = "leaf-p0-su01-r0", "spine-p0-01"


@cache
def _rendered() -> str:
    plan = build_plan(load_intent(TINY))
    return json.dumps({s.name: render_config_db(plan, s) for s in plan.switches})


def rendered(name: str = LEAF) -> dict[str, Any]:
    return json.loads(_rendered())[name]


class Tools:
    """``python -m hwaac.lab.sonic_cli --state-dir DIR TOOL ...`` run in-process."""

    def __init__(self, folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.folder, self.capsys = folder, capsys
        self.state = SwitchState(folder)

    def __call__(self, *argv: str) -> tuple[int, str, str]:
        self.capsys.readouterr()
        rc = main(["--state-dir", str(self.folder), *argv])
        out = self.capsys.readouterr()
        return rc, out.out, out.err

    def patch_file(self, ops: list[dict[str, Any]]) -> str:
        path = self.folder.parent / "patch.json"
        path.write_text(json.dumps(ops))
        return str(path)


@pytest.fixture
def tools(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Tools:
    monkeypatch.delenv("HWAAC_SONIC_TOOLKIT", raising=False)
    t = Tools(tmp_path / "switch", capsys)
    t.state.write_running(rendered())
    return t


ASN_PATH = "/BGP_NEIGHBOR/default|10.1.0.0/asn"
BAD_SCHEDULER = [{"op": "replace", "path": "/QUEUE/Ethernet0|3/scheduler", "value": "NO_SUCH"}]


# ------------------------------------------------------------------------------------------------ sonic-cfggen


def test_sonic_cfggen_reads_the_running_config_db(tools: Tools) -> None:
    rc, out, _ = tools("sonic-cfggen", "-d", "--print-data")
    assert rc == 0 and json.loads(out) == rendered()
    assert tools("sonic-cfggen", "-d", "-v", "DEVICE_METADATA.localhost.hwsku")[1] == "Mellanox-SN5600-O128\n"
    assert (
        json.loads(tools("sonic-cfggen", "-d", "--var-json", "LOOPBACK_INTERFACE")[1])
        == rendered()["LOOPBACK_INTERFACE"]
    )


def test_a_switch_without_a_running_config_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = Tools(tmp_path / "none", capsys)("sonic-cfggen", "-d", "--print-data")
    assert rc == 1 and out == ""
    assert "config_db.json: no such config_db file" in err


# --------------------------------------------------------------------------------------- checkpoints, save


def test_checkpoint_rollback_and_delete(tools: Tools) -> None:
    before = tools.state.running()
    rc, out, _ = tools("config", "checkpoint", "pre")
    assert rc == 0 and out.splitlines()[-1] == "Checkpoint created successfully."
    assert json.loads(tools("config", "list-checkpoints")[1]) == ["pre"]
    changed = copy.deepcopy(before)
    changed["BGP_NEIGHBOR"]["default|10.1.0.0"]["asn"] = "4200000099"
    tools.state.write_running(changed)

    rc, out, _ = tools("config", "rollback", "pre")
    assert rc == 0 and out.splitlines()[-1] == "Config rolled back successfully."
    assert f'"path": "{ASN_PATH}"' in out  # the Config Replacer's patch is logged
    assert tools.state.running() == before
    assert tools("config", "delete-checkpoint", "pre")[1].splitlines()[-1] == "Checkpoint deleted successfully."
    assert json.loads(tools("config", "list-checkpoints")[1]) == []


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["rollback", "nope"], "Error: Checkpoint 'nope' does not exist"),
        (["delete-checkpoint", "nope"], "Error: Checkpoint 'nope' does not exist"),
        (["checkpoint", "../escape"], "Error: checkpoint name '../escape' is not valid: 1 to 64 of A-Z"),
        (["checkpoint"], "Error: Missing argument 'CHECKPOINT_NAME'."),
        (["apply-patch"], "Error: Missing argument 'PATCH_FILE_PATH'."),
        (
            ["apply-patch", "/no/such/patch.json"],
            "Error: Invalid value for 'PATCH_FILE_PATH': Path '/no/such/patch.json'",
        ),
        (["replace", "x"], "Error: No such command 'replace'"),
    ],
)
def test_bad_commands_fail_like_click_and_change_nothing(tools: Tools, argv: list[str], error: str) -> None:
    before = tools.state.running()
    rc, _, err = tools("config", *argv)
    assert rc == 2 and error in err
    assert "Try \"config" in err
    assert tools.state.running() == before and tools.state.checkpoints() == []


def test_save_needs_yes(tools: Tools) -> None:
    rc, out, _ = tools("config", "save")
    assert rc == 1 and "Aborted!" in out and tools.state.saved() is None
    rc, out, _ = tools("config", "save", "-y")
    assert (
        rc == 0 and out == "Running command: /usr/local/bin/sonic-cfggen -d --print-data > /etc/sonic/config_db.json\n"
    )
    assert tools.state.saved() == tools.state.running()


# ----------------------------------------------------------------------------------- apply-patch, no toolkit


def test_without_the_toolkit_a_patch_is_applied_with_a_warning(tools: Tools) -> None:
    rc, out, err = tools(
        "config", "apply-patch", tools.patch_file([{"op": "replace", "path": ASN_PATH, "value": "4200000099"}])
    )
    assert rc == 0, err
    assert out.splitlines()[-1] == "Patch applied successfully."
    assert "WARNING: HWAAC_SONIC_TOOLKIT is not set: SONiC's generic config updater did not judge this patch" in err
    assert "after hwaac's validator accepted the result" in err
    assert tools.state.running()["BGP_NEIGHBOR"]["default|10.1.0.0"]["asn"] == "4200000099"


REFUSED = [
    (BAD_SCHEDULER, "$.QUEUE['Ethernet0|3'].scheduler: 'NO_SUCH' is not defined in SCHEDULER"),
    ([{"op": "remove", "path": "/BGP_NEIGHBOR/default|10.9.9.9"}], "patch does not apply"),
    (
        [
            {"op": "remove", "path": "/LOOPBACK_INTERFACE/Loopback0"},
            {"op": "remove", "path": "/LOOPBACK_INTERFACE/Loopback0|10.0.0.1~132"},
        ],
        "will result in empty tables which is not allowed in ConfigDb. Table: LOOPBACK_INTERFACE",
    ),
]


@pytest.mark.parametrize(("patch", "message"), REFUSED)
def test_without_the_toolkit_a_bad_patch_is_refused_and_nothing_changes(
    tools: Tools, patch: list[dict[str, Any]], message: str
) -> None:
    before = tools.state.running()
    rc, out, err = tools("config", "apply-patch", tools.patch_file(patch))
    assert rc == 2
    assert "Failed to apply patch due to: Failed to apply patch on the following scopes:" in err
    assert message in err
    assert "Patch applied successfully." not in out
    assert tools.state.running() == before


def test_patch_file_must_be_a_list_of_operations(tools: Tools) -> None:
    path = tools.folder.parent / "bad.json"
    path.write_text('{"op": "add"}')
    rc, _, err = tools("config", "apply-patch", str(path))
    assert rc == 2 and f"Invalid patch format in file: {path}" in err


def test_dry_run_changes_nothing(tools: Tools) -> None:
    before = tools.state.running()
    rc, out, _ = tools(
        "config", "apply-patch", "-d", tools.patch_file([{"op": "replace", "path": ASN_PATH, "value": "4200000099"}])
    )
    assert rc == 0 and out.splitlines()[-1] == "Patch applied successfully."
    assert tools.state.running() == before


# ------------------------------------------------------------------------------- apply-patch, SONiC's GCU


def test_gcu_refuses_a_dangling_scheduler_and_nothing_changes(
    tools: Tools, sonic_toolkit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HWAAC_SONIC_TOOLKIT", str(sonic_toolkit.home))
    before = tools.state.running()
    rc, _, err = tools("config", "apply-patch", tools.patch_file(BAD_SCHEDULER))
    assert rc == 2
    assert 'Invalid leafref value "NO_SUCH"' in err and "WARNING" not in err
    assert tools.state.running() == before


def test_gcu_decides_an_accepted_patch(tools: Tools, sonic_toolkit: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HWAAC_SONIC_TOOLKIT", str(sonic_toolkit.home))
    tools.state.write_version(SonicVersion("mellanox", "SONiC.202505.01", "202505"))
    rc, out, err = tools(
        "config", "apply-patch", tools.patch_file([{"op": "replace", "path": ASN_PATH, "value": "4200000099"}])
    )
    assert rc == 0, err
    assert "WARNING" not in err
    # asn is create-only for GCU (patch_sorter.py CreateOnlyFilter): its sorter replaces the whole neighbour
    applied = [line.split("* ", 1)[1] for line in out.splitlines() if line.startswith("Patch Applier:   * ")]
    assert [(json.loads(c)[0]["op"], json.loads(c)[0]["path"]) for c in applied] == [
        ("remove", "/BGP_NEIGHBOR_AF/default|10.1.0.0|ipv4_unicast"),
        ("remove", "/BGP_NEIGHBOR/default|10.1.0.0"),
        ("add", "/BGP_NEIGHBOR/default|10.1.0.0"),
        ("add", "/BGP_NEIGHBOR_AF/default|10.1.0.0|ipv4_unicast"),
    ]
    want = rendered()
    want["BGP_NEIGHBOR"]["default|10.1.0.0"]["asn"] = "4200000099"
    assert tools.state.running() == want


# ------------------------------------------------------------------------------------------- factory config


def test_factory_config_holds_the_platform_only() -> None:
    cfg = factory_config(rendered(), 3)
    assert set(cfg) == {"DEVICE_METADATA", "MGMT_INTERFACE", "MGMT_PORT", "PORT", "PFC_WD", "FEATURE"}
    meta = cfg["DEVICE_METADATA"]["localhost"]
    assert meta["hostname"] == "sonic" and meta["hwsku"] == "Mellanox-SN5600-O128"
    assert meta["mac"] == "00:00:5e:00:53:03"
    assert cfg["PORT"]["Ethernet0"] == {
        k: rendered()["PORT"]["Ethernet0"][k] for k in ("alias", "lanes", "speed", "index")
    }
    assert asic_type(cfg) == "mellanox" and asic_type({}) == "vs"
    with pytest.raises(LabError, match="no hwsku/platform"):
        factory_config({"PORT": {"Ethernet0": {}}})


def test_factory_configs_are_yang_valid(tmp_path: Path, sonic_toolkit: Any) -> None:
    from hwaac.sonic_toolkit import yang_validate

    files = []
    for name in (LEAF, SPINE):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(factory_config(rendered(name))))
        files.append(path)
    results = yang_validate(files, toolkit=sonic_toolkit)
    assert [(r.valid, r.errors) for r in results] == [(True, ()), (True, ())]


# ------------------------------------------------------------------------------------------- deploy's parts


def tiny_lab(tmp_path: Path) -> Lab:
    """A lab record of the tiny fabric (devices and links as hwaac lab up writes them), not running."""
    plan = build_plan(load_intent(TINY))
    devices = {s.name: {"kind": "switch", "role": s.role, "netns": f"hwl-t-{s.name}"} for s in plan.switches}
    links = {
        link.cable_id: {
            "a": [link.a_device, link.a_port],
            "b": [link.b_device, link.b_port],
            "addrs": [str(ipaddress.ip_address(link.a_ip)), str(ipaddress.ip_address(link.b_ip))],
        }
        for link in plan.links
        if link.a_device in devices and link.b_device in devices
    }
    return Lab(tmp_path, {"name": "t", "devices": devices, "links": links, "render_dir": str(tmp_path)})


def test_batches_put_spines_first_and_split_each_tier(tmp_path: Path) -> None:
    lab = tiny_lab(tmp_path)
    leaves = [n for n in lab.switches if n.startswith("leaf")]
    assert batches(lab, "50%") == [["spine-p0-01"], ["spine-p0-02"], leaves[:2], leaves[2:]]
    assert batches(lab, "100%") == [["spine-p0-01", "spine-p0-02"], leaves]
    assert batches(lab, "3") == [["spine-p0-01", "spine-p0-02"], leaves[:3], leaves[3:]]
    for bad in ("0", "0%", "101%", "x", "-1"):
        with pytest.raises(LabError, match="--serial"):
            parse_serial(bad)


def test_gate_shares_count_the_peers_that_can_be_up(tmp_path: Path) -> None:
    lab = tiny_lab(tmp_path)
    desired = {n: rendered(n) for n in lab.switches}
    bare = {n: {} for n in lab.switches}
    order = batches(lab, "50%")
    shares = gate_shares(lab, order, desired, bare)
    # bare fabric: a spine's peers (leaves) come later; a leaf's (spines) came before
    assert shares["spine-p0-01"] == 0.0 and shares["spine-p0-02"] == 0.0
    assert all(shares[n] == 1.0 for n in lab.switches if n.startswith("leaf"))
    # leaves first: a leaf can count only on the other leaves' spines... none, so nothing
    assert gate_shares(lab, [order[2], order[3], order[0], order[1]], desired, bare)["leaf-p0-su01-r0"] == 0.0
    # a deployed fabric: every session must come up
    assert set(gate_shares(lab, order, desired, desired).values()) == {1.0}


def test_recap_is_read_per_host() -> None:
    text = (
        "PLAY RECAP ****\nleaf-1                     : ok=5    changed=1    unreachable=0    failed=0    "
        "skipped=1    rescued=0    ignored=0\nspine-1 : ok=2 changed=0 unreachable=0 failed=1 skipped=0 "
        "rescued=1 ignored=0\n"
    )
    assert recap(text) == {
        "leaf-1": {"ok": 5, "changed": 1, "unreachable": 0, "failed": 0, "skipped": 1, "rescued": 0, "ignored": 0},
        "spine-1": {"ok": 2, "changed": 0, "unreachable": 0, "failed": 1, "skipped": 0, "rescued": 1, "ignored": 0},
    }
    assert recap("no recap") == {}
