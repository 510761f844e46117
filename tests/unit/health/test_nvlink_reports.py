"""``nvidia-smi nvlink -s`` and ``-e`` on recorded outputs (fixtures/health/nvidia-smi, sources in each folder's
README): the readers return the links' facts only; hwaac.health.checks.check_nvlink judges them."""

from __future__ import annotations

from pathlib import Path

from hwaac.health.parsers.nvidia_smi import parse_nvlink_errors, parse_nvlink_status
from hwaac.health.result import Status

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "health" / "nvidia-smi"


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_nvlink_status_8_gpus_healthy():
    result = parse_nvlink_status(read(FIX / "h100-550.90.07-8gpu" / "nvlink-s.txt"))
    assert not result.incomplete and result.findings == []  # facts only: check_nvlink judges them
    assert result.status() is Status.UNKNOWN  # never PASS before the check
    assert [g.index for g in result.gpus] == list(range(8))
    assert all(g.links == dict.fromkeys(range(18), 26.562) for g in result.gpus)
    assert result.gpus[7].name == "NVIDIA H100 80GB HBM3"
    assert result.gpus[7].uuid == "GPU-00000000-0000-0000-0000-000000000007"


def test_nvlink_status_inactive_links_are_facts():
    derived = parse_nvlink_status(read(FIX / "h100-550.90.07-8gpu-derived" / "nvlink-s-inactive.txt"))
    assert not derived.incomplete and derived.findings == []
    assert {g.subject: [k for k, v in g.links.items() if v is None] for g in derived.gpus}["gpu3"] == [7]
    bridge = parse_nvlink_status(read(FIX / "h100-pcie-nvlink-bridge" / "nvlink-s.txt"))
    assert [link for link, rate in bridge.gpus[0].links.items() if rate is None] == [4, 9, 10, 15, 16]
    inactive = parse_nvlink_status(read(FIX / "geforce-issue-threads" / "ogkm-1150-all-links-inactive.txt"))
    assert inactive.gpus[0].all_inactive and not inactive.incomplete and inactive.findings == []


def test_nvlink_errors():
    clean = parse_nvlink_errors(read(FIX / "h100-550.90.07-8gpu-derived" / "nvlink-e.txt"))
    assert not clean.incomplete and clean.findings == [] and len(clean.gpus) == 8
    assert clean.gpus[0].counters[17] == {"replay_errors": 0, "recovery_errors": 0, "crc_errors": 0}
    crc = parse_nvlink_errors(read(FIX / "h100-550.90.07-8gpu-derived" / "nvlink-e-crc.txt"))
    assert crc.findings == []
    assert {(g.subject, link, n, v) for g in crc.gpus for link, c in g.counters.items() for n, v in c.items() if v} == {
        ("gpu2", 5, "recovery_errors", 1),
        ("gpu2", 5, "crc_errors", 12),
    }  # the README's edit
    elided = parse_nvlink_errors(read(FIX / "h100-nvlink-e-elided" / "nvlink-e.txt"))
    assert elided.status() is Status.UNKNOWN and "[...]" in elided.unknown[0]
