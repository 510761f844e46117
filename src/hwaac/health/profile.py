"""Per-SKU health profiles: the limits a node of one hardware SKU must meet, each with how it was measured.

The formats, sources and rules in full: ``docs/health-modules.md``, section "SKU profiles".
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hwaac.errors import IntentError, IntentIssue
from hwaac.health.parsers.nvidia_smi_model import ClockReason
from hwaac.model.shipped import load_yaml_model

# the active clock event reasons that fail, and those that warn, by default
_FAIL_REASONS: tuple[ClockReason, ...] = ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown")
_WARN_REASONS: tuple[ClockReason, ...] = ("sw_thermal_slowdown",)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TestMethod(_Strict):
    """How a threshold was measured; a measurement is compared only when its method matches."""

    tool: Literal["all_reduce_perf", "ib_write_bw", "ib_read_bw", "ib_send_bw", "nvbandwidth"]
    test: str | None = Field(None, description="nvbandwidth test name, e.g. host_to_device_memcpy_ce.")
    message_bytes: int | None = Field(None, gt=0, description="Message size the figure is read at, bytes.")
    nccl_algo: Literal["RING", "TREE", "NVLS", "NVLSTree", "CollnetDirect", "CollnetChain"] | None = Field(
        None, description="NCCL_ALGO forced for the run; null = NCCL's own choice."
    )
    nodes: int | None = Field(None, ge=1, description="Node count of the run (exact); null = any.")
    min_nodes: int | None = Field(None, ge=1, description="Least node count of the run; null = no minimum.")
    gpudirect: bool | None = Field(None, description="GPUDirect RDMA (perftest --use_cuda); null = not applicable.")
    bidirectional: bool = Field(False, description="perftest -b: both directions at once (doubles the figure).")
    args: str = Field("", description="The exact arguments hwaac runs the tool with for this threshold.")


class MinThreshold(_Strict):
    """A figure that must reach ``min`` (FAIL below) and should reach ``warn_below`` (WARN below, when set)."""

    min: float = Field(gt=0)
    warn_below: float | None = Field(None, gt=0)
    method: TestMethod
    source: str = Field(description="Where the number comes from (a published gate, a measurement, a doc).")

    @model_validator(mode="after")
    def _order(self) -> MinThreshold:
        if self.warn_below is not None and self.warn_below < self.min:
            raise ValueError(f"warn_below ({self.warn_below}) must be >= min ({self.min})")
        return self


class GpuLimits(_Strict):
    """GPU inventory and error limits (nvidia-smi, DCGM); sources per field."""

    count: int = Field(ge=1, description="GPUs per node.")
    product_name: str = Field(description="Substring of nvidia-smi's product name, e.g. 'H200'.")
    ecc_mode: Literal["Enabled"] = "Enabled"
    dram_uncorrectable_volatile_max: int = Field(0, ge=0, description="Volatile DRAM uncorrectable ECC (imbue: 0).")
    sram_uncorrectable_max: int = Field(0, ge=0, description="SRAM uncorrectable, aggregate (Azure check_gpu_ecc).")
    sram_correctable_max: int = Field(10_000, ge=0, description="SRAM correctable, aggregate (Azure: 10k).")
    dram_correctable_aggregate_max: int = Field(
        20_000_000, ge=0, description="DRAM correctable, aggregate (Azure check_gpu_ecc 20000000)."
    )
    remapped_rows_uncorrectable_max: int = Field(512, ge=0, description="Above it: RMA (OCI check_gpu_setup.py).")
    clock_reasons_fail: list[ClockReason] = Field(
        default_factory=lambda: list(_FAIL_REASONS),
        description="Active clock event reasons that fail the GPU (IBM autopilot fails on hw_slowdown).",
    )
    clock_reasons_warn: list[ClockReason] = Field(
        default_factory=lambda: list(_WARN_REASONS),
        description="Active reasons that warn; any other active reason is allowed (Azure logs only).",
    )
    pcie_width: int = Field(16, ge=1, description="Expected PCIe link width (lanes); checked at any load.")
    pcie_generation: int = Field(5, ge=1, description="Expected max PCIe generation; the current one drops at idle.")
    nvlink_links: int = Field(ge=0, description="Active NVLink links per GPU (H100/H200 SXM: 18).")
    nvlink_link_gbytes_per_s: float = Field(gt=0, description="Per-link speed nvidia-smi nvlink -s shows, GB/s.")
    nvlink_errors_warn: int = Field(5, ge=0, description="Summed replay/recovery/CRC errors per GPU (imbue: 5).")


class NicLimits(_Strict):
    """Backend NICs: one per rail, as the fabric intent cables them."""

    rails: int = Field(ge=1, description="Backend NIC ports per node (rails).")
    rate_gbits_per_s: int = Field(gt=0, description="Expected port rate, Gb/s (ibstat 'Rate').")
    link_layer: Literal["InfiniBand", "Ethernet"]
    ca_type: str | None = Field(None, description="ibstat 'CA type', e.g. MT4129 (ConnectX-7).")
    counters_fatal_on_increase: list[str] = Field(
        default_factory=lambda: [
            "link_downed",
            "excessive_buffer_overrun_errors",
            "local_link_integrity_errors",
            "rnr_nak_retry_err",
        ],
        description="Port counters whose any increase fails the link (NVSentinel nic-health-monitor defaults).",
    )
    counters_warn_per_second: dict[str, float] = Field(
        default_factory=lambda: {
            "symbol_error": 10.0,
            "port_rcv_errors": 10.0,
            "local_ack_timeout_err": 1.0,
            "port_xmit_discards": 100.0,
            "roce_slow_restart": 10.0,
        },
        description="Counter growth rates (per second) above which a link warns (NVSentinel non-fatal rules).",
    )


class DcgmSettings(_Strict):
    """Which DCGM diagnostic level burn-in runs and the periodic health check runs."""

    burn_in_level: Literal[1, 2, 3, 4] = 3
    health_check_level: Literal[1, 2] = 1
    timeout_seconds: int = Field(default=3600, gt=0)


class Performance(_Strict):
    """Measured-performance gates; every one carries its test method."""

    nccl_allreduce_single_node_busbw_gbytes_per_s: MinThreshold
    nccl_allreduce_multi_node_busbw_gbytes_per_s: MinThreshold
    ib_write_bw_per_port_gbits_per_s: MinThreshold
    host_to_device_gbytes_per_s: MinThreshold
    device_to_device_gbytes_per_s: MinThreshold


class Profile(_Strict):
    """A SKU's health profile (one YAML file)."""

    sku: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="Profile name, e.g. hgx-h200-8x400g.")
    description: str
    gpu: GpuLimits
    nic: NicLimits
    dcgm: DcgmSettings = DcgmSettings()
    performance: Performance
    xid_window_seconds: int = Field(
        7200, gt=0, description="Kernel-log XIDs older than this are history, not a current fault (Azure: 2 h)."
    )


class ProfileError(IntentError):
    """A profile file is invalid; ``issues`` name file, line, field, value and what would be valid."""


def load_profile_text(text: str, file: str = "<string>") -> Profile:
    """Parse and validate a profile's YAML text. Raises :class:`ProfileError`."""
    return load_yaml_model(text, file, Profile, ProfileError)


def builtin_profiles() -> list[str]:
    """Names of the profiles shipped with hwaac (``hwaac/health/profiles/*.yml``), sorted."""
    folder = resources.files("hwaac.health").joinpath("profiles")
    return sorted(p.name.removesuffix(".yml") for p in folder.iterdir() if p.name.endswith(".yml"))


@cache
def _builtin(name: str) -> Profile:
    path = resources.files("hwaac.health").joinpath("profiles", f"{name}.yml")
    return load_profile_text(path.read_text(), file=f"hwaac/health/profiles/{name}.yml")


def load_profile(name_or_path: str | Path) -> Profile:
    """A shipped profile by name (``hgx-h200-8x400g``) or a profile file by path.

    Raises :class:`ProfileError` for an invalid file, or for a name that is neither a shipped profile nor an
    existing file (the message lists the shipped ones).
    """
    text = str(name_or_path)
    if text in builtin_profiles():
        return _builtin(text)
    path = Path(text)
    if path.is_file():
        return load_profile_text(path.read_text(), file=str(path))
    raise ProfileError(
        [
            IntentIssue(
                path="profile",
                message="no such profile",
                value=text,
                valid="a file path or one of " + ", ".join(builtin_profiles()),
            )
        ]
    )
