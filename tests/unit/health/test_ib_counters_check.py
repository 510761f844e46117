"""The sysfs port-counter reading judged by the check layer (hwaac.health.checks_nic.check_ib_counters) and in the node
evaluation: the parser (hwaac.health.parsers.ib_counters.parse_ib_counters) returns facts only, the check makes the
findings; the node evaluation parses each reading once. Recorded outputs: fixtures/health/ib-counters (README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.health import checks_nic, node
from hwaac.health.parsers import ib_counters
from hwaac.health.parsers.ib_counters import parse_ib_counters
from hwaac.health.profile import load_profile
from hwaac.health.result import Action, Status

COUNTERS = Path(__file__).resolve().parents[2] / "fixtures" / "health" / "ib-counters"
H200 = load_profile("hgx-h200-8x400g")
HEALTHY = (COUNTERS / "procfs-fixture" / "counters.txt").read_text()  # mlx4_0 ports 1 and 2, mlx5_0 port 1
SATURATED = (COUNTERS / "gpud-943-saturated" / "counters.txt").read_text()  # mlx5_1 port 1, four at their maximum
NO_PMA = (COUNTERS / "node-exporter-966-no-pma" / "counters.txt").read_text()  # i40iw0 port 1: "N/A (no PMA)"
GREP_ERROR = HEALTHY.replace(
    "/sys/class/infiniband/mlx4_0/ports/2/counters/symbol_error:0",
    "grep: /sys/class/infiniband/mlx4_0/ports/2/counters/symbol_error: Invalid argument",
)
CUT = HEALTHY[: HEALTHY.index("mlx5_0/ports/1/counters/")]  # mlx5_0's legacy counters never printed: cut short


def out(stdout: str) -> dict:
    return {"rc": 0, "stdout": stdout, "stderr": "", "seconds": 0.1, "timed_out": False}


CASES = [
    # name, reading, devices, the (code, subject) of the findings
    ("healthy", HEALTHY, None, set()),
    ("saturated (gpud#943)", SATURATED, None, {("IB_COUNTER_SATURATED", "mlx5_1 port 1")}),
    ("saturated, not a rail", SATURATED, ["mlx5_0"], set()),
    # the recorded excerpt holds 8 of the legacy files: also torn
    (
        "no PMA (node_exporter#966)",
        NO_PMA,
        None,
        {("IB_COUNTER_UNREADABLE", "i40iw0 port 1"), ("PARSE_UNREADABLE", "")},
    ),
    ("grep could not read one file", GREP_ERROR, None, {("IB_COUNTER_UNREADABLE", "mlx4_0 port 2")}),
    ("grep could not read a file of a port that is no rail", GREP_ERROR, ["mlx5_0"], set()),
    # a torn reading is about all of it, whatever the rails
    ("cut short", CUT, ["mlx5_0"], {("PARSE_UNREADABLE", "")}),
]


@pytest.mark.parametrize(("raw", "devices", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_check_judges_the_parsers_facts(raw: str, devices: list[str] | None, expected: set) -> None:
    reading = parse_ib_counters(raw)
    assert reading.findings == []  # the parser judges nothing
    found = checks_nic.check_ib_counters(reading, devices)
    assert {(f.code, f.subject) for f in found} == expected
    assert all((f.status, f.action) == (Status.UNKNOWN, Action.RETEST) for f in found)


def test_saturated_counters_are_named_with_their_lines() -> None:
    [finding] = checks_nic.check_ib_counters(parse_ib_counters(SATURATED))
    for name, value in (
        ("link_downed", 255),
        ("port_xmit_discards", 65535),
        ("port_xmit_wait", 4294967295),
        ("excessive_buffer_overrun_errors", 15),
    ):  # 2**width - 1 (IBA Vol. 1 §16.1 PortCounters)
        assert name in finding.message and f"/counters/{name}:{value}" in finding.evidence


@pytest.mark.parametrize("raw", [CUT, GREP_ERROR, SATURATED, "garbage\n"], ids=["cut", "grep", "saturated", "garbage"])
def test_the_node_evaluation_with_rails_judges_a_bad_reading_as_a_retest(raw: str) -> None:
    """Rails given: findings about the whole reading (subject "") are kept, never an error."""
    ctx = node.Context(node="n", rails=("mlx5_0", "mlx5_1", "mlx4_0"))
    v = node.verdict("n", {"quick": node.evaluate({"ib_counters": out(raw)}, H200, ctx)})
    assert (v.status, v.action) == (Status.UNKNOWN, Action.RETEST)


def test_each_reading_is_parsed_once_per_node(monkeypatch: pytest.MonkeyPatch) -> None:
    """A node's quick reading is its ib_pairwise stage's counters_before: one parse per reading, not per use."""
    calls: list[str] = []
    real = ib_counters.parse_ib_counters
    monkeypatch.setattr(ib_counters, "parse_ib_counters", lambda raw, **kw: calls.append(raw) or real(raw, **kw))
    node._counters_of.cache_clear()
    grown = HEALTHY.replace("mlx5_0/ports/1/counters/link_downed:0", "mlx5_0/ports/1/counters/link_downed:1")
    for name in ("gpu-a", "gpu-b"):  # as the benchmark and the burn_in role run a node's stages
        before, after = HEALTHY + f"# {name}\n", grown + f"# {name}\n"
        node.evaluate({"ib_counters": out(before)}, H200, node.Context(node=name))
        found = node.evaluate(
            {"ib_counters": out(after)}, H200, node.Context(node=name, counters_before=before, counters_seconds=60.0)
        )
        assert "NIC_LINK_DOWNED" in {f.code for f in found}
    assert len(calls) == 4 and len(set(calls)) == 4
