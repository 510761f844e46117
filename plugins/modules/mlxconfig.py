#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache-2.0
"""Ansible module aiinfra.hwaac.mlxconfig: ConnectX firmware (NVconfig) parameters, idempotent."""

# ruff: noqa: E402  (Ansible modules keep DOCUMENTATION/EXAMPLES/RETURN above the imports)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: mlxconfig
short_description: Set ConnectX firmware parameters with mlxconfig, only where they differ
description:
  - Queries the given parameters with C(mlxconfig -d DEVICE -e q NAME...), a targeted query (a full query takes
    about 13 s, a targeted one about 1.4 s), compares each desired value with the B(Next Boot) value, sets only the
    differing ones with C(mlxconfig -y -d DEVICE set A=1 B=2), then queries again and reports a parameter as changed
    only when its Next Boot value really became the desired one.
  - A value already pending in Next Boot is not set again. A set that mlxconfig accepted (exit 0) but that did not
    reach Next Boot fails the task and names the parameter.
  - Firmware values take effect only after a reboot or a firmware reset. RV(reboot_required) tells whether any
    managed parameter's Next Boot differs from its Current value, and RV(reset_required) says what is needed.
  - Array parameters (shown as C(Array[0..7])) are set element by element as C(NAME[i]); the module expands them
    with a C(NAME[lo..hi]) query.
  - Works with C(mstconfig) (mstflint) too, which prints the same tables; see O(executable).
  - Several devices are handled in one invocation with O(devices) (one task and one module start for all HCAs of a
    host instead of one per HCA). Each device is queried, set and verified as above, one after the other, and its
    result is returned in RV(devices). Every device is processed even when one fails; the task then fails with a
    message naming every failed device and its parameters, and RV(devices) still holds the result of each device,
    failed or not.
version_added: "0.1.0"
author: hwaac maintainers (@aiinfra)
options:
  device:
    description:
      - The device as mlxconfig takes it on C(-d), for example C(mlx5_0), a PCI address C(0000:ca:00.0) or an MST
        device C(/dev/mst/mt4129_pciconf0).
      - One of O(device) and O(devices) is required; they are mutually exclusive.
    type: str
  params:
    description:
      - Desired values of O(device), C(NAME -> value). Values may be integers (C(2)), booleans (C(true)), enum or
        boolean names (C(ETH), C(True)) or the C(ETH(2)) form that mlxconfig prints. Array elements are given as
        C(NAME[i]).
      - Not with O(devices) (give O(devices[].params) there).
    type: dict
    default: {}
  array_params:
    description:
      - Array parameters to report expanded (all elements, as C(NAME[i])) in RV(query) even when none of their
        elements is in O(params).
      - Not with O(devices) (give O(devices[].array_params) there).
    type: list
    elements: str
    default: []
  devices:
    description:
      - Several devices in one invocation, each with its own parameters. Mutually exclusive with O(device),
        O(params) and O(array_params). The other options apply to every device.
      - All names and values of all devices are checked before anything runs; a device may be listed only once.
      - Each device is processed even when another fails; see RV(devices) and RV(failed_devices).
    type: list
    elements: dict
    suboptions:
      device:
        description: The device as mlxconfig takes it on C(-d), as O(device).
        type: str
        required: true
      params:
        description: Desired values of this device, as O(params).
        type: dict
        default: {}
      array_params:
        description: Array parameters of this device to report expanded, as O(array_params).
        type: list
        elements: str
        default: []
  executable:
    description:
      - The mlxconfig binary, C(mlxconfig) (NVIDIA MFT) or C(mstconfig) (mstflint); looked up on C(PATH) unless a
        path is given.
    type: str
    default: mlxconfig
  fw_reset_after_config:
    description:
      - Declare that on this host a warm reboot does not load new firmware values and C(mlxfwreset) is needed (some
        DGX systems; NVIDIA nic-configuration-operator feature flag C(FW_RESET_AFTER_CONFIG_UPDATE)). When true and
        anything is pending, RV(reset_required) is C(mlxfwreset).
    type: bool
    default: false
  state_dir:
    description:
      - Directory where the module records the boot id at which values became pending. When the same values are
        still pending after the boot id changed, a reboot did not load them and RV(reset_required) becomes
        C(mlxfwreset). Set to an empty string to turn this off. Not written in check mode.
    type: str
    default: /var/lib/hwaac/mlxconfig
  boot_id_path:
    description:
      - File holding the current boot id.
    type: str
    default: /proc/sys/kernel/random/boot_id
notes:
  - Supports check mode (queries only and returns what would be set) and diff mode (before/after Next Boot value per
    parameter; with O(devices), per device and parameter).
  - Needs NVIDIA MFT or mstflint on the host and root privileges.
seealso:
  - module: aiinfra.hwaac.roce_qos
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.changes]
"""

EXAMPLES = r"""
- name: RoCE firmware settings on the first rail NIC
  aiinfra.hwaac.mlxconfig:
    device: mlx5_0
    params:
      LINK_TYPE_P1: ETH
      ATS_ENABLED: false
      ADVANCED_PCI_SETTINGS: 1
      ROCE_CC_PRIO_MASK_P1: 255
      CNP_DSCP_P1: 48
      CNP_802P_PRIO_P1: 6
  register: fw

- name: One array element
  aiinfra.hwaac.mlxconfig:
    device: 0000:ca:00.0
    params:
      "HOST_CHAINING_DESCRIPTORS[2]": 5

- name: Reboot when firmware values are pending
  ansible.builtin.reboot:
  when: fw.reboot_required and fw.reset_required == 'reboot'

- name: All HCAs of the host in one invocation
  aiinfra.hwaac.mlxconfig:
    devices:
      - device: mlx5_0
        params: {LINK_TYPE_P1: ETH, ATS_ENABLED: false}
      - device: mlx5_1
        params: {LINK_TYPE_P1: ETH, ATS_ENABLED: false}
  register: fw_all

- name: HCAs whose pending values a reboot does not load
  ansible.builtin.debug:
    msg: "{{ fw_all.devices | selectattr('reset_required', 'equalto', 'mlxfwreset') | map(attribute='device') }}"
"""

RETURN = r"""
set:
  description: Parameters set by this run (empty in check mode), with the value written.
  returned: when O(device) is given
  type: dict
  sample: {"LINK_TYPE_P1": "ETH"}
would_set:
  description: Parameters whose Next Boot differed from the desired value before this run (what check mode would set).
  returned: when O(device) is given
  type: dict
  sample: {"LINK_TYPE_P1": "ETH"}
reboot_required:
  description: True when any managed parameter's Next Boot value differs from its Current value (set now or pending
    from earlier). When the firmware cannot report Current values, true when anything was set by this run. With
    O(devices), true when it is true for any device.
  returned: always
  type: bool
reset_required:
  description:
    - What loads the pending values - C(none), C(reboot), C(power_cycle) (mlxconfig said so, or a BlueField in DPU
      mode) or C(mlxfwreset) (declared with O(fw_reset_after_config), or a reboot already failed to load them).
    - With O(devices), the strongest over the devices that did not fail, in the order C(mlxfwreset) >
      C(power_cycle) > C(reboot) > C(none) (the order in which the module decides for one device); what each
      device needs is in RV(devices[].reset_required).
  returned: always
  type: str
  sample: reboot
reset_reason:
  description:
    - Why RV(reset_required) has its value.
    - "With O(devices), C(DEVICE: reason) of each device that needs it, joined with C(; )."
  returned: always
  type: str
pending:
  description: Managed parameters whose Next Boot differs from Current, C(NAME -> {current, next_boot}).
  returned: when O(device) is given
  type: dict
  sample: {"LINK_TYPE_P1": {"current": "IB(1)", "next_boot": "ETH(2)"}}
query:
  description: The managed parameters as last queried, C(NAME -> {default, current, next_boot}) (columns the
    firmware does not report are absent).
  returned: when O(device) is given
  type: dict
raw:
  description: The mlxconfig outputs of this run, in order (queries and the set).
  returned: when O(device) is given
  type: list
  elements: str
unknown_params:
  description: Names that mlxconfig did not know (C(-E- Unknown Parameter)); the task failed.
  returned: on failure, when O(device) is given and mlxconfig refused a name
  type: list
  elements: str
not_applied:
  description: Names that mlxconfig accepted in a set but that did not reach Next Boot; the task failed.
  returned: on failure, when O(device) is given and a set did not apply
  type: list
  elements: str
devices:
  description:
    - One result per entry of O(devices), in the same order.
    - A device that failed has RV(devices[].failed) true and RV(devices[].msg), and only the fields known up to the
      failure (RV(devices[].set), RV(devices[].would_set), RV(devices[].raw), and RV(devices[].unknown_params) or
      RV(devices[].not_applied) when they apply).
  returned: when O(devices) is given
  type: list
  elements: dict
  contains:
    device:
      description: The device, as given.
      type: str
      sample: mlx5_0
    changed:
      description: Whether this device was changed (in check mode, would be). For a failed device, whether
        mlxconfig accepted a set on it before the failure.
      type: bool
    set:
      description: As RV(set), for this device; for a failed device, the values that reached Next Boot.
      type: dict
    would_set:
      description: As RV(would_set), for this device.
      type: dict
    reboot_required:
      description: As RV(reboot_required), for this device.
      type: bool
    reset_required:
      description: As RV(reset_required), for this device.
      type: str
    reset_reason:
      description: As RV(reset_reason), for this device.
      type: str
    pending:
      description: As RV(pending), for this device.
      type: dict
    query:
      description: As RV(query), for this device.
      type: dict
    raw:
      description: As RV(raw), for this device.
      type: list
      elements: str
    failed:
      description: True when this device failed.
      type: bool
    msg:
      description: Why this device failed.
      type: str
    unknown_params:
      description: As RV(unknown_params), for this device.
      type: list
      elements: str
    not_applied:
      description: As RV(not_applied), for this device.
      type: list
      elements: str
  sample:
    - {"device": "mlx5_0", "changed": true, "set": {"LINK_TYPE_P1": "2"}, "would_set": {"LINK_TYPE_P1": "2"},
       "reboot_required": true, "reset_required": "reboot",
       "reset_reason": "values are pending in Next Boot; mlxconfig asks for a reboot",
       "pending": {"LINK_TYPE_P1": {"current": "IB(1)", "next_boot": "ETH(2)"}}, "query": {}, "raw": []}
failed_devices:
  description: The devices that failed, in the order of O(devices); the task failed.
  returned: on failure, when O(devices) is given and any device failed
  type: list
  elements: str
  sample: ["mlx5_3"]
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aiinfra.hwaac.plugins.module_utils.mlxconfig_device import DeviceRun, combine
from ansible_collections.aiinfra.hwaac.plugins.module_utils.per_item import PerItem


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "device": {"type": "str"},
            "params": {"type": "dict", "default": {}},
            "array_params": {"type": "list", "elements": "str", "default": []},
            "devices": {
                "type": "list",
                "elements": "dict",
                "options": {
                    "device": {"type": "str", "required": True},
                    "params": {"type": "dict", "default": {}},
                    "array_params": {"type": "list", "elements": "str", "default": []},
                },
            },
            "executable": {"type": "str", "default": "mlxconfig"},
            "fw_reset_after_config": {"type": "bool", "default": False},
            "state_dir": {"type": "str", "default": "/var/lib/hwaac/mlxconfig"},
            "boot_id_path": {"type": "str", "default": "/proc/sys/kernel/random/boot_id"},
        },
        mutually_exclusive=[["device", "devices"], ["params", "devices"], ["array_params", "devices"]],
        required_one_of=[["device", "devices"]],
        supports_check_mode=True,
    )
    p = module.params
    single = p["devices"] is None
    entries = (
        [{"device": p["device"], "params": p["params"], "array_params": p["array_params"]}] if single else p["devices"]
    )
    runs = [DeviceRun(module, e["device"], e["params"], e["array_params"], p) for e in entries]
    driver = PerItem(module, runs, single=single, key="device", option="devices", tool="mlxconfig", named=False)
    driver.check()  # every name and value is checked before anything runs

    executable = p["executable"]
    if os.sep not in executable:
        executable = module.get_bin_path(executable, required=True)
    for run in runs:
        run.executable = executable
    driver.run(lambda results, diff: {"diff": diff, **combine(results)})


if __name__ == "__main__":
    main()
