"""dcgmi health -c -j parser on recorded outputs (tests/fixtures/health/dcgmi, see its READMEs)."""

from __future__ import annotations

import json

import pytest

from hwaac.health.dcgm_grading import grade_health
from hwaac.health.parsers.dcgm_health import parse_health_json
from hwaac.health.result import Action, Status
from tests.unit.health.dcgm_samples import V2, codes, graded_health, read

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
