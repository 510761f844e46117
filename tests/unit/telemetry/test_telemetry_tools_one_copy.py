"""One table of network telemetry tools: the host module (plugins/module_utils/telemetry_tools.py) and the samples
readers (hwaac.telemetry.readers through the symlink hwaac/telemetry/tools.py) run the very same file, and every
tool it runs has a reader, so the gathering and the reading cannot diverge."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import hwaac.telemetry.tools as controller
from ansible_collections.aiinfra.hwaac.plugins.module_utils import telemetry_tools as host
from hwaac.telemetry import readers

REPO = Path(__file__).resolve().parents[3]
SHARED = REPO / "plugins" / "module_utils" / "telemetry_tools.py"
CONTROLLER_PATH = REPO / "src" / "hwaac" / "telemetry" / "tools.py"


def test_both_sides_load_the_same_file() -> None:
    assert Path(controller.__file__).resolve() == SHARED.resolve() == Path(host.__file__).resolve()
    assert CONTROLLER_PATH.is_symlink() and CONTROLLER_PATH.read_bytes() == SHARED.read_bytes()


def test_every_tool_has_a_reader_and_every_reader_a_tool() -> None:
    read = {*readers.READERS, *readers.PORT_READERS, readers.BGP, readers.ROUTES, readers.PROBE}
    assert set(host.TOOLS) == read
    assert {k for k, t in host.TOOLS.items() if t.get("per_port")} == set(readers.PORT_READERS)
    assert all(set(d) <= set(host.TOOLS) for d in host.DEFAULT_TOOLS.values())
    # the prober's results are opt-in: a node that does not run the agent would report them as not read
    assert all(readers.PROBE not in d for d in host.DEFAULT_TOOLS.values())


@pytest.mark.parametrize(
    ("name", "sysfs", "expected"),
    [
        ("pfcwd", "/sys", ["show", "pfcwd", "stats"]),
        ("ethtool@rail3", "/sys", ["ethtool", "-S", "rail3"]),
        ("fec-histogram@Ethernet8", "/sys", ["show", "interfaces", "counters", "fec-histogram", "Ethernet8"]),
        ("counters-db", "/sys", ["sonic-db-dump", "-n", "COUNTERS_DB", "-k", "COUNTERS*", "-y"]),  # no glob expansion
        (
            "ib-counters",
            "/nonexistent/",
            [
                "grep",
                "-H",
                ".",
                "/nonexistent/class/infiniband/*/ports/*/counters/*",
                "/nonexistent/class/infiniband/*/ports/*/hw_counters/*",
            ],
        ),
    ],
)
def test_argv(name: str, sysfs: str, expected: list[str]) -> None:
    assert host.tool_argv(name, sysfs) == expected


def test_the_probe_tool_reads_the_agents_results_file() -> None:
    assert host.tool_argv("probe") == ["cat", "--", "/var/lib/hwaac/probe/latest.json"]
    assert host.tool_argv("probe", probe_file="/srv/p/-x.json") == ["cat", "--", "/srv/p/-x.json"]
    assert host.tool_problem("probe") is None and "whole device" in (host.tool_problem("probe@rail0") or "")


def test_sysfs_globs_expand_in_order(tmp_path: Path) -> None:
    for dev in ("mlx5_1", "mlx5_0"):
        for group in ("counters", "hw_counters"):
            d = tmp_path / "class" / "infiniband" / dev / "ports" / "1" / group
            d.mkdir(parents=True)
            (d / "x").write_text("1\n")
    argv = host.tool_argv("ib-counters", str(tmp_path))
    groups = [p.split("/")[-2] + " " + p.split("/")[-5] for p in argv[3:]]
    assert groups == ["counters mlx5_0", "counters mlx5_1", "hw_counters mlx5_0", "hw_counters mlx5_1"]


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("pfcwd", None),
        ("ethtool@rail0", None),
        ("mlxlink@mlx5_0", None),
        ("ethtool", "reads one port"),
        ("pfcwd@Ethernet0", "whole device"),
        ("cat", "no telemetry tool"),
        ("ethtool@-i", "not a port name"),
        ("ethtool@../../x", "not a port name"),
        ("ethtool@a b", "not a port name"),
    ],
)
def test_tool_problem(name: str, problem: str | None) -> None:
    found = host.tool_problem(name)
    assert (found is None) if problem is None else (problem in (found or ""))


def test_the_shared_file_imports_only_the_standard_library() -> None:
    tree = ast.parse(SHARED.read_text())
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}
