"""The lab's small pure parts: names, the FRR statement reader, neighbour-table sizing, the socket buffer default
raised around lldpd's start, the KSM settings of a big lab, lldpcli's json0, the render-folder reader, the state
record."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from hwaac.cli import main as hwaac_main
from hwaac.lab import ksm, rcvbuf
from hwaac.lab.errors import LabError, LabNotUp
from hwaac.lab.fabric import parse_nodes_per_su, read_fabric
from hwaac.lab.frr_statements import statements
from hwaac.lab.lldp import Neighbor, parse_neighbors
from hwaac.lab.manifest import new_state, read_state, resolve_name, write_state
from hwaac.lab.names import check_lab_name, default_lab_name, lab_of_netns, lab_prefix, netns_name
from hwaac.lab.neigh import KEYS, wanted
from hwaac.lab.status import SwitchBgp, is_quiet
from hwaac.telemetry.parsers.frr_bgp import BgpPeer, parse_bgp_summary

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "tools" / "lldpd"


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("demo", True),
        ("a", True),
        ("su16_x", True),
        ("0lab", True),
        ("", False),
        ("Demo", False),
        ("a-b", False),
        ("a.b", False),
        ("a/b", False),
        ("x" * 17, False),
        ("_a", False),
    ],
)
def test_lab_names(name: str, ok: bool) -> None:
    if ok:
        assert check_lab_name(name) == name
    else:
        with pytest.raises(LabError, match="is not valid: 1 to 16 of a-z"):
            check_lab_name(name)


def test_default_lab_name() -> None:
    assert default_lab_name("demo") == "demo"
    assert default_lab_name("b200-3tier") == "b2003tier"
    assert default_lab_name("H100 4su!") == "h1004su"
    assert default_lab_name("---") == "lab"


def test_namespace_prefixes_never_overlap() -> None:
    """A lab's prefix owns only its own namespaces, whatever the two labs and devices are called."""
    labs = ["a", "ab", "a_b", "demo", "demo2"]
    devices = ["b", "b-c", "leaf-p0-su01-r0", "c"]
    for lab, other in itertools.permutations(labs, 2):
        for dev in devices:
            ns = netns_name(other, dev)
            assert not ns.startswith(lab_prefix(lab)), (lab, ns)
            assert lab_of_netns(ns) == other
    assert lab_of_netns("hvr-leaf") is None and lab_of_netns("hwl-demo") is None and lab_of_netns("x") is None
    with pytest.raises(LabError, match="cannot name a namespace"):
        netns_name("demo", "leaf.1")


def test_statements() -> None:
    text = (
        "hostname x\n!\nip prefix-list P  permit 10.0.0.0/8 ge 24 le 32\n!\nroute-map R permit 10\n!\n"
        "router bgp 65001\n bgp bestpath as-path multipath-relax \n neighbor 1.1.1.1 remote-as 2\n !\n"
        " address-family ipv4 unicast\n  neighbor 1.1.1.1 activate\n exit-address-family\n"
        " neighbor 1.1.1.1 timers 3 9\n!\nroute-map S deny 20\n match tag 5\n"
    )
    assert statements(text) == [
        ("", "hostname x"),
        ("", "ip prefix-list P permit 10.0.0.0/8 ge 24 le 32"),
        ("", "route-map R permit 10"),
        ("", "router bgp 65001"),
        ("router bgp 65001", "bgp bestpath as-path multipath-relax"),
        ("router bgp 65001", "neighbor 1.1.1.1 remote-as 2"),
        ("router bgp 65001 > address-family ipv4 unicast", "neighbor 1.1.1.1 activate"),
        ("router bgp 65001", "neighbor 1.1.1.1 timers 3 9"),
        ("", "route-map S deny 20"),
        ("route-map S deny 20", "match tag 5"),
    ]


@pytest.mark.parametrize(("links", "t1"), [(0, 128), (64, 128), (65, 256), (1024, 2048), (8192, 16384)])
def test_neighbour_limits(links: int, t1: int) -> None:
    want = wanted(links)
    assert set(want) == set(KEYS)
    for v in (4, 6):
        assert [want[f"net.ipv{v}.neigh.default.gc_thresh{i}"] for i in (1, 2, 3)] == [t1, 2 * t1, 4 * t1]
    assert want["net.ipv4.neigh.default.gc_thresh1"] >= 2 * links


# (value before, record a stopped up left as (saved, set) or None, value inside the block, value after: no record)
@pytest.mark.parametrize(
    ("before", "left", "inside", "after"),
    [
        (212992, None, rcvbuf.RCVBUF, 212992),  # raised for the block, written back
        (8 << 20, None, 8 << 20, 8 << 20),  # already larger: never lowered, no record
        (rcvbuf.RCVBUF, (212992, rcvbuf.RCVBUF), rcvbuf.RCVBUF, 212992),  # a crashed up's value: the true one is saved
        (1 << 20, (212992, rcvbuf.RCVBUF), rcvbuf.RCVBUF, 1 << 20),  # someone set another since: theirs is kept
    ],
)
def test_socket_buffer_default_around_lldpd_start(
    tmp_path: Path, before: int, left: tuple[int, int] | None, inside: int, after: int
) -> None:
    proc, root = tmp_path / "rmem_default", tmp_path / "run"
    proc.write_text(f"{before}\n")
    root.mkdir()
    if left:
        (root / rcvbuf.RECORD).write_text(json.dumps({"saved": left[0], "set": left[1]}))
    with rcvbuf.raised(root=root, proc=proc):
        assert int(proc.read_text()) == inside
        if inside != before:  # what down needs should the up stop here
            assert json.loads((root / rcvbuf.RECORD).read_text())["set"] == inside
    assert int(proc.read_text()) == after
    assert not (root / rcvbuf.RECORD).exists()


def test_down_writes_back_what_a_stopped_up_left_raised(tmp_path: Path) -> None:
    proc, root = tmp_path / "rmem_default", tmp_path / "run"
    root.mkdir()
    assert rcvbuf.restore(root=root, proc=proc) == {}  # no record: nothing read or written
    proc.write_text(f"{rcvbuf.RCVBUF}\n")
    (root / rcvbuf.RECORD).write_text(json.dumps({"saved": 212992, "set": rcvbuf.RCVBUF}))
    assert rcvbuf.restore(root=root, proc=proc) == {"net.core.rmem_default": "212992"}
    assert int(proc.read_text()) == 212992 and not (root / rcvbuf.RECORD).exists()


MACHINE = {"run": "0", "use_zero_pages": "0", "pages_to_scan": "100", "sleep_millisecs": "20"}
FAST, STEADY = {**ksm.FAST, "run": "1"}, {**ksm.STEADY, "run": "1"}


def _ksm_dir(root: Path, values: dict[str, str]) -> Path:
    folder = root / "ksm"
    folder.mkdir(exist_ok=True)
    for key, value in values.items():
        (folder / key).write_text(f"{value}\n")
    return folder


def _settings(folder: Path) -> dict[str, str]:
    return {k: (folder / k).read_text().strip() for k in ksm.SETTINGS}


# (settings someone writes while the lab is up or None, another lab still up, settings after down, restored)
@pytest.mark.parametrize(
    ("meanwhile", "others", "after", "restored"),
    [
        (None, False, MACHINE, {"ksm.run": "0", "ksm.use_zero_pages": "0", "ksm.pages_to_scan": "100"}),
        (None, True, STEADY, {}),  # another lab still merges: kept until the last one goes
        ({**MACHINE, "run": "1"}, False, {**MACHINE, "run": "1"}, {}),  # someone else's settings since: theirs
    ],
)
def test_ksm_merges_while_a_big_lab_is_up(
    tmp_path: Path, meanwhile: dict[str, str] | None, others: bool, after: dict[str, str], restored: dict[str, str]
) -> None:
    root, folder = tmp_path / "run", _ksm_dir(tmp_path, MACHINE)
    with ksm.merging(root=root, ksm=folder) as on:
        assert on and _settings(folder) == FAST  # the daemons start and exchange their first updates
        assert json.loads((root / ksm.RECORD).read_text())["saved"] == MACHINE  # for a down after a crash
    assert _settings(folder) == STEADY  # while the lab is up
    if meanwhile:
        _ksm_dir(tmp_path, meanwhile)
    assert ksm.restore_if_last(others, root=root, ksm=folder) == restored
    assert _settings(folder) == after
    assert (root / ksm.RECORD).exists() == others


def test_ksm_second_lab_keeps_the_first_record_and_no_ksm_changes_nothing(tmp_path: Path) -> None:
    root, folder = tmp_path / "run", _ksm_dir(tmp_path, MACHINE)
    with ksm.merging(root=root, ksm=folder):
        pass
    with ksm.merging(root=root, ksm=folder):  # a second big lab: the machine's settings are still the saved ones
        pass
    assert json.loads((root / ksm.RECORD).read_text())["saved"] == MACHINE
    assert ksm.restore_if_last(False, root=root, ksm=folder) and _settings(folder) == MACHINE
    assert ksm.restore_if_last(False, root=root, ksm=folder) == {}  # no record: nothing written
    with ksm.merging(root=root, ksm=tmp_path / "absent") as on:  # a kernel without CONFIG_KSM
        assert on is False
    assert not (root / ksm.RECORD).exists()


def test_lldp_json0_recording() -> None:
    got = parse_neighbors((FIXTURES / "lldpcli-json0-show-neighbors.out").read_text())
    assert len(got) == 8
    assert got[0] == Neighbor(interface="rail0", system="leaf-p0-su01-r0", port="Ethernet0")
    assert {n.system for n in got} == {f"leaf-p0-su01-r{r}" for r in range(8)}
    assert parse_neighbors('{"lldp": [{}]}') == []
    with pytest.raises(ValueError, match="not lldpcli json0 output"):
        parse_neighbors("Interface: rail0")


def test_a_switch_in_update_delay_is_not_settled() -> None:
    recorded = json.loads((FIXTURES.parent / "frr" / "show-bgp-summary-json-update-delay.out").read_text())
    assert parse_bgp_summary(recorded).families["ipv4Unicast"].update_delay_in_progress
    # after the delay FRR drops updateDelayInProgress and reports the resume times (bgp_vty.c bgp_show_summary)
    ended = {k: v for k, v in recorded["ipv4Unicast"].items() if k != "updateDelayInProgress"}
    ended["updateDelayBestpathResumed"] = "2026/12/03 17:36:52.035"
    assert not parse_bgp_summary({"ipv4Unicast": ended}).families["ipv4Unicast"].update_delay_in_progress
    up = SwitchBgp(expected=["10.0.0.1"], established=["10.0.0.1"])
    assert up.settled
    up.read_only = True
    assert up.ok and not up.settled


def test_quiet_sessions() -> None:
    assert is_quiet(BgpPeer("10.1.0.0", prefixes_received=0, uptime_s=0.8))
    assert not is_quiet(BgpPeer("10.1.0.0", prefixes_received=3, uptime_s=0.8))
    assert not is_quiet(BgpPeer("10.1.0.0", prefixes_received=0, uptime_s=60.0))  # a minute with nothing: its policy


def test_state_record_roundtrip(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    with pytest.raises(LabNotUp, match="lab 'demo' is not up"):
        read_state(folder)
    state = new_state("demo", "demo", Path("/r"))
    write_state(folder, state)
    assert read_state(folder) == state
    assert resolve_name(None, tmp_path) == "demo"
    (folder / "lab.json").write_text('{"format": "other/1"}')
    with pytest.raises(LabError, match="not a hwaac-lab/1 lab state"):
        read_state(folder)
    (tmp_path / "two").mkdir()
    write_state(tmp_path / "two", new_state("two", "x", Path("/r")))
    with pytest.raises(LabError, match="several labs are up"):
        resolve_name(None, tmp_path)


@pytest.fixture(scope="module")
def demo_render(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lab-parts") / "demo"
    assert hwaac_main(["plan", str(ROOT / "inventory" / "demo"), "-o", str(out)]) == 0
    return out


@pytest.mark.parametrize(("per_su", "hosts", "cables"), [(-1, 64, 1024), (None, 64, 1024), (2, 4, 512 + 32)])
def test_read_fabric(demo_render: Path, per_su: int | None, hosts: int, cables: int) -> None:
    fab = read_fabric(demo_render, per_su)
    assert (len(fab.switches), len(fab.hosts), len(fab.cables)) == (24, hosts, cables)
    leaf = fab.switches["leaf-p0-su01-r0"]
    assert leaf.ports["Ethernet0"].mtu == 9100 and leaf.ports["Ethernet0"].addresses == ("172.16.0.0/31",)
    assert leaf.loopbacks == {"Loopback0": ("10.0.0.1/32",)}
    if per_su == 2:
        assert sorted(fab.hosts) == ["gpu-su01-h01", "gpu-su01-h02", "gpu-su02-h01", "gpu-su02-h02"]


def test_read_fabric_refusals(demo_render: Path, tmp_path: Path) -> None:
    with pytest.raises(LabError, match=r"plan\.json: no such file; render the fabric first"):
        read_fabric(tmp_path)
    (tmp_path / "plan.json").write_text(json.dumps({"format": "x"}))
    with pytest.raises(LabError, match=r"not an hwaac plan: expected format 'hwaac-plan/1', got 'x'"):
        read_fabric(tmp_path)
    (tmp_path / "plan.json").write_text("[1]")
    with pytest.raises(LabError, match=r"not an hwaac plan: expected format 'hwaac-plan/1', got 'list'"):
        read_fabric(tmp_path)
    (tmp_path / "plan.json").write_text("{")
    with pytest.raises(LabError, match=r"plan\.json: not JSON"):
        read_fabric(tmp_path)
    for text, ok in (("all", None), ("3", 3), (None, -1)):
        assert parse_nodes_per_su(text) == ok
    for bad in ("0", "-1", "two"):
        with pytest.raises(LabError, match=r"--nodes-per-su .* is not valid: a positive integer or 'all'"):
            parse_nodes_per_su(bad)


@pytest.mark.parametrize(("floor", "timers"), [([10, 30], "timers 10 30"), (None, "timers 3 10")])
def test_reload_keeps_a_big_labs_timers_floor(tmp_path: Path, floor: list[int] | None, timers: str) -> None:
    """What ``hwaac lab deploy`` writes for a switch (frr_reload.apply) keeps the timers ``up`` gave it."""
    from hwaac.lab.frr_reload import apply
    from hwaac.lab.layout import Layout

    state = new_state("t", "t", tmp_path)
    state["bgp_timers_floor"] = floor
    write_state(tmp_path, state)
    db = {
        "DEVICE_METADATA": {"localhost": {"hostname": "leaf1"}},
        "BGP_GLOBALS": {"default": {"local_asn": "65001"}},
        "BGP_NEIGHBOR": {"default|10.0.0.1": {"asn": "65002", "keepalive": "3", "holdtime": "10"}},
    }
    layout = Layout(tmp_path)
    said = apply(layout, "leaf1", "hwl-t-none", db)  # no bgpd runs in that path space: the file only
    assert "not running" in said
    assert f"neighbor 10.0.0.1 {timers}" in {s for _, s in statements(layout.conf("leaf1", "bgpd").read_text())}
