"""hwaac.health.nccl_hca: the ports NCCL_IB_HCA selects among those ibstat lists, by NCCL's rule (NVIDIA/nccl
src/transport/net_ib/init.cc, matchIfList of src/misc/utils.cc): prefixes unless ``=``, ``^`` excludes, an entry
without a port takes every port, an empty list takes every port.

The node: twelve ConnectX HCAs in ibstat's order (umad_get_cas_names: mlx5_1 before mlx5_10 before mlx5_2), mlx5_0
dual-port, the rest one port each. The selection is made before the state test, so states do not matter here."""

from __future__ import annotations

from typing import Any

import pytest

from hwaac.health.nccl_hca import nccl_ib_ports, nccl_selects
from hwaac.health.parsers.ibstat import IbstatCa, IbstatPort, IbstatResult
from hwaac.plan.lookup import parse_ib_hca

ORDER = ["mlx5_0", "mlx5_1", "mlx5_10", "mlx5_11", *(f"mlx5_{i}" for i in range(2, 10))]
IB = IbstatResult(
    cas=[IbstatCa(name, ports=[IbstatPort(name, n) for n in ((1, 2) if name == "mlx5_0" else (1,))]) for name in ORDER]
)
ALL = [(d, n) for d in ORDER for n in ((1, 2) if d == "mlx5_0" else (1,))]


def ports(*devices: str) -> list[tuple[str, int]]:
    """Every port of ``devices``, in ibstat's order."""
    return [(d, n) for d, n in ALL if d in devices]


RAILS = [f"mlx5_{i}" for i in range(8)]
# (value, the ports NCCL takes, the entries that name no port)
CASES: list[tuple[str, list[tuple[str, int]], list[tuple[str, int | None]]]] = [
    ("=mlx5_0:1,mlx5_1:1", [("mlx5_0", 1), ("mlx5_1", 1)], []),
    ("=mlx5_0,mlx5_1", ports("mlx5_0", "mlx5_1"), []),  # no port: both ports of mlx5_0
    ("=mlx5_0:2", [("mlx5_0", 2)], []),
    ("mlx5_1", ports("mlx5_1", "mlx5_10", "mlx5_11"), []),  # a prefix: mlx5_10 and mlx5_11 too
    ("=mlx5_1", ports("mlx5_1"), []),
    ("mlx5", ALL, []),
    ("^mlx5_1", [p for p in ALL if p not in ports("mlx5_1", "mlx5_10", "mlx5_11")], []),
    ("^=mlx5_8,mlx5_9,mlx5_10,mlx5_11", ports(*RAILS), []),
    ("^mlx5_0:2", [p for p in ALL if p != ("mlx5_0", 2)], []),
    ("^=mlx5_12", ALL, []),  # excluding a device that is not there: nothing missing
    ("=mlx5_0,mlx5_12", ports("mlx5_0"), [("mlx5_12", None)]),
    ("=mlx5_1:2", [], [("mlx5_1", 2)]),  # mlx5_1 has one port
    ("mlx5_12", [], [("mlx5_12", None)]),
    ("=mlx5_0, mlx5_1", ports("mlx5_0"), [(" mlx5_1", None)]),  # NCCL trims nothing
    ("=^mlx5_0", [], [("^mlx5_0", None)]),  # '^' after '=' is part of the name
    ("=mlx5_2::0:0,mlx5_3:1:0:1", ports("mlx5_2", "mlx5_3"), []),  # NCCL 2.30 rail and plane fields
    ("", ALL, []),  # no entry: every port
    ("=", ALL, []),
    ("^", [], []),  # every port matches the empty list, and '^' leaves them out
]


@pytest.mark.parametrize(("value", "taken", "missing"), CASES, ids=[c[0] or "empty" for c in CASES])
def test_nccl_ib_ports(value: str, taken: list[tuple[str, int]], missing: list[tuple[str, int | None]]) -> None:
    got = nccl_ib_ports(parse_ib_hca(value), IB)
    assert [(p["device"], p["port"]) for p in got["ports"]] == taken
    assert got["devices"] == list(dict.fromkeys(d for d, _ in taken))
    assert [(m["device"], m["port"]) for m in got["missing"]] == missing


@pytest.mark.parametrize(
    ("value", "device", "port", "taken"),
    [
        ("=mlx5_7:1", "mlx5_7", 1, True),  # a device ibstat does not list is judged by its name alone
        ("=mlx5_7:1", "mlx5_7", 2, False),
        ("mlx5_1", "mlx5_12", 1, True),
        ("^=mlx5_7", "mlx5_7", 1, False),
        ("^=mlx5_7", "mlx5_70", 1, True),
    ],
)
def test_nccl_selects(value: str, device: str, port: int, taken: bool) -> None:
    assert nccl_selects(parse_ib_hca(value), device, port) is taken


def test_the_state_does_not_matter() -> None:
    """A Down port is still selected: NCCL would take it once it is Active, so it is the one to check."""
    down = IbstatResult(
        cas=[IbstatCa("mlx5_0", ports=[IbstatPort("mlx5_0", 1, state="Down", physical_state="Polling")])]
    )
    got: dict[str, Any] = nccl_ib_ports(parse_ib_hca("=mlx5_0:1"), down)
    assert got == {"ports": [{"device": "mlx5_0", "port": 1}], "devices": ["mlx5_0"], "missing": []}
