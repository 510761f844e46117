"""Threshold checks and the node verdict on recorded outputs (tests/fixtures/health, sources in their READMEs)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from hwaac.health import checks, checks_nic
from hwaac.health.node import Context, evaluate, verdict
from hwaac.health.parsers.growth import port_counter_growth
from hwaac.health.parsers.ib_counters import parse_ib_counters
from hwaac.health.parsers.ibstat import parse_ibstat
from hwaac.health.parsers.nccl_tests import parse_nccl_tests
from hwaac.health.parsers.nvidia_smi import (
    parse_nvlink_errors,
    parse_nvlink_status,
    parse_query_gpu_csv,
    parse_query_xml,
)
from hwaac.health.parsers.perftest import parse_perftest
from hwaac.health.profile import load_profile
from hwaac.health.result import Action, Finding, Status

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "health"
H200 = load_profile("hgx-h200-8x400g")
ONE_GPU = H200.model_copy(update={"gpu": H200.gpu.model_copy(update={"count": 1})})


def read(rel: str) -> str:
    return (FIX / rel).read_text()


def codes(found: list[Finding], status: Status | None = None) -> set[str]:
    return {f.code for f in found if status is None or f.status == status}


def test_recorded_healthy_h200_passes_a_one_gpu_profile_and_fails_the_8_gpu_sku() -> None:
    q = parse_query_xml(read("nvidia-smi/h200-580.159.04/q-x.xml"))  # the single-GPU VM we recorded
    assert checks.check_gpus(q, ONE_GPU) == []
    assert checks.check_gpus(q, ONE_GPU, under_load=True) == []  # recorded at Gen5 x16
    found = checks.check_gpus(q, H200)
    assert codes(found) == {"GPU_COUNT"} and found[0].status == Status.FAIL


def test_derived_h200_faults_fail_with_their_actions() -> None:
    pending = checks.check_gpus(
        parse_query_xml(read("nvidia-smi/h200-580.159.04-derived/q-x-remap-pending.xml")), ONE_GPU
    )
    assert "GPU_ROW_REMAP_PENDING" in codes(pending, Status.FAIL)
    slowdown = checks.check_gpus(
        parse_query_xml(read("nvidia-smi/h200-580.159.04-derived/q-x-hw-slowdown.xml")), ONE_GPU
    )
    assert "GPU_CLOCKS_HW_SLOWDOWN" in codes(slowdown, Status.FAIL)
    # the SKU's own limits: a stricter profile fails what the default passes
    q = parse_query_xml(read("nvidia-smi/h200-580.159.04/q-x.xml"))
    narrow = ONE_GPU.model_copy(update={"gpu": ONE_GPU.gpu.model_copy(update={"pcie_width": 32})})
    assert codes(checks.check_gpus(q, narrow)) == {"GPU_PCIE_WIDTH"}
    wrong = ONE_GPU.model_copy(update={"gpu": ONE_GPU.gpu.model_copy(update={"product_name": "B200"})})
    assert codes(checks.check_gpus(q, wrong)) == {"GPU_MODEL_MISMATCH"}


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("nvidia-smi/h200-580.159.04/query-gpu.csv", []),
        (
            "nvidia-smi/h200-580.159.04-derived/query-remapped-rows-pending.csv",
            [("GPU_ROW_REMAP_PENDING", Status.FAIL, Action.RESET_GPU)],
        ),
        ("nvidia-smi/h200-580.159.04-derived/query-gpu-all-na.csv", None),  # unreadable: UNKNOWN only
    ],
)
def test_query_gpu_csv_is_judged_by_the_check(fixture: str, expected: list | None) -> None:
    result = parse_query_gpu_csv(read(fixture))
    assert result.findings == []  # the reader returns facts
    found = checks.check_query_gpu_csv(result)
    if expected is None:
        assert found and {f.status for f in found} == {Status.UNKNOWN}
    else:
        assert [(f.code, f.status, f.action) for f in found] == expected


@pytest.mark.parametrize(
    ("status", "errors", "expected"),
    [
        ("h100-550.90.07-8gpu/nvlink-s.txt", "h100-550.90.07-8gpu-derived/nvlink-e.txt", []),
        (
            "h100-550.90.07-8gpu-derived/nvlink-s-inactive.txt",
            None,
            [("NVLINK_LINKS_DOWN", Status.FAIL, "gpu3", Action.RESET_GPU)],
        ),
        (
            "geforce-issue-threads/ogkm-1150-all-links-inactive.txt",
            None,
            [("NVLINK_LINKS_DOWN", Status.FAIL, "gpu", Action.RESET_GPU)],
        ),
        (
            "h100-550.90.07-8gpu/nvlink-s.txt",
            "h100-550.90.07-8gpu-derived/nvlink-e-crc.txt",
            [("NVLINK_ERRORS", Status.WARN, "gpu2", Action.NONE)],
        ),
        (
            None,
            "h100-550.90.07-8gpu-derived/nvlink-e-crc.txt",  # -e read alone (its -s probe failed)
            [("NVLINK_ERRORS", Status.WARN, "gpu2", Action.NONE)],
        ),
    ],
)
def test_nvlink_facts_are_judged_by_the_check(status: str | None, errors: str | None, expected: list) -> None:
    s = parse_nvlink_status(read(f"nvidia-smi/{status}")) if status else None
    e = parse_nvlink_errors(read(f"nvidia-smi/{errors}")) if errors else None
    assert [(f.code, f.status, f.subject, f.action) for f in checks.check_nvlink(s, e, H200)] == expected


def test_nvlink_every_gpu_needs_its_active_links() -> None:
    ok = parse_nvlink_status(read("nvidia-smi/h100-550.90.07-8gpu/nvlink-s.txt"))
    assert len(ok.gpus) == 8
    assert checks.check_nvlink(ok, None, H200) == []
    bad = parse_nvlink_status(read("nvidia-smi/h100-550.90.07-8gpu-derived/nvlink-s-inactive.txt"))
    found = checks.check_nvlink(bad, None, H200)
    assert "NVLINK_LINKS_DOWN" in codes(found, Status.FAIL)
    crc = parse_nvlink_errors(read("nvidia-smi/h100-550.90.07-8gpu-derived/nvlink-e-crc.txt"))
    assert "NVLINK_ERRORS" in codes(checks.check_nvlink(ok, crc, H200), Status.WARN)


def test_ibstat_rails_rate_and_link_layer() -> None:
    ib = read("ibstat/rdma-core-47/h100-ib-ndr-8hca-active.txt")  # 8 x NDR 400 InfiniBand + a 200G bond
    ib_profile = H200.model_copy(update={"nic": H200.nic.model_copy(update={"link_layer": "InfiniBand"})})
    assert checks_nic.check_ibstat(parse_ibstat(ib), ib_profile) == []
    # our RoCE SKU reads this node's InfiniBand rails as the wrong link layer: no Ethernet rail is up at 400
    assert "NIC_RAILS_DOWN" in codes(checks_nic.check_ibstat(parse_ibstat(ib), H200), Status.FAIL)
    roce = parse_ibstat(read("ibstat/rdma-core-47/h100-roce-400g-down-polling.txt"))
    rails = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]  # the MT4129s
    found = checks_nic.check_ibstat(roce, H200, rails)
    down = next(f for f in found if f.code == "NIC_RAILS_DOWN")
    assert down.message == "6 of 8 rail ports up" and down.subject == "mlx5_5 port 1, mlx5_11 port 1"
    assert {f.subject for f in found if f.code == "NIC_PORT_DOWN"} == {"mlx5_5 port 1", "mlx5_11 port 1"}
    # the frontend 100G ports (MT4125) are not rails: not judged
    assert not any(f.subject.startswith(("mlx5_1 ", "mlx5_2 ")) for f in found)
    assert "NIC_MISSING" in codes(checks_nic.check_ibstat(roce, H200, [*rails[:7], "mlx5_42"]))


def test_counter_growth_fatal_warn_and_unknown() -> None:
    base = read("ib-counters/procfs-fixture/counters.txt")
    before = parse_ib_counters(base)
    (key,) = list(before.ports)[:1]
    dev, port = key
    legacy = f"/sys/class/infiniband/{dev}/ports/{port}/counters/"
    value = before.ports[key]["link_downed"]
    grown = base.replace(f"{legacy}link_downed:{value}", f"{legacy}link_downed:{value + 1}")
    assert grown != base
    found = checks_nic.check_counter_growth(port_counter_growth(before, parse_ib_counters(grown), 60), H200)
    assert [(f.code, f.status, f.subject) for f in found] == [("NIC_LINK_DOWNED", Status.FAIL, f"{dev} port {port}")]
    assert checks_nic.check_counter_growth(port_counter_growth(before, before, 60), H200) == []
    saturated = parse_ib_counters(read("ib-counters/gpud-943-saturated/counters.txt"))
    unknown = checks_nic.check_counter_growth(port_counter_growth(saturated, saturated, 60), H200)
    assert unknown and {f.status for f in unknown} == {Status.UNKNOWN}


def test_nccl_is_compared_only_at_the_thresholds_method() -> None:
    single = parse_nccl_tests(read("nccl-tests/h100-8gpu-single-node/all_reduce_perf.out"))
    th = H200.performance.nccl_allreduce_single_node_busbw_gbytes_per_s
    # recorded up to 4 GiB: there is no figure at the threshold's 16 GiB, so no verdict but UNKNOWN
    assert codes(checks.check_nccl(single, th), Status.UNKNOWN) == {"NCCL_BUSBW_MISSING"}
    at_4g = th.model_copy(update={"method": th.method.model_copy(update={"message_bytes": 4294967296})})
    assert checks.check_nccl(single, at_4g) == []  # 476.53 GB/s >= 460 at 4 GiB (the fixture's last row)
    strict = at_4g.model_copy(update={"min": 480.0, "warn_below": 490.0})
    assert codes(checks.check_nccl(single, strict), Status.FAIL) == {"NCCL_BUSBW_LOW"}

    multi = parse_nccl_tests(read("nccl-tests/h100-2node-mpirun/all_reduce_perf_mpi.out"))
    mth = H200.performance.nccl_allreduce_multi_node_busbw_gbytes_per_s
    # two nodes but NCCL_ALGO not known to be RING: a tree/NVLS figure must not pass as fabric bandwidth
    assert codes(checks.check_nccl(multi, mth), Status.UNKNOWN) == {"METHOD_MISMATCH"}
    assert codes(checks.check_nccl(multi, mth, nccl_algo="RING")) == set()  # 469.21 GB/s at 16 GiB
    assert codes(checks.check_nccl(single, mth, nccl_algo="RING"), Status.UNKNOWN) == {"METHOD_MISMATCH"}


def test_perftest_method_and_threshold() -> None:
    run = parse_perftest(read("perftest/a40-gpudirect-duration-gbits/ib_write_bw-client.out"))
    th = H200.performance.ib_write_bw_per_port_gbits_per_s
    # recorded at 64 KiB messages on a 200G A40 setup: no figure at 8 MiB
    assert codes(checks.check_perftest(run, th), Status.UNKNOWN) == {"NIC_WRITE_BW_MISSING"}
    at_64k = th.model_copy(update={"method": th.method.model_copy(update={"message_bytes": 65536})})
    found = checks.check_perftest(run, at_64k)
    assert codes(found, Status.FAIL) == {"NIC_WRITE_BW_LOW"}  # 181.46 Gb/s < 360
    assert found[-1].action == Action.CHECK_LINK
    host_mem = th.model_copy(update={"method": th.method.model_copy(update={"gpudirect": False})})
    assert codes(checks.check_perftest(run, host_mem)) == {"METHOD_MISMATCH"}
    failed = parse_perftest(read("perftest/connect-failure/ib_write_bw.out"), exit_code=1)
    assert max(f.status for f in checks.check_perftest(failed, th)) >= Status.UNKNOWN


def test_verdict_worst_status_strongest_action_and_dedupe() -> None:
    a = Finding("GPU_ROW_REMAP_PENDING", Status.FAIL, "pending", "gpu3", action=Action.RESET_GPU)
    b = Finding("NIC_PORT_DOWN", Status.FAIL, "down", "mlx5_5 port 1", action=Action.CHECK_LINK)
    w = Finding("NVLINK_ERRORS", Status.WARN, "errors", "gpu1")
    u = Finding("PARSE_UNREADABLE", Status.UNKNOWN, "x", action=Action.RETEST)
    v = verdict("node01", {"quick": [a, w, replace(a, status=Status.WARN)], "ib_pairwise": [b, u]})
    assert v.status == Status.FAIL and v.action == Action.CHECK_LINK  # a hands-on repair outranks a GPU reset
    assert v.codes == ["GPU_ROW_REMAP_PENDING", "NIC_PORT_DOWN", "NVLINK_ERRORS", "PARSE_UNREADABLE"]
    assert [f.status for f in v.findings if f.code == "GPU_ROW_REMAP_PENDING"] == [Status.FAIL]
    assert v.stages == {"quick": Status.FAIL, "ib_pairwise": Status.FAIL}
    assert verdict("n", {"quick": [u]}).action == Action.RETEST
    ok = verdict("n", {"quick": []})
    assert (ok.status, ok.action, ok.codes) == (Status.PASS, Action.NONE, [])
    assert ok.to_dict()["status"] == "PASS"


@pytest.mark.parametrize(
    "outputs",
    [
        {"nvidia_smi": {"rc": None, "stdout": "", "stderr": "nvidia-smi: not found", "seconds": 0, "timed_out": False}},
        {"dcgm_diag": {"rc": -9, "stdout": "", "stderr": "", "seconds": 3600, "timed_out": True}},
        {"nvidia_smi": {"rc": 0, "stdout": "", "stderr": "", "seconds": 1, "timed_out": False}},
        {"ibstat": {"rc": 0, "stdout": "garbage\n", "stderr": "", "seconds": 1, "timed_out": False}},
    ],
)
def test_missing_tool_timeout_and_empty_output_are_never_pass(outputs: dict) -> None:
    v = verdict("n", {"quick": evaluate(outputs, H200, Context("n"))})
    assert v.status >= Status.UNKNOWN


def test_nvidia_smi_exit_codes_name_the_fault() -> None:
    out = {
        "nvidia_smi": {
            "rc": 15,
            "stdout": "",
            "stderr": "Unable to determine the device handle for GPU0000:18:00.0: GPU is lost.",
            "seconds": 1,
            "timed_out": False,
        }
    }
    found = evaluate(out, H200, Context("n"))
    assert "GPU_FALLEN_OFF_BUS" in codes(found, Status.FAIL)


def test_ibstat_that_stops_at_a_non_rail_device_is_unknown_not_rails_down() -> None:
    # ibstat lists mlx5_0, mlx5_1, mlx5_10, mlx5_11, mlx5_2...: a panic at mlx5_10 hides rails 2..7.
    # Derived from the recorded a100-ibpanic.txt: cut before CA 'mlx5_2', the panic line names mlx5_10.
    lines = read("ibstat/rdma-core-39/a100-ibpanic.txt").splitlines()
    cut = lines[: lines.index("CA 'mlx5_2'")]
    panic = next(line for line in lines if line.startswith("ibpanic:")).replace("'mlx5_8'", "'mlx5_10'")
    ib = parse_ibstat("\n".join([*cut, panic]) + "\n")
    ib_profile = H200.model_copy(
        update={"nic": H200.nic.model_copy(update={"link_layer": "InfiniBand", "rate_gbits_per_s": 200})}
    )
    found = checks_nic.check_ibstat(ib, ib_profile, [f"mlx5_{i}" for i in range(8)])
    assert "IB_IBSTAT_PANIC" in codes(found, Status.UNKNOWN)
    assert not codes(found, Status.FAIL)
