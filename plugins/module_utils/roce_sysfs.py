# Copyright: hwaac maintainers
# Apache-2.0
"""Paths and value formats of the RoCE settings that live in sysfs/configfs (standard library only).

The global traffic class (``/sys/class/infiniband/<hca>/tc/<port>/traffic_class``), ECN and CNP marking
(``/sys/class/net/<if>/ecn/...``), the MTU (``/sys/class/net/<if>/mtu``) and the RDMA-CM default ToS
(``/sys/kernel/config/rdma_cm/<hca>/``), each with its format and source: docs/modules/nic.md, "RoCE settings
in sysfs and configfs".
"""

from __future__ import annotations

import os
import re

_TCLASS_RE = re.compile(r"^(?:Global tclass=)?(?P<val>-?\d+)$")


class RoceSysfsError(Exception):
    """A sysfs file that is missing or holds something unexpected."""


def traffic_class_path(sysfs_root: str, hca: str, port: int = 1) -> str:
    """``<sysfs_root>/class/infiniband/<hca>/tc/<port>/traffic_class``."""
    return os.path.join(sysfs_root, "class", "infiniband", hca, "tc", str(port), "traffic_class")


def ecn_enable_path(sysfs_root: str, interface: str, role: str, prio: int) -> str:
    """``<sysfs_root>/class/net/<if>/ecn/roce_<role>/enable/<prio>`` (role ``np`` or ``rp``)."""
    if role not in ("np", "rp"):
        raise RoceSysfsError(f"ECN role must be np or rp, got {role!r}")
    return os.path.join(sysfs_root, "class", "net", interface, "ecn", f"roce_{role}", "enable", str(prio))


def cnp_path(sysfs_root: str, interface: str, name: str) -> str:
    """``<sysfs_root>/class/net/<if>/ecn/roce_np/<name>`` (``cnp_dscp`` or ``cnp_802p_prio``)."""
    return os.path.join(sysfs_root, "class", "net", interface, "ecn", "roce_np", name)


def mtu_path(sysfs_root: str, interface: str) -> str:
    """``<sysfs_root>/class/net/<if>/mtu``."""
    return os.path.join(sysfs_root, "class", "net", interface, "mtu")


def rdma_cm_dir(configfs_root: str, hca: str | None = None) -> str:
    """``<configfs_root>/rdma_cm`` or ``<configfs_root>/rdma_cm/<hca>``."""
    base = os.path.join(configfs_root, "rdma_cm")
    return os.path.join(base, hca) if hca else base


def parse_traffic_class(text: str) -> int | None:
    """``"Global tclass=106\\n"`` -> 106; ``""`` (no global ToS set) -> ``None``.

    A bare number is accepted too: it is what a plain file holds after ``echo 106 > traffic_class`` (the test
    tree is plain files); the kernel itself prints the ``Global tclass=`` form. A negative value means cleared.
    Anything else raises :class:`RoceSysfsError` (e.g. per-rule ``tclass=... dst_ip=...`` lines, which hwaac
    does not manage).
    """
    s = text.strip()
    if not s:
        return None
    m = _TCLASS_RE.match(s)
    if not m:
        raise RoceSysfsError(f"unexpected traffic_class content {s!r}")
    val = int(m.group("val"))
    return None if val < 0 else val


def read_text(path: str) -> str:
    """The content of a sysfs file; :class:`RoceSysfsError` naming the path when it cannot be read."""
    try:
        with open(path, encoding="ascii") as fh:
            return fh.read()
    except OSError as exc:
        raise RoceSysfsError(f"cannot read {path}: {exc.strerror or exc}") from exc


def read_int(path: str) -> int:
    """A sysfs file holding one integer (``"1\\n"``, ``"9000\\n"``)."""
    s = read_text(path).strip()
    try:
        return int(s)
    except ValueError as exc:
        raise RoceSysfsError(f"{path} holds {s!r}, not an integer") from exc


def write_text(path: str, value: str) -> None:
    """Write ``value`` to a sysfs file the way ``echo value > path`` does (one write, trailing newline)."""
    try:
        with open(path, "w", encoding="ascii") as fh:
            fh.write(value + "\n")
    except OSError as exc:
        raise RoceSysfsError(f"cannot write {value!r} to {path}: {exc.strerror or exc}") from exc
