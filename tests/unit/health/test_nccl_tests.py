"""nccl-tests parser on recorded outputs (tests/fixtures/health/nccl-tests, sources in each folder's README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hwaac.health.parsers.nccl_tests import parse_nccl_tests
from hwaac.health.parsers.nccl_tests_json import parse_nccl_tests_json
from hwaac.health.result import Action, Status

FIX = Path(__file__).parents[2] / "fixtures" / "health" / "nccl-tests"
TEXT_FIXTURES = sorted(FIX.glob("*/*.out"))
JSON_FIXTURES = sorted(FIX.glob("*/*.json"))
OTHER_TOOLS = sorted((FIX.parent / "perftest").glob("*/*.out")) + sorted((FIX.parent / "nvidia-smi").glob("*/*.txt"))


def text(rel: str) -> str:
    return (FIX / rel).read_text()


def codes(result) -> list[str]:
    return [f.code for f in result.findings]


# --- recorded healthy runs ------------------------------------------------------------------------------------


def test_single_node_h100_new_layout():
    r = parse_nccl_tests(text("h100-8gpu-single-node/all_reduce_perf.out"))
    assert r.status() == Status.PASS, r.all_findings()
    assert (r.n_threads, r.n_gpus, r.min_bytes, r.max_bytes, r.step_factor) == (1, 8, 134217728, 4294967296, 2)
    assert (r.warmup_iters, r.iters, r.agg_iters, r.validation, r.graph) == (5, 2, 1, 1, 0)
    assert len(r.ranks) == 8 and r.hosts == ["node01"]
    assert r.ranks[7].gpu_name == "NVIDIA H100 80GB HBM3" and r.ranks[7].bus_id == "0xc1" and r.ranks[7].group == 0
    assert r.layout == "wrong" and "root" in r.columns
    assert len(r.rows) == 6
    last = r.rows[-1]  # "4294967296 1073741824 float sum -1 15870 270.63 473.60 0 15773 272.30 476.53 0"
    assert (last.size_bytes, last.count, last.dtype, last.redop, last.root) == (
        4294967296,
        1073741824,
        "float",
        "sum",
        -1,
    )
    assert last.out_of_place.time_us == 15870 and last.out_of_place.algbw_gbytes_per_s == 270.63
    assert last.out_of_place.busbw_gbytes_per_s == 473.60 and last.out_of_place.wrong == 0
    assert last.in_place.busbw_gbytes_per_s == 476.53
    assert r.busbw_at(4294967296) == 476.53  # the better of both runs
    assert r.busbw_at(4294967296, "out_of_place") == 473.60
    assert r.busbw_at_largest_gbytes_per_s == 476.53 and r.peak_busbw_gbytes_per_s == 476.53
    assert r.busbw_at(8) is None  # size not run
    assert r.avg_busbw_gbytes_per_s == 439.369 and r.avg_busbw_verdict is None
    assert r.out_of_bounds == 0 and r.out_of_bounds_ok is True
    assert r.wrong_total == 0 and r.collective is None  # releases before 2.17 do not name the collective


def test_two_node_h100_mpirun_with_open_mpi_noise():
    r = parse_nccl_tests(text("h100-2node-mpirun/all_reduce_perf_mpi.out"))
    assert r.status() == Status.PASS, r.all_findings()
    assert r.nccl_version == "2.26.2+cuda12.8"
    assert len(r.ranks) == 16 and r.hosts == ["node01", "node02"]  # the "[node01:29250] 15 more..." lines ignored
    assert len(r.rows) == 32 and r.largest_size_bytes == 17179869184
    assert r.busbw_at_largest_gbytes_per_s == 469.21  # 16 GiB row: out-of-place 469.21, in-place 469.10
    assert r.avg_busbw_gbytes_per_s == 139.56


def test_mpirun_tag_output_prefixes_are_stripped_and_ranks_kept():
    r = parse_nccl_tests(text("rtx5090-mpirun-tag-output/all_reduce_perf_mpi.out"))
    assert r.status() == Status.PASS, r.all_findings()
    assert (r.nccl_tests_version, r.nccl_headers, r.nccl_library) == ("2.18.0", 22907, 22907)
    assert r.version == "2.18.0" and r.collective == "all_reduce_perf_mpi"
    assert r.printing_ranks == [0, 1]  # [1,0]<stdout>, [1,1]<stderr>
    assert len(r.rows) == 8 and all(row.printed_by == 0 for row in r.rows)
    assert r.rows[-1].in_place.busbw_gbytes_per_s == 2.31 and r.avg_busbw_gbytes_per_s == 1.57614


def test_skypilot_and_mpirun_prefix_h200_all_gather():
    r = parse_nccl_tests(text("h200-2node-mpirun-tag-output/all_gather_perf.out"))
    assert r.status() == Status.PASS, r.all_findings()
    assert r.printing_ranks == [0] and len(r.ranks) == 16 and r.ranks[15].gpu_name == "NVIDIA H200"
    assert len(r.rows) == 24 and r.rows[0].redop == "none"
    assert r.busbw_at(8589934592) == 332.58 and r.avg_busbw_gbytes_per_s == 122.073


def test_srun_label_and_wrong_na_with_validation_off():
    r = parse_nccl_tests(text("h100-2node-srun-label-check0/all_reduce_perf.out"))
    assert r.validation == 0 and r.iters == 200 and r.printing_ranks == [0]
    assert len(r.rows) == 11 and all(run.wrong is None for row in r.rows for run in row.runs())
    assert r.wrong_total is None
    assert r.busbw_at(8589934592) == 155.57
    # -c 0: bandwidth is readable, correctness is not attested -> WARN, never PASS.
    assert r.status() == Status.WARN and codes(r) == ["NCCL_VALIDATION_DISABLED"]


def test_old_error_column_layout_healthy():
    r = parse_nccl_tests(text("v100-old-error-column/all_reduce_perf.out"))
    assert r.status() == Status.PASS, r.all_findings()
    assert r.layout == "error" and "root" not in r.columns and "redop" in r.columns
    assert r.agg_iters is None and r.graph is None and r.validation == 1  # older header
    assert r.ranks[0].group is None and len(r.ranks) == 12
    first = r.rows[0]  # "8 2 float sum 61.03 0.00 0.00 2e-07 61.04 0.00 0.00 1e-07"
    assert first.root is None and first.redop == "sum"
    assert first.out_of_place.error == 2e-07 and first.in_place.error == 1e-07 and first.out_of_place.wrong is None
    assert r.busbw_at(8589934592) == 123.57 and r.avg_busbw_gbytes_per_s == 42.5578


# --- recorded failures ----------------------------------------------------------------------------------------


def test_old_layout_out_of_bounds_fails():
    r = parse_nccl_tests(text("v100-old-error-column/all_gather_perf-out-of-bounds.out"))
    assert r.status() == Status.FAIL
    assert codes(r) == ["NCCL_OUT_OF_BOUNDS"]
    assert r.out_of_bounds == 4 and r.out_of_bounds_ok is False
    assert r.rows[-1].redop is None and r.rows[-1].out_of_place.error == 1.0  # "1e+00" at 8589934560 bytes
    assert r.findings[0].action == Action.REBOOT


def test_wrong_elements_fail_with_the_row_as_evidence():
    r = parse_nccl_tests(text("gh200-2.17.8/all_reduce_perf-wrong.out"))
    assert r.status() == Status.FAIL
    wrong = next(f for f in r.findings if f.code == "NCCL_WRONG_RESULTS")
    assert "1048576        262144" in wrong.evidence and "96" in wrong.evidence
    assert r.wrong_total == 128  # 96 out-of-place + 32 in-place
    assert r.out_of_bounds == 4 and r.nccl_tests_version == "2.17.8" and r.collective == "all_reduce_perf"


def test_cuda_failure_without_table_fails():
    r = parse_nccl_tests(text("gh200-2.17.8/all_reduce_perf-cuda-failure.out"))
    assert r.status() == Status.FAIL and not r.rows and len(r.ranks) == 8
    f = r.findings[0]
    assert f.code == "NCCL_TEST_CUDA_FAILURE" and "busy or unavailable" in f.message
    assert "Test failure common.cu:1189" in f.evidence


def test_nccl_failure_after_header():
    r = parse_nccl_tests(text("rtx5090-nccl-failure/all_reduce_perf.out"))
    assert r.status() == Status.FAIL and codes(r) == ["NCCL_TEST_NCCL_FAILURE"]
    assert "unhandled cuda error" in r.findings[0].message


def test_nccl_warn_lines_are_evidence_of_the_failure():
    r = parse_nccl_tests(text("rtx5090-nccl-failure/all_reduce_perf-nccl-debug-info.out"))
    assert r.status() == Status.FAIL and r.nccl_version == "2.25.1+cuda12.8"
    warn = next(f for f in r.findings if f.code == "NCCL_WARN")
    assert warn.status == Status.FAIL and "Cuda failure 1 'invalid argument'" in warn.message
    assert warn.evidence.count("NCCL WARN") == 5


# --- edits of recorded outputs modelling cases no recorded output showed -----------------------------------


def test_min_bw_failed_verdict_fails():
    # NCCL_TESTS_MIN_BW set: util.cu prints "FAILED" after the average (edit of the single-node fixture).
    raw = text("h100-8gpu-single-node/all_reduce_perf.out").replace(": 439.369", ": 439.369 FAILED")
    r = parse_nccl_tests(raw)
    assert r.avg_busbw_verdict == "FAILED" and codes(r) == ["NCCL_AVG_BUSBW_BELOW_MIN"] and r.status() == Status.FAIL


def test_killed_rank_fails():
    raw = text("h100-8gpu-single-node/all_reduce_perf.out").split("# Out of bounds")[0]
    raw += "mpirun noticed that process rank 3 with PID 0 on node node01 exited on signal 9 (Killed).\n"
    r = parse_nccl_tests(raw)
    assert r.status() == Status.FAIL and "NCCL_LAUNCHER_FAILURE" in codes(r)


def test_exit_code_only_makes_worse():
    raw = text("h100-8gpu-single-node/all_reduce_perf.out")
    assert parse_nccl_tests(raw, exit_code=0).status() == Status.PASS
    r = parse_nccl_tests(raw, exit_code=1)
    assert r.status() == Status.FAIL and codes(r) == ["NCCL_EXIT_NONZERO"]
    failing = parse_nccl_tests(text("gh200-2.17.8/all_reduce_perf-wrong.out"), exit_code=0)
    assert failing.status() == Status.FAIL  # exit 0 does not rescue #wrong


def test_timestamp_column_and_e_notation():
    # -S 1 (util.cu writeTimestamp "%21s" after the in-place block) and a time printed in e notation.
    lines = text("h100-8gpu-single-node/all_reduce_perf.out").splitlines()
    out = []
    for ln in lines:
        if ln.startswith("#       size"):
            ln += " timestamp"
        elif ln.startswith("   134217728"):
            ln = ln.replace("613.3", "6.1e+02") + "  2026-01-05 10:00:00"
        elif ln[:1] == " " and ln.split()[0].isdigit():
            ln += "  2026-01-05 10:00:01"
        out.append(ln)
    r = parse_nccl_tests("\n".join(out))
    assert r.status() == Status.PASS, r.all_findings()
    assert r.rows[0].timestamp == "2026-01-05 10:00:00" and r.rows[0].out_of_place.time_us == 610.0


def test_per_iteration_columns():
    # -I 1 adds i_min i_max i_p99 i_cv% to each block (util.cu writeResultHeader with per_iter_timing).
    lines = text("h100-8gpu-single-node/all_reduce_perf.out").splitlines()
    out = []
    for ln in lines:
        if ln.startswith("#       size"):
            t = ln.split()
            ln = "# " + " ".join(
                [*t[1:10], "i_min", "i_max", "i_p99", "i_cv%", *t[10:], "i_min", "i_max", "i_p99", "i_cv%"]
            )
        elif ln[:1] == " " and ln.split()[0].isdigit():
            t = ln.split()
            ln = " ".join([*t[:9], "600.1", "630.2", "629.9", "1.20", *t[9:], "601.0", "640.0", "639.0", "1.5"])
        out.append(ln)
    r = parse_nccl_tests("\n".join(out))
    assert r.status() == Status.PASS, r.all_findings()
    assert r.rows[0].out_of_place.per_iter_us == {"i_min": 600.1, "i_max": 630.2, "i_p99": 629.9, "i_cv%": 1.2}
    assert r.busbw_at(4294967296) == 476.53


def test_nccl_algo_from_debug_info():
    raw = text("h100-8gpu-single-node/all_reduce_perf.out")
    raw = "node01:1234:1234 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n" + raw
    assert parse_nccl_tests(raw).algorithms == ["Ring"]


def test_two_runs_in_one_output_are_unknown():
    raw = text("v100-old-error-column/all_reduce_perf.out") + text("v100-old-error-column/all_reduce_perf.out")
    r = parse_nccl_tests(raw)
    assert r.status() == Status.UNKNOWN and any("runs" in u for u in r.unknown)


# --- JSON (-J) --------------------------------------------------------------------------------------------------


def test_json_healthy():
    r = parse_nccl_tests_json((FIX / "json-derived/h100-2node-all_reduce_perf_mpi.json").read_text())
    assert r.status() == Status.PASS, r.all_findings()
    assert r.collective == "all_reduce_perf_mpi" and r.nccl_library == 22602
    assert len(r.ranks) == 16 and r.hosts == ["node01", "node02"] and len(r.rows) == 32
    assert r.rows[-1].root == -1 and r.busbw_at(17179869184) == 469.21
    assert r.out_of_bounds_ok is True and r.avg_busbw_verdict is None and r.avg_busbw_gbytes_per_s == 139.56
    # the same numbers as the stdout it was derived from
    text_result = parse_nccl_tests(text("h100-2node-mpirun/all_reduce_perf_mpi.out"))
    assert [row.in_place.busbw_gbytes_per_s for row in r.rows] == [
        row.in_place.busbw_gbytes_per_s for row in text_result.rows
    ]


def test_json_wrong_results_fail():
    r = parse_nccl_tests_json((FIX / "json-derived/gh200-wrong-all_reduce_perf.json").read_text())
    assert r.status() == Status.FAIL and "NCCL_WRONG_RESULTS" in codes(r)
    assert r.out_of_bounds == 4 and r.out_of_bounds_ok is False and r.wrong_total == 128


def test_json_value_forms():
    doc = json.loads((FIX / "json-derived/h100-2node-all_reduce_perf_mpi.json").read_text())
    doc["average_bus_bandwidth"]["okay"] = False  # a real boolean, NCCL_TESTS_MIN_BW missed
    r = parse_nccl_tests_json(json.dumps(doc))
    assert "NCCL_AVG_BUSBW_BELOW_MIN" in codes(r) and r.status() == Status.FAIL
    doc = json.loads((FIX / "json-derived/h100-2node-all_reduce_perf_mpi.json").read_text())
    doc["results"][-1]["in_place"]["bus_bw"] = "nan"  # jsonDouble writes NaN as the string "nan"
    r = parse_nccl_tests_json(json.dumps(doc))
    assert r.status() == Status.UNKNOWN and r.rows[-1].in_place.busbw_gbytes_per_s is None
    for run in ("out_of_place", "in_place"):  # -c 0: nwrong is null
        for item in doc["results"]:
            item[run]["nwrong"] = None
    doc["results"][-1]["in_place"]["bus_bw"] = 469.1
    assert codes(parse_nccl_tests_json(json.dumps(doc))) == ["NCCL_VALIDATION_DISABLED"]


@pytest.mark.parametrize("raw", ["", "   ", "{not json", "[]", '{"results": []}', "null"])
def test_json_bad_input_is_unknown(raw):
    assert parse_nccl_tests_json(raw).status() == Status.UNKNOWN


@pytest.mark.parametrize("path", TEXT_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_text_fed_to_json_parser_is_unknown(path):
    assert parse_nccl_tests_json(path.read_text()).status() == Status.UNKNOWN


# --- never PASS on bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["", "\n\n", "garbage\x00\x01 line", "# nThread", "#       size  count  type\n1 2 3"])
def test_empty_and_garbage_are_unknown(raw):
    r = parse_nccl_tests(raw)
    assert r.status() == Status.UNKNOWN and r.unknown


@pytest.mark.parametrize("path", OTHER_TOOLS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_tools_output_is_never_pass(path):
    assert parse_nccl_tests(path.read_text()).status() >= Status.UNKNOWN


@pytest.mark.parametrize("path", TEXT_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.parametrize("fraction", [0.25, 0.5, 0.9])
def test_truncated_output_is_never_pass(path, fraction):
    lines = path.read_text().splitlines(keepends=True)
    cut = "".join(lines[: int(len(lines) * fraction)])
    assert parse_nccl_tests(cut).status() != Status.PASS


@pytest.mark.parametrize("path", JSON_FIXTURES, ids=lambda p: p.name)
def test_truncated_json_is_unknown(path):
    raw = path.read_text()
    assert parse_nccl_tests_json(raw[: len(raw) // 2]).status() == Status.UNKNOWN


@pytest.mark.parametrize("name, slots", [("nccl-tests-21-openmpi.out", 16), ("dstack-2451-openmpi.out", None)])
def test_openmpi_not_enough_slots_is_named_a_launch_problem(name: str, slots: int | None) -> None:
    res = parse_nccl_tests((FIX / "openmpi-not-enough-slots" / name).read_text(), exit_code=1)
    assert (res.launch_refused, res.slots_requested) == ("not enough slots", slots)
    assert [(f.code, f.status, f.action) for f in res.all_findings()] == [
        ("MPI_NOT_ENOUGH_SLOTS", Status.UNKNOWN, Action.RETEST)
    ]
    assert "not a hardware verdict" in res.findings[0].message
