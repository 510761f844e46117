"""The GPU-side fakes (tests/fakes/bin: nvidia-smi, dcgmi, journalctl, all_reduce_perf, mpirun, nvbandwidth) against
our parsers and checks: a healthy simulated node parses to PASS with the knobs' numbers, each knob gives its finding,
and the layouts follow the recorded outputs in tests/fixtures/health.

Every fake runs as a subprocess with ``tests/fakes/bin`` first on PATH and ``HWAAC_FAKE_STATE=<tmp>/node01`` (knobs:
tests/fakes/gpu_node.py), as the node probe would run it.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hwaac.health import checks
from hwaac.health.dcgm_grading import grade_diag
from hwaac.health.gpu_grading import grade_query, grade_remapped
from hwaac.health.node import Context, commands, evaluate, verdict
from hwaac.health.nvbandwidth_grading import read_nvbandwidth
from hwaac.health.parsers.dcgm import parse_diag_json
from hwaac.health.parsers.kernel_log import parse_kernel_log
from hwaac.health.parsers.nccl_tests import parse_nccl_tests
from hwaac.health.parsers.nvidia_smi import (
    parse_nvlink_errors,
    parse_nvlink_status,
    parse_query_xml,
    parse_remapped_rows_csv,
)
from hwaac.health.profile import load_profile
from hwaac.health.result import Action, Finding, Status
from tests.fakes import gpu_node

REPO = Path(__file__).resolve().parents[3]
FAKE_BIN = REPO / "tests" / "fakes" / "bin"
FIX = REPO / "tests" / "fixtures" / "health"
H200 = load_profile("hgx-h200-8x400g")
BUSES = ["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"]
REMAP_QUERY = commands("quick", H200)["remapped_rows"]
SIXTEEN_GIB = 16 * 1024**3


class Node:
    """One simulated node: its state folder (``<tmp>/<name>``) and a way to run a fake there."""

    def __init__(self, root: Path, name: str = "node01") -> None:
        self.state = root / name
        self.state.mkdir(parents=True, exist_ok=True)
        self.env = {
            **os.environ,
            "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}",
            "HWAAC_FAKE_STATE": str(self.state),
        }
        self.env.pop("HWAAC_FAKE_MPI_HOSTS", None)

    def set(self, **knobs: Any) -> None:
        gpu_node.save(self.state, **knobs)

    def run(self, argv: list[str]) -> dict[str, Any]:
        """The probe output shape of hwaac.health.node."""
        start = time.monotonic()
        done = subprocess.run(argv, env=self.env, capture_output=True, text=True, check=False, timeout=60)
        return {
            "rc": done.returncode,
            "stdout": done.stdout,
            "stderr": done.stderr,
            "seconds": time.monotonic() - start,
            "timed_out": False,
        }


@pytest.fixture
def node(tmp_path: Path) -> Node:
    return Node(tmp_path)


def codes(found: list[Finding], status: Status | None = None) -> set[str]:
    return {f.code for f in found if status is None or f.status == status}


# -- nvidia-smi ---------------------------------------------------------------------------------------------------


def test_nvidia_smi_xml_of_a_healthy_node_is_8_h200s_on_hgx_buses_and_passes(node: Node) -> None:
    out = node.run(["nvidia-smi", "-q", "-x"])
    assert out["rc"] == 0
    q = grade_query(parse_query_xml(out["stdout"]))
    assert q.status() == Status.PASS and q.attached_gpus == 8 and q.driver_version == "580.159.04"
    assert [gpu.pci_bus_id for gpu in q.gpus] == [f"00000000:{b}:00.0" for b in BUSES]
    assert [gpu.index for gpu in q.gpus] == list(range(8))
    assert len({gpu.uuid for gpu in q.gpus}) == 8 and len({gpu.serial for gpu in q.gpus}) == 8
    assert {gpu.product_name for gpu in q.gpus} == {"NVIDIA H200"}
    assert checks.check_gpus(q, H200) == []


def test_nvidia_smi_xml_gpu_block_is_the_recorded_one_apart_from_identity(node: Node) -> None:
    recorded = (FIX / "nvidia-smi" / "h200-580.159.04" / "q-x.xml").read_text()
    fake = node.run(["nvidia-smi", "-q", "-x"])["stdout"]
    identity = (
        "timestamp",
        "attached_gpus",
        "serial",
        "uuid",
        "minor_number",
        "module_id",
        "pci_bus",
        "pci_device",
        "pci_bus_id",
    )

    def first_gpu(text: str) -> str:
        text = re.sub(r'<gpu id="[^"]*">', '<gpu id="X">', text)
        for tag in identity:
            text = re.sub(rf"<{tag}>[^<]*</{tag}>", f"<{tag}>X</{tag}>", text)
        return text[: text.index("</gpu>") + len("</gpu>\n\n")]

    assert first_gpu(fake) == first_gpu(recorded)
    assert fake.count("<gpu id=") == 8 and fake.endswith("\t</gpu>\n\n</nvidia_smi_log>\n")


@pytest.mark.parametrize(
    ("knobs", "code", "subject"),
    [
        ({"remap_pending": [2]}, "GPU_ROW_REMAP_PENDING", "gpu2 00000000:3A:00.0"),
        ({"remap_failure": [6]}, "GPU_ROW_REMAP_FAILURE", "gpu6 00000000:BA:00.0"),
        ({"dbe_volatile": {"3": 2}}, "GPU_ECC_DRAM_UNCORRECTABLE_VOLATILE", "gpu3 00000000:5D:00.0"),
        ({"hw_slowdown": [1]}, "GPU_CLOCKS_HW_SLOWDOWN", "gpu1 00000000:2A:00.0"),
        ({"pcie_width": {"4": 8}}, "GPU_PCIE_WIDTH", "gpu4 00000000:9A:00.0"),
    ],
)
def test_nvidia_smi_xml_knobs_fail_the_gpu(node: Node, knobs: dict, code: str, subject: str) -> None:
    node.set(**knobs)
    found = checks.check_gpus(parse_query_xml(node.run(["nvidia-smi", "-q", "-x"])["stdout"]), H200)
    assert {(f.code, f.subject) for f in found if f.status == Status.FAIL} == {(code, subject)}


def test_nvidia_smi_missing_gpu_is_absent_and_the_count_fails(node: Node) -> None:
    node.set(missing_gpus=[5])
    q = grade_query(parse_query_xml(node.run(["nvidia-smi", "-q", "-x"])["stdout"]))
    assert q.attached_gpus == 7 and [g.index for g in q.gpus] == [0, 1, 2, 3, 4, 6, 7]
    assert codes(checks.check_gpus(q, H200), Status.FAIL) == {"GPU_COUNT"}
    rows = parse_remapped_rows_csv(node.run(REMAP_QUERY)["stdout"]).rows
    assert len(rows) == 7 and "00000000:AB:00.0" not in {r.bus_id for r in rows}


def test_nvidia_smi_remapped_rows_csv_is_the_recorded_layout(node: Node) -> None:
    out = node.run(REMAP_QUERY)
    lines = out["stdout"].splitlines()
    recorded = (FIX / "nvidia-smi" / "h200-580.159.04" / "query-remapped-rows.csv").read_text().splitlines()
    assert out["rc"] == 0 and lines[0] == recorded[0] and len(lines) == 9
    assert lines[1].split(", ")[2:] == recorded[1].split(", ")[2:]  # 0, 0, No, No
    result = grade_remapped(parse_remapped_rows_csv(out["stdout"]))
    assert result.status() == Status.PASS and checks.check_remapped_rows(result, H200) == []
    node.set(remap_pending=[0], remap_failure=[7])
    found = checks.check_remapped_rows(parse_remapped_rows_csv(node.run(REMAP_QUERY)["stdout"]), H200)
    assert {(f.code, f.status, f.subject) for f in found} == {
        ("GPU_ROW_REMAP_PENDING", Status.FAIL, "gpu 00000000:18:00.0"),
        ("GPU_ROW_REMAP_FAILURE", Status.FAIL, "gpu 00000000:DB:00.0"),
    }
    noheader = node.run([*REMAP_QUERY[:-1], "--format=csv,noheader"])["stdout"].splitlines()
    assert noheader[0].startswith("00000000:18:00.0, ")


def test_nvidia_smi_nvlink_follows_the_recorded_8_gpu_layout(node: Node) -> None:
    def norm(text: str) -> str:
        return re.sub(r"(?m)^GPU (\d+): .*$", r"GPU \1", text)

    for argv, recorded in (
        (["nvidia-smi", "nvlink", "-s"], "h100-550.90.07-8gpu/nvlink-s.txt"),
        (["nvidia-smi", "nvlink", "-e"], "h100-550.90.07-8gpu-derived/nvlink-e.txt"),
    ):
        out = node.run(argv)
        assert out["rc"] == 0
        assert norm(out["stdout"]) == norm((FIX / "nvidia-smi" / recorded).read_text())
    status = parse_nvlink_status(node.run(["nvidia-smi", "nvlink", "-s"])["stdout"])
    errors = parse_nvlink_errors(node.run(["nvidia-smi", "nvlink", "-e"])["stdout"])
    assert not status.incomplete and not errors.incomplete
    assert {rate for gpu in status.gpus for rate in gpu.links.values()} == {26.562}
    assert checks.check_nvlink(status, errors, H200) == []


def test_nvidia_smi_nvlink_down_fails_that_gpu(node: Node) -> None:
    node.set(nvlink_down={"3": [7, 11]})
    status = parse_nvlink_status(node.run(["nvidia-smi", "nvlink", "-s"])["stdout"])
    found = checks.check_nvlink(status, None, H200)
    assert [(f.code, f.status, f.subject, f.action) for f in found] == [
        ("NVLINK_LINKS_DOWN", Status.FAIL, "gpu3", Action.RESET_GPU)
    ]
    assert "inactive links: [7, 11]" in found[0].evidence


def test_nvidia_smi_unsupported_arguments_exit_2_as_a_usage_error(node: Node) -> None:
    out = node.run(["nvidia-smi", "-L"])
    assert out["rc"] == 2
    assert out["stdout"] == "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"
    found = evaluate({"nvidia_smi": out}, H200, Context(node="node01"))
    assert "PROBE_USAGE" in codes(found, Status.UNKNOWN)
    bad = node.run(["nvidia-smi", "--query-remapped-rows=gpu_bus_id,bogus", "--format=csv"])
    assert bad["rc"] == 2 and "bogus" in bad["stdout"]


# -- dcgmi --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "tests"),
    [
        (1, ["software"]),
        (2, ["software", "pcie", "memory"]),
        (3, ["software", "pcie", "memory", "diagnostic", "targeted_stress", "targeted_power", "memory_bandwidth"]),
    ],
)
def test_dcgmi_diag_levels_pass_on_a_healthy_node(node: Node, level: int, tests: list[str]) -> None:
    out = node.run(["dcgmi", "diag", "-r", str(level), "-j"])
    assert out["rc"] == 0
    result = grade_diag(parse_diag_json(out["stdout"], exit_code=out["rc"]))
    assert result.status() == Status.PASS and result.layout == "4.x" and result.version == "4.2.3"
    assert list(dict.fromkeys(r.test for r in result.results)) == tests
    assert [r.gpu_ids for r in result.results] == [[i] for _ in tests for i in range(8)]
    assert checks.check_dcgm(result) == []


def test_dcgmi_diag_json_is_the_recorded_4x_layout(node: Node) -> None:
    """One GPU, level 1: the recorded GB10 document with the GB10's entity replaced by the H200's."""
    node.set(gpus=1)
    fake = node.run(["dcgmi", "diag", "-r", "1", "-j"])["stdout"]
    recorded = (FIX / "dcgmi" / "4.2.3-gb10" / "diag-r1-pass.json").read_text()
    recorded = re.sub(r'\t+"info" :\n\t+\[\n\t+"[^"]*"\n\t+\],\n', "", recorded)  # GB10's SRAM sentinel note
    recorded = recorded.replace('"2e12"', '"2335"').replace("<<<NOT_SUPPORTED>>>", "0000000010000")
    recorded = recorded.replace("580.82.09", "580.159.04")
    assert fake == recorded


@pytest.mark.parametrize(
    ("severity", "rc", "action"), [(6, 226, Action.RESET_GPU), (2, 205, Action.RMA), (4, 226, Action.RESET_GPU)]
)
def test_dcgmi_dcgm_fail_fails_the_test_with_dcgms_exit_code(
    node: Node, severity: int, rc: int, action: Action
) -> None:
    node.set(
        dcgm_fail={
            "test": "memory",
            "gpu": 5,
            "error_id": 85,
            "severity": severity,
            "message": "Page Retirement/Row Remap: GPU 5 has a pending row remap.",
        }
    )
    out = node.run(["dcgmi", "diag", "-r", "3", "-j"])
    assert out["rc"] == rc
    result = grade_diag(parse_diag_json(out["stdout"], exit_code=out["rc"]))
    failed = [r for r in result.results if r.status == "Fail"]
    assert [(r.test, r.gpu_ids) for r in failed] == [("memory", [5])]
    assert failed[0].warnings[0].error_id == 85 and failed[0].warnings[0].error_category == 10
    found = checks.check_dcgm(result)
    assert result.status() == Status.FAIL
    assert ("DCGM_PENDING_ROW_REMAP", "gpu5") in {(f.code, f.subject) for f in found if f.status == Status.FAIL}
    assert action in {f.action for f in found}


def test_dcgmi_failure_of_a_test_the_level_does_not_run_leaves_it_passing(node: Node) -> None:
    node.set(dcgm_fail={"test": "diagnostic", "gpu": 0, "error_id": 4, "severity": 6, "message": "DBE"})
    out = node.run(["dcgmi", "diag", "-r", "1", "-j"])
    assert out["rc"] == 0 and grade_diag(parse_diag_json(out["stdout"], exit_code=0)).status() == Status.PASS


def test_dcgmi_health_prints_the_recorded_healthy_document(node: Node) -> None:
    out = node.run(["dcgmi", "health", "-c", "-j"])
    assert out["rc"] == 0
    assert out["stdout"] == (FIX / "dcgmi" / "2.x-virtualclient" / "health-healthy.json").read_text()
    assert node.run(["dcgmi", "discovery", "-l"])["rc"] == 2


# -- journalctl ---------------------------------------------------------------------------------------------------


KERNEL = commands("quick", H200)["kernel_log"]


def test_journalctl_without_xids_prints_no_entries_and_passes(node: Node) -> None:
    out = node.run(KERNEL)
    assert out == {**out, "rc": 0, "stdout": "-- No entries --\n"}
    assert evaluate({"kernel_log": out}, H200, Context(node="node01")) == []


def test_journalctl_prints_xids_in_the_recorded_short_iso_layout_and_they_fail(node: Node) -> None:
    node.set(xids=[{"gpu": 4, "xid": 79, "message": "GPU has fallen off the bus."}, {"gpu": 2, "xid": 48}])
    out = node.run(KERNEL)
    lines = out["stdout"].splitlines()
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000 node01 kernel: NVRM: Xid \(PCI:0000:9a:00\): 79, "
        r"pid='<unknown>', name=<unknown>, GPU has fallen off the bus\.",
        lines[0],
    )
    recorded = (FIX / "kernel-log" / "derived" / "journal-short-iso-xid79.log").read_text().splitlines()[1]
    assert lines[0].split(" ", 1)[1].replace("0000:9a:00", "0004:01:00") == recorded.split(" ", 1)[1]
    now = datetime.now(UTC)
    log = parse_kernel_log(out["stdout"], year=now.year)
    assert {(e.code, e.pci) for e in log.events if e.kind == "xid"} == {(79, "0000:9a:00"), (48, "0000:3a:00")}
    found = evaluate({"kernel_log": out}, H200, Context(node="node01", now=now))
    assert {"GPU_XID_79", "GPU_XID_48"} <= codes(found, Status.FAIL)
    assert node.run(["journalctl", "-k", "-o", "json"])["rc"] == 1


# -- all_reduce_perf and mpirun -----------------------------------------------------------------------------------


SINGLE = commands("single_node", H200)["nccl_single"]


def test_all_reduce_perf_single_node_follows_the_recorded_layout_and_passes(node: Node) -> None:
    out = node.run(SINGLE)
    assert out["rc"] == 0
    lines = out["stdout"].splitlines()
    recorded = (FIX / "nccl-tests" / "h100-8gpu-single-node" / "all_reduce_perf.out").read_text().splitlines()
    assert lines[1:3] == recorded[1:3] and lines[11:15] == recorded[11:15] and lines[-1] == "#"
    assert re.fullmatch(r"#  Rank  0 Group  0 Pid +\d+ on     node01 device  0 \[0x18\] NVIDIA H200", lines[3])
    assert len(lines[15]) == len(recorded[15]) and lines[16] == "# Out of bounds values : 0 OK"
    result = parse_nccl_tests(out["stdout"], exit_code=0)
    assert result.status() == Status.PASS and len(result.ranks) == 8 and result.n_gpus == 8
    assert result.busbw_at(SIXTEEN_GIB) == 478.0
    row = result.rows[0].out_of_place
    assert row.busbw_gbytes_per_s == 478.0 and row.wrong == 0
    assert row.algbw_gbytes_per_s == pytest.approx(478.0 * 8 / 14, abs=0.01)
    assert checks.check_nccl(result, H200.performance.nccl_allreduce_single_node_busbw_gbytes_per_s, nodes=1) == []


def test_all_reduce_perf_sweep_rises_to_the_knob_at_the_largest_size(node: Node) -> None:
    node.set(nccl_busbw=430.0)
    out = node.run(["all_reduce_perf", "-b", "128M", "-e", "16G", "-f", "2", "-g", "8"])
    result = parse_nccl_tests(out["stdout"], exit_code=out["rc"])
    sizes = [r.size_bytes for r in result.rows]
    assert sizes == [128 * 1024**2 * 2**k for k in range(8)]
    busbw = [r.out_of_place.busbw_gbytes_per_s for r in result.rows]
    assert busbw == sorted(busbw) and busbw[-1] == 430.0 and busbw[0] > 300
    found = evaluate({"nccl_single": out}, H200, Context(node="node01"))
    assert [(f.code, f.status) for f in found] == [("NCCL_BUSBW_LOW", Status.FAIL)]


def test_all_reduce_perf_asking_for_a_missing_gpu_stops_with_a_cuda_failure(node: Node) -> None:
    node.set(missing_gpus=[7])
    out = node.run(SINGLE)
    assert out["rc"] == 1 and "invalid device ordinal" in out["stdout"]
    assert "NCCL_TEST_CUDA_FAILURE" in codes(evaluate({"nccl_single": out}, H200, Context(node="node01")), Status.FAIL)


MULTI_ARGS = ["all_reduce_perf", "-b", "16G", "-e", "16G", "-f", "2", "-g", "1"]


def mpirun(hosts: str, *extra: str) -> list[str]:
    return ["mpirun", "-np", "16", "-H", hosts, "-x", "NCCL_ALGO=Ring", "-x", "NCCL_DEBUG=INFO", *extra, *MULTI_ARGS]


def test_mpirun_runs_one_rank_per_gpu_per_host_at_the_slowest_hosts_busbw(tmp_path: Path) -> None:
    a, b = Node(tmp_path, "node01"), Node(tmp_path, "node02")
    b.set(nccl_multi_busbw=372.5)
    out = a.run(mpirun("node01:8,node02:8", "--tag-output"))
    assert out["rc"] == 0
    assert all(line.startswith("[1,0]<stdout>:") for line in out["stdout"].splitlines())
    result = parse_nccl_tests(out["stdout"], exit_code=0)
    assert result.printing_ranks == [0] and result.hosts == ["node01", "node02"] and len(result.ranks) == 16
    assert result.algorithms == ["Ring"] and result.busbw_at(SIXTEEN_GIB) == 372.5
    found = evaluate({"nccl_multi": out}, H200, Context(node="node01", nccl_algo="RING", nodes=2))
    assert found == []


def test_mpirun_with_a_dead_rail_fails_the_nccl_run(tmp_path: Path) -> None:
    a, b = Node(tmp_path, "node01"), Node(tmp_path, "node02")
    b.set(dead_rails=[3])
    out = a.run(mpirun("node01,node02"))
    assert out["rc"] == 1
    assert (
        "node02: Test NCCL failure common.cu:392 'remote process exited or there was a network error / '"
        in (out["stdout"])
    )
    assert "NCCL WARN NET/IB" in out["stdout"] and "Primary job  terminated normally" in out["stderr"]
    found = evaluate({"nccl_multi": out}, H200, Context(node="node01", nccl_algo="RING", nodes=2))
    assert "NCCL_TEST_NCCL_FAILURE" in codes(found, Status.FAIL)
    assert verdict("node01", {"nccl_multi": found}).status == Status.FAIL


def test_mpirun_to_an_unknown_host_fails_as_orte_does(node: Node) -> None:
    out = node.run(mpirun("node01,node09"))
    assert out["rc"] == 1 and out["stdout"] == ""
    assert out["stderr"].startswith("ssh: Could not resolve hostname node09: Name or service not known\n")
    assert "ORTE was unable to reliably start one or more daemons." in out["stderr"]


def test_mpirun_sets_x_variables_and_the_host_list(node: Node) -> None:
    out = node.run(
        [
            "mpirun",
            "-H",
            "node01",
            "-x",
            "FOO=bar",
            "--tag-output",
            "sh",
            "-c",
            'echo "$FOO $HWAAC_FAKE_MPI_HOSTS"; echo oops >&2',
        ]
    )
    assert out["rc"] == 0
    assert out["stdout"] == "[1,0]<stdout>:bar node01\n" and out["stderr"] == "[1,0]<stderr>:oops\n"


# -- nvbandwidth --------------------------------------------------------------------------------------------------


NVBW = commands("single_node", H200)["nvbandwidth"]


def test_nvbandwidth_follows_the_recorded_layout_and_passes(node: Node) -> None:
    out = node.run(NVBW)
    assert out["rc"] == 0
    lines = out["stdout"].splitlines()
    recorded = (FIX / "nvbandwidth" / "v0.8-issue50-a6000" / "nvbandwidth.out").read_text().splitlines()
    assert (
        lines[:2] == recorded[:2]
        and lines[-2:]
        == (FIX / "nvbandwidth" / "v0.6-superbench" / "nvbandwidth_results.log").read_text().splitlines()[-2:]
    )
    d2d = lines.index("memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)")
    assert lines[d2d + 1] == recorded[10] + "         6         7"  # header of column indices, %10
    assert lines[d2d + 2].startswith(" 0       N/A    370.00")
    result = read_nvbandwidth(out["stdout"])
    assert result.status() == Status.PASS and result.finished and len(result.devices) == 8
    h2d, p2p = result.test("host_to_device_memcpy_ce"), result.test("device_to_device_memcpy_read_ce")
    assert h2d is not None and p2p is not None
    assert h2d.rows == {0: [55.0] * 8} and h2d.sum == 440.0
    assert p2p.minimum() == 370.0 and p2p.sum == 370.0 * 56 and p2p.rows[3][3] is None
    assert checks.check_nvbandwidth(result, H200) == []


def test_nvbandwidth_knobs_fail_the_gates(node: Node) -> None:
    node.set(nvbw_h2d=40.0, nvbw_d2d=345.0)
    found = evaluate({"nvbandwidth": node.run(NVBW)}, H200, Context(node="node01"))
    assert {(f.code, f.status) for f in found} == {("GPU_H2D_BW_LOW", Status.FAIL), ("GPU_P2P_BW_LOW", Status.WARN)}
    assert node.run(["nvbandwidth", "-t", "no_such_test"])["rc"] == 1


# -- the node evaluation ------------------------------------------------------------------------------------------


def run_stages(node: Node) -> dict[str, list[Finding]]:
    """Every probe of quick, dcgm and single_node (ibstat and the port counters from the NIC-side fakes)."""
    ctx = Context(node="node01")
    by_stage = {}
    for stage in ("quick", "dcgm", "single_node"):
        probes = commands(stage, H200, sysfs_root=str(node.state / "sys"))
        by_stage[stage] = evaluate({name: node.run(argv) for name, argv in probes.items()}, H200, ctx)
    return by_stage


def test_a_healthy_fake_node_passes_quick_dcgm_and_single_node(node: Node) -> None:
    by_stage = run_stages(node)
    assert by_stage == {"quick": [], "dcgm": [], "single_node": []}
    result = verdict("node01", by_stage)
    assert result.status == Status.PASS and result.action == Action.NONE


def test_a_faulty_fake_node_fails_in_each_stage(node: Node) -> None:
    node.set(
        remap_pending=[1],
        dcgm_fail={
            "test": "targeted_power",
            "gpu": 1,
            "error_id": 63,
            "severity": 4,
            "message": "Targeted Power: power below target",
        },
        nccl_busbw=400.0,
    )
    result = verdict("node01", run_stages(node))
    assert result.status == Status.FAIL
    assert result.stages == {"quick": Status.FAIL, "dcgm": Status.FAIL, "single_node": Status.FAIL}
    assert {"GPU_ROW_REMAP_PENDING", "DCGM_TARGET_POWER", "NCCL_BUSBW_LOW"} <= set(result.codes)
