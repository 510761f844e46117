"""The prober on real sockets in Linux network namespaces, no mocks.

Two hosts, two leaves and two spines (namespaces ``hwpr-<pid>-*``, veths, Linux forwarding with
``fib_multipath_hash_policy=1``, static ECMP routes over both spines and over two parallel cables leaf 1 - spine 1,
``icmp_errors_use_inbound_ifaddr=1``, ICMP rate limits at their defaults). ``run_probes`` probes both ways from
9 source ports each, chosen with ``ip route get`` so that three of h1's flows, and three of the echoes of h2's,
take each leaf-1 uplink, in the hosts' namespaces from this one process:

a. every flow's learned path is the kernel's own ECMP choice (``ip route get ... ipproto udp sport X dport Y``
   in the leaf and spine namespaces), the paths differ across source ports, and nothing is lost;
b. with ``tc netem loss 20%`` on the leaf-1 side of one uplink, the tomography names that cable and no other on
   spine 1's side, and that cable with spine 2's other cable on spine 2's side (every flow crosses both: the
   probes cannot tell them apart); flows whose replies only cross it lose replies but no forward probe. A kernel
   built without netem (``CONFIG_NET_SCH_NETEM``) gets the same loss from nftables in the leaf's forward hook
   (``numgen random mod 100 < 20 drop`` on that interface, nft(8)).

Needs root, iproute2 (``ip``, ``tc``) and, without netem, nftables (``nft``); FAILS, not skips, without them.
The namespaces are deleted in a finalizer, also when a test fails.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from hwaac.plan.model import Link
from hwaac.probe.agent import run_probes
from hwaac.probe.model import Flow, FlowResult
from hwaac.probe.paths import PathIndex
from hwaac.probe.pinglist import DPORT, SPORT_BASE
from hwaac.telemetry.slo import default_slos
from hwaac.telemetry.tomography import RULE_LOSS, tomography

pytestmark = pytest.mark.integration

SWITCH_SYSCTLS = (
    "net.ipv4.ip_forward=1",
    "net.ipv4.fib_multipath_hash_policy=1",
    "net.ipv4.icmp_errors_use_inbound_ifaddr=1",
)
# cable: kind, (lower device, port, address), (upper device, port, address)
CABLES = [
    ("H1", "host", ("h1", "r0", "172.31.1.1"), ("l1", "d0", "172.31.1.0")),
    ("H2", "host", ("h2", "r0", "172.31.2.1"), ("l2", "d0", "172.31.2.0")),
    ("A1", "leaf_spine", ("l1", "u1", "10.97.0.1"), ("s1", "d1", "10.97.0.0")),
    ("A2", "leaf_spine", ("l1", "u2", "10.97.0.3"), ("s1", "d2", "10.97.0.2")),  # parallel to A1
    ("A3", "leaf_spine", ("l1", "u3", "10.97.0.5"), ("s2", "d1", "10.97.0.4")),
    ("B1", "leaf_spine", ("l2", "u1", "10.97.0.7"), ("s1", "d3", "10.97.0.6")),
    ("B2", "leaf_spine", ("l2", "u2", "10.97.0.9"), ("s2", "d2", "10.97.0.8")),
]
ROUTES = {  # device -> (prefix, next hops)
    "h1": [("172.31.0.0/16", ["172.31.1.0"])],
    "h2": [("172.31.0.0/16", ["172.31.2.0"])],
    "l1": [("172.31.2.0/31", ["10.97.0.0", "10.97.0.2", "10.97.0.4"])],
    "l2": [("172.31.1.0/31", ["10.97.0.6", "10.97.0.8"])],
    "s1": [("172.31.1.0/31", ["10.97.0.1", "10.97.0.3"]), ("172.31.2.0/31", ["10.97.0.7"])],
    "s2": [("172.31.1.0/31", ["10.97.0.5"]), ("172.31.2.0/31", ["10.97.0.9"])],
}
PER_UPLINK = 3  # h1 -> h2 flows per leaf-1 uplink, source ports chosen from the kernel's own ECMP choices


def tool(name: str) -> str:
    found = shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/sbin/{name}") if os.access(p, os.X_OK)), None
    )
    if found is None:
        pytest.fail(f"`{name}` not found: install iproute2 (scripts/install-system-deps.sh)")
    return found


def sh(*args: str) -> str:
    proc = subprocess.run(args, capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(args)} -> rc {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


@dataclass
class Net:
    tag: str
    ip: str
    tc: str
    created: list[str]

    def ns(self, device: str) -> str:
        return f"hwpr-{self.tag}-{device}"

    def build(self) -> None:
        for dev in ROUTES:
            sh(self.ip, "netns", "add", self.ns(dev))
            self.created.append(self.ns(dev))
            sh(self.ip, "-n", self.ns(dev), "link", "set", "lo", "up")
            if dev[0] in "ls":
                sh(self.ip, "netns", "exec", self.ns(dev), "sysctl", "-qw", *SWITCH_SYSCTLS)
        for _cable, _kind, (a, ap, aip), (b, bp, bip) in CABLES:
            sh(self.ip, "link", "add", ap, "netns", self.ns(a), "type", "veth", "peer", "name", bp, "netns", self.ns(b))
            for dev, port, addr in ((a, ap, aip), (b, bp, bip)):
                sh(self.ip, "-n", self.ns(dev), "addr", "add", f"{addr}/31", "dev", port)
                sh(self.ip, "-n", self.ns(dev), "link", "set", port, "up")
        for dev, routes in ROUTES.items():
            for prefix, hops in routes:
                via = ["via", hops[0]] if len(hops) == 1 else [w for h in hops for w in ("nexthop", "via", h)]
                sh(self.ip, "-n", self.ns(dev), "route", "add", prefix, *via)

    def chosen(self, device: str, iif: str, src: str, dst: str, sport: int, dport: int) -> str:
        """The next hop the kernel of ``device`` picks for a UDP packet arriving on ``iif``."""
        out = sh(
            self.ip,
            "-n",
            self.ns(device),
            "route",
            "get",
            dst,
            "from",
            src,
            "iif",
            iif,
            "ipproto",
            "udp",
            "sport",
            str(sport),
            "dport",
            str(dport),
        )
        m = re.search(r"\bvia (\S+)", out)
        assert m, out
        return m.group(1)

    @contextlib.contextmanager
    def loss(self, device: str, port: str, percent: int) -> Iterator[str]:
        """``percent`` % of the packets leaving ``port`` of ``device`` dropped (netem, else nftables)."""
        ns = self.ns(device)
        proc = subprocess.run(
            [self.tc, "-n", ns, "qdisc", "add", "dev", port, "root", "netem", "loss", f"{percent}%"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if proc.returncode == 0:
            try:
                yield "netem"
            finally:
                sh(self.tc, "-n", ns, "qdisc", "del", "dev", port, "root")
            return
        if "unknown" not in proc.stderr:
            pytest.fail(f"tc netem: {proc.stderr.strip()}")
        nft = tool("nft")
        rules = (
            f"table ip hwpr {{\n chain probe_loss {{\n  type filter hook forward priority 0; policy accept;\n"
            f'  oifname "{port}" numgen random mod 100 < {percent} drop\n }}\n}}\n'
        )
        proc = subprocess.run(
            [self.ip, "netns", "exec", ns, nft, "-f", "-"], input=rules, capture_output=True, text=True, timeout=30
        )
        if proc.returncode != 0:
            pytest.fail(f"nft -f - in {ns}: {proc.stderr.strip()}")
        try:
            yield "nftables"
        finally:
            sh(self.ip, "netns", "exec", ns, nft, "delete table ip hwpr")

    def destroy(self) -> None:
        for ns in reversed(self.created):
            subprocess.run([self.ip, "netns", "del", ns], capture_output=True, timeout=30)
        self.created.clear()


def links() -> list[Link]:
    out = []
    for cable, kind, (a, ap, aip), (b, bp, bip) in CABLES:
        ai, bi = (int.from_bytes(bytes(int(x) for x in s.split(".")), "big") for s in (aip, bip))
        out.append(Link(kind, cable, a, ap, b, bp, ai & ~1, 31, ai, bi, 0, 0 if kind == "host" else None))  # type: ignore[arg-type]
    return out


H1, H2 = "172.31.1.1", "172.31.2.1"


@pytest.fixture(scope="module")
def net() -> Iterator[Net]:
    if os.geteuid() != 0:
        pytest.fail("network-namespace tests need root (CAP_NET_ADMIN, CAP_SYS_ADMIN)")
    n = Net(str(os.getpid()), tool("ip"), tool("tc"), [])
    try:
        n.build()
        yield n
    finally:
        n.destroy()


def ports_per_uplink(net: Net, src: str, dst: str, reply: bool) -> list[int]:
    """Source ports of ``src`` -> ``dst`` flows such that PER_UPLINK of them take each leaf-1 uplink: with ``reply``,
    the echo of the responder (``src``, port DPORT -> the flow's port) does, else the flow itself."""
    by_uplink: dict[str, list[int]] = {c[3][2]: [] for c in CABLES if c[2][0] == "l1"}
    for sport in range(SPORT_BASE, SPORT_BASE + 400):
        ports = by_uplink[
            net.chosen("l1", "d0", src, dst, DPORT, sport) if reply else net.chosen("l1", "d0", src, dst, sport, DPORT)
        ]
        if len(ports) < PER_UPLINK:
            ports.append(sport)
        if all(len(p) == PER_UPLINK for p in by_uplink.values()):
            return sorted(s for p in by_uplink.values() for s in p)
    pytest.fail(f"400 source ports did not put {PER_UPLINK} flows on each leaf-1 uplink: {by_uplink}")


@pytest.fixture(scope="module")
def flows(net: Net) -> list[Flow]:
    """h1's flows, PER_UPLINK on each leaf-1 uplink, and h2's, whose echoes from h1 take each uplink PER_UPLINK
    times (the hash key is random per boot, so fixed ports would load the uplinks differently on each machine)."""
    return [Flow("h1", "r0", H1, "h2", H2, 0, s, DPORT) for s in ports_per_uplink(net, H1, H2, reply=False)] + [
        Flow("h2", "r0", H2, "h1", H1, 0, s, DPORT) for s in ports_per_uplink(net, H1, H2, reply=True)
    ]


@pytest.fixture(scope="module")
def clean(net: Net, flows: list[Flow]) -> tuple[list[FlowResult], dict, float]:
    cache: dict = {}
    t = time.monotonic()
    rs = run_probes(flows, netns_of=net.ns, count=50, interval=0.005, timeout=1.0, path_cache=cache)
    return rs, cache, time.monotonic() - t


def expected_path(net: Net, f: Flow) -> tuple[str, ...]:
    """The hops the kernels choose for the flow, each answering from its inbound address."""
    if f.src_host == "h1":
        spine_in = net.chosen("l1", "d0", f.src_ip, f.dst_ip, f.sport, f.dport)
        spine = "s1" if spine_in in ("10.97.0.0", "10.97.0.2") else "s2"
        iif = {"10.97.0.0": "d1", "10.97.0.2": "d2", "10.97.0.4": "d1"}[spine_in]
        return "172.31.1.0", spine_in, net.chosen(spine, iif, f.src_ip, f.dst_ip, f.sport, f.dport), f.dst_ip
    spine_in = net.chosen("l2", "d0", f.src_ip, f.dst_ip, f.sport, f.dport)
    spine = "s1" if spine_in == "10.97.0.6" else "s2"
    leaf_in = net.chosen(spine, "d3" if spine == "s1" else "d2", f.src_ip, f.dst_ip, f.sport, f.dport)
    return "172.31.2.0", spine_in, leaf_in, f.dst_ip


def test_paths_are_the_kernels_ecmp_choices_and_nothing_is_lost(net: Net, flows: list[Flow], clean: tuple) -> None:
    rs, cache, seconds = clean
    for r in rs:
        assert not r.errors, (r.flow.key, r.errors)
        assert (r.sent, r.received_forward, r.received_back) == (50, 50, 50)
        assert r.path_complete and r.path == expected_path(net, r.flow), r.flow.key
        assert r.rtt_us is not None and 0 < r.rtt_us.min <= r.rtt_us.p50 <= r.rtt_us.p99
    assert len({r.path for r in rs if r.flow.src_host == "h1"}) >= 2  # the source port moves the flow
    assert set(cache) == {f.key for f in flows}
    assert not tomography(rs, PathIndex(links()), default_slos()).suspects
    print(f"clean run with path learning: {len(rs)} flows in {seconds:.1f} s")


# the lossy leaf-1 uplink, and what the tomography must name: the cable alone on spine 1's side (the parallel cable
# and leaf 2's uplink carry other flows); with spine 2's leaf-2 cable on spine 2's side, which every flow crossing
# the lossy one also crosses (spine 2 has one cable to each leaf), so the probes cannot tell them apart
LOSS_CASES = [("A1", ("A1",)), ("A3", ("A3", "B2"))]


@pytest.mark.parametrize(("lossy_cable", "named"), LOSS_CASES, ids=[c[0] for c in LOSS_CASES])
def test_netem_loss_on_one_uplink_is_named(
    net: Net, flows: list[Flow], clean: tuple, lossy_cable: str, named: tuple[str, ...]
) -> None:
    _, cache, _ = clean
    cable = {c[0]: c for c in CABLES}
    bad = cable[lossy_cable]
    with net.loss("l1", bad[2][1], 20) as how:
        t = time.monotonic()
        lossy = run_probes(flows, netns_of=net.ns, count=100, interval=0.005, timeout=1.0, path_cache=cache)
        seconds = time.monotonic() - t
    found = tomography(lossy, PathIndex(links()), default_slos())
    assert [(s.rule, s.components[0].name) for s in found.suspects] == [(RULE_LOSS, bad[0])]
    (s,) = found.suspects
    assert [c.name for c in s.components] == [
        x for n in named for x in (n, f"{cable[n][2][0]} {cable[n][2][1]}", f"{cable[n][3][0]} {cable[n][3][1]}")
    ]
    assert ("cannot tell them apart" in s.reasoning) == (len(named) > 1)
    assert {"h1", "h2"} <= set(s.nodes)
    forward_lost = {r.flow.sport for r in lossy if r.flow.src_host == "h1" and r.forward_lost}
    assert forward_lost <= {r.flow.sport for r in lossy if r.flow.src_host == "h1" and r.path[1] == bad[3][2]}
    assert len(forward_lost) >= 2
    replies_only = [
        r
        for r in lossy
        if r.flow.src_host == "h2"
        and net.chosen("l1", "d0", r.flow.dst_ip, r.flow.src_ip, r.flow.dport, r.flow.sport) == bad[3][2]
    ]
    assert len(replies_only) == PER_UPLINK
    for r in replies_only:  # the echo of h2's probes goes back up the lossy cable: round trip lost, forward not
        assert r.received_back < r.sent, r
        # the responder's count comes back that way too: lost on each of its tries (0.2 ** 3), the forward loss is
        # unknown, and said so
        assert r.forward_lost == 0 or (
            r.forward_lost is None
            and r.errors == ["the responder's final count did not come back: forward loss unknown"]
        ), r
    assert any(r.forward_lost == 0 for r in replies_only)
    print(
        f"lossy run on {lossy_cable} ({how}) from the path cache: {len(lossy)} flows x 100 probes in "
        f"{seconds:.1f} s; {len(replies_only)} flows lost replies only"
    )
