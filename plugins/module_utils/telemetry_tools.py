# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""The network telemetry tools, in one place: tool name (a samples folder's file stem) -> the command that prints
what its reader expects. The host module ``network_telemetry`` runs these commands; ``hwaac.telemetry.samples``
(a symlink to this file, ``hwaac/telemetry/tools.py``) names its readers by the same tools. Standard library only:
Ansible ships this file to switches and GPU nodes. Commands and readers: ``docs/network-health.md``.
"""

from __future__ import annotations

import glob
import re

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
TOOLS = {
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
    "ib-counters": {"argv": ["grep", "-H", ".", SYSFS + "/class/infiniband/*/ports/*/counters/*",
                             SYSFS + "/class/infiniband/*/ports/*/hw_counters/*"], "globs": True},
    # GPU hosts running the active prober: the latest results document of `hwaac probe send` (docs/network-health.md
    # "Active probing"), as the timer of role network_probe renames it into place; read as it is, judged on the
    # controller
    "probe": {"argv": ["cat", "--", PROBE_FILE],
              "hint": "the prober's results: is role aiinfra.hwaac.network_probe installed on the node, and has "
                      "hwaac-probe-send.timer run since?"},
}

# what a switch and a GPU host read by default (the per-port ones need the host's ports); "probe" is opt-in: it reads
# the results of an agent that not every node runs
DEFAULT_TOOLS = {
    "sonic": ["counters-db", "intf-status", "intf-flap", "transceiver-dom", "pfcwd", "bgp-summary", "routes"],
    "host": ["rdma-statistic", "ib-counters", "ethtool"],
}


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
    argv = [a.replace(PORT, port).replace(SYSFS, sysfs.rstrip("/") or "").replace(PROBE_FILE, probe_file)
            for a in TOOLS[tool]["argv"]]
    if not TOOLS[tool].get("globs"):
        return argv
    out = []
    for arg in argv:
        found = sorted(glob.glob(arg)) if "*" in arg else []
        out.extend(found or [arg])
    return out
