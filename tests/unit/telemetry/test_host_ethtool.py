"""mlx5 ethtool -S read into a port snapshot (fixtures shared with node health: tests/fixtures/health/ethtool)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.telemetry.model import canonical
from hwaac.telemetry.parsers.host_ethtool import parse_mlx5_ethtool

HEALTH = Path(__file__).parents[2] / "fixtures" / "health"
ETHTOOL = HEALTH / "ethtool"
OFED = ETHTOOL / "mlnx-ofed-100g-lane3-errors" / "ethtool-S.txt"
PAUSE = ETHTOOL / "connectx4-lx-25g-global-pause" / "ethtool-S-grep-pause.txt"
FIXTURES = sorted(ETHTOOL.glob("*/*.txt"))


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        # MLNX_OFED driver, 100G: lane 3 far worse than lane 0, and FEC no longer keeps up (CRC = symbol = PCS errors)
        (
            OFED,
            {
                "rx_crc": 386,
                "rx_symbol_err": 386,
                "phy_effective_errors": 386,
                "phy_raw_errors_lane0": 28116,
                "phy_raw_errors_lane1": 0,
                "phy_raw_errors_lane3": 17722623,
                "fec_corrected_bits": 17750739,
                "pause_tx": 2,
                "pause_rx": 0,
                "link_down_events": 0,
                "rx_ok": 15005729,
                "tx_octets": 865069388,
                "pfc0_rx_discards": 0,
                "ecn_marked": 0,
            },
        ),
        # ConnectX-4 Lx, global pause on: the host sent 1.27 million pause frames, ~556 s of pause asked of the switch
        (
            PAUSE,
            {
                "pause_tx": 1266552,
                "pause_rx": 0,
                "pause_tx_duration_us": 555665182,
                "pause_rx_duration_us": 0,
                "tx_pause_storm_error": 0,
                "tx_pause_storm_warning": 0,
            },
        ),
        # ConnectX-6 Dx PAM4 100G_2X: two active lanes, corrected bits = their sum
        (
            ETHTOOL / "connectx6dx-100g-pam4" / "ethtool-S-grep-lanes.txt",
            {
                "phy_raw_errors_lane0": 74171021,
                "phy_raw_errors_lane1": 79132779,
                "phy_raw_errors_lane2": 0,
                "fec_corrected_bits": 153303800,
            },
        ),
        # kernel 4.15 inbox driver: no lane counters, the global pause group printed with PFC off
        (
            ETHTOOL / "mlx5-connectx4-kernel-4.15" / "ethtool-S.txt",
            {
                "rx_ok": 845715962,
                "tx_octets": 2662454044895,
                "pause_rx": 0,
                "pause_rx_duration_us": 0,
                "rx_crc": 0,
                "rx_discards_phy": 0,
                "rx_out_of_buffer": 0,
            },
        ),
        (ETHTOOL / "mlx5-connectx4-kernel-4.15-derived" / "ethtool-S-crc.txt", {"rx_crc": 12, "rx_symbol_err": 9}),
        (
            ETHTOOL / "mlnx-ofed-100g-lane3-errors-derived" / "ethtool-S-pfc3_derived.txt",
            {"pfc3_rx": 91235, "pfc3_rx_duration_us": 4871305, "pfc3_tx": 0, "pfc3_tx_duration_us": 0},
        ),
    ],
)
def test_recorded_outputs(path: Path, expected: dict[str, int]) -> None:
    snap = parse_mlx5_ethtool(path.read_text(), port="ens1f0np0", device="gpu01", version="5.0-2.1.8")
    assert snap.unknown == [] and list(snap.ports) == ["ens1f0np0"]
    assert (snap.tool, snap.device, snap.version) == ("ethtool -S", "gpu01", "5.0-2.1.8")
    counters = snap.ports["ens1f0np0"].counters
    assert all(canonical(name) for name in counters)
    assert {name: counters.get(name) for name in expected} == expected


@pytest.mark.parametrize(
    ("path", "absent"),
    [
        (OFED, {"pfc3_rx", "pause_rx_duration_us", "rx_bits"}),  # PFC and global pause off; rx_bits_phy not printed
        (ETHTOOL / "mlx5-connectx4-kernel-4.15" / "ethtool-S.txt", {"phy_raw_errors_lane0", "pfc0_rx_discards"}),
    ],
)
def test_counters_the_driver_did_not_print_are_absent_not_zero(path: Path, absent: set[str]) -> None:
    assert not absent & set(parse_mlx5_ethtool(path.read_text(), port="p").ports["p"].counters)


def test_ieee_pause_counters_win_over_the_global_pause_group() -> None:
    raw = PAUSE.read_text()
    edited = raw.replace("tx_pause_ctrl_phy: 1266552", "tx_pause_ctrl_phy: 7")  # the two disagree
    assert parse_mlx5_ethtool(edited, port="p").ports["p"].counters["pause_tx"] == 7
    without = "".join(line for line in raw.splitlines(keepends=True) if "tx_pause_ctrl_phy" not in line)
    assert parse_mlx5_ethtool(without, port="p").ports["p"].counters["pause_tx"] == 1266552  # tx_global_pause


def test_roce_ce_marks_win_over_the_netdev_ring_marks() -> None:
    # Written for this test: an ethtool -S that prints the RoCE congestion counters too (some drivers do)
    # (the ring counter last, so that a reader keeping the last name seen would get it wrong)
    raw = "np_ecn_marked_roce_packets: 9\nnp_cnp_sent: 4\nrp_cnp_handled: 3\nrx_ecn_mark: 5\n"
    counters = parse_mlx5_ethtool(raw, port="p").ports["p"].counters
    assert counters == {"ecn_marked": 9, "cnp_sent": 4, "cnp_handled": 3}
    assert parse_mlx5_ethtool("rx_ecn_mark: 5\n", port="p").ports["p"].counters == {"ecn_marked": 5}


def test_a_value_that_is_not_a_count_is_none_with_a_reason() -> None:
    raw = OFED.read_text().replace("rx_crc_errors_phy: 386", "rx_crc_errors_phy: N/A")
    snap = parse_mlx5_ethtool(raw, port="p")
    assert snap.ports["p"].counters["rx_crc"] is None
    assert any("rx_crc_errors_phy: N/A" in reason for reason in snap.unknown)
    assert snap.ports["p"].counters["rx_symbol_err"] == 386  # the rest is still read


def test_a_cut_inside_a_name_is_unknown_and_invents_nothing() -> None:
    raw = OFED.read_text()
    cut = raw.index("rx_err_lane_2_phy") + 9  # "rx_err_la"
    snap = parse_mlx5_ethtool(raw[:cut], port="p")
    counters = snap.ports["p"].counters
    assert snap.unknown and counters["phy_raw_errors_lane1"] == 0
    assert "phy_raw_errors_lane2" not in counters and "phy_raw_errors_lane3" not in counters


OTHER_OUTPUTS = [
    (HEALTH / "mlxlink" / "mft-4.30.1-bluefield3" / "mlxlink-m-c.txt").read_text(),
    (HEALTH / "rdma-statistic" / "mlnx-iproute2-4link.txt").read_text(),
    (HEALTH / "ib-counters" / "procfs-fixture" / "counters.txt").read_text(),
    (HEALTH / "ibstat" / "rdma-core-47" / "h100-ib-ndr-8hca-active.txt").read_text(),
    "Cannot get stats: Operation not supported\n",
    "no stats available\n",
]


@pytest.mark.parametrize("raw", ["", " \n", "garbage \x00 ¯\\_(ツ)_/¯", "rx_packets: 1\nrx_bytes: 2\n", *OTHER_OUTPUTS])
def test_empty_garbage_and_other_outputs_are_unknown_without_port_values(raw: str) -> None:
    snap = parse_mlx5_ethtool(raw, port="p")
    assert snap.unknown and snap.ports == {}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_never_raises_and_a_cut_changes_at_most_the_value_it_falls_in(path: Path) -> None:
    raw = path.read_text()
    full = parse_mlx5_ethtool(raw, port="p").ports["p"].counters
    for k in range(1, 16):
        cut = len(raw) * k // 16
        snap = parse_mlx5_ethtool(raw[:cut], port="p")
        counters = snap.ports["p"].counters if snap.ports else {}
        changed = {name for name, value in counters.items() if value is not None and value != full[name]}
        # a cut inside the last line's digits reads as a shorter number: undetectable in a flat list, and the only
        # way a value can differ (docs/telemetry/host-nic.md)
        tail = raw[:cut].rsplit("\n", 1)[-1]
        assert not changed or (len(changed) == 1 and tail.rpartition(":")[2].strip().isdigit())
