# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""The network telemetry tools, in one place: tool name (a samples folder's file stem) -> the command that prints
what its reader expects. The host module ``network_telemetry`` runs these commands; ``hwaac.telemetry.readers``
(through a symlink to this file, ``hwaac/telemetry/tools.py``) names its readers by the same tools. Standard
library only: Ansible ships this file to switches and GPU nodes. Commands and readers: ``docs/network-health.md``.
:func:`filter_output` keeps of an output only what the readers map (the name lists below, which the readers'
tables must equal: ``tests/unit/telemetry/test_telemetry_tools_one_copy.py``).
"""

from __future__ import annotations

import glob
import json
import re
from typing import Any

PORT = "{port}"  # replaced by the port of a per-port tool (``ethtool@rail0``)
SYSFS = "{sysfs}"  # replaced by the sysfs root (``/sys``)
PROBE_FILE = "{probe_file}"  # replaced by the active prober's results file
DEFAULT_PROBE_FILE = "/var/lib/hwaac/probe/latest.json"  # where role network_probe's timer has it written
PORT_NAME = re.compile(r"^[A-Za-z0-9_.:][A-Za-z0-9_.:-]*$")  # a file stem after @: no / (a path), no leading -

# tool -> argv (no shell). "per_port": the tool reads one port, named after "@" (``ethtool@rail0``); "port_field": for
# a GPU node's tool, which field of a rendered nic-roce.json port names it (hwaac.telemetry.host_ports): ethtool -S
# takes the Linux interface, mlxlink -d the RDMA device.
# "globs": the argv items with "*" are expanded on the host, in their order, as a shell would (grep -H lists every
# port's counters/ and then every port's hw_counters/, the order host_rdma's reader checks for a cut output).
# "hint": what a failed run of the tool most likely means, for the controller's "not read" line.
TOOLS: dict[str, dict[str, Any]] = {
    # SONiC switches: sonic-utilities show commands (docs/telemetry/sonic-ports.md, sonic-qos.md)
    "portstat": {"argv": ["show", "interfaces", "counters"]},
    "portstat-json": {"argv": ["portstat", "-j"]},
    "pfcstat": {"argv": ["show", "pfc", "counters"]},
    "pfcwd": {"argv": ["show", "pfcwd", "stats"]},
    "queuestat": {"argv": ["show", "queue", "counters"]},
    "intf-status": {"argv": ["show", "interfaces", "status"]},
    "intf-flap": {"argv": ["show", "interfaces", "flap"]},
    "transceiver-dom": {"argv": ["show", "interfaces", "transceiver", "eeprom", "--dom"]},
    "counters-db": {"argv": ["sonic-db-dump", "-n", "COUNTERS_DB", "-k", "COUNTERS*", "-y"]},
    "fec-histogram": {"argv": ["show", "interfaces", "counters", "fec-histogram", PORT], "per_port": True},
    # FRR in SONiC's bgp container (docs/telemetry/frr.md)
    "bgp-summary": {"argv": ["vtysh", "-c", "show bgp summary json"]},
    "routes": {"argv": ["vtysh", "-c", "show ip route json"]},
    # GPU hosts (docs/telemetry/host-nic.md)
    "ethtool": {"argv": ["ethtool", "-S", PORT], "per_port": True, "port_field": "interface"},
    "mlxlink": {"argv": ["mlxlink", "-d", PORT, "-c"], "per_port": True, "port_field": "hca"},
    "rdma-statistic": {"argv": ["rdma", "statistic", "show"]},
    "ib-counters": {
        "argv": [
            "grep",
            "-H",
            ".",
            SYSFS + "/class/infiniband/*/ports/*/counters/*",
            SYSFS + "/class/infiniband/*/ports/*/hw_counters/*",
        ],
        "globs": True,
    },
    # GPU hosts running the active prober: the latest results document of `hwaac probe send` (docs/network-health.md
    # "Active probing"), as the timer of role network_probe renames it into place; read as it is, judged on the
    # controller
    "probe": {
        "argv": ["cat", "--", PROBE_FILE],
        "hint": "the prober's results: is role aiinfra.hwaac.network_probe installed on the node, and has "
        "hwaac-probe-send.timer run since?",
    },
}

# what a switch and a GPU host read by default (the per-port ones need the host's ports); "probe" is opt-in: it reads
# the results of an agent that not every node runs. rdma-statistic is not a host default: it prints the same RDMA hw
# counters as ib-counters' hw_counters/ (through netlink), which also holds the PortCounters
DEFAULT_TOOLS = {
    "sonic": ["counters-db", "intf-status", "intf-flap", "transceiver-dom", "pfcwd", "bgp-summary", "routes"],
    "host": ["ib-counters", "ethtool"],
}


# ethtool -S lines the reader maps (hwaac.telemetry.parsers.host_ethtool: mlx5 physical port, RDMA and per-priority
# counters, kernel Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst)
_RDMA_NAMES = (
    "np_ecn_marked_roce_packets",
    "cc_rx_ce_pkts",
    "np_cnp_sent",
    "cc_tx_cnp_pkts",
    "rp_cnp_handled",
    "rp_cnp_ignored",
    "out_of_sequence",
    "packet_seq_err",
    "local_ack_timeout_err",
    "out_of_buffer",
    "rnr_nak_retry_err",
    "duplicate_request",
    "implied_nak_seq_err",
    "req_cqe_error",
    "resp_cqe_error",
    "req_transport_retries_exceeded",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "rx_icrc_encapsulated",
)
ETHTOOL_NAMES = frozenset(
    (
        *_RDMA_NAMES,
        "rx_packets_phy",
        "tx_packets_phy",
        "rx_bytes_phy",
        "tx_bytes_phy",
        "rx_crc_errors_phy",
        "rx_symbol_err_phy",
        "rx_oversize_pkts_phy",
        "rx_discards_phy",
        "tx_discards_phy",
        "tx_errors_phy",
        "rx_out_of_buffer",
        "link_down_events_phy",
        "rx_pause_ctrl_phy",
        "tx_pause_ctrl_phy",
        "rx_global_pause",
        "tx_global_pause",
        "rx_global_pause_duration",
        "tx_global_pause_duration",
        "tx_pause_storm_warning_events",
        "tx_pause_storm_error_events",
        "rx_bits_phy",
        "rx_corrected_bits_phy",
        "rx_pcs_symbol_err_phy",
        "rx_ecn_mark",
        *(f"{d}_prio{p}_{k}" for p in range(8) for d in ("rx", "tx") for k in ("pause", "pause_duration")),
        *(f"rx_prio{p}_discards" for p in range(8)),
        *(f"rx_err_lane_{n}_phy" for n in range(8)),
    )
)
# sysfs counters/ and hw_counters/ files the reader maps (hwaac.telemetry.parsers.host_rdma), and every PortCounters
# file of the kernel's legacy table (drivers/infiniband/core/sysfs.c pma_attrs), which the reader needs to tell a
# whole port from one cut short (hwaac.health.parsers.ib_counters LEGACY_FILES)
SYSFS_NAMES = frozenset(
    (
        *_RDMA_NAMES,
        "symbol_error",
        "port_rcv_errors",
        "link_downed",
        "link_error_recovery",
        "port_xmit_discards",
        "excessive_buffer_overrun_errors",
        "port_xmit_wait",
        "port_xmit_packets",
        "port_xmit_data",
        "port_rcv_data",
        "VL15_dropped",
        "local_link_integrity_errors",
        "port_rcv_constraint_errors",
        "port_rcv_packets",
        "port_rcv_remote_physical_errors",
        "port_rcv_switch_relay_errors",
        "port_xmit_constraint_errors",
    )
)
# COUNTERS_DB port hash fields the reader maps (hwaac.telemetry.parsers.sonic_sai_stats PORT_STATS)
PORT_NAME_MAP = "COUNTERS_PORT_NAME_MAP"
COUNTERS_DB_FIELDS = frozenset(
    (
        *(
            f"SAI_PORT_STAT_{n}"
            for n in (
                "IF_IN_UCAST_PKTS",
                "IF_IN_NON_UCAST_PKTS",
                "IF_IN_ERRORS",
                "IF_IN_DISCARDS",
                "ETHER_RX_OVERSIZE_PKTS",
                "IF_OUT_UCAST_PKTS",
                "IF_OUT_NON_UCAST_PKTS",
                "IF_OUT_ERRORS",
                "IF_OUT_DISCARDS",
                "ETHER_TX_OVERSIZE_PKTS",
                "IF_IN_OCTETS",
                "IF_OUT_OCTETS",
                "DOT3_STATS_FCS_ERRORS",
                "ETHER_STATS_CRC_ALIGN_ERRORS",
                "DOT3_STATS_SYMBOL_ERRORS",
                "IF_IN_FEC_CORRECTABLE_FRAMES",
                "IF_IN_FEC_NOT_CORRECTABLE_FRAMES",
                "IF_IN_FEC_SYMBOL_ERRORS",
                "PAUSE_RX_PKTS",
                "PAUSE_TX_PKTS",
            )
        ),
        *(
            f"SAI_PORT_STAT_PFC_{p}_{k}"
            for p in range(8)
            for k in ("RX_PKTS", "TX_PKTS", "RX_PAUSE_DURATION_US", "TX_PAUSE_DURATION_US")
        ),
        *(f"EST_PORT_STAT_PFC_{p}_RX_PAUSE_DURATION_US" for p in range(8)),
    )
)


# FRR show bgp summary json: the peer fields the reader reads (hwaac.telemetry.parsers.frr_bgp _peer; pfxSnt, msgRcvd
# and msgSent for its reasons only); a family's own fields are all kept
BGP_PEER_FIELDS = frozenset(
    (
        "state",
        "peerState",
        "idType",
        "scopeIfName",
        "remoteAs",
        "localAs",
        "hostname",
        "desc",
        "peerUptime",
        "peerUptimeMsec",
        "peerUptimeEstablishedEpoch",
        "pfxRcd",
        "prefixReceivedCount",
        "pfxSnt",
        "connectionsEstablished",
        "connectionsDropped",
        "msgRcvd",
        "msgSent",
    )
)


def _ethtool_name(line):
    """The counter of an ``ethtool -S`` line ``name: value``; None for any other line (header, ethtool's errors)."""
    name, sep, _value = line.rpartition(":")
    name = name.strip()
    return name if sep and name and " " not in name else None


def _sysfs_name(line):
    """The counter file of a ``grep -H`` line ``/sys/.../counters/NAME:value`` or ``.../hw_counters/NAME:value`` (the
    path before it may hold colons: ``/sys/devices/pci0000:00/...``); None for any other line."""
    at = line.rfind("counters/")
    end = line.find(":", at)
    return line[at + 9 : end] if at >= 0 and end > at else None


def _keep_lines(text, names, name_of):
    """The lines of ``text`` that are no counter line or name a counter in ``names``: the same lines, same order."""
    kept = [line for line in text.splitlines(True) if (n := name_of(line)) is None or n in names]
    return "".join(kept)


def _keep_ports(text):
    """A ``sonic-db-dump`` of COUNTERS_DB cut to its port name map and the port hashes it names, each with the
    fields of COUNTERS_DB_FIELDS, in the flat layout (key -> fields: redis-dump-load's type, ttl and expireat
    dropped); text that is not such a dump is returned as it is."""
    try:
        doc = json.loads(text)
    except ValueError:
        return text
    ports = doc.get(PORT_NAME_MAP) if isinstance(doc, dict) else None
    if not isinstance(ports, dict):
        return text
    names = _fields(ports)
    if names is None:
        return text
    out = {PORT_NAME_MAP: names}
    for oid in names.values():
        key = f"COUNTERS:{oid}"
        fields = _fields(doc.get(key))
        if fields is not None:
            out[key] = {k: v for k, v in fields.items() if k in COUNTERS_DB_FIELDS}
    return json.dumps(out, sort_keys=True, separators=(",", ":")) + "\n"


def _fields(entry):
    """A dump entry's hash: redis-dump-load's ``value`` ({"type": "hash", "value": {...}, ...}) or the entry itself;
    None when it is not one."""
    if isinstance(entry, dict) and "value" in entry and "type" in entry:
        entry = entry["value"]
    return entry if isinstance(entry, dict) else None


def _keep_peer_fields(text):
    """FRR's ``show bgp summary json`` with each peer cut to BGP_PEER_FIELDS (every family, VRF and other field
    kept), written compactly; text that is not one such JSON document is returned as it is."""
    try:
        doc = json.loads(text)
    except ValueError:
        return text
    if not isinstance(doc, dict) or not _cut_peers(doc):
        return text
    return json.dumps(doc, separators=(",", ":")) + "\n"


def _cut_peers(obj, depth=0):
    """Cut the peers of every family in ``obj`` (a family, or families or VRFs of families) in place; whether any
    peer was found."""
    found = False
    peers = obj.get("peers")
    if isinstance(peers, dict):
        for name, peer in peers.items():
            if isinstance(peer, dict):
                peers[name] = {k: v for k, v in peer.items() if k in BGP_PEER_FIELDS}
                found = True
    elif depth < 2:
        for value in obj.values():
            if isinstance(value, dict):
                found = _cut_peers(value, depth + 1) or found
    return found


def filter_output(name, text):
    """What network health reads of tool ``name``'s output ``text``: ``ethtool`` and ``ib-counters`` keep the lines
    of the counters the readers map and every line that is not a counter (the same lines in the same order);
    ``counters-db`` keeps its JSON dump's port name map and port hashes with the fields the reader maps (queues,
    router interfaces, buffers and the rest left out), re-serialised compactly in the flat layout;
    ``bgp-summary`` keeps of each peer the fields the reader reads, re-serialised compactly. Other tools: ``text``
    as it is."""
    tool = split_tool(name)[0]
    if tool == "ethtool":
        return _keep_lines(text, ETHTOOL_NAMES, _ethtool_name)
    if tool == "ib-counters":
        return _keep_lines(text, SYSFS_NAMES, _sysfs_name)
    if tool == "counters-db":
        return _keep_ports(text)
    if tool == "bgp-summary":
        return _keep_peer_fields(text)
    return text


def split_tool(name):
    """``("ethtool", "rail0")`` for ``"ethtool@rail0"``, ``("pfcwd", "")`` for ``"pfcwd"``."""
    tool, _sep, port = name.partition("@")
    return tool, port


def tool_problem(name):
    """Why ``name`` is not a tool this table runs (None when it is)."""
    tool, port = split_tool(name)
    if tool not in TOOLS:
        return f"{tool!r} is no telemetry tool (known: {', '.join(sorted(TOOLS))})"
    if TOOLS[tool].get("per_port") and not port:
        return f"{tool} reads one port: name it as {tool}@PORT or give ports"
    if port and not TOOLS[tool].get("per_port"):
        return f"{tool} reads the whole device: no @PORT"
    if port and not PORT_NAME.match(port):
        return f"{port!r} is not a port name (letters, digits, _ . : -, not first -)"
    return None


def expand(names, ports):
    """The tool names to run: ``names`` in order, a per-port tool without ``@`` once per port of ``ports``."""
    out = []
    for name in names:
        tool, port = split_tool(name)
        if TOOLS.get(tool, {}).get("per_port") and not port:
            out.extend(f"{tool}@{p}" for p in ports)
        else:
            out.append(name)
    return list(dict.fromkeys(out))


def tool_argv(name, sysfs="/sys", probe_file=DEFAULT_PROBE_FILE):
    """The argv of tool ``name`` (``tool`` or ``tool@PORT``), placeholders filled and globs expanded; a glob that
    matches nothing is left as it is (the tool then says so, as from a shell with nullglob off)."""
    tool, port = split_tool(name)
    argv = [
        a.replace(PORT, port).replace(SYSFS, sysfs.rstrip("/") or "").replace(PROBE_FILE, probe_file)
        for a in TOOLS[tool]["argv"]
    ]
    if not TOOLS[tool].get("globs"):
        return argv
    out = []
    for arg in argv:
        found = sorted(glob.glob(arg)) if "*" in arg else []
        out.extend(found or [arg])
    return out
