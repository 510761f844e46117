"""One copy of the Lustre text formats (NIDs, lctl list_nids, /proc/mounts, lnetctl net entries): the host modules
and the controller package run the very same file, plugins/module_utils/lustre_formats.py, so they cannot diverge
(docs/health-parsers.md, "One copy per format")."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import hwaac.health.lustre as controller_evaluate
import hwaac.health.parsers.lnetctl as controller_lnetctl
import hwaac.health.parsers.lustre_formats as controller
import hwaac.health.parsers.lustre_mounts as controller_mounts
from ansible_collections.aiinfra.hwaac.plugins.module_utils import lnet as host_lnet
from ansible_collections.aiinfra.hwaac.plugins.module_utils import lustre_formats as host
from ansible_collections.aiinfra.hwaac.plugins.module_utils import lustre_mount as host_mount

REPO = Path(__file__).resolve().parents[3]
SHARED = REPO / "plugins" / "module_utils" / "lustre_formats.py"
CONTROLLER_PATH = REPO / "src" / "hwaac" / "health" / "parsers" / "lustre_formats.py"


def test_both_sides_load_the_same_file() -> None:
    assert Path(controller.__file__).resolve() == SHARED.resolve() == Path(host.__file__).resolve()
    assert CONTROLLER_PATH.is_symlink() and CONTROLLER_PATH.read_bytes() == SHARED.read_bytes()


@pytest.mark.parametrize(
    ("module", "names"),
    [
        (
            host_mount,
            ["LustreError", "normalise_net", "unescape_mount_field", "mount_lines", "split_source", "read_list_nids"],
        ),
        (host_lnet, ["lnet_nets", "lnet_cut", "lnet_down_text"]),
    ],
)
def test_host_modules_use_the_shared_functions(module, names: list[str]) -> None:
    assert all(getattr(module, name) is getattr(host, name) for name in names)


@pytest.mark.parametrize(
    ("module", "names"),
    [
        (controller_mounts, ["mount_lines", "split_source"]),
        (controller_lnetctl, ["lnet_nets", "lnet_cut", "lnet_down_text"]),
        (controller_evaluate, ["normalise_nid", "proc_mounts_cut"]),
    ],
)
def test_controller_parsers_use_the_shared_functions(module, names: list[str]) -> None:
    assert all(getattr(module, name) is getattr(controller, name) for name in names)


# rules that must exist once: a second definition anywhere in src/ or plugins/ is a second copy
ONE_DEFINITION = [
    "normalise_net",
    "normalise_nid",
    "unescape_mount_field",
    "mount_lines",
    "split_source",
    "read_list_nids",
    "lnet_nets",
    "lnet_cut",
    "proc_mounts_cut",
]


@pytest.mark.parametrize("name", ONE_DEFINITION)
def test_no_second_definition(name: str) -> None:
    found = []
    for root in (REPO / "src", REPO / "plugins"):
        for path in root.rglob("*.py"):
            if path.is_symlink():
                continue
            tree = ast.parse(path.read_text())
            found += [path for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == name]
    assert found == [SHARED]


def test_the_shared_file_imports_only_the_standard_library() -> None:
    """Ansible ships it to managed hosts alone, and the controller loads it outside the collection."""
    tree = ast.parse(SHARED.read_text())
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}
