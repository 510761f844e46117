"""Role aiinfra.hwaac.lustre_client: its variables (defaults/main.yml) are the ones meta/argument_specs.yml declares,
with the same defaults, and the health probes it can switch (lctl list_nids, lfs df -v) reach the
aiinfra.hwaac.lustre_health task with the module's own defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.aiinfra.hwaac.plugins.module_utils.controller_specs import SPECS

ROLE = Path(__file__).resolve().parents[3] / "roles" / "lustre_client"
DEFAULTS: dict[str, Any] = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
OPTIONS: dict[str, Any] = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"][
    "options"
]
TASKS: list[dict[str, Any]] = yaml.safe_load((ROLE / "tasks" / "main.yml").read_text())
TYPES = {bool: "bool", int: "int", str: "str", dict: "dict", list: "list"}


def test_every_default_is_declared_with_the_same_value_and_type() -> None:
    assert set(DEFAULTS) == set(OPTIONS)
    for name, value in DEFAULTS.items():
        assert OPTIONS[name].get("default") == value, name
        if value is not None:
            assert OPTIONS[name]["type"] == TYPES[type(value)], name


@pytest.mark.parametrize(
    ("variable", "option"),
    [
        ("lustre_client_health_list_nids", "list_nids"),  # lctl list_nids against the MGS networks
        ("lustre_client_health_lfs_df", "lfs_df"),  # lfs df -v: every MDT and OST
    ],
)
def test_a_health_probe_variable_reaches_the_health_task(variable: str, option: str) -> None:
    [health] = [t["aiinfra.hwaac.lustre_health"] for t in TASKS if "aiinfra.hwaac.lustre_health" in t]
    assert health[option] == "{{ " + variable + " }}"
    spec = SPECS["lustre_health"][option]
    assert (DEFAULTS[variable], OPTIONS[variable]["type"]) == (spec["default"], spec["type"])
