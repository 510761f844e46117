"""What the host network checks share (test_host_network.py, test_host_network_namespaces.py): system tools that
fail the test (never skip) when missing, the demo's rendered host files, a node's host links in rail order, and
the sysctl file's lines applied in a network namespace."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from hwaac.plan.model import Link, Node, Plan

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "inventory" / "demo"
NETPLAN = "netplan/60-hwaac-rails.yaml"
SYSCTL = "sysctl.d/90-hwaac-rdma.conf"
INSTALL_HINT = "install it with scripts/install-system-deps.sh"


def tool(name: str) -> str:
    """Path of a system tool; fails the test (never skips) when it is missing."""
    found = shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/sbin/{name}") if os.access(p, os.X_OK)), None
    )
    if found is None:
        pytest.fail(f"`{name}` not found: {INSTALL_HINT}")
    return found


def run(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        pytest.fail(f"{' '.join(args)} -> rc {proc.returncode}\nstdin:\n{stdin or ''}\nstderr:\n{proc.stderr}")
    return proc


def yaml_load(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(io.StringIO(text))


def host_links(plan: Plan, name: str) -> list[Link]:
    links = [lk for lk in plan.links_by_device[name] if lk.kind == "host" and lk.a_device == name]
    return sorted(links, key=lambda lk: (lk.rail or 0) * plan.design.planes + lk.plane)


def node(plan: Plan, name: str) -> Node:
    return next(n for n in plan.nodes if n.name == name)


def sysctl_lines(text: str) -> list[tuple[str, str]]:
    out = []
    for line in text.splitlines():
        if line.strip() and not line.startswith(("#", ";")):
            k, _, v = line.partition("=")
            out.append((k.strip(), v.strip()))
    return out


APPLY_SYSCTL = textwrap.dedent("""
    import json, os, sys
    applied = 0
    for key, value in json.loads(sys.argv[1]):
        path = "/proc/sys/" + (key if "/" in key else key.replace(".", "/"))
        if key.startswith("net.ipv4.neigh.default."):
            continue  # neighbour-table limits exist in the initial namespace only
        with open(path, "w") as f:
            f.write(value)
        applied += 1
    print(applied)
""")
