"""The lab's readers of rendered host files: netplan YAML -> ip commands, sysctl.d -> what a namespace takes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from hwaac.lab.errors import LabError
from hwaac.lab.fabric import Host
from hwaac.lab.hosts import read_host_files
from hwaac.lab.netplan import Interface, Route, Rule, ip_commands, read_netplan
from hwaac.lab.sysctl import namespaced, read_sysctl_d, split_namespaced

RAIL0 = textwrap.dedent("""\
    network:
      version: 2
      ethernets:
        rail0:
          dhcp4: false
          link-local: []
          mtu: 9000
          addresses: [172.16.0.1/31]
          routes:
            - {to: 172.16.0.0/31, scope: link, from: 172.16.0.1, table: 101}
            - {to: 172.16.0.0/16, via: 172.16.0.0, from: 172.16.0.1, table: 101}
            - {to: default, via: 172.16.0.0, metric: 200, on-link: true}
          routing-policy:
            - {from: 172.16.0.1, table: 101, priority: 1010}
        rail1:
          addresses: [172.16.0.65/31]
    """)


def test_netplan_facts() -> None:
    ifaces = read_netplan(RAIL0)
    assert list(ifaces) == ["rail0", "rail1"]
    r0 = ifaces["rail0"]
    assert r0 == Interface(
        name="rail0",
        mtu=9000,
        addresses=("172.16.0.1/31",),
        link_local=(),
        routes=(
            Route(to="172.16.0.0/31", scope="link", source="172.16.0.1", table=101),
            Route(to="172.16.0.0/16", via="172.16.0.0", source="172.16.0.1", table=101),
            Route(to="default", via="172.16.0.0", metric=200, on_link=True),
        ),
        rules=(Rule(table=101, source="172.16.0.1", priority=1010),),
    )
    assert ifaces["rail1"].link_local is None and ifaces["rail1"].mtu is None


def test_netplan_to_ip_commands() -> None:
    assert ip_commands(read_netplan(RAIL0)["rail0"]) == [
        "link set dev rail0 mtu 9000",
        "link set dev rail0 addrgenmode none",
        "address add 172.16.0.1/31 dev rail0",
        "link set dev rail0 up",
        "route add 172.16.0.0/31 dev rail0 scope link src 172.16.0.1 table 101",
        "route add 172.16.0.0/16 via 172.16.0.0 dev rail0 src 172.16.0.1 table 101",
        "route add default via 172.16.0.0 dev rail0 metric 200 onlink",
        "rule add from 172.16.0.1 table 101 priority 1010",
    ]
    # netplan's default link-local (IPv6) keeps the kernel's address generation
    assert "link set dev rail1 addrgenmode none" not in ip_commands(read_netplan(RAIL0)["rail1"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("network: [", "not YAML"),
        ("hello: 1\n", "no 'network' mapping"),
        ("network: {version: 1}\n", "network.version 1 is not valid: 2"),
        ("network: {bonds: {bond0: {}}}\n", "network.bonds is not modelled by the lab"),
        ("network: {ethernets: {rail0: {mtu: jumbo}}}\n", "ethernets.rail0.mtu: 'jumbo' is not valid"),
        ("network: {ethernets: {rail0: {addresses: [172.16.0.1]}}}\n", "addresses: .* is not valid: a list of"),
        ("network: {ethernets: {rail0: {routes: [{via: 1.1.1.1}]}}}\n", r"routes\[0\]: a route needs 'to'"),
        ("network: {ethernets: {rail0: {routes: [{to: 1.0.0.0/8, type: blackhole}]}}}\n", "type: 'blackhole' is not"),
        ("network: {ethernets: {rail0: {routes: [{to: 1.0.0.0/8, table: main}]}}}\n", r"table: 'main' is not valid"),
        ("network: {ethernets: {rail0: {routing-policy: [{from: 1.1.1.1}]}}}\n", "needs 'table'"),
    ],
)
def test_netplan_refusals(text: str, message: str) -> None:
    with pytest.raises(LabError, match=message):
        read_netplan(text, source="x.yaml")


def test_sysctl_d_reader() -> None:
    text = textwrap.dedent("""\
        # comment
        ; also a comment
        net.ipv4.conf.all.arp_ignore = 1
        -net.ipv4.conf.all.rp_filter=2
        net/ipv4/conf/rail0.5/arp_announce = 2
        net.ipv4.neigh.default.gc_thresh1 = 8192
        kernel.pid_max = 4194304
        """)
    assert read_sysctl_d(text) == [
        ("net.ipv4.conf.all.arp_ignore", "1"),
        ("net.ipv4.conf.all.rp_filter", "2"),
        ("net.ipv4.conf.rail0/5.arp_announce", "2"),  # sysctl.d(5): with '/' separators a '.' is part of a name
        ("net.ipv4.neigh.default.gc_thresh1", "8192"),
        ("kernel.pid_max", "4194304"),
    ]
    with pytest.raises(LabError, match=r"f.conf:2: 'oops' is not 'key = value'"):
        read_sysctl_d("a = 1\noops\n", source="f.conf")


@pytest.mark.parametrize(
    ("key", "applies"),
    [
        ("net.ipv4.conf.all.arp_ignore", True),
        ("net.ipv4.conf.rail0.rp_filter", True),
        ("net.ipv6.conf.default.accept_ra", True),
        ("net.ipv4.neigh.rail0.base_reachable_time_ms", True),
        ("net.ipv4.neigh.default.gc_thresh1", False),  # the table's, shared by every namespace
        ("net.ipv6.neigh.default.gc_thresh3", False),
        ("kernel.pid_max", False),
        ("vm.overcommit_memory", False),
    ],
)
def test_namespaced(key: str, applies: bool) -> None:
    assert namespaced(key) is applies


def test_split_says_why() -> None:
    applied, skipped = split_namespaced(
        [("net.ipv4.conf.all.arp_ignore", "1"), ("net.ipv4.neigh.default.gc_thresh1", "8192"), ("vm.swappiness", "1")]
    )
    assert applied == [("net.ipv4.conf.all.arp_ignore", "1")]
    assert skipped == {
        "net.ipv4.neigh.default.gc_thresh1": "neighbour-table wide, shared by all namespaces (not set per lab host)",
        "vm.swappiness": "not per network namespace",
    }


def test_host_files_from_a_folder(tmp_path: Path) -> None:
    (tmp_path / "netplan").mkdir()
    (tmp_path / "sysctl.d").mkdir()
    (tmp_path / "netplan" / "60-rails.yaml").write_text(RAIL0)
    (tmp_path / "sysctl.d" / "90-a.conf").write_text("net.ipv4.conf.all.rp_filter = 1\n")
    (tmp_path / "sysctl.d" / "91-b.conf").write_text("net.ipv4.conf.all.rp_filter = 2\n")  # later file wins
    files = read_host_files(Host(name="n1", kind="gpu", su=1, folder=tmp_path))
    assert list(files.interfaces) == ["rail0", "rail1"]
    assert files.sysctl_applied == [("net.ipv4.conf.all.rp_filter", "2")]
    (tmp_path / "netplan" / "70-again.yaml").write_text(RAIL0)
    with pytest.raises(LabError, match="interface rail0 is also in an earlier netplan file"):
        read_host_files(Host(name="n1", kind="gpu", su=1, folder=tmp_path))


def test_host_without_netplan(tmp_path: Path) -> None:
    with pytest.raises(LabError, match=r"netplan: no \*\.yaml file"):
        read_host_files(Host(name="n1", kind="gpu", su=1, folder=tmp_path))
