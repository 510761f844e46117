"""aiinfra.hwaac.mlxconfig against the stateful mlxconfig fake (tests/fakes/bin/mlxconfig).

How the module is run: as Ansible runs a module that is not wrapped (the "old-style args file" path of
``AnsibleModule._load_params``): a separate Python process ``python -m
ansible_collections.aiinfra.hwaac.plugins.modules.mlxconfig ARGS.json``, where ARGS.json is
``{"ANSIBLE_MODULE_ARGS": {..., "_ansible_check_mode": bool, "_ansible_diff": true}}`` and the module prints one
JSON result. The repository root on PYTHONPATH makes ``ansible_collections.aiinfra.hwaac`` (a link to the root)
importable, exactly the import path the module uses on a host. This exercises the real argument spec, check mode,
``run_command`` and ``exit_json``/``fail_json`` without mocking Ansible. ``tests/fakes/bin`` goes first on PATH and
``HWAAC_FAKE_STATE`` points at the test's tmp directory, so every test starts from the fake's defaults
(tests/unit/ansible/fake_host.py). The cases that are data are in tests/unit/ansible/cases/mlxconfig.yml.

The fake's defaults (see the fake's docstring): LINK_TYPE_P1 IB(1), ATS_ENABLED True(1), ADVANCED_PCI_SETTINGS
False(0), CNP_DSCP_P1 46, CNP_802P_PRIO_P1 6, ROCE_CC_PRIO_MASK_P1 255, HOST_CHAINING_DESCRIPTORS Array[0..7] of 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.ansible.fake_host import FakeHost
from tests.unit.ansible.module_run import REPO, load_cases, run_case

DEMO_NIC = REPO / "tests" / "golden" / "demo" / "hosts" / "gpu-su01-h01" / "nic-roce.json"


class Host(FakeHost):
    """The fake host with the fake's boot id, the module's state dir, and the single and list forms."""

    module_name = "mlxconfig"

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp)
        (self.state / "boot_id").write_text("boot-1\n")

    def module(self, params: dict, *, check: bool = False, **extra: object) -> dict:
        """The single-device form on mlx5_0."""
        return self.run({"device": "mlx5_0", "params": params, **extra}, check=check)

    def devices(self, devices: list[dict], *, check: bool = False, **extra: object) -> dict:
        """The list form: ``devices`` as given."""
        return self.run({"devices": devices, **extra}, check=check)

    def run(self, args: dict, *, check: bool = False) -> dict:
        """Any form, with the module's state dir and the fake's boot id."""
        defaults = {"state_dir": str(self.tmp / "module-state"), "boot_id_path": str(self.state / "boot_id")}
        return super().run({**defaults, **args}, check=check)

    def tool(self, *args: str) -> str:
        return self.stdout("mlxconfig", *args)

    def reboot(self, *flags: str) -> None:
        self.stdout("hwaac-fake-reboot", *flags)

    def knobs(self, **knobs: object) -> None:
        self.tool("-d", "mlx5_0", "q")  # creates the state file with defaults
        self.merge_knobs("mlxconfig.json", knobs)

    def next_boot(self, device: str, name: str) -> str:
        """The Next Boot value of ``name`` on ``device`` as the fake reports it (last column of the row)."""
        out = self.tool("-d", device, "-e", "q", name)
        row = next(line for line in out.splitlines() if name in line.split())
        return row.split()[-1]


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path)


@pytest.mark.parametrize("case", load_cases("mlxconfig"))
def test_case(host: Host, case: dict) -> None:
    run_case(host, case)


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


# ---- the list form: every HCA of a host in one invocation -------------------------------------------------------


def test_devices_check_mode_predicts_the_real_run_and_second_run_changes_nothing(host: Host) -> None:
    params = demo_params()
    devices = [
        {"device": "mlx5_0", "params": params},
        {"device": "mlx5_1", "params": params},
        # the fake's defaults already: nothing to set on this one
        {"device": "mlx5_2", "params": {"CNP_802P_PRIO_P1": 6, "ROCE_CC_PRIO_MASK_P1": 255}},
    ]
    expected_set = {"ADVANCED_PCI_SETTINGS": "1", "ATS_ENABLED": "0", "CNP_DSCP_P1": "48", "LINK_TYPE_P1": "2"}

    predicted = host.devices(devices, check=True)
    assert predicted["changed"] is True
    assert [d["device"] for d in predicted["devices"]] == ["mlx5_0", "mlx5_1", "mlx5_2"]
    assert [d["would_set"] for d in predicted["devices"]] == [expected_set, expected_set, {}]
    assert [d["set"] for d in predicted["devices"]] == [{}, {}, {}]
    assert [d["changed"] for d in predicted["devices"]] == [True, True, False]
    assert predicted["reboot_required"] is True
    assert predicted["reset_required"] == "reboot"
    assert predicted["diff"]["before"]["mlx5_1"]["LINK_TYPE_P1"] == "IB(1)"
    assert predicted["diff"]["after"]["mlx5_1"]["LINK_TYPE_P1"] == "2"
    unchanged = {"CNP_802P_PRIO_P1": "6", "ROCE_CC_PRIO_MASK_P1": "255"}
    assert predicted["diff"]["before"]["mlx5_2"] == predicted["diff"]["after"]["mlx5_2"] == unchanged
    assert not any(" set " in r for d in predicted["devices"] for r in d["raw"])
    assert "set" not in predicted and "raw" not in predicted  # single-form fields are per device here
    assert host.next_boot("mlx5_1", "LINK_TYPE_P1") == "IB(1)"  # check mode wrote nothing

    real = host.devices(devices)
    assert real["changed"] is True
    assert [d["set"] for d in real["devices"]] == [d["would_set"] for d in predicted["devices"]]
    assert [d["changed"] for d in real["devices"]] == [True, True, False]
    for got, want in zip(real["devices"], predicted["devices"], strict=True):
        assert sorted(got["pending"]) == sorted(want["pending"])  # check mode predicted what became pending
    assert real["devices"][0]["pending"]["LINK_TYPE_P1"] == {"current": "IB(1)", "next_boot": "ETH(2)"}
    assert [d["reset_required"] for d in real["devices"]] == ["reboot", "reboot", "none"]
    assert [d["reboot_required"] for d in real["devices"]] == [True, True, False]
    assert real["reboot_required"] is True
    assert real["reset_required"] == "reboot"
    assert real["reset_reason"] == (
        "mlx5_0: values are pending in Next Boot; mlxconfig asks for a reboot; "
        "mlx5_1: values are pending in Next Boot; mlxconfig asks for a reboot"
    )
    # per device: one targeted query, one set of only the differing values, one query to verify
    cmds = [[r.splitlines()[0] for r in d["raw"]] for d in real["devices"]]
    assert [len(c) for c in cmds] == [3, 3, 1]
    assert cmds[1][1].endswith(
        "mlxconfig -y -d mlx5_1 set ADVANCED_PCI_SETTINGS=1 ATS_ENABLED=0 CNP_DSCP_P1=48 LINK_TYPE_P1=2"
    )
    assert cmds[2][0].endswith("mlxconfig -d mlx5_2 -e q CNP_802P_PRIO_P1 ROCE_CC_PRIO_MASK_P1")
    assert host.next_boot("mlx5_1", "LINK_TYPE_P1") == "ETH(2)"
    assert sorted(p.name for p in (host.tmp / "module-state").iterdir()) == ["mlx5_0.json", "mlx5_1.json"]

    again = host.devices(devices)
    assert again["changed"] is False
    assert [d["set"] for d in again["devices"]] == [{}, {}, {}]
    assert again["reboot_required"] is True  # still pending until the reboot
    assert not any(" set " in r for d in again["devices"] for r in d["raw"])

    host.reboot()
    booted = host.devices(devices)
    assert booted["changed"] is False
    assert booted["reboot_required"] is False
    assert booted["reset_required"] == "none"
    assert booted["reset_reason"] == "no managed parameter is pending"


def test_devices_failing_devices_are_named_and_the_others_still_processed(host: Host) -> None:
    host.knobs(ignore_set=["CNP_DSCP_P1"])  # accepted but never applied (only mlx5_2 asks for it)
    res = host.devices(
        [
            {"device": "mlx5_0", "params": {"LINK_TYPE_P1": "ETH"}},
            {"device": "mlx5_1", "params": {"LINK_TYPE_P1": 2, "NO_SUCH_PARAM": 1}},
            {"device": "mlx5_2", "params": {"CNP_DSCP_P1": 48, "LINK_TYPE_P1": "ETH"}},
            {"device": "mlx5_3", "params": {"ATS_ENABLED": False}},
        ]
    )
    assert res["failed"] is True
    assert res["failed_devices"] == ["mlx5_1", "mlx5_2"]
    assert res["msg"] == (
        "mlxconfig failed on 2 of 4 devices: "
        "unknown mlxconfig parameter NO_SUCH_PARAM on mlx5_1 (mlxconfig: '-E- Unknown Parameter: NO_SUCH_PARAM'); "
        "mlxconfig accepted the set on mlx5_2 but did not apply: CNP_DSCP_P1 (wanted 48, Next Boot is 46)"
    )
    good0, bad1, bad2, good3 = res["devices"]
    # the good devices before and after the failures were set and verified, and say so
    assert good0["set"] == {"LINK_TYPE_P1": "ETH"}
    assert good0["reset_required"] == "reboot"
    assert good3["device"] == "mlx5_3"
    assert good3["set"] == {"ATS_ENABLED": "0"}
    assert good3["pending"] == {"ATS_ENABLED": {"current": "True(1)", "next_boot": "False(0)"}}
    assert host.next_boot("mlx5_3", "ATS_ENABLED") == "False(0)"
    # the unknown name failed at the first query: nothing was set on mlx5_1
    assert bad1["failed"] is True
    assert bad1["unknown_params"] == ["NO_SUCH_PARAM"]
    assert bad1["changed"] is False
    assert bad1["set"] == {}
    assert host.next_boot("mlx5_1", "LINK_TYPE_P1") == "IB(1)"
    # the set on mlx5_2 ran; LINK_TYPE_P1 reached Next Boot, CNP_DSCP_P1 did not
    assert bad2["failed"] is True
    assert bad2["not_applied"] == ["CNP_DSCP_P1"]
    assert bad2["would_set"] == {"CNP_DSCP_P1": "48", "LINK_TYPE_P1": "ETH"}
    assert bad2["set"] == {"LINK_TYPE_P1": "ETH"}
    assert bad2["changed"] is True
    assert any(" set CNP_DSCP_P1=48 LINK_TYPE_P1=ETH" in r for r in bad2["raw"])
    # the top level sums up what happened on the devices
    assert res["changed"] is True
    assert res["reboot_required"] is True
    assert res["reset_required"] == "reboot"
    assert sorted(res["diff"]["before"]) == ["mlx5_0", "mlx5_2", "mlx5_3"]  # mlx5_1 failed before any comparison


def test_devices_array_params_per_device(host: Host) -> None:
    res = host.devices(
        [
            {"device": "mlx5_0", "params": {"HOST_CHAINING_DESCRIPTORS[2]": 5}},
            {"device": "mlx5_1", "array_params": ["HOST_CHAINING_DESCRIPTORS"]},
        ]
    )
    assert res["devices"][0]["set"] == {"HOST_CHAINING_DESCRIPTORS[2]": "5"}
    assert res["devices"][1]["set"] == {}
    assert res["devices"][1]["query"]["HOST_CHAINING_DESCRIPTORS[2]"]["next_boot"] == "0"
    assert sorted(res["devices"][1]["query"]) == [f"HOST_CHAINING_DESCRIPTORS[{i}]" for i in range(8)]
