"""The fake sysfs port-counter tree of a simulated GPU node (``$HWAAC_FAKE_STATE/sys``).

Layout, with the file names of the real kernel tree (``drivers/infiniband/core/sysfs.c``; the mlx5 driver's
``hw_counters``)::

    <state>/sys/class/infiniband/mlx5_<i>/ports/1/counters/<name>      legacy PortCounters + data/packet counters
    <state>/sys/class/infiniband/mlx5_<i>/ports/1/hw_counters/<name>   mlx5 hw counters

The names are those of the recorded trees in ``tests/fixtures/health/ib-counters/``: the 21 ``counters/`` files of
a ConnectX-7 port (gpud-943-saturated, the same set as procfs-fixture's mlx5_0) and the 25 ``hw_counters/`` files of
procfs-fixture's mlx5_0 (they hold every hw counter NVSentinel's nic-health-monitor rules and hwaac's profile
watch: ``rnr_nak_retry_err``, ``local_ack_timeout_err``, ``roce_slow_restart``, ``out_of_sequence``,
``packet_seq_err``, ``out_of_buffer``). Every error counter starts at 0; the data and packet counters start at
plausible values (those procfs-fixture's mlx5_0 shows), ``hw_counters/lifespan`` (the driver's cache age in ms, not a
counter) at 10. Files hold ``<value>\\n`` as sysfs prints them, so ``grep -H . <glob>`` (hwaac's probe, run with the
real grep and ``sysfs_root = $HWAAC_FAKE_STATE/sys``) reads ``path:value`` lines.

:func:`bump` adds to counters the way the hardware counts: a legacy PortCounters field stops at ``2**bits - 1``
(IBA Vol. 1 §16.1; the widths of ``hwaac.health.parsers.ib_counters.LEGACY_COUNTER_BITS``, copied here because a
fake runs without the repository on ``sys.path``), data/packet counters are the 64-bit extended ones.

Standard library only; the fakes import this file by path.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

PORT = 1

# IBA Vol. 1 §16.1 PortCounters widths (= hwaac.health.parsers.ib_counters.LEGACY_COUNTER_BITS; a test checks).
LEGACY_COUNTER_BITS: dict[str, int] = {
    "symbol_error": 16,
    "link_error_recovery": 8,
    "link_downed": 8,
    "port_rcv_errors": 16,
    "port_rcv_remote_physical_errors": 16,
    "port_rcv_switch_relay_errors": 16,
    "port_xmit_discards": 16,
    "port_xmit_constraint_errors": 8,
    "port_rcv_constraint_errors": 8,
    "local_link_integrity_errors": 4,
    "excessive_buffer_overrun_errors": 4,
    "VL15_dropped": 16,
    "port_xmit_wait": 32,
}
EXTENDED_BITS = 64  # PortCountersExtended data/packet counters, and the mlx5 hw counters (u64 in sysfs)

# counters/ of a ConnectX-7 port: the recorded gpud-943 set (C-locale glob order), starting values.
COUNTERS: dict[str, int] = {
    "VL15_dropped": 0,
    "excessive_buffer_overrun_errors": 0,
    "link_downed": 0,
    "link_error_recovery": 0,
    "local_link_integrity_errors": 0,
    "multicast_rcv_packets": 0,
    "multicast_xmit_packets": 0,
    "port_rcv_constraint_errors": 0,
    "port_rcv_data": 18126345378,
    "port_rcv_errors": 0,
    "port_rcv_packets": 541889824,
    "port_rcv_remote_physical_errors": 0,
    "port_rcv_switch_relay_errors": 0,
    "port_xmit_constraint_errors": 0,
    "port_xmit_data": 2880761508848,
    "port_xmit_discards": 0,
    "port_xmit_packets": 10907922116,
    "port_xmit_wait": 0,
    "symbol_error": 0,
    "unicast_rcv_packets": 541889824,
    "unicast_xmit_packets": 10907922116,
}

# hw_counters/ of an mlx5 port: the recorded procfs-fixture mlx5_0 set; all 0 but lifespan.
HW_COUNTERS: dict[str, int] = {
    "duplicate_request": 0,
    "implied_nak_seq_err": 0,
    "lifespan": 10,
    "local_ack_timeout_err": 0,
    "out_of_buffer": 0,
    "out_of_sequence": 0,
    "packet_seq_err": 0,
    "req_cqe_error": 0,
    "req_cqe_flush_error": 0,
    "req_remote_access_errors": 0,
    "req_remote_invalid_request": 0,
    "resp_cqe_error": 0,
    "resp_cqe_flush_error": 0,
    "resp_local_length_error": 0,
    "resp_remote_access_errors": 0,
    "rnr_nak_retry_err": 0,
    "roce_adp_retrans": 0,
    "roce_adp_retrans_to": 0,
    "roce_slow_restart": 0,
    "roce_slow_restart_cnps": 0,
    "roce_slow_restart_trans": 0,
    "rx_atomic_requests": 0,
    "rx_dct_connect": 0,
    "rx_read_requests": 0,
    "rx_write_requests": 0,
}


def sys_root(state_dir: Path | str) -> Path:
    """The node's fake ``/sys`` (pass it as hwaac's ``sysfs_root``)."""
    return Path(state_dir) / "sys"


def port_dir(state_dir: Path | str, dev: str, port: int = PORT) -> Path:
    """``<state>/sys/class/infiniband/<dev>/ports/<port>``."""
    return sys_root(state_dir) / "class" / "infiniband" / dev / "ports" / str(port)


def _ensure_dev(state_dir: Path | str, dev: str) -> None:
    base = port_dir(state_dir, dev)
    for group, defaults in (("counters", COUNTERS), ("hw_counters", HW_COUNTERS)):
        folder = base / group
        folder.mkdir(parents=True, exist_ok=True)
        for name, value in defaults.items():
            path = folder / name
            if not path.exists():
                path.write_text(f"{value}\n")


def ensure_tree(state_dir: Path | str, rails: int) -> Path:
    """Create the counter files of ``mlx5_0 .. mlx5_<rails-1>`` port 1 that are missing (existing values are kept).
    Returns the fake sysfs root."""
    for i in range(rails):
        _ensure_dev(state_dir, f"mlx5_{i}")
    return sys_root(state_dir)


def _where(name: str) -> str:
    if name in COUNTERS:
        return "counters"
    if name in HW_COUNTERS and name != "lifespan":
        return "hw_counters"
    raise KeyError(f"unknown port counter {name!r}; valid: {', '.join([*COUNTERS, *HW_COUNTERS])}")


def read(state_dir: Path | str, dev: str) -> dict[str, int]:
    """Every counter of ``dev`` port 1 (both groups, ``lifespan`` left out); {} when the port has no tree."""
    base = port_dir(state_dir, dev)
    out: dict[str, int] = {}
    for group in ("counters", "hw_counters"):
        folder = base / group
        if folder.is_dir():
            for path in sorted(folder.iterdir()):
                if path.name != "lifespan":
                    out[path.name] = int(path.read_text().strip() or 0)
    return out


def bump(state_dir: Path | str, dev: str, **deltas: int) -> dict[str, int]:
    """Add ``deltas`` (counter name -> increase, >= 0) to ``dev`` port 1, creating its tree when missing. A legacy
    counter stops at ``2**bits - 1`` (it never wraps); the 64-bit ones saturate at ``2**64 - 1``. Returns the new
    values of the bumped counters. Raises KeyError for a name the tree does not have, ValueError for a negative
    delta."""
    _ensure_dev(state_dir, dev)
    base = port_dir(state_dir, dev)
    lock_path = Path(state_dir) / ".nic_counters.lock"
    out: dict[str, int] = {}
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for name, delta in deltas.items():
            if delta < 0:
                raise ValueError(f"{name}: counters only grow (delta {delta})")
            path = base / _where(name) / name
            top = 2 ** LEGACY_COUNTER_BITS.get(name, EXTENDED_BITS) - 1
            value = min(top, int(path.read_text().strip() or 0) + int(delta))
            tmp = path.with_name(f".{name}.{os.getpid()}")
            tmp.write_text(f"{value}\n")
            os.replace(tmp, path)
            out[name] = value
    return out
