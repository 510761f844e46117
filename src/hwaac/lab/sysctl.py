"""sysctl.d files, which of their keys a network namespace has, and setting sysctls inside a namespace.

sysctl.d(5): ``key = value`` lines, ``#``/``;`` comments, a leading ``-`` on a key means "ignore a failure";
``/`` and ``.`` both separate key components. In a namespace other than the initial one the kernel has the
per-interface trees ``net.ipv{4,6}.conf.*`` and ``net.ipv{4,6}.neigh.<interface>.*`` but no
``neigh.default`` (its ``gc_thresh*`` belong to the neighbour table, which all namespaces share:
``net/core/neighbour.c`` ``neigh_sysctl_register``); everything outside ``net.`` is not per namespace.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hwaac.lab.errors import LabError
from hwaac.lab.procs import run

_NAMESPACED = re.compile(r"^net\.ipv[46]\.(conf\.[^.]+|neigh\.(?!default\.)[^.]+)\.[a-z0-9_]+$")
# forwarding, the L4 ECMP hash, and ICMP errors from the interface a packet came in on, so that a probe's
# time-exceeded names the exact cable among parallel ones (hwaac.probe.paths; ip-sysctl.rst)
SWITCH_SYSCTLS = (
    ("net.ipv4.ip_forward", "1"),
    ("net.ipv4.fib_multipath_hash_policy", "1"),
    ("net.ipv4.icmp_errors_use_inbound_ifaddr", "1"),
)


def read_sysctl_d(text: str, *, source: str = "sysctl.d") -> list[tuple[str, str]]:
    """``(key, value)`` in file order, keys in dotted form without the ``-`` prefix.

    Raises:
        LabError: a line that is neither a comment nor ``key = value`` (naming file and line).
    """
    out: list[tuple[str, str]] = []
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        key, sep, value = line.partition("=")
        key = key.strip().lstrip("-").strip()
        if not sep or not key:
            raise LabError(f"{source}:{no}: {raw.strip()!r} is not 'key = value'")
        if "/" in key:  # sysctl.d(5): '/' separates components; '.' then stands for itself
            key = key.replace(".", "\0").replace("/", ".").replace("\0", "/")
        out.append((key, value.strip()))
    return out


def namespaced(key: str) -> bool:
    """Whether a network namespace has its own copy of ``key`` (see the module docstring)."""
    return bool(_NAMESPACED.match(key))


def split_namespaced(settings: Iterable[tuple[str, str]]) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """``(applied, skipped)``: the settings a namespace takes, and the others with the reason."""
    applied: list[tuple[str, str]] = []
    skipped: dict[str, str] = {}
    for key, value in settings:
        if namespaced(key):
            applied.append((key, value))
        elif key.startswith(("net.ipv4.neigh.default.", "net.ipv6.neigh.default.")):
            skipped[key] = "neighbour-table wide, shared by all namespaces (not set per lab host)"
        else:
            skipped[key] = "not per network namespace"
    return applied, skipped


def set_in_netns(netns: str, settings: Iterable[tuple[str, str]]) -> None:
    """Set sysctls inside ``netns`` (one ``sysctl -w`` for all).

    Raises:
        LabError: sysctl refused one (its message names the key).
    """
    args = [f"{k}={v}" for k, v in settings]
    if args:
        run(["ip", "netns", "exec", netns, "sysctl", "-q", "-w", *args], timeout=30)
