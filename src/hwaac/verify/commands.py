"""The tool invocations the checks read, in one place (collectors run them, facts.py parses their output).

Switches: FRR through ``vtysh`` (on SONiC the host's vtysh runs the one in the ``bgp`` container), lldpd through
``lldpcli -f json0`` (json0: every value in a list, the same shape whatever the count; lldpcli(8)), the kernel's
links through ``ip -j link show`` (iproute2 JSON). Hosts: links and LLDP the same way, and per rail probe
``ip -j route get DST from SRC`` (the egress the kernel's policy routing picks for that source) and iputils
``ping -I SRC`` (plain, and with DF set: ``-M do -s MTU-28``, 20 bytes IPv4 + 8 bytes ICMP header).
"""

from __future__ import annotations

from functools import lru_cache

from hwaac.verify.raw import Command

BGP_SUMMARY = Command(("vtysh", "-c", "show bgp summary json"))
ROUTES = Command(("vtysh", "-c", "show ip route json"))
LLDP = Command(("lldpcli", "-f", "json0", "show", "neighbors"))
LINKS = Command(("ip", "-j", "link", "show"))

PING_COUNT = 2
PING_INTERVAL = "0.2"
PING_WAIT_S = 1
IPV4_ICMP_OVERHEAD = 28


@lru_cache(maxsize=1 << 16)  # the checks ask for each probe several times; build it once
def route_get(dst: str, src: str) -> Command:
    return Command(("ip", "-j", "route", "get", dst, "from", src))


@lru_cache(maxsize=1 << 16)
def ping(dst: str, src: str) -> Command:
    return Command(("ping", "-n", "-c", str(PING_COUNT), "-i", PING_INTERVAL, "-W", str(PING_WAIT_S), "-I", src, dst))


@lru_cache(maxsize=1 << 16)
def ping_df(dst: str, src: str, mtu: int) -> Command:
    """A ping that fits an ``mtu`` path exactly, Don't Fragment set."""
    return Command(
        (
            "ping",
            "-n",
            "-c",
            str(PING_COUNT),
            "-i",
            PING_INTERVAL,
            "-W",
            str(PING_WAIT_S),
            "-M",
            "do",
            "-s",
            str(mtu - IPV4_ICMP_OVERHEAD),
            "-I",
            src,
            dst,
        )
    )
