"""The Lustre fakes read by hwaac's health code: a client node is set up with the stateful fakes (tests/fakes/bin:
``modprobe``, ``lnetctl``, ``mount``), the probes ``aiinfra.hwaac.lustre_health`` runs (:func:`hwaac.health.lustre.
commands`) are run against the ``lfs``, ``lctl`` and ``lnetctl`` fakes, and :func:`hwaac.health.lustre.evaluate`
judges their output as the action plugin does.

The expected codes follow from the fakes' docstrings and the parsers' documented rules, not from a run: a
deactivated OST makes ``lfs check`` fail that device with ENOTCONN (lfs fake) -> ``LUSTRE_TARGET_INACTIVE``
(parse_lfs_check); ``health_check`` ``NOT HEALTHY`` (lctl knob) -> ``LUSTRE_NOT_HEALTHY`` with action reboot
(parse_health_check); MGS NIDs in ``unreachable_nids`` fail ``lctl ping`` (lctl fake) -> ``LUSTRE_MGS_UNREACHABLE``
when no NID of any MGS node answers, ``LUSTRE_MGS_NID_UNREACHABLE`` (WARN) when one does (evaluate); an NI whose
``status`` is not ``up`` -> ``LUSTRE_LNET_NI_DOWN`` (parse_lnet_net_show).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from hwaac.health.lustre import all_mgs_nids, client_verdict, commands, evaluate, expected_filesystems

REPO = Path(__file__).resolve().parents[3]
FAKES = REPO / "tests" / "fakes" / "bin"
MGS = [["10.20.0.1@o2ib", "10.20.1.1@o2ib"], ["10.20.0.2@o2ib"]]
SOURCE = "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.2@o2ib:/lfs1"


class Client:
    """A fake Lustre client node: its fake-state folder, LNet on o2ib over ib0 and ib1 (the lnetctl fake's default
    interfaces), lfs1 mounted under the test's folder."""

    def __init__(self, tmp: Path, layout: str = "2.15") -> None:
        self.state = tmp / "state"
        self.state.mkdir()
        self.env = {
            **os.environ,
            "PATH": f"{FAKES}{os.pathsep}{os.environ['PATH']}",
            "HWAAC_FAKE_STATE": str(self.state),
        }
        self.mount_point = tmp / "mnt" / "lfs1"
        self.mount_point.mkdir(parents=True)
        self.filesystems = expected_filesystems([{"name": "lfs1", "mgs": MGS, "mount_point": str(self.mount_point)}])
        if layout != "2.15":
            (self.state / "lnet.json").write_text(json.dumps({"loaded": False, "layout": layout}))
        for argv in (
            ["modprobe", "lnet"],
            ["lnetctl", "lnet", "configure"],
            ["lnetctl", "net", "add", "--net", "o2ib", "--if", "ib0,ib1"],
            ["mount", "-t", "lustre", "-o", "flock", SOURCE, str(self.mount_point)],
        ):
            done = self.run(argv)
            assert done["rc"] == 0, (argv, done)

    def run(self, argv: list[str]) -> dict[str, Any]:
        """One probe, shaped as plugins/module_utils/timed_run.py returns it."""
        start = time.monotonic()
        proc = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=60, check=False)
        return {
            "rc": proc.returncode,
            "stdout": proc.stdout,
            "stderr": proc.stderr,
            "seconds": time.monotonic() - start,
            "timed_out": False,
        }

    def knobs(self, **knobs: Any) -> None:
        path = self.state / "lustre.json"
        data = json.loads(path.read_text())
        data.setdefault("knobs", {}).update(knobs)
        path.write_text(json.dumps(data))

    def health(self) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """Run the lustre_health probes and judge them: (client verdict as a dict, the raw outputs)."""
        outputs = {name: self.run(argv) for name, argv in commands(all_mgs_nids(self.filesystems), lnet=True).items()}
        findings = evaluate(outputs, self.filesystems, proc_mounts=(self.state / "proc_mounts").read_text())
        return client_verdict("gpu-node-01", findings).to_dict(), outputs


@pytest.mark.parametrize("layout", ["2.15", "2.16"])
def test_a_healthy_client_passes(tmp_path: Path, layout: str) -> None:
    summary, outputs = Client(tmp_path, layout).health()
    assert (summary["status"], summary["codes"]) == ("PASS", []), summary
    assert set(outputs) == {
        "lfs_check",
        "health_check",
        "imports",
        "lnet_net",
        "ping 10.20.0.1@o2ib",
        "ping 10.20.1.1@o2ib",
        "ping 10.20.0.2@o2ib",
    }
    # the probes really ran against the mounted fs (not an empty PASS): 4 OSTs + 1 MDT + 1 MGC (fakes' defaults)
    assert outputs["lfs_check"]["stdout"].count(" active.") == 6
    assert outputs["imports"]["stdout"].count("state: FULL") == 5


def test_a_deactivated_ost_fails_as_inactive(tmp_path: Path) -> None:
    client = Client(tmp_path)
    client.knobs(deactivated=["lfs1-OST0003"])
    summary, outputs = client.health()
    assert summary["status"] == "FAIL"
    assert "LUSTRE_TARGET_INACTIVE" in summary["codes"]
    inactive = [f for f in summary["findings"] if f["code"] == "LUSTRE_TARGET_INACTIVE"]
    assert [f["subject"] for f in inactive] == ["lfs1-OST0003-osc-ffff8a2c4e1b8000"]
    assert "(107)" in outputs["lfs_check"]["stderr"]


def test_not_healthy_fails_with_reboot(tmp_path: Path) -> None:
    client = Client(tmp_path)
    client.knobs(health_check="NOT HEALTHY")
    summary, _ = client.health()
    assert (summary["status"], summary["codes"], summary["action"]) == ("FAIL", ["LUSTRE_NOT_HEALTHY"], "reboot")


def test_no_mgs_nid_answering_fails_one_missing_warns(tmp_path: Path) -> None:
    client = Client(tmp_path)
    client.knobs(unreachable_nids=["10.20.1.1@o2ib"])
    summary, _ = client.health()
    assert (summary["status"], summary["codes"]) == ("WARN", ["LUSTRE_MGS_NID_UNREACHABLE"]), summary
    assert [f["subject"] for f in summary["findings"] if f["status"] != "PASS"] == ["10.20.1.1@o2ib"]

    client.knobs(unreachable_nids=[nid for node in MGS for nid in node])
    summary, _ = client.health()
    assert summary["status"] == "FAIL"
    assert "LUSTRE_MGS_UNREACHABLE" in summary["codes"]


def test_an_lnet_ni_down_fails(tmp_path: Path) -> None:
    client = Client(tmp_path)
    path = client.state / "lnet.json"
    lnet = json.loads(path.read_text())
    lnet["nets"][0]["nis"][1]["status"] = "down"
    path.write_text(json.dumps(lnet))
    summary, _ = client.health()
    assert (summary["status"], summary["codes"]) == ("FAIL", ["LUSTRE_LNET_NI_DOWN"]), summary
    assert [f["subject"] for f in summary["findings"] if f["code"] == "LUSTRE_LNET_NI_DOWN"] == [
        "10.20.1.5@o2ib (ib1)"
    ]  # NID (interface): ib1 is 10.20.1.5 in the lnetctl fake
