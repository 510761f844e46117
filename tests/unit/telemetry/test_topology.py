"""Samples attached to the demo plan's links: names as tools print them, labels, unplanned and missing ends."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from hwaac.plan import Plan, build_plan
from hwaac.telemetry import topology
from hwaac.telemetry.model import PortSample, Snapshot
from hwaac.telemetry.parsers.sonic_intf_status import parse_interface_status
from hwaac.telemetry.rates import interval
from hwaac.telemetry.topology import LinkIndex, correlate
from hwaac.validate import load_intent

DEMO = Path(__file__).parents[3] / "inventory" / "demo"
STATUS = Path(__file__).parents[2] / "fixtures" / "telemetry" / "sonic-interfaces-status"
LEAF0, LEAF1 = "leaf-p0-su01-r0", "leaf-p0-su01-r1"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return build_plan(load_intent(DEMO))


@pytest.fixture(scope="module")
def index(plan: Plan) -> LinkIndex:
    return LinkIndex(plan)


# As a tool names the port -> the plan's end (demo: leaf ports Ethernet{4i}, aliases etp{cage}{a,b} of 2 x 400G
# per OSFP cage; node slot h rail r -> leaf (su, r) port h-1; leaf uplink u -> port 32+u; hosts rail{r}, mlx5_{r})
NAMES = [
    ("leaf SONiC name", LEAF0, "Ethernet0", (LEAF0, "Ethernet0"), "b"),
    ("leaf alias", LEAF0, "etp1b", (LEAF0, "Ethernet4"), "b"),
    ("leaf uplink", LEAF0, "Ethernet128", (LEAF0, "Ethernet128"), "a"),
    ("leaf uplink alias", LEAF0, "etp17a", (LEAF0, "Ethernet128"), "a"),
    ("spine port", "spine-p0-01", "Ethernet0", ("spine-p0-01", "Ethernet0"), "b"),
    ("host interface", "gpu-su01-h02", "rail1", ("gpu-su01-h02", "rail1"), "a"),
    ("host HCA", "gpu-su01-h02", "mlx5_1", ("gpu-su01-h02", "rail1"), "a"),
    ("host HCA/port", "gpu-su01-h02", "mlx5_3/1", ("gpu-su01-h02", "rail3"), "a"),
    ("host HCA:port", "gpu-su01-h02", "mlx5_3:1", ("gpu-su01-h02", "rail3"), "a"),
    ("host HCA port word", "gpu-su01-h02", "mlx5_3 port 1", ("gpu-su01-h02", "rail3"), "a"),
]


@pytest.mark.parametrize(("case", "device", "port", "end", "side"), NAMES, ids=[n[0] for n in NAMES])
def test_find_normalises_names(
    index: LinkIndex, case: str, device: str, port: str, end: tuple[str, str], side: str
) -> None:
    code = index.find(device, port)
    assert code is not None and index.end_name(code) == end and "ab"[code & 1] == side


@pytest.mark.parametrize(
    ("device", "port"),
    [
        (LEAF0, "Ethernet512"),  # the SN5600's extra 25G port: a port of the model, never cabled
        (LEAF0, "etp99a"),
        ("gpu-su01-h02", "mlx5_3/2"),  # a second port of an HCA the plan cables once
        ("gpu-su01-h02", "mlx5_9"),
        ("leaf-unknown", "Ethernet0"),
    ],
)
def test_find_returns_none_outside_the_plan(index: LinkIndex, device: str, port: str) -> None:
    assert index.find(device, port) is None


# end -> labels (read from the demo intent: SU 1 rail 1 is leaf-p0-su01-r1; its uplink 0 goes to spine 1)
LABELS = [
    (
        "gpu-su01-h02",
        "rail1",
        {"kind": "host", "plane": 0, "rail": 1, "su": 1, "leaf": LEAF1, "node": "gpu-su01-h02", "hca": "mlx5_1"},
    ),
    (
        LEAF1,
        "Ethernet128",
        {"kind": "leaf_spine", "plane": 0, "rail": 1, "su": 1, "leaf": LEAF1, "spine": "spine-p0-01"},
    ),
]


@pytest.mark.parametrize(("device", "port", "labels"), LABELS)
def test_labels(index: LinkIndex, device: str, port: str, labels: dict) -> None:
    code = index.find(device, port)
    assert code is not None
    got = index.labels(code >> 1)
    assert {k: got[k] for k in labels} == labels and got["cable"].startswith("HL"[labels["kind"] == "leaf_spine"])


def test_uplinks_are_the_planned_ecmp_width(index: LinkIndex) -> None:
    assert index.uplinks[LEAF0] == 32 and len(index.uplinks) == 16  # 2 SUs x 8 rails, 32 uplinks each


def _two(device: str, ports: list[str]) -> tuple[Snapshot, Snapshot]:
    a, b = Snapshot("portstat", device, 0.0), Snapshot("portstat", device, 10.0)
    for p in ports:
        a.ports[p] = PortSample(p, {"rx_ok": 0})
        b.ports[p] = PortSample(p, {"rx_ok": 100})
    return a, b


def test_correlate_reports_unplanned_and_missing(index: LinkIndex) -> None:
    iv = interval(*_two(LEAF0, ["Ethernet0", "etp1b", "Ethernet512"]))
    c = correlate(index, [iv])
    assert c.unplanned == [(LEAF0, "Ethernet512", "portstat")]
    a0 = index.find(LEAF0, "Ethernet0")
    a1 = index.find(LEAF0, "Ethernet4")
    assert a0 is not None and a1 is not None
    assert c.ends[a0].rates == {"rx_ok": 10.0} and c.ends.interval_seconds(a1) == (True, 10.0)  # type: ignore[union-attr]
    # the leaf was sampled: each of its other 62 planned ports is listed; unsampled devices are listed whole
    assert len([m for m in c.missing if m[0] == LEAF0]) == 64 - 2 and (LEAF0, "Ethernet8") in c.missing
    assert "spine-p0-01" in c.missing_devices and "gpu-su01-h01" in c.missing_devices
    assert LEAF0 not in c.missing_devices


def test_correlate_merges_a_state_snapshot_with_rates(index: LinkIndex) -> None:
    iv = interval(*_two(LEAF0, ["Ethernet0"]))
    status = Snapshot("show interfaces status", LEAF0)
    status.ports["Ethernet0"] = PortSample("Ethernet0", state={"oper": "up", "speed": "400G"})
    c = correlate(index, [iv, status])
    end = c.ends[index.find(LEAF0, "Ethernet0")]  # type: ignore[index]
    assert end is not None and end.rates == {"rx_ok": 10.0} and end.state["oper"] == "up"


def test_correlate_reports_what_a_reader_could_not_read_of_a_rated_output(index: LinkIndex) -> None:
    a, b = _two(LEAF0, ["Ethernet0"])
    b.unknown.append("line 7: 'RX_OK' column is missing")
    c = correlate(index, [interval(a, b)])
    assert c.errors == [f"{LEAF0} (portstat): line 7: 'RX_OK' column is missing"]


def test_correlate_a_real_status_output_on_a_planned_leaf(index: LinkIndex) -> None:
    # a recorded 400G chassis output: its Ethernet ports that the demo leaf cables attach, the rest are unplanned
    snap = parse_interface_status((STATUS / "status_400g_chassis_qsfpdd.txt").read_text(), device=LEAF0)
    c = correlate(index, [snap])
    attached = sum(1 for e in c.ends if e is not None)
    assert attached + len(c.unplanned) == len(snap.ports) and attached > 0
    assert all(index.find(LEAF0, p) is None for _, p, _ in c.unplanned)


@pytest.mark.parametrize("address", ["0.0.0.0", "10.0.0.1", "172.16.255.254", "255.255.255.255", "192.168.1.10"])
def test_an_address_prints_as_ipaddress_prints_it(address: str) -> None:
    assert topology._dotted(int(ipaddress.IPv4Address(address))) == address


def test_leaf_prefixes_are_the_host_networks_and_loopbacks_as_frr_prints_them() -> None:
    plan = build_plan(load_intent(DEMO))
    got = LinkIndex(plan).leaf_prefixes
    want = {
        str(ipaddress.IPv4Network((link.network, link.prefixlen))): link.b_device
        for link in plan.links
        if link.kind == "host"
    }
    want.update({f"{ipaddress.IPv4Address(s.loopback)}/32": s.name for s in plan.switches if s.role == "leaf"})
    assert got == want and len(got) > 16


def test_codes_are_find_s_for_every_name_and_node() -> None:
    """A list of port names resolved once through a model's aliases gives every node of the model the ends find
    gives it, one name at a time (plan names, HCA names of port 1, an HCA's port 2, names of no end)."""
    plan = build_plan(load_intent(DEMO))
    index = LinkIndex(plan)
    names = ["mlx5_0/1", "mlx5_1:1", "rail2", "mlx5_3 port 1", "mlx5_0/2", "nope", "Ethernet0"]
    for node in [n.name for n in plan.nodes][:3] * 2:  # the second time from the resolved list
        got = index.codes(node, names)
        assert got == [index.find(node, n) for n in names]
        assert None not in got[:3] and got[4:6] == [None, None]
    leaf = next(s.name for s in plan.switches if s.role == "leaf")
    assert index.codes(leaf, names) == [index.find(leaf, n) for n in names]
