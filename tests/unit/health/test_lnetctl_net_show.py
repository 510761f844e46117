"""``lnetctl net show -v 2`` on recorded and derived outputs (fixtures/health/lustre, fixtures/tools/lnetctl; sources
in their README.md), and what hwaac.health.checks_lustre makes of each. Expected values were read off the fixture
files by hand."""

from __future__ import annotations

import pytest

from hwaac.health.parsers.lnetctl import parse_lnet_net_show
from hwaac.health.result import Action, Status
from tests.unit.health.lustre_judge import FIX, GARBAGE, HEALTH, codes, faults, read, verdict

# --- lnetctl net show -v 2 ----------------------------------------------------------------------------------------


def test_lnet_net_show_2_12_export_healthy() -> None:
    result = parse_lnet_net_show(read(HEALTH / "lnetctl_export_net_2.12_lustrefs_exporter.txt"), exit_code=0)
    assert verdict(result) == Status.PASS
    assert [(n.net, n.nid, n.status, n.interface, n.health_value) for n in result.nis] == [
        ("tcp", "10.20.0.5@tcp", "up", "eth1", 1000)
    ]  # lo left out (its health value 942 is not judged)


def test_lnet_net_show_2_15_rail_down() -> None:
    result = parse_lnet_net_show(read(HEALTH / "lnetctl_net_show_v2_2.15_o2ib_derived.txt"))
    assert verdict(result) == Status.FAIL
    assert {(f.code, f.subject) for f in faults(result)} == {
        ("LUSTRE_LNET_NI_DOWN", "10.20.1.5@o2ib (ib1)"),
        ("LUSTRE_LNET_NI_FATAL", "10.20.1.5@o2ib (ib1)"),
        ("LUSTRE_LNET_NI_DEGRADED", "10.20.1.5@o2ib (ib1)"),
    }


def test_lnet_net_show_2_16_layout_degraded_is_warn() -> None:
    result = parse_lnet_net_show(read(HEALTH / "lnetctl_net_show_v2_2.16_layout_degraded_derived.txt"))
    assert [(n.nid, n.status, n.health_value, n.fatal_error) for n in result.nis] == [
        ("10.20.0.5@o2ib", "up", 1000, 0),
        ("10.20.1.5@o2ib", "up", 850, 0),
    ]
    assert codes(result) == ["LUSTRE_LNET_NI_DEGRADED"] and verdict(result) == Status.WARN


def test_lnet_down() -> None:
    down = read(HEALTH / "lnetctl_down_2.12_lustrefs_exporter.txt")
    for result in (
        parse_lnet_net_show(down, exit_code=1),
        parse_lnet_net_show("", stderr=down, exit_code=1),
        parse_lnet_net_show("", stderr="LNet stack down\n", exit_code=1),
    ):
        assert result.lnet_down and codes(result) == ["LUSTRE_LNET_DOWN"]


@pytest.mark.parametrize(
    "text",
    [
        *GARBAGE,
        "net: []\n",
        "net:\n    - net type: o2ib\n      local NI(s):\n        - status: up\n",
        "global:\n    discovery: 1\n",
    ],
)
def test_lnet_net_show_garbage_is_unknown(text: str) -> None:
    assert verdict(parse_lnet_net_show(text, exit_code=0)) == Status.UNKNOWN


def test_lnet_net_show_cut_at_80_percent_is_unknown() -> None:
    """Cut at the last line end before 80 %, the output ends inside ib1's ``received_stats``: lnetctl prints no
    count, so the last NI must have what lnetctl prints for every NI after ``statistics`` (``tunables``, ``dev cpt``,
    ``CPT``) and what ``lo`` has (``dropped_stats``, ``health stats``: the -v 2 blocks)."""
    text = read(HEALTH / "lnetctl_net_show_v2_2.15_o2ib_derived.txt")
    result = parse_lnet_net_show(text[: text.rindex("\n", 0, len(text) * 8 // 10) + 1])
    assert [n.nid for n in result.nis] == ["10.20.0.5@o2ib", "10.20.1.5@o2ib"]
    assert result.unknown == [
        "10.20.1.5@o2ib: no tunables, dev cpt, CPT, dropped_stats, health stats (output cut short?)"
    ]


LNET_NI_END = {  # fixture -> a line that only the last NI of the output has, and the key printed after it
    "lnetctl_export_net_2.12_lustrefs_exporter.txt": ("      0: eth1", "statistics"),
    "lnetctl_net_show_v2_2.16_layout_degraded_derived.txt": ("            dev cpt: 1", "CPT"),
}


@pytest.mark.parametrize("name", sorted(LNET_NI_END))
def test_lnet_net_show_last_ni_cut_at_a_line_is_unknown(name: str) -> None:
    text = read(HEALTH / name)
    line, missing = LNET_NI_END[name]
    result = parse_lnet_net_show(text[: text.index(line) + len(line) + 1])
    assert verdict(result) == Status.UNKNOWN and missing in result.unknown[0] and "cut short" in result.unknown[0]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            "net:\n    - net type: lo\n      local NI(s):\n        - nid: 0@lo\n          status: up\n"
            "    - net type: o2",
            "net o2 lists no local NI (output cut short?)",
        ),
        (
            "net:\n    - net type: o2ib\n      local NI(s):\n        - nid: 10.20.0.5@o2ib\n          status: up\n"
            "          interfaces:\n",
            "10.20.0.5@o2ib: 'interfaces' without an interface (output cut short?)",
        ),
        (
            "net:\n    - net type: o2ib\n      local NI(s):\n        - nid: 10.20.0.5@o2ib\n          status: u\n",
            "10.20.0.5@o2ib: status 'u' is not up or down",
        ),
    ],
)
def test_lnet_net_show_cut_inside_the_last_ni_is_unknown(text: str, reason: str) -> None:
    assert parse_lnet_net_show(text).unknown == [reason]


def test_lnet_net_show_last_ni_is_compared_with_its_own_lnd() -> None:
    """A 2.12 tcp NI prints no ``lnd tunables`` where an o2ib NI does: a tcp NI last is no cut for lacking them."""
    export = read(HEALTH / "lnetctl_export_net_2.12_lustrefs_exporter.txt")
    lo, tcp = export.split("    - net type: tcp\n")
    o2ib = (
        tcp.replace("10.20.0.5@tcp", "10.20.1.5@o2ib")
        .replace("0: eth1", "0: ib0")
        .replace(
            "          dev cpt: -1", "          lnd tunables:\n              peercredits_hiw: 4\n          dev cpt: -1"
        )
    )
    text = f"{lo}    - net type: o2ib\n{o2ib}    - net type: tcp\n{tcp}"
    result = parse_lnet_net_show(text)
    assert [n.nid for n in result.nis] == ["10.20.1.5@o2ib", "10.20.0.5@tcp"] and result.unknown == []


def test_lnet_net_show_bad_health_value_is_unknown() -> None:
    text = read(HEALTH / "lnetctl_export_net_2.12_lustrefs_exporter.txt").replace(
        "health value: 1000", "health value: lots"
    )
    assert verdict(parse_lnet_net_show(text)) == Status.UNKNOWN


# Whether each NI's health was read. lnetctl prints ``health stats`` only from detail 2 on (liblnetconfig.c
# lustre_lnet_show_net() "if (detail < 2) goto continue_without_msg_stats"; 2.16+ api-ni.c "if (gnlh->version < 2)")
# and a plain -v is detail 1 (lnetctl.c jt_show_net()), so an up NI without a health value is not known to be healthy.
# Expected codes read off the files by hand: one LUSTRE_LNET_HEALTH_MISSING per NI other than lo where the output has
# no health value; where it has one, the value is judged.
LNETCTL = FIX / "tools" / "lnetctl"
LNET_HEALTH_READ = [
    (
        "recorded -v (detail 1), 2.15 tcp",
        lambda: read(LNETCTL / "2.15/net_show_v_tcp.txt"),
        [("LUSTRE_LNET_HEALTH_MISSING", "10.20.0.5@tcp (bond0)")],
        Status.UNKNOWN,
    ),
    (
        "recorded, no -v (detail 0), 2.16 tcp",
        lambda: read(LNETCTL / "2.16/net_show_tcp.txt"),
        [("LUSTRE_LNET_HEALTH_MISSING", "10.20.0.5@tcp (eth0)")],
        Status.UNKNOWN,
    ),
    (
        "constructed -v (detail 1), 2.16 o2ib",
        lambda: read(LNETCTL / "2.16/net_show_v_o2ib.txt"),
        [("LUSTRE_LNET_HEALTH_MISSING", "10.20.0.5@o2ib (ib0)")],
        Status.UNKNOWN,
    ),
    (
        "constructed, no -v, two o2ib rails",
        lambda: read(LNETCTL / "2.15/net_show_o2ib_mr.txt"),
        [
            ("LUSTRE_LNET_HEALTH_MISSING", "10.20.0.5@o2ib (ib0)"),
            ("LUSTRE_LNET_HEALTH_MISSING", "10.20.1.5@o2ib (ib1)"),
        ],
        Status.UNKNOWN,
    ),
    (
        "health stats without a health value",
        lambda: read(HEALTH / "lnetctl_export_net_2.12_lustrefs_exporter.txt").replace(
            "              health value: 1000\n", ""
        ),
        [("LUSTRE_LNET_HEALTH_MISSING", "10.20.0.5@tcp (eth1)")],
        Status.UNKNOWN,
    ),
    (
        "recorded -v 3 (Lustre manual), 2.12 tcp at 1000",
        lambda: read(HEALTH / "lnetctl_net_show_v3_2.12_manual.txt"),
        [],
        Status.PASS,
    ),
    (
        "the same NI at 731",
        lambda: read(HEALTH / "lnetctl_net_show_v3_2.12_manual.txt").replace("health value: 1000", "health value: 731"),
        [("LUSTRE_LNET_NI_DEGRADED", "10.20.0.5@tcp (eth2)")],
        Status.WARN,
    ),
    (
        "recorded -v 2 level, two o2ib rails at 1000",
        lambda: read(LNETCTL / "older/net_show_v2_o2ib_mr_lnd_in_tunables.txt"),
        [],
        Status.PASS,
    ),
    (
        "recorded detail 2 (export), 2.12: health value, no fatal_error yet",
        lambda: read(HEALTH / "lnetctl_export_net_2.12_lustrefs_exporter.txt"),
        [],
        Status.PASS,
    ),
]


@pytest.mark.parametrize(
    ("make", "expected", "status"), [row[1:] for row in LNET_HEALTH_READ], ids=[row[0] for row in LNET_HEALTH_READ]
)
def test_lnet_ni_health_is_judged_only_where_read(make, expected: list[tuple[str, str]], status: Status) -> None:
    result = parse_lnet_net_show(make(), exit_code=0)
    assert result.unknown == []  # complete outputs: the finding is the check's, not a parse failure
    assert [(f.code, f.subject) for f in faults(result)] == expected
    assert verdict(result) == status
    missing = [f for f in faults(result) if f.code == "LUSTRE_LNET_HEALTH_MISSING"]
    assert all(f.status == Status.UNKNOWN and f.action == Action.RETEST for f in missing)
