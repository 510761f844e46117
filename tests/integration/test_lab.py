"""The twin, for real: the demo fabric in network namespaces with FRR and lldpd (hwaac.lab), no mocks.

One lab of the demo for the module (torn down in a finalizer, also when a test fails): it comes up; every
switch's sessions are Established and every leaf reaches every remote host prefix over as many equal paths as
it has uplinks towards that prefix's leaf; LLDP at a leaf is the cabling plan; a failed cable takes down exactly
its two sessions while hosts on either side still reach each other over the rail; a stopped switch takes down its
sessions; restores bring them back; a second lab of another fabric coexists; an up killed half way is removed by
down; down leaves nothing. Needs root, iproute2, frr and lldpd (scripts/install-system-deps.sh): it FAILS, not
skips, without them.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hwaac.apply.bgp import parse_bgp_summary
from hwaac.cli import main as hwaac_main
from hwaac.lab import Lab, ksm, rcvbuf
from hwaac.lab import up as lab_up
from hwaac.lab.down import down
from hwaac.lab.lldp import parse_neighbors
from hwaac.lab.neigh import KEYS, read_current, wanted
from hwaac.lab.netns import existing
from hwaac.lab.status import converge, status
from hwaac.lab.up import up

# the twin modules run one after another on one worker (make test: xdist --dist loadgroup): each module's lab has
# a fixed name, and test_lab checks that nothing but its own labs changed the machine
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("lab")]

ROOT = Path(__file__).resolve().parents[2]
LAB, LAB2, LAB3 = "itest", "itest2", "itest3"
LEAF, SPINE = "leaf-p0-su01-r0", "spine-p0-02"


def wait_for(check: Callable[[], Any], timeout: float, what: str, step: float = 0.3) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout:.0f} s (last: {got!r})", pytrace=False)
        time.sleep(step)


def bgp(lab: Lab, switch: str) -> dict[str, str]:
    proc = lab.run(switch, ["vtysh", "-c", "show bgp summary json"], timeout=30, check=True)
    return parse_bgp_summary(proc.stdout).peers


def lab_pids(prefixes: tuple[str, ...]) -> list[str]:
    """Processes whose command line names one of the labs' namespaces or state folders."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(p in cmd for p in prefixes):
            found.append(f"{entry}: {cmd[:120]}")
    return found


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("lab")
    demo = base / "demo"
    assert hwaac_main(["plan", str(ROOT / "inventory" / "demo"), "-o", str(demo)]) == 0
    # a second, tiny fabric: 2 SUs of 2 nodes, 2 rails, one spine
    text = (ROOT / "inventory" / "demo" / "fabric.yml").read_text()
    for old, new in (
        ("name: demo", "name: tiny"),
        ("rails: 8", "rails: 2"),
        ("nodes_per_su: 32", "nodes_per_su: 2"),
        ("su_capacity: 4", "su_capacity: 2"),
        ("downlinks: 32", "downlinks: 2"),
        ("rails: [0, 1, 2, 3, 4, 5, 6, 7]", "rails: [0, 1]"),
    ):
        assert old in text, old
        text = text.replace(old, new)
    (base / "tiny-intent").mkdir()
    (base / "tiny-intent" / "fabric.yml").write_text(text)
    assert hwaac_main(["plan", str(base / "tiny-intent"), "-o", str(base / "tiny")]) == 0
    return {"demo": demo, "tiny": base / "tiny"}


@pytest.fixture(scope="module")
def before() -> dict[str, Any]:
    """The machine before any lab of this module: neighbour limits, the socket buffer default, the KSM settings
    and the labs' namespaces (other tests running beside this module make namespaces of their own)."""
    return {
        "sysctl": read_current(),
        "rmem_default": rcvbuf.PROC.read_text(),
        "netns": set(existing("hwl-")),
        "ksm": ksm_settings(),
    }


def ksm_settings() -> dict[str, str]:
    return {k: (ksm.KSM / k).read_text().strip() for k in ksm.SETTINGS} if ksm.KSM.is_dir() else {}


@pytest.fixture(scope="module")
def lab(renders: dict[str, Path], before: dict[str, Any]) -> Iterator[Lab]:
    for name in (LAB, LAB2, LAB3):
        down(name)  # a previous run that was killed
    try:
        built = up(renders["demo"], name=LAB)
        yield built
    finally:
        for name in (LAB3, LAB2, LAB):
            down(name)


def plan(renders: dict[str, Path]) -> dict[str, Any]:
    return json.loads((renders["demo"] / "plan.json").read_text())


def test_up(lab: Lab, renders: dict[str, Path], before: dict[str, Any]) -> None:
    p = plan(renders)
    assert set(lab.switches) == set(p["switches"]) and set(lab.hosts) == set(p["nodes"])
    assert set(existing(f"hwl-{LAB}-")) == {d.netns for d in lab.devices.values()}
    st = status(lab)
    assert all(all(d["daemons"].values()) for d in st["devices"].values()), st["problems"]
    assert set(st["devices"][LEAF]["daemons"]) == {"zebra", "bgpd", "lldpd"}
    # planned names, addresses and MTUs: a switch port from config_db (PORT mtu), a rail from netplan
    link = p["links"]["H0000000"]  # gpu-su01-h01 rail0 - leaf-p0-su01-r0 Ethernet0
    port = json.loads(lab.run(LEAF, ["ip", "-j", "addr", "show", "dev", link["b"][1]], check=True).stdout)[0]
    assert (port["mtu"], port["addr_info"][0]["local"]) == (9100, link["b"][2])
    rail = json.loads(lab.run(link["a"][0], ["ip", "-j", "addr", "show", "dev", "rail0"], check=True).stdout)[0]
    assert (rail["mtu"], rail["addr_info"][0]["local"]) == (9000, link["a"][2])
    # the rail's routing table and source rule, as the rendered netplan has them
    rules = json.loads(lab.run(link["a"][0], ["ip", "-j", "rule"], check=True).stdout)
    assert {"priority": 1010, "src": link["a"][2], "table": "101"}.items() <= next(
        r for r in rules if r.get("src") == link["a"][2]
    ).items()
    table = lab.run(link["a"][0], ["ip", "route", "show", "table", "101"], check=True).stdout
    assert f"172.16.0.0/16 via {link['b'][2]} dev rail0" in table
    # host sysctls from sysctl.d: the namespace's own ones applied, the table-wide ones not
    arp = lab.run(link["a"][0], ["sysctl", "-n", "net.ipv4.conf.all.arp_ignore"], check=True).stdout.strip()
    assert arp == "1"
    assert "net.ipv4.neigh.default.gc_thresh1" in lab.state["host_sysctl"]["skipped"]
    assert lab.run(LEAF, ["sysctl", "-n", "net.ipv4.ip_forward"], check=True).stdout.strip() == "1"
    # lldpd's netlink socket was made with room for a burst of its ports' notifications (hwaac.lab.rcvbuf), and
    # the machine's default is back (ss: a socket a line, its skmem with rb = receive buffer)
    sockets = lab.run(SPINE, ["ss", "-f", "netlink", "-a", "-m", "-p", "-O"], check=True).stdout
    rb = re.findall(r"rtnl:lldpd/\d+.*skmem:\(\S*?rb(\d+),", sockets)
    assert rb and min(int(b) for b in rb) >= rcvbuf.RCVBUF, sockets
    assert rcvbuf.PROC.read_text() == before["rmem_default"]
    # the loopback, the wrappers
    lo = p["switches"][LEAF]["loopback"].split("/")[0]
    assert lo in lab.run(LEAF, ["ip", "-br", "addr"], check=True).stdout
    assert f"hostname {LEAF}" in lab.run(LEAF, ["vtysh", "-c", "show running-config"], check=True).stdout
    # a second up of the same render changes nothing
    assert up(renders["demo"], name=LAB).state["created"] == lab.state["created"]


def test_converged_with_planned_ecmp(lab: Lab, renders: dict[str, Path]) -> None:
    secs = converge(lab, timeout=90)
    assert secs < 90
    st = status(lab)
    assert st["up"], st["problems"]
    for name in lab.switches:
        b = st["devices"][name]["bgp"]
        assert b["expected"] > 0 and b["established"] == b["expected"], (name, b)
    p = plan(renders)
    uplinks: dict[str, dict[str, int]] = {}  # leaf -> spine -> number of cables
    host_prefixes: dict[str, list[str]] = {}  # leaf -> its host-link prefixes
    for link in p["links"].values():
        (adev, _, _), (bdev, _, baddr) = link["a"], link["b"]
        if link["kind"] == "leaf_spine":
            uplinks.setdefault(adev, {}).setdefault(bdev, 0)
            uplinks[adev][bdev] += 1
        elif link["kind"] == "host":
            net = ipaddress.ip_interface(f"{baddr}/{link['prefixlen']}").network
            host_prefixes.setdefault(bdev, []).append(str(net))
    leaves = [n for n, s in p["switches"].items() if s["role"] == "leaf"]
    for leaf in leaves:
        routes = json.loads(lab.run(leaf, ["vtysh", "-c", "show ip route json"], timeout=60, check=True).stdout)
        for remote in leaves:
            if remote == leaf:
                continue
            # planned width: the leaf's cables to the spines that also reach the remote leaf
            width = sum(n for spine, n in uplinks[leaf].items() if spine in uplinks[remote])
            for prefix in host_prefixes[remote]:
                entry = routes.get(prefix)
                assert entry, f"{leaf}: no route to {prefix} (host link of {remote})"
                best = next(r for r in entry if r.get("selected"))
                paths = [h for h in best["nexthops"] if h.get("active") and h.get("fib")]
                assert (best["protocol"], len(paths)) == ("bgp", width), (leaf, prefix)
    assert width == 32  # demo: 8 spines x 4 cables each


def test_lldp_matches_plan(lab: Lab, renders: dict[str, Path]) -> None:
    planned = {}
    for link in plan(renders)["links"].values():
        for here, there in ((link["a"], link["b"]), (link["b"], link["a"])):
            if here[0] == LEAF:
                planned[here[1]] = (there[0], there[1])

    def heard() -> dict[str, tuple[str, str]] | None:
        proc = lab.run(LEAF, ["lldpcli", "-f", "json0", "show", "neighbors"], timeout=30, check=True)
        got = {n.interface: (n.system, n.port) for n in parse_neighbors(proc.stdout)}
        return got if len(got) >= len(planned) else None

    # lldpd runs at nice 10 (routing first): on two cores busy with other tests it may take a minute to hear all 64
    assert wait_for(heard, 120, f"LLDP neighbours of {LEAF}") == planned
    assert len(planned) == 64


def _sessions_of(lab: Lab, cable: dict[str, Any]) -> tuple[str, str]:
    return cable["addrs"][1], cable["addrs"][0]  # (leaf's neighbour = spine end, spine's neighbour = leaf end)


def test_link_down_and_restore(lab: Lab, renders: dict[str, Path]) -> None:
    from hwaac.lab import faults

    cid = next(c for c, link in lab.state["links"].items() if link["a"][0] == LEAF and link["kind"] == "leaf_spine")
    cable = lab.state["links"][cid]
    spine = cable["b"][0]
    to_spine, to_leaf = _sessions_of(lab, cable)
    faults.fail_link(lab, cid)
    wait_for(
        lambda: bgp(lab, LEAF).get(to_spine) != "Established" and bgp(lab, spine).get(to_leaf) != "Established",
        10,
        f"{cid}'s two sessions down",
    )
    others = {a: s for a, s in bgp(lab, LEAF).items() if a != to_spine}
    assert len(others) == 31 and set(others.values()) == {"Established"}
    # a host of this leaf still reaches a host of the other SU over the same rail, from its rail address
    p = plan(renders)
    src = p["links"]["H0000000"]["a"]  # gpu-su01-h01 rail0
    dst = next(
        lk["a"]
        for lk in p["links"].values()
        if lk["kind"] == "host" and lk["a"][0].startswith("gpu-su02") and lk["a"][1] == "rail0"
    )
    ping = lab.run(src[0], ["ping", "-c", "3", "-i", "0.2", "-W", "2", "-I", src[2], dst[2]], timeout=30)
    assert ping.returncode == 0 and " 0% packet loss" in ping.stdout, ping.stdout + ping.stderr
    assert faults.restore(lab, cid) == [f"link:{cid}"]
    wait_for(
        lambda: bgp(lab, LEAF).get(to_spine) == "Established" and bgp(lab, spine).get(to_leaf) == "Established",
        20,
        f"{cid}'s sessions back",
    )
    assert Lab.load(LAB).state["faults"] == []


def test_switch_down_and_restore(lab: Lab) -> None:
    from hwaac.lab import faults

    spine_ends = {link["addrs"][1]: link["a"][0] for link in lab.state["links"].values() if link["b"][0] == SPINE}
    assert len(spine_ends) == 64
    faults.fail_switch(lab, SPINE)
    lab.reload()
    assert status(lab)["devices"][SPINE]["daemons"] == {"zebra": False, "bgpd": False, "lldpd": True}

    def all_down() -> bool:
        peers = {leaf: bgp(lab, leaf) for leaf in set(spine_ends.values())}
        return not any(peers[leaf].get(addr) == "Established" for addr, leaf in spine_ends.items())

    wait_for(all_down, 15, f"the sessions of {SPINE} down at its 16 leaves")
    assert status(lab)["devices"][LEAF]["bgp"]["down"] == {}  # its sessions are no longer expected
    faults.restore(lab, SPINE)
    lab.reload()
    assert converge(lab, timeout=60) < 60
    assert set(bgp(lab, SPINE).values()) == {"Established"}


def test_cli_status_and_exec(lab: Lab) -> None:
    cli = [sys.executable, "-m", "hwaac.lab.cli"]
    st = subprocess.run([*cli, "status", LAB, "--json"], capture_output=True, text=True, timeout=120)
    assert st.returncode == 0, st.stdout + st.stderr
    assert json.loads(st.stdout)["up"] is True
    ex = subprocess.run(
        [*cli, "exec", LAB, LEAF, "--", "vtysh", "-c", "show bgp summary json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ex.returncode == 0 and parse_bgp_summary(ex.stdout).local_as == 4200100000
    missing = subprocess.run([*cli, "status", "nosuchlab"], capture_output=True, text=True, timeout=60)
    assert missing.returncode == 3 and "not up" in missing.stdout


def test_second_lab_of_another_fabric(
    lab: Lab, renders: dict[str, Path], before: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # taken for a big lab: KSM merges its daemons' pages while it is up
    monkeypatch.setattr(lab_up, "MERGE_ABOVE_SESSIONS", 0)
    other = up(renders["tiny"], name=LAB2, nodes_per_su=1)
    try:
        assert len(other.switches) == 5 and len(other.hosts) == 2
        assert converge(other, timeout=60) < 60
        # same device names in both labs, different namespaces and daemons
        assert other.netns(LEAF) != lab.netns(LEAF)
        assert bgp(other, LEAF) != bgp(lab, LEAF)
        if before["ksm"]:
            assert other.state["ksm"] and ksm_settings() == {**ksm.STEADY, "run": "1"}
            stat = Path(f"/proc/{other.state['daemons'][LEAF]['bgpd']['pid']}/ksm_stat")
            if stat.exists():  # Linux >= 6.1: the daemons may be merged, and ksmd merges their zero pages
                assert "ksm_merge_any: yes" in stat.read_text()
                # ksmd's steady pace over both labs' daemons: two passes of ~7 s each on an idle machine
                wait_for(
                    lambda: int(re.search(r"ksm_zero_pages (\d+)", stat.read_text())[1]) > 0,
                    180,
                    "bgpd's zero pages merged",
                    step=2,
                )
    finally:
        down(LAB2)
    assert existing(f"hwl-{LAB2}-") == []
    assert status(lab)["up"]
    # the first lab still needs its neighbour limits: the second one's down kept them; no lab merges any more, so
    # KSM is as found
    need = wanted(len(lab.state["links"]))
    assert all(v >= need[k] for k, v in read_current().items())
    assert ksm_settings() == before["ksm"]


def test_down_after_a_killed_up(renders: dict[str, Path]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "hwaac.lab.cli", "up", str(renders["tiny"]), "--name", LAB3],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    state = Path(os.environ.get("HWAAC_LAB_STATE_DIR") or "/run/hwaac/lab") / LAB3 / "lab.json"
    try:
        wait_for(
            lambda: state.exists() and json.loads(state.read_text()).get("links"), 60, "the up half way", step=0.02
        )
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert down(LAB3)["lab"] == LAB3
    assert existing(f"hwl-{LAB3}-") == [] and not state.parent.exists()
    assert lab_pids((f"hwl-{LAB3}-", str(state.parent))) == []


def test_down_leaves_nothing(lab: Lab, before: dict[str, Any]) -> None:
    folder = lab.folder
    result = down(LAB)
    assert result["namespaces"] == len(lab.devices) and result["state_removed"]
    assert existing(f"hwl-{LAB}-") == []
    assert lab_pids((f"hwl-{LAB}-", str(folder))) == []
    assert not folder.exists()
    assert not any(Path("/var/run/frr").glob(f"hwl-{LAB}-*"))
    assert set(existing("hwl-")) - before["netns"] == set()
    assert rcvbuf.PROC.read_text() == before["rmem_default"]
    assert ksm_settings() == before["ksm"]  # the last lab down: KSM as found
    now = read_current()
    if existing("hwl-"):  # another lab (not this module's) is up: its limits stay
        assert all(now[k] >= before["sysctl"][k] for k in KEYS)
    else:
        assert now == before["sysctl"]
    assert down(LAB)["namespaces"] == 0  # again: nothing to do
