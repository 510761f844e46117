#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Host side of network health: runs the read-only telemetry tools of a SONiC switch or a GPU node, each with a
time limit and under one output cap, and returns their raw output with the time each was taken. Reading and judging
happen on the controller (aiinfra.hwaac.network_health, hwaac.telemetry)."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: network_telemetry
short_description: Gather the raw switch and NIC counter outputs that network health reads
version_added: "0.1.0"
description:
  - Runs the commands of the given telemetry tools on a SONiC switch or a GPU node, one after the other, each with
    a time limit, and returns per tool its raw C(stdout), C(stderr), exit status and the time it was taken (Unix
    seconds). Nothing is parsed on the host.
  - "The tool -> command table is C(plugins/module_utils/telemetry_tools.py), the same file the readers of the
    Python package C(hwaac) (C(hwaac.telemetry.samples)) name their inputs by. Switch tools: C(portstat)
    (show interfaces counters), C(portstat-json) (portstat -j), C(pfcstat), C(pfcwd), C(queuestat),
    C(intf-status), C(intf-flap), C(transceiver-dom), C(counters-db) (sonic-db-dump -n COUNTERS_DB -k 'COUNTERS*'
    -y), C(fec-histogram@PORT), C(bgp-summary) and C(routes) (vtysh -c 'show bgp summary json' /
    'show ip route json'). Host tools: C(ethtool@PORT) (ethtool -S), C(mlxlink@PORT) (mlxlink -d DEV -c),
    C(rdma-statistic) (rdma statistic show), C(ib-counters) (grep -H . over the sysfs counters/ and hw_counters/ of
    every RDMA port, the globs expanded by the module), C(probe) (cat O(probe_file): the active prober's latest
    results, see O(probes))."
  - A tool that is missing, fails or times out does not fail the task; its result says so, and the controller
    lists it as not read.
  - M(aiinfra.hwaac.network_health) turns two or more such sweeps of the fabric into rates, SLIs and ranked
    suspects.
  - Only reads; check mode runs the commands too and nothing is ever changed.
author:
  - hwaac maintainers (@aiinfra)
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.platform,
                                 aiinfra.hwaac.command_limits]
options:
  kind:
    description:
      - What the device is; picks the default O(tools).
      - "C(sonic): counters-db, intf-status, intf-flap, transceiver-dom, pfcwd, bgp-summary, routes.
        C(host): ib-counters, and ethtool for each of O(ports). C(rdma-statistic) reads the same RDMA hardware
        counters as C(ib-counters) (through netlink, not sysfs): ask for it where sysfs is not readable."
    type: str
    default: sonic
    choices: [sonic, host]
  tools:
    description:
      - The tools to run, by name; C(tool@PORT) for a tool that reads one port. A per-port tool named without
        C(@PORT) runs once for each of O(ports). Default by O(kind).
    type: list
    elements: str
  ports:
    description:
      - Ports for the per-port tools named without C(@PORT) (netdevs such as C(rail0) for C(ethtool), RDMA devices
        for C(mlxlink), SONiC ports for C(fec-histogram)).
    type: list
    elements: str
    default: []
  device:
    description:
      - The device's planned name, returned as RV(device) for the controller. Default none (the controller then
        takes the inventory host name).
    type: str
  render_dir:
    description:
      - On the controller, the folder C(hwaac render) wrote. For O(kind=host), each per-port tool named without
        C(@PORT) runs once for each port of the node's C(<render_dir>/hosts/<node>/nic-roce.json) (the rails hwaac
        configures; C(ethtool) reads its Linux interface, C(mlxlink) its RDMA device) instead of O(ports), which
        must then be empty. The node is O(device), else the inventory host name. A missing or unreadable file
        fails the task, naming the node and the path. Ignored for O(kind=sonic).
      - Needs the Python package C(hwaac) on the controller.
    type: path
  sysfs_root:
    description:
      - Root of sysfs on the host (C(ib-counters) reads C(<sysfs_root>/class/infiniband)).
    type: path
    default: /sys
  probes:
    description:
      - Also read the active prober's latest results (the tool C(probe), O(probe_file)) besides O(tools) or the
        kind's defaults. Only for O(kind=host), where the role C(aiinfra.hwaac.network_probe) runs
        C(hwaac probe send) on a timer. A missing or unreadable file is a failed tool, as any other; the
        controller lists it as not read, never as healthy.
    type: bool
    default: false
  probe_file:
    description:
      - The results document of C(hwaac probe send) that the tool C(probe) reads (the role
        aiinfra.hwaac.network_probe renames each new one into place there).
    type: path
    default: /var/lib/hwaac/probe/latest.json
  filter:
    description:
      - Return of each output only what network health reads, so a sweep of a large fabric moves and parses less.
      - "C(ethtool) and C(ib-counters): the lines of the counters the readers map and every line that is not a
        counter line (the header, the tool's messages), the same lines in the same order (a ConnectX C(ethtool -S)
        keeps about 40 of its hundreds of per-channel lines). C(counters-db): the JSON dump's port name map and
        the port hashes it names, with the SAI fields the reader maps, re-serialised compactly in the flat
        layout (key to fields; queue, router interface, buffer and other hashes are left out: read PFC watchdog
        storms with C(pfcwd)). C(bgp-summary): each peer with the fields the reader reads (state, AS numbers,
        uptime, prefix and session counts), every family and VRF kept, re-serialised compactly. Other tools and
        outputs that are not the expected format: as printed."
      - The name lists are in C(plugins/module_utils/telemetry_tools.py), shared with the readers.
      - Set to C(false) to get every output as the command printed it.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    details: The tools only read; check mode runs them.
  diff_mode:
    support: none
  platform:
    platforms: [linux]
    support: full
notes:
  - Some SONiC show commands read the transceivers through the platform API and need root (C(become)).
  - mlxlink comes with MFT or mstflint and is not in the host defaults; add C(mlxlink) to O(tools) where it is
    installed.
seealso:
  - module: aiinfra.hwaac.network_health
"""

EXAMPLES = r"""
- name: Read a SONiC switch's counters
  aiinfra.hwaac.network_telemetry:
    kind: sonic
    timeout: 30
  register: sweep1
  become: true

- name: Read a GPU node's rails
  aiinfra.hwaac.network_telemetry:
    kind: host
    ports: [rail0, rail1, rail2, rail3]
    tools: [rdma-statistic, ib-counters, ethtool, mlxlink@mlx5_0]
  register: sweep1

- name: Read a GPU node's rails and the latest results of its active prober (role aiinfra.hwaac.network_probe)
  aiinfra.hwaac.network_telemetry:
    kind: host
    ports: [rail0, rail1]
    probes: true
  register: sweep1

- name: Read each GPU node's own rails, as hwaac rendered them (ethtool per interface, mlxlink per RDMA device)
  aiinfra.hwaac.network_telemetry:
    kind: host
    render_dir: build/demo
    tools: [rdma-statistic, ib-counters, ethtool, mlxlink]
  register: sweep1
"""

RETURN = r"""
device:
  description: O(device) as given (null when unset).
  returned: success
  type: str
taken_at:
  description: Unix time when the first command started.
  returned: success
  type: float
outputs:
  description:
    - Per tool name (C(pfcwd), C(ethtool@rail0)) C(argv), C(rc) (null when it could not start or was not run),
      C(stdout), C(stderr), C(taken_at) (Unix seconds when it started), C(seconds), C(timed_out) and
      C(truncated) (cut at O(max_output)) and C(filtered) (the stdout was cut to what the readers map, see
      O(filter)).
  returned: success
  type: dict
  sample:
    pfcwd:
      argv: [show, pfcwd, stats]
      rc: 0
      stdout: "      QUEUE    STATUS ..."
      stderr: ""
      taken_at: 1700000000.12
      seconds: 0.8
      timed_out: false
      truncated: false
      filtered: false
"""

import time  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.aiinfra.hwaac.plugins.module_utils.telemetry_specs import SPECS  # noqa: E402
from ansible_collections.aiinfra.hwaac.plugins.module_utils.telemetry_tools import (  # noqa: E402
    DEFAULT_TOOLS,
    expand,
    filter_output,
    tool_argv,
    tool_problem,
)
from ansible_collections.aiinfra.hwaac.plugins.module_utils.timed_run import run_timed  # noqa: E402


def run_tools(module, names, sysfs, timeout, cap, probe_file, keep_read=True):
    """Run each tool in order; outputs past ``cap`` bytes in all are cut, tools after it are not run.
    ``keep_read``: a tool that ran to its end has its stdout cut to what the readers map (filter_output)."""
    outputs, left = {}, cap
    for name in names:
        argv = tool_argv(name, sysfs, probe_file)
        started = time.time()
        if left <= 0:
            outputs[name] = {
                "argv": argv,
                "rc": None,
                "stdout": "",
                "stderr": f"not run: output cap of {cap} bytes reached (max_output)",
                "taken_at": started,
                "seconds": 0.0,
                "timed_out": False,
                "truncated": False,
                "filtered": False,
            }
            continue
        out = run_timed(module, argv, timeout, {"LC_ALL": "C"})
        out.update(argv=argv, taken_at=round(started, 3), truncated=False, filtered=False)
        if keep_read and out["rc"] == 0 and not out["timed_out"]:
            kept = filter_output(name, out["stdout"])
            out["filtered"] = kept is not out["stdout"]
            out["stdout"] = kept
        for stream in ("stdout", "stderr"):
            if len(out[stream]) > left:
                out[stream] = out[stream][:left]
                out["truncated"] = True
            left -= len(out[stream])
        outputs[name] = out
    return outputs


def main():
    module = AnsibleModule(argument_spec=SPECS["network_telemetry"], supports_check_mode=True)
    p = module.params
    asked = p["tools"] if p["tools"] is not None else DEFAULT_TOOLS[p["kind"]]
    if p["probes"]:
        if p["kind"] != "host":
            module.fail_json(
                msg="aiinfra.hwaac.network_telemetry: probes are read on GPU nodes (kind host), where the prober runs"
            )
        asked = [*asked, "probe"]
    names = expand(asked, p["ports"])
    # a per-port tool asked for without a port and without ports is refused (the defaults just leave it out)
    problems = [w for w in (tool_problem(name) for name in (asked if p["tools"] and not p["ports"] else names)) if w]
    if problems:
        module.fail_json(msg="aiinfra.hwaac.network_telemetry: " + "; ".join(problems))
    if p["timeout"] <= 0 or p["max_output"] <= 0:
        module.fail_json(msg="aiinfra.hwaac.network_telemetry: timeout and max_output must be positive")
    taken_at = round(time.time(), 3)
    outputs = run_tools(module, names, p["sysfs_root"], p["timeout"], p["max_output"], p["probe_file"], p["filter"])
    module.exit_json(changed=False, device=p["device"], taken_at=taken_at, outputs=outputs)


if __name__ == "__main__":
    main()
