"""perftest parser on recorded outputs (tests/fixtures/health/perftest, sources in each folder's README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.health.parsers.perftest import GBITS_PER_UNIT
from hwaac.health.perftest_grading import read_perftest
from hwaac.health.result import Action, Status

FIX = Path(__file__).parents[2] / "fixtures" / "health" / "perftest"
FIXTURES = sorted(FIX.glob("*/*.out"))
OTHER_TOOLS = sorted((FIX.parent / "nccl-tests").glob("*/*.out")) + sorted((FIX.parent / "nvidia-smi").glob("*/*.txt"))
MIB = 2**20 * 8 / 1e9  # Gb/s per perftest "MB/sec" (2^20 bytes/s, print_report_bw format_factor 0x100000)


def text(rel: str) -> str:
    return (FIX / rel).read_text()


def codes(result) -> list[str]:
    return [f.code for f in result.findings]


def test_write_bw_default_mb_per_sec_with_warning_inside_table():
    r = read_perftest(text("cx5-100g-roce-mbsec/ib_write_bw.out"))
    assert r.status() == Status.PASS, r.all_findings()
    assert (r.test, r.kind, r.verb, r.bidirectional) == ("RDMA_Write BW Test", "bw", "write", False)
    assert (r.device, r.num_qps, r.transport, r.connection_type) == ("mlx5_0", 1, "IB", "RC")
    assert (r.link_type, r.mtu_bytes, r.gid_index, r.max_inline_bytes) == ("Ethernet", 1024, 3, 0)
    assert (r.tx_depth, r.cq_moderation, r.data_exchange) == (128, 100, "rdma_cm")
    assert (r.using_srq, r.dual_port, r.rdma_cm_qps) == (False, False, True)
    assert r.unit == "MB/sec" and len(r.bw_rows) == 1
    row = r.bw_rows[0]  # " 65536      5000             11025.44            11024.71                  0.176395"
    assert (row.size_bytes, row.iterations, row.bw_average_printed, row.msg_rate_mpps) == (
        65536,
        5000,
        11024.71,
        0.176395,
    )
    assert row.bw_average_gbits_per_s == pytest.approx(11024.71 * MIB)  # 92.48 Gb/s on a 100G port
    assert r.bw_peak_gbits_per_s == pytest.approx(11025.44 * MIB)
    assert r.bw_average_gbits_per_s == pytest.approx(92.48, abs=0.01) and r.message_bytes == 65536
    assert any(n.startswith("Conflicting CPU frequency") for n in r.notes)
    assert not r.duration_mode and not r.gpudirect


def test_read_bw():
    r = read_perftest(text("cx5-100g-roce-mbsec/ib_read_bw.out"))
    assert r.status() == Status.PASS and r.verb == "read" and r.outstand_reads == 16 and r.max_inline_bytes is None
    assert r.bw_rows[0].bw_average_printed == 10401.68 and r.bw_rows[0].iterations == 1000


@pytest.mark.parametrize(
    ("rel", "values"),
    [
        # " 2       1000          2.64           5.50         2.69               2.69           0.02   2.75   5.50"
        ("cx5-100g-roce-mbsec/ib_read_lat.out", (2.64, 5.50, 2.69, 2.69, 0.02, 2.75, 5.50)),
        ("cx5-100g-roce-mbsec/ib_write_lat.out", (1.54, 2.13, 1.58, 1.58, 0.01, 1.65, 2.13)),
    ],
)
def test_latency_rows_with_warnings_inside_table(rel, values):
    r = read_perftest(text(rel))
    assert r.status() == Status.PASS, r.all_findings()
    assert r.kind == "lat" and not r.bw_rows and len(r.lat_rows) == 1
    lat = r.latency
    got = (lat.t_min_us, lat.t_max_us, lat.t_typical_us, lat.t_avg_us, lat.t_stdev_us, lat.p99_us, lat.p999_us)
    assert got == values and (lat.size_bytes, lat.iterations) == (2, 1000)
    assert sum(n.startswith("Conflicting CPU frequency") for n in r.notes) == 2


def test_gpudirect_duration_mode_gbits():
    r = read_perftest(text("a40-gpudirect-duration-gbits/ib_write_bw-client.out"))
    assert r.status() == Status.PASS, r.all_findings()
    assert r.duration_mode and r.gpudirect and r.gpu_name == "NVIDIA A40"
    assert (r.unit, r.num_qps, r.tos, r.data_exchange, r.device) == ("Gb/sec", 16, 41, "rdma_cm", "mlx5_1")
    row = r.bw_rows[0]  # " 65536      10384867         0.00               181.46 \t\t     0.346100"
    assert row.bw_peak_printed == 0.0 and row.bw_peak_gbits_per_s is None  # not measured, never 0
    assert row.bw_average_gbits_per_s == 181.46 and row.iterations == 10384867 and row.msg_rate_mpps == 0.3461
    assert any("active mtu" in n for n in r.notes)


def test_bidirectional_duration():
    r = read_perftest(text("cx5-100g-bidirectional-duration/ib_write_bw.out"))
    assert r.status() == Status.PASS, r.all_findings()
    assert r.bidirectional and r.duration_mode and r.test == "RDMA_Write Bidirectional BW Test"
    assert r.bw_average_gbits_per_s == 98.02 and r.bw_peak_gbits_per_s is None
    assert r.banner["CQE Poll Batch"] == "Dynamic" and r.banner["Lock-free"] == "OFF" and r.mtu_bytes == 4096


def test_peak_zero_without_duration_warning_is_not_measured():
    raw = text("cx5-100g-bidirectional-duration/ib_write_bw.out").replace(
        "WARNING: BW peak won't be measured in this run.\n", ""
    )
    r = read_perftest(raw)
    assert not r.duration_mode and r.bw_peak_gbits_per_s is None and r.bw_average_gbits_per_s == 98.02


def test_mib_per_sec_header_of_newer_releases():
    # Newer perftest prints "BW peak[MiB/sec]" for the same 2^20-byte unit (edit of the MB/sec fixture).
    raw = text("cx5-100g-roce-mbsec/ib_write_bw.out").replace("MB/sec", "MiB/sec")
    r = read_perftest(raw)
    assert r.unit == "MiB/sec" and r.bw_average_gbits_per_s == pytest.approx(11024.71 * MIB)
    assert GBITS_PER_UNIT["Gb/sec"] == 1.0


def test_connect_failure_is_unknown_with_evidence():
    r = read_perftest(text("connect-failure/ib_write_bw.out"))
    assert r.status() == Status.UNKNOWN and codes(r) == ["PERFTEST_CONNECT_FAILED"]
    f = r.findings[0]
    assert "Couldn't connect to 192.0.2.211:18515" in f.evidence and "Unable to init the socket" in f.evidence
    assert f.action == Action.RETEST
    assert read_perftest(text("connect-failure/ib_write_bw.out"), exit_code=1).status() != Status.PASS


def test_port_down_fails():
    # perftest's lines for a port that is Down, quoted inline (where from: tests/fixtures/health/perftest/README.md).
    raw = " Port number 1 state is Down\n Couldn't set the link layer\n Couldn't get context for the device\n"
    r = read_perftest(raw)
    assert r.status() == Status.FAIL and "PERFTEST_LINK_DOWN" in codes(r)
    assert next(f for f in r.findings if f.code == "PERFTEST_LINK_DOWN").action == Action.CHECK_LINK


def test_completion_error_after_table_header_fails():
    # perftest_parameters.h NOTIFY_COMP_ERROR_SEND prints " Completion with error at client" and
    # " Failed status %d: wr_id %d syndrom 0x%x" (edit: the recorded run cut after the table header).
    raw = text("cx5-100g-roce-mbsec/ib_write_bw.out").split(" 65536")[0]
    raw += " Completion with error at client\n Failed status 12: wr_id 0 syndrom 0x81\n"
    r = read_perftest(raw)
    assert r.status() == Status.FAIL and codes(r) == ["PERFTEST_COMPLETION_ERROR"]
    assert "Failed status 12" in r.findings[0].evidence


def test_exit_code_only_makes_worse():
    raw = text("cx5-100g-roce-mbsec/ib_write_bw.out")
    assert read_perftest(raw, exit_code=0).status() == Status.PASS
    r = read_perftest(raw, exit_code=1)
    assert r.status() == Status.FAIL and codes(r) == ["PERFTEST_EXIT_NONZERO"]


def test_table_cut_short_is_unknown():
    raw = text("cx5-100g-roce-mbsec/ib_write_bw.out").rstrip().rsplit("\n", 1)[0]  # closing dashes removed
    r = read_perftest(raw)
    assert r.bw_rows and r.status() == Status.UNKNOWN


def test_two_runs_are_unknown():
    raw = text("cx5-100g-roce-mbsec/ib_write_bw.out") + text("cx5-100g-roce-mbsec/ib_read_bw.out")
    assert read_perftest(raw).status() == Status.UNKNOWN


@pytest.mark.parametrize("raw", ["", " \n", "garbage \x00", "#bytes #iterations\n1 2 3", "-" * 87])
def test_empty_and_garbage_are_unknown(raw):
    r = read_perftest(raw)
    assert r.status() == Status.UNKNOWN and r.unknown


@pytest.mark.parametrize("path", OTHER_TOOLS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_tools_output_is_never_pass(path):
    assert read_perftest(path.read_text()).status() >= Status.UNKNOWN


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.parametrize("fraction", [0.25, 0.5, 0.9])
def test_truncated_output_is_never_pass(path, fraction):
    lines = path.read_text().splitlines(keepends=True)
    cut = "".join(lines[: int(len(lines) * fraction)])
    assert read_perftest(cut).status() != Status.PASS


def test_pair_decides_its_severity_from_this_nodes_port() -> None:
    """A slow pair on a port that is up and clean is the peer's suspect (UNKNOWN, retest) at once, never a FAIL
    turned UNKNOWN later; on a port that is not clean the same code is this node's FAIL."""
    from hwaac.health.checks_rdma import check_pair_perftest
    from hwaac.health.profile import MinThreshold, TestMethod

    gate = MinThreshold(min=10_000, method=TestMethod(tool="ib_write_bw", gpudirect=True), source="test: unreachable")
    r = read_perftest(text("a40-gpudirect-duration-gbits/ib_write_bw-client.out"))
    peer = check_pair_perftest(r, gate, subject="mlx5_0 port 1", port_clean=True)
    own = check_pair_perftest(r, gate, subject="mlx5_0 port 1", port_clean=False)
    assert [(f.code, f.status, f.action, f.subject) for f in peer] == [
        ("NIC_WRITE_BW_LOW", Status.UNKNOWN, Action.RETEST, "mlx5_0 port 1")
    ]
    assert "peer's side is suspect" in peer[0].message
    assert [(f.code, f.status, f.action) for f in own] == [("NIC_WRITE_BW_LOW", Status.FAIL, Action.CHECK_LINK)]
