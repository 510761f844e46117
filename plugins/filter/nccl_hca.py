# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Filters over the RDMA ports NCCL takes on a node: ``nccl_hca_ports`` (which of ibstat's ports an NCCL_IB_HCA
value selects, by NCCL's own matching) and ``nccl_rail_check`` (whether those ports and the plan's rails among them
are usable, the role aiinfra.hwaac.rail_check's verdict). Thin: ibstat is read by hwaac's parser, the value by
:func:`hwaac.plan.lookup.parse_ib_hca`, the plan's files by :mod:`hwaac.plan.lookup` and
:func:`hwaac.telemetry.host_ports.rendered_ports`; the matching is :mod:`hwaac.health.nccl_hca`, the judgement
:mod:`hwaac.health.rail_check`. Documentation: ``<filter>.yml`` beside this file, docs/filters.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_imports import HwaacImports
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.registered import command_output

with HwaacImports() as HWAAC:  # this collection's Python core (same version), checked when a filter runs
    from hwaac.health.nccl_hca import nccl_ib_ports
    from hwaac.health.parsers.ibstat import IbstatResult, parse_ibstat
    from hwaac.health.rail_check import check_rails
    from hwaac.plan import lookup
    from hwaac.plan.lookup import parse_ib_hca
    from hwaac.telemetry.host_ports import rendered_ports


def _start(name: str) -> None:
    HWAAC.require(f"aiinfra.hwaac.{name} needs", AnsibleFilterError)


def _ibstat(value: Any, name: str) -> IbstatResult:
    """ibstat's output read by hwaac's parser: stdout and stderr together (an ``ibpanic`` line is on stderr)."""
    stdout, _rc, stderr = command_output(value, f"aiinfra.hwaac.{name}")
    return parse_ibstat(f"{stdout}\n{stderr}" if stderr else stdout)


def _hca(value: Any, name: str) -> dict[str, Any]:
    """An NCCL_IB_HCA value, or what ``plan_nccl_hca`` returns (its ``value``), read by ``parse_ib_hca``."""
    text = value.get("value") if isinstance(value, Mapping) else value
    if not isinstance(text, str):
        raise AnsibleFilterError(
            f"aiinfra.hwaac.{name}: hca must be an NCCL_IB_HCA value or what "
            f"aiinfra.hwaac.plan_nccl_hca returns, got {type(value).__name__}"
        )
    try:
        return parse_ib_hca(text)
    except ValueError as exc:
        raise AnsibleFilterError(f"aiinfra.hwaac.{name}: {exc}") from None


def nccl_hca_ports(ibstat: Any, hca: Any) -> dict[str, Any]:
    """The ports of ``ibstat`` (a registered result or its stdout) that NCCL takes under ``hca``."""
    _start("nccl_hca_ports")
    return nccl_ib_ports(_hca(hca, "nccl_hca_ports"), _ibstat(ibstat, "nccl_hca_ports"))


def nccl_rail_check(ibstat: Any, plan: Any, node: str) -> dict[str, Any]:
    """The rail check of ``node``: its ``ibstat`` against its rendered NCCL_IB_HCA, rails and NIC ports."""
    _start("nccl_rail_check")
    if not isinstance(node, str) or not node:
        raise AnsibleFilterError(f"aiinfra.hwaac.nccl_rail_check: node must be a non-empty name, got {node!r}")
    ib = _ibstat(ibstat, "nccl_rail_check")
    try:
        spec = lookup.nccl_hca(plan, node)  # refuses a loaded plan: the rendered files are beside plan.json
        folder = lookup.load(plan).folder
        return check_rails(ib, spec, lookup.node_rails(plan, node), rendered_ports(folder or ".", node))
    except ValueError as exc:
        raise AnsibleFilterError(f"aiinfra.hwaac.nccl_rail_check: {exc}") from None


class FilterModule:
    """aiinfra.hwaac NCCL port filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"nccl_hca_ports": nccl_hca_ports, "nccl_rail_check": nccl_rail_check}
