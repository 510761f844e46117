"""hwaac.health.rail_check: the verdict of the rail pre-flight where ibstat or the HCA list is not simply right or
wrong (the role's own run, tests/unit/ansible/test_rail_check_role.py, covers recorded and fake ibstat outputs).

A node with eight rails, rail<i> on mlx5_<i> port 1, cabled to leaf-r<i> Ethernet0 at 10.0.<i>.1/31."""

from __future__ import annotations

import pytest

from hwaac.health.parsers.ibstat import IbstatCa, IbstatPort, IbstatResult
from hwaac.health.rail_check import RailCheckError, check_rails
from hwaac.plan.lookup import parse_ib_hca

RAILS = [
    {"interface": f"rail{i}", "address": f"10.0.{i}.1", "prefixlen": 31, "leaf": f"leaf-r{i}", "leaf_port": "Ethernet0"}
    for i in range(8)
]
NIC_PORTS = [{"interface": f"rail{i}", "hca": f"mlx5_{i}"} for i in range(8)]
RENDERED = "=" + ",".join(f"mlx5_{i}:1" for i in range(8))


def node(count: int = 8, *, unread_state: str = "", panic_at: str = "") -> IbstatResult:
    """``count`` HCAs, every port Active/LinkUp; ``unread_state``: that HCA's State could not be read (the parser
    keeps None and says why); ``panic_at``: ibstat stopped at that device (ibpanic)."""
    cas = [
        IbstatCa(f"mlx5_{i}", ports=[IbstatPort(f"mlx5_{i}", 1, state="Active", physical_state="LinkUp")])
        for i in range(count)
    ]
    ib = IbstatResult(cas=cas)
    if unread_state:
        ib.port(unread_state).state = None  # type: ignore[union-attr]
        ib.unknown.append(f"{unread_state} port 1: unrecognised State 'Actve'")
    if panic_at:
        ib.failed_device, ib.panic = panic_at, f"main: stat of IB device '{panic_at}' failed: No such file"
    return ib


ALL_RAILS = (
    "rail0 (mlx5_0), rail1 (mlx5_1), rail2 (mlx5_2), rail3 (mlx5_3), rail4 (mlx5_4), rail5 (mlx5_5), "
    "rail6 (mlx5_6), rail7 (mlx5_7)"
)
# (case, ibstat, NCCL_IB_HCA, status, message)
CASES = [
    (
        "ibpanic",
        node(6, panic_at="mlx5_6"),
        RENDERED,
        "UNKNOWN",
        "2 of 8 rails not usable: rail6 (mlx5_6, not read, ibstat stopped at mlx5_6, 10.0.6.1/31) -> "
        "leaf-r6 Ethernet0; "
        "rail7 (mlx5_7, not read, ibstat stopped at mlx5_6, 10.0.7.1/31) -> leaf-r7 Ethernet0; ibstat was not read "
        "completely: ibstat stopped at device 'mlx5_6' (ibpanic); the devices after it were not read: main: stat of IB "
        "device 'mlx5_6' failed: No such file",
    ),
    (
        "state-not-read",
        node(unread_state="mlx5_3"),
        RENDERED,
        "UNKNOWN",
        "1 of 8 rails not usable: rail3 (mlx5_3, state not read, 10.0.3.1/31) -> leaf-r3 Ethernet0; ibstat was not "
        "read completely: ibstat: mlx5_3 port 1: unrecognised State 'Actve'",
    ),
    (
        "an-entry-naming-nothing",
        node(),
        RENDERED + ",mlx5_9",
        "FAIL",
        "1 other port not usable: mlx5_9 (missing, not a rail of the plan)",
    ),
    (
        "no-rail-taken",
        node(10),
        "=mlx5_8,mlx5_9",
        "FAIL",
        f"NCCL_IB_HCA==mlx5_8,mlx5_9 takes none of the node's 8 rails ({ALL_RAILS}); NCCL also takes mlx5_8 port 1, "
        "mlx5_9 port 1 (not a rail of the plan)",
    ),
    ("nothing-taken", node(), "^", "FAIL", f"NCCL_IB_HCA=^ takes none of the node's 8 rails ({ALL_RAILS})"),
    (
        "prefix-of-absent-rail",
        node(7),
        "mlx5_",
        "FAIL",
        "1 of 8 rails not usable: rail7 (mlx5_7, missing, 10.0.7.1/31) -> leaf-r7 Ethernet0",
    ),
    (
        "all-good",
        node(),
        RENDERED,
        "PASS",
        "8 rails Active: mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7",
    ),
]


@pytest.mark.parametrize(("ib", "value", "status", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_check_rails(ib: IbstatResult, value: str, status: str, message: str) -> None:
    report = check_rails(ib, parse_ib_hca(value), RAILS, NIC_PORTS)
    assert (report["status"], report["msg"]) == (status, message)


def test_the_report_names_each_rail_and_its_state() -> None:
    report = check_rails(node(7), parse_ib_hca("^=mlx5_0"), RAILS, NIC_PORTS)
    assert [(r["interface"], r["hca"], r["problem"], r["status"]) for r in report["rails"]] == [
        *((f"rail{i}", f"mlx5_{i}", None, "PASS") for i in range(1, 7)),
        ("rail7", "mlx5_7", "missing", "FAIL"),
    ]
    assert [r["interface"] for r in report["left_out"]] == ["rail0"]
    assert report["other_ports"] == [] and report["findings"] == [] and report["value"] == "^=mlx5_0"


def test_rails_the_rendered_nic_ports_do_not_know() -> None:
    with pytest.raises(
        RailCheckError,
        match=r"rail port\(s\) rail7 of plan.json have no RDMA device in the "
        r"rendered nic-roce.json: re-render the plan folder",
    ):
        check_rails(node(), parse_ib_hca(RENDERED), RAILS, NIC_PORTS[:7])
