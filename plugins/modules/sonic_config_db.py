#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Host side of aiinfra.hwaac.sonic_config_db: runs SONiC's tools and returns their raw output.

The action plugin of the same name (plugins/action/sonic_config_db.py) reads the desired config, computes the
patch with hwaac.apply on the controller and calls this module with ``operation`` set, once per step.
"""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: sonic_config_db
short_description: Push a rendered SONiC config_db to a switch through the generic config updater
version_added: "0.1.0"
description:
  - Compares the switch's running CONFIG_DB (C(sonic-cfggen -d --print-data)) with a desired config_db (as
    rendered by C(hwaac plan) or C(hwaac netbox render)) and applies the difference as an RFC 6902 JSON patch
    through SONiC's generic config updater, C(config apply-patch), after taking a checkpoint with
    C(config checkpoint).
  - Only the tables of the desired config are changed (narrowed with O(tables)). In most of them desired entries
    and fields are added or replaced and everything else stays (as C(config load) merges); in O(owned_tables)
    stale entries are removed too.
  - When C(config apply-patch) fails, or the running config afterwards does not hold the desired values, the
    checkpoint is restored with C(config rollback) and the task fails with the tool's message. On success the
    config is saved (C(config save -y)) and the checkpoint deleted, unless O(keep_checkpoint) leaves the push
    pending until a later task confirms it (O(state=committed) saves and deletes the checkpoint) or undoes it
    (O(state=rolled_back) runs C(config rollback) to the checkpoint), e.g. after a health gate.
  - A change that would remove or change C(MGMT_INTERFACE), C(MGMT_PORT), C(MGMT_VRF_CONFIG) or the
    C(Loopback0) entries of C(LOOPBACK_INTERFACE) is refused before anything is touched, in check mode too.
  - The patch is computed on the controller by the action plugin (Python package C(hwaac)); the part that runs
    on the switch only runs the tools and returns their output.
author:
  - hwaac maintainers (@aiinfra)
options:
  state:
    description:
      - V(present) pushes the desired config (O(config) or O(src)).
      - V(committed) confirms a push left pending by O(keep_checkpoint), saving the running config (with O(save))
        and deleting the checkpoint O(checkpoint_name). Nothing happens, C(changed=false), when there is no such
        checkpoint.
      - V(rolled_back) undoes a pending push with C(config rollback) to the checkpoint O(checkpoint_name), which
        is then deleted. Nothing happens, C(changed=false), when there is no such checkpoint.
    type: str
    choices: [present, committed, rolled_back]
    default: present
  keep_checkpoint:
    description:
      - With O(state=present), after a successful change neither save nor delete the checkpoint; the push stays
        pending until a task with O(state=committed) or O(state=rolled_back) (RV(checkpoint_kept) says so).
      - The role M(aiinfra.hwaac.switch_config) uses it to keep the checkpoint until the BGP gate passes.
    type: bool
    default: false
  config:
    description:
      - The desired config_db as a dict of tables, each a dict of keys, each a dict of fields.
      - With O(state=present), exactly one of O(config) and O(src) is required.
    type: dict
  src:
    description:
      - Path on the controller of the rendered C(config_db.json), e.g.
        C(<plan folder>/switches/<switch>/config_db.json). Read by the action plugin; relative paths are looked
        up like other files of the play.
    type: path
  tables:
    description:
      - Change only these tables of the desired config (default all of them). Naming a table the desired config
        lacks is an error.
    type: list
    elements: str
  owned_tables:
    description:
      - Tables that become exactly the desired table, stale entries removed. Default (unset) is hwaac's list
        C(INTERFACE), C(VLAN), C(VLAN_MEMBER), C(VLAN_INTERFACE), C(BGP_NEIGHBOR), C(BGP_NEIGHBOR_AF),
        C(DEVICE_NEIGHBOR).
    type: list
    elements: str
  keep_drains:
    description:
      - Keep what network mitigation (C(hwaac remediate)) drained. A session of the desired config whose running
        outbound route map is one of hwaac's graceful-shutdown maps (C(HWAAC_GSHUT*)) keeps that map and its
        C(admin_status), and those maps stay, so that a rollout does not put a drained link back into service.
      - C(playbooks/mitigate.yml) sets it to V(false), since its changes are the drains and undrains themselves.
    type: bool
    default: true
  checkpoint_name:
    description:
      - Name of the C(config checkpoint) taken before the patch and restored on failure.
    type: str
    default: hwaac-pre-push
  save:
    description:
      - Run C(config save -y) after a successful change so that it survives a reboot.
    type: bool
    default: true
  operation:
    description:
      - Internal, set by the action plugin for each step; leave it unset.
      - V(read) returns the running config; V(apply) checkpoints and applies O(patch), rolling back when the
        tool fails; V(finish) saves and deletes the checkpoint; V(rollback) restores the checkpoint; V(commit) and
        V(revert) are V(finish) and V(rollback) for a checkpoint that may not exist (nothing done then).
    type: str
    choices: [read, apply, finish, rollback, commit, revert]
    default: read
  patch:
    description:
      - Internal, set by the action plugin for O(operation=apply); the RFC 6902 patch to apply.
    type: list
    elements: dict
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.platform]
attributes:
  check_mode:
    support: full
    details: Reads the running config and returns the patch, the would-be tables and the diff; applies nothing.
  diff_mode:
    support: full
    details: One diff per changed table, the table as sorted JSON before and after.
  platform:
    platforms: [sonic]
    support: full
    details: Community SONiC with the generic config updater (sonic-utilities 2021 or later).
notes:
  - Needs root on the switch for C(config) (use C(become)).
  - The generic config updater validates the result against SONiC's YANG models and refuses tables without a
    model unless told otherwise; such a refusal is reported as the task's failure message.
requirements:
  - On the controller, the Python packages C(hwaac) and C(jsonpatch).
seealso:
  - module: aiinfra.hwaac.bgp_sessions
  - name: SONiC generic config update and rollback design
    description: The design of C(config apply-patch), C(checkpoint) and C(rollback).
    link: https://github.com/sonic-net/SONiC/blob/master/doc/config-generic-update-rollback/SONiC_Generic_Config_Update_and_Rollback_Design.md
"""

EXAMPLES = r"""
- name: Push the switch's rendered config_db from a plan folder
  aiinfra.hwaac.sonic_config_db:
    src: "build/plan/switches/{{ inventory_hostname }}/config_db.json"
  become: true

- name: Only the QoS tables, without saving
  aiinfra.hwaac.sonic_config_db:
    src: "build/plan/switches/{{ inventory_hostname }}/config_db.json"
    tables: [DSCP_TO_TC_MAP, TC_TO_QUEUE_MAP, SCHEDULER, WRED_PROFILE, QUEUE, PORT_QOS_MAP]
    save: false
  become: true

- name: Push, keeping the checkpoint until the sessions are checked
  aiinfra.hwaac.sonic_config_db:
    src: "build/plan/switches/{{ inventory_hostname }}/config_db.json"
    keep_checkpoint: true
  register: pushed
  become: true

- name: Sessions up, or back to the checkpoint
  block:
    - name: BGP gate
      aiinfra.hwaac.bgp_sessions:
        neighbors: "{{ pushed.bgp_neighbors }}"
      when: pushed is changed
      become: true
    - name: Confirm the push (save, delete the checkpoint)
      aiinfra.hwaac.sonic_config_db:
        state: committed
      become: true
  rescue:
    - name: Undo the push
      aiinfra.hwaac.sonic_config_db:
        state: rolled_back
      become: true
    - name: Fail the host
      ansible.builtin.fail:
        msg: "{{ ansible_failed_result.msg }} (rolled back)"

- name: Show what would change, per table
  aiinfra.hwaac.sonic_config_db:
    config: "{{ lookup('ansible.builtin.file', 'leaf1/config_db.json') | from_json }}"
  check_mode: true
  diff: true
"""

RETURN = r"""
changed:
  description: Whether the running config differed from the desired one (in check mode, whether it would change).
  returned: always
  type: bool
patch:
  description: The RFC 6902 patch applied (or that would be applied), paths escaped per RFC 6901.
  returned: always
  type: list
  elements: dict
  sample: [{"op": "add", "path": "/INTERFACE/Ethernet0|172.16.0.0~131", "value": {}}]
tables_changed:
  description: Per changed table, the number of operations of each kind.
  returned: always
  type: dict
  sample: {"INTERFACE": {"add": 1, "remove": 1}, "BGP_NEIGHBOR": {"replace": 1}}
after:
  description: The changed tables as they are after the push (in check mode, as they would be).
  returned: always
  type: dict
  sample: {"BGP_NEIGHBOR": {"default|10.1.0.0": {"asn": "4200000001", "holdtime": "10"}}}
bgp_neighbors:
  description: The BGP neighbours (VRF default, not shut down) the desired config declares, for a health gate.
  returned: always
  type: list
  elements: str
  sample: ["10.1.0.0", "10.1.0.2"]
rolled_back:
  description: Whether a failed push (or, with O(state=rolled_back), a pending one) was rolled back to the
    checkpoint.
  returned: always
  type: bool
checkpoint_kept:
  description: Whether the checkpoint was left on the switch for a later O(state=committed) or O(state=rolled_back)
    (O(keep_checkpoint) and a change was applied).
  returned: always
  type: bool
checkpoint:
  description: The checkpoint name used.
  returned: always
  type: str
  sample: hwaac-pre-push
commands:
  description: The switch commands run, each with its exit status and output.
  returned: always
  type: list
  elements: dict
  sample: [{"cmd": "config apply-patch /tmp/hwaac-patch.json", "rc": 0, "stdout": "...", "stderr": ""}]
running:
  description: Internal (module step result), the running CONFIG_DB read from the switch.
  returned: by the module steps read, apply and rollback
  type: dict
"""

# Ansible wants the imports below DOCUMENTATION/EXAMPLES/RETURN (validate-modules import-before-documentation)
import json  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.aiinfra.hwaac.plugins.module_utils.timed_run import run_limited  # noqa: E402


def _run(module: AnsibleModule, log: list[dict], argv: list[str]) -> tuple[int, str, str]:
    """Run one tool, record it in ``log`` (what the action plugin reports as ``commands``)."""
    rc, out, err = run_limited(module, argv).rc_out_err
    log.append({"cmd": " ".join(argv), "rc": rc, "stdout": out, "stderr": err})
    return rc, out, err


def _read_running(module: AnsibleModule, log: list[dict]) -> dict:
    """``sonic-cfggen -d --print-data``: the running CONFIG_DB as JSON."""
    cfggen = module.get_bin_path("sonic-cfggen", required=True)
    rc, out, err = _run(module, log, [cfggen, "-d", "--print-data"])
    if rc != 0:
        module.fail_json(msg=f"sonic-cfggen -d --print-data failed (rc {rc}): {(err or out).strip()}", commands=log)
    try:
        return json.loads(out)
    except ValueError as exc:
        module.fail_json(msg=f"sonic-cfggen -d --print-data printed no JSON: {exc}", commands=log)
    raise AssertionError("unreachable")


def _tool_error(out: str, err: str) -> str:
    """The tool's own message: click's ``Error: ...`` block when there is one, else the last lines of stderr."""
    text = err or out
    # click starts its own line with "Error: "; GCU messages may hold "Error:" mid-line ("... Error: Data Loading")
    at = text.rfind("\nError: ")
    if at >= 0 or text.startswith("Error: "):
        return text[at + len("\nError: ") if at >= 0 else len("Error: ") :].strip()
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[-3:])


def _must_run(module: AnsibleModule, log: list[dict], argv: list[str], failed: str, **state: object) -> None:
    """Run one tool that must succeed; else fail the task with ``failed: <the tool's message>`` and ``state``."""
    rc, out, err = _run(module, log, argv)
    if rc != 0:
        module.fail_json(msg=f"{failed}: {_tool_error(out, err)}", commands=log, **state)


def _has_checkpoint(module: AnsibleModule, log: list[dict], config_bin: str, name: str) -> bool:
    """Whether ``config list-checkpoints`` (a JSON list of names) holds ``name``."""
    rc, out, err = _run(module, log, [config_bin, "list-checkpoints"])
    if rc != 0:
        module.fail_json(msg=f"config list-checkpoints failed (rc {rc}): {_tool_error(out, err)}", commands=log)
    try:
        names = json.loads(out)
    except ValueError:
        module.fail_json(msg=f"config list-checkpoints printed no JSON list: {out.strip()[:200]}", commands=log)
    return isinstance(names, list) and name in names


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            config=dict(type="dict"),
            src=dict(type="path"),
            tables=dict(type="list", elements="str"),
            owned_tables=dict(type="list", elements="str"),
            checkpoint_name=dict(type="str", default="hwaac-pre-push"),
            save=dict(type="bool", default=True),
            # decided by the action plugin (it turns them into operations); accepted here as documented
            state=dict(type="str", choices=["present", "committed", "rolled_back"], default="present"),
            keep_checkpoint=dict(type="bool", default=False),
            keep_drains=dict(type="bool", default=True),
            operation=dict(
                type="str", choices=["read", "apply", "finish", "rollback", "commit", "revert"], default="read"
            ),
            patch=dict(type="list", elements="dict"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    log: list[dict] = []
    name = p["checkpoint_name"]
    result: dict = {"changed": False, "commands": log, "checkpoint": name, "rolled_back": False}

    if p["operation"] == "read":
        # read only: runs in check mode too
        result["running"] = _read_running(module, log)
        module.exit_json(**result)

    config_bin = module.get_bin_path("config", required=True)

    if p["operation"] in ("commit", "revert"):
        # confirming or undoing a pending push: only when its checkpoint is there (list-checkpoints only reads)
        exists = _has_checkpoint(module, log, config_bin, name)
        if module.check_mode or not exists:
            module.exit_json(changed=exists, commands=log, checkpoint=name, rolled_back=False)
        p["operation"] = "finish" if p["operation"] == "commit" else "rollback"

    if module.check_mode:
        # the action plugin never asks for a write in check mode; refuse to write if someone does
        module.exit_json(changed=p["operation"] == "apply", commands=log, checkpoint=name, rolled_back=False)

    if p["operation"] == "apply":
        if p["patch"] is None:
            module.fail_json(msg="operation=apply needs patch", commands=log)
        _must_run(module, log, [config_bin, "checkpoint", name], f"config checkpoint {name} failed, nothing applied")
        fd, path = tempfile.mkstemp(prefix="hwaac-patch-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump(p["patch"], fh, indent=2)
            rc, out, err = _run(module, log, [config_bin, "apply-patch", path])
        finally:
            os.unlink(path)
        if rc != 0:
            message = _tool_error(out, err)
            rrc, rout, rerr = _run(module, log, [config_bin, "rollback", name])
            rolled = rrc == 0
            if rolled:
                _run(module, log, [config_bin, "delete-checkpoint", name])
            running = _read_running(module, log)
            how = (
                "rolled back to checkpoint " + name
                if rolled
                else f"ROLLBACK FAILED, checkpoint {name} kept on the switch: {_tool_error(rout, rerr)}"
            )
            module.fail_json(
                msg=f"config apply-patch failed ({how}): {message}",
                changed=True,
                rolled_back=rolled,
                running=running,
                commands=log,
                checkpoint=name,
            )
        result.update(changed=True, running=_read_running(module, log))
        module.exit_json(**result)

    if p["operation"] == "finish":
        if p["save"]:
            _must_run(
                module,
                log,
                [config_bin, "save", "-y"],
                "config save -y failed (the change is live but not saved)",
                changed=True,
                checkpoint=name,
            )
        _run(module, log, [config_bin, "delete-checkpoint", name])
        result["changed"] = True
        module.exit_json(**result)

    # rollback: asked by the action plugin when the running config does not hold the desired values
    _must_run(
        module,
        log,
        [config_bin, "rollback", name],
        f"config rollback {name} failed, checkpoint kept on the switch",
        changed=True,
        checkpoint=name,
    )
    _run(module, log, [config_bin, "delete-checkpoint", name])
    result.update(changed=True, rolled_back=True, running=_read_running(module, log))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
