"""ibstat (read, then judged by hwaac.health.checks_nic.check_ibstat_ports), sysfs InfiniBand counters (read, then
judged by hwaac.health.checks_nic.check_ib_counters) and counter growth on recorded outputs (fixtures/health/ibstat,
ib-counters)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.health.checks_nic import check_ib_counters, check_ibstat_ports
from hwaac.health.parsers.growth import counter_growth, grown, grown_by_port, port_counter_growth, unknown_growth
from hwaac.health.parsers.ib_counters import ERROR_COUNTERS, IbCountersResult, parse_ib_counters
from hwaac.health.parsers.ibstat import IbstatCa, IbstatPort, IbstatResult, parse_ibstat
from hwaac.health.result import Action, Finding, Status

FIXTURES = Path(__file__).parents[2] / "fixtures" / "health"
IBSTAT = FIXTURES / "ibstat"
COUNTERS = FIXTURES / "ib-counters"

NDR_8HCA = IBSTAT / "rdma-core-47" / "h100-ib-ndr-8hca-active.txt"
ROCE_POLLING = IBSTAT / "rdma-core-47" / "h100-roce-400g-down-polling.txt"
ETH_DISABLED = IBSTAT / "rdma-core-47" / "h100-ib-ndr-eth-disabled.txt"
IBPANIC = IBSTAT / "rdma-core-39" / "a100-ibpanic.txt"
CX6DX_ROCE = IBSTAT / "issue-threads" / "cx6dx-roce-2port-active.txt"
POLLING_10 = IBSTAT / "issue-threads" / "polling-rate-10.txt"
HEALTHY_COUNTERS = COUNTERS / "procfs-fixture" / "counters.txt"
SATURATED = COUNTERS / "gpud-943-saturated" / "counters.txt"
NO_PMA = COUNTERS / "node-exporter-966-no-pma" / "counters.txt"


def read(path: Path) -> str:
    return path.read_text()


def faults(result: IbstatResult, devices: set[str] | None = None) -> list[Finding]:
    """What the check layer finds in an ibstat reading without a profile (the parser itself records none)."""
    assert result.findings == []  # facts only
    return [f for f in check_ibstat_ports(result, devices) if f.code != "PARSE_UNREADABLE"]


def verdict(result: IbstatResult, devices: set[str] | None = None) -> Status:
    return max((f.status for f in check_ibstat_ports(result, devices)), default=Status.PASS)


# --- ibstat -------------------------------------------------------------------------------------------------------


def test_healthy_ndr_node_reads_every_ca_and_port() -> None:
    result = parse_ibstat(read(NDR_8HCA))
    assert verdict(result) == Status.PASS and not result.unknown and not faults(result)
    # 8 MT4129 CAs on InfiniBand at "Rate: 400", plus mlx5_bond_0 (MT41692) on Ethernet at "Rate: 200"
    assert [ca.name for ca in result.cas] == [f"mlx5_{i}" for i in (0, 1, 4, 5, 6, 7, 8, 9)] + ["mlx5_bond_0"]
    ib = result.up_ports("InfiniBand")
    assert len(ib) == 8 and {p.working_rate_gbps for p in ib} == {400.0}
    assert [p.subject for p in result.up_ports("Ethernet")] == ["mlx5_bond_0 port 1"]
    ca0 = result.cas[0]  # first block of the fixture
    assert (ca0.ca_type, ca0.number_of_ports, ca0.firmware_version) == ("MT4129", 1, "28.41.1000")
    assert ca0.hardware_version == "0"
    assert ca0.node_guid == "0x0000000000001001" == ca0.ports[0].port_guid  # placeholder, node GUID = port GUID on IB
    port = result.port("mlx5_0")
    assert port is not None
    assert (port.base_lid, port.lmc, port.sm_lid, port.capability_mask) == (128, 0, 1, 0xA751E848)
    bond = result.port("mlx5_bond_0")
    assert bond is not None and bond.link_layer == "Ethernet" and bond.rate_gbps == 200.0 and bond.base_lid == 0


def test_healthy_roce_ports_pass() -> None:
    result = parse_ibstat(read(CX6DX_ROCE))
    assert verdict(result) == Status.PASS
    assert [(p.subject, p.link_layer, p.working_rate_gbps) for p in result.ports()] == [
        ("mlx5_0 port 1", "Ethernet", 100.0),
        ("mlx5_1 port 1", "Ethernet", 100.0),
    ]
    assert result.cas[0].ca_type == "MT4125" and result.cas[0].firmware_version == "22.32.2004"


def test_polling_port_fails_and_its_rate_is_no_working_link() -> None:
    result = parse_ibstat(read(ROCE_POLLING))
    assert verdict(result) == Status.FAIL
    # mlx5_11: Down/Polling "Rate: 40"; mlx5_5: Down/Disabled "Rate: 40"
    assert [(f.code, f.subject, f.status, f.action) for f in faults(result)] == [
        ("NIC_PORT_DOWN", "mlx5_11 port 1", Status.FAIL, Action.CHECK_LINK),
        ("NIC_PORT_DOWN", "mlx5_5 port 1", Status.FAIL, Action.CHECK_LINK),
    ]
    polling = result.port("mlx5_11")
    assert polling is not None
    assert (polling.state, polling.physical_state, polling.rate_gbps) == ("Down", "Polling", 40.0)
    assert polling.working_rate_gbps is None and not polling.is_up
    assert "Physical state: Polling" in faults(result)[0].evidence and "CA 'mlx5_11'" in faults(result)[0].evidence
    assert "Down/Polling" in faults(result)[0].message
    # 12 Ethernet ports, 10 up: 6 at 400 (MT4129) and 4 at 100 (MT4125)
    rates = sorted(p.working_rate_gbps or 0 for p in result.up_ports("Ethernet"))
    assert rates == [100.0] * 4 + [400.0] * 6


def test_only_the_ports_given_are_judged() -> None:
    """``ports``: the device ports a caller uses (NCCL's ``mlx5_0:1``), not every port of a dual-port HCA."""
    dual = IbstatResult(
        cas=[
            IbstatCa(
                "mlx5_0",
                ports=[
                    IbstatPort("mlx5_0", 1, state="Active", physical_state="LinkUp"),
                    IbstatPort("mlx5_0", 2, state="Down", physical_state="Disabled"),
                ],
            )
        ]
    )
    assert [f.subject for f in check_ibstat_ports(dual, ["mlx5_0"])] == ["mlx5_0 port 2"]
    assert check_ibstat_ports(dual, ports=[("mlx5_0", 1)]) == []
    assert [f.subject for f in check_ibstat_ports(dual, ports=[("mlx5_0", 1), ("mlx5_0", 2)])] == ["mlx5_0 port 2"]
    result = parse_ibstat(read(ROCE_POLLING))  # mlx5_5 and mlx5_11 down
    assert [f.subject for f in faults(result) if f.code == "NIC_PORT_DOWN"] == ["mlx5_11 port 1", "mlx5_5 port 1"]
    chosen = [(f"mlx5_{i}", 1) for i in range(8)]
    assert [f.subject for f in check_ibstat_ports(result, ports=chosen)] == ["mlx5_5 port 1"]


def test_polling_port_printing_rate_10_is_down() -> None:
    result = parse_ibstat(read(POLLING_10))  # gpud#482: Down/Polling, "Rate: 10"
    port = result.port("mlx5_10")
    assert port is not None and port.rate_gbps == 10.0 and port.working_rate_gbps is None
    assert [f.code for f in faults(result)] == ["NIC_PORT_DOWN"] and verdict(result) == Status.FAIL
    assert result.cas[0].node_guid == "..."  # the author's elision, kept as text


def test_down_ports_of_unjudged_devices_are_read_but_not_failed() -> None:
    raw = read(ETH_DISABLED)  # mlx5_2, mlx5_7, mlx5_8: MT4125 Ethernet ports Down/Disabled
    assert [f.subject for f in faults(parse_ibstat(raw))] == ["mlx5_2 port 1", "mlx5_7 port 1", "mlx5_8 port 1"]
    rails = {ca.name for ca in parse_ibstat(raw).cas if ca.ca_type == "MT4129"}
    result = parse_ibstat(raw)
    assert verdict(result, rails) == Status.PASS and len(result.up_ports("InfiniBand")) == 8
    assert result.port("mlx5_2") is not None and not result.port("mlx5_2").is_up  # type: ignore[union-attr]


def test_ibpanic_keeps_the_devices_read_and_names_the_one_it_failed_on() -> None:
    result = parse_ibstat(read(IBPANIC))
    assert verdict(result) == Status.UNKNOWN  # never PASS, though every port read is up
    assert [ca.name for ca in result.cas] == [f"mlx5_{i}" for i in range(8)]
    assert len(result.up_ports("InfiniBand")) == 8 and {p.rate_gbps for p in result.ports()} == {200.0}
    assert result.failed_device == "mlx5_8"
    [panic] = faults(result)
    assert (panic.code, panic.status, panic.subject) == ("IB_IBSTAT_PANIC", Status.UNKNOWN, "mlx5_8")
    assert panic.action == Action.RETEST
    assert panic.evidence == "ibpanic: [1400444] main: stat of IB device 'mlx5_8' failed: No such file or directory"


def test_single_port_query_format_is_read() -> None:
    # "ibstat mlx5_0 1" prints "CA: 'mlx5_0'" and the port block without indentation (ibstat.c ca_stat/port_dump);
    # built here from the recorded fixture's first port block.
    lines = read(NDR_8HCA).splitlines()[7:17]
    raw = "CA: 'mlx5_0'\n" + "\n".join(line.strip() for line in lines) + "\n"
    result = parse_ibstat(raw)
    assert verdict(result) == Status.PASS and not result.unknown
    assert result.port("mlx5_0") is not None and result.port("mlx5_0").working_rate_gbps == 400.0  # type: ignore[union-attr]


def test_fdr10_and_sdr_rates() -> None:
    raw = read(CX6DX_ROCE)
    fdr10 = parse_ibstat(raw.replace("Rate: 100", "Rate: 40 (FDR10)", 1))
    assert fdr10.ports()[0].rate_gbps == 40.0 and fdr10.ports()[0].fdr10 and verdict(fdr10) == Status.PASS
    sdr = parse_ibstat(raw.replace("Rate: 100", "Rate: 2.5", 1))
    assert sdr.ports()[0].rate_gbps == 2.5


def test_unrecognised_state_is_unknown_not_pass() -> None:
    result = parse_ibstat(read(CX6DX_ROCE).replace("State: Active", "State: ???", 1))
    assert verdict(result) == Status.UNKNOWN and any("unrecognised State" in r for r in result.unknown)


# --- sysfs counters -----------------------------------------------------------------------------------------------


def test_healthy_counters() -> None:
    result = parse_ib_counters(read(HEALTHY_COUNTERS))
    assert result.status() == Status.PASS and not result.unknown
    assert sorted(result.ports) == [("mlx4_0", 1), ("mlx4_0", 2), ("mlx5_0", 1)]
    assert result.counters("mlx4_0", 1)["port_xmit_wait"] == 3599
    assert result.counters("mlx4_0", 2)["port_xmit_wait"] == 3846
    mlx5 = result.counters("mlx5_0")
    assert mlx5["port_xmit_data"] == 2880761508848 and mlx5["unicast_xmit_packets"] == 10907922116
    assert mlx5["local_ack_timeout_err"] == 131 and mlx5["out_of_sequence"] == 1  # hw_counters/
    assert "lifespan" not in mlx5  # hw_counters/lifespan is a cache age, not a counter
    assert all(mlx5[name] == 0 for name in ("symbol_error", "link_downed", "port_rcv_errors", "VL15_dropped"))


def test_saturated_legacy_counters_are_unknown_not_healthy() -> None:
    result = parse_ib_counters(read(SATURATED))  # gpud#943
    assert result.status() == Status.UNKNOWN
    port = result.counters("mlx5_1", 1)
    for name in ("link_downed", "port_xmit_discards", "port_xmit_wait", "excessive_buffer_overrun_errors"):
        assert port[name] is None, name  # 255, 65535, 4294967295, 15 in the fixture
    assert port["port_rcv_switch_relay_errors"] == 2 and port["symbol_error"] == 0
    assert port["port_xmit_data"] == 205143497464492  # > 2**32: a 64-bit extended counter, not saturated
    assert "8-bit" in result.none_reasons[("mlx5_1", 1, "link_downed")]
    assert "4-bit" in result.none_reasons[("mlx5_1", 1, "excessive_buffer_overrun_errors")]
    assert result.findings == []  # facts only: the check judges
    saturated = result.saturated[("mlx5_1", 1)]
    assert sorted(saturated) == [
        "excessive_buffer_overrun_errors",
        "link_downed",
        "port_xmit_discards",
        "port_xmit_wait",
    ]
    assert saturated["link_downed"].endswith("counters/link_downed:255")
    [finding] = check_ib_counters(result)
    assert (finding.code, finding.status, finding.subject, finding.action) == (
        "IB_COUNTER_SATURATED",
        Status.UNKNOWN,
        "mlx5_1 port 1",
        Action.RETEST,
    )
    assert "counters/link_downed:255" in finding.evidence and "port_xmit_wait:4294967295" in finding.evidence


@pytest.mark.parametrize(
    ("name", "value", "saturated"),
    [
        ("symbol_error", 65535, True),
        ("symbol_error", 65534, False),
        ("link_error_recovery", 255, True),
        ("local_link_integrity_errors", 15, True),
        ("port_rcv_data", 4294967295, True),
        ("port_rcv_data", 4294967296, False),
        ("unicast_rcv_packets", 4294967295, False),  # extended (64-bit) table only
    ],
)
def test_saturation_follows_the_field_width(name: str, value: int, saturated: bool) -> None:
    # the recorded healthy reading with one mlx5_0 counter set to the value under test
    lines = [x for x in read(HEALTHY_COUNTERS).splitlines() if f"mlx5_0/ports/1/counters/{name}:" not in x]
    lines.append(f"/sys/class/infiniband/mlx5_0/ports/1/counters/{name}:{value}")
    result = parse_ib_counters("\n".join(lines) + "\n")
    assert (result.counters("mlx5_0")[name] is None) is saturated
    assert (result.status() == Status.UNKNOWN) is saturated


def test_unreadable_counters_are_unknown() -> None:
    result = parse_ib_counters(read(NO_PMA))  # node_exporter#966: "N/A (no PMA)"
    assert result.status() == Status.UNKNOWN
    assert set(result.counters("i40iw0", 1).values()) == {None}
    assert set(result.unreadable[("i40iw0", 1)]) == set(result.counters("i40iw0", 1))
    assert "IB_COUNTER_UNREADABLE" in {f.code for f in check_ib_counters(result)}
    assert result.none_reasons[("i40iw0", 1, "link_downed")].startswith("unreadable")


def test_grep_error_lines_make_the_counter_unknown() -> None:
    raw = read(HEALTHY_COUNTERS).replace(
        "/sys/class/infiniband/mlx5_0/ports/1/counters/link_downed:0",
        "grep: /sys/class/infiniband/mlx5_0/ports/1/counters/link_downed: Invalid argument",
    )
    result = parse_ib_counters(raw)
    assert result.counters("mlx5_0")["link_downed"] is None and result.status() == Status.UNKNOWN
    assert "Invalid argument" in result.none_reasons[("mlx5_0", 1, "link_downed")]
    no_match = "grep: /sys/class/infiniband/*/ports/*/hw_counters/*: No such file or directory\n"
    unmatched = parse_ib_counters(raw + no_match)
    assert any("could not read" in r for r in unmatched.unknown)


def test_counter_growth_and_the_gate_helpers() -> None:
    before = parse_ib_counters(read(HEALTHY_COUNTERS))
    # a second reading 60 s later, written here from the first: one link_downed and 600 symbol errors on mlx5_0,
    # traffic on mlx4_0 port 1, and mlx4_0 port 2's counters cleared (went backwards)
    raw = read(HEALTHY_COUNTERS)
    raw = raw.replace("mlx5_0/ports/1/counters/link_downed:0", "mlx5_0/ports/1/counters/link_downed:1")
    raw = raw.replace("mlx5_0/ports/1/counters/symbol_error:0", "mlx5_0/ports/1/counters/symbol_error:600")
    raw = raw.replace("mlx4_0/ports/1/counters/port_xmit_wait:3599", "mlx4_0/ports/1/counters/port_xmit_wait:3659")
    raw = raw.replace("mlx4_0/ports/2/counters/port_xmit_wait:3846", "mlx4_0/ports/2/counters/port_xmit_wait:0")
    after = parse_ib_counters(raw)
    growth = port_counter_growth(before, after, 60.0)
    mlx5 = growth[("mlx5_0", 1)]
    assert mlx5["symbol_error"].delta == 600 and mlx5["symbol_error"].per_second == 10.0
    assert mlx5["link_downed"].delta == 1
    assert growth[("mlx4_0", 1)]["port_xmit_wait"].per_second == 1.0
    reset = growth[("mlx4_0", 2)]["port_xmit_wait"]
    assert reset.delta is None and reset.per_second is None and "backwards" in reset.reason
    assert grown(mlx5, ERROR_COUNTERS) == ["link_downed", "symbol_error"]
    assert grown_by_port(growth) == {"mlx5_0 port 1": ["link_downed", "symbol_error"]}  # xmit_wait is no error
    assert unknown_growth(growth[("mlx4_0", 2)]) == ["port_xmit_wait"]
    assert counter_growth({"a": 1}, {"a": 3}, 0)["a"].per_second is None  # no interval, no rate


def test_growth_of_saturated_counters_is_unknown() -> None:
    reading = parse_ib_counters(read(SATURATED))
    growth = port_counter_growth(reading, reading, 30.0)[("mlx5_1", 1)]
    assert grown(growth, ERROR_COUNTERS) == []
    assert {"link_downed", "port_xmit_discards", "excessive_buffer_overrun_errors"} <= set(
        unknown_growth(growth, ERROR_COUNTERS)
    )  # no growth seen, but no evidence of health either
    missing_port = port_counter_growth(IbCountersResult(), reading, 30.0)[("mlx5_1", 1)]
    assert all(g.delta is None for g in missing_port.values())


# --- never PASS on bad input --------------------------------------------------------------------------------------

IBSTAT_FIXTURES = [NDR_8HCA, ROCE_POLLING, ETH_DISABLED, IBPANIC, CX6DX_ROCE, POLLING_10]
COUNTER_FIXTURES = [HEALTHY_COUNTERS, SATURATED, NO_PMA]
OTHER_TOOL = (FIXTURES / "ethtool" / "mlx5-connectx4-kernel-4.15" / "ethtool-S.txt").read_text()


def _truncated(path: Path) -> str:
    text = read(path)
    cut = len(text) // 2
    return text[: text.index(":", cut) - 3]  # inside a field name of a block in the middle


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   \n",
        "garbage \x00 ### ¯\\_(ツ)_/¯",
        OTHER_TOOL,
        read(HEALTHY_COUNTERS),
        *[_truncated(p) for p in IBSTAT_FIXTURES],
    ],
)
def test_ibstat_never_passes_bad_input(raw: str) -> None:
    assert verdict(parse_ibstat(raw)) != Status.PASS


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "garbage \x00 ###",
        OTHER_TOOL,
        read(NDR_8HCA),
        *[_truncated(p) for p in COUNTER_FIXTURES],
        "/sys/class/infiniband/mlx5_0/ports/1/counters/link_downed:\u00b2\n",  # a digit to str.isdigit, not to int()
    ],
)
def test_counters_never_pass_bad_input(raw: str) -> None:
    assert parse_ib_counters(raw).status() != Status.PASS
