"""nvidia-smi -q text reader on recorded reports (tests/fixtures/health/nvidia-smi/*/README.md name the sources)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest

from hwaac.health import checks
from hwaac.health.gpu_grading import grade_query
from hwaac.health.parsers.nvidia_smi_text import parse_query_text
from hwaac.health.parsers.nvidia_smi_xml import parse_query_xml
from hwaac.health.profile import load_profile
from hwaac.health.result import DESTRUCTIVE_ACTIONS, Action, Status

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "health" / "nvidia-smi"
H200 = FIX / "h200-580.159.04"  # -q and -q -x of the same GPU, recorded one after the other
ELIDED = FIX / "a100-510.73.08-q-elided" / "q.txt"
PROFILE = load_profile("hgx-h200-8x400g")
ONE_GPU = PROFILE.model_copy(update={"gpu": PROFILE.gpu.model_copy(update={"count": 1})})


def test_text_and_xml_of_the_same_gpu_give_the_same_facts() -> None:
    text = parse_query_text((H200 / "q.txt").read_text())
    xml = parse_query_xml((H200 / "q-x.xml").read_text())
    assert text.unknown == xml.unknown == []
    assert (text.driver_version, text.cuda_version, text.attached_gpus) == (
        xml.driver_version,
        xml.cuda_version,
        xml.attached_gpus,
    )
    assert [asdict(g) for g in text.gpus] == [asdict(g) for g in xml.gpus]
    assert text.gpus[0].remap_histogram_banks["max"] == 3072 and text.gpus[0].clock_reasons["gpu_idle"] is True
    assert checks.check_gpus(text, ONE_GPU) == checks.check_gpus(xml, ONE_GPU) == []
    assert text.status() == Status.PASS and text.tool == "nvidia-smi -q"


def test_elided_paste_reads_the_pending_remap_but_only_retests() -> None:
    q = parse_query_text(ELIDED.read_text())
    (gpu,) = q.gpus
    assert (gpu.pci_bus_id, gpu.product_name, q.driver_version) == (
        "00000000:10:1C.0",
        "NVIDIA A100-SXM4-80GB",
        "510.73.08",
    )
    assert (gpu.remap_pending, gpu.remapped_rows_correctable, gpu.ecc_volatile.dram_correctable) == (True, 1, 177)
    assert gpu.remap_histogram_banks == {"max": 639, "high": 1, "partial": 0, "low": 0, "none": 0}
    assert any("[...]" in u for u in q.unknown) and any("Attached GPUs is 8" in u for u in q.unknown)
    assert "GPU_ROW_REMAP_PENDING" in {f.code for f in grade_query(q).findings}
    found = checks.check_gpus(q, PROFILE)
    pending = next(f for f in found if f.code == "GPU_ROW_REMAP_PENDING")
    assert (pending.status, pending.action) == (Status.UNKNOWN, Action.RETEST)
    assert not any(f.action in DESTRUCTIVE_ACTIONS for f in found)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "Failed to initialize NVML: Driver/library version mismatch\n",
        (H200 / "q.txt").read_text()[:1500],  # cut inside the first GPU block
    ],
)
def test_unreadable_or_cut_reports_are_unknown(raw: str) -> None:
    assert grade_query(parse_query_text(raw)).status() == Status.UNKNOWN
