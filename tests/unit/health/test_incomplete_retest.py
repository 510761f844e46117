"""The rule "an incomplete parse leads only to a retest", enforced once (result.incomplete_means_retest) for every
check of the check modules: recorded outputs (tests/fixtures/health and tests/fixtures/tools, sources in their
READMEs) whose findings recommend a reset, reboot, link repair or RMA, read as incomplete, recommend only RETEST."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from hwaac.health import checks, checks_lustre, checks_nic, checks_rdma, lustre_lnet, lustre_targets
from hwaac.health.node import verdict
from hwaac.health.parsers import (
    dcgm,
    dcgm_health,
    gpu_burn,
    ibstat,
    kernel_log,
    lctl,
    lnetctl,
    lustre,
    lustre_df,
    lustre_imports,
    nccl_tests,
    nvbandwidth,
    nvidia_smi,
    perftest,
    rdma,
)
from hwaac.health.profile import MinThreshold, load_profile
from hwaac.health.profile import TestMethod as Method
from hwaac.health.result import DESTRUCTIVE_ACTIONS, Action, Finding, Status, ToolResult

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "health"
TOOLS = FIX.parent / "tools"
# the modules whose public functions judge parsed results (their names need not start with check_)
CHECK_MODULES: tuple[ModuleType, ...] = (checks, checks_nic, checks_rdma, checks_lustre, lustre_targets, lustre_lnet)
H200 = load_profile("hgx-h200-8x400g")
ONE_GPU = H200.model_copy(update={"gpu": H200.gpu.model_copy(update={"count": 1})})
# gates no recorded run reaches, at the recorded runs' own method, so that a measured figure fails
NCCL_GATE = MinThreshold(min=10_000, method=Method(tool="all_reduce_perf"), source="test: unreachable")
IB_GATE = MinThreshold(min=10_000, method=Method(tool="ib_write_bw", gpudirect=True), source="test: unreachable")

H2D_GATE = H200.model_copy(
    update={
        "performance": H200.performance.model_copy(
            update={
                "host_to_device_gbytes_per_s": H200.performance.host_to_device_gbytes_per_s.model_copy(
                    update={"min": 10_000}
                )
            }
        )
    }
)


def read(rel: str, base: Path = FIX) -> str:
    return (base / rel).read_text()


RDMA_BEFORE = "rdma-statistic/mlnx-iproute2-4link.txt"

# module.check[:variant] -> (parse the recorded output, run the check on the parsed result)
CASES: dict[str, tuple[Callable[[], ToolResult], Callable[[ToolResult], list[Finding]]]] = {
    "checks.check_gpus": (
        lambda: nvidia_smi.parse_query_xml(read("nvidia-smi/h200-580.159.04-derived/q-x-remap-pending.xml")),
        lambda r: checks.check_gpus(r, ONE_GPU),
    ),  # type: ignore[arg-type]
    "checks.check_query_gpu_csv": (  # a --query-remapped-rows answer is a --query-gpu answer for its fields
        lambda: nvidia_smi.parse_query_gpu_csv(
            read("nvidia-smi/h200-580.159.04-derived/query-remapped-rows-pending.csv")
        ),
        checks.check_query_gpu_csv,
    ),  # type: ignore[dict-item]
    "checks.check_remapped_rows": (
        lambda: nvidia_smi.parse_remapped_rows_csv(
            read("nvidia-smi/h200-580.159.04-derived/query-remapped-rows-pending.csv")
        ),
        lambda r: checks.check_remapped_rows(r, ONE_GPU),
    ),  # type: ignore[arg-type]
    "checks.check_nvlink": (
        lambda: nvidia_smi.parse_nvlink_status(read("nvidia-smi/h100-550.90.07-8gpu-derived/nvlink-s-inactive.txt")),
        lambda r: checks.check_nvlink(r, None, H200),
    ),  # type: ignore[arg-type]
    "checks.check_kernel_log": (
        lambda: kernel_log.parse_kernel_log(read("kernel-log/ogkm-461-xid79-119/dmesg.log")),
        checks.check_kernel_log,
    ),  # type: ignore[dict-item]
    "checks.check_dcgm": (
        lambda: dcgm.parse_diag_json(read("dcgmi/4.2.3-gb10/diag-r1-row-remap-isolate-exit205.json"), exit_code=205),
        checks.check_dcgm,
    ),  # type: ignore[dict-item]
    "checks.check_dcgm:health": (
        lambda: dcgm_health.parse_health_json(read("dcgmi/2.x-virtualclient/health-failure.json")),
        checks.check_dcgm,
    ),  # type: ignore[dict-item]
    "checks.check_gpu_burn": (
        lambda: gpu_burn.parse_gpu_burn(read("gpu-burn/issue12-faulty-exit0/gpu_burn.out")),
        lambda r: checks.check_gpu_burn(r, H200),
    ),  # type: ignore[arg-type]
    "checks_nic.check_ibstat": (
        lambda: ibstat.parse_ibstat(read("ibstat/rdma-core-47/h100-roce-400g-down-polling.txt")),
        lambda r: checks_nic.check_ibstat(r, H200),
    ),  # type: ignore[arg-type]
    "checks_nic.check_ibstat_ports": (
        lambda: ibstat.parse_ibstat(read("ibstat/rdma-core-47/h100-roce-400g-down-polling.txt")),
        checks_nic.check_ibstat_ports,
    ),  # type: ignore[dict-item]
    "checks.check_nccl": (
        lambda: nccl_tests.parse_nccl_tests(read("nccl-tests/h100-8gpu-single-node/all_reduce_perf.out")),
        lambda r: checks.check_nccl(r, NCCL_GATE, nodes=2),
    ),  # type: ignore[arg-type]
    "checks.check_perftest": (
        lambda: perftest.parse_perftest(read("perftest/a40-gpudirect-duration-gbits/ib_write_bw-client.out")),
        lambda r: checks.check_perftest(r, IB_GATE),
    ),  # type: ignore[arg-type]
    "checks.check_nvbandwidth": (
        lambda: nvbandwidth.parse_nvbandwidth(read("nvbandwidth/v0.6-superbench/nvbandwidth_results.log")),
        lambda r: checks.check_nvbandwidth(r, H2D_GATE),
    ),  # type: ignore[arg-type]
    "checks_rdma.check_rdma_ports": (
        lambda: rdma.parse_ibstatus(read("ibstatus/roce-2port-one-disabled.txt")),
        lambda r: checks_rdma.check_rdma_ports(r, H200),
    ),  # type: ignore[arg-type]
    "checks_rdma.check_pair_perftest": (  # this node's port is not clean: the pair's FAIL stays this node's
        lambda: perftest.parse_perftest(read("perftest/a40-gpudirect-duration-gbits/ib_write_bw-client.out")),
        lambda r: checks_rdma.check_pair_perftest(
            r,
            IB_GATE,
            subject="mlx5_0 port 1",  # type: ignore[arg-type]
            port_clean=False,
        ),
    ),
    "checks_rdma.check_rdma_statistic_growth": (  # local_ack_timeout_err 0 -> 17 in 10 s: above the warn rate
        lambda: rdma.parse_rdma_statistic(read("rdma-statistic/mlnx-iproute2-4link-after_derived.txt")),
        lambda r: checks_rdma.check_rdma_statistic_growth(rdma.parse_rdma_statistic(read(RDMA_BEFORE)), r, 10.0, H200),
    ),  # type: ignore[arg-type]
    "checks_lustre.lfs_check_findings": (
        lambda: lustre.parse_lfs_check(read("lfs/check_servers_inactive_derived.txt", TOOLS)),
        checks_lustre.lfs_check_findings,
    ),  # type: ignore[dict-item]
    "checks_lustre.mgs_reach_findings": (  # the only MGS NID does not answer: the fs cannot reach its MGS
        lambda: lctl.parse_lctl_ping(read("lustre/lctl_ping_failed.txt"), nid="10.20.0.1@tcp", exit_code=1),
        lambda r: checks_lustre.mgs_reach_findings("lfs1", [["10.20.0.1@tcp"]], {"10.20.0.1@tcp": r}),
    ),  # type: ignore[dict-item]
    "checks_lustre.ping_findings": (
        lambda: lctl.parse_lctl_ping(read("lustre/lctl_ping_failed.txt"), nid="10.20.0.1@tcp", exit_code=1),
        checks_lustre.ping_findings,
    ),  # type: ignore[dict-item]
    "checks_lustre.health_check_findings": (
        lambda: lctl.parse_health_check(read("lustre/health_check_unhealthy_2.14_ddn.txt")),
        checks_lustre.health_check_findings,
    ),  # type: ignore[dict-item]
    "checks_lustre.import_findings": (
        lambda: lustre_imports.parse_imports(read("lustre/imports_master_bad_derived.txt")),
        checks_lustre.import_findings,
    ),  # type: ignore[dict-item]
    "checks_lustre.lnet_findings": (
        lambda: lnetctl.parse_lnet_net_show(read("lustre/lnetctl_net_show_v2_2.16_layout_degraded_derived.txt")),
        checks_lustre.lnet_findings,
    ),  # type: ignore[dict-item]
    "lustre_targets.df_findings": (
        lambda: lustre_df.parse_lfs_df(read("lfs/df_v_inactive_error_degraded_derived.txt", TOOLS)),
        lustre_targets.df_findings,
    ),  # type: ignore[dict-item]
}
# checks that take no parsed tool output: nothing of theirs can be incomplete (growth unknown is UNKNOWN already)
NO_PARSED_INPUT = {
    "checks_nic.check_counter_growth",
    "checks_nic.check_port_speed",  # one port's rate and link layer, for check_ibstat and check_rdma_ports
}
# checks that recommend nothing destructive whatever they read (read the functions: every Finding they build has
# action NONE or RETEST); they carry the rule all the same, so that a destructive finding added later is guarded
NEVER_DESTRUCTIVE = {
    "checks_nic.check_ethtool",  # ethtool -S is parsed, not judged yet: the parser's findings and UNKNOWNs only
    "checks_nic.check_ib_counters",  # one reading: saturated, unreadable and torn counters are UNKNOWN, RETEST
    "checks_rdma.check_rdma_statistic",  # one reading: its UNKNOWNs and NIC_COUNTERS_MISSING (UNKNOWN, RETEST)
    "lustre_lnet.nid_findings",  # no NID on the MGS network (FAIL) and off-net failover node (WARN): configure LNet
}


def _is_parsed(hint: object) -> bool:
    """A ToolResult, or a union or container (Mapping[str, LctlPingResult | None]...) holding one."""
    if isinstance(hint, type) and issubclass(hint, ToolResult):
        return True
    return any(_is_parsed(arg) for arg in typing.get_args(hint))


def _judges_parsed_input(fn: Callable[..., object]) -> bool:
    hints = typing.get_type_hints(fn)
    hints.pop("return", None)
    return any(_is_parsed(hint) for hint in hints.values())


def _check_functions() -> dict[str, Callable[..., object]]:
    """Every public function defined in a check module that returns findings: module.name -> function."""
    found = {}
    for module in CHECK_MODULES:
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if (
                fn.__module__ == module.__name__
                and not name.startswith("_")
                and typing.get_type_hints(fn).get("return") == list[Finding]
            ):
                found[f"{module.__name__.rpartition('.')[2]}.{name}"] = fn
    return found


def test_every_check_carries_the_rule_and_is_in_the_table() -> None:
    found = _check_functions()
    assert set(found) == {case.split(":")[0] for case in CASES} | NO_PARSED_INPUT | NEVER_DESTRUCTIVE
    assert [name for name in NO_PARSED_INPUT if _judges_parsed_input(found[name])] == []
    assert [
        name
        for name, fn in found.items()
        if _judges_parsed_input(fn) and not getattr(fn, "incomplete_means_retest", False)
    ] == []


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
