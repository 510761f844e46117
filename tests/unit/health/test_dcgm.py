"""dcgmi diag -j and dcgmi health -c -j parsers on recorded outputs (tests/fixtures/health/dcgmi, see its READMEs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hwaac.health import checks
from hwaac.health.dcgm_grading import grade_diag, grade_health, severity_verdict
from hwaac.health.parsers.dcgm import parse_diag_json
from hwaac.health.parsers.dcgm_health import DcgmHealthResult, parse_health_json
from hwaac.health.parsers.dcgm_model import DCGM_ERROR_NAMES, DcgmDiagResult, sentinel_name, severity_enum_for
from hwaac.health.result import DESTRUCTIVE_ACTIONS, Action, Status

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "health"
DCGMI = FIX / "dcgmi"
V2 = DCGMI / "2.x-virtualclient"
V31 = DCGMI / "3.1.0-nvvs-jsonresult"
V33 = DCGMI / "3.3.1-issue139"
V4 = DCGMI / "4.2.3-gb10"


def graded_health(raw: str) -> DcgmHealthResult:
    """Read ``dcgmi health -c -j`` (its words) and grade them, as check_dcgm does."""
    return grade_health(parse_health_json(raw))


def graded(raw: str, **kw: object) -> DcgmDiagResult:
    """Read (the parser's facts) and grade (the check layer), as check_dcgm does."""
    return grade_diag(parse_diag_json(raw, **kw))  # type: ignore[arg-type]


def read(path: Path) -> str:
    return path.read_text()


def codes(result) -> list[str]:
    return [f.code for f in result.all_findings()]


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


# --- dcgmi health -c -j ----------------------------------------------------------------------------------------------


def test_health_healthy():
    r = graded_health(read(V2 / "health-healthy.json"))
    assert r.status() == Status.PASS and r.overall == "Healthy" and r.entities == []


def test_health_failure_per_gpu_and_system():
    r = graded_health(read(V2 / "health-failure.json"))
    assert r.status() == Status.FAIL and r.overall == "Failure"
    by_code = {f.code: f for f in r.findings}
    pcie, memory = by_code["DCGM_HEALTH_PCIE"], by_code["DCGM_HEALTH_MEMORY"]
    assert (pcie.status, pcie.subject, pcie.action) == (Status.WARN, "gpu0", Action.NONE)
    assert (memory.status, memory.subject, memory.action) == (Status.FAIL, "gpu1", Action.RESET_GPU)
    # overflow chunks joined back into the message
    assert "for GPU 0 : 13" in pcie.message
    assert "row remapping failed." in memory.message
    entities = [(e.entity_group, e.entity_id, e.health) for e in r.entities]
    assert entities == [("GPU", "0", "Warning"), ("GPU", "1", "Failure")]
    assert r.entities[1].systems[0].system == "Memory system"


def test_health_words_are_facts_until_graded():
    facts = parse_health_json(read(V2 / "health-failure.json"))
    assert facts.findings == [] and not facts.incomplete and facts.status() == Status.UNKNOWN  # ungraded
    assert [(s.system, s.health) for e in facts.entities for s in e.systems] == [
        ("PCIe system", "Warning"),
        ("Memory system", "Failure"),
    ]
    once = grade_health(facts).findings[:]
    assert grade_health(facts).findings == once  # grading twice adds nothing


def test_health_overall_warning_without_entities_still_warns():
    doc = json.loads(read(V2 / "health-healthy.json"))
    doc["body"]["Overall Health"]["value"] = "Warning"
    r = graded_health(json.dumps(doc))
    assert r.status() == Status.WARN and codes(r) == ["DCGM_HEALTH_OVERALL"]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (
            "Error: Health watches not enabled. Please enable watches. \n",
            "no JSON object in the output; first line: 'Error: Health watches not enabled. Please enable watches.'",
        ),
        (
            '{"body": {"Overall Health": {"value": "Internal error"}}, "header": ["Health Monitor Report"]}',
            "Overall Health: unreadable health value 'Internal error'",
        ),
        ('{"header": ["Health Monitor Report"]}', "no 'body' object: not a dcgmi health report"),
        ('{"body": {}}', "no 'Overall Health' value"),
    ],
)
def test_health_unreadable_is_unknown(raw, reason):
    """The parser's own rejection, not a crash of it (``guarded`` would also give UNKNOWN, with another reason)."""
    result = graded_health(raw)
    assert result.status() == Status.UNKNOWN
    assert (result.unknown, result.findings) == ([reason], [])


# --- never PASS on bad input ------------------------------------------------------------------------------------------

BAD_INPUTS = {
    "empty": "",
    "whitespace": "  \n",
    "garbage": "\x00\x01 not json at all {{{",
    "json-array": "[1, 2, 3]",
    "json-other": '{"foo": {"bar": 1}}',
    "truncated-4x": read(V4 / "diag-r1-pass.json")[:400],
    "truncated-2x": read(V2 / "diag-r3.json")[:1500],
    "gpu-burn": read(FIX / "gpu-burn" / "superbench-a100" / "gpu_burn.log"),
    "nvbandwidth": read(FIX / "nvbandwidth" / "v0.6-superbench" / "nvbandwidth_results.log"),
    "health-as-diag": read(V2 / "health-healthy.json"),
}
NOT_JSON = "no JSON object in the output; first line: "
TORN = "the JSON document does not parse ("
# how the reader rejects each bad input (the start of its one reason): a crash caught by dcgm_model.guarded would
# be UNKNOWN too, with "unexpected input shape (...)", so only the reason tells a rejection from a crash
REJECTED_AS = {
    "empty": ("empty output", "empty output"),
    "whitespace": ("empty output", "empty output"),
    "garbage": (TORN, TORN),
    "json-array": (NOT_JSON + "'[1, 2, 3]'", NOT_JSON + "'[1, 2, 3]'"),
    "json-other": (
        "no 'DCGM Diagnostic' or 'DCGM GPU Diagnostic' object; keys: ['foo']",
        "no 'body' object: not a dcgmi health report",
    ),
    "truncated-4x": (TORN, TORN),
    "truncated-2x": (TORN, TORN),
    "gpu-burn": (NOT_JSON + "'GPU 0: NVIDIA A100", NOT_JSON + "'GPU 0: NVIDIA A100"),
    "nvbandwidth": (NOT_JSON + "'nvbandwidth Version: v0.6'", NOT_JSON + "'nvbandwidth Version: v0.6'"),
    "health-as-diag": ("no 'DCGM Diagnostic' or 'DCGM GPU Diagnostic' object; keys: ['body', 'header']", None),
}


def _rejected(result: DcgmDiagResult | DcgmHealthResult, reason: str) -> None:
    assert result.status() == Status.UNKNOWN
    assert result.findings == [] and len(result.unknown) == 1, result.unknown
    assert result.unknown[0].startswith(reason), result.unknown


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_diag_bad_input_is_rejected_not_passed(name):
    _rejected(graded(BAD_INPUTS[name]), REJECTED_AS[name][0])


@pytest.mark.parametrize("name", sorted(set(BAD_INPUTS) - {"health-as-diag"}))
def test_health_bad_input_is_rejected_not_passed(name):
    _rejected(graded_health(BAD_INPUTS[name]), REJECTED_AS[name][1] or "")


def test_diag_as_health_input_is_unknown():
    assert graded_health(read(V4 / "diag-r1-pass.json")).status() == Status.UNKNOWN


@pytest.mark.parametrize("path", sorted(p for p in DCGMI.rglob("diag-*") if p.is_file()), ids=lambda p: p.name)
@pytest.mark.parametrize("cut", [0.25, 0.5, 0.9])
def test_every_diag_fixture_truncated_is_never_pass(path, cut):
    text = read(path)
    assert graded(text[: int(len(text) * cut)]).status() == Status.UNKNOWN


def test_an_unforeseen_parser_error_is_unknown_not_raised(monkeypatch):
    import hwaac.health.parsers.dcgm as dcgm
    import hwaac.health.parsers.dcgm_health as dcgm_health

    def boom(*_args):
        raise KeyError("surprise")

    monkeypatch.setattr(dcgm, "_read_document", boom)
    monkeypatch.setattr(dcgm_health, "_read_health_entity", boom)
    r = graded(read(V4 / "diag-r1-pass.json"), exit_code=0)
    assert r.status() == Status.UNKNOWN and any("KeyError" in u for u in r.unknown)
    health = parse_health_json(read(V2 / "health-failure.json"))
    assert health.incomplete and any("KeyError" in u for u in health.unknown)
    # what was read before the error still counts (Overall Health: Failure), but only a retest is recommended
    found = checks.check_dcgm(health)
    assert "PARSE_UNREADABLE" in {f.code for f in found}
    assert not any(f.action in DESTRUCTIVE_ACTIONS for f in found)


def test_pass_with_a_memory_alloc_warning_is_not_pass():
    # NVIDIA/DCGM#284: the memory test can record DCGM_FR_MEMORY_ALLOC (56) and still report Pass.
    doc = json.loads(read(V4 / "diag-r1-exit226.json"))
    result = doc["DCGM Diagnostic"]["test_categories"][0]["tests"][0]["results"][0]
    result["status"] = "Pass"
    result["warnings"][0].update(error_id=56, error_severity=1, warning="Cannot allocate memory")
    r = graded(json.dumps(doc))
    assert r.status() == Status.UNKNOWN
    assert r.findings[0].code == "DCGM_MEMORY_ALLOC" and r.findings[0].action == Action.RETEST
    result["warnings"][0].update(error_id=29)
    assert graded(json.dumps(doc)).status() == Status.WARN
