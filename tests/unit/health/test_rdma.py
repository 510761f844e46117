"""ibstatus, ibv_devinfo and rdma statistic show: facts from recorded outputs (fixtures/health/{ibstatus,
ibv_devinfo,rdma-statistic}, sources in their READMEs), and the checks that judge them."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.health.checks_rdma import check_rdma_ports, check_rdma_statistic, check_rdma_statistic_growth
from hwaac.health.parsers.rdma import parse_ibstatus, parse_ibv_devinfo, parse_rdma_statistic
from hwaac.health.profile import load_profile
from hwaac.health.result import Action, Status

FIXTURES = Path(__file__).parents[2] / "fixtures" / "health"
IBSTATUS = FIXTURES / "ibstatus"
DEVINFO = FIXTURES / "ibv_devinfo"
STAT = FIXTURES / "rdma-statistic"
H200 = load_profile("hgx-h200-8x400g")


def profile(link_layer: str, rails: int, rate: int):
    return H200.model_copy(
        update={"nic": H200.nic.model_copy(update={"link_layer": link_layer, "rails": rails, "rate_gbits_per_s": rate})}
    )


def text(path: Path) -> str:
    return path.read_text()


def worst(findings) -> Status:
    return max((f.status for f in findings), default=Status.PASS)


# --- facts --------------------------------------------------------------------------------------------------------

# file, port subject, (state, state code, phys state, phys code, rate, link layer, up)
IBSTATUS_PORTS = [
    ("a100-hdr-8hca-active.txt", "mlx5_7 port 1", ("ACTIVE", 4, "LinkUp", 5, 200.0, "InfiniBand", True)),
    ("a100-hdr-8hca-active.txt", "mlx5_8 port 1", ("ACTIVE", 4, "LinkUp", 5, 40.0, "Ethernet", True)),
    ("roce-2port-one-disabled.txt", "mlx5_0 port 1", ("DOWN", 1, "Disabled", 3, 40.0, "Ethernet", False)),
    ("mixed-ib-roce-4hca.txt", "mlx5_2 port 1", ("DOWN", 1, "Disabled", 3, 100.0, "Ethernet", False)),
    ("mixed-ib-roce-4hca.txt", "mlx5_3 port 1", ("ACTIVE", 4, "LinkUp", 5, 200.0, "InfiniBand", True)),
]


@pytest.mark.parametrize(("name", "subject", "want"), IBSTATUS_PORTS)
def test_ibstatus_port_facts(name: str, subject: str, want: tuple) -> None:
    r = parse_ibstatus(text(IBSTATUS / name))
    assert r.unknown == [] and r.findings == []
    (p,) = [p for p in r.ports if p.subject == subject]
    assert (p.state, p.state_code, p.phys_state, p.phys_code, p.rate_gbps, p.link_layer, p.is_up) == want


@pytest.mark.parametrize(
    ("name", "count"),
    [("a100-hdr-8hca-active.txt", 9), ("roce-2port-one-disabled.txt", 2), ("mixed-ib-roce-4hca.txt", 4)],
)
def test_ibstatus_reads_every_block(name: str, count: int) -> None:
    assert len(parse_ibstatus(text(IBSTATUS / name)).ports) == count


# file, -i port, subject, (state, code, phys state, rate, link layer, up)
DEVINFO_PORTS = [
    ("cx7-eth-and-ib-2hca.txt", None, "mlx5_0 port 1", ("ACTIVE", 4, None, None, "Ethernet", True)),
    ("cx7-eth-and-ib-2hca.txt", None, "mlx5_1 port 1", ("ACTIVE", 4, None, None, "InfiniBand", True)),
    ("mlx4-ofed-2hca-2port.txt", None, "mlx4_0 port 2", ("DOWN", 1, None, None, "InfiniBand", False)),
    ("mlx4-ofed-port2-verbose-polling.txt", 2, "mlx4_1 port 2", ("DOWN", 1, "POLLING", 10.0, "InfiniBand", False)),
    ("rxe-verbose.txt", None, "rxe0 port 1", ("ACTIVE", 4, "LINK_UP", 2.5, "Ethernet", True)),
]


@pytest.mark.parametrize(("name", "port", "subject", "want"), DEVINFO_PORTS)
def test_ibv_devinfo_port_facts(name: str, port: int | None, subject: str, want: tuple) -> None:
    r = parse_ibv_devinfo(text(DEVINFO / name), port=port)
    assert r.unknown == [] and r.findings == []
    (p,) = [p for p in r.ports if p.subject == subject]
    assert (p.state, p.state_code, p.phys_state, p.rate_gbps, p.link_layer, p.is_up) == want


def test_ibv_devinfo_keeps_device_attributes() -> None:
    r = parse_ibv_devinfo(text(DEVINFO / "cx7-eth-and-ib-2hca.txt"))
    assert r.devices["mlx5_1"]["vendor_part_id"] == "4129" and r.devices["mlx5_1"]["fw_ver"] == "28.38.1002"


def test_rdma_statistic_plain_and_pretty() -> None:
    plain = parse_rdma_statistic(text(STAT / "mlnx-iproute2-4link.txt"))
    assert plain.unknown == [] and sorted(plain.ports) == [(f"mlx5_{i}", 1) for i in range(4)]
    assert (plain.counters("mlx5_0")["out_of_buffer"], plain.counters("mlx5_0")["resp_cqe_error"]) == (135, 1009)
    assert len(plain.counters("mlx5_3")) == 29
    pretty = parse_rdma_statistic(text(STAT / "iproute2-5.3-pretty.txt"))
    assert pretty.unknown == [] and len(pretty.counters("mlx5_0")) == 21


# --- malformed and truncated input: never PASS --------------------------------------------------------------------


def cut(path: Path, fraction: float) -> str:
    raw = text(path)
    return raw[: int(len(raw) * fraction)]


MALFORMED = [
    ("ibstatus empty", lambda: check_rdma_ports(parse_ibstatus(""), profile("InfiniBand", 8, 200))),
    (
        "ibstatus cut",
        lambda: check_rdma_ports(
            parse_ibstatus(cut(IBSTATUS / "a100-hdr-8hca-active.txt", 0.5)), profile("InfiniBand", 8, 200)
        ),
    ),
    (
        "ibstatus garbage",
        lambda: check_rdma_ports(
            parse_ibstatus("Fatal error:  device 'mlx5_0': sys files not found\n"), profile("InfiniBand", 8, 200)
        ),
    ),
    (
        "ibv_devinfo cut",
        lambda: check_rdma_ports(
            parse_ibv_devinfo(cut(DEVINFO / "cx7-eth-and-ib-2hca.txt", 0.8)), profile("InfiniBand", 1, 200), ["mlx5_1"]
        ),
    ),
    (
        "ibv_devinfo not its output",
        lambda: check_rdma_ports(
            parse_ibv_devinfo(text(IBSTATUS / "mixed-ib-roce-4hca.txt")), profile("Ethernet", 1, 100)
        ),
    ),
    (
        "rdma statistic cut",
        lambda: check_rdma_statistic(parse_rdma_statistic(cut(STAT / "mlnx-iproute2-4link.txt", 0.6))),
    ),
    ("rdma statistic empty", lambda: check_rdma_statistic(parse_rdma_statistic(""))),
]


@pytest.mark.parametrize(("case", "run"), MALFORMED, ids=[c for c, _ in MALFORMED])
def test_unreadable_output_is_unknown_never_pass(case: str, run) -> None:
    findings = run()
    assert worst(findings) >= Status.UNKNOWN
    unknown = [f for f in findings if f.status == Status.UNKNOWN]
    assert unknown and all(f.action == Action.RETEST for f in unknown)
    assert all(f.action not in (Action.REBOOT, Action.RESET_GPU, Action.RMA) for f in findings)


@pytest.mark.parametrize(
    "cut_after", ["        rate:            200 Gb/sec (4X HDR)\n", "        link_layer:      Infini"]
)
def test_ibstatus_block_cut_before_its_link_layer_is_unknown(cut_after: str) -> None:
    """The script prints ``link_layer`` last in every block (``IB`` when sysfs has none), so a first block that stops
    before it, or inside it, is cut short: 8 ports after it were lost."""
    raw = text(IBSTATUS / "a100-hdr-8hca-active.txt")
    r = parse_ibstatus(raw[: raw.index(cut_after) + len(cut_after)])
    assert [p.subject for p in r.ports] == ["mlx5_0 port 1"] and len(r.unknown) == 1
    assert r.unknown[0].startswith("mlx5_0 port 1: ")


@pytest.mark.parametrize(
    ("name", "cut_after", "subject"),
    [
        ("rxe-verbose.txt", "sm_sl:                  0\n", "rxe0 port 1"),  # -v: no active_width/speed, phys_state
        ("cx7-eth-and-ib-2hca.txt", "link_layer:             Infin", "mlx5_1 port 1"),
    ],
)
def test_ibv_devinfo_port_cut_short_is_unknown(name: str, cut_after: str, subject: str) -> None:
    raw = text(DEVINFO / name)
    r = parse_ibv_devinfo(raw[: raw.index(cut_after) + len(cut_after)])
    assert r.ports[-1].subject == subject and len(r.unknown) == 1 and r.unknown[0].startswith(subject)


def test_rdma_statistic_line_cut_mid_pair_is_unknown() -> None:
    r = parse_rdma_statistic("link mlx5_0/1 rx_write_requests 0 out_of_sequence\n")
    assert r.counters("mlx5_0") == {"rx_write_requests": 0} and "has no value" in r.unknown[0]


# --- checks -------------------------------------------------------------------------------------------------------

CHECKS = [  # fixture, tool, profile (link layer, rails, rate), devices, expected (status, codes)
    ("a100-hdr-8hca-active.txt", "ibstatus", ("InfiniBand", 8, 200), None, (Status.PASS, [])),
    ("a100-hdr-8hca-active.txt", "ibstatus", ("InfiniBand", 8, 400), None, (Status.FAIL, ["NIC_RATE_LOW"] * 8)),
    (
        "roce-2port-one-disabled.txt",
        "ibstatus",
        ("Ethernet", 2, 100),
        None,
        (Status.FAIL, ["NIC_PORT_DOWN", "NIC_RAILS_DOWN"]),
    ),
    ("mixed-ib-roce-4hca.txt", "ibstatus", ("InfiniBand", 2, 200), ["mlx5_1", "mlx5_3"], (Status.PASS, [])),
    (
        "mixed-ib-roce-4hca.txt",
        "ibstatus",
        ("InfiniBand", 2, 200),
        ["mlx5_1", "mlx5_2"],
        (Status.FAIL, ["NIC_PORT_DOWN", "NIC_RAILS_DOWN"]),
    ),
    (
        "mixed-ib-roce-4hca.txt",
        "ibstatus",
        ("InfiniBand", 2, 200),
        ["mlx5_1", "mlx5_9"],
        (Status.FAIL, ["NIC_MISSING", "NIC_RAILS_DOWN"]),
    ),
    ("cx7-eth-and-ib-2hca.txt", "ibv_devinfo", ("InfiniBand", 1, 400), None, (Status.PASS, [])),
    (
        "mlx4-ofed-2hca-2port.txt",
        "ibv_devinfo",
        ("InfiniBand", 4, 40),
        None,
        (Status.FAIL, ["NIC_PORT_DOWN", "NIC_PORT_DOWN", "NIC_RAILS_DOWN"]),
    ),
    ("rxe-verbose.txt", "ibv_devinfo", ("Ethernet", 1, 100), None, (Status.FAIL, ["NIC_RATE_LOW"])),
]


@pytest.mark.parametrize(("name", "tool", "lim", "devices", "want"), CHECKS)
def test_port_checks(name: str, tool: str, lim: tuple, devices: list[str] | None, want: tuple) -> None:
    parsed = parse_ibstatus(text(IBSTATUS / name)) if tool == "ibstatus" else parse_ibv_devinfo(text(DEVINFO / name))
    findings = check_rdma_ports(parsed, profile(*lim), devices)
    assert (worst(findings), [f.code for f in findings]) == want


def test_port_down_names_the_port_and_asks_for_a_link_check() -> None:
    findings = check_rdma_ports(
        parse_ibstatus(text(IBSTATUS / "roce-2port-one-disabled.txt")), profile("Ethernet", 2, 100)
    )
    down = findings[0]
    assert (down.subject, down.action) == ("mlx5_0 port 1", Action.CHECK_LINK) and "DOWN/Disabled" in down.message


def test_no_devices_fails_without_unknown() -> None:
    findings = check_rdma_ports(parse_ibv_devinfo("No IB devices found\n"), profile("Ethernet", 8, 400))
    assert [(f.code, f.status) for f in findings] == [("NIC_MISSING", Status.FAIL)]


def test_counter_growth_between_two_readings_warns_on_the_profile_rate() -> None:
    before = parse_rdma_statistic(text(STAT / "mlnx-iproute2-4link.txt"))
    after = parse_rdma_statistic(text(STAT / "mlnx-iproute2-4link-after_derived.txt"))
    findings = check_rdma_statistic_growth(before, after, 10.0, H200)
    assert [(f.code, f.status, f.subject) for f in findings] == [
        ("NIC_LOCAL_ACK_TIMEOUT_ERR_RATE", Status.WARN, "mlx5_0 port 1")
    ]
    assert check_rdma_statistic_growth(before, before, 10.0, H200) == []


def test_counter_growth_fails_on_a_fatal_counter() -> None:
    before = parse_rdma_statistic(text(STAT / "mlnx-iproute2-4link.txt"))
    after = parse_rdma_statistic(
        text(STAT / "mlnx-iproute2-4link.txt").replace(
            "link mlx5_2/1 rx_write_requests 0 rx_read_requests 0 rx_atomic_requests 0 out_of_buffer 0 "
            "out_of_sequence 0 duplicate_request 0 rnr_nak_retry_err 0",
            "link mlx5_2/1 rx_write_requests 0 rx_read_requests 0 "
            "rx_atomic_requests 0 out_of_buffer 0 out_of_sequence 0 duplicate_request 0 rnr_nak_retry_err 2",
        )
    )
    findings = check_rdma_statistic_growth(before, after, 10.0, H200)
    assert [(f.code, f.status, f.action) for f in findings] == [
        ("NIC_RNR_NAK_RETRY_ERR", Status.FAIL, Action.CHECK_LINK)
    ]


def test_counter_growth_with_a_rail_missing_is_unknown() -> None:
    before = parse_rdma_statistic(text(STAT / "mlnx-iproute2-4link.txt"))
    findings = check_rdma_statistic_growth(before, before, 10.0, H200, ["mlx5_0", "mlx5_7"])
    assert [(f.code, f.status) for f in findings] == [("NIC_COUNTERS_MISSING", Status.UNKNOWN)] * 2
