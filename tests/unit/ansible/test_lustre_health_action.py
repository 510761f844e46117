"""aiinfra.hwaac.lustre_health: the action plugin driven with its real host module, as test_sonic_config_db does.

Only the transport is replaced: ``_execute_module`` runs the module as a local Python process with its arguments
file (tests/unit/ansible/module_run.py), which is what a ``connection: local`` play does. ``lfs`` is the stateful
fake (tests/fakes/bin/lfs, linked into the test's own bin folder); ``lctl`` and ``lnetctl`` are answered by a stub
in that folder that replays recorded fixture outputs, so the verdicts depend on the fixtures only. The last test
runs the shared fakes of those tools instead (skipped where they are not there).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.aiinfra.hwaac.plugins.action.lustre_health import ActionModule
from ansible_collections.aiinfra.hwaac.plugins.module_utils.controller_specs import PROBES_OPTION, SPECS
from tests.unit.ansible.action_run import run_action_plugin
from tests.unit.ansible.fake_host import FAKE_BIN, FakeHost
from tests.unit.ansible.module_run import REPO, run_module

HEALTH = REPO / "tests" / "fixtures" / "health" / "lustre"
LCTL = REPO / "tests" / "fixtures" / "tools" / "lctl"
FS = [{"name": "lfs1", "mgs": [["10.20.0.1@o2ib"], ["10.20.0.2@o2ib"]], "mount_point": "/mnt/lfs1"}]
MOUNT_LINE = "10.20.0.1@o2ib:10.20.0.2@o2ib:/lfs1 /mnt/lfs1 lustre rw,flock,lazystatfs 0 0\n"

STUB = """#!{python}
import json, os, sys
tool = os.path.basename(sys.argv[0])
responses = json.load(open(os.path.join(os.environ["HWAAC_STUB"], "responses.json")))
key = " ".join([tool, *sys.argv[1:]])
with open(os.path.join(os.environ["HWAAC_FAKE_STATE"], "calls.log"), "a") as fh:
    fh.write(key + "\\n")
answer = responses.get(key)
if answer is None:
    sys.stderr.write("stub: no answer for " + key + "\\n")
    sys.exit(99)
sys.stdout.write(answer.get("stdout", ""))
sys.stderr.write(answer.get("stderr", ""))
sys.exit(answer.get("rc", 0))
"""


class Node(FakeHost):
    """A fake client node (fake_host.FakeHost): the fake-state folder, the stub answers for lctl/lnetctl first on
    PATH, and the lustre_health module run as Ansible runs it."""

    module_name = "lustre_health"

    def __init__(self, tmp: Path) -> None:
        stub = tmp / "stub"
        super().__init__(tmp, state="state", bins=(stub,), HWAAC_STUB=str(stub))
        self.stub = stub
        self.stub.mkdir()
        for tool in ("lctl", "lnetctl"):
            path = self.stub / tool
            path.write_text(STUB.format(python=sys.executable))
            path.chmod(0o755)
        (self.stub / "lfs").symlink_to(FAKE_BIN / "lfs")
        self.responses: dict[str, dict[str, Any]] = {}
        self.answer("lctl get_param -n health_check", (HEALTH / "health_check_healthy_derived.txt").read_text())
        self.answer("lctl get_param osc.*.import mdc.*.import", self.imports("FULL"))
        self.answer("lnetctl net show -v 2", (HEALTH / "lnetctl_export_net_2.12_lustrefs_exporter.txt").read_text())
        for nid in ("10.20.0.1@o2ib", "10.20.0.2@o2ib"):
            self.answer(f"lctl ping {nid}", f"12345-0@lo\n12345-{nid}\n")
        self.answer("lctl list_nids", (LCTL / "list_nids_o2ib_multirail_derived.txt").read_text())

    @staticmethod
    def imports(state: str) -> str:
        text = (HEALTH / "imports_master_full_derived.txt").read_text()
        # the lfs fake's instance for /mnt/lfs1 (crc32 of the mount point) and its default 4 OSTs are not needed:
        # evaluation matches imports by fsname and kind
        return text.replace("state: FULL", f"state: {state}", 1)

    def answer(self, key: str, stdout: str = "", stderr: str = "", rc: int = 0) -> None:
        self.responses[key] = {"stdout": stdout, "stderr": stderr, "rc": rc}
        (self.stub / "responses.json").write_text(json.dumps(self.responses))

    def mount(self, text: str = MOUNT_LINE) -> None:
        (self.state / "proc_mounts").write_text("proc /proc proc rw 0 0\n" + text)

    def run_action(
        self, args: dict[str, Any], *, check_mode: bool = False, task_vars: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        calls = []

        def execute(module_args: dict[str, Any]) -> dict:
            calls.append(module_args)
            return self.run(module_args, check=check_mode)

        result = run_action_plugin(
            ActionModule,
            {"proc_mounts": str(self.state / "proc_mounts"), **args},
            check_mode=check_mode,
            module="lustre_health",
            execute=execute,
            task_vars={"inventory_hostname": "gpu-node-01", **(task_vars or {})},
        )
        result["_module_calls"] = calls
        return result

    def use_shared_fake(self, tool: str) -> None:
        (self.stub / tool).unlink()
        (self.stub / tool).symlink_to(FAKE_BIN / tool)


@pytest.fixture
def node(tmp_path: Path) -> Node:
    return Node(tmp_path)


def test_healthy_mounted_client_passes(node: Node) -> None:
    node.mount()
    res = node.run_action({"filesystems": FS})
    assert res["status"] == "PASS", res["findings"]
    assert (res["action"], res["codes"], res["changed"]) == ("none", [], False)
    assert res["filesystems"] == ["lfs1"] and res["mounted"] == ["lfs1"]
    assert "failed" not in res
    assert sorted(node.calls()) == sorted(
        [
            "lfs check servers",
            "lctl get_param -n health_check",
            "lctl get_param osc.*.import mdc.*.import",
            "lctl ping 10.20.0.1@o2ib",
            "lctl ping 10.20.0.2@o2ib",
            "lnetctl net show -v 2",
            "lctl list_nids",
        ]
    )
    probes = res["_module_calls"][0]["probes"]
    assert probes["lfs_check"] == {"argv": ["lfs", "check", "servers"], "timeout": 60}


# lfs df (off by default) and lctl list_nids (on by default) as a playbook turns them on and off: task options,
# what the node gets to answer (lustre.json knobs of the lfs fake; lctl answers from tests/fixtures/tools/lctl),
# then the probes run and the verdict.
PROBE_CASES = [
    ("defaults", {}, {}, {}, {"list_nids"}, {"lfs_df"}, "PASS", []),
    ("list_nids off", {"list_nids": False}, {}, {}, set(), {"list_nids", "lfs_df"}, "PASS", []),
    ("lfs_df on, healthy", {"lfs_df": True}, {}, {}, {"lfs_df", "list_nids"}, set(), "PASS", []),
    (
        "lfs_df on, an OST full and one degraded",
        {"lfs_df": True},
        {"df_used_pct": {"lfs1-OST0001": 97}, "df_state": {"lfs1-OST0002": "D"}},
        {},
        {"lfs_df"},
        set(),
        "WARN",
        ["LUSTRE_TARGET_DEGRADED", "LUSTRE_TARGET_FULL"],
    ),
    (
        "lfs_df on, an OST read-only",
        {"lfs_df": True},
        {"df_state": {"lfs1-OST0003": "R"}},
        {},
        {"lfs_df"},
        set(),
        "FAIL",
        ["LUSTRE_TARGET_READONLY"],
    ),
    (
        "lfs_df off does not see a read-only OST",
        {},
        {"df_state": {"lfs1-OST0003": "R"}},
        {},
        set(),
        {"lfs_df"},
        "PASS",
        [],
    ),
    (
        "no NID on the MGS network",
        {},
        {},
        {"lctl list_nids": ("list_nids_tcp.txt", 0)},
        {"list_nids"},
        set(),
        "FAIL",
        ["LUSTRE_LNET_NO_MGS_NET"],
    ),
    (
        "LNet down in list_nids",
        {},
        {},
        {"lctl list_nids": ("list_nids_network_down.txt", 1)},
        {"list_nids"},
        set(),
        "FAIL",
        ["LUSTRE_LNET_DOWN"],
    ),
    (
        "list_nids off does not see the wrong network",
        {"list_nids": False},
        {},
        {"lctl list_nids": ("list_nids_tcp.txt", 0)},
        set(),
        {"list_nids"},
        "PASS",
        [],
    ),
]


@pytest.mark.parametrize(
    ("args", "knobs", "answers", "ran", "not_ran", "status", "codes"),
    [case[1:] for case in PROBE_CASES],
    ids=[case[0] for case in PROBE_CASES],
)
def test_list_nids_and_lfs_df_options(
    node: Node, args: dict, knobs: dict, answers: dict, ran: set, not_ran: set, status: str, codes: list
) -> None:
    node.mount()
    if knobs:
        (node.state / "lustre.json").write_text(json.dumps({"knobs": knobs}))
    for key, (fixture, rc) in answers.items():
        text = (LCTL / fixture).read_text()
        node.answer(key, "" if rc else text, text if rc else "", rc)
    res = node.run_action({"filesystems": FS, **args})
    assert (res["status"], res["codes"]) == (status, codes), res["findings"]
    assert ran <= set(res["outputs"]) and not not_ran & set(res["outputs"])
    argv = {name: probe["argv"] for name, probe in res["_module_calls"][0]["probes"].items()}
    assert {k: argv[k] for k in ran} == {
        k: v for k, v in {"lfs_df": ["lfs", "df", "-v"], "list_nids": ["lctl", "list_nids"]}.items() if k in ran
    }


def test_mgs_of_the_mounted_source_is_judged(node: Node) -> None:
    """The intent may spell o2ib0 where /proc/mounts shows o2ib: the same MGS. A source of another MGS fails."""
    o2ib0 = [{**FS[0], "mgs": [["10.20.0.2@o2ib0"], ["10.20.0.1@o2ib0"]]}]
    for nid in ("10.20.0.1@o2ib0", "10.20.0.2@o2ib0"):
        node.answer(f"lctl ping {nid}", f"12345-0@lo\n12345-{nid[:-1]}\n")
    node.mount()
    res = node.run_action({"filesystems": o2ib0})
    assert res["status"] == "PASS", res["findings"]
    node.mount(MOUNT_LINE.replace("10.20.0.1@o2ib:10.20.0.2@o2ib:", "10.30.0.1@o2ib:"))
    res = node.run_action({"filesystems": o2ib0, "fail_on_fail": True})
    assert res["failed"] is True and res["codes"] == ["LUSTRE_MOUNTED_FROM_OTHER_MGS"]
    assert res["findings"][0]["evidence"] == "10.30.0.1@o2ib:/lfs1"


def test_not_mounted_fails_and_fail_on_fail_fails_the_task(node: Node) -> None:
    node.answer(
        "lctl get_param osc.*.import mdc.*.import", "", (HEALTH / "imports_not_mounted_derived.txt").read_text(), rc=2
    )
    res = node.run_action({"filesystems": FS})  # no proc_mounts file: nothing mounted (fake-state contract)
    assert res["status"] == "FAIL" and res["codes"] == ["LUSTRE_NOT_MOUNTED"] and "failed" not in res
    assert res["mounted"] == []
    res = node.run_action({"filesystems": FS, "fail_on_fail": True})
    assert res["failed"] is True and res["msg"] == "lustre: FAIL (LUSTRE_NOT_MOUNTED)"


def test_inactive_ost_from_the_lfs_fake_fails(node: Node) -> None:
    node.mount()
    (node.state / "lustre.json").write_text(json.dumps({"knobs": {"lfs_down": {"lfs1-OST0002": 107}}}))
    res = node.run_action({"filesystems": FS})
    assert res["status"] == "FAIL" and res["codes"] == ["LUSTRE_TARGET_INACTIVE"]
    [finding] = res["findings"]
    assert finding["subject"].startswith("lfs1-OST0002-osc-ffff8a2c") and finding["action"] == "check_link"


def test_mgs_down_and_import_disconnected(node: Node) -> None:
    node.mount()
    node.answer("lctl ping 10.20.0.1@o2ib", "", "failed to ping 10.20.0.1@o2ib: Input/output error\n", rc=1)
    node.answer("lctl ping 10.20.0.2@o2ib", "", "failed to ping 10.20.0.2@o2ib: Input/output error\n", rc=1)
    node.answer("lctl get_param osc.*.import mdc.*.import", node.imports("DISCONN"))
    res = node.run_action({"filesystems": FS})
    assert res["status"] == "FAIL"
    assert res["codes"] == ["LUSTRE_IMPORT_NOT_FULL", "LUSTRE_MGS_UNREACHABLE"]


def test_missing_tool_is_unknown(node: Node) -> None:
    node.mount()
    (node.stub / "lnetctl").unlink()  # PATH holds the stub folder and the system's: no lnetctl anywhere
    res = node.run_action({"filesystems": FS})
    assert res["status"] == "UNKNOWN" and res["codes"] == ["PROBE_NOT_RUN"] and res["action"] == "retest"
    assert "lnetctl" in res["findings"][0]["message"]


def test_client_config_from_hwaac_files(node: Node, tmp_path: Path) -> None:
    node.mount()
    files = tmp_path / "render" / "gpu-node-01"
    files.mkdir(parents=True)
    (files / "lustre-client.json").write_text(json.dumps({"client_version": "2.15.5", "filesystems": FS}))
    res = node.run_action({}, task_vars={"hwaac_files": str(files)})
    assert res["status"] == "PASS" and res["filesystems"] == ["lfs1"]
    res = node.run_action({"lnet": False, "client_config": str(files / "lustre-client.json")}, check_mode=True)
    assert res["status"] == "PASS" and "lnet_net" not in res["outputs"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "give filesystems, client_config"),
        ({"filesystems": [{"name": "way_too_long"}]}, "filesystems[0].name"),
        ({"filesystems": FS, "mgs_nids": ["10.20.0.9"]}, "mgs_nids"),
        ({"client_config": "/nonexistent/lustre-client.json"}, "client_config /nonexistent"),
        ({"filesystems": FS, "timeout": "soon"}, "timeout"),
    ],
)
def test_bad_arguments_fail_with_a_clear_message(node: Node, args: dict, message: str) -> None:
    from ansible.errors import AnsibleActionFail

    with pytest.raises(AnsibleActionFail, match=message.replace("[", r"\[").replace("]", r"\]")):
        node.run_action(args)


def test_module_alone_refuses_to_run_without_probes(node: Node) -> None:
    res = run_module("lustre_health", {"filesystems": FS}, node.tmp / "alone.json", node.env)
    assert res["failed"] and "action plugin" in res["msg"]


def test_spec_documents_every_option() -> None:
    import yaml

    from ansible_collections.aiinfra.hwaac.plugins.modules import lustre_health

    documented = yaml.safe_load(lustre_health.DOCUMENTATION)["options"]
    assert set(documented) == {*SPECS["lustre_health"], *PROBES_OPTION}
    for name, spec in SPECS["lustre_health"].items():
        assert documented[name]["type"] == spec["type"]
        assert documented[name].get("default") == spec.get("default"), name


def test_with_the_shared_lctl_and_lnetctl_fakes(node: Node) -> None:
    """End to end with the other tools' fakes (lctl: health_check, imports, ping; lnetctl: net show -v 2)."""
    if not all((FAKE_BIN / tool).exists() for tool in ("lctl", "lnetctl")):
        pytest.skip("the shared lctl / lnetctl fakes are not in this checkout")
    for tool in ("lctl", "lnetctl"):
        node.use_shared_fake(tool)
    node.mount()
    (node.state / "lnet.json").write_text(
        json.dumps(
            {
                "configured": True,
                "layout": "2.15",
                "version": "2.15.5",
                "interfaces": {"ib0": "10.20.0.5"},
                "nets": [{"net": "o2ib", "nis": [{"interface": "ib0", "nid": "10.20.0.5@o2ib", "status": "up"}]}],
                "global": {},
            }
        )
    )
    res = node.run_action({"filesystems": FS})
    assert res["status"] == "PASS", res["findings"]
    (node.state / "lustre.json").write_text(json.dumps({"knobs": {"import_state": {"lfs1-OST0001": "DISCONN"}}}))
    res = node.run_action({"filesystems": FS})
    assert res["status"] == "FAIL" and {"LUSTRE_IMPORT_NOT_FULL", "LUSTRE_TARGET_INACTIVE"} <= set(res["codes"])


# an NI's health in the lnetctl fake's state -> the verdict and LNet codes: the probe must ask for the detail level
# that prints health stats (a plain -v does not, and then an unhealthy NI passed)
NI_HEALTH = [
    ({}, "PASS", []),
    ({"health value": 850}, "WARN", ["LUSTRE_LNET_NI_DEGRADED"]),
    ({"health value": 0, "fatal_error": 1}, "FAIL", ["LUSTRE_LNET_NI_DEGRADED", "LUSTRE_LNET_NI_FATAL"]),
]


@pytest.mark.parametrize(("health", "status", "lnet_codes"), NI_HEALTH, ids=["healthy", "degraded", "fatal"])
def test_ni_health_reaches_the_verdict_through_the_lnetctl_fake(
    node: Node, health: dict, status: str, lnet_codes: list[str]
) -> None:
    if not (FAKE_BIN / "lnetctl").exists():
        pytest.skip("the shared lnetctl fake is not in this checkout")
    node.use_shared_fake("lnetctl")
    node.mount()
    (node.state / "lnet.json").write_text(
        json.dumps(
            {
                "configured": True,
                "layout": "2.16",
                "version": "2.16.1",
                "interfaces": {"ib0": "10.20.0.5"},
                "nets": [
                    {
                        "net": "o2ib",
                        "nis": [{"interface": "ib0", "nid": "10.20.0.5@o2ib", "status": "up", "health": health}],
                    }
                ],
            }
        )
    )
    res = node.run_action({"filesystems": FS, "list_nids": False})
    assert res["status"] == status, res["findings"]
    assert sorted(c for c in res["codes"] if c.startswith("LUSTRE_LNET")) == lnet_codes


def test_lfs_fake_prints_the_recorded_formats(node: Node) -> None:
    """The lfs fake against tests/fixtures/tools/lfs: active lines on stdout, master's error line (107) on stderr,
    the older inactive form, and the no-mount message with exit 19."""
    import re
    import subprocess

    def lfs(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["lfs", *args], env=node.env, capture_output=True, text=True)

    none = lfs("check", "servers")
    recorded = (REPO / "tests/fixtures/tools/lfs/check_not_mounted_derived.txt").read_text()
    assert (none.returncode, none.stdout, none.stderr) == (19, "", recorded)
    node.mount()
    (node.state / "lustre.json").write_text(json.dumps({"knobs": {"import_state": {"lfs1-OST0002": "DISCONN"}}}))
    res = lfs("check", "servers")
    assert res.returncode == 0
    assert all(
        re.fullmatch(r"(lfs1-(OST|MDT)000[0-9a-f]-(osc|mdc)-ffff8a2c[0-9a-f]{8}|MGC10\.20\.0\.1@o2ib) active\.", line)
        for line in res.stdout.splitlines()
    )
    assert [line.split()[0][:12] for line in res.stdout.splitlines()] == [
        "lfs1-OST0000",
        "lfs1-OST0001",
        "lfs1-OST0003",
        "lfs1-MDT0000",
        "MGC10.20.0.1",
    ]  # osc, mdc, mgc order
    assert re.fullmatch(
        r"lfs check: error: check 'lfs1-OST0002-osc-ffff8a2c[0-9a-f]{8}': Transport endpoint is not "
        r"connected \(107\)\n",
        res.stderr,
    )
    (node.state / "lustre.json").write_text(
        json.dumps({"knobs": {"lfs_down": {"lfs1-OST0001": 107}, "lfs_style": "inactive"}})
    )
    assert "lfs1-OST0001-osc-" in lfs("check", "osts").stdout.splitlines()[1]
    assert lfs("check", "osts").stdout.splitlines()[1].endswith(" inactive.")
    assert lfs("check", "bogus").returncode != 0


def test_lfs_fake_df_follows_the_recorded_layout(node: Node) -> None:
    """The lfs fake's ``df`` against the recorded ``lfs df`` / ``lfs df -i`` files: the same header and row layout
    (column widths, ``MOUNT[OST:n]``), read by the parser without an unknown line."""
    import re
    import subprocess

    from hwaac.health.parsers.lustre_df import parse_lfs_df

    node.mount()
    (node.state / "lustre.json").write_text(json.dumps({"knobs": {"deactivated": ["lfs1-OST0003"]}}))
    for args, recorded in ((["-v"], "df_exacloud_24ost.txt"), (["-i"], "df_i_three_fs.txt")):
        out = subprocess.run(["lfs", "df", *args], env=node.env, capture_output=True, text=True, check=True).stdout
        lines = (REPO / "tests/fixtures/tools/lfs" / recorded).read_text().splitlines()
        assert out.splitlines()[0] == lines[0]
        header = lines[0]
        ends = [header.index(word) + len(word) for word in header.split()[1:4]]  # right-aligned number columns
        # a recorded MDT row (when its UUID fits the 20 columns; a longer one shifts the row) and the fake's
        for row in [r for r in (lines[1], out.splitlines()[1]) if len(r.split()[0]) <= 20]:
            assert all(row[end - 1].isdigit() and row[end] == " " for end in ends), row
            assert re.fullmatch(r" *\d{1,3}%", row[57:61]) and row.endswith("[MDT:0]")  # "%3d%%"
        parsed = parse_lfs_df(out)
        assert parsed.unknown == []
        [fs] = parsed.filesystems
        rows = {r.uuid: r for r in fs.rows}
        assert ("lfs1-OST0003_UUID" in rows) == ("-v" in args)
        assert rows.get("lfs1-OST0003_UUID") is None or rows["lfs1-OST0003_UUID"].inactive
