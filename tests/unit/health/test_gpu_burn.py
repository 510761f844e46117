"""gpu-burn parser on recorded outputs (tests/fixtures/health/gpu-burn, see its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.health.gpu_burn_grading import read_gpu_burn
from hwaac.health.result import Action, Status

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "health"
BURN = FIX / "gpu-burn"


def read(path: Path) -> str:
    return path.read_text()


def test_superbench_a100_healthy():
    r = read_gpu_burn(read(BURN / "superbench-a100" / "gpu_burn.log"), exit_code=0)
    assert r.status() == Status.PASS
    assert r.tested_gpus == 8  # "Tested 8 GPUs:"
    assert [g.summary for g in r.gpus] == ["OK"] * 8
    assert (r.precision, r.tensor_cores) == ("DOUBLES", True)  # "using DOUBLES, using Tensor Cores"
    assert len(r.progress) == 5  # the five records kept in the excerpt, all on one line
    gpu1 = r.gpus[1]
    assert gpu1.name == "NVIDIA A100-SXM4-80GB"
    assert gpu1.uuid == "GPU-00000000-0000-0000-0000-000000000001"
    # last record: "6783 (17093 Gflop/s)" for GPU 1; its highest temperature 59 C
    assert (gpu1.iterations, gpu1.gflops_last, gpu1.gflops_max, gpu1.max_temp_c) == (6783, 17093.0, 17177.0, 59)
    assert r.progress[0].percent == 50.0 and r.progress[-1].percent == 100.0
    assert r.progress[0].temps_c == [38, 36, 37, 38, 38, 37, 38, 39]


@pytest.mark.parametrize("exit_code", [0, None])
def test_faulty_gpus_with_exit_0_fail(exit_code):
    # Acceptance: wilicc/gpu-burn#12, every GPU FAULTY and `echo $?` printed 0.
    r = read_gpu_burn(read(BURN / "issue12-faulty-exit0" / "gpu_burn.out"), exit_code=exit_code)
    assert r.status() == Status.FAIL
    assert r.tested_gpus == 16
    faulty = [f for f in r.findings if f.code == "GPUBURN_FAULTY"]
    assert [f.subject for f in faulty] == [f"gpu{i}" for i in range(16)]
    assert all(f.status == Status.FAIL and f.action == Action.RMA for f in faulty)
    assert faulty[3].evidence == "GPU 3: FAULTY"
    # the errors counter overflowed: "-524288000  (WARNING!)" for GPU 1
    record = r.progress[-1]
    assert record.errors[1] == -524288000 and record.flags[1] == "WARNING!"
    assert record.errors[0] == 0 and record.flags[0] == ""
    assert r.gpus[1].error_records == 1 and r.gpus[0].error_records == 0


def test_errors_in_progress_without_summary_still_fail():
    text = read(BURN / "issue12-faulty-exit0" / "gpu_burn.out").split("\nKilling processes")[0]
    r = read_gpu_burn(text)
    assert r.status() == Status.FAIL  # the errors were seen, whatever else is missing
    assert r.tested_gpus is None and any("no 'Tested N GPUs:'" in u for u in r.unknown)
    assert {f.subject for f in r.findings if f.code == "GPUBURN_FAULTY"} == {f"gpu{i}" for i in (1, 2, 3, 4, 9, 11, 14)}


def test_ok_after_failed_init_is_not_pass():
    # wilicc/gpu-burn#123: "Couldn't init a GPU test", every GPU processed 0, summary OK (cut at GPU 4: fixture README).
    r = read_gpu_burn(read(BURN / "issue123-init-failure" / "gpu_burn.out"))
    assert r.status() == Status.UNKNOWN
    no_work = [f for f in r.findings if f.code == "GPUBURN_NO_WORK"]
    assert [f.subject for f in no_work] == ["gpu0", "gpu1", "gpu2", "gpu3"]
    assert "Couldn't init a GPU test: Error: CUDA_ERROR_UNKNOWN" in no_work[0].evidence
    assert any("names 4 of the 8 tested GPUs" in u for u in r.unknown)
    assert r.failure_lines == ["Couldn't init a GPU test: Error: CUDA_ERROR_UNKNOWN"]


def test_ok_without_any_progress_is_not_pass():
    # wilicc/gpu-burn#124: no progress record at all, "Tested 1 GPUs: GPU 0: OK".
    r = read_gpu_burn(read(BURN / "issue124-no-work" / "gpu_burn.out"), exit_code=0)
    assert r.status() == Status.UNKNOWN
    assert [f.code for f in r.findings] == ["GPUBURN_NO_WORK"]
    assert (r.run_seconds, r.precision, r.tested_gpus) == (10, "FLOATS", 1)


def test_every_worker_died():
    r = read_gpu_burn(read(BURN / "issue69-died" / "gpu_burn.out"), exit_code=123)
    assert r.status() == Status.FAIL
    assert r.aborted
    died = [f for f in r.findings if f.code == "GPUBURN_DIED"]
    assert len(died) == 8 and all(f.action == Action.RESET_GPU for f in died)
    # a dead worker's error count is garbage, not compare errors
    assert not any(f.code == "GPUBURN_FAULTY" for f in r.findings)
    assert r.gpus[7].iterations == -1 and r.gpus[7].died


def test_older_gpu_burn_without_summary_is_unknown():
    r = read_gpu_burn(read(BURN / "issue8-k80-no-summary" / "gpu_burn.out"))
    assert r.status() == Status.UNKNOWN
    assert r.run_seconds == 10  # "Burning for 10 secs"
    assert [p.iterations for p in r.progress] == [[636], [636], [1908]]
    assert r.gpus[0].gflops_max == 2273.0


@pytest.mark.parametrize(
    ("exit_code", "code"),
    [(137, "GPUBURN_KILLED"), (-9, "GPUBURN_KILLED"), (124, "GPUBURN_EXIT_NONZERO"), (1, "GPUBURN_EXIT_NONZERO")],
)
def test_nonzero_exit_makes_a_healthy_run_unknown(exit_code, code):
    r = read_gpu_burn(read(BURN / "superbench-a100" / "gpu_burn.log"), exit_code=exit_code)
    assert r.status() == Status.UNKNOWN
    assert [f.code for f in r.findings] == [code]


def test_exit_123_without_output_is_fail():
    r = read_gpu_burn("", exit_code=123)
    assert r.status() == Status.FAIL


BAD_INPUTS = {
    "empty": "",
    "garbage": "\x00 random text\nwith lines % proc'd",
    "nvidia-smi -L only": "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-0000-0000-0000-000000000000)\n",
    "truncated": read(BURN / "superbench-a100" / "gpu_burn.log")[:2000],
    "dcgmi": read(FIX / "dcgmi" / "4.2.3-gb10" / "diag-r1-pass.json"),
    "nvbandwidth": read(FIX / "nvbandwidth" / "v0.6-superbench" / "nvbandwidth_results.log"),
    "bad record": "50.0%  proc'd: x   errors: y   temps: z\n",
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_is_never_pass(name):
    assert read_gpu_burn(BAD_INPUTS[name]).status() == Status.UNKNOWN


@pytest.mark.parametrize("path", sorted(p for p in BURN.rglob("*") if p.is_file() and p.suffix != ".md"), ids=str)
@pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
def test_every_fixture_truncated_is_never_pass(path, cut):
    text = read(path)
    assert read_gpu_burn(text[: int(len(text) * cut)]).status() != Status.PASS


def test_an_unforeseen_parser_error_is_unknown_not_raised(monkeypatch):
    import hwaac.health.parsers.gpu_burn as gpu_burn

    def boom(*_args):
        raise ValueError("surprise")

    monkeypatch.setattr(gpu_burn, "_read_summary", boom)
    r = read_gpu_burn(read(BURN / "superbench-a100" / "gpu_burn.log"), exit_code=0)
    assert r.status() == Status.UNKNOWN and any("ValueError" in u for u in r.unknown)
