"""SLIs of a link from its ends' rates, and their aggregates over the demo plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.plan import build_plan
from hwaac.telemetry.model import PortSample, Snapshot
from hwaac.telemetry.parsers.frr_routes import Route, RouteTable
from hwaac.telemetry.rates import Interval, PortRates, interval
from hwaac.telemetry.sli import (
    AVAILABILITY,
    BGP_DROPS,
    COVERAGE,
    ECN,
    FEC_UNCORR,
    LOSS,
    PATH_DIVERSITY,
    PAUSE,
    PRE_FEC_BER,
    aggregate,
    bgp_drops_per_hour,
    link_sli,
    link_slis,
    path_diversity,
)
from hwaac.telemetry.topology import LinkIndex, correlate
from hwaac.validate import load_intent

DEMO = Path(__file__).parents[3] / "inventory" / "demo"
G400 = 400e9


def end(
    rates: dict | None = None, state: dict | None = None, gauges: dict | None = None, why: dict | None = None
) -> PortRates:
    return PortRates("p", dict(rates or {}), dict(why or {}), dict(gauges or {}), dict(state or {}))


UP = {"oper": "up"}
# case, end a, end b, SLI, expected value (None: no value), words in the reason or source
CASES = [
    ("both up", end(state=UP), end(state=UP), AVAILABILITY, 1.0, "a oper up b oper up"),
    ("one end down", end(state=UP), end(state={"oper": "down"}), AVAILABILITY, 0.0, "b oper down"),
    ("admin down", end(state={"admin": "down"}), None, AVAILABILITY, 0.0, "admin down"),
    ("flapped while up", end({"link_state_changes": 0.2}, UP), None, AVAILABILITY, 0.0, "link_state_changes"),
    ("no state, flat flap counter", end({"link_down_events": 0.0}), None, AVAILABILITY, None, "does not prove up"),
    ("nothing sampled", None, None, AVAILABILITY, None, "no end reports"),
    # loss: (2 + 3 + 0 + 5) / (990 + 2 + 3 + 1000 + 0 + 5) = 10 / 2000
    (
        "loss both ends",
        end({"rx_ok": 990.0, "rx_err": 2.0, "rx_drop": 3.0}),
        end({"rx_ok": 1000.0, "rx_err": 0.0, "rx_drop": 5.0}),
        LOSS,
        0.005,
        "a+b",
    ),
    ("loss one end", end({"rx_ok": 99.0, "rx_err": 1.0, "rx_drop": 0.0}), None, LOSS, 0.01, "a "),
    ("loss idle link", end({"rx_ok": 0.0, "rx_err": 0.0, "rx_drop": 0.0}), None, LOSS, None, "no frame received"),
    (
        "loss reset counter",
        end({"rx_ok": 10.0, "rx_err": None, "rx_drop": 0.0}, why={"rx_err": "reset: 5 to 0"}),
        None,
        LOSS,
        None,
        "rx_err reset",
    ),
    ("loss nothing", None, None, LOSS, None, "a not sampled; b not sampled"),
    (
        "BER worst end",
        end(gauges={"pre_fec_ber": 1e-8}),
        end(gauges={"pre_fec_ber": 3e-6}),
        PRE_FEC_BER,
        3e-6,
        "b pre_fec_ber",
    ),
    ("BER N/A", end(gauges={"pre_fec_ber": None}), None, PRE_FEC_BER, None, "no end reports"),
    ("FEC uncorrectable", end({"fec_uncorrectable": 0.5}), end({"fec_uncorrectable": 0.0}), FEC_UNCORR, 0.5, "a "),
    ("FEC zero is a value", end({"fec_uncorrectable": 0.0}), None, FEC_UNCORR, 0.0, "a "),
    ("pause duration", end({"pfc3_rx_duration_us": 25_000.0}), None, PAUSE, 0.025, "pfc3_rx_duration_us"),
    # 10 frames/s x 65535 quanta x 512 bit times / 400e9 b/s = 8.388e-4 of the time, an upper bound
    ("pause frames", end({"pfc3_rx": 10.0}), None, PAUSE, 10 * 65535 * 512 / G400, "max quanta"),
    ("pause frames saturate", end({"pfc3_rx": 1e7}), None, PAUSE, 1.0, "max quanta"),
    ("pause other priority only", end({"pfc4_rx": 10.0}), None, PAUSE, None, "no end rates"),
    (
        "ECN NIC receives marks",
        end({"ecn_marked": 5.0, "rx_ok": 1000.0, "tx_ok": 10.0}),
        None,
        ECN,
        0.005,
        "a ecn_marked / rx_ok",
    ),
    ("ECN switch marks egress", None, end({"ecn_marked": 2.0, "tx_ok": 100.0}), ECN, 0.02, "b ecn_marked / tx_ok"),
    ("ECN without packets", end({"ecn_marked": 0.0, "rx_ok": 0.0}), None, ECN, None, "no end rates"),
]


@pytest.mark.parametrize(("case", "a", "b", "name", "value", "words"), CASES, ids=[c[0] for c in CASES])
def test_link_sli(
    case: str, a: PortRates | None, b: PortRates | None, name: str, value: float | None, words: str
) -> None:
    s = link_sli(7, (a, b), 10.0, G400, (3,), 0)
    assert s.link == 7 and s.seconds == 10.0
    if value is None:
        assert s.values[name] is None and words in s.why[name] and name not in s.source
    else:
        assert s.values[name] == pytest.approx(value) and words in s.source[name] and name not in s.why


def test_every_sli_of_an_unsampled_link_is_none_with_a_reason() -> None:
    s = link_sli(0, (None, None), None, G400, (3,), 0)
    assert all(v is None for v in s.values.values()) and set(s.why) == set(s.values)


LEAF = "leaf-p0-su01-r0"


def _leaf_interval(rx_err_after: int) -> Interval:
    """Two portstat readings of LEAF: every planned port up, 1000 frames in 10 s, ``rx_err_after`` errors on
    Ethernet0 (the host link of gpu-su01-h01)."""
    a, b = Snapshot("portstat", LEAF, 0.0), Snapshot("portstat", LEAF, 10.0)
    for port in index_cache().ports[LEAF]:
        a.ports[port] = PortSample(port, {"rx_ok": 0, "rx_err": 0, "rx_drop": 0}, {}, {"oper": "up"})
        b.ports[port] = PortSample(
            port,
            {"rx_ok": 1000, "rx_err": rx_err_after if port == "Ethernet0" else 0, "rx_drop": 0},
            {},
            {"oper": "up"},
        )
    return interval(a, b)


_INDEX: list[LinkIndex] = []


def index_cache() -> LinkIndex:
    if not _INDEX:
        _INDEX.append(LinkIndex(build_plan(load_intent(DEMO))))
    return _INDEX[0]


def test_aggregates_over_the_demo_plan() -> None:
    index = index_cache()
    corr = correlate(index, [_leaf_interval(10)])
    slis = link_slis(corr)
    table = RouteTable(device=LEAF, parsed=True)
    table.routes["10.0.0.2/32"] = Route(
        "10.0.0.2/32", protocol="bgp", selected=True, installed=True, fib=tuple(f"10.1.0.{2 * k}" for k in range(24))
    )
    aggs, per_leaf = aggregate(corr, slis, routes={LEAF: table})
    by = {(a.scope, a.key): a for a in aggs}
    leaf = by[("leaf", LEAF)]
    # 64 planned links of the leaf (32 host, 32 uplinks), all sampled up at the leaf end
    assert leaf.values[AVAILABILITY] == 1.0 and leaf.inputs[AVAILABILITY]["planned"] == 64  # type: ignore[index]
    # 10 errors over 64 x 1000 good frames + those 10 received at the leaf (each link: its leaf end only)
    assert leaf.values[LOSS] == pytest.approx(10 / 64_010)
    assert per_leaf[LEAF].values[PATH_DIVERSITY] == pytest.approx(24 / 32)
    assert per_leaf[LEAF].inputs[PATH_DIVERSITY] == {"planned": 32, "routes": 1, "min_ecmp": 24, "max_ecmp": 24}
    other = per_leaf["leaf-p0-su01-r1"]
    assert other.values[PATH_DIVERSITY] is None and "no route table" in other.why[PATH_DIVERSITY]
    assert per_leaf[LEAF].values[BGP_DROPS] is None and "no BGP summaries" in per_leaf[LEAF].why[BGP_DROPS]
    # the fabric: 1024 planned links, 64 known up, the rest unknown: availability is over the known links, the
    # unknown ones lower coverage instead
    fabric = by[("fabric", "")]
    assert fabric.inputs[AVAILABILITY] == {"planned": 1024, "up": 64, "down": 0, "unknown": 960}
    assert fabric.values[AVAILABILITY] == 1.0
    assert fabric.values[COVERAGE] == pytest.approx(64 / 1024)
    assert fabric.inputs[COVERAGE] == {"planned": 1024, "known": 64, "unknown": 960}
    assert fabric.values[PRE_FEC_BER] is None and "none of 1024" in fabric.why[PRE_FEC_BER]
    assert by[("rail", "1")].values[AVAILABILITY] is None  # no link of rail 1 was sampled
    assert by[("rail", "1")].values[COVERAGE] == 0.0  # and that is known: none of its links, not "no value"
    assert by[("rail", "0")].values[LOSS] == pytest.approx(10 / 64_010)


def _states(device: str, down: set[str]) -> Snapshot:
    """``show interfaces status`` of ``device``: every planned port up but those in ``down``."""
    snap = Snapshot("intf-status", device)
    for port in index_cache().ports[device]:
        snap.ports[port] = PortSample(port, state={"oper": "down" if port in down else "up"})
    return snap


# case, devices sampled (None: every switch), ports oper down as (device, port)
KNOWN_CASES = [
    ("every link known, all up", None, set()),
    ("every link known, two down", None, {("leaf-p0-su01-r0", "Ethernet0"), ("spine-p0-03", "Ethernet4")}),
    (
        "rail 0 and 1 leaves only, one down",
        {f"leaf-p0-su0{su}-r{r}" for su in (1, 2) for r in (0, 1)},
        {("leaf-p0-su02-r1", "Ethernet8")},
    ),
]


@pytest.mark.parametrize(("case", "devices", "down"), KNOWN_CASES, ids=[c[0] for c in KNOWN_CASES])
def test_availability_is_over_known_links_and_coverage_counts_them(
    case: str, devices: set[str] | None, down: set[tuple[str, str]]
) -> None:
    index = index_cache()
    switches = [s.name for s in index.plan.switches]
    sampled = set(switches) if devices is None else devices
    corr = correlate(index, [_states(d, {p for dd, p in down if dd == d}) for d in sorted(sampled)])
    aggs, _ = aggregate(corr, link_slis(corr))
    labels = [index.labels(i) for i in range(len(index.links))]
    for a in aggs:
        if a.scope not in ("fabric", "rail", "plane", "leaf"):
            continue
        # the scope's links from the plan's labels: a leaf's host links and uplinks carry its leaf and rail
        links = [
            lk
            for lk, lab in zip(index.links, labels, strict=True)
            if a.scope == "fabric" or str(lab.get(a.scope)) == a.key
        ]
        known = [lk for lk in links if {lk.a_device, lk.b_device} & sampled]
        up = [lk for lk in known if (lk.a_device, lk.a_port) not in down and (lk.b_device, lk.b_port) not in down]
        assert a.values[COVERAGE] == pytest.approx(len(known) / len(links)), (a.scope, a.key)
        if not known:
            assert a.values[AVAILABILITY] is None
            continue
        assert a.values[AVAILABILITY] == pytest.approx(len(up) / len(known)), (a.scope, a.key)
        if devices is None:  # every link known: availability over known links is availability over planned ones
            assert a.values[COVERAGE] == 1.0
            assert a.values[AVAILABILITY] == pytest.approx(len(up) / len(links))


@pytest.mark.parametrize(
    ("dropped", "value", "words"),
    [
        ((3, 5), 2 * 3600 / 60, None),
        ((5, 0), None, "reset"),
        ((None, 1), None, "earlier sample"),
    ],
)
def test_bgp_drops_per_hour(dropped: tuple[int | None, int], value: float | None, words: str | None) -> None:
    a, b = Snapshot("show ip bgp summary json", LEAF, 0.0), Snapshot("show ip bgp summary json", LEAF, 60.0)
    a.ports["10.1.0.0"] = PortSample("10.1.0.0", {"bgp_dropped": dropped[0]})
    b.ports["10.1.0.0"] = PortSample("10.1.0.0", {"bgp_dropped": dropped[1]})
    got, why = bgp_drops_per_hour(interval(a, b))
    assert got == (pytest.approx(value) if value is not None else None)
    if words:
        assert words in why


def _route(prefix: str, width: int) -> Route:
    return Route(
        prefix, protocol="bgp", selected=True, installed=True, fib=tuple(f"10.1.0.{2 * k}" for k in range(width))
    )


# (case, routes (prefix, ECMP width) of leaf-p0-su01-r0, path diversity, min ECMP width counted) -- the demo's leaf
# has 32 uplinks; 172.16.0.0/31 is its own host link, 172.16.1.0/31 one of su01-r4's, 10.0.1.1/32 spine-p0-01's
# loopback, 10.0.0.2/32 su01-r1's loopback (read from the demo's plan.json)
PATH_CASES = [
    ("all remote prefixes at full width", [("10.0.0.2/32", 32), ("172.16.1.0/31", 32)], 1.0, 32),
    ("a spine's loopback (4 cables) is not a remote leaf", [("10.0.1.1/32", 4), ("172.16.1.0/31", 32)], 1.0, 32),
    ("one remote prefix narrower", [("10.0.0.2/32", 32), ("172.16.1.0/31", 31)], 31 / 32, 31),
    ("only its own and spine prefixes", [("172.16.0.0/31", 1), ("10.0.1.1/32", 4)], None, None),
]


@pytest.mark.parametrize(("case", "routes", "value", "narrowest"), PATH_CASES, ids=[c[0] for c in PATH_CASES])
def test_path_diversity_counts_routes_to_other_leaves(
    case: str, routes: list, value: float | None, narrowest: int | None
) -> None:
    index = index_cache()
    assert index.leaf_prefixes["172.16.0.0/31"] == LEAF and index.leaf_prefixes["10.0.0.2/32"] != LEAF
    assert "10.0.1.1/32" not in index.leaf_prefixes
    table = RouteTable(device=LEAF, parsed=True)
    for prefix, width in routes:
        table.routes[prefix] = _route(prefix, width)
    got, why, inputs = path_diversity(LEAF, table, 32, index.leaf_prefixes)
    assert got == (pytest.approx(value) if value is not None else None)
    assert inputs.get("min_ecmp") == narrowest
    assert bool(why) == (value is None)
