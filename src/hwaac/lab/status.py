"""``hwaac lab status`` and ``hwaac lab converge``: what runs, and the BGP sessions each switch should have.

A switch's expected sessions are the enabled ``BGP_NEIGHBOR`` entries of its config_db (recorded at ``up``)
whose cable is in the lab and is not failed, towards a switch that is not failed. BGP state is FRR's
``show bgp summary json`` (read with :func:`hwaac.telemetry.parsers.frr_bgp.parse_bgp_summary`); route counts
are ``show ip route summary json``.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from hwaac.lab import netns
from hwaac.lab.api import Lab
from hwaac.lab.errors import LabError
from hwaac.lab.faults import DOWN_MODES
from hwaac.lab.frr import vtysh_argv
from hwaac.lab.procs import alive, run
from hwaac.lab.vty import query
from hwaac.telemetry.parsers.frr_bgp import BgpPeer, parse_bgp_summary
from hwaac.telemetry.parsers.frr_json import documents

POLL_WORKERS = 8
QUIET_S = 5
BGP_SUMMARY, ROUTE_SUMMARY = "show bgp summary json", "show ip route summary json"


@dataclass(slots=True)
class SwitchBgp:
    """One switch's BGP as read now."""

    expected: list[str] = field(default_factory=list)
    established: list[str] = field(default_factory=list)
    down: dict[str, str] = field(default_factory=dict)  # expected peer -> its state ("missing" if FRR lacks it)
    routes: int | None = None
    table_version: int | None = None
    error: str = ""
    quiet: list[str] = field(default_factory=list)  # Established without a route yet, for under QUIET_S
    read_only: bool = False  # bgpd still in its update-delay: no best path computed, nothing installed or sent

    @property
    def settled(self) -> bool:
        """All expected sessions up, each has sent routes (or has been up for QUIET_S without any), and bgpd out
        of its read-only mode."""
        return self.ok and not self.quiet and not self.read_only

    @property
    def ok(self) -> bool:
        return not self.error and not self.down


def expected_sessions(lab: Lab) -> dict[str, list[str]]:
    """Per switch, the neighbour addresses whose sessions should be Established now (see module docstring)."""
    failed_switches = {f["device"] for f in lab.state.get("faults", []) if f.get("kind") == "switch"}
    down_ends = {
        tuple(end) for f in lab.state.get("faults", []) if f.get("mode") in DOWN_MODES for end in f.get("ends", [])
    }
    peer_of: dict[tuple[str, str], tuple[str, bool]] = {}  # (switch, neighbour address) -> (peer device, cable ok)
    for link in lab.state.get("links", {}).values():
        (adev, aport), (bdev, bport) = link["a"], link["b"]
        aaddr, baddr = (link.get("addrs") or ["", ""])[:2]
        ok = (adev, aport) not in down_ends and (bdev, bport) not in down_ends
        peer_of[(adev, baddr)] = (bdev, ok)
        peer_of[(bdev, aaddr)] = (adev, ok)
    out: dict[str, list[str]] = {}
    for name in lab.switches:
        if name in failed_switches:
            out[name] = []
            continue
        want = []
        for addr, enabled in lab.state.get("bgp_neighbors", {}).get(name, {}).items():
            peer, ok = peer_of.get((name, addr), ("", False))
            if enabled and ok and peer in lab.switches and peer not in failed_switches:
                want.append(addr)
        out[name] = sorted(want)
    return out


def read_bgp(lab: Lab, expected: dict[str, list[str]], *, via: str = "vtysh") -> dict[str, SwitchBgp]:
    """Each switch's sessions and route count, read in parallel with ``vtysh`` (``via="vtysh"``) or straight
    from the daemons' vty sockets (``via="vty"``: the same commands, no process per switch, for polling)."""

    def one(name: str) -> tuple[str, SwitchBgp]:
        res = SwitchBgp(expected=expected.get(name, []))
        try:
            docs = _read(lab.netns(name), via)
            summary = parse_bgp_summary(docs[0] if docs else {})
            if not summary.parsed:
                raise ValueError(summary.unknown[0])
        except (LabError, ValueError) as exc:
            res.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            res.down = {a: "unreadable" for a in res.expected}
            return name, res
        peers = summary.peers
        res.established = [a for a in summary.established() if a in res.expected]
        res.down = {
            a: peers[a].label if a in peers else "missing"
            for a in res.expected
            if a not in peers or not peers[a].established
        }
        res.quiet = [a for a in res.established if is_quiet(peers[a])]
        ipv4 = summary.families.get("ipv4Unicast")
        res.table_version = ipv4.table_version if ipv4 else None
        # bgpd in its update-delay: no best path computed, nothing installed or sent
        res.read_only = ipv4 is not None and ipv4.update_delay_in_progress
        if len(docs) > 1 and isinstance(docs[1], dict):
            res.routes = docs[1].get("routesTotal")
        return name, res

    names = [n for n in lab.switches if expected.get(n) or _daemons_alive(lab, n)]
    if via == "vty":  # a few ms each, no process: one after the other
        return dict(one(n) for n in names)
    pool = ThreadPoolExecutor(max_workers=POLL_WORKERS)
    try:
        return dict(pool.map(one, names))
    finally:
        pool.shutdown(cancel_futures=True)


def _read(netns: str, via: str) -> list[Any]:
    """``show bgp summary json`` and ``show ip route summary json`` of one switch, decoded."""
    if via == "vty":
        return [
            json.loads(query(netns, "bgpd", BGP_SUMMARY) or "{}"),
            json.loads(query(netns, "zebra", ROUTE_SUMMARY) or "{}"),
        ]
    proc = run(vtysh_argv(netns, BGP_SUMMARY, ROUTE_SUMMARY), check=False, timeout=60)
    if proc.returncode != 0:
        raise LabError((proc.stderr or proc.stdout).strip() or f"vtysh exit {proc.returncode}")
    docs, why = documents(proc.stdout) if proc.stdout.strip() else ([], "")  # one document per -c
    if why:
        raise ValueError(why)
    return docs


def is_quiet(peer: BgpPeer) -> bool:
    """A session that came up moments ago and has received nothing yet: its first UPDATE may be pending (bgpd
    coalesces a new peer's announcements, ``bgp_updgrp.c`` coalesce timer)."""
    return not peer.prefixes_received and (peer.uptime_s or 0) < QUIET_S


def _daemons_alive(lab: Lab, device: str) -> bool:
    return all(alive(r) for d, r in lab.state.get("daemons", {}).get(device, {}).items() if d in ("zebra", "bgpd"))


def status(lab: Lab) -> dict[str, Any]:
    """The lab as it runs: devices, their namespaces and daemons, BGP per switch, faults.

    ``up`` is true when the lab was fully built, every namespace exists and every daemon runs, except those a
    fault stopped, and every expected session is Established.
    """
    present = set(netns.existing(f"hwl-{lab.name}-"))
    stopped = {f["device"] for f in lab.state.get("faults", []) if f.get("kind") == "switch"}
    devices: dict[str, Any] = {}
    problems: list[str] = []
    for name, dev in lab.devices.items():
        daemons = {d: alive(r) for d, r in lab.state.get("daemons", {}).get(name, {}).items()}
        devices[name] = {
            "kind": dev.kind,
            "role": dev.role,
            "netns": dev.netns,
            "netns_present": dev.netns in present,
            "daemons": daemons,
        }
        if dev.netns not in present:
            problems.append(f"{name}: namespace {dev.netns} is gone")
        for d, ok in daemons.items():
            if not ok and not (name in stopped and d in ("zebra", "bgpd")):
                problems.append(f"{name}: {d} is not running")
    expected = expected_sessions(lab)
    bgp = read_bgp(lab, expected)
    for name, b in sorted(bgp.items()):
        devices[name]["bgp"] = {
            "expected": len(b.expected),
            "established": len(b.established),
            "down": b.down,
            "routes": b.routes,
            "error": b.error,
        }
        if b.down:
            problems.append(f"{name}: {len(b.down)} of {len(b.expected)} BGP sessions not Established")
    if lab.phase != "up":
        problems.insert(0, f"lab is {lab.phase or 'not built'} (not fully up: `hwaac lab down {lab.name}`)")
    return {
        "lab": lab.name,
        "fabric": lab.fabric,
        "render_dir": str(lab.render_dir),
        "phase": lab.phase,
        "versions": lab.state.get("versions", {}),
        "up": not problems,
        "problems": problems,
        "switches": len(lab.switches),
        "hosts": len(lab.hosts),
        "links": len(lab.state.get("links", {})),
        "faults": [
            {**f, "finished": bool(f.get("process")) and not alive(f["process"])} for f in lab.state.get("faults", [])
        ],
        "devices": devices,
    }


def converge(lab: Lab, *, timeout: float = 120.0, interval: float = 1.0, stable_polls: int = 2) -> float:
    """Wait until every expected session is Established and every switch's route count and BGP table version
    stayed the same over ``stable_polls`` consecutive polls; the seconds until the first of those polls (when
    the lab was converged, not when that was confirmed).

    Raises:
        LabError: not converged within ``timeout`` s (naming what is still down).
    """
    t0 = time.monotonic()
    expected = expected_sessions(lab)
    last: dict[str, tuple[Any, Any]] | None = None
    same, since = 0, 0.0
    while True:
        polled = time.monotonic() - t0
        bgp = read_bgp(lab, expected, via="vty")
        took = time.monotonic() - t0 - polled
        sig = {n: (b.routes, b.table_version) for n, b in bgp.items()}
        if all(b.settled for b in bgp.values()):
            if last is not None and sig == last:
                same += 1
            else:
                same, since = 1, polled
            last = sig
            if same >= stable_polls:
                return since
        else:
            same, last = 0, None
        if time.monotonic() - t0 > timeout:
            down = {n: b for n, b in bgp.items() if not b.ok}
            first = ", ".join(
                f"{n} ({len(b.down)} down{': ' + b.error if b.error else ''})" for n, b in list(down.items())[:5]
            )
            what = f"{len(down)} switch(es) with sessions not Established: {first}" if down else "routes still changing"
            raise LabError(f"lab {lab.name} not converged after {timeout:.0f} s: {what}")
        # polling costs the daemons CPU (a spine's summary JSON): at most a third of the time goes to it
        time.sleep(max(interval, 2 * took))


def routes_via(lab: Lab, device: str, nexthop: str) -> int:
    """How many IPv4 routes of ``device``'s kernel FIB (what forwards) have ``nexthop`` among their next hops:
    ``ip -o route`` takes about 20 ms where zebra's ``show ip route json`` of a leaf (4 MB with 32-way ECMP) takes
    300 ms of CPU, so this is what to poll while timing a drain."""
    out = run(["ip", "-n", lab.netns(device), "-4", "-o", "route", "show"], timeout=30, check=True).stdout
    return sum(1 for line in out.splitlines() if f"via {nexthop} " in line)
