# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Filters from a registered tool output to its parser's facts: ``parse_tool_output(tool)`` for every format hwaac
reads, and one name per common tool (``nvidia_smi_facts``, ``ibstat_facts``...). Thin: the parsing is
:mod:`hwaac.tool_facts` (the hwaac parsers) and, for ``mlxconfig`` and ``mlnx_qos``, this collection's host
module_utils, the one parser of those formats. Documentation: ``<filter>.yml`` beside this file, docs/filters.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.aiinfra.hwaac.plugins.module_utils.mlnx_qos import MlnxQosError, parse_mlnx_qos
from ansible_collections.aiinfra.hwaac.plugins.module_utils.mlxconfig import MlxconfigError, parse_query
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_imports import HwaacImports
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.registered import command_output

with HwaacImports() as HWAAC:  # this collection's Python core (same version), checked when a filter runs
    from hwaac.tool_facts import PARSERS, ToolParser, tool_facts


# view -> tool name of the convenience filters that read several formats of one tool
NVIDIA_SMI_VIEWS = {
    "xml": "nvidia-smi-xml",
    "text": "nvidia-smi-text",
    "query-gpu": "nvidia-smi-query-gpu",
    "remapped-rows": "nvidia-smi-remapped-rows",
    "nvlink-status": "nvlink-status",
    "nvlink-errors": "nvlink-errors",
}
DCGM_VIEWS = {"diag-json": "dcgm-diag-json", "diag-text": "dcgm-diag-text", "health-json": "dcgm-health-json"}
NCCL_TESTS_VIEWS = {"text": "nccl-tests", "json": "nccl-tests-json"}


def _mlxconfig(raw: str) -> Any:
    try:
        return parse_query(raw)
    except MlxconfigError as exc:
        raise ValueError(f"mlxconfig output not readable: {exc}") from None


def _mlnx_qos(raw: str) -> Any:
    try:
        return parse_mlnx_qos(raw).as_dict()
    except MlnxQosError as exc:
        raise ValueError(f"mlnx_qos output not readable: {exc}") from None


def _table() -> dict[str, Any]:
    HWAAC.require("aiinfra.hwaac tool output filters need", AnsibleFilterError)
    return {
        **PARSERS,
        "mlxconfig": ToolParser(_mlxconfig, "mlxconfig -d DEV [-e] q [NAMES]", ()),
        "mlnx-qos": ToolParser(_mlnx_qos, "mlnx_qos -i IF", ()),
    }


def parse_tool_output(value: Any, tool: str, **options: Any) -> Any:
    """The facts the parser of ``tool`` reads from ``value`` (a registered result or its stdout)."""
    table = _table()
    stdout, rc, stderr = command_output(value, f"parse_tool_output({tool!r})")
    try:
        return tool_facts(tool, stdout, rc=rc, stderr=stderr, parsers=table, **options)
    except ValueError as exc:
        raise AnsibleFilterError(f"aiinfra.hwaac.parse_tool_output: {exc}") from None


def _viewed(name: str, views: dict[str, str], default: str) -> Callable[..., Any]:
    """A filter for one tool with several output formats: ``view`` picks the format's tool name in ``views``."""

    def facts(value: Any, view: str = default, **options: Any) -> Any:
        if view not in views:
            raise AnsibleFilterError(f"aiinfra.hwaac.{name}: view {view!r} is not one of {', '.join(views)}")
        return parse_tool_output(value, views[view], **options)

    facts.__name__ = name
    return facts


def _one(name: str, tool: str) -> Callable[..., Any]:
    def facts(value: Any, **options: Any) -> Any:
        return parse_tool_output(value, tool, **options)

    facts.__name__ = name
    return facts


class FilterModule:
    """aiinfra.hwaac tool output filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "parse_tool_output": parse_tool_output,
            "nvidia_smi_facts": _viewed("nvidia_smi_facts", NVIDIA_SMI_VIEWS, "xml"),
            "dcgm_facts": _viewed("dcgm_facts", DCGM_VIEWS, "diag-json"),
            "ibstat_facts": _one("ibstat_facts", "ibstat"),
            "mlxconfig_facts": _one("mlxconfig_facts", "mlxconfig"),
            "perftest_facts": _one("perftest_facts", "perftest"),
            "nccl_tests_facts": _viewed("nccl_tests_facts", NCCL_TESTS_VIEWS, "text"),
            "lnetctl_facts": _one("lnetctl_facts", "lnetctl-net-show"),
            "ethtool_facts": _one("ethtool_facts", "ethtool"),
        }
