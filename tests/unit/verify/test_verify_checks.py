"""The catalog over the recorded scenarios: each fault is named by exactly the results that name it (both ends,
the cable id, the switch), its consequences are SKIPs or degraded PASSes explained by it, and nothing else."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hwaac.verify import commands as C
from hwaac.verify.ansible import FactsCollector
from hwaac.verify.raw import Raw
from hwaac.verify.results import Result, Status
from hwaac.verify.runner import judge, requests, select, verify_devices
from tests.unit.verify.recordings import PLAN, SCENARIOS, fixture_inputs, raw, recorded

LEAF = "leaf-p0-su01-r0"
H1 = "gpu-su01-h01 rail0 172.16.0.1 -> gpu-su02-h01 rail0 172.16.0.9"
H1_BACK = "gpu-su02-h01 rail0 172.16.0.9 -> gpu-su01-h01 rail0 172.16.0.1"
H2 = "gpu-su01-h02 rail0 172.16.0.3 -> gpu-su02-h02 rail0 172.16.0.11"
H2_BACK = "gpu-su02-h02 rail0 172.16.0.11 -> gpu-su01-h02 rail0 172.16.0.3"
L0 = "leaf-p0-su01-r0 Ethernet8 <-> spine-p0-01 Ethernet0"
L1 = "leaf-p0-su01-r0 Ethernet12 <-> spine-p0-02 Ethernet0"
H4 = "gpu-su02-h01 rail0 <-> leaf-p0-su02-r0 Ethernet0"
SPINE2_SESSIONS = [  # (leaf, leaf address, spine address) of spine-p0-02's eight sessions
    ("leaf-p0-su01-r0", "10.1.0.3", "10.1.0.2"),
    ("leaf-p0-su01-r0", "10.1.0.7", "10.1.0.6"),
    ("leaf-p0-su01-r1", "10.1.0.11", "10.1.0.10"),
    ("leaf-p0-su01-r1", "10.1.0.15", "10.1.0.14"),
    ("leaf-p0-su02-r0", "10.1.0.19", "10.1.0.18"),
    ("leaf-p0-su02-r0", "10.1.0.23", "10.1.0.22"),
    ("leaf-p0-su02-r1", "10.1.0.27", "10.1.0.26"),
    ("leaf-p0-su02-r1", "10.1.0.31", "10.1.0.30"),
]


def prefix_skips(pairs: list[tuple[str, str, str, str]], fault: str) -> set[tuple[str, str, str]]:
    """Both directions' VerifyBgpPrefixesReceived SKIPs of sessions (a, a_ip, b, b_ip)."""
    out = set()
    for a, a_ip, b, b_ip in pairs:
        out.add(("VerifyBgpPrefixesReceived", f"{a} from {b} {b_ip}", fault))
        out.add(("VerifyBgpPrefixesReceived", f"{b} from {a} {a_ip}", fault))
    return out


def probe_skips(
    probes: list[str], fault: str, checks: tuple[str, ...] = ("VerifyRailPaths", "VerifyPathMtu")
) -> set[tuple[str, str, str]]:
    return {(c, p, fault) for c in checks for p in probes}


# scenario -> (FAILs as (check, object, fault), SKIPs as (check, object, explained_by), degraded PASSes as
# (check, explained_by) -> how many)
EXPECTED: dict[str, tuple[set, set, dict]] = {
    "healthy": (set(), set(), {}),
    "link_down": (
        {
            ("VerifyInterfaceState", L0, "L0000000"),
            ("VerifyLldpNeighbors", L0, "L0000000"),
            ("VerifyBgpSessions", "leaf-p0-su01-r0 10.1.0.1 <-> spine-p0-01 10.1.0.0", "L0000000"),
        },
        prefix_skips([(LEAF, "10.1.0.1", "spine-p0-01", "10.1.0.0")], "L0000000"),
        {("VerifyEcmpRoutes", ("L0000000",)): 1},
    ),
    "host_link_down": (
        {("VerifyInterfaceState", H4, "H0000004"), ("VerifyLldpNeighbors", H4, "H0000004")},
        probe_skips(["gpu-su01-h01 rail0 172.16.0.1 -> gpu-su02-h01 rail0 172.16.0.9", H1_BACK], "H0000004"),
        # 172.16.0.8/31 is withdrawn: every leaf-from-spine session carries 9, not 10, the spines get 2 from
        # leaf-p0-su02-r0; the three other leaves route one prefix less
        {("VerifyBgpPrefixesReceived", ("H0000004",)): 16, ("VerifyEcmpRoutes", ("H0000004",)): 3},
    ),
    "swapped_uplinks": (
        {
            ("VerifyLldpNeighbors", L0, "L0000000"),
            ("VerifyLldpNeighbors", L1, "L0000001"),
            ("VerifyBgpSessions", "leaf-p0-su01-r0 10.1.0.1 <-> spine-p0-01 10.1.0.0", "L0000000"),
            ("VerifyBgpSessions", "leaf-p0-su01-r0 10.1.0.3 <-> spine-p0-02 10.1.0.2", "L0000001"),
        },
        prefix_skips([(LEAF, "10.1.0.1", "spine-p0-01", "10.1.0.0")], "L0000000")
        | prefix_skips([(LEAF, "10.1.0.3", "spine-p0-02", "10.1.0.2")], "L0000001"),
        {("VerifyEcmpRoutes", ("L0000000", "L0000001")): 1},
    ),
    "swapped_hosts": (
        {
            ("VerifyLldpNeighbors", "gpu-su01-h01 rail0 <-> leaf-p0-su01-r0 Ethernet0", "H0000000"),
            ("VerifyLldpNeighbors", "gpu-su01-h02 rail0 <-> leaf-p0-su01-r0 Ethernet4", "H0000001"),
        },
        probe_skips([H1, H1_BACK], "H0000000") | probe_skips([H2, H2_BACK], "H0000001"),
        {},
    ),
    "spine_down": (
        {("VerifyDevicesAnswer", "spine-p0-02", "spine-p0-02")}
        | {("VerifyBgpSessions", f"{leaf} {a} <-> spine-p0-02 {b}", "spine-p0-02") for leaf, a, b in SPINE2_SESSIONS},
        prefix_skips([(leaf, a, "spine-p0-02", b) for leaf, a, b in SPINE2_SESSIONS], "spine-p0-02")
        | {("VerifyLoopbacksReachable", "spine-p0-02", "spine-p0-02")},
        {("VerifyEcmpRoutes", ("spine-p0-02",)): 4, ("VerifyLoopbacksReachable", ("spine-p0-02",)): 4},
    ),
    "wrong_asn": (
        {("VerifyBgpSessions", "leaf-p0-su01-r0 10.1.0.1 <-> spine-p0-01 10.1.0.0", "L0000000")},
        prefix_skips([(LEAF, "10.1.0.1", "spine-p0-01", "10.1.0.0")], "L0000000"),
        {("VerifyEcmpRoutes", ("L0000000",)): 1},
    ),
    "session_shutdown": (
        {("VerifyBgpSessions", "leaf-p0-su01-r0 10.1.0.5 <-> spine-p0-01 10.1.0.4", "L0000002")},
        prefix_skips([(LEAF, "10.1.0.5", "spine-p0-01", "10.1.0.4")], "L0000002"),
        {("VerifyEcmpRoutes", ("L0000002",)): 1},
    ),
    "ecmp_short": ({("VerifyEcmpRoutes", LEAF, LEAF)}, set(), {}),
    "mtu_small": (
        {("VerifyInterfaceMtu", H4, "H0000004")},
        probe_skips([H1, H1_BACK], "H0000004", ("VerifyPathMtu",)),
        {},
    ),
    "host_mtu_small": (
        {("VerifyInterfaceMtu", "gpu-su01-h02 rail1 <-> leaf-p0-su01-r1 Ethernet4", "H0000003")},
        probe_skips(
            [
                "gpu-su01-h02 rail1 172.16.0.7 -> gpu-su02-h02 rail1 172.16.0.15",
                "gpu-su02-h02 rail1 172.16.0.15 -> gpu-su01-h02 rail1 172.16.0.7",
            ],
            "H0000003",
            ("VerifyPathMtu",),
        ),
        {},
    ),
    "wrong_egress": ({("VerifyRailPaths", H1, H1)}, {("VerifyPathMtu", H1, H1)}, {}),
}


def test_every_recorded_scenario_has_expectations() -> None:
    assert sorted(EXPECTED) == SCENARIOS


def _sets(results: list[Result]) -> tuple[set, set, dict]:
    fails = {(r.check, r.object, r.fault) for r in results if r.status is Status.FAIL}
    skips = {(r.check, r.object, ",".join(r.explained_by)) for r in results if r.status is Status.SKIP}
    degraded: dict = {}
    for r in results:
        if r.status is Status.PASS and r.explained_by:
            degraded[(r.check, r.explained_by)] = degraded.get((r.check, r.explained_by), 0) + 1
    return fails, skips, degraded


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_scenario_names_exactly_its_fault(scenario: str) -> None:
    report = judge(fixture_inputs(), recorded(scenario))
    fails, skips, degraded = _sets(report.results)
    want_fails, want_skips, want_degraded = EXPECTED[scenario]
    assert fails == want_fails
    assert skips == want_skips
    assert degraded == want_degraded
    assert not [r for r in report.results if r.status is Status.ERROR]
    assert report.passed is (scenario == "healthy")
    assert len(report.results) == 156  # every object judged once, whatever the fault


def one(results: list[Result], check: str, obj: str) -> Result:
    (r,) = [r for r in results if r.check == check and r.object == obj]
    return r


# (scenario, check, object) -> the exact fields of the result (a table of each FAIL kind)
FAIL_KINDS = [
    (
        "swapped_uplinks",
        "VerifyLldpNeighbors",
        L0,
        {
            "expected": L0,
            "cable": "L0000000",
            "ends": ("leaf-p0-su01-r0 Ethernet8", "spine-p0-01 Ethernet0"),
            "actual": "leaf-p0-su01-r0 Ethernet8 sees spine-p0-02 Ethernet0 (end of L0000001); "
            "spine-p0-01 Ethernet0 sees leaf-p0-su01-r0 Ethernet12 (end of L0000001)",
            "message": "swapped with L0000001",
        },
    ),
    (
        "swapped_hosts",
        "VerifyLldpNeighbors",
        "gpu-su01-h02 rail0 <-> leaf-p0-su01-r0 Ethernet4",
        {
            "cable": "H0000001",
            "actual": "gpu-su01-h02 rail0 sees leaf-p0-su01-r0 Ethernet0 (end of H0000000); "
            "leaf-p0-su01-r0 Ethernet4 sees gpu-su01-h01 rail0 (end of H0000000)",
            "message": "swapped with H0000000",
        },
    ),
    (
        "link_down",
        "VerifyLldpNeighbors",
        L0,
        {
            "actual": "leaf-p0-su01-r0 Ethernet8 sees no LLDP neighbour; spine-p0-01 Ethernet0 sees no LLDP neighbour",
            "message": "no neighbour: cable missing, or down (VerifyInterfaceState)",
        },
    ),
    (
        "link_down",
        "VerifyInterfaceState",
        L0,
        {
            "expected": "leaf-p0-su01-r0 Ethernet8 up/up; spine-p0-01 Ethernet0 up/up",
            "cable": "L0000000",
            "actual": "leaf-p0-su01-r0 Ethernet8: admin down, oper DOWN; "
            "spine-p0-01 Ethernet0: admin up, oper DOWN (NO-CARRIER)",
        },
    ),
    (
        "link_down",
        "VerifyBgpSessions",
        "leaf-p0-su01-r0 10.1.0.1 <-> spine-p0-01 10.1.0.0",
        {
            "cable": "L0000000",
            "ends": ("leaf-p0-su01-r0 Ethernet8", "spine-p0-01 Ethernet0"),
            "actual": "leaf-p0-su01-r0 -> 10.1.0.0: Active; spine-p0-01 -> 10.1.0.1: Active",
            "message": "cable down (VerifyInterfaceState)",
        },
    ),
    (
        "session_shutdown",
        "VerifyBgpSessions",
        "leaf-p0-su01-r0 10.1.0.5 <-> spine-p0-01 10.1.0.4",
        {"actual": "leaf-p0-su01-r0 -> 10.1.0.4: Active; spine-p0-01 -> 10.1.0.5: Idle (shut down)", "message": ""},
    ),
    (
        "wrong_asn",
        "VerifyBgpSessions",
        "leaf-p0-su01-r0 10.1.0.1 <-> spine-p0-01 10.1.0.0",
        {
            "expected": "Established; leaf-p0-su01-r0 AS 4200100000 <-> spine-p0-01 AS 4200000001",
            "actual": "leaf-p0-su01-r0 -> 10.1.0.0: remote-as 4200000099 (planned 4200000001), Idle; "
            "spine-p0-01 -> 10.1.0.1: Idle",
        },
    ),
    (
        "spine_down",
        "VerifyDevicesAnswer",
        "spine-p0-02",
        {
            "expected": "answers; FRR answers vtysh",
            "devices": ("spine-p0-02",),
            "actual": "FRR down: show bgp summary json: rc 1: Exiting: failed to connect to any daemons.",
        },
    ),
    (
        "spine_down",
        "VerifyBgpSessions",
        "leaf-p0-su02-r1 10.1.0.31 <-> spine-p0-02 10.1.0.30",
        {
            "cable": "L0000015",
            "actual": "leaf-p0-su02-r1 -> 10.1.0.30: Active; spine-p0-02: FRR down",
            "message": "spine-p0-02 down (VerifyDevicesAnswer)",
        },
    ),
    (
        "ecmp_short",
        "VerifyEcmpRoutes",
        LEAF,
        {
            "expected": "6 remote host prefixes, 4 next hops each",
            "actual": "6 wrong: "
            + ", ".join(f"172.16.0.{n}/31 2 next hops (expected 4)" for n in (4, 6, 8, 10, 12, 14)),
        },
    ),
    (
        "mtu_small",
        "VerifyInterfaceMtu",
        H4,
        {
            "expected": "gpu-su02-h01 rail0 9000; leaf-p0-su02-r0 Ethernet0 9100",
            "cable": "H0000004",
            "actual": "gpu-su02-h01 rail0 9000; leaf-p0-su02-r0 Ethernet0 1500",
        },
    ),
    (
        "wrong_egress",
        "VerifyRailPaths",
        H1,
        {
            "expected": "egress rail0, reply from 172.16.0.9",
            "actual": "egress rail1 (main table)",
            "ends": ("gpu-su01-h01 rail0", "gpu-su02-h01 rail0"),
        },
    ),
]


@pytest.mark.parametrize(
    ("scenario", "check", "obj", "fields"), FAIL_KINDS, ids=[f"{s}-{c}" for s, c, _, _ in FAIL_KINDS]
)
def test_fail_kind(scenario: str, check: str, obj: str, fields: dict) -> None:
    r = one(judge(fixture_inputs(), recorded(scenario)).results, check, obj)
    assert r.status is Status.FAIL
    for name, value in fields.items():
        assert getattr(r, name) == value, name


def test_degraded_pass_says_what_lowered_it() -> None:
    r = one(judge(fixture_inputs(), recorded("link_down")).results, "VerifyEcmpRoutes", LEAF)
    assert (r.status, r.explained_by) == (Status.PASS, ("L0000000",))
    assert r.expected == "6 remote host prefixes, 4 next hops each"
    assert r.actual == "as expected with the faults named (6 prefixes below plan)"


# outputs of one scenario put into another: a fault no stage before explains is a FAIL of its own check
COMPOSED = [
    # (base, device, command key, from scenario, check, object, expected, actual)
    (
        "healthy",
        "gpu-su01-h01",
        C.ping_df("172.16.0.9", "172.16.0.1", 9000).key,
        "mtu_small",
        "VerifyPathMtu",
        H1,
        "8972-byte DF ping answered (MTU 9000)",
        "no reply (0/2); a router says Frag needed, mtu 1500; local path MTU 1500",
    ),
    (
        "healthy",
        LEAF,
        C.BGP_SUMMARY.key,
        "host_link_down",
        "VerifyBgpPrefixesReceived",
        "leaf-p0-su01-r0 from spine-p0-01 10.1.0.0",
        ">= 10 prefixes",
        "9",
    ),
    (
        "healthy",
        LEAF,
        C.ROUTES.key,
        "spine_down",
        "VerifyLoopbacksReachable",
        LEAF,
        "5 loopbacks routed",
        "missing 10.0.1.2/32 (spine-p0-02)",
    ),
    (
        "healthy",
        LEAF,
        C.LLDP.key,
        "link_down",
        "VerifyLldpNeighbors",
        L0,
        L0,
        "leaf-p0-su01-r0 Ethernet8 sees no LLDP neighbour; spine-p0-01 Ethernet0 sees leaf-p0-su01-r0 Ethernet8",
    ),
]


@pytest.mark.parametrize(
    ("base", "device", "key", "source", "check", "obj", "expected", "actual"), COMPOSED, ids=[c[4] for c in COMPOSED]
)
def test_unexplained_fault_fails_its_check(
    base: str, device: str, key: str, source: str, check: str, obj: str, expected: str, actual: str
) -> None:
    outputs = recorded(base)
    outputs[device][key] = raw(source, device, key)
    results = judge(fixture_inputs(), outputs).results
    r = one(results, check, obj)
    assert (r.status, r.expected, r.actual, r.explained_by) == (Status.FAIL, expected, actual, ())


def test_unreadable_output_is_an_error_not_a_fail() -> None:
    outputs = recorded("healthy")
    outputs[LEAF][C.ROUTES.key] = Raw(C.ROUTES.argv, 0, "% Unknown command: show ip route json\n")
    results = judge(fixture_inputs(), outputs).results
    errors = {(r.check, r.object) for r in results if r.status is Status.ERROR}
    assert errors == {("VerifyEcmpRoutes", LEAF), ("VerifyLoopbacksReachable", LEAF)}
    assert one(results, "VerifyEcmpRoutes", LEAF).actual.startswith("not read: show ip route json: not JSON")
    assert not [r for r in results if r.status is Status.FAIL]


def test_unreachable_host_is_its_own_fault() -> None:
    outputs = recorded("healthy")
    outputs["gpu-su01-h01"] = {
        k: Raw(r.argv, error="ssh: connect to host gpu-su01-h01: timed out") for k, r in outputs["gpu-su01-h01"].items()
    }
    results = judge(fixture_inputs(), outputs).results
    fails = {(r.check, r.object, r.fault) for r in results if r.status is Status.FAIL}
    assert fails == {("VerifyDevicesAnswer", "gpu-su01-h01", "gpu-su01-h01")}
    skipped = {r.explained_by for r in results if r.status is Status.SKIP}
    assert skipped == {("gpu-su01-h01",)}


def test_a_device_that_only_answers_late_is_an_error_not_a_fault() -> None:
    outputs = recorded("healthy")
    outputs[LEAF] = {k: Raw(r.argv, error="timed out after 60 s") for k, r in outputs[LEAF].items()}
    results = judge(fixture_inputs(), outputs).results
    assert not [r for r in results if r.status is Status.FAIL]
    assert one(results, "VerifyDevicesAnswer", LEAF).status is Status.ERROR
    assert {r.check for r in results if r.status is Status.ERROR} >= {
        "VerifyInterfaceState",
        "VerifyBgpSessions",
        "VerifyEcmpRoutes",
    }


def test_check_subset_runs_what_it_requires_but_reports_only_it() -> None:
    report = judge(fixture_inputs(), recorded("link_down"), ["VerifyEcmpRoutes"])
    assert report.checks == ["VerifyEcmpRoutes"]
    assert {r.check for r in report.results} == {"VerifyEcmpRoutes"}
    assert one(report.results, "VerifyEcmpRoutes", LEAF).explained_by == ("L0000000",)
    assert report.passed


def test_unknown_check_name_is_refused_naming_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown check\(s\) VerifyLldp; valid: VerifyDevicesAnswer"):
        select(["VerifyLldp"])


def test_requested_commands_are_the_recorded_ones() -> None:
    """The recorder ran exactly what the catalog asks for (so the recordings stay the catalog's input)."""
    inputs = fixture_inputs()
    asked = requests(inputs, select(None)[1], inputs.devices())
    have = recorded("healthy")
    assert {d: sorted(c.key for c in cmds) for d, cmds in asked.items()} == {d: sorted(r) for d, r in have.items()}


def test_batch_gate_reads_and_judges_only_its_devices() -> None:
    collector = FactsCollector(recorded("link_down"))
    results = verify_devices(fixture_inputs(), collector, [LEAF])
    assert list(collector.requested) == [LEAF]
    assert all(LEAF in r.devices for r in results)
    fails = {(r.check, r.fault, r.actual) for r in results if r.status is Status.FAIL}
    assert fails == {
        ("VerifyInterfaceState", "L0000000", "leaf-p0-su01-r0 Ethernet8: admin down, oper DOWN"),
        ("VerifyLldpNeighbors", "L0000000", "leaf-p0-su01-r0 Ethernet8 sees no LLDP neighbour"),
        ("VerifyBgpSessions", "L0000000", "leaf-p0-su01-r0 -> 10.1.0.0: Active"),
    }
    assert one(results, "VerifyEcmpRoutes", LEAF).explained_by == ("L0000000",)
    # the leaf's own objects only: its 4 uplinks and 2 host cables (x 3 link checks), 4 sessions, what the leaf
    # receives on them (the spines' side is not read), its ECMP, its loopbacks, itself
    assert len(results) == 6 * 3 + 4 + 4 + 1 + 1 + 1


def test_batch_gate_of_a_healthy_spine_passes() -> None:
    results = verify_devices(PLAN, FactsCollector(recorded("healthy")), ["spine-p0-01"])
    assert results and all(r.status is Status.PASS and not r.explained_by for r in results)


def test_what_a_switch_has_and_the_plan_has_not_is_an_unplanned_fail() -> None:
    """A cable and its session that the plan does not have (L0000000 taken out of the inputs) FAIL on each switch:
    the LLDP neighbour as an unplanned cable, the BGP neighbour as an unplanned BGP neighbour."""
    inputs = fixture_inputs()
    cables = {k: c for k, c in inputs.cables.items() if k != "L0000000"}
    sessions = tuple(s for s in inputs.sessions if s.cable != "L0000000")
    results = judge(replace(inputs, cables=cables, sessions=sessions), recorded("healthy")).results
    unplanned = {
        (r.check, r.object): (r.status, r.expected, r.actual, r.devices, r.ends, r.fault, r.message)
        for r in results
        if r.message.startswith("unplanned")
    }
    assert unplanned == {
        ("VerifyLldpNeighbors", f"{LEAF} Ethernet8"): (
            Status.FAIL,
            "no cable (none planned)",
            "sees spine-p0-01 Ethernet0",
            (LEAF,),
            (f"{LEAF} Ethernet8",),
            f"{LEAF} Ethernet8",
            "unplanned cable",
        ),
        ("VerifyLldpNeighbors", "spine-p0-01 Ethernet0"): (
            Status.FAIL,
            "no cable (none planned)",
            f"sees {LEAF} Ethernet8",
            ("spine-p0-01",),
            ("spine-p0-01 Ethernet0",),
            "spine-p0-01 Ethernet0",
            "unplanned cable",
        ),
        ("VerifyBgpSessions", f"{LEAF} neighbour 10.1.0.0"): (
            Status.FAIL,
            "no such neighbour (none planned)",
            "AS 4200000001, Established",
            (LEAF,),
            (),
            f"{LEAF} 10.1.0.0",
            "unplanned BGP neighbour",
        ),
        ("VerifyBgpSessions", "spine-p0-01 neighbour 10.1.0.1"): (
            Status.FAIL,
            "no such neighbour (none planned)",
            "AS 4200100000, Established",
            ("spine-p0-01",),
            (),
            "spine-p0-01 10.1.0.1",
            "unplanned BGP neighbour",
        ),
    }
