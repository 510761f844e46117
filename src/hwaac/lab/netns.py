"""Network namespaces and veth pairs, with ``ip -batch`` (one process for many commands).

Veth pairs are created straight into their two namespaces (``ip link add X netns A type veth peer name Y
netns B``), so no interface ever appears in the initial namespace. ``ip netns`` keeps its names in
``/run/netns`` (iproute2 ``ip/ipnetns.c``, NETNS_RUN_DIR).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from hwaac.lab.procs import run

NETNS_DIR = Path("/run/netns")


def existing(prefix: str = "") -> list[str]:
    """Namespace names (``ip netns list``) starting with ``prefix``, sorted."""
    try:
        names = os.listdir(NETNS_DIR)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n.startswith(prefix))


def batch(lines: Sequence[str], *, netns: str | None = None, force: bool = False, timeout: float = 120.0) -> None:
    """Run ``ip [-n netns] [-force] -batch -`` over ``lines``.

    Raises:
        LabError: ip refused a line (its message names the line number; with ``force`` the others still run).
    """
    if not lines:
        return
    argv = ["ip"] + (["-n", netns] if netns else []) + (["-force"] if force else []) + ["-batch", "-"]
    run(argv, input="\n".join(lines) + "\n", timeout=timeout)


def add(names: Iterable[str]) -> None:
    """Create the namespaces (each with ``lo`` up)."""
    names = list(names)
    batch([f"netns add {n}" for n in names])
    for n in names:
        batch(["link set dev lo up"], netns=n)


def delete(names: Iterable[str]) -> None:
    """Delete the namespaces that exist (``ip netns del``; the kernel frees each once no process holds it)."""
    present = set(existing())
    batch([f"netns del {n}" for n in names if n in present], force=True, timeout=600)


def pids(names: Iterable[str]) -> dict[str, list[int]]:
    """Processes in each of the namespaces, as ``ip netns pids`` finds them (same device and inode of
    ``/proc/<pid>/ns/net`` and ``/run/netns/<name>``), in one pass over ``/proc``."""
    want: dict[tuple[int, int], str] = {}
    for name in names:
        try:
            st = os.stat(NETNS_DIR / name)
        except FileNotFoundError:
            continue
        want[(st.st_dev, st.st_ino)] = name
    found: dict[str, list[int]] = {n: [] for n in want.values()}
    if not want:
        return found
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            st = os.stat(f"/proc/{entry}/ns/net")
        except (FileNotFoundError, PermissionError, ProcessLookupError):
            continue
        owner = want.get((st.st_dev, st.st_ino))
        if owner:
            found[owner].append(int(entry))
    return found


def veth_line(a_netns: str, a_if: str, a_mtu: int | None, b_netns: str, b_if: str, b_mtu: int | None) -> str:
    """The ``ip -batch`` line that creates one veth pair between two namespaces."""
    a = f"{a_if}" + (f" mtu {a_mtu}" if a_mtu else "") + f" netns {a_netns}"
    b = f"{b_if}" + (f" mtu {b_mtu}" if b_mtu else "") + f" netns {b_netns}"
    return f"link add {a} type veth peer name {b}"
