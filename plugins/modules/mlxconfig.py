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
extends_documentation_fragment:
  - aiinfra.hwaac.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
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

import json
import os
import shlex

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aiinfra.hwaac.plugins.module_utils.mlxconfig import (
    NEXT_BOOT,
    RESET_POWER_CYCLE,
    RESET_SKIPPED,
    MlxconfigError,
    QueryOutput,
    array_range,
    check_name,
    parse_query,
    parse_set_result,
    set_token,
    split_indexed,
    strongest_reset,
    unknown_params_in,
    value_matches,
)


class DeviceFailure(Exception):
    """One device could not be brought to the desired values; ``extra`` goes into the result as it is."""

    def __init__(self, msg: str, **extra: object) -> None:
        super().__init__(msg)
        self.msg = msg
        self.extra = extra


def prepare(device: str, params: dict, array_params: list[str]) -> dict[str, str]:
    """Check the names and values of one device before anything runs; returns ``NAME -> set token``.

    Raises :class:`MlxconfigError` naming the bad name or value.
    """
    for name in [*params, *array_params]:
        check_name(name)
    return {name: set_token(value) for name, value in params.items()}


def boot_id(path: str) -> str:
    """The current boot id, or "" when it cannot be read."""
    try:
        with open(path, encoding="ascii") as fh:
            return fh.read().strip()
    except OSError:
        return ""


class DeviceRun:
    """Query, set and verify the parameters of one device; every mlxconfig output is kept for ``raw``.

    Errors raise :class:`DeviceFailure`; ``would_set`` and ``applied`` tell how far the run came.
    """

    def __init__(self, module: AnsibleModule, executable: str, device: str, desired: dict, array_params: list) -> None:
        self.module = module
        self.executable = executable
        self.device = device
        self.desired: dict[str, object] = dict(desired)
        self.array_params: list[str] = list(array_params)
        self.raw: list[str] = []
        self.would_set: dict[str, str] = {}
        self.applied: dict[str, str] = {}  # set by this run and seen in Next Boot
        self.wrote = False  # mlxconfig accepted a set on this device
        self.diff: dict[str, dict[str, str]] = {"before": {}, "after": {}}

    def fail(self, msg: str, **kw: object) -> None:
        raise DeviceFailure(msg, **kw)

    def run(self, args: list[str]) -> tuple[int, str]:
        cmd = [self.executable, *args]
        rc, out, err = self.module.run_command(cmd)
        text = out + (("\n" + err) if err.strip() else "")
        self.raw.append(f"$ {' '.join(shlex.quote(c) for c in cmd)}\n{text}")
        return rc, text

    def query(self, names: list[str]) -> QueryOutput:
        """``mlxconfig -d DEV -e q NAMES``: parsed; unknown names and tool errors fail the device."""
        rc, text = self.run(["-d", self.device, "-e", "q", *names])
        unknown = unknown_params_in(text)
        if unknown:
            self.fail(
                f"unknown mlxconfig parameter {', '.join(unknown)} on {self.device} (mlxconfig: "
                f"'-E- Unknown Parameter: {unknown[0]}')",
                unknown_params=unknown,
            )
        try:
            parsed = parse_query(text)
        except MlxconfigError as exc:
            self.fail(f"mlxconfig query on {self.device} failed (rc={rc}): {exc}")
        if rc != 0:
            self.fail(f"mlxconfig query on {self.device} exited {rc}")
        return parsed

    def read_all(self, bases: list[str], arrays_wanted: set[str]) -> dict[str, dict[str, str]]:
        """Query ``bases`` (scalar names and array base names), then expand arrays with ``NAME[lo..hi]``.

        Returns ``{name: {column: raw}}`` for scalars and ``NAME[i]`` elements.
        """
        first = self.query(bases)
        rows: dict[str, dict[str, str]] = {}
        expand: list[str] = []
        for name in bases:
            if name not in first.rows:
                self.fail(f"mlxconfig did not report {name} on {self.device} (not supported by this firmware?)")
            rng = array_range(first.rows[name].get(NEXT_BOOT, ""))
            if rng:
                if name in arrays_wanted:
                    expand.append(f"{name}[{rng[0]}..{rng[1]}]")
                else:
                    rows[name] = first.rows[name]  # an array asked for as a scalar: reported, refused later
            else:
                rows[name] = first.rows[name]
        if expand:
            rows.update(self.query(expand).rows)
        return rows

    def apply(self, tokens: dict[str, str], p: dict) -> dict:
        """Bring the device to the desired values; returns its result (the fields of the single-device form)."""
        device = self.device
        desired = self.desired
        check_mode = self.module.check_mode
        arrays_wanted = {split_indexed(n)[0] for n in desired if split_indexed(n)[1] is not None}
        arrays_wanted.update(self.array_params)
        bases = sorted({split_indexed(n)[0] for n in desired} | set(self.array_params))
        if not bases:
            return {
                "device": device,
                "changed": False,
                "set": {},
                "would_set": {},
                "reboot_required": False,
                "reset_required": "none",
                "reset_reason": "no parameters managed",
                "pending": {},
                "query": {},
                "raw": [],
            }

        before = self.read_all(bases, arrays_wanted)
        for name in desired:
            if name not in before:
                base, idx = split_indexed(name)
                if idx is not None and base in before:
                    self.fail(f"{base} is not an array on {device}; give it without an index")
                rng = [r for r in before if split_indexed(r)[0] == base]
                self.fail(f"{name} is out of range on {device} (elements: {', '.join(rng) or 'none'})")
            if array_range(before[name].get(NEXT_BOOT, "")):
                self.fail(f"{name} is an array ({before[name][NEXT_BOOT]}) on {device}; set its elements as {name}[i]")

        # compare with Next Boot: a value already pending is not set again
        would_set = {n: tokens[n] for n in desired if not value_matches(desired[n], before[n][NEXT_BOOT])}
        self.would_set = would_set
        self.diff = {
            "before": {n: before[n][NEXT_BOOT] for n in sorted(desired)},
            "after": {n: (str(desired[n]) if n in would_set else before[n][NEXT_BOOT]) for n in sorted(desired)},
        }

        after = before
        reset_hint = ""
        reset_msg = ""
        if would_set and not check_mode:
            rc, text = self.run(["-y", "-d", device, "set", *[f"{n}={v}" for n, v in sorted(would_set.items())]])
            unknown = unknown_params_in(text)
            if unknown:
                self.fail(f"unknown mlxconfig parameter {', '.join(unknown)} on {device}", unknown_params=unknown)
            if rc != 0:
                self.fail(f"mlxconfig set on {device} failed (rc={rc})")
            self.wrote = True
            try:
                reset_hint, reset_msg = parse_set_result(text)
            except MlxconfigError as exc:
                self.fail(f"mlxconfig set on {device}: {exc}")
            after = self.read_all(bases, arrays_wanted)
            not_applied = {
                n: after[n][NEXT_BOOT] for n in would_set if not value_matches(desired[n], after[n][NEXT_BOOT])
            }
            self.applied = {n: v for n, v in would_set.items() if n not in not_applied}
            if not_applied:
                names = ", ".join(
                    f"{n} (wanted {desired[n]!s}, Next Boot is {v})" for n, v in sorted(not_applied.items())
                )
                self.fail(
                    f"mlxconfig accepted the set on {device} but did not apply: {names}",
                    not_applied=sorted(not_applied),
                )
        did_set = dict(self.applied)

        has_current = all("Current" in after[n] for n in desired)
        pending: dict[str, dict[str, str]] = {}
        for n in sorted(desired) if has_current else []:
            if check_mode and n in would_set:
                # predicted: Next Boot would become the desired value
                if not value_matches(desired[n], after[n]["Current"]):
                    pending[n] = {"current": after[n]["Current"], "next_boot": str(desired[n])}
            elif after[n]["Current"] != after[n][NEXT_BOOT]:
                pending[n] = {"current": after[n]["Current"], "next_boot": after[n][NEXT_BOOT]}
        reboot_required = bool(pending) if has_current else bool(did_set or (check_mode and would_set))

        reset_required, reset_reason = "none", "no managed parameter is pending"
        if reboot_required:
            reset_required, reset_reason = "reboot", "values are pending in Next Boot; mlxconfig asks for a reboot"
            if not has_current:
                reset_reason = (
                    "values were set; this firmware does not report Current values, assume a reboot is needed"
                )
            if reset_hint == RESET_POWER_CYCLE:
                reset_required, reset_reason = "power_cycle", f"mlxconfig: {reset_msg}"
            elif reset_hint == RESET_SKIPPED:
                reset_required = "power_cycle"
                reset_reason = (
                    f"mlxconfig: {reset_msg} (BlueField in DPU mode: a host power cycle loads the values, "
                    "sriov-network-operator issue #662)"
                )
            if p["fw_reset_after_config"]:
                reset_required = "mlxfwreset"
                reset_reason = (
                    "fw_reset_after_config: a warm reboot does not load new firmware values on this host "
                    "(nic-configuration-operator FW_RESET_AFTER_CONFIG_UPDATE)"
                )

        # Pending values that survived a reboot: record the boot id when values become pending; if the same values
        # are still pending under a different boot id, the reboot did not load them (the DGX case,
        # nic-configuration-operator PRs #188/#189) and only mlxfwreset (or a power cycle) will.
        if p["state_dir"] and has_current:
            safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in device)
            state_file = os.path.join(p["state_dir"], f"{safe}.json")
            now = boot_id(p["boot_id_path"])
            recorded: dict = {}
            if os.path.exists(state_file):
                try:
                    with open(state_file, encoding="utf-8") as fh:
                        recorded = json.load(fh)
                except (OSError, ValueError):
                    recorded = {}
            same_values = recorded.get("pending") == pending
            if pending and same_values and now and recorded.get("boot_id") and recorded["boot_id"] != now:
                reset_required = "mlxfwreset"
                reset_reason = (
                    f"the same values were already pending before the last reboot (boot id "
                    f"{recorded['boot_id']}, now {now}): a warm reboot did not load them; run "
                    f"'mlxfwreset -d {device} reset' or power cycle"
                )
            if not check_mode:
                if pending and not same_values:
                    os.makedirs(p["state_dir"], exist_ok=True)
                    with open(state_file, "w", encoding="utf-8") as fh:
                        json.dump({"boot_id": now, "pending": pending}, fh, sort_keys=True)
                elif not pending and os.path.exists(state_file):
                    os.remove(state_file)

        query = {n: {k.lower().replace(" ", "_"): v for k, v in after[n].items()} for n in sorted(after)}
        return {
            "device": device,
            "changed": bool(did_set) or (check_mode and bool(would_set)),
            "set": did_set,
            "would_set": would_set,
            "reboot_required": reboot_required,
            "reset_required": reset_required,
            "reset_reason": reset_reason,
            "pending": pending,
            "query": query,
            "raw": self.raw,
        }

    def failure(self, exc: DeviceFailure) -> dict:
        """The result of a device that failed: what was found and done up to the failure."""
        return {
            "device": self.device,
            "failed": True,
            "msg": exc.msg,
            "changed": self.wrote,
            "set": dict(self.applied),
            "would_set": self.would_set,
            "raw": self.raw,
            **exc.extra,
        }


def combine(results: list[dict]) -> dict:
    """The top-level fields of the list form: ``changed``, ``reboot_required``, ``reset_required`` (the strongest),
    ``reset_reason`` and ``diff``, over every device that did not fail."""
    ok = [r for r in results if not r.get("failed")]
    reset_required = strongest_reset([r["reset_required"] for r in ok])
    if reset_required == "none":
        reset_reason = "no managed parameter is pending"
    else:
        reset_reason = "; ".join(
            f"{r['device']}: {r['reset_reason']}" for r in ok if r["reset_required"] == reset_required
        )
    return {
        "changed": any(r["changed"] for r in results),
        "reboot_required": any(r["reboot_required"] for r in ok),
        "reset_required": reset_required,
        "reset_reason": reset_reason,
    }


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

    # every name and value is checked before anything runs
    prepared: list[tuple[dict, dict[str, str]]] = []
    for entry in entries:
        if any(entry["device"] == done[0]["device"] for done in prepared):
            module.fail_json(msg=f"device {entry['device']} is listed more than once in devices")
        try:
            prepared.append((entry, prepare(entry["device"], entry["params"], entry["array_params"])))
        except MlxconfigError as exc:
            module.fail_json(msg=str(exc) if single else f"{entry['device']}: {exc}")

    executable = p["executable"]
    if os.sep not in executable:
        executable = module.get_bin_path(executable, required=True)

    if single:
        run = DeviceRun(module, executable, p["device"], p["params"], p["array_params"])
        try:
            result = run.apply(prepared[0][1], p)
        except DeviceFailure as exc:
            module.fail_json(msg=exc.msg, raw=run.raw, **exc.extra)
        result.pop("device")
        module.exit_json(**result, diff=run.diff)

    # list form: every device is processed, then the task fails naming each device that failed
    results: list[dict] = []
    diff: dict[str, dict] = {"before": {}, "after": {}}
    for entry, tok in prepared:
        run = DeviceRun(module, executable, entry["device"], entry["params"], entry["array_params"])
        try:
            results.append(run.apply(tok, p))
        except DeviceFailure as exc:
            results.append(run.failure(exc))
        if run.diff["before"] or run.diff["after"]:
            diff["before"][run.device] = run.diff["before"]
            diff["after"][run.device] = run.diff["after"]
    summary = combine(results)
    failed = [r for r in results if r.get("failed")]
    if failed:
        module.fail_json(
            msg=f"mlxconfig failed on {len(failed)} of {len(results)} devices: " + "; ".join(r["msg"] for r in failed),
            failed_devices=[r["device"] for r in failed],
            devices=results,
            diff=diff,
            **summary,
        )
    module.exit_json(devices=results, diff=diff, **summary)


if __name__ == "__main__":
    main()
