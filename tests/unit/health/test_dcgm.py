"""dcgmi diag -j parser on recorded outputs (tests/fixtures/health/dcgmi, see its READMEs): the 2.x, 3.3 and 4.x
layouts and the severity rule. dcgmi health -c -j: test_dcgm_health.py; bad input: test_dcgm_bad_input.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hwaac.health.dcgm_grading import grade_diag, severity_verdict
from hwaac.health.parsers.dcgm import parse_diag_json
from hwaac.health.parsers.dcgm_model import DCGM_ERROR_NAMES, sentinel_name, severity_enum_for
from hwaac.health.result import Action, Status
from tests.unit.health.dcgm_samples import V2, V4, V31, V33, codes, graded, read

# --- DCGM 2.x layout (VirtualClient) ----------------------------------------------------------------------------------


def test_the_reader_returns_facts_and_the_check_layer_grades() -> None:
    facts = parse_diag_json(read(V4 / "diag-r1-row-remap-isolate-exit205.json"), exit_code=205)
    assert facts.findings == [] and not facts.graded and facts.status() == Status.UNKNOWN  # never PASS ungraded
    assert [r.verdict for r in facts.results] == [None] * len(facts.results)
    assert any(r.status == "Fail" for r in facts.results) and facts.exit_code == 205
    graded_once = grade_diag(facts)
    assert graded_once.status() == Status.FAIL and grade_diag(facts).findings == graded_once.findings


def test_2x_level2_healthy_reads_every_result():
    r = graded(read(V2 / "diag-r2.json"))
    assert r.status() == Status.PASS
    assert r.layout == "2.x"
    assert r.severity_enum == "unknown"  # no version in a 2.x document
    # 9 Deployment tests (node-wide, no GPU id) + PCIe + GPU Memory for "gpu_ids": "0"
    assert len(r.results) == 11
    deployment = [x for x in r.results if x.category == "Deployment"]
    assert len(deployment) == 9 and all(x.gpu_ids == [] and x.status == "Pass" for x in deployment)
    pcie = next(x for x in r.results if x.test == "PCIe")
    assert pcie.gpu_ids == [0]
    assert "13.15 GB/s" in pcie.info[0]  # "GPU to Host bandwidth:\t\t13.15 GB/s" in the fixture
    assert r.gpu_status() == {0: Status.PASS}


# file, nulls written in it, (category, test, gpu ids) of every result read, GPUs; all results pass in both
NULL_ENTRIES = [
    # recorded (DCGM 3.1.0): a null between every two Deployment tests; "Custom" software, integer gpu_ids per GPU
    (
        V31 / "diag-software-null-entries.txt",
        8,
        [
            ("Deployment", name, list(range(8)))
            for name in (
                "Denylist",
                "NVML Library",
                "CUDA Main Library",
                "Permissions and OS-related Blocks",
                "Persistence Mode",
                "Environmental Variables",
                "Page Retirement/Row Remap",
                "Graphics Processes",
                "Inforom",
            )
        ]
        + [("Custom", "software", [gpu]) for gpu in range(8)],
        set(range(8)),
    ),
    # derived: the VirtualClient r2 document with nulls between tests and between the two categories
    (
        V2 / "diag-r2-null-entries_derived.json",
        9,
        [
            ("Deployment", name, [])
            for name in (
                "Denylist",
                "NVML Library",
                "CUDA Main Library",
                "Permissions and OS Blocks",
                "Persistence Mode",
                "Environment Variables",
                "Page Retirement/Row Remap",
                "Graphics Processes",
                "Inforom",
            )
        ]
        + [("Integration", "PCIe", [0]), ("Hardware", "GPU Memory", [0])],
        {0},
    ),
]


@pytest.mark.parametrize(("path", "nulls", "results", "gpus"), NULL_ENTRIES, ids=lambda v: getattr(v, "name", ""))
def test_null_entries_between_tests_are_skipped_not_unknown(path: Path, nulls: int, results: list, gpus: set) -> None:
    r = graded(read(path))
    assert r.status() == Status.PASS and not r.unknown
    assert [(x.category, x.test, x.gpu_ids) for x in r.results] == results
    assert all(x.status == "Pass" for x in r.results)
    assert sum("null" in n for n in r.notes) == nulls
    assert r.gpu_status() == dict.fromkeys(gpus, Status.PASS)


def test_31_text_before_the_document_and_the_pre_33_numbering():
    r = graded(read(V31 / "diag-software-null-entries.txt"))
    assert (r.version, r.severity_enum) == ("3.1.0", "pre-3.3")  # "version" : "3.1.0" inside the root object
    assert any("WARNING: THIS SHOULD NOT HAPPEN" in n for n in r.notes)


def test_null_in_place_of_a_test_list_is_still_unreadable():
    doc = json.loads(read(V2 / "diag-r2.json"))
    doc["DCGM GPU Diagnostic"]["test_categories"][0]["tests"] = None
    r = graded(json.dumps(doc))
    assert r.status() == Status.UNKNOWN and r.findings == []
    # the reader's own reason: iterating the null would be a crash, which guarded() also makes UNKNOWN
    assert r.unknown == [
        "a test category is not an object with a tests list: {'category': 'Deployment', 'tests': None}"
    ]


def test_2x_level3_skip_of_one_test_is_not_a_fault():
    r = graded(read(V2 / "diag-r3.json"))
    assert r.status() == Status.PASS
    assert len(r.results) == 16
    eud = next(x for x in r.results if x.test == "EUD Test")
    assert eud.status == "Skip" and eud.verdict == Status.PASS
    assert r.test_status()["Targeted Power"] == Status.PASS


def test_2x_string_warning_on_fail_is_fail():
    # The 2.x writer put warnings as plain strings (VirtualClient's DCGMIIncorrectresults.json shows one): no severity.
    doc = json.loads(read(V2 / "diag-r2.json"))
    cuda = doc["DCGM GPU Diagnostic"]["test_categories"][0]["tests"][2]
    cuda["results"][0] = {"status": "Fail", "warnings": "Cannot open library libcuda.so"}
    r = graded(json.dumps(doc))
    assert r.status() == Status.FAIL
    finding = next(f for f in r.findings if f.status == Status.FAIL)
    assert finding.code == "DCGM_TEST_FAILED"
    assert finding.evidence == "Cannot open library libcuda.so"
    assert finding.subject == ""  # a node-wide Deployment result


# --- DCGM 3.3 layout (NVIDIA/DCGM#139) --------------------------------------------------------------------------------


def test_33_all_skip_is_unknown_not_pass():
    r = graded(read(V33 / "diag-r3-all-skip.json"))
    assert r.layout == "3.x"
    assert [x.test for x in r.results] == ["PCIe", "GPU Memory", "Diagnostic", "EUD Test", "Targeted Stress"]
    assert all(x.status == "Skip" and x.gpu_ids == [0] for x in r.results)
    assert r.status() == Status.UNKNOWN
    assert any("no test passed" in u for u in r.unknown)


def test_33_truncated_paste_is_unknown():
    r = graded(read(V33 / "diag-r3-as-read.txt"))
    assert r.status() == Status.UNKNOWN
    assert any("does not parse" in u for u in r.unknown)


@pytest.mark.parametrize(
    ("version", "status", "action", "severity"),
    [
        ("3.3.1", Status.WARN, Action.NONE, "MONITOR"),  # since 3.3: 1 = MONITOR
        ("3.1.8", Status.FAIL, Action.RMA, "ISOLATE"),  # before 3.3: 1 = ISOLATE
        (None, Status.FAIL, Action.RETEST, "ambiguous 1"),  # unknown numbering: worse reading, rerun first
    ],
)
def test_33_severity_is_read_with_the_versions_numbering(version, status, action, severity):
    r = graded(read(V33 / "diag-r3-memory-fail-severity1.json"), version=version)
    assert r.status() == status
    finding = next(f for f in r.findings if f.code == "DCGM_UNCORRECTABLE_ROW_REMAP")  # error_id 84
    assert finding.status == status and finding.action == action and finding.subject == "gpu0"
    assert finding.evidence == "GPU 0 had uncorrectable memory errors and 1 rows were remapped"
    warning = next(x for x in r.results if x.test == "GPU Memory").warnings[0]
    assert (warning.error_id, warning.error_category, warning.error_severity) == (84, 10, 1)
    assert warning.severity_name.startswith(severity)


# --- DCGM 4.x layout (GB10, DCGM 4.2.3) -------------------------------------------------------------------------------


def test_4x_exit_226_with_config_warning_written_as_fail():
    # Recorded: dcgmi exited 226; the software test is "Fail" but its only warning is PERSISTENCE_MODE, severity CONFIG.
    r = graded(read(V4 / "diag-r1-exit226.json"), exit_code=226)
    # exit 226 is dcgmi's own "the diagnostic failed" (DCGM_ST_NVVS_ERROR): a FAIL, but not an RMA-grade one
    assert r.status() == Status.FAIL
    assert (r.layout, r.severity_enum, r.version, r.driver_version) == ("4.x", "3.3+", "4.2.3", "580.82.09")
    finding = r.findings[0]
    assert finding.code == "DCGM_PERSISTENCE_MODE" and finding.status == Status.FAIL and finding.subject == "gpu0"
    assert finding.action == Action.RETEST and "exited 226" in finding.message
    assert finding.evidence.startswith("Persistence Mode: Persistence mode for GPU 0 is disabled.")
    assert "DCGM_EXIT_NVVS_ERROR" not in codes(r)  # the JSON explains the 226
    assert r.test_status() == {"software": Status.FAIL}
    assert r.gpu_status() == {0: Status.FAIL}
    # the same document without the exit status: the CONFIG severity alone reads as a warning
    unexited = graded(read(V4 / "diag-r1-exit226.json"))
    assert unexited.status() == Status.WARN and unexited.findings[0].status == Status.WARN
    # serial_num "<<<NOT_SUPPORTED>>>" and the SRAM info value 9223372036854775794 are sentinels, not values
    assert r.serials() == {0: None}
    assert r.entities[0].device_id == "2e12"
    assert any("NOT_SUPPORTED" in n and "9223372036854775794" in n for n in r.notes)


def test_4x_healthy():
    r = graded(read(V4 / "diag-r1-pass.json"), exit_code=0)
    assert r.status() == Status.PASS
    assert r.results[0].entity_group == "GPU" and r.results[0].gpu_ids == [0]


def test_4x_isolate_row_remap_failure_is_fail_with_rma():
    r = graded(read(V4 / "diag-r1-row-remap-isolate-exit205.json"), exit_code=205)
    assert r.status() == Status.FAIL
    finding = r.findings[0]
    assert (finding.code, finding.status, finding.action) == ("DCGM_ROW_REMAP_FAILURE", Status.FAIL, Action.RMA)
    assert "row remapping failed" in finding.evidence
    assert "DCGM_EXIT_ISOLATE" not in codes(r)  # the JSON already carries the RMA-grade failure
    assert r.serials() == {0: "0000000000001"}


def test_runtime_error_is_unknown_with_the_exit_reason():
    r = graded(read(V4 / "diag-r1-runtime-error-exit203.json"), exit_code=203)
    assert r.status() == Status.UNKNOWN
    assert r.runtime_error == "The NVVS process was killed by a signal"
    assert {"DCGM_RUNTIME_ERROR", "DCGM_EXIT_NVVS_KILLED"} <= set(codes(r))
    assert all(f.action == Action.RETEST for f in r.findings)


@pytest.mark.parametrize(
    ("exit_code", "status", "code"),
    [
        (0, Status.PASS, None),
        (None, Status.PASS, None),
        (226, Status.FAIL, "DCGM_EXIT_NVVS_ERROR"),  # a test error the JSON does not show
        (205, Status.FAIL, "DCGM_EXIT_ISOLATE"),
        (203, Status.UNKNOWN, "DCGM_EXIT_NVVS_KILLED"),
        (253, Status.UNKNOWN, "DCGM_EXIT_GENERIC_ERROR"),
        (250, Status.UNKNOWN, "DCGM_EXIT_NOT_SUPPORTED"),
        (245, Status.UNKNOWN, "DCGM_EXIT_TIMEOUT"),
        (222, Status.UNKNOWN, "DCGM_EXIT_IN_USE"),
        (137, Status.UNKNOWN, "DCGM_KILLED_BY_SIGNAL"),  # 128 + SIGKILL
        (-15, Status.UNKNOWN, "DCGM_KILLED_BY_SIGNAL"),  # Python's -SIGTERM
        (7, Status.UNKNOWN, "DCGM_EXIT_UNRECOGNISED"),
    ],
)
def test_exit_codes_only_make_a_healthy_document_worse(exit_code, status, code):
    r = graded(read(V4 / "diag-r1-pass.json"), exit_code=exit_code)
    assert r.status() == status
    if code:
        finding = next(f for f in r.findings if f.code == code)
        assert str(abs(exit_code)) in finding.evidence
    if exit_code == 205:
        assert r.findings[0].action == Action.RMA
    if exit_code == 137:
        assert "SIGKILL" in r.findings[0].message


def test_fail_without_warnings_is_fail():
    doc = json.loads(read(V4 / "diag-r1-pass.json"))
    doc["DCGM Diagnostic"]["test_categories"][0]["tests"][0]["results"][0]["status"] = "Fail"
    r = graded(json.dumps(doc))
    assert r.status() == Status.FAIL
    assert codes(r) == ["DCGM_TEST_FAILED"]


def _with_warning(error_id: int, severity: int) -> str:
    doc = json.loads(read(V4 / "diag-r1-exit226.json"))
    warning = doc["DCGM Diagnostic"]["test_categories"][0]["tests"][0]["results"][0]["warnings"][0]
    warning.update(error_id=error_id, error_severity=severity)
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("error_id", "severity", "code", "status", "action"),
    [
        (131, 1, "DCGM_CONTAINED_ERROR", Status.WARN, Action.RESTART_APP),  # MONITOR; "Restart the application"
        (132, 2, "DCGM_UNCORRECTABLE_ROW_REMAP_LIMIT", Status.FAIL, Action.RMA),  # ISOLATE
        (85, 6, "DCGM_PENDING_ROW_REMAP", Status.FAIL, Action.RESET_GPU),  # RESET
        (120, 4, "DCGM_FALLEN_OFF_BUS", Status.FAIL, Action.REBOOT),  # TRIAGE; off the bus needs a reboot
        (130, 0, "DCGM_RETEST_REQUESTED", Status.UNKNOWN, Action.RETEST),
        (999, 3, "DCGM_ERROR_999", Status.FAIL, Action.RETEST),  # an id newer than our table
    ],
)
def test_error_ids_map_to_codes_and_actions(error_id, severity, code, status, action):
    r = graded(_with_warning(error_id, severity))
    finding = r.findings[0]
    assert (finding.code, finding.status, finding.action) == (code, status, action)


def test_iterations_are_read_each_and_overall_fail_counts():
    passing = json.loads(read(V4 / "diag-r1-pass.json"))
    failing = json.loads(read(V4 / "diag-r1-row-remap-isolate-exit205.json"))
    r = graded(json.dumps({"iterations": [passing, failing], "Overall Result": "Fail"}))
    assert r.status() == Status.FAIL
    assert [x.iteration for x in r.results] == [0, 1]
    assert r.overall_result == "Fail"
    r2 = graded(json.dumps({"iterations": [passing, passing], "Overall Result": "Fail"}))
    assert codes(r2) == ["DCGM_OVERALL_FAIL"]


def test_text_before_the_json_is_noted_not_fatal():
    r = graded("Successfully ran diagnostic for group.\n" + read(V4 / "diag-r1-pass.json"))
    assert r.status() == Status.PASS
    assert any("Successfully ran diagnostic" in n for n in r.notes)


# --- the severity rule and tables -------------------------------------------------------------------------------------


def test_severity_numbering_by_version_and_layout():
    assert severity_enum_for(None, "4.x") == "3.3+"
    assert severity_enum_for("3.3.0", "3.x") == "3.3+"
    assert severity_enum_for("3.2.6", "3.x") == "pre-3.3"
    assert severity_enum_for("2.4.7", "2.x") == "pre-3.3"
    assert severity_enum_for(None, "3.x") == "unknown"


def test_severity_verdicts():
    assert severity_verdict(5, "3.3+")[:2] == (Status.WARN, Action.NONE)  # CONFIG
    assert severity_verdict(2, "3.3+")[:2] == (Status.FAIL, Action.RMA)  # ISOLATE
    assert severity_verdict(1, "pre-3.3")[:2] == (Status.FAIL, Action.RMA)  # ISOLATE before 3.3
    assert severity_verdict(0, "pre-3.3")[:2] == (Status.WARN, Action.NONE)  # MONITOR before 3.3
    for ambiguous in (0, 1, 2):
        assert severity_verdict(ambiguous, "unknown")[:2] == (Status.FAIL, Action.RETEST)
    assert severity_verdict(6, "unknown")[:2] == (Status.FAIL, Action.RESET_GPU)  # exists only since 3.3
    assert severity_verdict(None, "3.3+")[0] == Status.FAIL
    assert severity_verdict(42, "3.3+")[0] == Status.FAIL


def test_error_name_table_transcribed_from_dcgm_errors_h():
    assert len(DCGM_ERROR_NAMES) == 133  # ids 0..132, DCGM_FR_ERROR_SENTINEL = 133
    assert DCGM_ERROR_NAMES[29] == "PERSISTENCE_MODE"
    assert DCGM_ERROR_NAMES[80] == "ROW_REMAP_FAILURE"
    assert DCGM_ERROR_NAMES[119] == "NVLINK_EFFECTIVE_BER_THRESHOLD"
    assert DCGM_ERROR_NAMES[131] == "CONTAINED_ERROR"
    assert DCGM_ERROR_NAMES[132] == "UNCORRECTABLE_ROW_REMAP_LIMIT"


def test_blank_sentinels():
    assert sentinel_name(0x7FFFFFFFFFFFFFF0) == "BLANK"
    assert sentinel_name(9223372036854775794) == "NOT_SUPPORTED"
    assert sentinel_name(0x7FFFFFF0) == "BLANK"
    assert sentinel_name(140737488355328.0) == "BLANK"
    assert sentinel_name("<<<NULL>>>") == "NULL"
    assert sentinel_name("9223372036854775794") == "NOT_SUPPORTED"
    assert sentinel_name(0) is None and sentinel_name("1650000000000") is None and sentinel_name(True) is None
