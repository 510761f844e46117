"""Real checks of the rendered host networking, no mocks.

a. netplan's own generator (``netplan generate --root-dir``) accepts the rendered netplan file and turns it into
   systemd-networkd units with the rail tables and source rules.
b. Linux network namespaces: two hosts configured from the rendered netplan YAML (translated to ``ip`` commands
   here), wired rail by rail to a namespace that plays the leaves (and the spines between them). For every
   rail, traffic sourced from the rail's address must leave on that rail towards its own leaf, and must reach
   the other host's address on the same rail and come back; without the source rules it must not.
c. The rendered sysctl file applies in a namespace before any rail interface exists (as systemd-sysctl does at
   boot), and its ARP/rp_filter values then hold on rails created afterwards.

These tests need root and the tools that ``scripts/install-system-deps.sh`` installs (netplan.io, iproute2).
They FAIL, not skip, when something is missing, so CI cannot pass without running them.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from hwaac.model.intent import Intent
from hwaac.plan import build_plan
from hwaac.plan.model import Link, Node, Plan, ip_str
from hwaac.render.host import render_host_files
from hwaac.validate import load_intent

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "inventory" / "demo"
NETPLAN = "netplan/60-hwaac-rails.yaml"
SYSCTL = "sysctl.d/90-hwaac-rdma.conf"
INSTALL_HINT = "install it with scripts/install-system-deps.sh"


def tool(name: str) -> str:
    """Path of a system tool; fails the test (never skips) when it is missing."""
    found = shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/sbin/{name}") if os.access(p, os.X_OK)), None
    )
    if found is None:
        pytest.fail(f"`{name}` not found: {INSTALL_HINT}")
    return found


def run(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        pytest.fail(f"{' '.join(args)} -> rc {proc.returncode}\nstdin:\n{stdin or ''}\nstderr:\n{proc.stderr}")
    return proc


def _yaml(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(io.StringIO(text))


def host_links(plan: Plan, name: str) -> list[Link]:
    links = [lk for lk in plan.links_by_device[name] if lk.kind == "host" and lk.a_device == name]
    return sorted(links, key=lambda lk: (lk.rail or 0) * plan.design.planes + lk.plane)


def node(plan: Plan, name: str) -> Node:
    return next(n for n in plan.nodes if n.name == name)


@pytest.fixture(scope="module")
def demo() -> Plan:
    return build_plan(load_intent(DEMO))


def variant(**changes: Any) -> Plan:
    data = YAML(typ="safe", pure=True).load((DEMO / "fabric.yml").read_text())
    for dotted, value in changes.items():
        *path, last = dotted.split("__")
        d = data
        for k in path:
            d = d[k]
        d[last] = value
    return build_plan(Intent.model_validate(data))


# --- a. netplan generate ----------------------------------------------------------------------------------


def network_units(text: str) -> list[tuple[str, dict[str, str]]]:
    """Sections of a systemd .network file as (name, {key: value}), in file order (sections repeat)."""
    out: list[tuple[str, dict[str, str]]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            out.append((line.strip("[]"), {}))
        else:
            k, _, v = line.partition("=")
            out[-1][1][k.strip()] = v.strip()
    return out


CASES = {
    "demo-su01-h01": lambda d: (d, "gpu-su01-h01"),
    "demo-su02-h05": lambda d: (d, "gpu-su02-h05"),
    "demo-last": lambda d: (d, d.nodes[-1].name),
    "even-parity": lambda d: (variant(addressing__host_links__host_address="even"), "gpu-su01-h02"),
    "rail-subnet": lambda d: (variant(addressing__host_links__mode="rail_subnet"), "gpu-su02-h07"),
    "twin-plane": lambda d: (variant(fabric__planes=2, host__interface_name="rail{rail}p{plane}"), "gpu-su01-h01"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_netplan_generate_accepts_rendered_file(case: str, demo: Plan, tmp_path: Path) -> None:
    netplan = tool("netplan")
    plan, name = CASES[case](demo)
    files = render_host_files(plan, node(plan, name))
    conf = tmp_path / "etc" / "netplan" / "60-hwaac-rails.yaml"
    conf.parent.mkdir(parents=True)
    conf.write_text(files[NETPLAN])
    conf.chmod(0o600)
    proc = run(netplan, "generate", "--root-dir", str(tmp_path), check=False)
    assert proc.returncode == 0, f"netplan generate failed:\n{proc.stdout}\n{proc.stderr}"
    assert "Error" not in proc.stderr and "error" not in proc.stderr.lower(), proc.stderr

    unit_dir = tmp_path / "run" / "systemd" / "network"
    links = host_links(plan, name)
    units = sorted(p.name for p in unit_dir.glob("*.network"))
    assert units == sorted(f"10-netplan-{lk.a_port}.network" for lk in links)
    mtu = str(plan.intent.qos.host_mtu)
    for ordinal, lk in enumerate(links):
        table = str(plan.intent.host.routing.table_base + ordinal)
        priority = str(
            plan.intent.host.routing.rule_priority_base + ordinal * plan.intent.host.routing.rule_priority_step
        )
        a, b = ip_str(lk.a_ip), ip_str(lk.b_ip)
        sections = network_units((unit_dir / f"10-netplan-{lk.a_port}.network").read_text())
        by_name: dict[str, list[dict[str, str]]] = {}
        for sec, kv in sections:
            by_name.setdefault(sec, []).append(kv)
        assert by_name["Match"] == [{"Name": lk.a_port}]
        assert by_name["Link"][0]["MTUBytes"] == mtu
        assert by_name["Network"][0]["Address"] == f"{a}/{lk.prefixlen}"
        assert by_name["Network"][0]["LinkLocalAddressing"] == "no"
        assert "DHCP" not in by_name["Network"][0] or by_name["Network"][0]["DHCP"] == "no"
        routes = by_name["Route"]
        assert all(r["Table"] == table for r in routes), routes
        agg_net, agg_len = plan.host_aggregate(lk.plane)  # each plane routes only its own host-link block
        agg = f"{ip_str(agg_net)}/{agg_len}"
        assert {"Destination": agg, "Gateway": b, "PreferredSource": a, "Table": table} in routes
        assert {
            "Destination": f"{ip_str(lk.network)}/{lk.prefixlen}",
            "PreferredSource": a,
            "Scope": "link",
            "Table": table,
        } in routes
        assert by_name["RoutingPolicyRule"] == [{"From": a, "Table": table, "Priority": priority}]


# --- b. network namespaces --------------------------------------------------------------------------------


def netplan_to_ip_batch(netplan_text: str) -> list[str]:
    """Translate every rail of a rendered netplan file into ``ip -batch`` lines (links, addresses, routes in
    their tables, source rules). Reads the YAML; nothing about rails is hard-coded."""
    eths: dict[str, dict[str, Any]] = _yaml(netplan_text)["network"]["ethernets"]
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


def sysctl_lines(text: str) -> list[tuple[str, str]]:
    out = []
    for line in text.splitlines():
        if line.strip() and not line.startswith(("#", ";")):
            k, _, v = line.partition("=")
            out.append((k.strip(), v.strip()))
    return out


APPLY_SYSCTL = textwrap.dedent("""
    import json, os, sys
    applied = 0
    for key, value in json.loads(sys.argv[1]):
        path = "/proc/sys/" + (key if "/" in key else key.replace(".", "/"))
        if key.startswith("net.ipv4.neigh.default."):
            continue  # neighbour-table limits exist in the initial namespace only
        with open(path, "w") as f:
            f.write(value)
        applied += 1
    print(applied)
""")

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


# --- c. sysctl at boot ------------------------------------------------------------------------------------

READ_CONF = textwrap.dedent("""
    import json, sys
    out = {}
    for scope, leaf in json.loads(sys.argv[1]):
        with open(f"/proc/sys/net/ipv4/conf/{scope}/{leaf}") as f:
            out[f"{scope}/{leaf}"] = int(f.read())
    print(json.dumps(out))
""")


def test_sysctl_applies_before_rails_exist_and_holds_on_them(demo: Plan) -> None:
    if os.geteuid() != 0:
        pytest.fail("network-namespace tests need root (CAP_NET_ADMIN, CAP_SYS_ADMIN)")
    ip = tool("ip")
    name = "gpu-su01-h01"
    text = render_host_files(demo, node(demo, name))[SYSCTL]
    lines = sysctl_lines(text)
    expected = {"arp_ignore": 1, "arp_announce": 2, "rp_filter": 2}
    assert {k: int(v) for k, v in lines if k.startswith("net.ipv4.conf.")} == {
        f"net.ipv4.conf.all.{leaf}": v for leaf, v in expected.items()
    }
    ns = f"hw{os.getpid()}-boot"
    run(ip, "netns", "del", ns, check=False)
    run(ip, "netns", "add", ns)
    try:
        # Boot order: no rail interface exists yet; every key of the file must apply (a missing
        # net.ipv4.conf.<rail>.* key would raise here, as it makes systemd-sysctl fail at boot).
        exec_ns = [ip, "netns", "exec", ns, sys.executable, "-c"]
        assert int(run(*exec_ns, APPLY_SYSCTL, json.dumps(lines)).stdout) == len(expected)
        # The NICs probe later; give them the laxest per-interface values a distribution might leave behind.
        rails = [lk.a_port for lk in host_links(demo, name)]
        batch = [f"link add {r} type veth peer name p{r}" for r in rails] + [f"link set dev {r} up" for r in rails]
        run(ip, "-n", ns, "-batch", "-", stdin="\n".join(batch) + "\n")
        zeros = [(f"net/ipv4/conf/{r}/{leaf}", "0") for r in rails for leaf in expected]
        run(*exec_ns, APPLY_SYSCTL, json.dumps(zeros))
        got = json.loads(
            run(*exec_ns, READ_CONF, json.dumps([(sc, leaf) for sc in ["all", *rails] for leaf in expected])).stdout
        )
        # conf/all keeps the intended values after the rails appear with their own 0s; for these three keys the
        # kernel uses max(conf/all, conf/<iface>) (Documentation/networking/ip-sysctl.rst), which is why the file
        # needs no per-rail keys. (This checks what the file leaves in the kernel, not the kernel's max rule.)
        for leaf, value in expected.items():
            assert got[f"all/{leaf}"] == value, (leaf, got)
        for r in rails:
            for leaf in expected:
                assert got[f"{r}/{leaf}"] == 0
    finally:
        subprocess.run([ip, "netns", "del", ns], capture_output=True, timeout=30)
