"""Raw tool outputs of one network health sweep of a planned fabric, for ``network_health.py`` (untimed there).

Every output is built from a recorded layout in ``tests/fixtures/``, its port block (or peer, route, line)
repeated once per planned port end with the plan's names and addresses; traffic counters grow between sweeps,
error counters only where a fault is injected. ``filtered`` builds only what the host module's filter keeps.
Which recording each tool's output follows: benchmarks/README.md, "network_sweep.py".
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from hwaac.health.parsers.ib_counters import LEGACY_COUNTER_BITS
from hwaac.plan.model import Link, Plan, ip_str
from hwaac.plan.ports import port_table
from hwaac.telemetry.tools import COUNTERS_DB_FIELDS, DEFAULT_TOOLS, ETHTOOL_NAMES, SYSFS_NAMES

FIX = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
T0, SECONDS = 1_700_000_000.0, 30.0
_T1_DUMP = FIX / "telemetry" / "counters-db" / "sonic-utilities-b6af9f4-t1-dump-subset.json"
_STATUS = FIX / "telemetry" / "sonic-interfaces-status" / "status_400g_chassis_qsfpdd.txt"
_BGP = FIX / "telemetry" / "frr" / "bgp-summary-7.2-sonic-t1.json"
_ROUTES = FIX / "telemetry" / "frr" / "ip-route-7.2-sonic-t1.json"
_ETHTOOL = FIX / "health" / "ethtool" / "mlx5-connectx4-kernel-4.15" / "ethtool-S.txt"
_IB = FIX / "health" / "ib-counters" / "procfs-fixture" / "counters.txt"
_RDMA = FIX / "health" / "rdma-statistic" / "mlnx-iproute2-4link.txt"


def _grows(name: str) -> bool:
    """Whether a counter counts traffic (grows on a healthy port), not errors, drops or pause."""
    low = name.lower()
    traffic = any(w in low for w in ("pkts", "octets", "packets", "bytes", "_data", "requests"))
    return traffic and not any(w in low for w in ("discard", "drop", "err", "pfc", "pause", "oversize", "ecn"))


@dataclass
class Faults:
    """The injected faults: cables by id, and where each shows."""

    crc: Link  # a host cable: CRC errors at the NIC (ethtool) and the leaf port (IF_IN_ERRORS)
    flap: Link  # a leaf-spine cable: its BGP session dropped and came back between the sweeps
    down: Link  # a leaf-spine cable: oper down at both ends in both sweeps
    ends: dict[tuple[str, str], str] = field(default_factory=dict)  # (device, port) -> "crc" | "flap" | "down"

    @classmethod
    def pick(cls, plan: Plan) -> Faults:
        hosts = [lk for lk in plan.links if lk.kind == "host"]
        uplinks = [lk for lk in plan.links if lk.kind == "leaf_spine"]
        out = cls(hosts[len(hosts) // 3], uplinks[len(uplinks) // 2], uplinks[(len(uplinks) * 4) // 5 + 1])
        for what, lk in (("crc", out.crc), ("flap", out.flap), ("down", out.down)):
            out.ends[(lk.a_device, lk.a_port)] = out.ends[(lk.b_device, lk.b_port)] = what
        return out


class Layouts:
    """The recorded blocks every output is built from, read once."""

    def __init__(self) -> None:
        dump = json.loads(_T1_DUMP.read_text())
        maps = {k: v["value"] for k, v in dump.items() if k.endswith("_MAP")}
        oid = maps["COUNTERS_PORT_NAME_MAP"]["Ethernet0"]
        self.port_wrap = {k: v for k, v in dump[f"COUNTERS:{oid}"].items() if k != "value"}
        self.port_fields = dump[f"COUNTERS:{oid}"]["value"]
        queues = sorted(
            (
                (int(q.split(":")[1]), o)
                for q, o in maps["COUNTERS_QUEUE_NAME_MAP"].items()
                if q.startswith("Ethernet0:")
            )
        )
        self.queues = [(i, maps["COUNTERS_QUEUE_TYPE_MAP"][o], dump[f"COUNTERS:{o}"]["value"]) for i, o in queues]
        lines = _STATUS.read_text().splitlines()
        self.status_header = lines[0].split("  ")
        bgp = json.loads(_BGP.read_text())["ipv4Unicast"]
        peers = list(bgp["peers"].values())
        self.bgp_top = {
            k: v for k, v in bgp.items() if k not in ("peers", "failedPeers", "totalPeers", "dynamicPeers", "bestPath")
        }
        self.bgp_tail = {k: bgp[k] for k in ("failedPeers", "totalPeers", "dynamicPeers", "bestPath")}
        self.peer_up = next(p for p in peers if p["state"] == "Established")
        self.peer_down = next(p for p in peers if p["state"] != "Established")
        routes = json.loads(_ROUTES.read_text())
        self.route = next(r for r in routes["0.0.0.0/0"] if r["protocol"] == "bgp")
        self.ethtool = [
            (n.strip(), int(v))
            for n, _, v in (
                ln.rpartition(":")
                for ln in _ETHTOOL.read_text().splitlines()
                if ":" in ln and ln.strip() != "NIC statistics:"
            )
        ]
        ib = [ln for ln in _IB.read_text().splitlines() if "/mlx5_0/" in ln]
        self.ib = [(p.split("/mlx5_0/ports/1/", 1)[1], int(v)) for p, _, v in (ln.rpartition(":") for ln in ib)]
        words = _RDMA.read_text().splitlines()[0].split()[2:]
        self.rdma = [(words[i], int(words[i + 1])) for i in range(0, len(words), 2)]


def _seed(device: str, port: str) -> int:
    return zlib.crc32(f"{device} {port}".encode())


def _value(base: int, name: str, seed: int, sweep: int) -> int:
    """A counter's value in sweep ``sweep`` (0, 1...): the recorded one moved by the seed, plus growth; an
    InfiniBand PortCounters field narrower than 32 bits stays below the value it stops at (a port whose counter
    has stopped is a finding, not a clean port)."""
    bits = LEGACY_COUNTER_BITS.get(name.rpartition("/")[2], 64)
    if bits < 32:
        return (base + seed) % ((1 << bits) - 1)
    v = base + seed % 100_003
    if _grows(name):
        v += (seed % 1_000_000) * 1000 + sweep * int(SECONDS) * (200_000 + seed % 300_000)
    return v


class Synth:
    """Outputs per device of a plan: ``outputs(device, sweep)`` -> {file stem: text}."""

    def __init__(self, plan: Plan, *, queues: bool = True, route_count: int = 4, filtered: bool = False) -> None:
        self.plan, self.route_count, self.filtered = plan, route_count, filtered
        self.queues = queues and not filtered
        self.layout = lay = Layouts()
        if filtered:
            lay.port_fields = {k: v for k, v in lay.port_fields.items() if k in COUNTERS_DB_FIELDS}
            lay.ethtool = [(n, v) for n, v in lay.ethtool if n in ETHTOOL_NAMES]
            lay.ib = [(n, v) for n, v in lay.ib if n.rpartition("/")[2] in SYSFS_NAMES]
        self.faults = Faults.pick(plan)
        self.switch = plan.switch_by_name
        self.ends: dict[str, list[tuple[str, Link, int]]] = {}  # device -> (port, link, end) in plan order
        for lk in plan.links:
            self.ends.setdefault(lk.a_device, []).append((lk.a_port, lk, 0))
            self.ends.setdefault(lk.b_device, []).append((lk.b_port, lk, 1))
        d = plan.design
        models = {"leaf": d.leaf_model, "spine": d.spine_model, "super_spine": d.super_spine_model}
        self.ports = {role: {p.name: p for p in port_table(m)} for role, m in models.items() if m is not None}
        self.order = {role: {p: i for i, p in enumerate(t)} for role, t in self.ports.items()}

    def devices(self) -> Iterator[str]:
        yield from self.ends

    def one_per_role(self) -> dict[str, str]:
        """The first device of each role (``leaf``, ``spine``, ``super_spine``; ``gpu`` for a node), by role."""
        picked: dict[str, str] = {}
        for device in self.ends:
            picked.setdefault(self.switch[device].role if device in self.switch else "gpu", device)
        return picked

    def outputs(self, device: str, sweep: int) -> dict[str, str]:
        if device in self.switch:
            role = self.switch[device].role
            ends = sorted(self.ends[device], key=lambda e: self.order[role][e[0]])
            return {
                "counters-db": self.counters_db(device, ends, sweep),
                "intf-status": self.intf_status(device, role, ends),
                "bgp-summary": self.bgp_summary(device, ends, sweep),
                "routes": self.routes(device, ends),
            }
        ends = self.ends[device]
        out: dict[str, str] = {}
        for tool in DEFAULT_TOOLS["host"]:  # what the host module reads by default
            if tool == "ethtool":
                out.update({f"ethtool@{port}": self.ethtool(device, port, sweep) for port, _, _ in ends})
            elif tool == "ib-counters":
                out[tool] = self.ib_counters(device, ends, sweep)
            elif tool == "rdma-statistic":
                out[tool] = self.rdma_statistic(device, ends, sweep)
            else:
                raise ValueError(f"{tool}: no synthetic output")
        return out

    # switches -----------------------------------------------------------------------------------------------
    def counters_db(self, device: str, ends: list[tuple[str, Link, int]], sweep: int) -> str:
        lay = self.layout
        doc: dict[str, object] = {}
        names, qnames, qtypes = {}, {}, {}
        for n, (port, _lk, _e) in enumerate(ends):
            seed = _seed(device, port)
            oid = f"oid:0x1{n + 2:013x}"
            names[port] = oid
            fault = self.faults.ends.get((device, port))
            fields = {
                k: str(_value(int(v), k, seed, sweep if fault != "down" else 0)) for k, v in lay.port_fields.items()
            }
            if fault == "crc" and sweep:
                fields["SAI_PORT_STAT_IF_IN_ERRORS"] = str(int(fields["SAI_PORT_STAT_IF_IN_ERRORS"]) + 4200)
            doc[f"COUNTERS:{oid}"] = {**lay.port_wrap, "value": fields}
            if not self.queues:
                continue
            for index, qtype, qfields in lay.queues:
                qoid = f"oid:0x15{n:06x}{index:06x}"
                qnames[f"{port}:{index}"], qtypes[qoid] = qoid, qtype
                doc[f"COUNTERS:{qoid}"] = {
                    **lay.port_wrap,
                    "value": {k: str(_value(int(v), k, seed + index, sweep)) for k, v in qfields.items()},
                }
        doc["COUNTERS_PORT_NAME_MAP"] = {**lay.port_wrap, "value": names}
        if self.queues:
            doc["COUNTERS_QUEUE_NAME_MAP"] = {**lay.port_wrap, "value": qnames}
            doc["COUNTERS_QUEUE_TYPE_MAP"] = {**lay.port_wrap, "value": qtypes}
        return json.dumps(doc, indent=4, sort_keys=True) + "\n"

    def intf_status(self, device: str, role: str, ends: list[tuple[str, Link, int]]) -> str:
        rows = []
        for port, _lk, _e in ends:
            info = self.ports[role][port]
            up = "down" if self.faults.ends.get((device, port)) == "down" else "up"
            rows.append(
                [
                    port,
                    info.lanes,
                    f"{info.speed_mbps // 1000}G",
                    "9100",
                    "rs",
                    info.alias,
                    "routed",
                    up,
                    "up",
                    "OSFP 8X Pluggable Transceiver",
                    "off",
                ]
            )
        header = [h.strip() for h in self.layout.status_header if h.strip()]
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
        lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)), "  ".join("-" * w for w in widths)]
        lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
        return "\n".join(lines) + "\n"

    def _peers(self, device: str, ends: list[tuple[str, Link, int]]) -> Iterator[tuple[str, Link, str]]:
        """(peer address, link, peer device) of each BGP session of a switch (switch-to-switch links)."""
        for _port, lk, end in ends:
            if lk.kind != "host":
                yield (ip_str(lk.b_ip), lk, lk.b_device) if end == 0 else (ip_str(lk.a_ip), lk, lk.a_device)

    def bgp_summary(self, device: str, ends: list[tuple[str, Link, int]], sweep: int) -> str:
        lay, sw = self.layout, self.switch
        t = T0 + sweep * SECONDS
        peers = {}
        for addr, lk, peer in self._peers(device, ends):
            seed = _seed(device, addr)
            if lk is self.faults.down:
                p = {**lay.peer_down, "remoteAs": sw[peer].asn}
            else:
                since = T0 - 100_000 - seed % 50_000
                est, dropped = 1, 0
                if lk is self.faults.flap and sweep:
                    since, est, dropped = T0 + SECONDS / 2, 2, 1
                p = {
                    **lay.peer_up,
                    "remoteAs": sw[peer].asn,
                    "peerUptimeEstablishedEpoch": int(since),
                    "peerUptimeMsec": int((t - int(since)) * 1000),
                    "connectionsEstablished": est,
                    "connectionsDropped": dropped,
                    "msgRcvd": lay.peer_up["msgRcvd"] + seed % 997 + sweep * 10,
                    "msgSent": lay.peer_up["msgSent"] + seed % 991 + sweep * 10,
                }
            peers[addr] = p
        s = sw[device]
        doc = {
            "ipv4Unicast": {
                **lay.bgp_top,
                "routerId": ip_str(s.loopback),
                "as": s.asn,
                "peerCount": len(peers),
                "peers": peers,
                **lay.bgp_tail,
                "failedPeers": sum(1 for p in peers.values() if p["state"] != "Established"),
                "totalPeers": len(peers),
            }
        }
        return json.dumps(doc, indent=2, separators=(",", ":")) + "\n"

    def routes(self, device: str, ends: list[tuple[str, Link, int]]) -> str:
        role = self.switch[device].role
        hops = []
        for port, lk, end in ends:
            if lk.kind == "host" or lk is self.faults.down:
                continue
            if end == 0 or role == "super_spine":
                addr = ip_str(lk.b_ip if end == 0 else lk.a_ip)
                hops.append({**self.layout.route["nexthops"][0], "interfaceName": port, "ip": addr})
        doc = {}
        for k in range(self.route_count):
            prefix = f"10.255.{k // 256}.{k % 256}/32"
            doc[prefix] = [
                {
                    **self.layout.route,
                    "prefix": prefix,
                    "nexthops": hops,
                    "internalNextHopNum": len(hops),
                    "internalNextHopActiveNum": len(hops),
                }
            ]
        return json.dumps(doc, indent=4, sort_keys=True) + "\n"

    # hosts ----------------------------------------------------------------------------------------------------
    def ethtool(self, device: str, port: str, sweep: int) -> str:
        seed = _seed(device, port)
        fault = self.faults.ends.get((device, port))
        lines = ["NIC statistics:"]
        for name, base in self.layout.ethtool:
            v = _value(base, name, seed, sweep)
            if fault == "crc" and sweep and name in ("rx_crc_errors_phy", "rx_symbol_err_phy"):
                v += 3100
            lines.append(f"     {name}: {v}")
        return "\n".join(lines) + "\n"

    def ib_counters(self, device: str, ends: list[tuple[str, Link, int]], sweep: int) -> str:
        hcas = [(lk.hca or "", _seed(device, port)) for port, lk, _ in ends]
        lines = []
        for part in ("counters", "hw_counters"):
            for hca, seed in hcas:
                for name, base in self.layout.ib:
                    if name.startswith(part + "/"):
                        lines.append(f"/sys/class/infiniband/{hca}/ports/1/{name}:{_value(base, name, seed, sweep)}")
        return "\n".join(lines) + "\n"

    def rdma_statistic(self, device: str, ends: list[tuple[str, Link, int]], sweep: int) -> str:
        lines = []
        for port, lk, _ in ends:
            seed = _seed(device, port)
            pairs = " ".join(f"{n} {_value(b, n, seed, sweep)}" for n, b in self.layout.rdma)
            lines.append(f"link {lk.hca}/1 {pairs}")
        return "\n".join(lines) + "\n"


__all__ = ["SECONDS", "T0", "Faults", "Layouts", "Synth"]
