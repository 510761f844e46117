"""Parsers of NVIDIA DCGM output: ``dcgmi diag -r N -j`` and ``dcgmi health -c -j``.

Domain facts (``burn-in-health.md`` §1 unless named otherwise):

- ``dcgmi diag -j`` has three layouts. DCGM >= 4.0 writes the root key ``"DCGM Diagnostic"`` holding
  ``test_categories[].tests[].results[]`` with an integer ``entity_id``; ``entity_groups[].entities[]`` (with
  ``serial_num``) and ``metadata`` (``version``, ``"Driver Version Detected"``) are siblings at the root; a run that
  could not start writes ``"DCGM Diagnostic".runtime_error`` (NVIDIA/DCGM ``testing/python3/dcgm_diag_schema.json``);
  ``--iterations`` wraps documents in ``iterations[]`` beside an ``"Overall Result"``. DCGM 3.x (<= 3.3) writes the
  root key ``"DCGM GPU Diagnostic"``, a string ``gpu_id`` per result, capitalised test names and, at the root,
  ``version``, ``"Driver Version Detected"``, ``"GPU Device IDs"`` and ``"GPU Device Serials"`` (a map index ->
  serial; the layout GoogleCloudPlatform/cluster-health-scanner ``dcgm_diag`` reads). DCGM 2.x and early 3.x wrote
  ``gpu_ids`` (a GPU id or a CSV of them) and warnings as plain strings (the recorded outputs in
  microsoft/VirtualClient ``Examples/DCGMI``).
- The JSON writes a WARN result as ``"Fail"``: each warning's ``error_severity`` tells a real failure from a warning.
  The severity enum was renumbered at DCGM 3.3 (NVIDIA/DCGM ``dcgmlib/dcgm_errors.h``): since then NONE=0, MONITOR=1,
  ISOLATE=2, UNKNOWN=3, TRIAGE=4, CONFIG=5, RESET=6; before, MONITOR=0, ISOLATE=1, UNKNOWN=2. See
  :func:`severity_verdict` for the rule when the version is unknown.
- ``dcgmi`` exits with the negative ``dcgmReturn_t`` seen as unsigned, 256+rc (NVIDIA/DCGM#158: "The 226 error means
  DCGM_ST_NVVS_ERROR (-30)"; values of ``dcgmlib/dcgm_structs.h``). 205 (``DCGM_ST_NVVS_ISOLATE_ERROR``, -51) is
  returned when a failing test's error has priority ISOLATE (``dcgmi/Diag.cpp`` ``GetFailureResult``).
- DCGM 3.x writes ``null`` entries between tests and categories (``"tests": [{...}, null, {...}]``); they carry
  nothing and are skipped with a note. A ``null`` in place of a whole document or a test list stays unreadable.
- Blank sentinels (``dcgmlib/dcgm_structs.h``): INT64_BLANK 0x7ffffffffffffff0, NOT_SUPPORTED = BLANK+2
  (9223372036854775794, seen in NVIDIA/DCGM#272 logs), INT32_BLANK 0x7ffffff0, FP64_BLANK 140737488355328.0,
  ``<<<NULL>>>`` and ``<<<NOT_SUPPORTED>>>`` strings.
- ``dcgmi health -c -j`` (``dcgmi/Health.cpp`` ``GenerateOutputFromResponse``): ``{"header": ["Health Monitor
  Report"], "body": {"Overall Health": {"value": ...}, "<entity group>": {"children": {"<id>": {"value": ...,
  "children": {"Errors": {"children": {"<system>": {"value": ..., "overflow": [message chunks]}}}}}}}}}`` with values
  Healthy / Warning / Failure (anything else, e.g. "Internal error", is unreadable).

Parsers never raise on bad output: what cannot be read is an ``unknown`` reason, never PASS.
"""

from __future__ import annotations

import json
import re
import signal
from dataclasses import dataclass, field
from typing import Any

from hwaac.health.result import Action, Finding, Status, ToolResult, strongest

# --- DCGM enums and sentinels ----------------------------------------------------------------------------------------

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

# The action an error id calls for whatever its severity (the *_NEXT suggestions of dcgm_errors.h and the decision
# ladder of burn-in-health.md §6); it replaces a severity's generic RETEST, else the stronger of the two is recommended.
_ERROR_ID_ACTIONS: dict[int, Action] = {
    4: Action.RESET_GPU,  # VOLATILE_DBE_DETECTED: "Drain the GPU and reset it or reboot the node."
    80: Action.RMA,  # ROW_REMAP_FAILURE: "unrecoverable memory hardware damage"
    81: Action.RESET_GPU,  # UNCONTAINED_ERROR (XID 95)
    83: Action.RESET_GPU,  # DBE_PENDING_PAGE_RETIREMENTS
    85: Action.RESET_GPU,  # PENDING_ROW_REMAP: a reset applies the remap
    120: Action.REBOOT,  # FALLEN_OFF_BUS
    125: Action.RESET_GPU,  # GPU_RECOVERY_RESET
    126: Action.REBOOT,  # GPU_RECOVERY_REBOOT
    127: Action.RESET_GPU,  # GPU_RECOVERY_DRAIN_P2P
    128: Action.RESET_GPU,  # GPU_RECOVERY_DRAIN_RESET
    130: Action.RETEST,  # RETEST_REQUESTED
    131: Action.RESTART_APP,  # CONTAINED_ERROR: "Restart the application ... GPU reset can be deferred"
    132: Action.RMA,  # UNCORRECTABLE_ROW_REMAP_LIMIT: "Run a field diagnostic" (triage towards RMA)
}

# Ids whose result is not a verdict on the hardware: the diagnostic asks to be run again.
_ERROR_ID_UNKNOWN = {130}  # RETEST_REQUESTED

# dcgmErrorSeverity_t before DCGM 3.3 and since (dcgm_errors.h, the 2021-2022 headers and the 2024+ headers).
SEVERITY_NAMES_PRE_33 = {0: "MONITOR", 1: "ISOLATE", 2: "UNKNOWN"}
SEVERITY_NAMES_33 = {0: "NONE", 1: "MONITOR", 2: "ISOLATE", 3: "UNKNOWN", 4: "TRIAGE", 5: "CONFIG", 6: "RESET"}

# What each severity means for a "Fail" result: (status, action).
_SEVERITY_VERDICTS: dict[str, tuple[Status, Action]] = {
    # NONE on a failing result: DCGM did not classify it; a failure we cannot grade is still a failure.
    "NONE": (Status.FAIL, Action.RETEST),
    "MONITOR": (Status.WARN, Action.NONE),  # "Can perform workload, but needs to be monitored."
    "ISOLATE": (Status.FAIL, Action.RMA),  # "Cannot perform workload. GPU should be isolated." (exit 205)
    "UNKNOWN": (Status.FAIL, Action.RETEST),  # "This error code is not recognized"
    "TRIAGE": (Status.FAIL, Action.RETEST),  # "This error should be triaged": run a field diagnostic first
    "CONFIG": (Status.WARN, Action.NONE),  # "This error can be configured": a node setting, not the hardware
    "RESET": (Status.FAIL, Action.RESET_GPU),  # "Drain and reset GPU"
}

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

_STATUS_WORDS = {"pass": "Pass", "fail": "Fail", "skip": "Skip", "warn": "Warn", "not run": "Not Run"}


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


def severity_verdict(severity: int | None, enum: str) -> tuple[Status, Action, str]:
    """(status, action, severity name) for one warning's ``error_severity`` on a ``"Fail"`` result.

    Rule when the numbering is unknown (a DCGM 2.x/3.x layout without a version): a value that reads as a failure
    under either numbering is a failure, because a warning must never hide a fault. 0 (MONITOR before 3.3, NONE
    since), 1 (ISOLATE / MONITOR) and 2 (UNKNOWN / ISOLATE) are therefore FAIL with action RETEST (rerun with the
    version known before acting on an RMA); 3..6 exist only in the 3.3+ numbering and are read with it. A missing or
    unrecognised severity is FAIL with action RETEST.
    """
    if severity is None:
        return Status.FAIL, Action.RETEST, "UNGRADED"
    if enum == "unknown" and severity in (0, 1, 2):
        names = f"{SEVERITY_NAMES_PRE_33[severity]} before DCGM 3.3, {SEVERITY_NAMES_33[severity]} since"
        return Status.FAIL, Action.RETEST, f"ambiguous {severity} ({names})"
    table = SEVERITY_NAMES_PRE_33 if enum == "pre-3.3" else SEVERITY_NAMES_33
    name = table.get(severity)
    if name is None:
        return Status.FAIL, Action.RETEST, f"unrecognised {severity}"
    status, action = _SEVERITY_VERDICTS[name]
    return status, action, name


# --- dcgmi diag -j ---------------------------------------------------------------------------------------------------


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
        verdict: the result after reading warnings' severities (a ``"Fail"`` whose warnings are all MONITOR is WARN).
        warnings: the warnings.
        info: the info lines.
        iteration: the ``iterations[]`` index, None without ``--iterations``.
    """

    test: str
    category: str
    entity_group: str
    gpu_ids: list[int]
    status: str
    verdict: Status
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
class DcgmDiagResult(ToolResult):
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

    def serials(self) -> dict[int, str | None]:
        """GPU index -> serial (None when unreadable)."""
        return {e.entity_id: e.serial for e in self.entities if e.entity_group == "GPU"}

    def test_status(self) -> dict[str, Status]:
        """Test name -> worst verdict over its results (Skip and Not Run count as PASS here)."""
        out: dict[str, Status] = {}
        for r in self.results:
            out[r.test] = max(out.get(r.test, Status.PASS), r.verdict)
        return out

    def gpu_status(self) -> dict[int, Status]:
        """GPU index -> worst verdict over the results that name it."""
        out: dict[int, Status] = {}
        for r in self.results:
            for gpu in r.gpu_ids:
                out[gpu] = max(out.get(gpu, Status.PASS), r.verdict)
        return out


def _load_json(raw: str, notes: list[str], unknown: list[str]) -> Any:
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


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _gpu_ids(result: dict[str, Any]) -> tuple[str, list[int], str | None]:
    """(entity_group, gpu ids, problem) of one result in any layout."""
    if "entity_id" in result:
        group = str(result.get("entity_group") or "GPU")
        entity = _int_or_none(result.get("entity_id"))
        if entity is None:
            return group, [], f"entity_id {result.get('entity_id')!r} is not an integer"
        return group, [entity], None
    raw = result.get("gpu_id", result.get("gpu_ids"))
    if raw is None:
        return "", [], None  # a node-wide result (2.x deployment tests)
    ids = [_int_or_none(part) for part in str(raw).split(",") if part.strip()]
    if any(i is None for i in ids):
        return "GPU", [], f"gpu id {raw!r} is not a list of integers"
    return "GPU", [i for i in ids if i is not None], None


def _warnings(raw: Any, enum: str) -> list[tuple[DcgmWarning, Status, Action]]:
    out: list[tuple[DcgmWarning, Status, Action]] = []
    for item in _as_list(raw):
        if isinstance(item, dict):
            error_id = _int_or_none(item.get("error_id"))
            severity = _int_or_none(item.get("error_severity"))
            warning = DcgmWarning(
                message=str(item.get("warning", "")),
                error_id=error_id,
                error_name=DCGM_ERROR_NAMES.get(error_id) if error_id is not None else None,
                error_category=_int_or_none(item.get("error_category")),
                error_severity=severity,
            )
        else:
            warning = DcgmWarning(message=str(item))
        status, action, warning.severity_name = severity_verdict(warning.error_severity, enum)
        if warning.error_id in _ERROR_ID_UNKNOWN:
            status = Status.UNKNOWN
        if warning.error_id in _ERROR_ID_ACTIONS:
            # RETEST from the severity only means "no specific action": the id's own action replaces it.
            specific = _ERROR_ID_ACTIONS[warning.error_id]
            action = specific if action == Action.RETEST else strongest([action, specific])
        out.append((warning, status, action))
    return out


def _subject(group: str, ids: list[int]) -> str:
    if not ids:
        return ""
    prefix = "gpu" if group in ("", "GPU") else group.lower()
    return ",".join(f"{prefix}{i}" for i in ids)


def _code(warning: DcgmWarning) -> str:
    if warning.error_name:
        return f"DCGM_{warning.error_name}"
    if warning.error_id is not None:
        return f"DCGM_ERROR_{warning.error_id}"
    return "DCGM_TEST_FAILED"


def _read_result(
    res: Any, test: str, category: str, enum: str, iteration: int | None, out: DcgmDiagResult
) -> DcgmTestResult | None:
    where = f"test {test!r} ({category})" + (f" iteration {iteration}" if iteration is not None else "")
    if not isinstance(res, dict):
        out.unknown.append(f"{where}: a result is not an object: {res!r:.100}")
        return None
    group, ids, problem = _gpu_ids(res)
    if problem:
        out.unknown.append(f"{where}: {problem}")
    raw_status = str(res.get("status", ""))
    status = _STATUS_WORDS.get(raw_status.strip().lower(), "")
    info = [str(i) for i in _as_list(res.get("info"))]
    _note_sentinels(test, info, out)
    warned = _warnings(res.get("warnings"), enum)
    result = DcgmTestResult(test, category, group, ids, status, Status.PASS, [w for w, _, _ in warned], info, iteration)
    subject = _subject(group, ids)
    if not status:
        out.unknown.append(f"{where} {subject}: unrecognised status {raw_status!r}")
        result.verdict = Status.UNKNOWN
    elif status in ("Fail", "Warn"):
        result.verdict = _judge(result, warned, where, subject, out)
    elif status == "Pass" and warned:
        result.verdict = _judge_passing(warned, where, subject, out)
    elif warned:  # Skip / Not Run: the warnings say why
        out.notes.append(f"{where} {subject}: {status}: " + "; ".join(w.message for w, _, _ in warned)[:300])
    return result


def _judge_passing(
    warned: list[tuple[DcgmWarning, Status, Action]], where: str, subject: str, out: DcgmDiagResult
) -> Status:
    """A Pass that carries warnings: WARN each, and UNKNOWN for a memory test that could not allocate its memory.

    NVIDIA/DCGM#284: the memory plugin can record DCGM_FR_MEMORY_ALLOC (id 56) and still pass, so the memory was not
    tested as configured.
    """
    verdict = Status.PASS
    for warning, _, _ in warned:
        status, action = (Status.UNKNOWN, Action.RETEST) if warning.error_id == 56 else (Status.WARN, Action.NONE)
        message = f"dcgmi diag {where} passed on {subject or 'the node'} but reported: {warning.message}"
        out.findings.append(Finding(_code(warning), status, message, subject, warning.message, action))
        verdict = max(verdict, status)
    return verdict


def _judge(
    result: DcgmTestResult,
    warned: list[tuple[DcgmWarning, Status, Action]],
    where: str,
    subject: str,
    out: DcgmDiagResult,
) -> Status:
    """Findings for a Fail/Warn result; the verdict is the worst warning (a Fail without warnings is FAIL)."""
    if not warned:
        status = Status.FAIL if result.status == "Fail" else Status.WARN
        info = "; ".join(result.info)[:300]
        message = f"dcgmi diag {where} is {result.status} on {subject or 'the node'} without a warning" + (
            f" (info: {info})" if info else ""
        )
        code = "DCGM_TEST_FAILED" if status == Status.FAIL else "DCGM_TEST_WARN"
        out.findings.append(Finding(code, status, message, subject, f"status: {result.status}", Action.RETEST))
        return status
    verdict = Status.PASS
    for warning, status, action in warned:
        if result.status == "Warn" and warning.error_severity is None:
            status = Status.WARN  # the writer said Warn itself and gave no severity to contradict it
        name = f"DCGM_FR_{warning.error_name}" if warning.error_name else "an error"
        ident = ""
        if warning.error_id is not None:
            ident = f" (error_id {warning.error_id}, severity {warning.severity_name})"
        message = f"dcgmi diag {where} reported {name}{ident} on {subject or 'the node'}: {warning.message}"
        out.findings.append(Finding(_code(warning), status, message, subject, warning.message, action))
        verdict = max(verdict, status)
    return verdict


def _read_categories(diag: dict[str, Any], enum: str, iteration: int | None, out: DcgmDiagResult) -> None:
    categories = diag.get("test_categories")
    if categories is None:
        return
    if not isinstance(categories, list):
        out.unknown.append("test_categories is not a list")
        return
    for cat in categories:
        if cat is None:
            out.notes.append("a null entry in test_categories (DCGM 3.x writes them): skipped")
            continue
        if not isinstance(cat, dict) or not isinstance(cat.get("tests"), list):
            out.unknown.append(f"a test category is not an object with a tests list: {cat!r:.100}")
            continue
        category = str(cat.get("category", ""))
        for test in cat["tests"]:
            if test is None:
                out.notes.append(f"category {category!r}: a null entry between tests (DCGM 3.x writes them): skipped")
                continue
            if not isinstance(test, dict) or "name" not in test:
                out.unknown.append(f"category {category!r}: a test without a name: {test!r:.100}")
                continue
            results = test.get("results")
            if not isinstance(results, list):
                out.unknown.append(f"test {test['name']!r}: results is not a list")
                continue
            summary = test.get("test_summary") if isinstance(test.get("test_summary"), dict) else {}
            _note_sentinels(str(test["name"]), _as_list(summary.get("info")), out)
            if not results and summary.get("status"):
                results = [summary]  # a test with only its summary: read it as one node-wide result
            for res in results:
                if res is None:
                    out.notes.append(f"test {test['name']!r}: a null result entry: skipped")
                    continue
                parsed = _read_result(res, str(test["name"]), category, enum, iteration, out)
                if parsed is not None:
                    out.results.append(parsed)


_BIG_NUMBER = re.compile(r"(?<![\d.])(\d{9,20}(?:\.\d+)?)(?!\d)")


def _note_sentinels(test: str, lines: list[Any], out: DcgmDiagResult) -> None:
    """Note info lines that quote a DCGM blank sentinel: DCGM could not read a value, so that sub-check was skipped."""
    for line in lines:
        for number in _BIG_NUMBER.findall(str(line)):
            blank = sentinel_name(float(number) if "." in number else int(number))
            if blank:
                out.notes.append(f"test {test!r}: info quotes the DCGM blank sentinel {blank} ({number}): {line}")


def _read_entities(doc: dict[str, Any], out: DcgmDiagResult) -> None:
    for group in _as_list(doc.get("entity_groups")):
        if not isinstance(group, dict):
            continue
        name = str(group.get("entity_group", ""))
        for ent in _as_list(group.get("entities")):
            if not isinstance(ent, dict) or _int_or_none(ent.get("entity_id")) is None:
                out.notes.append(f"entity_groups {name!r}: an entity without an integer entity_id: {ent!r:.100}")
                continue
            out.entities.append(_entity(name, _int_or_none(ent["entity_id"]) or 0, ent.get("serial_num"), ent, out))
    serials = doc.get("GPU Device Serials")
    if isinstance(serials, dict):
        for key, serial in serials.items():
            if _int_or_none(key) is not None:
                out.entities.append(_entity("GPU", int(key), serial, {}, out))
    elif isinstance(serials, list):  # positional, as some writers do; kept by position
        for index, serial in enumerate(serials):
            out.entities.append(_entity("GPU", index, serial, {}, out))


def _entity(group: str, entity_id: int, serial: Any, raw: dict[str, Any], out: DcgmDiagResult) -> DcgmEntity:
    entity = DcgmEntity(group, entity_id, device_id=str(raw["device_id"]) if raw.get("device_id") else None)
    if serial is None or str(serial).strip() == "":
        entity.serial_unreadable = "absent"
    elif (blank := sentinel_name(serial)) is not None:
        entity.serial_unreadable = f"{serial!s} (DCGM blank sentinel {blank})"
    else:
        entity.serial = str(serial).strip()
    if entity.serial_unreadable:
        out.notes.append(f"{group} {entity_id}: serial unreadable: {entity.serial_unreadable}")
    return entity


def _string_value(value: Any, what: str, out: DcgmDiagResult) -> str | None:
    if value is None or str(value).strip() == "":
        return None
    if (blank := sentinel_name(value)) is not None:
        out.notes.append(f"{what} is the DCGM blank sentinel {blank}")
        return None
    return str(value).strip()


def _read_document(doc: dict[str, Any], iteration: int | None, out: DcgmDiagResult, version: str | None) -> None:
    """One diag document (the whole output, or one ``iterations[]`` element)."""
    if isinstance(doc.get("DCGM Diagnostic"), dict):
        layout, diag = "4.x", doc["DCGM Diagnostic"]
    elif isinstance(doc.get("DCGM GPU Diagnostic"), dict):
        diag = doc["DCGM GPU Diagnostic"]
        layout = "3.x" if _has_key(diag, "gpu_id") or "GPU Device Serials" in doc else "2.x"
    else:
        out.unknown.append(f"no 'DCGM Diagnostic' or 'DCGM GPU Diagnostic' object; keys: {sorted(doc)[:10]}")
        return
    out.layout = out.layout or layout
    metadata = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    found_version = metadata.get("version") or doc.get("version") or diag.get("version")
    out.version = out.version or _string_value(found_version, "DCGM version", out) or ""
    driver = metadata.get("Driver Version Detected") or doc.get("Driver Version Detected")
    driver = driver or diag.get("Driver Version Detected")
    out.driver_version = out.driver_version or _string_value(driver, "driver version", out)
    out.severity_enum = severity_enum_for(version or out.version, out.layout)
    if diag.get("runtime_error"):
        out.runtime_error = str(diag["runtime_error"])
        out.findings.append(
            Finding(
                "DCGM_RUNTIME_ERROR",
                Status.UNKNOWN,
                f"dcgmi diag could not run: {out.runtime_error}",
                evidence=out.runtime_error,
                action=Action.RETEST,
            )
        )
    _read_categories(diag, out.severity_enum, iteration, out)
    _read_entities(doc, out)


def _has_key(node: Any, key: str) -> bool:
    if isinstance(node, dict):
        return key in node or any(_has_key(v, key) for v in node.values())
    if isinstance(node, list):
        return any(_has_key(v, key) for v in node)
    return False


def _fail_on_226(out: DcgmDiagResult, evidence: str) -> None:
    """Exit 226 (DCGM_ST_NVVS_ERROR: dcgmi's verdict that the diagnostic failed) makes every ``"Fail"`` result FAIL,
    also one whose warnings alone read as WARN (a CONFIG or MONITOR severity, e.g. persistence mode off): dcgmi
    counted it as a failure, and an exit code may only make a result worse. The action stays mild (RETEST when the
    warning had none): the cause is often a setting, fixed and then retested."""
    softened = {(_subject(r.entity_group, r.gpu_ids), w.message) for r in out.results
                if r.status == "Fail" and r.verdict == Status.WARN for w in r.warnings}
    if not softened:
        return
    for r in out.results:
        if r.status == "Fail" and r.verdict == Status.WARN:
            r.verdict = Status.FAIL
    out.findings = [
        Finding(f.code, Status.FAIL, f"{f.message} -- a failure: dcgmi exited 226 ({evidence})", f.subject,
                f.evidence, f.action if f.action != Action.NONE else Action.RETEST)
        if f.status == Status.WARN and (f.subject, f.evidence) in softened else f
        for f in out.findings
    ]


def _apply_exit_code(out: DcgmDiagResult) -> None:
    """Exit-status findings; they only ever make the result worse (never PASS from an exit code)."""
    rc = out.exit_code
    if rc is None or rc == 0:
        return
    if rc < 0:  # Python's subprocess reports death by signal N as -N
        rc = 128 + (-rc)
    failing = any(f.status >= Status.WARN for f in out.findings) or out.runtime_error
    if rc in DCGMI_EXIT_CODES:
        name, value, meaning = DCGMI_EXIT_CODES[rc]
        evidence = f"exit status {out.exit_code} (DCGM_ST_{name} = {value})"
        if rc == 226:
            _fail_on_226(out, evidence)
            if not failing:
                message = f"dcgmi diag exited {rc}: {meaning}, but the JSON shows no failing test"
                out.findings.append(
                    Finding("DCGM_EXIT_NVVS_ERROR", Status.FAIL, message, evidence=evidence, action=Action.RETEST)
                )
            return
        if rc == 205:
            if not any(f.action == Action.RMA for f in out.findings):
                message = f"dcgmi diag exited {rc}: {meaning}"
                out.findings.append(
                    Finding("DCGM_EXIT_ISOLATE", Status.FAIL, message, evidence=evidence, action=Action.RMA)
                )
            return
        message = f"dcgmi diag exited {rc}: {meaning}; the diagnostic is incomplete"
        out.findings.append(
            Finding(f"DCGM_EXIT_{name}", Status.UNKNOWN, message, evidence=evidence, action=Action.RETEST)
        )
        return
    if 128 < rc <= 128 + 64:
        try:
            sig = signal.Signals(rc - 128).name
        except ValueError:
            sig = f"signal {rc - 128}"
        message = f"dcgmi diag was killed by {sig} (exit status {out.exit_code}); the diagnostic is incomplete"
        out.findings.append(
            Finding(
                "DCGM_KILLED_BY_SIGNAL",
                Status.UNKNOWN,
                message,
                evidence=f"exit status {out.exit_code}",
                action=Action.RETEST,
            )
        )
        return
    out.findings.append(
        Finding(
            "DCGM_EXIT_UNRECOGNISED",
            Status.UNKNOWN,
            f"dcgmi diag exited with unrecognised status {out.exit_code}",
            evidence=f"exit status {out.exit_code}",
            action=Action.RETEST,
        )
    )


def parse_diag_json(raw: str, *, exit_code: int | None = None, version: str | None = None) -> DcgmDiagResult:
    """Parse ``dcgmi diag -r N -j`` output (DCGM 2.x, 3.x and 4.x layouts, with or without ``--iterations``).

    Args:
        raw: the command's stdout.
        exit_code: the command's exit status when known (256+rc as the shell sees it, or -signal from Python).
        version: the DCGM version when known (``dcgmi -v``); it wins over the version in the document and selects the
            severity numbering (see :func:`severity_verdict`).

    Returns:
        A :class:`DcgmDiagResult`. Status: FAIL when a result is ``"Fail"`` and a warning's severity (or the absence
        of any warning) makes it a failure, or the exit status is 205 or 226 (dcgmi's own failure verdict); WARN
        when every failing warning is MONITOR or CONFIG and the exit status is not 226; UNKNOWN when the JSON is
        unreadable, nothing passed, the diagnostic had a runtime error or the exit status says it was killed, timed
        out or could not run; a ``"Pass"`` that carries warnings is WARN (UNKNOWN for DCGM_FR_MEMORY_ALLOC,
        NVIDIA/DCGM#284); PASS only when at least one test passed, none failed and no passing result carries a
        warning. Never raises.
    """
    out = DcgmDiagResult(exit_code=exit_code)
    _guarded(out, _read_diag, raw, out, version)
    _guarded(out, _apply_exit_code, out)
    return out


def _guarded(out: ToolResult, func: Any, *args: Any) -> None:
    """Run one parsing step; an exception on some unforeseen input shape becomes an UNKNOWN reason, never a raise."""
    try:
        func(*args)
    except Exception as exc:  # the parsers' contract: bad tool output never raises
        out.unknown.append(f"unexpected input shape ({type(exc).__name__}: {exc})"[:300])


def _read_diag(raw: str, out: DcgmDiagResult, version: str | None) -> None:
    doc = _load_json(raw, out.notes, out.unknown)
    if isinstance(doc, dict):
        if isinstance(doc.get("iterations"), list):
            for index, item in enumerate(doc["iterations"]):
                if isinstance(item, dict):
                    _read_document(item, index, out, version)
                else:
                    out.unknown.append(f"iterations[{index}] is not an object")
            out.overall_result = str(doc["Overall Result"]) if "Overall Result" in doc else None
            overall_fail = (out.overall_result or "").lower() == "fail"
            if overall_fail and not any(f.status == Status.FAIL for f in out.findings):
                message = "dcgmi diag --iterations reported Overall Result Fail"
                evidence = f"Overall Result: {out.overall_result}"
                out.findings.append(
                    Finding("DCGM_OVERALL_FAIL", Status.FAIL, message, evidence=evidence, action=Action.RETEST)
                )
        else:
            _read_document(doc, None, out, version)
        if version:
            out.version = version
    elif doc is not None:
        out.unknown.append(f"the JSON document is a {type(doc).__name__}, not an object")
    if out.layout and not out.runtime_error:
        if not out.results:
            out.unknown.append("the document holds no test result")
        elif not any(r.status == "Pass" for r in out.results) and not any(
            f.status >= Status.WARN for f in out.findings
        ):
            out.unknown.append("no test passed: every result is Skip or Not Run, so nothing was verified")


# --- dcgmi health -c -j ----------------------------------------------------------------------------------------------

_HEALTH_STATUS = {"healthy": Status.PASS, "warning": Status.WARN, "failure": Status.FAIL}

# Action for a Failure per watched system (a first cut; the verdict module refines it with history).
_HEALTH_FAIL_ACTIONS = {
    "MEMORY": Action.RESET_GPU,
    "SM": Action.RESET_GPU,
    "NVLINK": Action.RESET_GPU,
    "PCIE": Action.REBOOT,
    "DRIVER": Action.REBOOT,
}


@dataclass
class DcgmHealthSystem:
    """One watched system of one entity.

    Attributes:
        system: the system as written (``"PCIe system"``, ``"Memory system"``, ``"NVLINK system"``...).
        health: ``"Healthy"``, ``"Warning"``, ``"Failure"`` or what was written.
        status: ``health`` as a Status (UNKNOWN for anything else).
        messages: the incident messages (``overflow`` chunks joined; incidents are separated by ``", "``).
    """

    system: str
    health: str
    status: Status
    messages: str = ""


@dataclass
class DcgmHealthEntity:
    """One entity with incidents.

    Attributes:
        entity_group: ``"GPU"``, ``"Switch"``, ``"ConnectX"``...
        entity_id: the id as written (``"0"``).
        health: the entity's value, ``status`` its Status.
        systems: its systems with incidents.
    """

    entity_group: str
    entity_id: str
    health: str
    status: Status
    systems: list[DcgmHealthSystem] = field(default_factory=list)


@dataclass
class DcgmHealthResult(ToolResult):
    """``dcgmi health -c -j`` parsed.

    Attributes:
        overall: ``"Overall Health"`` value, None when absent.
        entities: entities with incidents (a healthy node lists none).
    """

    tool: str = "dcgmi health -c -j"
    overall: str | None = None
    entities: list[DcgmHealthEntity] = field(default_factory=list)


def _value(node: Any) -> str | None:
    return str(node["value"]) if isinstance(node, dict) and "value" in node else None


def _system_code(system: str) -> str:
    name = re.sub(r"\s*system$", "", system.strip(), flags=re.IGNORECASE)
    return "DCGM_HEALTH_" + (re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_") or "UNNAMED")


def _health_status(value: str | None, what: str, out: DcgmHealthResult) -> Status:
    status = _HEALTH_STATUS.get((value or "").strip().lower())
    if status is None:
        out.unknown.append(f"{what}: unreadable health value {value!r}")
        return Status.UNKNOWN
    return status


def _read_health_entity(group: str, entity_id: str, node: Any, out: DcgmHealthResult) -> None:
    health = _value(node) or ""
    entity = DcgmHealthEntity(group, entity_id, health, _health_status(health, f"{group} {entity_id}", out))
    children = node.get("children", {}) if isinstance(node, dict) else {}
    errors = children.get("Errors", {}) if isinstance(children, dict) else {}
    systems = errors.get("children") if isinstance(errors, dict) and "children" in errors else children
    subject = f"{'gpu' if group == 'GPU' else group.lower() + ' '}{entity_id}"
    for system, sysnode in (systems if isinstance(systems, dict) else {}).items():
        if system == "Errors" or not isinstance(sysnode, dict):
            continue
        value = _value(sysnode) or ""
        status = _health_status(value, f"{group} {entity_id} {system}", out)
        messages = " ".join(str(m) for m in _as_list(sysnode.get("overflow")))
        entity.systems.append(DcgmHealthSystem(system, value, status, messages))
        if status >= Status.WARN:
            code = _system_code(system)
            action = _HEALTH_FAIL_ACTIONS.get(code.removeprefix("DCGM_HEALTH_"), Action.RETEST)
            action = action if status == Status.FAIL else Action.NONE
            message = f"dcgmi health: {group} {entity_id} {system} is {value}: {messages or '(no message)'}"
            evidence = f"{system}: {value} {messages}".strip()
            out.findings.append(Finding(code, status, message, subject, evidence, action))
    if entity.status >= Status.WARN and not entity.systems:
        out.findings.append(
            Finding(
                "DCGM_HEALTH_ENTITY",
                entity.status,
                f"dcgmi health: {group} {entity_id} is {health} without a system",
                subject,
                f"{group} {entity_id}: {health}",
            )
        )
    out.entities.append(entity)


def parse_health_json(raw: str) -> DcgmHealthResult:
    """Parse ``dcgmi health -c -j`` output.

    Returns:
        A :class:`DcgmHealthResult`: one finding per system in Warning (WARN) or Failure (FAIL), code
        ``DCGM_HEALTH_<SYSTEM>`` (``DCGM_HEALTH_PCIE``, ``DCGM_HEALTH_MEMORY``...); UNKNOWN when the output is not the
        report (``"Error: Health watches not enabled..."``), lacks ``"Overall Health"`` or holds a value other than
        Healthy/Warning/Failure. An "Overall Health" worse than every entity still counts. Never raises.
    """
    out = DcgmHealthResult()
    _guarded(out, _read_health, raw, out)
    return out


def _read_health(raw: str, out: DcgmHealthResult) -> None:
    notes: list[str] = []
    doc = _load_json(raw, notes, out.unknown)
    if doc is None:
        return
    body = doc.get("body") if isinstance(doc, dict) else None
    if not isinstance(body, dict):
        out.unknown.append("no 'body' object: not a dcgmi health report")
        return
    out.overall = _value(body.get("Overall Health"))
    if out.overall is None:
        out.unknown.append("no 'Overall Health' value")
    overall = _health_status(out.overall, "Overall Health", out) if out.overall is not None else Status.UNKNOWN
    for group, gnode in body.items():
        if group == "Overall Health":
            continue
        children = gnode.get("children") if isinstance(gnode, dict) else None
        if not isinstance(children, dict):
            out.unknown.append(f"entity group {group!r} has no children object")
            continue
        for entity_id, enode in children.items():
            _read_health_entity(str(group), str(entity_id), enode, out)
    worst_found = max((f.status for f in out.findings), default=Status.PASS)
    if overall in (Status.WARN, Status.FAIL) and worst_found < overall:
        out.findings.append(
            Finding(
                "DCGM_HEALTH_OVERALL",
                overall,
                f"dcgmi health: Overall Health is {out.overall}",
                evidence=f"Overall Health: {out.overall}",
            )
        )
