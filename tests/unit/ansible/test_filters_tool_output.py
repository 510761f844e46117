"""The tool output filters (plugins/filter/tool_output.py): every tool name reaches its parser, with the options and
the registered result's rc/stderr passed on; results are plain data; bad input fails naming what is valid.

Each case (tool_output_cases.py) reads a recorded output from tests/fixtures and checks facts that can be read
off that file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.aiinfra.hwaac.plugins.filter.tool_output import FilterModule
from hwaac.tool_facts import PARSERS
from tests.unit.ansible.tool_output_cases import CASES

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
FILTERS = FilterModule().filters()


def dig(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


def fixture(rel: str) -> str:
    return (FIXTURES / rel).read_text()


@pytest.mark.parametrize(
    ("name", "args", "options", "path", "expected"),
    CASES,
    ids=[f"{c[0]}-{c[1][0] if c[1] else 'default'}" for c in CASES],
)
def test_filter_reads_the_recorded_output(
    name: str, args: tuple[Any, ...], options: dict[str, Any], path: str, expected: dict[tuple[Any, ...], Any]
) -> None:
    out = FILTERS[name](fixture(path), *args, **options)
    assert json.loads(json.dumps(out, allow_nan=False)) == out, "plain JSON data, nothing else"
    for where, value in expected.items():
        assert dig(out, where) == value, where
    assert "status" not in (out if isinstance(out, dict) else {}), "no verdict is added"


def test_every_tool_has_a_case() -> None:
    """A tool added to the table without a case here would be untested wiring."""
    views = {
        "nvidia_smi_facts": {
            "": "nvidia-smi-xml",
            "text": "nvidia-smi-text",
            "query-gpu": "nvidia-smi-query-gpu",
            "remapped-rows": "nvidia-smi-remapped-rows",
            "nvlink-status": "nvlink-status",
        },
        "dcgm_facts": {"": "dcgm-diag-json", "diag-text": "dcgm-diag-text", "health-json": "dcgm-health-json"},
        "nccl_tests_facts": {"": "nccl-tests", "json": "nccl-tests-json"},
        "ibstat_facts": {"": "ibstat"},
        "mlxconfig_facts": {"": "mlxconfig"},
        "perftest_facts": {"": "perftest"},
        "lnetctl_facts": {"": "lnetctl-net-show"},
        "ethtool_facts": {"": "ethtool"},
    }
    covered = {
        args[0] if name == "parse_tool_output" else views[name][args[0] if args else ""] for name, args, *_ in CASES
    }
    assert covered == {*PARSERS, "mlxconfig", "mlnx-qos"}


def test_registered_result_passes_rc_and_stderr() -> None:
    """A registered command result: stdout is read, rc reaches the parsers that take an exit status (an exit status
    only makes a result worse), stderr those that read it (lnetctl prints 'LNet down' there)."""
    raw = fixture("health/nccl-tests/h100-8gpu-single-node/all_reduce_perf.out")
    clean = FILTERS["nccl_tests_facts"]({"stdout": raw, "rc": 0, "stderr": "", "changed": False})
    failed = FILTERS["nccl_tests_facts"]({"stdout": raw, "rc": 1, "stderr": "", "changed": False})
    assert clean["exit_code"] == 0 and not clean["findings"]
    assert failed["exit_code"] == 1 and failed["findings"] + failed["unknown"], "a failing exit status is a fact"
    down = FILTERS["lnetctl_facts"](
        {"stdout": "", "rc": 1, "stderr": fixture("health/lustre/lnetctl_down_2.12_lustrefs_exporter.txt")}
    )
    assert down["lnet_down"] is True and down["nis"] == []


def test_ibstat_ports_not_active_with_json_query() -> None:
    """The selection the filter docs show, with community.general's json_query (jmespath)."""
    from ansible_collections.community.general.plugins.filter.json_query import json_query

    facts = FILTERS["ibstat_facts"](fixture("health/ibstat/rdma-core-47/h100-roce-400g-down-polling.txt"))
    assert json_query(facts, "cas[].ports[?state != 'Active'][].ca") == ["mlx5_11", "mlx5_5"]  # in ibstat's order


BAD = [
    pytest.param(
        "parse_tool_output",
        ("ibstatt",),
        {},
        "x",
        r"tool 'ibstatt' is not known \(valid: bgp-summary, ",
        id="unknown-tool",
    ),
    pytest.param(
        "parse_tool_output",
        ("ibstat",),
        {"port": 1},
        "x",
        r"tool 'ibstat': option\(s\) port not taken \(valid options: version\)",
        id="option-not-taken",
    ),
    pytest.param(
        "parse_tool_output",
        ("lctl-ping",),
        {},
        "x",
        r"tool 'lctl-ping' \(lctl ping NID\) needs the option\(s\) nid",
        id="required-option",
    ),
    pytest.param(
        "nvidia_smi_facts",
        ("csv",),
        {},
        "x",
        r"view 'csv' is not one of xml, text, query-gpu, remapped-rows",
        id="unknown-view",
    ),
    pytest.param(
        "ibstat_facts",
        (),
        {},
        {"skipped": True, "changed": False},
        r"the registered task was skipped",
        id="skipped-task",
    ),
    pytest.param(
        "ibstat_facts",
        (),
        {},
        {"results": []},
        r"expected a registered command/shell result \(with 'stdout'\) or its stdout string, got a dict "
        r"with keys results",
        id="not-a-command-result",
    ),
    pytest.param(
        "ibstat_facts",
        (),
        {},
        {"stdout": "x", "rc": "1"},
        r"'rc' must be an integer exit status, got '1'",
        id="rc-not-int",
    ),
    pytest.param("ibstat_facts", (), {}, ["CA 'mlx5_0'"], r"got list", id="input-list"),
    pytest.param(
        "mlxconfig_facts",
        (),
        {},
        "-E- Unknown Parameter: FOO\n",
        r"mlxconfig output not readable: -E- Unknown Parameter: FOO",
        id="mlxconfig-error-line",
    ),
]


@pytest.mark.parametrize(("name", "args", "options", "value", "message"), BAD)
def test_bad_input_is_a_clear_error(
    name: str, args: tuple[Any, ...], options: dict[str, Any], value: Any, message: str
) -> None:
    with pytest.raises(AnsibleFilterError, match=message):
        FILTERS[name](value, *args, **options)


def test_unreadable_output_is_unknown_not_an_error() -> None:
    """hwaac parsers never raise on bad tool output: it comes back in 'unknown' (never an empty, healthy-looking
    result)."""
    out = FILTERS["nvidia_smi_facts"]("<nvidia_smi_log><gpu")
    assert out["unknown"] and out["gpus"] == []
