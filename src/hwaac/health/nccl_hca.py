"""The RDMA ports NCCL takes under an ``NCCL_IB_HCA`` value, by NCCL's own matching.

The formats, sources and rules in full: ``docs/health-modules.md``, section "NCCL_IB_HCA".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hwaac.health.parsers.ibstat import IbstatResult


def entry_matches(entry: Mapping[str, Any], device: str, port: int, exact: bool) -> bool:
    """``matchIf`` and ``matchPort`` of NCCL: whether one entry ``{"device", "port"}`` (port None: any port) of a
    list (``exact``: after ``=``) names ``device`` port ``port``."""
    name = entry["device"]
    named = device == name if exact else device.startswith(name)
    return named and (entry["port"] is None or entry["port"] == port)


def nccl_selects(spec: Mapping[str, Any], device: str, port: int) -> bool:
    """Whether NCCL takes ``device`` port ``port`` (when Active) under ``spec``, the shape
    :func:`~hwaac.plan.lookup.parse_ib_hca` returns (``exclude``, ``exact``, ``entries``)."""
    entries = spec["entries"]
    matched = not entries or any(entry_matches(e, device, port, bool(spec["exact"])) for e in entries)
    return matched != bool(spec["exclude"])


def nccl_ib_ports(spec: Mapping[str, Any], ib: IbstatResult) -> dict[str, Any]:
    """The ports of ``ib`` that NCCL takes under ``spec`` (if Active), and the entries that name none.

    Returns:
        ``{"ports": [{"device", "port"}], "devices": [name], "missing": [{"device", "port"}]}``: ``ports`` in
        ibstat's order, ``devices`` the devices of those ports, ``missing`` the entries of an include list (no
        ``^``) that match no port ibstat lists: a device or port that is not there, or not read (``ib.panic``).
        An exclude list names devices NCCL must not take, so none of its entries is missing.
    """
    present = [(p.ca, p.number) for p in ib.ports()]
    ports = [{"device": d, "port": n} for d, n in present if nccl_selects(spec, d, n)]
    exact = bool(spec["exact"])
    missing = (
        []
        if spec["exclude"]
        else [
            {"device": e["device"], "port": e["port"]}
            for e in spec["entries"]
            if not any(entry_matches(e, d, n, exact) for d, n in present)
        ]
    )
    return {"ports": ports, "devices": list(dict.fromkeys(p["device"] for p in ports)), "missing": missing}
