"""Localisation: one fault per rule on the demo plan -> the rule fires and names the component; clean -> none."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from hwaac.health.parsers.slurm_squeue import parse_squeue
from hwaac.plan import build_plan
from hwaac.telemetry.localise import localise
from hwaac.telemetry.rates import Interval, PortRates
from hwaac.telemetry.sli import link_slis
from hwaac.telemetry.slo import default_slos
from hwaac.telemetry.suspects import FAULT, INFO, WARN, Observed, Suspect
from hwaac.telemetry.topology import LinkIndex, correlate
from hwaac.validate import load_intent

DEMO = Path(__file__).parents[3] / "inventory" / "demo"
CLEAN = {
    "rx_ok": 1000.0,
    "rx_err": 0.0,
    "rx_drop": 0.0,
    "tx_ok": 1000.0,
    "fec_uncorrectable": 0.0,
    "pfc3_rx": 0.0,
    "ecn_marked": 0.0,
    "link_down_events": 0.0,
}


@cache
def index() -> LinkIndex:
    return LinkIndex(build_plan(load_intent(DEMO)))


def far(device: str, port: str) -> tuple[str, str]:
    """The other end of a planned port (read from the plan, not from the code under test)."""
    for link in index().links:
        if (link.a_device, link.a_port) == (device, port):
            return link.b_device, link.b_port
        if (link.b_device, link.b_port) == (device, port):
            return link.a_device, link.a_port
    raise KeyError((device, port))


def cable(device: str, port: str) -> str:
    return next(
        lk.cable_id for lk in index().links if (device, port) in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port))
    )


def observe(faults: dict[tuple[str, str], dict], bgp: dict | None = None) -> Observed:
    """Every planned end clean and up for 10 s, then ``faults`` (rates, ``state``, ``gauges``) laid over."""
    ivs: dict[str, Interval] = {}
    for device, ports in index().ports.items():
        iv = ivs[device] = Interval(device, "test", 0.0, 10.0, 10.0, "taken_at")
        for port in ports:
            f = faults.get((device, port), {})
            rates = {**CLEAN, **{k: v for k, v in f.items() if k not in ("state", "gauges")}}
            iv.ports[port] = PortRates(port, rates, {}, dict(f.get("gauges", {})), {"oper": "up", **f.get("state", {})})
    corr = correlate(index(), ivs.values())
    bgp_ivs = {}
    for leaf, peers in (bgp or {}).items():
        bgp_ivs[leaf] = Interval(
            leaf, "bgp", 0.0, 10.0, 10.0, "taken_at", {p: PortRates(p, {"bgp_dropped": r}) for p, r in peers.items()}
        )
    return Observed(corr, link_slis(corr), default_slos(), bgp_ivs)


L0, L1 = "leaf-p0-su01-r0", "leaf-p0-su01-r1"
H1 = "gpu-su01-h01"
# the storm: gpu-su01-h05 (rail0) stops draining; its leaf, spine-p0-01 and leaf su02-r0 pass the pause on
H5_LEAF_PORT = far("gpu-su01-h05", "rail0")[1]
SU2_UP = "Ethernet128"
SPINE_OF_SU2, SPINE_PORT_SU2 = far("leaf-p0-su02-r0", SU2_UP)
SPINE_PORT_SU1 = far(L0, "Ethernet128")[1]
STORM = {
    ("gpu-su02-h01", "rail0"): {"pfc3_rx_duration_us": 600_000.0},
    ("leaf-p0-su02-r0", SU2_UP): {"pfc3_rx_duration_us": 700_000.0},
    (SPINE_OF_SU2, SPINE_PORT_SU1): {"pfc3_rx_duration_us": 800_000.0},
    (L0, H5_LEAF_PORT): {"pfc3_rx_duration_us": 900_000.0, "state": {"pfcwd3_status": "stormed"}},
}
R5_UP = far("leaf-p0-su01-r5", "Ethernet132")
R6_SPINE_IP = next(
    str(__import__("ipaddress").IPv4Address(lk.b_ip))
    for lk in index().links
    if lk.a_device == "leaf-p0-su01-r6" and lk.a_port == "Ethernet136"
)
SPINE8_PORTS = sorted(index().ports["spine-p0-08"])[:20]

# case, faults, BGP drops, rule, severity, first component (kind, name), other names the suspect must carry
CASES = [
    (
        "errors at both ends -> cable",
        {(L0, "Ethernet128"): {"rx_err": 5.0}, far(L0, "Ethernet128"): {"rx_crc": 3.0}},
        None,
        "errors_both_ends",
        FAULT,
        ("cable", cable(L0, "Ethernet128")),
        [f"{L0} Ethernet128", " ".join(far(L0, "Ethernet128"))],
    ),
    (
        "errors at one end -> far transmitter first",
        {(L0, "Ethernet0"): {"fec_uncorrectable": 1.0}},
        None,
        "errors_one_end",
        FAULT,
        ("optic", f"{H1} rail0"),
        [f"{L0} Ethernet0"],
    ),
    (
        "pre-FEC BER over warn at the host -> the leaf's optic, warn",
        {(H1, "rail2"): {"gauges": {"pre_fec_ber": 5e-5}}},
        None,
        "errors_one_end",
        WARN,
        ("optic", " ".join(far(H1, "rail2"))),
        [f"{H1} rail2"],
    ),
    (
        "PFC storm followed to the host that sends it",
        STORM,
        None,
        "pfc_storm",
        FAULT,
        ("nic", "gpu-su01-h05 rail0"),
        [f"{L0} {H5_LEAF_PORT}", "gpu-su02-h01 rail0"],
    ),
    (
        "pause from a leaf nothing pauses -> that leaf port, warn",
        {(H1, "rail1"): {"pfc3_rx_duration_us": 100_000.0}},
        None,
        "pfc_storm",
        WARN,
        ("port", f"{L1} Ethernet0"),
        [f"{H1} rail1"],
    ),
    (
        "ECN marks on one leaf -> congestion, warn",
        {("leaf-p0-su01-r2", f"Ethernet{4 * k}"): {"ecn_marked": 100.0} for k in range(4)},
        None,
        "congestion",
        WARN,
        ("switch", "leaf-p0-su01-r2"),
        ["congestion"],
    ),
    (
        "ECN marks on one rail -> congestion, info",
        {
            **{
                (leaf, f"Ethernet{4 * k}"): {"ecn_marked": 20.0}
                for leaf in ("leaf-p0-su01-r4", "leaf-p0-su02-r4")
                for k in range(2)
            },
            ("leaf-p0-su01-r3", "Ethernet0"): {"ecn_marked": 20.0},
        },
        None,
        "congestion",
        INFO,
        ("rail", "rail 4"),
        ["not a fault"],
    ),
    (
        "link down counter rose -> flapping link",
        {R5_UP: {"link_down_events": 0.001}},
        None,
        "flapping",
        FAULT,
        ("link", cable("leaf-p0-su01-r5", "Ethernet132")),
        [" ".join(R5_UP)],
    ),
    (
        "BGP session dropped -> that link",
        {},
        {"leaf-p0-su01-r6": {R6_SPINE_IP: 0.01}},
        "flapping",
        FAULT,
        ("link", cable("leaf-p0-su01-r6", "Ethernet136")),
        [R6_SPINE_IP],
    ),
    (
        "one uplink drops, siblings clean -> that leaf-spine link",
        {("leaf-p0-su01-r7", "Ethernet140"): {"rx_drop": 5.0}},
        None,
        "spine_path_loss",
        FAULT,
        ("link", cable("leaf-p0-su01-r7", "Ethernet140")),
        ["clean"],
    ),
    (
        "planned link oper down",
        {("spine-p0-02", "Ethernet8"): {"state": {"oper": "down"}}},
        None,
        "links_down",
        FAULT,
        ("link", cable("spine-p0-02", "Ethernet8")),
        ["oper down"],
    ),
    (
        "planned link admin down -> warn",
        {("spine-p0-03", "Ethernet8"): {"state": {"admin": "down"}}},
        None,
        "links_down",
        WARN,
        ("link", cable("spine-p0-03", "Ethernet8")),
        ["admin down"],
    ),
    (
        "20 of 64 spine ports with errors -> the spine",
        {("spine-p0-08", p): {"rx_err": 2.0} for p in SPINE8_PORTS},
        None,
        "switch_degraded",
        FAULT,
        ("switch", "spine-p0-08"),
        ["20 of the 64"],
    ),
]


def _text(s: Suspect) -> str:
    return " ".join([s.reasoning, *(c.name for c in s.components), *(f"{e.where} {e.what}" for e in s.evidence)])


@pytest.mark.parametrize(
    ("case", "faults", "bgp", "rule", "severity", "first", "names"), CASES, ids=[c[0] for c in CASES]
)
def test_rule_fires_and_names_the_component(
    case: str, faults: dict, bgp: dict | None, rule: str, severity: int, first: tuple[str, str], names: list[str]
) -> None:
    suspects = localise(observe(faults, bgp))
    top = suspects[0]
    assert top.rule == rule and top.severity == severity
    assert (top.components[0].kind, top.components[0].name) == first
    text = _text(top)
    for n in names:
        assert n in text
    assert top.evidence and top.reasoning


def test_clean_fabric_has_no_suspect() -> None:
    assert localise(observe({})) == []


def test_switch_rule_keeps_the_ports_it_replaces() -> None:
    (s,) = localise(observe(CASES[-1][1]))
    assert len(s.replaced) == 20 and all(r.rule == "errors_one_end" for r in s.replaced)


def test_both_ends_outrank_one_end_and_fold_the_path_loss() -> None:
    faults = {**CASES[0][1], (L1, "Ethernet4"): {"rx_err": 50.0}}
    suspects = localise(observe(faults))
    assert [s.rule for s in suspects] == ["errors_both_ends", "errors_one_end"]
    assert suspects[0].also == ("spine_path_loss",)


def test_a_link_down_folds_the_session_drop_that_took_it_down() -> None:
    """Down now, and its BGP session dropped in the interval: one suspect, links_down, with the flap in ``also``."""
    port = "Ethernet136"
    spine, spine_port = far("leaf-p0-su01-r6", port)
    faults = {("leaf-p0-su01-r6", port): {"state": {"oper": "down"}}, (spine, spine_port): {"state": {"oper": "down"}}}
    suspects = localise(observe(faults, {"leaf-p0-su01-r6": {R6_SPINE_IP: 0.01}}))
    assert [(s.rule, s.also) for s in suspects] == [("links_down", ("flapping",))]
    assert suspects[0].components[0].name == cable("leaf-p0-su01-r6", port)


def test_nodes_and_jobs_behind_a_leaf_spine_link() -> None:
    squeue = parse_squeue("101 alice gpu-su01-h[01-04]\n102 bob gpu-su02-h[01-02]\n103 carol\n")
    (s, *_) = localise(observe(CASES[0][1]), squeue=squeue)
    assert s.nodes == tuple(f"gpu-su01-h{n:02d}" for n in range(1, 33))
    assert [j.job_id for j in s.jobs] == ["101"]


def test_nodes_behind_a_host_link_is_that_host() -> None:
    (s,) = localise(observe(CASES[1][1]))
    assert s.nodes == (H1,)
