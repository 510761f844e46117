#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Documentation of aiinfra.hwaac.node_lifecycle; the work is done on the controller by its action plugin."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: node_lifecycle
short_description: Move GPU nodes through their lifecycle in NetBox, with evidence and a quarantine circuit breaker
version_added: "0.1.0"
description:
  - "Lifecycle: planned -> burn_in (NetBox status staged) -> production (active); a failed node -> quarantine
    (offline) -> rma (failed) -> returned (inventory) -> burn_in; quarantine -> burn_in after a repair. The exact
    state is kept in the device custom field C(hwaac_lifecycle)."
  - Every move writes a NetBox journal entry with the evidence (verdict, fault codes, findings, raw output
    excerpts, GPU and NIC serials, both ends of each failing link as NetBox's cables record them).
  - "Safety: only devices hwaac owns (tag C(hwaac)) are moved; a move the lifecycle does not allow, an unknown or
    unowned device refuses the whole batch before any write. Quarantines pass a circuit breaker: at most
    O(max_share) of the pool quarantined within O(window_seconds); when a batch would exceed it, none is
    quarantined and RV(alerts) says so."
  - "The default is a dry run: it reports what would move and writes nothing. Set O(enforce=true) to write.
    A node already in its target state is left alone (a second run changes nothing)."
  - Runs on the controller (the action plugin talks to NetBox); the task's host only names the play's host.
author:
  - hwaac maintainers (@aiinfra)
options:
  transitions:
    description:
      - The moves, one per node.
    type: list
    elements: dict
    suboptions:
      name:
        description: The device name in NetBox.
        type: str
        required: true
      to:
        description: The target state.
        type: str
        required: true
        choices: [planned, burn_in, production, quarantine, rma, returned]
      reason:
        description: Why, for the journal entry.
        type: str
        required: true
      evidence:
        description:
          - The evidence (keys C(verdict), C(codes), C(findings), C(raw), C(parsed), C(gpu_serials),
            C(nic_serials), C(failing_interfaces), C(action)), e.g. RV(aiinfra.hwaac.burn_in_report#module:evidence).
        type: dict
      via:
        description:
          - A state the node passes through first when it is not there yet and the lifecycle allows both steps
            (each step gets its journal entry). Burn-in's final move gives C(burn_in), so that a dry run, which
            did not write the start of burn-in, still predicts the move.
        type: str
        choices: [planned, burn_in, production, quarantine, rma, returned]
  names:
    description:
      - Nodes that all make the same move (O(to), O(reason), O(evidence)); added to O(transitions).
    type: list
    elements: str
  to:
    description: The target state of O(names).
    type: str
    choices: [planned, burn_in, production, quarantine, rma, returned]
  reason:
    description: The reason of O(names)' move.
    type: str
  evidence:
    description: The evidence of O(names)' move.
    type: dict
  query:
    description:
      - Device names whose lifecycle state to read (RV(states)); may be given with or without O(transitions).
    type: list
    elements: str
  fabric:
    description:
      - The fabric the devices must belong to (tag C(hwaac-fabric-<fabric>)); its GPU nodes are the default
        breaker pool.
    type: str
  pool:
    description:
      - The circuit breaker's pool (device names), e.g. the scalable unit's nodes.
    type: list
    elements: str
  max_share:
    description:
      - Share of the pool that may be quarantined within O(window_seconds) (NVIDIA NVSentinel's default 0.5).
    type: float
    default: 0.5
  window_seconds:
    description:
      - The breaker's sliding window.
    type: float
    default: 300
  enforce:
    description:
      - Write to NetBox. The default is a dry run.
    type: bool
    default: false
  netbox_url:
    description:
      - The NetBox; default C(NETBOX_URL) from the environment, else the local NetBox (C(hwaac netbox up)).
    type: str
  netbox_token:
    description:
      - Its API token; default C(NETBOX_TOKEN) from the environment. Never logged or returned.
    type: str
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.platform,
                                 aiinfra.hwaac.controller_requirements.netbox]
attributes:
  check_mode:
    support: full
    details: Check mode is a dry run; C(changed) predicts whether an enforced run would move a node.
  diff_mode:
    support: full
  platform:
    platforms: [netbox]
    support: full
seealso:
  - module: aiinfra.hwaac.node_health
  - module: aiinfra.hwaac.slurm_node
"""

EXAMPLES = r"""
- name: Quarantine a node that failed burn-in (dry run unless enforce)
  aiinfra.hwaac.node_lifecycle:
    transitions:
      - name: gpu-su01-h03
        to: quarantine
        reason: "burn-in FAIL: GPU_ROW_REMAP_PENDING"
        evidence: "{{ report.evidence }}"
    fabric: demo
    enforce: true
  run_once: true
"""

RETURN = r"""
outcomes:
  description: Per node C(device), C(from_state), C(to_state), C(result) (moved, unchanged, would_move, blocked),
    C(message), C(journal_id).
  returned: success
  type: list
  elements: dict
moved:
  description: Nodes moved (or that would move, in a dry run) per target state.
  returned: success
  type: dict
  sample: {quarantine: [gpu-su01-h03]}
blocked:
  description: Nodes the circuit breaker kept from quarantine.
  returned: success
  type: list
  elements: str
alerts:
  description: The circuit breaker's alert when it tripped.
  returned: success
  type: list
  elements: str
states:
  description: For O(query), device name to lifecycle state (null when not a lifecycle state).
  returned: when query is given
  type: dict
"""


def main():  # pragma: no cover - the action plugin does the work
    from ansible_collections.aiinfra.hwaac.plugins.module_utils.controller_specs import controller_only

    controller_only("node_lifecycle")


if __name__ == "__main__":
    main()
