"""The ports a GPU node's per-port telemetry tools read, from its rendered ``hosts/<node>/nic-roce.json`` (the rails
hwaac configures, :mod:`hwaac.render.host.nic`): each per-port tool runs once per rendered port, named by the field
the tool table gives it (``port_field`` in ``hwaac/telemetry/tools.py``: ``ethtool`` the Linux interface, ``mlxlink``
the RDMA device). Errors name the node and the file."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hwaac.telemetry.tools import TOOLS

NIC_FILE = "nic-roce.json"


class HostPortsError(ValueError):
    """A node's rendered ports cannot be used: the file is missing or unreadable, or a tool cannot take them."""


def nic_roce_path(render_dir: str | Path, node: str) -> Path:
    """``<render_dir>/hosts/<node>/nic-roce.json``, as ``hwaac render`` writes it."""
    return Path(render_dir) / "hosts" / node / NIC_FILE


def rendered_ports(render_dir: str | Path, node: str) -> list[Mapping[str, Any]]:
    """The NIC ports of ``node`` in the file's (NIC) order. Raises :class:`HostPortsError`."""
    path = nic_roce_path(render_dir, node)
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise HostPortsError(
            f"{node}: {path}: no such file (hwaac render writes hosts/<node>/{NIC_FILE} for each "
            "GPU node of the plan; is the node's name the plan's?)"
        ) from None
    except OSError as exc:
        raise HostPortsError(f"{node}: {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise HostPortsError(f"{node}: {path}: not JSON ({exc})") from None
    ports = doc.get("ports") if isinstance(doc, dict) else None
    if not isinstance(ports, list) or not ports or not all(isinstance(p, dict) for p in ports):
        raise HostPortsError(f"{node}: {path}: no list of ports (expected {{\"node\": ..., \"ports\": [...]}})")
    return ports


def expand_tools(tools: Sequence[str], ports: Sequence[Mapping[str, Any]], where: str = "") -> list[str]:
    """``tools`` with each per-port tool named without ``@PORT`` run once per port, by its ``port_field``
    (``ethtool`` -> ``ethtool@rail0``...); other names are kept. ``where`` prefixes errors (node and file)."""
    out: list[str] = []
    for name in tools:
        tool, at, _ = name.partition("@")
        spec = TOOLS.get(tool)
        if spec is None or not spec.get("per_port") or at:
            out.append(name)
            continue
        field = spec.get("port_field")
        if field is None:
            raise HostPortsError(f"{where}{tool} reads switch ports, not a node's rendered rails")
        for p in ports:
            value = p.get(field)
            if not isinstance(value, str) or not value:
                raise HostPortsError(f"{where}port {p.get('port', '?')} has no {field!r} for {tool}")
            out.append(f"{tool}@{value}")
    return list(dict.fromkeys(out))


def node_tools(render_dir: str | Path, node: str, tools: Sequence[str]) -> list[str]:
    """The tool names to run on ``node``: :func:`expand_tools` over its rendered ports. Raises
    :class:`HostPortsError` naming the node and the file."""
    ports = rendered_ports(render_dir, node)
    return expand_tools(tools, ports, f"{node}: {nic_roce_path(render_dir, node)}: ")


__all__ = ["NIC_FILE", "HostPortsError", "expand_tools", "nic_roce_path", "node_tools", "rendered_ports"]
