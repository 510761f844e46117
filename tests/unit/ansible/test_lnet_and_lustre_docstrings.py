"""Project standard for the Lustre host code (module_utils lnet, lnet_plan, lnet_commands, lustre_mount,
lustre_params, host_files and the modules lnet, lustre_mount, lustre_tune): a public function whose own body raises
the module's error class says so in its docstring (names the class). That every public function, class and method
has a docstring is ruff's D101-D103 (pyproject.toml, [tool.ruff.lint.per-file-ignores])."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

PACKAGE = "ansible_collections.aiinfra.hwaac.plugins"
MODULES = [
    f"{PACKAGE}.module_utils.{n}"
    for n in ("lnet", "lnet_plan", "lnet_commands", "lustre_mount", "lustre_mount_steps", "lustre_params", "host_files")
] + [f"{PACKAGE}.modules.{n}" for n in ("lnet", "lustre_mount", "lustre_tune")]
ERRORS = ("LnetError", "LnetInputError", "LustreError", "ParamError", "HostFileError")


def public_callables(module):
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if inspect.isfunction(member) and not attr.startswith("_"):
                    yield f"{name}.{attr}", member


@pytest.mark.parametrize("module_name", MODULES)
def test_public_functions_name_what_they_raise(module_name: str) -> None:
    module = importlib.import_module(module_name)
    unstated = []
    for name, obj in public_callables(module):
        if inspect.isfunction(obj):
            doc = inspect.getdoc(obj) or ""
            raised = set(re.findall(r"raise (\w+Error)\(", inspect.getsource(obj))) & set(ERRORS)
            unstated += [f"{name} raises {err}" for err in sorted(raised) if err not in doc]
    assert unstated == [], f"docstring does not say: {unstated}"
