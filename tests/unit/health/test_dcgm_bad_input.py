"""The dcgmi diag and health readers never PASS on bad input: each rejection names its reason (a crash would be
UNKNOWN too), and a cut or unforeseen document only ever asks for a retest."""

from __future__ import annotations

import json

import pytest

from hwaac.health import checks
from hwaac.health.parsers.dcgm_health import DcgmHealthResult, parse_health_json
from hwaac.health.parsers.dcgm_model import DcgmDiagResult
from hwaac.health.result import DESTRUCTIVE_ACTIONS, Action, Status
from tests.unit.health.dcgm_samples import DCGMI, FIX, V2, V4, graded, graded_health, read

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
