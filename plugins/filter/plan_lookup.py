# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Filters over a written plan (``plan.json``, its folder, or the loaded document): ``plan_peer`` (a port's cabled
peer), ``plan_rails`` (a node's rail ports, addresses and leaf ports), ``plan_nccl_hca`` (a GPU node's NCCL_IB_HCA).
Thin: the look-ups are :mod:`hwaac.plan.lookup`. Documentation: ``<filter>.yml`` beside this file, docs/filters.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_imports import HwaacImports

with HwaacImports() as HWAAC:  # this collection's Python core (same version), checked when a filter runs
    from hwaac.plan import lookup


def _call(name: str, function: str, labels: tuple[str, ...], *args: Any) -> Any:
    """``hwaac.plan.lookup.<function>(*args)`` with its errors as filter errors naming the filter ``name``."""
    HWAAC.require(f"aiinfra.hwaac.{name} needs", AnsibleFilterError)
    for label, value in zip(labels, args[1:], strict=False):  # the names after the plan
        if not isinstance(value, str) or not value:
            raise AnsibleFilterError(f"aiinfra.hwaac.{name}: {label} must be a non-empty name, got {value!r}")
    try:
        return getattr(lookup, function)(*args)
    except ValueError as exc:
        raise AnsibleFilterError(f"aiinfra.hwaac.{name}: {exc}") from None


def plan_peer(plan: Any, device: str, port: str) -> dict[str, Any]:
    """The far end of the cable at ``device`` ``port``."""
    return _call("plan_peer", "port_peer", ("device", "port"), plan, device, port)


def plan_rails(plan: Any, node: str, rail: int | None = None) -> list[dict[str, Any]]:
    """A node's rail ports (one rail's with ``rail``)."""
    if rail is not None and not isinstance(rail, bool):
        try:
            rail = int(rail)
        except (TypeError, ValueError):
            raise AnsibleFilterError(f"aiinfra.hwaac.plan_rails: rail must be a rail number, got {rail!r}") from None
    return _call("plan_rails", "node_rails", ("node",), plan, node, rail)


def plan_nccl_hca(plan: Any, node: str) -> dict[str, Any]:
    """A GPU node's NCCL_IB_HCA from its rendered nccl.env."""
    return _call("plan_nccl_hca", "nccl_hca", ("node",), plan, node)


class FilterModule:
    """aiinfra.hwaac plan look-up filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"plan_peer": plan_peer, "plan_rails": plan_rails, "plan_nccl_hca": plan_nccl_hca}
