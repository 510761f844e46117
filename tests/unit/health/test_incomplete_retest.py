"""The rule "an incomplete parse leads only to a retest", enforced once (checks.incomplete_means_retest) for every
check: recorded outputs (tests/fixtures/health, sources in their READMEs) whose findings recommend a reset, reboot,
link repair or RMA, read as incomplete, recommend only RETEST."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

import pytest

from hwaac.health import checks
from hwaac.health.node import verdict
from hwaac.health.parsers import (
    dcgm,
    dcgm_health,
    gpu_burn,
    infiniband,
    kernel_log,
    nccl_tests,
    nvbandwidth,
    nvidia_smi,
    perftest,
)
from hwaac.health.profile import MinThreshold, load_profile
from hwaac.health.profile import TestMethod as Method
from hwaac.health.result import DESTRUCTIVE_ACTIONS, Action, Finding, Status, ToolResult

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "health"
H200 = load_profile("hgx-h200-8x400g")
ONE_GPU = H200.model_copy(update={"gpu": H200.gpu.model_copy(update={"count": 1})})
# gates no recorded run reaches, at the recorded runs' own method, so that a measured figure fails
NCCL_GATE = MinThreshold(min=10_000, method=Method(tool="all_reduce_perf"), source="test: unreachable")
IB_GATE = MinThreshold(min=10_000, method=Method(tool="ib_write_bw", gpudirect=True), source="test: unreachable")

H2D_GATE = H200.model_copy(update={"performance": H200.performance.model_copy(update={
    "host_to_device_gbytes_per_s": H200.performance.host_to_device_gbytes_per_s.model_copy(update={"min": 10_000})})})


def read(rel: str) -> str:
    return (FIX / rel).read_text()


# check name[:variant] -> (parse the recorded output, run the check on the parsed result)
CASES: dict[str, tuple[Callable[[], ToolResult], Callable[[ToolResult], list[Finding]]]] = {
    "check_gpus": (lambda: nvidia_smi.parse_query_xml(read("nvidia-smi/h200-580.159.04-derived/q-x-remap-pending.xml")),
                   lambda r: checks.check_gpus(r, ONE_GPU)),  # type: ignore[arg-type]
    "check_query_gpu_csv": (  # a --query-remapped-rows answer is a --query-gpu answer for its fields
        lambda: nvidia_smi.parse_query_gpu_csv(
            read("nvidia-smi/h200-580.159.04-derived/query-remapped-rows-pending.csv")),
        checks.check_query_gpu_csv),  # type: ignore[dict-item]
    "check_remapped_rows": (
        lambda: nvidia_smi.parse_remapped_rows_csv(
            read("nvidia-smi/h200-580.159.04-derived/query-remapped-rows-pending.csv")),
        lambda r: checks.check_remapped_rows(r, ONE_GPU)),  # type: ignore[arg-type]
    "check_nvlink": (
        lambda: nvidia_smi.parse_nvlink_status(read("nvidia-smi/h100-550.90.07-8gpu-derived/nvlink-s-inactive.txt")),
        lambda r: checks.check_nvlink(r, None, H200)),  # type: ignore[arg-type]
    "check_kernel_log": (lambda: kernel_log.parse_kernel_log(read("kernel-log/ogkm-461-xid79-119/dmesg.log")),
                         checks.check_kernel_log),  # type: ignore[dict-item]
    "check_dcgm": (lambda: dcgm.parse_diag_json(read("dcgmi/4.2.3-gb10/diag-r1-row-remap-isolate-exit205.json"),
                                                exit_code=205),
                   checks.check_dcgm),  # type: ignore[dict-item]
    "check_dcgm:health": (lambda: dcgm_health.parse_health_json(read("dcgmi/2.x-virtualclient/health-failure.json")),
                          checks.check_dcgm),  # type: ignore[dict-item]
    "check_gpu_burn": (lambda: gpu_burn.parse_gpu_burn(read("gpu-burn/issue12-faulty-exit0/gpu_burn.out")),
                       lambda r: checks.check_gpu_burn(r, H200)),  # type: ignore[arg-type]
    "check_ibstat": (lambda: infiniband.parse_ibstat(read("ibstat/rdma-core-47/h100-roce-400g-down-polling.txt")),
                     lambda r: checks.check_ibstat(r, H200)),  # type: ignore[arg-type]
    "check_ibstat_ports": (
        lambda: infiniband.parse_ibstat(read("ibstat/rdma-core-47/h100-roce-400g-down-polling.txt")),
        checks.check_ibstat_ports),  # type: ignore[dict-item]
    "check_nccl": (lambda: nccl_tests.parse_nccl_tests(read("nccl-tests/h100-8gpu-single-node/all_reduce_perf.out")),
                   lambda r: checks.check_nccl(r, NCCL_GATE, nodes=2)),  # type: ignore[arg-type]
    "check_perftest": (
        lambda: perftest.parse_perftest(read("perftest/a40-gpudirect-duration-gbits/ib_write_bw-client.out")),
        lambda r: checks.check_perftest(r, IB_GATE)),  # type: ignore[arg-type]
    "check_nvbandwidth": (
        lambda: nvbandwidth.parse_nvbandwidth(read("nvbandwidth/v0.6-superbench/nvbandwidth_results.log")),
        lambda r: checks.check_nvbandwidth(r, H2D_GATE)),  # type: ignore[arg-type]
}
# checks that take no parsed tool output: nothing of theirs can be incomplete (growth unknown is UNKNOWN already)
NO_PARSED_INPUT = {"check_counter_growth"}
# checks that recommend nothing destructive whatever they read (ethtool -S is parsed, not judged yet)
NEVER_DESTRUCTIVE = {"check_ethtool"}


def test_every_check_carries_the_rule_and_is_in_the_table() -> None:
    found = {name for name, fn in inspect.getmembers(checks, inspect.isfunction) if name.startswith("check_")}
    assert found == {case.split(":")[0] for case in CASES} | NO_PARSED_INPUT | NEVER_DESTRUCTIVE
    assert all(getattr(getattr(checks, name), "incomplete_means_retest", False) for name in found)


@pytest.mark.parametrize("name", sorted(CASES))
def test_complete_recorded_fault_recommends_a_destructive_action(name: str) -> None:
    parse, check = CASES[name]
    result = parse()
    assert not result.incomplete
    assert any(f.action in DESTRUCTIVE_ACTIONS for f in check(result))  # the case exercises the rule


@pytest.mark.parametrize("name", sorted(CASES))
def test_incomplete_parse_recommends_only_a_retest(name: str) -> None:
    parse, check = CASES[name]
    result = parse()
    result.unknown.append("a field could not be read")  # the same output, as if part of it were unreadable
    found = check(result)
    assert found and not any(f.action in DESTRUCTIVE_ACTIONS for f in found)
    assert max(f.status for f in found) == Status.UNKNOWN
    withheld = [f for f in found if "withheld" in f.message]
    assert withheld and all(f.action == Action.RETEST for f in withheld)
    assert verdict("node01", {"stage": found}).action == Action.RETEST


def test_truncated_gb200_nvlink_paste_is_a_retest_not_a_reset() -> None:
    status = nvidia_smi.parse_nvlink_status(read("nvidia-smi/gb200-nvlink-s-truncated/nvlink-s.txt"))
    assert status.status() == Status.UNKNOWN and status.incomplete
    assert [len(g.links) for g in status.gpus] == [18, 2]
    found = checks.check_nvlink(status, None, H200)
    down = [f for f in found if f.code == "NVLINK_LINKS_DOWN"]
    assert [f.subject for f in down] == ["gpu1"]
    assert down[0].status == Status.UNKNOWN and down[0].action == Action.RETEST
    v = verdict("node01", {"quick": found})
    assert (v.status, v.action) == (Status.UNKNOWN, Action.RETEST)
