"""Shared data of the verify unit tests (imported by them): the fixture fabric's inputs and its recorded scenarios."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from hwaac.verify.inputs import Inputs, load_inputs
from hwaac.verify.raw import Outputs, Raw, read_facts_folder

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "verify"
PLAN = FIXTURES / "plan"
RECORDED = FIXTURES / "recorded"
SCENARIOS = sorted(p.name for p in RECORDED.iterdir() if p.is_dir())


@cache
def fixture_inputs() -> Inputs:
    """The inputs of the fabric the recordings were made on."""
    return load_inputs(PLAN)


@cache
def _recorded(scenario: str) -> Outputs:
    return read_facts_folder(RECORDED / scenario)


def recorded(scenario: str) -> Outputs:
    """A copy of a scenario's outputs (tests may change the copy)."""
    return {d: dict(raws) for d, raws in _recorded(scenario).items()}


def raw(scenario: str, device: str, key: str) -> Raw:
    return _recorded(scenario)[device][key]
