"""Real checks of the rendered host networking in Linux network namespaces, no mocks: two hosts configured from
the rendered netplan YAML (translated to ``ip`` commands here), wired rail by rail to a namespace that plays the
leaves (and the spines between them). For every rail, traffic sourced from the rail's address must leave on that
rail towards its own leaf, and must reach the other host's address on the same rail and come back; without the
source rules it must not. netplan generate and the sysctl file at boot: test_host_network.py.

These tests need root and iproute2 (``scripts/install-system-deps.sh``); they FAIL, not skip, without them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from host_net_tools import APPLY_SYSCTL, DEMO, NETPLAN, SYSCTL, host_links, node, run, sysctl_lines, tool, yaml_load

from hwaac.plan import build_plan
from hwaac.plan.model import Plan, ip_str
from hwaac.render.host import render_host_files
from hwaac.validate import load_intent

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def demo() -> Plan:
    return build_plan(load_intent(DEMO))


# --- network namespaces --------------------------------------------------------------------------------


def netplan_to_ip_batch(netplan_text: str) -> list[str]:
    """Translate every rail of a rendered netplan file into ``ip -batch`` lines (links, addresses, routes in
    their tables, source rules). Reads the YAML; nothing about rails is hard-coded."""
    eths: dict[str, dict[str, Any]] = yaml_load(netplan_text)["network"]["ethernets"]
    links, addrs, routes, rules = [], [], [], []
    for iface, cfg in eths.items():
        links.append(f"link set dev {iface} mtu {cfg['mtu']} up")
        addrs += [f"address add {a} dev {iface}" for a in cfg.get("addresses", [])]
        for r in cfg.get("routes", []):
            words = ["route", "add", r["to"]]
            if "via" in r:
                words += ["via", r["via"]]
            words += ["dev", iface]
            if "from" in r:
                words += ["src", r["from"]]
            if "scope" in r:
                words += ["scope", r["scope"]]
            if "metric" in r:
                words += ["metric", str(r["metric"])]
            if "table" in r:
                words += ["table", str(r["table"])]
            routes.append(" ".join(words))
        for p in cfg.get("routing-policy", []):
            words = ["rule", "add", "from", p["from"]]
            if "to" in p:
                words += ["to", p["to"]]
            words += ["table", str(p["table"]), "priority", str(p["priority"])]
            rules.append(" ".join(words))
    # Direct routes first, so the gateways of the aggregate routes are reachable when those are added.
    routes.sort(key=lambda line: " via " in line)
    return links + addrs + routes + rules


UDP_ECHO_SERVER = textwrap.dedent("""
    import json, select, socket, sys
    socks = []
    for addr in json.loads(sys.argv[1]):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((addr, 4791 + 1000))
        socks.append(s)
    print("ready", flush=True)
    left = len(socks)
    while left:
        ready, _, _ = select.select(socks, [], [], 10)
        if not ready:
            sys.exit("timeout")
        for s in ready:
            data, peer = s.recvfrom(2048)
            s.sendto(data + b"|" + s.getsockname()[0].encode(), peer)
            left -= 1
""")

UDP_ECHO_CLIENT = textwrap.dedent("""
    import json, socket, sys
    result = {}
    for src, dst in json.loads(sys.argv[1]):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((src, 0))
        s.settimeout(3)
        s.sendto(src.encode(), (dst, 4791 + 1000))
        try:
            data, peer = s.recvfrom(2048)
            result[src] = [peer[0], data.decode()]
        except OSError as e:
            result[src] = ["error", str(e)]
    print(json.dumps(result))
""")


class Fabric:
    """Two host namespaces wired rail by rail to one namespace playing the leaves (forwarding between them)."""

    def __init__(self, plan: Plan, names: list[str], prefix: str):
        self.plan, self.names, self.prefix = plan, names, prefix
        self.ip = tool("ip")
        self.leaf = f"{prefix}-lf"
        self.hosts = {name: f"{prefix}-h{i}" for i, name in enumerate(names, 1)}
        self.created: list[str] = []

    def ns(self, name: str) -> str:
        return self.hosts[name]

    def batch(self, ns: str, lines: list[str]) -> None:
        run(self.ip, "-n", ns, "-batch", "-", stdin="\n".join(lines) + "\n")

    def exec_py(self, ns: str, code: str, arg: Any) -> str:
        return run(self.ip, "netns", "exec", ns, sys.executable, "-c", code, json.dumps(arg)).stdout

    def build(self) -> None:
        for ns in [self.leaf, *self.hosts.values()]:
            run(self.ip, "netns", "del", ns, check=False)  # left over by a killed run with a reused pid
            run(self.ip, "netns", "add", ns)
            self.created.append(ns)
        leaf_lines = ["link set dev lo up"]
        for i, name in enumerate(self.names, 1):
            host_ns = self.hosts[name]
            self.batch(host_ns, ["link set dev lo up"])
            for lk in host_links(self.plan, name):
                peer = f"h{i}{lk.a_port}"[:15]  # leaf-side end, e.g. h1rail0
                assert len(lk.a_port) <= 15
                run(
                    self.ip,
                    "-n",
                    self.leaf,
                    "link",
                    "add",
                    peer,
                    "type",
                    "veth",
                    "peer",
                    "name",
                    lk.a_port,
                    "netns",
                    host_ns,
                )
                leaf_lines += [
                    f"link set dev {peer} mtu {self.plan.intent.qos.host_mtu} up",
                    f"address add {ip_str(lk.b_ip)}/{lk.prefixlen} dev {peer}",
                ]
        self.batch(self.leaf, leaf_lines)
        self.exec_py(self.leaf, APPLY_SYSCTL, [("net.ipv4.ip_forward", "1")])

    def configure_host(self, name: str) -> dict[str, str]:
        files = render_host_files(self.plan, node(self.plan, name))
        self.batch(self.ns(name), netplan_to_ip_batch(files[NETPLAN]))
        applied = int(self.exec_py(self.ns(name), APPLY_SYSCTL, sysctl_lines(files[SYSCTL])))
        assert applied >= 3  # net.ipv4.conf.all.{arp_ignore,arp_announce,rp_filter}
        return files

    def route_get(self, name: str, dst: str, src: str | None = None) -> dict[str, str] | None:
        """Fields of ``ip route get`` (dev, via, table ...), or None when there is no route."""
        args = [self.ip, "-n", self.ns(name), "route", "get", dst] + (["from", src] if src else [])
        proc = run(*args, check=False)
        if proc.returncode != 0:
            return None
        words = proc.stdout.split()
        fields = {"dst": words[0]}
        for key in ("dev", "via", "table", "src", "from"):
            if key in words:
                fields[key] = words[words.index(key) + 1]
        return fields

    def destroy(self) -> None:
        for ns in reversed(self.created):
            subprocess.run([self.ip, "netns", "del", ns], capture_output=True, timeout=30)
        self.created.clear()


@pytest.fixture
def fabric(demo: Plan) -> Iterator[Fabric]:
    if os.geteuid() != 0:
        pytest.fail("network-namespace tests need root (CAP_NET_ADMIN, CAP_SYS_ADMIN)")
    f = Fabric(demo, ["gpu-su01-h01", "gpu-su02-h05"], f"hw{os.getpid()}")
    try:
        f.build()
        yield f
    finally:
        f.destroy()


def test_rails_route_through_their_own_leaf_in_namespaces(fabric: Fabric, demo: Plan) -> None:
    a_name, b_name = fabric.names
    for name in fabric.names:
        fabric.configure_host(name)
    a_links, b_links = host_links(demo, a_name), host_links(demo, b_name)
    assert len(a_links) == len(b_links) == 8

    # A host without per-rail routing would send the whole aggregate out of its first NIC: put exactly that
    # in the main tables, so only the source rules can steer traffic onto the other rails.
    agg = "{}/{}".format(*(lambda a: (ip_str(a[0]), a[1]))(demo.host_aggregate(0)))
    for name, links in ((a_name, a_links), (b_name, b_links)):
        first = links[0]
        fabric.batch(fabric.ns(name), [f"route add {agg} via {ip_str(first.b_ip)} dev {first.a_port}"])

    tb = demo.intent.host.routing.table_base
    for ordinal, (la, lb) in enumerate(zip(a_links, b_links, strict=True)):
        own, peer, leaf = ip_str(la.a_ip), ip_str(lb.a_ip), ip_str(la.b_ip)
        got = fabric.route_get(a_name, peer, own)
        assert got is not None, f"no route from {own} to {peer}"
        assert got["dev"] == la.a_port, got
        assert got.get("via") == leaf, got
        assert got.get("table") == str(tb + ordinal), got
        # and the way back from the peer uses the peer's own rail and leaf
        back = fabric.route_get(b_name, own, peer)
        assert back is not None and back["dev"] == lb.a_port and back.get("via") == ip_str(lb.b_ip), back
        # a source on another rail picks that other rail, not this one
        other = a_links[(ordinal + 1) % len(a_links)]
        cross = fabric.route_get(a_name, peer, ip_str(other.a_ip))
        assert cross is not None and cross["dev"] == other.a_port != la.a_port, cross
        # no source address: main table, i.e. the first NIC, whatever the rail
        unsourced = fabric.route_get(a_name, peer)
        assert unsourced is not None and unsourced["dev"] == a_links[0].a_port and "table" not in unsourced

    # Real traffic: UDP from every rail address of A to the same rail of B and back.
    pairs = [(ip_str(la.a_ip), ip_str(lb.a_ip)) for la, lb in zip(a_links, b_links, strict=True)]
    before = leaf_counters(fabric)
    server = subprocess.Popen(
        [
            fabric.ip,
            "netns",
            "exec",
            fabric.ns(b_name),
            sys.executable,
            "-c",
            UDP_ECHO_SERVER,
            json.dumps([dst for _, dst in pairs]),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        replies = json.loads(fabric.exec_py(fabric.ns(a_name), UDP_ECHO_CLIENT, pairs))
    finally:
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
    for src, dst in pairs:
        assert replies[src] == [dst, f"{src}|{dst}"], f"rail {src} -> {dst}: {replies[src]}"
    after = leaf_counters(fabric)
    for i, links in enumerate((a_links, b_links), 1):
        for lk in links:
            leaf_end = f"h{i}{lk.a_port}"[:15]
            assert after[leaf_end]["rx"] > before[leaf_end]["rx"], f"nothing left {lk.a_device} on {lk.a_port}"
            assert after[leaf_end]["tx"] > before[leaf_end]["tx"], f"nothing came back on {lk.a_port}"


def leaf_counters(fabric: Fabric) -> dict[str, dict[str, int]]:
    out = run(fabric.ip, "-n", fabric.leaf, "-j", "-s", "link", "show").stdout
    return {
        d["ifname"]: {"rx": d["stats64"]["rx"]["packets"], "tx": d["stats64"]["tx"]["packets"]} for d in json.loads(out)
    }


def test_without_source_rules_rails_are_not_used(fabric: Fabric, demo: Plan) -> None:
    a_name, b_name = fabric.names
    files = fabric.configure_host(a_name)
    fabric.configure_host(b_name)
    a_links, b_links = host_links(demo, a_name), host_links(demo, b_name)
    agg = "{}/{}".format(*(lambda a: (ip_str(a[0]), a[1]))(demo.host_aggregate(0)))
    first = a_links[0]
    fabric.batch(fabric.ns(a_name), [f"route add {agg} via {ip_str(first.b_ip)} dev {first.a_port}"])

    # With the rules every rail is its own path ...
    for la, lb in zip(a_links, b_links, strict=True):
        got = fabric.route_get(a_name, ip_str(lb.a_ip), ip_str(la.a_ip))
        assert got is not None and got["dev"] == la.a_port
    # ... delete exactly the rendered rules, and every rail collapses onto the main table's first NIC.
    rules = [
        line.replace("rule add", "rule del", 1)
        for line in netplan_to_ip_batch(files[NETPLAN])
        if line.startswith("rule add")
    ]
    assert len(rules) == len(a_links)
    fabric.batch(fabric.ns(a_name), rules)
    for la, lb in zip(a_links, b_links, strict=True):
        got = fabric.route_get(a_name, ip_str(lb.a_ip), ip_str(la.a_ip))
        assert got is not None
        assert "table" not in got, f"rail table still used without its rule: {got}"
        if la is not first:
            assert got["dev"] == first.a_port != la.a_port, got
