"""ethtool -S on mlx5 (tests/fixtures/health/ethtool): every counter, the RoCE ones by name, growth between readings."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.health.checks_nic import check_ethtool
from hwaac.health.node import verdict
from hwaac.health.parsers.ethtool import ERROR_COUNTERS, ethtool_growth, parse_ethtool_stats
from hwaac.health.parsers.growth import grown, unknown_growth
from hwaac.health.result import Status

FIXTURES = Path(__file__).parents[2] / "fixtures" / "health"
CX4 = FIXTURES / "ethtool" / "mlx5-connectx4-kernel-4.15" / "ethtool-S.txt"


def test_every_counter_is_read_as_an_int() -> None:
    raw = CX4.read_text()
    result = parse_ethtool_stats(raw, netdev="ens1f0")
    assert result.status() == Status.PASS and not result.unknown and not result.findings
    assert len(result.counters) == len(raw.splitlines())  # one counter per recorded line
    assert result.netdev == "ens1f0"
    c = result.counters
    assert c["rx_packets"] == 845320277 and c["tx_bytes_phy"] == 2662454044895  # first line / a _phy counter
    assert c["tx_pci_signal_integrity"] == 34 and c["tx15_xmit_more"] == 5530  # last line of the fixture


def test_roce_counters_by_name() -> None:
    result = parse_ethtool_stats(CX4.read_text())
    # all 0 in the fixture (a healthy port)
    assert (result.rx_discards_phy, result.tx_discards_phy, result.rx_out_of_buffer) == (0, 0, 0)
    assert (result.rx_crc_errors_phy, result.rx_symbol_err_phy, result.rx_pcs_symbol_err_phy) == (0, 0, 0)
    assert (result.rx_corrected_bits_phy, result.link_down_events_phy) == (0, 0)
    # PFC was not enabled on this port: mlx5 prints no per-priority pause counters, and no CNP counters here
    assert result.rx_pause == {} and result.tx_pause == {} and result.rx_pause_duration_us == {}
    assert result.np_cnp_sent is None and result.rp_cnp_handled is None
    assert result.counters["rx_global_pause"] == 0  # global pause counters are printed instead


def test_header_and_indentation_of_the_live_command_are_accepted() -> None:
    # ethq stores the output without ethtool's "NIC statistics:" header and 5-space indentation; put them back
    raw = CX4.read_text()
    live = "NIC statistics:\n" + "".join(f"     {line}\n" for line in raw.splitlines())
    assert parse_ethtool_stats(live).counters == parse_ethtool_stats(raw).counters


def test_per_priority_pause_counters() -> None:
    # lines in mlx5's naming (counters.rst "Priority Port Counters"), written here: no PFC-enabled recording found
    raw = CX4.read_text() + (
        "rx_prio3_pause: 41927\nrx_prio3_pause_duration: 8134\nrx_prio3_pause_transition: 39218\n"
        "tx_prio3_pause: 1290418\ntx_prio3_pause_duration: 2914772\nrx_prio3_discards: 0\n"
    )
    result = parse_ethtool_stats(raw)
    assert result.rx_pause == {3: 41927} and result.tx_pause == {3: 1290418}
    assert result.rx_pause_duration_us == {3: 8134} and result.tx_pause_duration_us == {3: 2914772}


def test_growth_between_two_readings() -> None:
    before = parse_ethtool_stats(CX4.read_text())
    # a second reading 10 s later, written here from the first: 50 discards, 5 CRC errors, more packets
    raw = (
        CX4.read_text()
        .replace("rx_discards_phy: 0", "rx_discards_phy: 50")
        .replace("rx_crc_errors_phy: 0", "rx_crc_errors_phy: 5")
        .replace("rx_packets_phy: 845715962", "rx_packets_phy: 845716962")
    )
    after = parse_ethtool_stats(raw)
    growth = ethtool_growth(before, after, 10.0)
    assert growth["rx_discards_phy"].delta == 50 and growth["rx_discards_phy"].per_second == 5.0
    assert growth["rx_packets_phy"].delta == 1000
    assert grown(growth, ERROR_COUNTERS) == ["rx_crc_errors_phy", "rx_discards_phy"]
    assert unknown_growth(growth) == []
    shorter = parse_ethtool_stats("rx_packets: 1\n")
    assert "rx_discards_phy" in unknown_growth(ethtool_growth(before, shorter, 10.0))  # missing on one side


@pytest.mark.parametrize(
    "raw",
    [
        "Cannot get stats strings information: Operation not supported",
        "no stats available",
        "netlink error: No such device",
    ],
)
def test_ethtool_errors_are_unknown(raw: str) -> None:
    assert parse_ethtool_stats(raw).status() == Status.UNKNOWN


def test_repeated_or_non_numeric_counters_are_unknown() -> None:
    raw = CX4.read_text()
    assert parse_ethtool_stats(raw + "rx_packets: 1\n").status() == Status.UNKNOWN
    assert parse_ethtool_stats(raw.replace("rx_wqe_err: 0", "rx_wqe_err: n/a")).status() == Status.UNKNOWN


@pytest.mark.parametrize(
    ("line", "unreadable"),
    [
        ("rx_crc_errors_phy: n/a", {"rx_crc_errors_phy": "n/a"}),  # kept by name, so a reader can say which one
        ("rx_crc_errors_phy: -1", {"rx_crc_errors_phy": "-1"}),
        ("rx_crc_errors_phy:", {}),  # no value at all: a line cut short, not a value
        ("rx crc: 5x", {}),  # not a counter name
    ],
)
def test_a_printed_value_that_is_not_a_count_is_kept_as_unreadable(line: str, unreadable: dict[str, str]) -> None:
    raw = CX4.read_text().replace("rx_crc_errors_phy: 0", line)
    result = parse_ethtool_stats(raw)
    assert result.unreadable == unreadable and "rx_crc_errors_phy" not in result.counters
    assert any(line.strip() in u for u in result.unknown)


OTHER_TOOLS = [
    (FIXTURES / "ibstat" / "rdma-core-47" / "h100-ib-ndr-8hca-active.txt").read_text(),
    (FIXTURES / "mlxlink" / "mft-4.30.1-bluefield3" / "mlxlink-m-c.txt").read_text(),
    (FIXTURES / "mlxlink" / "mft-4.30.1-bluefield3" / "mlxlink-c-json-derived.json").read_text(),
]


def _truncated() -> str:
    text = CX4.read_text()
    return text[: text.index(":", len(text) // 2) - 3]  # cut inside a counter name


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "  \n",
        "garbage \x00 ### ¯\\_(ツ)_/¯",
        "rx_packets: \u00b2",
        _truncated(),
        *OTHER_TOOLS,
    ],
)
def test_never_passes_bad_input(raw: str) -> None:
    # A cut exactly between two lines cannot be told from a shorter counter set; a check that needs a counter must
    # ask for it by name (a missing one is None and its growth unknown).
    assert parse_ethtool_stats(raw).status() != Status.PASS


@pytest.mark.parametrize(
    "fixture, named",
    [
        (CX4, ""),  # healthy: still not a PASS, nothing judges these counters yet
        (
            FIXTURES / "ethtool" / "mlx5-connectx4-kernel-4.15-derived" / "ethtool-S-crc.txt",
            "rx_crc_errors_phy=12, rx_symbol_err_phy=9",
        ),
    ],
)
def test_parsed_counters_never_pass_unjudged(fixture: Path, named: str) -> None:
    found = check_ethtool(parse_ethtool_stats(fixture.read_text(), netdev="ens1f0"))
    assert [(f.code, f.status, f.subject) for f in found] == [("NIC_ETHTOOL_UNJUDGED", Status.UNKNOWN, "ens1f0")]
    assert found[0].evidence == named and (named in found[0].message)
    assert verdict("node01", {"nic": found}).status == Status.UNKNOWN
