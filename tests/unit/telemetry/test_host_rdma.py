"""rdma statistic show and sysfs counters/hw_counters read into port snapshots (fixtures shared with node health:
tests/fixtures/health/{rdma-statistic,ib-counters})."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.telemetry.model import canonical
from hwaac.telemetry.parsers.host_rdma import parse_ib_sysfs_counters, parse_rdma_statistic

HEALTH = Path(__file__).parents[2] / "fixtures" / "health"
STAT = HEALTH / "rdma-statistic"
SYSFS = HEALTH / "ib-counters"
BOND = SYSFS / "mlnx-ofed-show-counters" / "hw-counters-bond-cnp.txt"
CX4LX = SYSFS / "mlnx-ofed-show-counters" / "hw-counters-cx4lx.txt"
FOURLINK = STAT / "mlnx-iproute2-4link.txt"


@pytest.mark.parametrize(
    ("path", "port", "expected"),
    [
        (
            FOURLINK,
            "mlx5_0/1",
            {
                "rx_out_of_buffer": 135,
                "resp_cqe_err": 1009,
                "req_cqe_err": 22,
                "icrc_err": 0,
                "out_of_sequence": 0,
                "cnp_sent": 0,
                "ecn_marked": 0,
                "adp_retrans": 0,
            },
        ),
        (FOURLINK, "mlx5_3/1", {"rx_out_of_buffer": 0, "cnp_ignored": 0}),
        (
            STAT / "mlnx-iproute2-4link-after_derived.txt",
            "mlx5_0/1",
            {"out_of_sequence": 4812, "packet_seq_err": 3, "local_ack_timeout_err": 17, "rx_out_of_buffer": 135},
        ),
        # iproute2 5.3, the first release with counters: the older, smaller counter set
        (
            STAT / "iproute2-5.3-pretty.txt",
            "mlx5_0/1",
            {"rx_out_of_buffer": 0, "cnp_handled": 0, "cnp_sent": 0, "out_of_sequence": None, "icrc_err": None},
        ),
    ],
)
def test_rdma_statistic(path: Path, port: str, expected: dict[str, int | None]) -> None:
    snap = parse_rdma_statistic(path.read_text(), device="gpu01")
    assert snap.unknown == [] and snap.tool == "rdma statistic show" and snap.device == "gpu01"
    counters = snap.ports[port].counters
    assert all(canonical(name) for name in counters)
    assert {name: counters.get(name) for name in expected} == expected


def test_rdma_statistic_lists_every_link() -> None:
    assert list(parse_rdma_statistic(FOURLINK.read_text()).ports) == ["mlx5_0/1", "mlx5_1/1", "mlx5_2/1", "mlx5_3/1"]


@pytest.mark.parametrize(
    ("path", "port", "expected"),
    [
        # a RoCE LAG device marking hard: 21.3 G CE-marked packets in, 1.05 G CNPs out, none handled as a sender
        (
            BOND,
            "mlx5_bond_0/1",
            {
                "ecn_marked": 21278189006,
                "cnp_sent": 1052612505,
                "cnp_handled": 0,
                "cnp_ignored": 0,
                "out_of_sequence": 1811101,
                "resp_cqe_err": 3293504,
                "rx_out_of_buffer": 0,
                "icrc_err": 0,
                "adp_retrans_timeout": 0,
            },
        ),
        (CX4LX, "mlx5_0/1", {"rx_out_of_buffer": 135, "req_cqe_err": 22, "resp_cqe_err": 1009}),
        # counters/ and hw_counters/ together; data counters are 4-octet words
        (
            SYSFS / "procfs-fixture" / "counters.txt",
            "mlx4_0/1",
            {
                "rx_octets": 2221223609 * 4,
                "tx_ok": 85734114,
                "tx_wait": 3599,
                "rx_symbol_err": 0,
                "link_down_events": 0,
            },
        ),
        (
            SYSFS / "procfs-fixture" / "counters.txt",
            "mlx5_0/1",
            {
                "tx_octets": 2880761508848 * 4,
                "local_ack_timeout_err": 131,
                "duplicate_request": 41,
                "adp_retrans": 99,
                "ecn_marked": None,
            },
        ),  # this kernel's hw_counters had no congestion counters
    ],
)
def test_sysfs_counters(path: Path, port: str, expected: dict[str, int | None]) -> None:
    snap = parse_ib_sysfs_counters(path.read_text())
    assert snap.unknown == [] and snap.tool == "sysfs infiniband counters"
    counters = snap.ports[port].counters
    assert all(canonical(name) for name in counters)
    assert {name: counters.get(name) for name in expected} == expected


def test_sysfs_and_rdma_statistic_agree_on_the_same_port() -> None:
    # mlx5_0 port 1 of one ConnectX-4 Lx host, read through sysfs (show_counters) and through rdma statistic
    from_sysfs = parse_ib_sysfs_counters(CX4LX.read_text()).ports["mlx5_0/1"].counters
    from_rdma = parse_rdma_statistic(FOURLINK.read_text()).ports["mlx5_0/1"].counters
    assert from_sysfs == from_rdma and len(from_sysfs) == 16


@pytest.mark.parametrize(
    ("path", "port", "none", "said"),
    [
        (
            SYSFS / "gpud-943-saturated" / "counters.txt",
            "mlx5_1/1",
            {"link_down_events", "tx_drop", "tx_wait", "rx_ovr"},
            "link_downed saturated: 255 = 2^8-1",
        ),
        (
            SYSFS / "node-exporter-966-no-pma" / "counters.txt",
            "i40iw0/1",
            {"link_down_events", "rx_err", "rx_octets"},
            "N/A (no PMA)",
        ),
    ],
)
def test_untrusted_sysfs_values_are_none_with_a_reason(path: Path, port: str, none: set[str], said: str) -> None:
    snap = parse_ib_sysfs_counters(path.read_text())
    counters = snap.ports[port].counters
    assert all(counters[name] is None for name in none)
    assert any(said in reason and port in reason for reason in snap.unknown)


def test_rdma_statistic_value_that_is_not_a_count_is_none_with_a_reason() -> None:
    raw = FOURLINK.read_text().replace("out_of_buffer 135", "out_of_buffer N/A", 1)
    snap = parse_rdma_statistic(raw)
    assert snap.ports["mlx5_0/1"].counters["rx_out_of_buffer"] is None
    assert any("out_of_buffer 'N/A'" in reason for reason in snap.unknown)


def test_a_last_link_that_stops_early_is_unknown_and_its_last_value_none() -> None:
    raw = FOURLINK.read_text()
    cut = raw.rindex("link mlx5_3/1") + len(
        "link mlx5_3/1 rx_write_requests 0 rx_read_requests 0 rx_atomic_requests 0 out_of_buffer 0"
    )
    snap = parse_rdma_statistic(raw[:cut])
    assert snap.ports["mlx5_3/1"].counters == {"rx_out_of_buffer": None}  # "0" may have been "0..." before the cut
    assert any("mlx5_3/1" in reason and "cut" in reason for reason in snap.unknown)
    assert snap.ports["mlx5_2/1"].counters["icrc_err"] == 0  # the links before it are whole


def test_hw_counters_cut_inside_a_value_of_the_last_port() -> None:
    # two devices listed by one grep, the second cut inside np_ecn_marked_roce_packets' digits
    raw = CX4LX.read_text() + BOND.read_text()
    cut = raw.index("np_ecn_marked_roce_packets:2127") + len("np_ecn_marked_roce_packets:2127")
    snap = parse_ib_sysfs_counters(raw[:cut])
    assert snap.ports["mlx5_bond_0/1"].counters["ecn_marked"] is None
    assert snap.ports["mlx5_bond_0/1"].counters["cnp_sent"] == 1052612505  # read before the cut
    assert snap.ports["mlx5_0/1"].counters["rx_out_of_buffer"] == 135
    assert any("mlx5_bond_0/1" in reason and "cut" in reason for reason in snap.unknown)


OTHER_OUTPUTS = [
    (HEALTH / "ethtool" / "mlnx-ofed-100g-lane3-errors" / "ethtool-S.txt").read_text(),
    (HEALTH / "mlxlink" / "mft-4.30.1-bluefield3" / "mlxlink-m-c.txt").read_text(),
    (HEALTH / "ibstat" / "rdma-core-47" / "h100-ib-ndr-8hca-active.txt").read_text(),
    (SYSFS / "mlnx-ofed-show-counters" / "recorded.txt").read_text(),  # show_counters' own layout
]


@pytest.mark.parametrize("parser", [parse_rdma_statistic, parse_ib_sysfs_counters])
@pytest.mark.parametrize("raw", ["", " \n", "garbage \x00 ¯\\_(ツ)_/¯", *OTHER_OUTPUTS])
def test_empty_garbage_and_other_outputs_are_unknown_without_port_values(parser, raw: str) -> None:  # type: ignore[no-untyped-def]
    snap = parser(raw)
    assert snap.unknown and all(not sample.counters for sample in snap.ports.values())


def test_each_reader_refuses_the_other_format() -> None:
    assert parse_rdma_statistic(BOND.read_text()).ports == {}
    assert parse_ib_sysfs_counters(FOURLINK.read_text()).ports == {}


CASES = [(parse_rdma_statistic, p) for p in sorted(STAT.glob("*.txt"))] + [
    (parse_ib_sysfs_counters, p) for p in sorted(SYSFS.glob("*/*.txt")) if p.name != "recorded.txt"
]


@pytest.mark.parametrize(("parser", "path"), CASES, ids=lambda c: getattr(c, "name", getattr(c, "__name__", "")))
def test_never_raises_and_a_cut_changes_at_most_the_value_it_falls_in(parser, path: Path) -> None:  # type: ignore[no-untyped-def]
    raw = path.read_text()
    full = {port: sample.counters for port, sample in parser(raw).ports.items()}
    for k in range(1, 16):
        snap = parser(raw[: len(raw) * k // 16])
        changed = [
            (port, name)
            for port, sample in snap.ports.items()
            for name, value in sample.counters.items()
            if value is not None and value != full[port][name]
        ]
        assert len(changed) <= 1  # only a cut inside the last value's digits, when nothing shows the cut
