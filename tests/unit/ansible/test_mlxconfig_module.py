"""aiinfra.hwaac.mlxconfig against the stateful mlxconfig fake (tests/fakes/bin/mlxconfig).

How the module is run: as Ansible runs a module that is not wrapped (the "old-style args file" path of
``AnsibleModule._load_params``): a separate Python process ``python -m
ansible_collections.aiinfra.hwaac.plugins.modules.mlxconfig ARGS.json``, where ARGS.json is
``{"ANSIBLE_MODULE_ARGS": {..., "_ansible_check_mode": bool, "_ansible_diff": true}}`` and the module prints one
JSON result. The repository root on PYTHONPATH makes ``ansible_collections.aiinfra.hwaac`` (a link to the root)
importable, exactly the import path the module uses on a host. This exercises the real argument spec, check mode,
``run_command`` and ``exit_json``/``fail_json`` without mocking Ansible. ``tests/fakes/bin`` goes first on PATH and
``HWAAC_FAKE_STATE`` points at the test's tmp directory, so every test starts from the fake's defaults.

The fake's defaults (see the fake's docstring): LINK_TYPE_P1 IB(1), ATS_ENABLED True(1), ADVANCED_PCI_SETTINGS
False(0), CNP_DSCP_P1 46, CNP_802P_PRIO_P1 6, ROCE_CC_PRIO_MASK_P1 255, HOST_CHAINING_DESCRIPTORS Array[0..7] of 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
FAKE_BIN = REPO / "tests" / "fakes" / "bin"
DEMO_NIC = REPO / "tests" / "golden" / "demo" / "hosts" / "gpu-su01-h01" / "nic-roce.json"


class Host:
    """A fake host: fake tool state, the module's state dir and boot id, and a way to run the module."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.state = tmp / "fake"
        self.state.mkdir()
        (self.state / "boot_id").write_text("boot-1\n")
        self.env = {
            **os.environ,
            "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}",
            "HWAAC_FAKE_STATE": str(self.state),
            "PYTHONPATH": str(REPO),
        }
        self.calls = 0

    def module(self, params: dict, *, check: bool = False, **extra: object) -> dict:
        self.calls += 1
        args = {
            "device": "mlx5_0",
            "params": params,
            "state_dir": str(self.tmp / "module-state"),
            "boot_id_path": str(self.state / "boot_id"),
            **extra,
            "_ansible_check_mode": check,
            "_ansible_diff": True,
        }
        path = self.tmp / f"args{self.calls}.json"
        path.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
        proc = subprocess.run(
            [sys.executable, "-m", "ansible_collections.aiinfra.hwaac.plugins.modules.mlxconfig", str(path)],
            cwd=REPO,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.stdout, proc.stderr
        return json.loads(proc.stdout)

    def tool(self, *args: str) -> str:
        return subprocess.run(["mlxconfig", *args], env=self.env, capture_output=True, text=True, check=True).stdout

    def reboot(self, *flags: str) -> None:
        subprocess.run(["hwaac-fake-reboot", *flags], env=self.env, check=True)

    def knobs(self, **knobs: object) -> None:
        self.tool("-d", "mlx5_0", "q")  # creates the state file with defaults
        path = self.state / "mlxconfig.json"
        state = json.loads(path.read_text())
        state["knobs"].update(knobs)
        path.write_text(json.dumps(state))


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path)


def demo_params() -> dict:
    """The firmware params hwaac renders for the demo's first GPU node, first rail (golden file)."""
    return json.loads(DEMO_NIC.read_text())["ports"][0]["mlxconfig"]


def test_check_mode_predicts_the_set_then_second_run_changes_nothing(host: Host) -> None:
    params = demo_params()
    assert params == {
        "ADVANCED_PCI_SETTINGS": 1,
        "ATS_ENABLED": 0,
        "CNP_802P_PRIO_P1": 6,
        "CNP_DSCP_P1": 48,
        "LINK_TYPE_P1": 2,
        "ROCE_CC_PRIO_MASK_P1": 255,
    }
    predicted = host.module(params, check=True)
    assert predicted["changed"] is True
    assert predicted["set"] == {}
    assert predicted["would_set"] == {
        "ADVANCED_PCI_SETTINGS": "1",
        "ATS_ENABLED": "0",
        "CNP_DSCP_P1": "48",
        "LINK_TYPE_P1": "2",
    }
    assert predicted["diff"]["before"]["LINK_TYPE_P1"] == "IB(1)"
    assert predicted["diff"]["after"]["LINK_TYPE_P1"] == "2"
    assert predicted["reboot_required"] is True
    assert not any(" set " in r for r in predicted["raw"])  # check mode only queries
    assert "-e q" in predicted["raw"][0]
    # check mode wrote nothing: the fake still shows the defaults in Next Boot
    assert "IB(1)           IB(1)           IB(1)" in host.tool("-d", "mlx5_0", "-e", "q", "LINK_TYPE_P1")

    real = host.module(params)
    assert real["changed"] is True
    assert real["set"] == predicted["would_set"]
    assert real["reboot_required"] is True
    assert real["reset_required"] == "reboot"
    assert real["pending"] == {
        "ADVANCED_PCI_SETTINGS": {"current": "False(0)", "next_boot": "True(1)"},
        "ATS_ENABLED": {"current": "True(1)", "next_boot": "False(0)"},
        "CNP_DSCP_P1": {"current": "46", "next_boot": "48"},
        "LINK_TYPE_P1": {"current": "IB(1)", "next_boot": "ETH(2)"},
    }
    assert sorted(real["pending"]) == sorted(predicted["pending"])  # check mode predicted what became pending
    set_cmds = [r for r in real["raw"] if " set " in r]
    assert len(set_cmds) == 1
    assert "set ADVANCED_PCI_SETTINGS=1 ATS_ENABLED=0 CNP_DSCP_P1=48 LINK_TYPE_P1=2" in set_cmds[0]
    assert "-I- Please reboot machine to load new configurations." in set_cmds[0]

    again = host.module(params)
    assert again["changed"] is False
    assert again["set"] == {}
    assert again["reboot_required"] is True  # still pending until the reboot
    assert not any(" set " in r for r in again["raw"])

    host.reboot()
    booted = host.module(params)
    assert booted["changed"] is False
    assert booted["reboot_required"] is False
    assert booted["reset_required"] == "none"
    assert booted["pending"] == {}
    assert booted["query"]["LINK_TYPE_P1"] == {"default": "IB(1)", "current": "ETH(2)", "next_boot": "ETH(2)"}


def test_value_already_pending_is_not_set_again(host: Host) -> None:
    host.tool("-y", "-d", "mlx5_0", "set", "LINK_TYPE_P1=2")
    res = host.module({"LINK_TYPE_P1": "ETH"})
    assert res["changed"] is False
    assert res["set"] == {}
    assert not any(" set " in r for r in res["raw"])
    assert res["reboot_required"] is True
    assert res["pending"] == {"LINK_TYPE_P1": {"current": "IB(1)", "next_boot": "ETH(2)"}}


def test_star_marker_and_true_false_values(host: Host) -> None:
    res = host.module({"ATS_ENABLED": False, "SRIOV_EN": "True", "KEEP_ETH_LINK_UP_P1": True})
    assert res["set"] == {"ATS_ENABLED": "0", "SRIOV_EN": "True"}  # KEEP_ETH_LINK_UP_P1 is True(1) already
    assert res["query"]["ATS_ENABLED"]["next_boot"] == "False(0)"
    assert res["query"]["SRIOV_EN"]["next_boot"] == "True(1)"
    final_query = res["raw"][-1]
    assert "*        ATS_ENABLED" in final_query  # the fake marks next != current like mlxconfig
    assert "         KEEP_ETH_LINK_UP_P1" in final_query
    assert host.module({"ATS_ENABLED": 0, "SRIOV_EN": 1, "KEEP_ETH_LINK_UP_P1": "true"})["changed"] is False


def test_array_elements_are_queried_expanded(host: Host) -> None:
    res = host.module({"HOST_CHAINING_DESCRIPTORS[2]": 5})
    assert res["set"] == {"HOST_CHAINING_DESCRIPTORS[2]": "5"}
    assert "-e q 'HOST_CHAINING_DESCRIPTORS[0..7]'" in "\n".join(res["raw"])
    assert sorted(k for k in res["query"] if k.startswith("HOST_CHAINING")) == [
        f"HOST_CHAINING_DESCRIPTORS[{i}]" for i in range(8)
    ]
    assert res["query"]["HOST_CHAINING_DESCRIPTORS[2]"]["next_boot"] == "5"
    assert res["query"]["HOST_CHAINING_DESCRIPTORS[3]"]["next_boot"] == "0"
    assert host.module({"HOST_CHAINING_DESCRIPTORS[2]": 5})["changed"] is False

    whole = host.module({"HOST_CHAINING_DESCRIPTORS": 5})
    assert whole["failed"] is True
    assert "is an array (Array[0..7])" in whole["msg"]
    beyond = host.module({"HOST_CHAINING_DESCRIPTORS[9]": 1})
    assert beyond["failed"] is True
    assert "HOST_CHAINING_DESCRIPTORS[9] is out of range" in beyond["msg"]


def test_unknown_parameter_fails_naming_it(host: Host) -> None:
    res = host.module({"LINK_TYPE_P1": 2, "NO_SUCH_PARAM": 1})
    assert res["failed"] is True
    assert "NO_SUCH_PARAM" in res["msg"]
    assert "-E- Unknown Parameter: NO_SUCH_PARAM" in res["msg"]
    assert res["unknown_params"] == ["NO_SUCH_PARAM"]
    assert "IB(1)           IB(1)           IB(1)" in host.tool("-d", "mlx5_0", "-e", "q", "LINK_TYPE_P1")


def test_set_accepted_but_not_applied_is_a_failure(host: Host) -> None:
    host.knobs(ignore_set=["CNP_DSCP_P1"])
    res = host.module({"CNP_DSCP_P1": 48, "LINK_TYPE_P1": "ETH"})
    assert res["failed"] is True
    assert res.get("changed") is not True
    assert res["not_applied"] == ["CNP_DSCP_P1"]
    assert "CNP_DSCP_P1 (wanted 48, Next Boot is 46)" in res["msg"]
    assert "LINK_TYPE_P1" not in res["msg"]


def test_power_cycle_message(host: Host) -> None:
    host.knobs(reset_message="power_cycle")
    res = host.module({"LINK_TYPE_P1": "ETH"})
    assert res["reset_required"] == "power_cycle"
    assert res["reset_reason"] == "mlxconfig: Please power cycle machine to load new configurations."


def test_values_still_pending_after_a_reboot_need_mlxfwreset(host: Host) -> None:
    host.knobs(needs_fw_reset=True)
    first = host.module({"LINK_TYPE_P1": "ETH"})
    assert first["reset_required"] == "reboot"
    assert json.loads((host.tmp / "module-state" / "mlx5_0.json").read_text()) == {
        "boot_id": "boot-1",
        "pending": first["pending"],
    }

    host.reboot()  # warm reboot: this "DGX" does not load Next Boot
    after_reboot = host.module({"LINK_TYPE_P1": "ETH"})
    assert after_reboot["changed"] is False
    assert after_reboot["pending"] == {"LINK_TYPE_P1": {"current": "IB(1)", "next_boot": "ETH(2)"}}
    assert after_reboot["reset_required"] == "mlxfwreset"
    assert "boot id boot-1" in after_reboot["reset_reason"]
    assert "mlxfwreset -d mlx5_0 reset" in after_reboot["reset_reason"]

    host.reboot("--fw-reset")
    done = host.module({"LINK_TYPE_P1": "ETH"})
    assert done["pending"] == {}
    assert done["reset_required"] == "none"
    assert not (host.tmp / "module-state" / "mlx5_0.json").exists()


def test_fw_reset_after_config_option(host: Host) -> None:
    res = host.module({"LINK_TYPE_P1": "ETH"}, fw_reset_after_config=True)
    assert res["reset_required"] == "mlxfwreset"
    assert "FW_RESET_AFTER_CONFIG_UPDATE" in res["reset_reason"]


def test_invalid_name_is_refused_before_running_anything(host: Host) -> None:
    res = host.module({"LINK TYPE": 2})
    assert res["failed"] is True
    assert "invalid mlxconfig parameter name 'LINK TYPE'" in res["msg"]
    assert not (host.state / "mlxconfig.json").exists()
