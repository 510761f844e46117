#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Host side of aiinfra.hwaac.node_health: runs the probe commands the action plugin sends, each with a time
limit, and returns their raw output. Parsing and the verdict happen on the controller (hwaac.health.node)."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: node_health
short_description: Run one stage of GPU node burn-in or health checks and judge it against a SKU profile
version_added: "0.1.0"
description:
  - Runs the tools of one stage on the node, each with a time limit, and returns their raw output; the action
    plugin of the same name parses the output on the controller and judges it against a SKU profile
    (Python package C(hwaac), C(hwaac.health)).
  - "Stages: C(quick) (nvidia-smi -q -x, remapped rows, NVLink, kernel log XIDs, ibstat, port counters,
    ibstatus, ibv_devinfo, rdma statistic show),
    C(dcgm) (dcgmi diag at the profile's level), C(single_node) (all_reduce_perf over the node's GPUs,
    nvbandwidth), C(ib_serve) (ib_write_bw servers on every rail, run async), C(ib_pairwise) (ib_write_bw to
    O(peer)'s servers on every rail, GPUDirect, then the port counters and rdma statistic show again),
    C(nccl_multi) (all_reduce_perf
    across O(mpi_hosts) with NCCL_ALGO=RING through mpirun), C(health) (the periodic subset: nvidia-smi -q -x,
    remapped rows, kernel log XIDs, ibstat, port counters, ibstatus, ibv_devinfo, rdma statistic show, dcgmi diag
    at the profile's health-check level)."
  - The verdict is PASS, WARN, UNKNOWN (the output could not be read, a tool is missing or timed out) or FAIL,
    with fault codes, the recommended action and the evidence. A FAIL verdict does not fail the task; the roles
    decide what follows (quarantine, drain).
  - Exit codes never make a result PASS; output that cannot be parsed is UNKNOWN, never PASS.
  - The probes only read state or load the GPUs and NICs; they change nothing, so check mode runs them too.
author:
  - hwaac maintainers (@aiinfra)
options:
  stage:
    description:
      - The stage to run.
    type: str
    required: true
    choices: [quick, dcgm, single_node, ib_serve, ib_pairwise, nccl_multi, health]
  profile:
    description:
      - The SKU profile, a name shipped with hwaac (C(hgx-h200-8x400g), C(hgx-h100-8x400g)) or a YAML file on
        the controller.
    type: str
    default: hgx-h200-8x400g
  rails:
    description:
      - The node's rail RDMA devices in rail order, e.g. from the host's rendered C(nic-roce.json). Default
        (unset) is every port of the profile's link layer that C(ibstat) lists.
    type: list
    elements: str
  peer:
    description:
      - C(ib_pairwise) only, required there. The node whose C(ib_serve) servers listen (the same rails).
    type: str
  mpi_hosts:
    description:
      - C(nccl_multi) only, required there. The nodes of the run (the SU), this node first.
    type: list
    elements: str
  nccl_algo:
    description:
      - NCCL_ALGO of the C(nccl_multi) run; the multi-node threshold is measured with C(RING).
    type: str
    default: RING
  counters_before:
    description:
      - C(ib_pairwise) and C(health). The raw port-counter reading of an earlier stage (RV(counters)); with it
        the verdict includes counter growth (link_downed, symbol_error...).
    type: str
  counters_age:
    description:
      - Seconds between O(counters_before) (and O(rdma_statistic_before), read in the same stage) and this
        stage's readings; without it only the deltas are judged, not the rates per second.
    type: float
  rdma_statistic_before:
    description:
      - C(ib_pairwise) and C(health). The raw C(rdma statistic show) reading of an earlier stage
        (RV(rdma_statistic)); with it the verdict includes the growth of the rails' hw counters (rnr_nak_retry_err,
        local_ack_timeout_err...) by the same rules as O(counters_before).
    type: str
  sysfs_root:
    description:
      - Root of sysfs on the node (the port counters are under C(<sysfs_root>/class/infiniband)).
    type: str
    default: /sys
  timeout:
    description:
      - Seconds each probe may run. Default by stage (C(dcgm) takes the profile's limit).
    type: int
  under_load:
    description:
      - The GPUs are busy while C(quick) runs, so the PCIe generation is checked too (idle GPUs train down).
    type: bool
    default: false
  probes:
    description:
      - Set by the action plugin; not for playbooks. Probe name to C(argv) (list), C(timeout) (seconds), and
        optionally C(parallel) (run alongside the others), C(retries), C(retry_delay), C(retry_on) (a regular
        expression of the output that asks for another try).
    type: dict
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.probes,
                                 aiinfra.hwaac.controller_requirements]
notes:
  - The tools must be installed on the node (nvidia-smi, dcgmi, ibstat and ibstatus (infiniband-diags),
    ibv_devinfo (libibverbs-utils / ibverbs-utils), rdma (iproute2), perftest, nccl-tests, nvbandwidth, mpirun for
    C(nccl_multi)); a missing tool gives an UNKNOWN verdict naming it.
  - Thresholds and their test methods are in the profile; a figure measured otherwise is UNKNOWN, not compared.
seealso:
  - module: aiinfra.hwaac.node_lifecycle
  - module: aiinfra.hwaac.slurm_node
"""

EXAMPLES = r"""
- name: Quick checks
  aiinfra.hwaac.node_health:
    stage: quick
    profile: hgx-h200-8x400g
    rails: "{{ (lookup('file', hwaac_files + '/nic-roce.json') | from_json).ports | map(attribute='hca') }}"
  register: quick
  become: true

- name: Fail the play for a FAIL verdict
  ansible.builtin.assert:
    that: quick.status != 'FAIL'
    fail_msg: "{{ quick.codes | join(', ') }}"
"""

RETURN = r"""
extends_documentation_fragment: [aiinfra.hwaac.returns.probes]
status:
  description: The stage's verdict.
  returned: success
  type: str
  sample: FAIL
codes:
  sample: [GPU_ROW_REMAP_PENDING]
action:
  description: The recommended action (none, retest, restart_app, reset_gpu, reboot, check_link, rma).
  returned: success
  type: str
  sample: reset_gpu
hardware:
  description: Serials for evidence, C(gpus) (GPU to serial) and C(nics) (RDMA device to node GUID), where read.
  returned: success
  type: dict
counters:
  description: The raw port-counter reading of this stage (for O(counters_before) of a later one), if it read them.
  returned: success
  type: str
rdma_statistic:
  description: The raw C(rdma statistic show) reading of this stage (for O(rdma_statistic_before) of a later one),
    if it read one.
  returned: success
  type: str
"""

import re  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

from ansible_collections.aiinfra.hwaac.plugins.module_utils.controller_specs import probes_module  # noqa: E402
from ansible_collections.aiinfra.hwaac.plugins.module_utils.timed_run import cut_output, run_timed  # noqa: E402

MAX_OUTPUT_MIB = 4  # stdout/stderr kept per probe (a DCGM -r 4 JSON is well under 1 MiB)


def main():
    module, probes = probes_module("node_health")
    outputs = {}
    parallel = [name for name, probe in probes.items() if probe.get("parallel")]
    threads = [
        threading.Thread(target=lambda n=name: outputs.__setitem__(n, run_probe(module, probes[n])))
        for name in parallel
    ]
    for thread in threads:  # servers: all of them must listen at once
        thread.start()
    for name, probe in probes.items():
        if name not in parallel:
            outputs[name] = run_probe(module, probe)
    for thread in threads:
        thread.join()
    module.exit_json(changed=False, outputs={name: outputs[name] for name in probes})


def run_probe(module, probe):
    """Run one probe; retry while its output matches ``retry_on`` (a client started before its server listens)."""
    attempts = 1 + int(probe.get("retries", 0))
    for attempt in range(attempts):
        out = run_timed(module, probe["argv"], int(probe["timeout"]), probe.get("env"))
        text = out["stdout"] + out["stderr"]
        if attempt + 1 == attempts or not probe.get("retry_on") or not re.search(probe["retry_on"], text):
            break
        time.sleep(float(probe.get("retry_delay", 2)))
    out["attempts"] = attempt + 1
    return cut_output(out, MAX_OUTPUT_MIB)


if __name__ == "__main__":
    main()
