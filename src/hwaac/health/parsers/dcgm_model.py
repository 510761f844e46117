"""The facts model of DCGM diagnostics: the enums and sentinels DCGM defines and the dataclasses both diag readers
(``dcgmi diag -j`` in :mod:`.dcgm`, the boxed table in :mod:`.dcgm_text`) return.

What each severity and exit status means for a node is decided in the check layer
(:mod:`hwaac.health.dcgm_grading`); sources and versions: ``docs/health-gpu-parsers.md``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from hwaac.health.result import Graded, Status, ToolResult

# dcgmError_t ids, transcribed from NVIDIA/DCGM dcgmlib/dcgm_errors.h at commit 72fa3feaa67d716a75323a8f47c34ff3ee73f824
# (ids 0..132; "New error codes must be added to end of enum to maintain backwards compatibility", so an id keeps its
# meaning across versions; a few names changed, e.g. 10/12/43 were CLOCK_THROTTLE_* and 23 BLACKLISTED_DRIVER).
DCGM_ERROR_NAMES: dict[int, str] = dict(
    enumerate(
        """OK UNKNOWN UNRECOGNIZED PCI_REPLAY_RATE VOLATILE_DBE_DETECTED VOLATILE_SBE_DETECTED PENDING_PAGE_RETIREMENTS
        RETIRED_PAGES_LIMIT RETIRED_PAGES_DBE_LIMIT CORRUPT_INFOROM CLOCKS_EVENT_THERMAL POWER_UNREADABLE
        CLOCKS_EVENT_POWER NVLINK_ERROR_THRESHOLD NVLINK_DOWN NVSWITCH_FATAL_ERROR NVSWITCH_NON_FATAL_ERROR
        NVSWITCH_DOWN NO_ACCESS_TO_FILE NVML_API DEVICE_COUNT_MISMATCH BAD_PARAMETER CANNOT_OPEN_LIB DENYLISTED_DRIVER
        NVML_LIB_BAD GRAPHICS_PROCESSES HOSTENGINE_CONN FIELD_QUERY BAD_CUDA_ENV PERSISTENCE_MODE LOW_BANDWIDTH
        HIGH_LATENCY CANNOT_GET_FIELD_TAG FIELD_VIOLATION FIELD_THRESHOLD FIELD_VIOLATION_DBL FIELD_THRESHOLD_DBL
        UNSUPPORTED_FIELD_TYPE FIELD_THRESHOLD_TS FIELD_THRESHOLD_TS_DBL THERMAL_VIOLATIONS THERMAL_VIOLATIONS_TS
        TEMP_VIOLATION CLOCKS_EVENT_VIOLATION INTERNAL PCIE_GENERATION PCIE_WIDTH ABORTED TEST_DISABLED CANNOT_GET_STAT
        STRESS_LEVEL CUDA_API FAULTY_MEMORY CANNOT_SET_WATCHES CUDA_UNBOUND ECC_DISABLED MEMORY_ALLOC CUDA_DBE
        MEMORY_MISMATCH CUDA_DEVICE ECC_UNSUPPORTED ECC_PENDING MEMORY_BANDWIDTH TARGET_POWER API_FAIL API_FAIL_GPU
        CUDA_CONTEXT DCGM_API CONCURRENT_GPUS TOO_MANY_ERRORS NVLINK_CRC_ERROR_THRESHOLD NVLINK_ERROR_CRITICAL
        ENFORCED_POWER_LIMIT MEMORY_ALLOC_HOST GPU_OP_MODE NO_MEMORY_CLOCKS NO_GRAPHICS_CLOCKS HAD_TO_RESTORE_STATE
        L1TAG_UNSUPPORTED L1TAG_MISCOMPARE ROW_REMAP_FAILURE UNCONTAINED_ERROR EMPTY_GPU_LIST
        DBE_PENDING_PAGE_RETIREMENTS UNCORRECTABLE_ROW_REMAP PENDING_ROW_REMAP BROKEN_P2P_MEMORY_DEVICE
        BROKEN_P2P_WRITER_DEVICE NVSWITCH_NVLINK_DOWN EUD_BINARY_PERMISSIONS EUD_NON_ROOT_USER EUD_SPAWN_FAILURE
        EUD_TIMEOUT EUD_ZOMBIE EUD_NON_ZERO_EXIT_CODE EUD_TEST_FAILED FILE_CREATE_PERMISSIONS PAUSE_RESUME_FAILED
        PCIE_H_REPLAY_VIOLATION GPU_EXPECTED_NVLINKS_UP NVSWITCH_EXPECTED_NVLINKS_UP XID_ERROR SBE_VIOLATION
        DBE_VIOLATION PCIE_REPLAY_VIOLATION SBE_THRESHOLD_VIOLATION DBE_THRESHOLD_VIOLATION
        PCIE_REPLAY_THRESHOLD_VIOLATION CUDA_FM_NOT_INITIALIZED SXID_ERROR GFLOPS_THRESHOLD_VIOLATION NAN_VALUE
        FABRIC_MANAGER_TRAINING_ERROR BROKEN_P2P_PCIE_MEMORY_DEVICE BROKEN_P2P_PCIE_WRITER_DEVICE
        BROKEN_P2P_NVLINK_MEMORY_DEVICE BROKEN_P2P_NVLINK_WRITER_DEVICE TEST_SKIPPED SRAM_THRESHOLD
        NVLINK_EFFECTIVE_BER_THRESHOLD FALLEN_OFF_BUS NVLINK_SYMBOL_BER_THRESHOLD IMEX_UNHEALTHY FABRIC_PROBE_STATE
        BINARY_PERMISSIONS GPU_RECOVERY_RESET GPU_RECOVERY_REBOOT GPU_RECOVERY_DRAIN_P2P GPU_RECOVERY_DRAIN_RESET
        NCCL_ERROR RETEST_REQUESTED CONTAINED_ERROR UNCORRECTABLE_ROW_REMAP_LIMIT""".split()  # noqa: SIM905
    )
)


# dcgmErrorSeverity_t before DCGM 3.3 and since (dcgm_errors.h, the 2021-2022 headers and the 2024+ headers).
SEVERITY_NAMES_PRE_33 = {0: "MONITOR", 1: "ISOLATE", 2: "UNKNOWN"}


SEVERITY_NAMES_33 = {0: "NONE", 1: "MONITOR", 2: "ISOLATE", 3: "UNKNOWN", 4: "TRIAGE", 5: "CONFIG", 6: "RESET"}


# dcgmi diag's status words, any case, as the JSON and the table write them.
STATUS_WORDS = {"pass": "Pass", "fail": "Fail", "skip": "Skip", "warn": "Warn", "not run": "Not Run"}


INT64_BLANK = 0x7FFFFFFFFFFFFFF0


INT32_BLANK = 0x7FFFFFF0


FP64_BLANK = 140737488355328.0


# BLANK, NOT_FOUND, NOT_SUPPORTED, NOT_PERMISSIONED = BLANK + 0..3 (dcgm_structs.h DCGM_INT*_*).
_BLANK_NAMES = ("BLANK", "NOT_FOUND", "NOT_SUPPORTED", "NOT_PERMISSIONED")


_INT64_SENTINELS = {INT64_BLANK + i: n for i, n in enumerate(_BLANK_NAMES)}


_INT32_SENTINELS = {INT32_BLANK + i: n for i, n in enumerate(_BLANK_NAMES)}


_FP64_SENTINELS = {FP64_BLANK + i: n for i, n in enumerate(_BLANK_NAMES)}


_STRING_SENTINEL = re.compile(r"^<<<[A-Z_]+>>>$")  # <<<NULL>>>, <<<NOT_SUPPORTED>>>, <<<NOT_FOUND>>> ...


# dcgmi exit status -> (name, dcgmReturn_t, what it means) for 256+rc (dcgm_structs.h; NVIDIA/DCGM#158).
DCGMI_EXIT_CODES: dict[int, tuple[str, int, str]] = {
    226: ("NVVS_ERROR", -30, "a diagnostic test reported an error"),
    205: ("NVVS_ISOLATE_ERROR", -51, "a test reported an error whose priority is ISOLATE: drain the GPU"),
    204: ("NVVS_BINARY_NOT_FOUND", -52, "the NVVS binary was not found"),
    203: ("NVVS_KILLED", -53, "the NVVS process was killed by a signal"),
    253: ("GENERIC_ERROR", -3, "a generic error"),
    250: ("NOT_SUPPORTED", -6, "the operation is not supported"),
    245: ("TIMEOUT", -11, "the diagnostic timed out"),
    222: ("IN_USE", -34, "the resource is in use (another diagnostic or a client holds the GPUs)"),
}


def sentinel_name(value: Any) -> str | None:
    """The DCGM blank-sentinel name of ``value`` (``"NOT_SUPPORTED"``...), or None when it is a real value.

    Integers are checked against the INT64 and INT32 blanks, floats against FP64_BLANK, strings against the
    ``<<<...>>>`` forms and against the decimal text of an integer sentinel.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return _INT64_SENTINELS.get(value) or _INT32_SENTINELS.get(value)
    if isinstance(value, float):
        return _FP64_SENTINELS.get(value)
    if isinstance(value, str):
        text = value.strip()
        if _STRING_SENTINEL.match(text):
            return text.strip("<>")
        if text.isdigit():
            return sentinel_name(int(text))
    return None


def _version_tuple(version: str | None) -> tuple[int, ...] | None:
    match = re.match(r"\s*v?(\d+)(?:\.(\d+))?", version or "")
    if not match:
        return None
    return tuple(int(part) for part in match.groups() if part is not None)


def severity_enum_for(version: str | None, layout: str) -> str:
    """Which severity numbering a document uses: ``"3.3+"``, ``"pre-3.3"`` or ``"unknown"``.

    A DCGM >= 4.0 layout is always 3.3+. Otherwise the DCGM version decides (``version`` >= 3.3). Without a version
    the numbering is unknown (see :func:`severity_verdict`).
    """
    if layout == "4.x":
        return "3.3+"
    parsed = _version_tuple(version)
    if parsed is None:
        return "unknown"
    return "3.3+" if parsed >= (3, 3) else "pre-3.3"


def severity_name(severity: int | None, enum: str) -> str:
    """The name of ``error_severity`` under the document's numbering (:func:`severity_enum_for`): ``"ISOLATE"``,
    ``"ambiguous 1 (ISOLATE before DCGM 3.3, MONITOR since)"`` when the numbering is unknown, ``"UNGRADED"`` when
    absent, ``"unrecognised N"`` otherwise."""
    if severity is None:
        return "UNGRADED"
    if enum == "unknown" and severity in (0, 1, 2):
        return (
            f"ambiguous {severity} ({SEVERITY_NAMES_PRE_33[severity]} before DCGM 3.3, "
            f"{SEVERITY_NAMES_33[severity]} since)"
        )
    table = SEVERITY_NAMES_PRE_33 if enum == "pre-3.3" else SEVERITY_NAMES_33
    return table.get(severity) or f"unrecognised {severity}"


@dataclass
class DcgmWarning:
    """One warning of a diag result.

    Attributes:
        message: the warning text as written.
        error_id: the ``DCGM_FR_*`` id (None in 2.x string warnings).
        error_name: the id's name without ``DCGM_FR_`` (``"UNCORRECTABLE_ROW_REMAP_LIMIT"``), None when unknown.
        error_category: ``dcgmErrorCategory_t`` value (10 = HARDWARE_MEMORY ...), None when absent.
        error_severity: ``error_severity`` as written, None when absent.
        severity_name: the severity read with the document's numbering (``"ISOLATE"``, ``"ambiguous 1 (...)"``).
    """

    message: str
    error_id: int | None = None
    error_name: str | None = None
    error_category: int | None = None
    error_severity: int | None = None
    severity_name: str = ""


@dataclass
class DcgmTestResult:
    """One test's result for one entity (or for all GPUs, as software tests and 2.x write it).

    Attributes:
        test: the test name as written (``"memory"`` in 4.x, ``"GPU Memory"`` in 3.x).
        category: the category (``"Deployment"``, ``"Hardware"``, ``"Integration"``, ``"Stress"``...).
        entity_group: ``"GPU"`` (4.x ``entity_group``; 3.x and 2.x results are GPUs), ``""`` for a node-wide result.
        gpu_ids: the GPU ids the result covers (one in 4.x and 3.x; a CSV list in 2.x; empty for node-wide).
        status: ``"Pass"``, ``"Fail"``, ``"Skip"``, ``"Warn"`` or ``"Not Run"`` (normalised case), ``""`` if unreadable.
        verdict: set by the check layer (:func:`hwaac.health.dcgm_grading.grade_diag`) from the status and the
            warnings' severities (a ``"Fail"`` whose warnings are all MONITOR is WARN); None until graded.
        warnings: the warnings.
        info: the info lines.
        iteration: the ``iterations[]`` index, None without ``--iterations``.
    """

    test: str
    category: str
    entity_group: str
    gpu_ids: list[int]
    status: str
    verdict: Status | None
    warnings: list[DcgmWarning] = field(default_factory=list)
    info: list[str] = field(default_factory=list)
    iteration: int | None = None


@dataclass
class DcgmEntity:
    """One entity of ``entity_groups`` (4.x) or of ``"GPU Device Serials"`` (3.x).

    Attributes:
        entity_group: ``"GPU"``, ``"CPU"``...
        entity_id: the entity id (the GPU index for GPUs).
        serial: the board serial, None when absent or a blank sentinel (reason in ``serial_unreadable``).
        device_id: the PCI device id (``"2330"``), None when absent.
        serial_unreadable: why ``serial`` is None (``"<<<NOT_SUPPORTED>>>"`` ...), ``""`` otherwise.
    """

    entity_group: str
    entity_id: int
    serial: str | None = None
    device_id: str | None = None
    serial_unreadable: str = ""


@dataclass
class DcgmDiagResult(Graded):
    """``dcgmi diag -r N -j`` parsed.

    Attributes:
        layout: ``"4.x"`` (root ``"DCGM Diagnostic"``), ``"3.x"`` (root ``"DCGM GPU Diagnostic"`` with ``gpu_id``),
            ``"2.x"`` (``gpu_ids`` and string warnings), ``""`` when unreadable.
        severity_enum: the severity numbering used to read warnings (see :func:`severity_enum_for`).
        driver_version: ``"Driver Version Detected"``, None when absent or a sentinel.
        exit_code: the exit status given by the caller (None when not known).
        runtime_error: ``runtime_error`` text when the diagnostic could not run.
        overall_result: ``"Overall Result"`` of an ``--iterations`` run.
        results: every test result, in document order.
        entities: the entities with their serials.
        notes: observations that do not change the status (unreadable serials, leading text before the JSON).
        graded: whether :func:`hwaac.health.dcgm_grading.grade_diag` has added its findings and verdicts.
    """

    tool: str = "dcgmi diag -j"
    layout: str = ""
    severity_enum: str = "unknown"
    driver_version: str | None = None
    exit_code: int | None = None
    runtime_error: str | None = None
    overall_result: str | None = None
    results: list[DcgmTestResult] = field(default_factory=list)
    entities: list[DcgmEntity] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    graded: bool = False

    def serials(self) -> dict[int, str | None]:
        """GPU index -> serial (None when unreadable)."""
        return {e.entity_id: e.serial for e in self.entities if e.entity_group == "GPU"}

    def test_status(self) -> dict[str, Status]:
        """Test name -> worst verdict over its results (Skip and Not Run count as PASS here)."""
        out: dict[str, Status] = {}
        for r in self.results:
            out[r.test] = max(out.get(r.test, Status.PASS), _graded(r.verdict))
        return out

    def gpu_status(self) -> dict[int, Status]:
        """GPU index -> worst verdict over the results that name it."""
        out: dict[int, Status] = {}
        for r in self.results:
            for gpu in r.gpu_ids:
                out[gpu] = max(out.get(gpu, Status.PASS), _graded(r.verdict))
        return out


def _graded(verdict: Status | None) -> Status:
    return Status.UNKNOWN if verdict is None else verdict


def load_json(raw: str, notes: list[str], unknown: list[str]) -> Any:
    """The JSON document in ``raw`` (text before the first ``{`` is noted), or None with a reason."""
    text = (raw or "").strip()
    if not text:
        unknown.append("empty output")
        return None
    start = text.find("{")
    if start < 0:
        unknown.append(f"no JSON object in the output; first line: {text.splitlines()[0][:200]!r}")
        return None
    if start > 0:
        notes.append(f"text before the JSON document: {text[:start].strip()[:200]!r}")
    try:
        return json.JSONDecoder().raw_decode(text[start:])[0]
    except json.JSONDecodeError as exc:
        unknown.append(f"the JSON document does not parse ({exc.msg} at char {exc.pos}): truncated or not JSON")
        return None


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def subject(group: str, ids: list[int]) -> str:
    if not ids:
        return ""
    prefix = "gpu" if group in ("", "GPU") else group.lower()
    return ",".join(f"{prefix}{i}" for i in ids)


def finding_code(warning: DcgmWarning) -> str:
    if warning.error_name:
        return f"DCGM_{warning.error_name}"
    if warning.error_id is not None:
        return f"DCGM_ERROR_{warning.error_id}"
    return "DCGM_TEST_FAILED"


def guarded(out: ToolResult, func: Any, *args: Any) -> None:
    """Run one parsing step; an exception on some unforeseen input shape becomes an UNKNOWN reason, never a raise."""
    try:
        func(*args)
    except Exception as exc:  # the parsers' contract: bad tool output never raises
        out.unknown.append(f"unexpected input shape ({type(exc).__name__}: {exc})"[:300])
