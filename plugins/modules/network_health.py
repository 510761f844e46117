#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Documentation of aiinfra.hwaac.network_health; the work is done on the controller by its action plugin."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: network_health
short_description: Judge sweeps of fabric telemetry into SLIs and ranked suspects, and write the report
version_added: "0.1.0"
description:
  - Takes two or more sweeps of M(aiinfra.hwaac.network_telemetry) results over the fabric's switches and GPU
    nodes (oldest first), reads each output with the readers of the Python package C(hwaac)
    (C(hwaac.telemetry)), rates the counters between the latest two sweeps, attaches them to the planned links of
    O(intent), computes the SLIs and ranks suspects (cable, optic, port, NIC, switch, PFC storm source, flapping
    link) - the same code as C(hwaac health fabric INTENT --samples DIR --samples DIR2).
  - The sweeps are read in memory; the only files written are C(<output_dir>/<name>.md) and C(.json), and
    changed is true when their content changed. In check mode nothing is written.
  - A tool that timed out, failed, was cut at the output cap, or a host without results is not read; the report
    lists it under coverage, with the devices and planned ports that were not sampled.
  - The active prober's results (tool C(probe) of M(aiinfra.hwaac.network_telemetry)) of the latest sweep that
    has any are judged whole by tomography; a document that does not read, or is older than O(probe_max_age), is
    listed as not read (C(probe_results_not_read)).
  - One sweep gives state and gauges only (links down, pre-FEC BER); the report says so.
author:
  - hwaac maintainers (@aiinfra)
options:
  intent:
    description:
      - The fabric's intent on the controller (C(fabric.yml) or the folder holding it). Pools that name NetBox
        prefixes are not resolved here.
    type: path
    required: true
  output_dir:
    description:
      - Folder on the controller for the report files.
    type: path
    required: true
  sweeps:
    description:
      - The sweeps, oldest first; each maps an inventory host to its registered M(aiinfra.hwaac.network_telemetry)
        result. The device is the result's C(device), else the host name.
    type: list
    elements: dict
  registered:
    description:
      - Instead of O(sweeps), the names of the registered results, oldest first, read from every host of O(hosts)
        (C(hostvars)).
    type: list
    elements: str
  hosts:
    description:
      - The hosts whose O(registered) results are read. Default the play's hosts (C(ansible_play_hosts_all)).
    type: list
    elements: str
  slo:
    description:
      - An SLO file (default the one shipped with C(hwaac), C(hwaac/telemetry/data/slo.yaml)).
    type: path
  squeue:
    description:
      - A file with the output of C(squeue -h -o '%i %u %N'); the suspects then name the jobs on their nodes.
    type: path
  fail_on:
    description:
      - Fail the task when the report's status is at least this severe (its worst suspect, and at least C(warn)
        when a scope's coverage, the planned links whose state was read, is below its SLO); C(never) only
        reports.
    type: str
    default: fault
    choices: [fault, warn, never]
  name:
    description:
      - File name of the report in O(output_dir), without extension.
    type: str
    default: network-health
  probe_max_age:
    description:
      - Seconds. Probe results whose run ended longer than this before the tool read them (both times the node's
        clock) are not judged, since a prober that stopped leaves its last results behind. The default is three
        of the role aiinfra.hwaac.network_probe's default intervals (300 s).
    type: float
    default: 900.0
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.controller,
                                 aiinfra.hwaac.attributes.reports, aiinfra.hwaac.controller_requirements]
seealso:
  - module: aiinfra.hwaac.network_telemetry
"""

EXAMPLES = r"""
- name: Judge two sweeps of the fabric
  aiinfra.hwaac.network_health:
    intent: inventory/demo
    output_dir: reports/network
    registered: [network_health_sweep1, network_health_sweep2]
    fail_on: fault
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
status:
  description: The worst suspect's severity (C(fault), C(warn), C(info)) or C(ok); at least C(warn) when a
    scope's coverage is below its SLO (the report's C(coverage_below_slo) names the unknown links per scope).
  returned: success
  type: str
  sample: fault
exit_code:
  description: What C(hwaac health fabric) would exit with (0 ok or info, 4 warn, 1 fault).
  returned: success
  type: int
report:
  description: The report as C(hwaac health fabric --format json) prints it (schema C(hwaac.fabric-health/1))
    with the suspects and their evidence, the SLIs per scope and the coverage.
  returned: success
  type: dict
files:
  description: The report files written (or that would be, in check mode).
  returned: success
  type: list
  elements: str
"""


def main():  # pragma: no cover - the action plugin does the work
    from ansible_collections.aiinfra.hwaac.plugins.module_utils.controller_specs import controller_only
    from ansible_collections.aiinfra.hwaac.plugins.module_utils.telemetry_specs import SPECS

    controller_only("network_health", SPECS)


if __name__ == "__main__":
    main()
