"""aiinfra.hwaac.lustre_tune against the stateful lctl, mount and systemctl fakes (tests/fakes/bin).

Each test mounts lfs1 on the fake host first (the mount fake: 1 MDT and 4 OSTs, instance ffff8a2c4e1b8000, the
lctl fake's defaults max_rpcs_in_flight 8 and max_mod_rpcs_in_flight 7). The client version comes from the
``lustre.json`` knob ``version`` (what ``lctl get_param -n version`` prints) unless a test gives client_version.
Unit files go to ``$HWAAC_FAKE_STATE/etc/systemd/system``, where the systemctl fake looks first. The fake host is
tests/unit/ansible/fake_host.py; the cases that are data are in tests/unit/ansible/cases/lustre_tune.yml.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_params import mount_unit_name
from tests.unit.ansible.fake_host import FAKE_BIN, FakeHost
from tests.unit.ansible.module_run import REPO, load_cases, run_case

SHIPPED = REPO / "tests" / "fixtures" / "tools" / "lctl" / "mount.client.params.shipped"
INST = "ffff8a2c4e1b8000"
OSC_RIF = "osc.lfs1-OST*.max_rpcs_in_flight"
MDC_RIF = "mdc.lfs1-MDT*.max_rpcs_in_flight"
MDC_MOD = "mdc.lfs1-MDT*.max_mod_rpcs_in_flight"


def sets(calls: list[str]) -> list[str]:
    return [c for c in calls if c.startswith("lctl set_param")]


class Client(FakeHost):
    """A Lustre client with LNet up on o2ib and lfs1 mounted; unit files and mount.client.params under tmp."""

    module_name = "lustre_tune"

    def __init__(self, tmp: Path, version: str = "2.15.5") -> None:
        super().__init__(tmp)
        self.write_state(
            "lnet.json",
            {
                "configured": True,
                "version": version,
                "nets": [{"net": "o2ib", "nis": [{"interface": "ib0", "nid": "10.20.0.5@o2ib", "status": "up"}]}],
            },
        )
        self.knobs(version=version)
        self.mp = tmp / "mnt" / "lfs1"
        self.mp.mkdir(parents=True)
        res = self.tool("mount", "-t", "lustre", "-o", "flock", "10.20.0.1@o2ib:/lfs1", str(self.mp))
        assert res.returncode == 0, res.stderr
        self.unit_dir = self.state / "etc" / "systemd" / "system"
        self.unit = self.unit_dir / "hwaac-lustre-tune-lfs1.service"
        self.params_file = tmp / "etc" / "lustre" / "mount.client.params"

    def placeholders(self) -> dict[str, str]:
        return {**super().placeholders(), "INST": INST, "params_file": str(self.params_file)}

    def knobs(self, **knobs: object) -> None:
        self.merge_knobs("lustre.json", knobs)

    def case_args(self, given: dict) -> dict:
        return {
            "filesystem": "lfs1",
            "mount_point": str(self.mp),
            "systemd_dir": str(self.unit_dir),
            "params_file": str(self.params_file),
            **given,
        }

    def module(self, params: dict, *, check: bool = False, **over: object) -> dict:
        return self.run(self.case_args({"params": params, **over}), check=check)

    def tool(self, *argv: str) -> subprocess.CompletedProcess:
        return self.sh(*argv)

    def new_calls(self, tool: str | None = None) -> list[str]:
        """The calls of the last module run, of ``tool`` only if given."""
        return [c for c in super().new_calls() if tool is None or c.startswith(tool + " ")]

    def sets(self) -> list[str]:
        """The ``lctl set_param`` calls of the last module run."""
        return sets(self.new_calls())

    def values(self, pattern: str) -> dict[str, str]:
        out = self.tool("lctl", "get_param", pattern).stdout
        return dict(line.split("=", 1) for line in out.splitlines())


@pytest.fixture
def client(tmp_path: Path) -> Client:
    return Client(tmp_path)


@pytest.mark.parametrize("case", load_cases("lustre_tune"))
def test_case(client: Client, case: dict) -> None:
    run_case(client, case)


def test_reads_first_and_sets_only_differing_patterns(client: Client) -> None:
    client.tool("lctl", "set_param", f"osc.lfs1-OST0001-osc-{INST}.max_rpcs_in_flight=32")
    params = {OSC_RIF: 32, MDC_RIF: 8}  # mdc is already 8 everywhere
    pred = client.module(params, check=True)
    assert pred["changed"] is True and not pred.get("failed"), pred
    assert sets(client.new_calls()) == [] and not client.unit.exists()
    assert pred["commands"][0] == f"{FAKE_BIN}/lctl get_param -n version"
    assert pred["commands"][3] == f"{FAKE_BIN}/lctl set_param '{OSC_RIF}=32'"

    res = client.module(params)
    assert res["changed"] is True, res
    assert sets(client.new_calls()) == [f"lctl set_param {OSC_RIF}=32"]
    osc, mdc = res["params"]
    assert osc["pattern"] == OSC_RIF and osc["changed"] is True
    assert osc["before"][f"osc.lfs1-OST0001-osc-{INST}.max_rpcs_in_flight"] == "32"
    assert osc["before"][f"osc.lfs1-OST0000-osc-{INST}.max_rpcs_in_flight"] == "8"
    assert set(osc["after"].values()) == {"32"} and len(osc["after"]) == 4
    assert mdc["changed"] is False
    assert set(client.values(OSC_RIF).values()) == {"32"}
    # the parameter diff names the three devices that differed, not OST0001
    assert res["diff"][0]["before"].count("=8\n") == 3 and "OST0001" not in res["diff"][0]["before"]

    again = client.module(params)
    assert again["changed"] is False and sets(client.new_calls()) == [], again
    assert client.new_calls("systemctl") == [f"systemctl is-enabled {client.unit.name}"]


def test_before_2_17_a_unit_bound_to_the_mount_unit(client: Client) -> None:
    params = {MDC_MOD: 50, MDC_RIF: 64, OSC_RIF: 32}
    res = client.module(params)
    assert res["changed"] is True and res["client_version"] == "2.15.5", res
    # max_rpcs_in_flight first: the 2.15 mdc refuses max_mod_rpcs_in_flight=50 while max_rpcs_in_flight is 8
    assert sets(client.new_calls()) == [
        f"lctl set_param {MDC_RIF}=64",
        f"lctl set_param {OSC_RIF}=32",
        f"lctl set_param {MDC_MOD}=50",
    ]
    mount_unit = mount_unit_name(str(client.mp))  # checked against systemd-escape in test_lustre_tune_parse
    assert mount_unit.endswith("-mnt-lfs1.mount") and "\\x2d" in mount_unit  # the '-' of pytest's tmp dir names
    unit = client.unit.read_text().splitlines()
    assert f"After={mount_unit}" in unit and f"BindsTo={mount_unit}" in unit and f"WantedBy={mount_unit}" in unit
    assert [ln for ln in unit if ln.startswith("ExecStart=")] == [
        f"ExecStart={FAKE_BIN}/lctl set_param {MDC_RIF}=64",
        f"ExecStart={FAKE_BIN}/lctl set_param {OSC_RIF}=32",
        f"ExecStart={FAKE_BIN}/lctl set_param {MDC_MOD}=50",
    ]
    assert client.new_calls("systemctl") == ["systemctl daemon-reload", f"systemctl enable {client.unit.name}"]
    assert res["persistence"] == {
        "method": "systemd",
        "path": str(client.unit),
        "unit": client.unit.name,
        "changed": True,
    }
    assert (client.unit_dir / f"{mount_unit}.wants" / client.unit.name).is_symlink()
    assert not client.params_file.exists()

    again = client.module(params)
    assert again["changed"] is False, again
    assert client.new_calls("systemctl") == [f"systemctl is-enabled {client.unit.name}"]

    # a changed value rewrites the unit: daemon-reload and enable again
    changed = client.module({**params, OSC_RIF: 16})
    assert changed["actions"] == ["set_param", "unit", "daemon-reload", "enable"], changed
    assert client.new_calls("systemctl") == ["systemctl daemon-reload", f"systemctl enable {client.unit.name}"]

    # someone disabled it: enabled again, no daemon-reload (the file did not change)
    client.tool("systemctl", "disable", client.unit.name)
    fixed = client.module({**params, OSC_RIF: 16})
    assert fixed["actions"] == ["enable"], fixed
    assert client.new_calls("systemctl") == [
        f"systemctl is-enabled {client.unit.name}",
        f"systemctl enable {client.unit.name}",
    ]


def test_from_2_17_the_client_params_file(tmp_path: Path) -> None:
    client = Client(tmp_path, version="2.17.0")
    client.params_file.parent.mkdir(parents=True)
    client.params_file.write_text(SHIPPED.read_text())
    params = {OSC_RIF: 32, MDC_RIF: 64}
    pred = client.module(params, check=True)
    assert pred["changed"] is True and pred["actions"] == ["set_param", "params_file"], pred
    assert client.params_file.read_text() == SHIPPED.read_text()

    res = client.module(params)
    assert res["persistence"] == {"method": "mount.client.params", "path": str(client.params_file), "changed": True}
    text = client.params_file.read_text()
    assert text.startswith(SHIPPED.read_text())
    assert text.splitlines()[-4:] == [
        "# BEGIN hwaac lustre_tune lfs1 (managed by aiinfra.hwaac.lustre_tune; edits inside are replaced)",
        f"{OSC_RIF}=32",
        f"{MDC_RIF}=64",
        "# END hwaac lustre_tune lfs1",
    ]
    assert client.new_calls("systemctl") == [] and not client.unit.exists()
    file_diff = res["diff"][-1]
    assert file_diff["before"] == SHIPPED.read_text() and file_diff["after"] == text

    again = client.module(params)
    assert again["changed"] is False and again["diff"] == [], again


def test_client_version_of_the_same_release_uses_the_running_version(client: Client) -> None:
    res = client.module({OSC_RIF: 8}, client_version="2.15.3")
    assert not res.get("failed") and res["changed"] is True, res
    assert res["client_version"] == "2.15.5" and res["persistence"]["method"] == "systemd"
    assert client.new_calls()[0] == "lctl get_param -n version"
    plain = client.module({OSC_RIF: 8}, persist=False)
    assert plain["changed"] is False and "persistence" not in plain
    assert not any(c.endswith("get_param -n version") for c in plain["commands"])  # nothing persisted, no version


def test_persistence_follows_the_running_2_17(tmp_path: Path) -> None:
    client = Client(tmp_path, version="2.17.0")
    res = client.module({OSC_RIF: 8}, client_version="2.17")
    assert res["persistence"]["method"] == "mount.client.params" and res["client_version"] == "2.17.0", res
    assert not client.unit.exists()


def test_params_file_with_an_unclosed_block_is_refused_and_left_alone(tmp_path: Path) -> None:
    client = Client(tmp_path, version="2.17.0")
    client.params_file.parent.mkdir(parents=True)
    text = (
        "# BEGIN hwaac lustre_tune lfs1 (managed by aiinfra.hwaac.lustre_tune; edits inside are replaced)\n"
        f"{OSC_RIF}=16\nllite.*.statahead_max=512\n"
    )  # END line lost; the last line is someone's own
    client.params_file.write_text(text)
    for check in (True, False):
        res = client.module({OSC_RIF: 32}, check=check)
        assert res["failed"] is True, res
        assert res["msg"].startswith(f"{client.params_file}: line 1: '# BEGIN hwaac lustre_tune lfs1 "), res["msg"]
        assert "no '# END hwaac lustre_tune lfs1' line closes it" in res["msg"]
        assert client.params_file.read_text() == text
        assert sets(client.new_calls()) == []  # refused before anything was set
