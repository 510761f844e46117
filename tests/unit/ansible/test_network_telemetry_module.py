"""aiinfra.hwaac.network_telemetry run as Ansible runs a host module (tests/unit/ansible/module_run.py) against the
fakes of a SONiC switch (tests/fakes/bin/show, sonic-db-dump, vtysh) and of a GPU node (rdma, ethtool, the fake
sysfs of tests/fakes/nic_counters.py with the real grep): raw outputs per tool with their times, counters that
advance between two sweeps, time limits, the output cap, refused tool names, check mode; the active prober's results
file read as it is (the real cat), a missing one a failed tool. The fake host is tests/unit/ansible/fake_host.py; the
cases that are data are in tests/unit/ansible/cases/network_telemetry.yml."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.aiinfra.hwaac.plugins.doc_fragments.command_limits import ModuleDocFragment
from ansible_collections.aiinfra.hwaac.plugins.module_utils.telemetry_specs import SPECS
from ansible_collections.aiinfra.hwaac.plugins.modules import network_telemetry
from hwaac.telemetry.parsers.host_ethtool import parse_mlx5_ethtool
from hwaac.telemetry.parsers.host_rdma import parse_ib_sysfs_counters, parse_rdma_statistic
from hwaac.telemetry.parsers.sonic_counters_db import parse_counters_db
from tests.fakes import nic_counters
from tests.unit.ansible.fake_host import FAKE_BIN, FakeHost, fake_env
from tests.unit.ansible.module_run import REPO, load_cases, run_case, run_module

FIX = REPO / "tests" / "fixtures" / "telemetry"


def run(tmp: Path, args: dict[str, Any], *, check: bool = False, extra_bin: Path | None = None) -> dict:
    state = tmp / "state"
    state.mkdir(exist_ok=True)
    n = len(list(tmp.glob("args*.json")))
    env = fake_env(state, bins=(extra_bin, FAKE_BIN) if extra_bin else (FAKE_BIN,))
    return run_module("network_telemetry", args, tmp / f"args{n}.json", env, check=check)


class Host(FakeHost):
    """The fake switch or GPU node of the cases (tests/unit/ansible/cases/network_telemetry.yml)."""

    module_name = "network_telemetry"

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp, state="state")


@pytest.mark.parametrize("case", load_cases("network_telemetry"))
def test_case(tmp_path: Path, case: dict) -> None:
    run_case(Host(tmp_path), case)


# tool -> the recorded fixture the fake switch prints for its command
SHOW_TOOLS = [
    ("intf-status", "sonic-interfaces-status/status_mock_master.txt"),
    ("intf-flap", "sonic-interfaces-flap/flap_mock_master.txt"),
    ("pfcwd", "pfcwd/sonic-utilities-691b1bb-stats.txt"),
    ("pfcstat", "pfcstat/command-reference-691b1bb-example.txt"),
    ("queuestat", "queuestat/sonic-utilities-691b1bb-counters.txt"),
    ("transceiver-dom", "sfpshow/sonic-utilities-691b1bb-dom-all.txt"),
    ("portstat", "sonic-portstat/counters_mock_master.txt"),
    ("fec-histogram@Ethernet0", "sonic-fec-histogram/fec_histogram_mock_master.txt"),
]


@pytest.mark.parametrize("check", [False, True], ids=["run", "check mode"])
def test_switch_tools_return_the_raw_output_of_their_commands(tmp_path: Path, check: bool) -> None:
    tools = [t for t, _ in SHOW_TOOLS]
    res = run(tmp_path, {"tools": tools, "device": "leaf-p0-su01-r0"}, check=check)
    assert res["changed"] is False and res["device"] == "leaf-p0-su01-r0"
    assert list(res["outputs"]) == tools
    for tool, fixture in SHOW_TOOLS:
        out = res["outputs"][tool]
        assert (out["rc"], out["stdout"], out["timed_out"], out["truncated"]) == (
            0,
            (FIX / fixture).read_text(),
            False,
            False,
        ), tool
        assert res["taken_at"] <= out["taken_at"] < res["taken_at"] + 60
    assert res["outputs"]["fec-histogram@Ethernet0"]["argv"][-1] == "Ethernet0"
    calls = (tmp_path / "state" / "calls.log").read_text().splitlines()
    assert calls[0] == "show interfaces status" and len(calls) == len(tools)


def test_counters_advance_between_two_sweeps(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "telemetry.json").write_text(
        json.dumps({"frames_per_call": 5000, "add_per_call": {"Ethernet4": {"SAI_PORT_STAT_IF_IN_ERRORS": 7}}})
    )
    sweeps = [run(tmp_path, {"tools": ["counters-db"]}) for _ in range(2)]
    snaps = [parse_counters_db(s["outputs"]["counters-db"]["stdout"]) for s in sweeps]
    before, after = (s.ports for s in snaps)
    assert sorted(after) == ["Ethernet0", "Ethernet20", "Ethernet4", "Ethernet8"]
    for port in after:
        assert after[port].counters["rx_ok"] - before[port].counters["rx_ok"] == 5000, port
        assert after[port].counters["tx_ok"] - before[port].counters["tx_ok"] == 5000, port
    assert after["Ethernet4"].counters["rx_err"] - before["Ethernet4"].counters["rx_err"] == 7
    assert after["Ethernet0"].counters["rx_err"] == before["Ethernet0"].counters["rx_err"]
    assert sweeps[1]["outputs"]["counters-db"]["taken_at"] > sweeps[0]["outputs"]["counters-db"]["taken_at"]


def test_host_tools_read_the_rails(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "gpu_node.json").write_text(json.dumps({"rails": 2}))
    nic_counters.ensure_tree(state, 2)
    (state / "ethtool-missing").write_text("rail9\n")
    res = run(
        tmp_path,
        {
            "kind": "host",
            "ports": ["rail0", "rail9"],
            "sysfs_root": str(nic_counters.sys_root(state)),
            "tools": ["rdma-statistic", "ib-counters", "ethtool", "mlxlink@mlx5_0"],
        },
    )
    out = res["outputs"]
    assert list(out) == ["rdma-statistic", "ib-counters", "ethtool@rail0", "ethtool@rail9", "mlxlink@mlx5_0"]
    assert sorted(parse_rdma_statistic(out["rdma-statistic"]["stdout"]).ports) == ["mlx5_0/1", "mlx5_1/1"]
    ib = parse_ib_sysfs_counters(out["ib-counters"]["stdout"])
    assert sorted(ib.ports) == ["mlx5_0/1", "mlx5_1/1"] and not ib.unknown
    assert out["ethtool@rail0"]["rc"] == 0 and out["ethtool@rail0"]["stdout"].startswith("NIC statistics:")
    assert out["ethtool@rail9"]["rc"] == 96 and "No such device" in out["ethtool@rail9"]["stderr"]
    assert out["mlxlink@mlx5_0"]["rc"] is None and "cannot run mlxlink" in out["mlxlink@mlx5_0"]["stderr"]


def test_probes_return_the_agents_results_file_as_it_is(tmp_path: Path) -> None:
    doc = tmp_path / "latest.json"
    doc.write_text('{"format": "hwaac-probe/1", "host": "gpu-su01-h01", "flows": [\n')  # cut: read as it is
    res = run(tmp_path, {"kind": "host", "tools": ["rdma-statistic"], "probes": True, "probe_file": str(doc)})
    assert list(res["outputs"]) == ["rdma-statistic", "probe"]
    out = res["outputs"]["probe"]
    assert (out["argv"], out["rc"], out["stdout"], out["truncated"]) == (
        ["cat", "--", str(doc)],
        0,
        doc.read_text(),
        False,
    )


ETHTOOL = REPO / "tests" / "fixtures" / "health" / "ethtool" / "mlnx-ofed-100g-lane3-errors" / "ethtool-S.txt"


@pytest.mark.parametrize("keep_read", [True, False], ids=["filtered", "as printed"])
def test_filter_keeps_the_lines_the_readers_map(tmp_path: Path, keep_read: bool) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "gpu_node.json").write_text(json.dumps({"rails": 1}))
    nic_counters.ensure_tree(state, 1)
    res = run(
        tmp_path,
        {
            "kind": "host",
            "ports": ["rail0"],
            "filter": keep_read,
            "sysfs_root": str(nic_counters.sys_root(state)),
            "tools": ["ethtool", "ib-counters"],
        },
    )
    eth, ib = res["outputs"]["ethtool@rail0"], res["outputs"]["ib-counters"]
    raw = ETHTOOL.read_text()
    assert eth["filtered"] is keep_read and ib["filtered"] is keep_read
    if not keep_read:
        assert eth["stdout"] == raw
        return
    lines = raw.splitlines()
    kept = eth["stdout"].splitlines()
    assert kept[0] == "NIC statistics:" and len(kept) < len(lines) / 4
    it = iter(lines)
    assert all(line in it for line in kept)  # the same lines in the same order
    assert parse_mlx5_ethtool(eth["stdout"], port="rail0").ports == parse_mlx5_ethtool(raw, port="rail0").ports
    assert parse_ib_sysfs_counters(ib["stdout"]).unknown == []


def test_counters_db_is_cut_to_the_port_hashes(tmp_path: Path) -> None:
    res = run(tmp_path, {"tools": ["counters-db"]})
    out = res["outputs"]["counters-db"]
    dump = json.loads(out["stdout"])
    assert out["filtered"] is True and "COUNTERS_PORT_NAME_MAP" in dump and "COUNTERS_QUEUE_NAME_MAP" not in dump
    snap = parse_counters_db(out["stdout"])
    assert sorted(snap.ports) == ["Ethernet0", "Ethernet20", "Ethernet4", "Ethernet8"] and not snap.unknown


def _script(folder: Path, name: str, body: str) -> None:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_a_hung_tool_is_killed_at_its_time_limit_and_the_next_runs(tmp_path: Path) -> None:
    _script(tmp_path / "bin", "vtysh", "sleep 30")
    res = run(tmp_path, {"tools": ["bgp-summary", "pfcwd"], "timeout": 1}, extra_bin=tmp_path / "bin")
    hung = res["outputs"]["bgp-summary"]
    assert hung["timed_out"] is True and hung["rc"] != 0 and hung["seconds"] < 10
    assert res["outputs"]["pfcwd"]["rc"] == 0 and res["outputs"]["pfcwd"]["timed_out"] is False


def test_output_over_the_cap_is_cut_and_later_tools_are_not_run(tmp_path: Path) -> None:
    res = run(tmp_path, {"tools": ["intf-status", "pfcwd"], "max_output": 100})
    first, second = res["outputs"]["intf-status"], res["outputs"]["pfcwd"]
    assert first["truncated"] is True and len(first["stdout"]) == 100
    assert first["stdout"] == (FIX / SHOW_TOOLS[0][1]).read_text()[:100]
    assert second["rc"] is None and "max_output" in second["stderr"] and second["stdout"] == ""
    assert (tmp_path / "state" / "calls.log").read_text().splitlines() == ["show interfaces status"]


def test_spec_documents_every_option() -> None:
    documented = {
        **yaml.safe_load(network_telemetry.DOCUMENTATION)["options"],
        **yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"],
    }
    assert set(documented) == set(SPECS["network_telemetry"])
    for name, spec in SPECS["network_telemetry"].items():
        assert documented[name]["type"] == spec["type"], name
        assert documented[name].get("default") == spec.get("default"), name
        assert documented[name].get("choices") == spec.get("choices"), name
        assert documented[name].get("elements") == spec.get("elements"), name
