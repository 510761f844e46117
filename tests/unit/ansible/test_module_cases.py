"""The case runner of tests/unit/ansible/module_run.py: each kind of expectation in a case file fails on a result
that does not meet it (so a case row cannot pass vacuously), and passes on one that does."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.ansible.fake_host import FakeHost
from tests.unit.ansible.module_run import CASES, check_probes, check_result, load_cases

RESULT = {
    "changed": True,
    "msg": "mlx5_1: invalid mlxconfig parameter name 'LINK TYPE'",
    "raw": ["$ mlxconfig -d mlx5_0 -e q\nLINK_TYPE_P1", "$ mlxconfig -y -d mlx5_0 set LINK_TYPE_P1=2"],
    "devices": [{"device": "mlx5_0", "set": {"LINK_TYPE_P1": "2"}}],
    "changes": {"roce_tos.rdma_cm": {"before": 0, "after": 106}, "mtu": {"before": 1500, "after": 9000}},
}


@pytest.mark.parametrize(
    "step",
    [
        {"output": {"changed": True, "devices/0/set": {"LINK_TYPE_P1": "2"}, "raw/-1": RESULT["raw"][-1]}},
        {"output": {"changes/roce_tos.rdma_cm/after": 106}},
        {
            "contains": {
                "msg": ["invalid mlxconfig", "'LINK TYPE'"],
                "raw": " set LINK_TYPE_P1=2",
                "devices/0": {"device": "mlx5_0"},
            }
        },
        {"lacks": {"msg": "mlx5_0", "raw": "--fw-reset", "missing": "anything"}},
        {"prefix": {"msg": "mlx5_1: "}},
        {"absent": ["failed", "devices/1", "changes/ecn"]},
        {"not": {"failed": True, "changed": False}},
        {"keys": {"changes": ["roce_tos.rdma_cm", "mtu"]}},
    ],
    ids=["output", "output with dots in a key", "contains", "lacks", "prefix", "absent", "not", "keys"],
)
def test_a_result_that_meets_the_step_passes(step: dict) -> None:
    check_result(RESULT, step, "case")


@pytest.mark.parametrize(
    ("step", "says"),
    [
        ({"output": {"changed": False}}, "changed is True, wanted False"),
        ({"output": {"failed": True}}, "failed is not in the result"),
        ({"output": {"devices/0/set": {}}}, "devices/0/set is"),
        ({"contains": {"msg": ["invalid", "mlx5_0"]}}, "lacks 'mlx5_0'"),
        ({"contains": {"raw": "--fw-reset"}}, "lacks '--fw-reset'"),
        ({"contains": {"devices/0": {"device": "mlx5_1"}}}, "lacks {'device': 'mlx5_1'}"),
        ({"lacks": {"raw": " set "}}, "holds ' set '"),
        ({"prefix": {"msg": "mlx5_0: "}}, "does not start 'mlx5_0: '"),
        ({"absent": ["changed"]}, "changed should not be in the result"),
        ({"not": {"changed": True}}, "changed must not be True"),
        ({"keys": {"changes": ["mtu", "roce_tos.rdma_cm"]}}, "the keys of changes are not"),
    ],
    ids=[
        "output value",
        "output missing",
        "output path",
        "contains text",
        "contains line",
        "contains mapping",
        "lacks",
        "prefix",
        "absent",
        "not",
        "keys in order",
    ],
)
def test_a_result_that_misses_the_step_fails_naming_it(step: dict, says: str) -> None:
    with pytest.raises(AssertionError, match=r"^case: ") as info:
        check_result(RESULT, step, "case")
    assert says in str(info.value)


def test_probes_compare_what_the_host_method_returns(tmp_path: Path) -> None:
    host = FakeHost(tmp_path)
    (host.state / "calls.log").write_text("lctl list_nids\nmount -t lustre a b\n")
    check_probes(
        host,
        [
            {"call": "calls", "equals": ["lctl list_nids", "mount -t lustre a b"]},
            {"call": "calls", "contains": ["list_nids"], "lacks": ["umount"]},
            {"call": ["exists", "fake/calls.log"], "equals": True},
            {"call": ["text", "fake/calls.log"], "prefix": "lctl "},
        ],
        "case",
    )
    for probe, says in (
        ({"call": "calls", "equals": []}, "is ['lctl list_nids'"),
        ({"call": "calls", "lacks": ["mount"]}, "holds 'mount'"),
        ({"call": ["exists", "fake/none"], "equals": True}, "is False, wanted True"),
        ({"call": ["text", "fake/calls.log"], "prefix": "mount"}, "does not start 'mount'"),
    ):
        with pytest.raises(AssertionError, match=r"^case: ") as info:
            check_probes(host, [probe], "case")
        assert says in str(info.value)


def test_every_case_file_has_unique_ids_and_known_keys() -> None:
    step_keys = {
        "before",
        "input",
        "flags",
        "output",
        "keys",
        "contains",
        "lacks",
        "prefix",
        "absent",
        "not",
        "state",
        "failed_ok",
    }
    files = sorted(CASES.glob("*.yml"))
    assert files, CASES
    for path in files:
        for param in load_cases(path.stem):
            (case,) = param.values
            top = {k: v for k, v in case.items() if k not in ("id", "mocks", "steps")}
            steps = case.get("steps") or [top]
            unknown = set(top) - step_keys if "steps" in case else set()
            for step in steps:
                unknown |= set(step) - step_keys
            assert not unknown, f"{path.name} {case['id']}: unknown keys {sorted(unknown)}"
            assert all("input" in step for step in steps), f"{path.name} {case['id']}: a step without input"
