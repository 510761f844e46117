"""nvbandwidth parser on recorded outputs (tests/fixtures/health/nvbandwidth, see its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.health.nvbandwidth_grading import read_nvbandwidth
from hwaac.health.result import Status

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "health"
NVBW = FIX / "nvbandwidth"


def read(path: Path) -> str:
    return path.read_text()


def test_v06_complete_run_passes_with_matrices_and_sums():
    r = read_nvbandwidth(read(NVBW / "v0.6-superbench" / "nvbandwidth_results.log"))
    assert r.status() == Status.PASS
    assert (r.version, r.git_version, r.driver_version) == ("v0.6", "v0.6", "550.54.15")
    assert (r.cuda_runtime_version, r.cuda_driver_version) == (12040, 12040)
    assert r.devices == {0: "NVIDIA GH200 480GB (00000009:01:00)"}
    assert r.finished
    assert len(r.tests) == 15
    h2d = r.test("host_to_device_memcpy_ce")
    assert h2d is not None
    assert h2d.description == "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)"
    assert h2d.unit == "GB/s" and h2d.columns == [0, 1, 2]
    assert h2d.rows == {0: [369.36, 269.33, 412.11], 1: [323.36, 299.33, 312.11]}
    assert h2d.sum == 1985.60  # "SUM host_to_device_memcpy_ce 1985.60"
    assert sum(h2d.values()) == pytest.approx(h2d.sum, abs=0.05)
    assert h2d.minimum() == 269.33
    latency = r.test("host_device_latency_sm")
    assert latency is not None and latency.unit == "ns" and latency.rows == {0: [772.58]}
    assert r.waived == [""] * 17  # anonymous "Waived:" lines (v0.6 prints the status without the test name)


def test_v08_na_diagonal_is_not_measured():
    r = read_nvbandwidth(read(NVBW / "v0.8-issue50-a6000" / "nvbandwidth.out"))
    test = r.test("device_to_device_memcpy_read_ce")  # named by its SUM line: the paste elided "Running ..."
    assert test is not None
    assert test.columns == list(range(6)) and len(test.rows) == 6
    assert all(test.rows[i][i] is None for i in range(6))  # N/A on the diagonal
    assert test.rows[0][1] == 26.34 and test.rows[5][0] == 21.86
    assert len(test.values()) == 30
    assert sum(test.values()) == pytest.approx(715.53, abs=0.1)  # values are rounded to 2 decimals
    assert test.minimum() == 21.8
    assert any("'...'" in n for n in r.notes)
    # the paste ends at the SUM, without the closing NOTE nvbandwidth prints last since v0.6: not shown complete
    assert r.status() == Status.UNKNOWN
    assert any("closing 'NOTE" in u for u in r.unknown)


def test_v08_with_closing_note_passes():
    text = read(NVBW / "v0.8-issue50-a6000" / "nvbandwidth.out") + (
        "\nNOTE: The reported results may not reflect the full capabilities of the platform.\n"
        "Performance can vary with software drivers, hardware clocks, and system topology.\n"
    )
    assert read_nvbandwidth(text).status() == Status.PASS


def test_old_zero_diagonal_is_not_a_measurement():
    text = (
        "nvbandwidth Version: v0.2\n\nRunning device_to_device_memcpy_write_ce.\n"
        "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)\n          0         1\n"
        "0      0.00    276.07\n1    276.19      0.00\n\nSUM device_to_device_memcpy_write_ce 552.26\n"
    )  # the shape of the README's example output (diagonal 0.00 before v0.8)
    test = read_nvbandwidth(text).tests[0]
    assert test.rows == {0: [None, 276.07], 1: [276.19, None]}


def test_v07_verification_failure_fails():
    r = read_nvbandwidth(read(NVBW / "v0.7-issue34-assert" / "nvbandwidth.out"))
    assert r.status() == Status.FAIL
    finding = next(f for f in r.findings if f.code == "NVBW_VERIFICATION_FAILED")
    assert "Invalid value when checking the pattern at 0x70a640000000" in finding.evidence
    assert "ASSERT in expression h_errorFlag == 0" in finding.evidence
    assert len(r.devices) == 8 and r.devices[4] == "NVIDIA A100-SXM4-80GB (00000000:9b:00)"


def test_v02_truncated_is_unknown_but_keeps_complete_tests():
    r = read_nvbandwidth(read(NVBW / "v0.2-issue15-truncated" / "nvbandwidth.out"))
    assert r.status() == Status.UNKNOWN
    h2d = r.test("host_to_device_memcpy_ce")
    assert h2d is not None and h2d.sum == 205.04 and h2d.rows[0][0] == 25.5
    d2h = r.test("device_to_host_memcpy_ce")
    assert d2h is not None and d2h.sum == 214.28 and d2h.rows[0][7] == 26.83
    assert any("has 3 values for 8 columns" in u for u in r.unknown)
    assert any("host_to_device_bidirectional_memcpy_ce has no SUM" in u for u in r.unknown)
    assert r.devices[7] == "NVIDIA GeForce RTX 4090"


def test_v02_everything_waived_is_unknown():
    r = read_nvbandwidth(read(NVBW / "v0.2-issue13-waived" / "nvbandwidth.out"))
    assert r.status() == Status.UNKNOWN
    assert r.waived == ["device_to_device_memcpy_write_ce"]
    assert r.tests[0].waived


def test_statistic_lines_are_kept():
    # v0.9+ adds a coefficient of variation; the line format here is an assumption (no recorded v0.9+ output found).
    text = read(NVBW / "v0.6-superbench" / "nvbandwidth_results.log").replace(
        "SUM host_to_device_memcpy_ce 1985.60\n",
        "SUM host_to_device_memcpy_ce 1985.60\nCOEFFICIENT_OF_VARIATION host_to_device_memcpy_ce 0.31\n",
    )
    r = read_nvbandwidth(text)
    assert r.status() == Status.PASS
    assert r.test("host_to_device_memcpy_ce").stats == {"COEFFICIENT_OF_VARIATION": 0.31}


def test_error_status_line_is_unknown():
    text = read(NVBW / "v0.6-superbench" / "nvbandwidth_results.log").replace(
        "Running host_to_device_memcpy_sm.\n", "Running host_to_device_memcpy_sm.\nERROR: cuMemAlloc failed\n"
    )
    r = read_nvbandwidth(text)
    assert r.status() == Status.UNKNOWN
    assert any(f.code == "NVBW_TEST_ERROR" for f in r.findings)


BAD_INPUTS = {
    "empty": "",
    "garbage": "\x00\x01 something\n12 34\n",
    "version only": "nvbandwidth Version: v0.8\nBuilt from Git version: v0.8\n",
    "no head": read(NVBW / "v0.6-superbench" / "nvbandwidth_results.log").split("\n", 9)[9],
    "dcgmi": read(FIX / "dcgmi" / "4.2.3-gb10" / "diag-r1-pass.json"),
    "gpu-burn": read(FIX / "gpu-burn" / "superbench-a100" / "gpu_burn.log"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_is_never_pass(name):
    assert read_nvbandwidth(BAD_INPUTS[name]).status() == Status.UNKNOWN


@pytest.mark.parametrize("path", sorted(p for p in NVBW.rglob("*") if p.is_file() and p.suffix != ".md"), ids=str)
@pytest.mark.parametrize("cut", [0.2, 0.5, 0.8, 0.97])
def test_every_fixture_truncated_is_never_pass(path, cut):
    text = read(path)
    assert read_nvbandwidth(text[: int(len(text) * cut)]).status() != Status.PASS


def test_an_unforeseen_parser_error_is_unknown_not_raised(monkeypatch):
    import hwaac.health.parsers.nvbandwidth as nvbandwidth

    def boom(*_args):
        raise IndexError("surprise")

    monkeypatch.setattr(nvbandwidth, "_finish", boom)
    r = read_nvbandwidth(read(NVBW / "v0.6-superbench" / "nvbandwidth_results.log"))
    assert r.status() == Status.UNKNOWN and any("IndexError" in u for u in r.unknown)
