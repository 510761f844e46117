"""dcgmi diag table reader on recorded tables (tests/fixtures/health/dcgmi/table/README.md names the sources)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hwaac.health import checks
from hwaac.health.dcgm_grading import grade_diag
from hwaac.health.parsers.dcgm import parse_diag_json
from hwaac.health.parsers.dcgm_text import parse_diag_table
from hwaac.health.result import Action, Status

DCGMI = Path(__file__).resolve().parents[2] / "fixtures" / "health" / "dcgmi"
TABLE = DCGMI / "table"


def read(name: str) -> str:
    return (TABLE / name).read_text()


@pytest.mark.parametrize(
    "name, status, layout, version, results",
    [
        ("4.4.2-dcgm124-diag-r2.txt", Status.PASS, "4.x", "4.4.2", 3),
        ("4.4.2-dcgm124-diag-r2-cut.txt", Status.UNKNOWN, "4.x", "4.4.2", 3),
        ("stas00-r2-gpu0-memory-fail-excerpt.txt", Status.FAIL, "3.x", "", 2),
        ("stas00-deployment-error-excerpt.txt", Status.FAIL, "3.x", "", 1),
    ],
)
def test_recorded_tables(name: str, status: Status, layout: str, version: str, results: int) -> None:
    r = grade_diag(parse_diag_table(read(name)))
    assert (r.status(), r.layout, r.version, len(r.results)) == (status, layout, version, results)


def test_wrapped_info_is_joined_onto_every_result_of_its_test() -> None:
    r = parse_diag_table(read("stas00-r2-gpu0-memory-info-excerpt_derived.txt"))
    passing, failing = r.results
    assert passing.info == failing.info
    assert passing.info[0].startswith("GPU 0 Thermal violations totaling 13.3 second s started")
    assert "thermal mat erial interface, fans" in passing.info[0]  # the wrapped chunks joined as printed
    assert not passing.warnings and not failing.warnings  # Info is not a warning


def test_cut_table_is_unknown_with_the_reason() -> None:
    r = parse_diag_table(read("4.4.2-dcgm124-diag-r2-cut.txt"))
    assert any("cut" in u for u in r.unknown)
    assert all(x.status == "Pass" for x in r.results)  # what was read is kept
    found = checks.check_dcgm(r)
    assert found and max(f.status for f in found) == Status.UNKNOWN


def test_4x_entity_lines_replace_the_summary() -> None:
    r = parse_diag_table(read("4.4.2-dcgm124-diag-r2.txt"))
    assert {(x.test, tuple(x.gpu_ids), x.entity_group, x.status) for x in r.results} == {
        ("software", (0,), "GPU", "Pass"),
        ("memory", (0,), "GPU", "Pass"),
        ("pcie", (0,), "GPU", "Pass"),
    }
    assert not r.unknown


def test_failing_gpu_is_named_and_its_warning_attached() -> None:
    r = grade_diag(parse_diag_table(read("stas00-r2-gpu0-memory-fail-excerpt.txt")))
    passing, failing = r.results
    assert (passing.gpu_ids, passing.status, failing.gpu_ids, failing.status) == (
        [1, 2, 3, 4, 5, 6, 7],
        "Pass",
        [0],
        "Fail",
    )
    assert failing.warnings[0].message.startswith("GPU 0 Thermal violations totaling 13.3 second s started")
    assert not passing.warnings
    assert r.gpu_status() == {**{i: Status.PASS for i in range(1, 8)}, 0: Status.FAIL}
    assert r.incomplete  # an excerpt: no header, no border
    assert not any(f.action in (Action.RESET_GPU, Action.REBOOT, Action.RMA) for f in checks.check_dcgm(r))


def test_deployment_error_row_is_a_failed_node_wide_result() -> None:
    r = grade_diag(parse_diag_table(read("stas00-deployment-error-excerpt.txt")))
    (error,) = r.results
    assert (error.test, error.category, error.status, error.gpu_ids) == ("Error", "Deployment", "Fail", [])
    assert error.warnings[0].message == "GPU 3 has uncorrectable memory errors and row remappings are pending"


def test_table_and_json_give_the_same_facts_for_the_same_shape() -> None:
    # the recorded 4.2.3 GB10 JSON and the recorded 4.4.2 table (DCGM#124): same 4.x layout, a software pass on GPU 0
    js = parse_diag_json((DCGMI / "4.2.3-gb10" / "diag-r1-pass.json").read_text())
    tb = parse_diag_table(read("4.4.2-dcgm124-diag-r2.txt"))
    pick = [(x.test, x.category, x.entity_group, x.gpu_ids, x.status) for x in js.results if x.test == "software"]
    assert pick == [
        (x.test, x.category, x.entity_group, x.gpu_ids, x.status) for x in tb.results if x.test == "software"
    ]
    assert (js.layout, js.severity_enum) == (tb.layout, tb.severity_enum)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "empty output"),
        (
            "Error: unable to establish a connection to the specified host: localhost\n",
            "line 1 is not a table row: 'Error: unable to establish a connection to the specified host: localhost'",
        ),
    ],
)
def test_not_a_table_is_unknown(raw: str, reason: str) -> None:
    """Rejected by the reader with its reason first (a crash caught by guarded() would be UNKNOWN too)."""
    r = grade_diag(parse_diag_table(raw))
    assert r.status() == Status.UNKNOWN and r.findings == [] and r.unknown[0] == reason


# --- docs/health-dcgm-table.md draws the recorded tables ---------------------------------------------------------

PAGE = (Path(__file__).resolve().parents[3] / "docs" / "health-dcgm-table.md").read_text()
BLOCKS = re.findall(r"^```text\n(.*?)^```$", PAGE, re.M | re.S)
DRAWN = [line.strip() for block in BLOCKS for line in block.splitlines() if line.strip()[:1] in "|+"]
RECORDED = {line.strip() for path in TABLE.glob("*.txt") for line in path.read_text().splitlines()}


def test_every_dcgm_version_the_page_names_is_recorded() -> None:
    versions = set(re.findall(r"\b\d+\.\d+\.\d+\b", PAGE))
    assert versions and all(any(v in path.name or v in path.read_text() for path in TABLE.glob("*")) for v in versions)


def test_every_table_row_the_page_draws_is_a_recorded_row() -> None:
    assert len(BLOCKS) == 2 and DRAWN and [line for line in DRAWN if line not in RECORDED] == []


def test_the_pages_4x_table_reads_as_complete() -> None:
    r = grade_diag(parse_diag_table(BLOCKS[0]))  # the first table drawn: a whole one
    assert (r.status(), r.layout, r.version, r.unknown) == (Status.PASS, "4.x", "4.4.2", [])
