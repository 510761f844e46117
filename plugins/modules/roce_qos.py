#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache-2.0
"""Ansible module aiinfra.hwaac.roce_qos: runtime RoCE QoS of ConnectX ports (one, or a list), idempotent."""

# ruff: noqa: E402  (Ansible modules keep DOCUMENTATION/EXAMPLES/RETURN above the imports)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: roce_qos
short_description: Trust state, PFC, DSCP mapping, RoCE ToS, ECN, CNP marking and MTU of ConnectX ports
description:
  - Brings the runtime (non-persistent) RoCE settings of a netdev and its RDMA device to the desired values,
    each read before it is set and read again after; a value that is already right is left alone.
  - Trust state and PFC with C(mlnx_qos -i IF --trust dscp --pfc 0,0,0,1,0,0,0,0), the DSCP to priority map with
    C(mlnx_qos -i IF --dscp2prio set,DSCP,PRIO) (one call per differing entry; mlnx_qos refuses C(--trust) and
    C(--dscp2prio) together).
  - The RDMA-CM default ToS with C(cma_roce_tos -d HCA -t TOS) after creating the configfs group
    C(/sys/kernel/config/rdma_cm/HCA) when it is missing, and the raw-verbs ToS through
    C(/sys/class/infiniband/HCA/tc/1/traffic_class).
  - ECN per priority through C(/sys/class/net/IF/ecn/roce_np/enable/P) and C(roce_rp/enable/P), CNP marking
    through C(ecn/roce_np/cnp_dscp) and C(cnp_802p_prio), and the netdev MTU through C(/sys/class/net/IF/mtu).
  - The options follow one port entry of the C(nic-roce.json) file that hwaac renders per host, so a role can pass
    a port's fields straight through (all but the entry's C(port), which is the NIC ordinal, not the RDMA port
    number of O(port)).
  - Several ports are handled in one invocation with O(ports) (one task and one module start for all ports of a
    host instead of one per port). The desired values of every port are checked before anything runs; then each
    port is brought to its values as above, one after the other, and its result is returned in RV(ports). Every
    port is processed even when one fails; the task then fails with a message naming every failed port, and
    RV(ports) still holds the result of each port, failed or not.
version_added: "0.1.0"
author: hwaac maintainers (@aiinfra)
options:
  interface:
    description:
      - The netdev (for example C(rail0)).
      - One of O(interface) and O(ports) is required. O(ports) is mutually exclusive with every option of one port
        (O(interface) to O(mtu) in this list); O(sysfs_root) and O(configfs_root) apply to both forms.
    type: str
  hca:
    description: The RDMA device of the netdev (for example C(mlx5_0)); needed for O(roce_tos).
    type: str
  trust:
    description: Priority trust state for C(mlnx_qos --trust).
    type: str
    choices: [pcp, dscp]
  pfc:
    description: PFC enable per priority 0..7, as C(0,0,0,1,0,0,0,0) or a list of 8 ints.
    type: raw
  dscp2prio:
    description:
      - DSCP to priority entries that must hold, for example DSCP 26 to priority 3 and 48 to 6; other DSCPs are
        left as they are. Needs trust C(dscp) (mlnx_qos shows the map only in that state).
    type: dict
  roce_tos:
    description: The ToS byte for RoCE traffic (C(106) = DSCP 26 << 2 | ECT(0)), 0..255.
    type: int
  roce_tos_cma:
    description: Set O(roce_tos) as the RDMA-CM default with C(cma_roce_tos).
    type: bool
    default: true
  roce_tos_traffic_class:
    description: Set O(roce_tos) as the global C(tc/PORT/traffic_class) of the RDMA device (raw verbs, MLNX_OFED).
    type: bool
    default: true
  port:
    description: The RDMA port number for C(cma_roce_tos -p) and C(tc/PORT/traffic_class).
    type: int
    default: 1
  ecn:
    description:
      - ECN enable per priority, with the keys C(np_priorities) and C(rp_priorities), lists of priorities
        (notification point, reaction point). Listed priorities are enabled; others are left alone unless
        O(ecn_disable_others).
    type: dict
  ecn_disable_others:
    description: Also disable ECN on the priorities not listed in O(ecn).
    type: bool
    default: false
  cnp:
    description:
      - CNP marking, with the keys C(dscp) and C(priority), written to C(ecn/roce_np/cnp_dscp) and
        C(cnp_802p_prio).
    type: dict
  mtu:
    description: The netdev MTU in bytes.
    type: int
  ports:
    description:
      - Several ports in one invocation, each entry with the options of one port. Mutually exclusive with those
        options at the top level.
      - An interface may be listed only once.
    type: list
    elements: dict
    suboptions:
      interface:
        description: The netdev, as O(interface).
        type: str
        required: true
      hca:
        description: The RDMA device of the netdev, as O(hca).
        type: str
      trust:
        description: Priority trust state, as O(trust).
        type: str
        choices: [pcp, dscp]
      pfc:
        description: PFC enable per priority, as O(pfc).
        type: raw
      dscp2prio:
        description: DSCP to priority entries that must hold, as O(dscp2prio).
        type: dict
      roce_tos:
        description: The ToS byte for RoCE traffic, as O(roce_tos).
        type: int
      roce_tos_cma:
        description: Set the ToS as the RDMA-CM default, as O(roce_tos_cma).
        type: bool
        default: true
      roce_tos_traffic_class:
        description: Set the ToS as the global C(tc/PORT/traffic_class), as O(roce_tos_traffic_class).
        type: bool
        default: true
      port:
        description: The RDMA port number, as O(port) (not the C(port) ordinal of a C(nic-roce.json) entry).
        type: int
        default: 1
      ecn:
        description: ECN enable per priority, as O(ecn).
        type: dict
      ecn_disable_others:
        description: Also disable ECN on the priorities not listed, as O(ecn_disable_others).
        type: bool
        default: false
      cnp:
        description: CNP marking, as O(cnp).
        type: dict
      mtu:
        description: The netdev MTU in bytes, as O(mtu).
        type: int
  sysfs_root:
    description: Where sysfs is mounted (tests point it at a directory tree).
    type: str
    default: /sys
  configfs_root:
    description: Where configfs is mounted.
    type: str
    default: /sys/kernel/config
notes:
  - These settings do not survive a reboot; run the module at every boot (the role C(aiinfra.hwaac.nic_config) does).
  - In check mode nothing is written, but the missing configfs group is still created, because without it the
    RDMA-CM ToS cannot be read at all; creating the group changes no setting.
  - In check mode with trust C(pcp), the DSCP map cannot be read; its entries are listed in RV(unverified) and not
    predicted as changes.
  - Diff mode shows the changed items (with O(ports), per interface and item).
  - Needs C(mlnx_qos) and C(cma_roce_tos) (MLNX_OFED or DOCA-host) and root privileges.
seealso:
  - module: aiinfra.hwaac.mlxconfig
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.changes]
"""

EXAMPLES = r"""
- name: Lossless RoCE on rail0
  aiinfra.hwaac.roce_qos:
    interface: rail0
    hca: mlx5_0
    trust: dscp
    pfc: 0,0,0,1,0,0,0,0
    dscp2prio: {"26": 3, "48": 6}
    roce_tos: 106
    ecn: {np_priorities: [3], rp_priorities: [3]}
    cnp: {dscp: 48, priority: 6}
    mtu: 9000

- name: Every port of the rendered nic-roce.json
  aiinfra.hwaac.roce_qos:
    interface: "{{ item.interface }}"
    hca: "{{ item.hca }}"
    trust: "{{ item.trust }}"
    pfc: "{{ item.pfc }}"
    dscp2prio: "{{ item.dscp2prio }}"
    roce_tos: "{{ item.roce_tos }}"
    ecn: "{{ item.ecn }}"
    cnp: "{{ item.cnp }}"
    mtu: "{{ item.mtu }}"
  loop: "{{ (lookup('ansible.builtin.file', 'nic-roce.json') | from_json).ports }}"

- name: Every port of the rendered nic-roce.json in one invocation (the entries' own keys, without 'port')
  aiinfra.hwaac.roce_qos:
    ports: >-
      {{ (lookup('ansible.builtin.file', 'nic-roce.json') | from_json).ports
         | map('dict2items')
         | map('selectattr', 'key', 'in', ['interface', 'hca', 'trust', 'pfc', 'dscp2prio', 'roce_tos', 'ecn',
                                            'cnp', 'mtu'])
         | map('list') | map('items2dict') | list }}
  register: qos

- name: Ports whose DSCP map could not be checked in check mode
  ansible.builtin.debug:
    msg: "{{ qos.unverified | list }}"
"""

RETURN = r"""
changes:
  description: What this run changed (or, in check mode, would change), C(item -> {before, after}).
  returned: when O(interface) is given (on failure too, with the differences found up to the failure)
  type: dict
  sample: {"trust": {"before": "pcp", "after": "dscp"}, "ecn.np.3": {"before": 0, "after": 1}}
unverified:
  description:
    - Desired values that could not be read in check mode (C(item -> desired)).
    - With O(ports), C(interface -> {item -> desired}) for the ports that have any.
  returned: always
  type: dict
state:
  description: The managed values as read at the end, C(item -> value).
  returned: when O(interface) is given
  type: dict
mlnx_qos:
  description: The mlnx_qos status as parsed at the end (trust, pfc, dscp2prio, dcbx, cable_len).
  returned: when O(interface) is given and trust, pfc or dscp2prio is managed
  type: dict
raw:
  description: The outputs of the commands run, in order.
  returned: when O(interface) is given
  type: list
  elements: str
ports:
  description:
    - One result per entry of O(ports), in the same order.
    - A port that failed has RV(ports[].failed) true and RV(ports[].msg); its RV(ports[].changes) holds the
      differences found up to the failure, and RV(ports[].changed) tells whether anything was written to it.
  returned: when O(ports) is given
  type: list
  elements: dict
  contains:
    interface:
      description: The netdev, as given.
      type: str
      sample: rail0
    changed:
      description: Whether this port was changed (in check mode, would be).
      type: bool
    changes:
      description: As RV(changes), for this port.
      type: dict
    unverified:
      description: As RV(unverified), for this port.
      type: dict
    state:
      description: As RV(state), for this port (not for a failed port).
      type: dict
    mlnx_qos:
      description: As RV(mlnx_qos), for this port (not for a failed port).
      type: dict
    raw:
      description: As RV(raw), for this port.
      type: list
      elements: str
    failed:
      description: True when this port failed.
      type: bool
    msg:
      description: Why this port failed.
      type: str
  sample:
    - {"interface": "rail0", "changed": true, "changes": {"mtu": {"before": 1500, "after": 9000}},
       "unverified": {}, "state": {"mtu": 9000}, "raw": []}
failed_ports:
  description: The interfaces that failed, in the order of O(ports); the task failed.
  returned: on failure, when O(ports) is given and any port failed
  type: list
  elements: str
  sample: ["rail3"]
"""

import copy

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aiinfra.hwaac.plugins.module_utils.per_item import PerItem
from ansible_collections.aiinfra.hwaac.plugins.module_utils.roce_port import PORT_OPTIONS, Port


def main() -> None:
    single_options = {k: (dict(v, required=False) if k == "interface" else v) for k, v in PORT_OPTIONS.items()}
    module = AnsibleModule(
        argument_spec={
            **single_options,
            "ports": {"type": "list", "elements": "dict", "options": copy.deepcopy(PORT_OPTIONS)},
            "sysfs_root": {"type": "str", "default": "/sys"},
            "configfs_root": {"type": "str", "default": "/sys/kernel/config"},
        },
        mutually_exclusive=[["ports", name] for name in PORT_OPTIONS],
        required_one_of=[["interface", "ports"]],
        supports_check_mode=True,
    )
    p = module.params
    roots = {"sysfs_root": p["sysfs_root"], "configfs_root": p["configfs_root"]}
    single = p["ports"] is None
    entries = [{k: p[k] for k in PORT_OPTIONS}] if single else p["ports"]
    ports = [Port(module, {**entry, **roots}) for entry in entries]
    driver = PerItem(module, ports, single=single, key="interface", option="ports", tool="roce_qos")
    driver.check()  # every port is checked before anything runs
    driver.run(
        lambda results, diff: {
            "changed": any(r["changed"] for r in results),
            "unverified": {r["interface"]: r["unverified"] for r in results if r["unverified"]},
            "diff": diff,
        }
    )


if __name__ == "__main__":
    main()
