"""Reports: the JSON document's shape, JUnit XML that xml.etree reads with the right counts, the Markdown
tables, the terminal table; each names the fault once with both ends."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from hwaac.verify.report import render, to_json, to_junit, to_markdown, to_table
from hwaac.verify.runner import Report, judge
from tests.unit.verify.recordings import fixture_inputs, recorded

RESULT_KEYS = {
    "check",
    "object",
    "status",
    "expected",
    "actual",
    "cable",
    "ends",
    "devices",
    "fault",
    "explained_by",
    "message",
}


def report(scenario: str) -> Report:
    return judge(fixture_inputs(), recorded(scenario))


def test_json_document() -> None:
    doc = json.loads(to_json(report("swapped_uplinks")))
    assert doc["format"] == "hwaac-verify-report/1"
    assert (doc["fabric"], doc["passed"]) == ("vrec", False)
    assert doc["counts"] == {"PASS": 148, "FAIL": 4, "SKIP": 4, "ERROR": 0}
    assert len(doc["results"]) == sum(doc["counts"].values())
    assert all(set(r) == RESULT_KEYS for r in doc["results"])
    assert doc["faults"] == [
        {
            "fault": "L0000000",
            "object": "leaf-p0-su01-r0 Ethernet8 <-> spine-p0-01 Ethernet0",
            "checks": ["VerifyLldpNeighbors", "VerifyBgpSessions"],
            "kinds": ["miswired", "session"],
        },
        {
            "fault": "L0000001",
            "object": "leaf-p0-su01-r0 Ethernet12 <-> spine-p0-02 Ethernet0",
            "checks": ["VerifyLldpNeighbors", "VerifyBgpSessions"],
            "kinds": ["miswired", "session"],
        },
    ]
    fail = next(r for r in doc["results"] if r["status"] == "FAIL")
    assert fail["ends"] == ["leaf-p0-su01-r0 Ethernet8", "spine-p0-01 Ethernet0"] and fail["cable"] == "L0000000"


def test_json_of_a_switch_down_names_the_switch_once() -> None:
    doc = json.loads(to_json(report("spine_down")))
    assert [f["fault"] for f in doc["faults"]] == ["spine-p0-02"]
    assert doc["faults"][0]["checks"] == ["VerifyDevicesAnswer", "VerifyBgpSessions"]
    assert doc["faults"][0]["kinds"] == ["device"]


def test_junit_parses_with_counts_per_check() -> None:
    rep = report("link_down")
    root = ET.fromstring(to_junit(rep))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("156", "3", "0", "2")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == rep.checks
    lldp = suites["VerifyLldpNeighbors"]
    assert (lldp.get("tests"), lldp.get("failures")) == ("24", "1")
    (failed,) = [c for c in lldp.findall("testcase") if c.find("failure") is not None]
    assert failed.get("name") == "leaf-p0-su01-r0 Ethernet8 <-> spine-p0-01 Ethernet0"
    assert failed.get("classname") == "hwaac.verify.VerifyLldpNeighbors"
    text = failed.find("failure").text
    assert "cable: L0000000 (leaf-p0-su01-r0 Ethernet8 <-> spine-p0-01 Ethernet0)" in text
    skipped = [c for c in root.iter("testcase") if c.find("skipped") is not None]
    assert [c.find("skipped").get("message") for c in skipped] == ["explained by L0000000: session down"] * 2


def test_markdown_tables() -> None:
    md = to_markdown(report("link_down"))
    lines = md.splitlines()
    assert lines[0] == "# hwaac verify: vrec - FAIL"
    assert "| VerifyInterfaceState | 23 | 1 | 0 | 0 |" in lines
    assert (
        "| L0000000 | leaf-p0-su01-r0 Ethernet8 <-> spine-p0-01 Ethernet0 | "
        "VerifyInterfaceState, VerifyLldpNeighbors, VerifyBgpSessions |"
    ) in lines
    rows = [ln for ln in lines if ln.startswith("| FAIL |") or ln.startswith("| SKIP |") or ln.startswith("| PASS |")]
    assert len(rows) == 3 + 2 + 1  # the FAILs, the SKIPs and the degraded PASS (ECMP)
    assert all(ln.count(" | ") == 6 for ln in rows)  # a | inside a cell is escaped


def test_markdown_of_a_healthy_fabric_lists_no_result_rows() -> None:
    md = to_markdown(report("healthy"))
    assert md.splitlines()[0] == "# hwaac verify: vrec - PASS"
    assert "## Faults" not in md and "## Results" not in md
    assert len(to_markdown(report("healthy"), show_passed=True).splitlines()) > 156


def test_table_names_fault_and_verdict() -> None:
    text = to_table(report("wrong_asn"), width=400)  # wide enough that no cell folds
    assert "L0000000" in text and "remote-as 4200000099 (planned 4200000001)" in text
    assert text.rstrip().splitlines()[-1].startswith("FAIL: 153 PASS, 1 FAIL, 2 SKIP, 0 ERROR")


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown format 'html'; valid: table, json, junit, markdown"):
        render(report("healthy"), "html")
