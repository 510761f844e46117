#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache-2.0
"""Ansible module aiinfra.hwaac.lustre_tune: Lustre client tunables with lctl, read first, persisted per version."""

# ruff: noqa: E402  (Ansible modules keep DOCUMENTATION/EXAMPLES/RETURN above the imports)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: lustre_tune
short_description: Set Lustre client tunables with lctl set_param where they differ, and make them persistent
description:
  - For each C(pattern -> value) of O(params), reads the current values with C(lctl get_param PATTERN) (one
    C(device.param=value) line per matching device), and runs C(lctl set_param PATTERN=VALUE) only when some
    device differs; then reads again and fails naming any device that still differs. A pattern that matches no
    parameter (the file system is not mounted, or a typo) fails the task and says so.
  - Patterns ending in C(.max_rpcs_in_flight) are set before those ending in C(.max_mod_rpcs_in_flight) (an mdc
    refuses a C(max_mod_rpcs_in_flight) that is not below its C(max_rpcs_in_flight) before Lustre 2.16).
  - "B(Release check.) The running client version is read with C(lctl get_param -n version) whenever O(persist=true)
    or O(client_version) is given. When O(client_version) (the intended version) is another release (major.minor)
    than the running one, the task fails before anything is set, naming both: install the intended client or
    correct the intent."
  - "B(Persistence) (O(persist=true)) depends on the B(running) client version: from 2.17 the parameters are
    written to O(params_file) (C(/etc/lustre/mount.client.params), read by the client after each mount; LU-11077),
    inside a block marked C(# BEGIN hwaac lustre_tune FSNAME) that the module owns, other lines kept. Before 2.17
    a systemd oneshot unit C(hwaac-lustre-tune-FSNAME.service) is written to O(systemd_dir), with C(After=),
    C(BindsTo=) and C(WantedBy=) the mount unit of O(mount_point) (C(mnt-lfs1.mount), systemd path escaping) and
    one C(ExecStart=lctl set_param PATTERN=VALUE) per parameter; C(systemctl daemon-reload) and C(systemctl enable)
    run only when the unit changed (or is not enabled). A block whose C(# END) line is missing is refused (naming
    its line) rather than guessed."
  - Values are compared as text, or as numbers when both sides are numbers (C(32) equals C(32.0)). Parameters that
    lctl prints on several lines (C(max_cached_mb), C(import)) cannot be set meaningfully with this module.
version_added: "0.1.0"
author: hwaac maintainers (@aiinfra)
options:
  params:
    description:
      - Full lctl parameter patterns scoped to the file system, and their values, for example
        C(osc.lfs1-OST*.max_rpcs_in_flight=32). A pattern that does not name O(filesystem) gets a warning (it
        applies to every Lustre file system of the node).
    type: dict
    required: true
  filesystem:
    description: The Lustre fsname the parameters belong to (names the unit and the block in O(params_file)).
    type: str
    required: true
  mount_point:
    description: The mount point of O(filesystem); required for the systemd unit (clients before 2.17).
    type: str
  client_version:
    description:
      - The Lustre client version the node should run (C(2.15.5)), for example the intent's. The task fails when the
        running version (C(lctl get_param -n version)) is another release (major.minor); patch levels may differ.
        Persistence always follows the running version.
    type: str
  persist:
    description: Make the values persistent (see the description); C(false) sets them until the next mount only.
    type: bool
    default: true
  params_file:
    description: The client parameters file of Lustre 2.17 and later.
    type: path
    default: /etc/lustre/mount.client.params
  systemd_dir:
    description: Where the oneshot unit is written for clients before 2.17.
    type: path
    default: /etc/systemd/system
  timeout:
    description: Seconds each lctl or systemctl call may take.
    type: int
    default: 60
notes:
  - Supports check mode (reads only; RV(commands) lists what would run) and diff mode (the differing parameters
    per device, and the parameters file or unit before and after).
  - Values set by lctl live until the file system is unmounted; new OSTs added later get the value when the unit
    or the parameters file is applied again (next mount).
seealso:
  - name: lctl-set_param(8)
    description: Patterns, -P (MGS-wide) and -C (client file, 2.17+).
    link: https://github.com/lustre/lustre-release/blob/master/Documentation/man8/lctl-set_param.8
  - module: aiinfra.hwaac.lustre_mount
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.changes]
"""

EXAMPLES = r"""
- name: AI/ML client tunables for lfs1 (AWS FSx / NVIDIA GDS recommendations)
  aiinfra.hwaac.lustre_tune:
    filesystem: lfs1
    mount_point: /mnt/lfs1
    params:
      osc.lfs1-OST*.max_rpcs_in_flight: 32
      mdc.lfs1-MDT*.max_rpcs_in_flight: 64
      mdc.lfs1-MDT*.max_mod_rpcs_in_flight: 50
      osc.lfs1-OST*.max_pages_per_rpc: 4096
"""

RETURN = r"""
params:
  description: One entry per pattern, in the order they were set - the wanted value, the values per device before
    and after, and whether the pattern was set.
  returned: always
  type: list
  elements: dict
  sample:
    - {"pattern": "osc.lfs1-OST*.max_rpcs_in_flight", "value": "32", "changed": true,
       "before": {"osc.lfs1-OST0000-osc-ffff8a2c4e1b8000.max_rpcs_in_flight": "8"},
       "after": {"osc.lfs1-OST0000-osc-ffff8a2c4e1b8000.max_rpcs_in_flight": "32"}}
client_version:
  description: The running client version (C(lctl get_param -n version)), which chose the persistence.
  returned: when O(persist=true)
  type: str
  sample: "2.15.5"
persistence:
  description: How the values are kept - C(method) (C(mount.client.params) or C(systemd)), C(path), C(unit)
    (systemd only) and C(changed).
  returned: when O(persist=true)
  type: dict
  sample: {"method": "systemd", "path": "/etc/systemd/system/hwaac-lustre-tune-lfs1.service",
           "unit": "hwaac-lustre-tune-lfs1.service", "changed": true}
actions:
  description: What changed (or would) - C(set_param), C(params_file), C(unit), C(daemon-reload), C(enable).
  returned: always
  type: list
  elements: str
commands:
  description: The lctl and systemctl commands run (in check mode, also the ones that would run).
  returned: always
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aiinfra.hwaac.plugins.module_utils.host_files import Steps, output_line
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_mount import LustreError, check_fsname
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_params import (
    PERSIST_FILE_VERSION,
    ParamError,
    check_params,
    outside_block_settings,
    parse_get_param,
    parse_version,
    render_unit,
    same_value,
    set_order,
    tune_unit_name,
    update_params_file,
    version_tuple,
)


def read_values(run: Steps, lctl: str, pattern: str, fsname: str) -> dict[str, str]:
    """``{device parameter: value}`` that ``lctl get_param PATTERN`` prints; fails the task when the pattern
    matches nothing (the file system is not mounted, or the pattern is wrong)."""
    res = run.run([lctl, "get_param", pattern], changing=False)
    values = parse_get_param(res["stdout"]) if res["rc"] == 0 else {}
    if not values:
        run.fail(
            f"params: pattern {pattern} matches no parameter on this node (lctl get_param: {output_line(res)}); "
            f"is {fsname} mounted, and is the pattern right?"
        )
    return values


def running_version(run: Steps, lctl: str, client_version: str | None) -> tuple[tuple[int, ...], str]:
    """The running client's version from ``lctl get_param -n version`` -> ``((2, 15, 5), "2.15.5")``. Fails the
    task when it cannot be read, and when ``client_version`` (the intent's) is another release (major.minor)
    than the running one: persistence depends on the release (``mount.client.params`` is read from 2.17 on,
    LU-11077), so settings persisted for the intended release would be ignored by the running one."""
    res = run.run([lctl, "get_param", "-n", "version"], changing=False)
    if res["rc"] != 0:
        run.fail(f"cannot tell the running Lustre client version (lctl get_param -n version: {output_line(res)})")
    try:
        version, text = parse_version(res["stdout"])
    except ParamError as exc:
        run.fail(f"cannot tell the running Lustre client version: {exc}")
    if client_version is not None:
        wanted = version_tuple(client_version)
        if wanted[:2] != version[:2]:
            want_rel = ".".join(str(n) for n in wanted[:2])
            run_rel = ".".join(str(n) for n in version[:2])
            run.fail(
                f"client_version: the intent expects Lustre {client_version} but this node runs {text} (lctl "
                f"get_param -n version), another release ({want_rel} wanted, {run_rel} running). Install the "
                f"{want_rel} client on this node (and reboot or reload its modules), or correct client_version "
                "in the intent. Nothing was set."
            )
    return version, text


def plan_file(run: Steps, path: str, fsname: str, params: dict[str, str]) -> dict:
    """Persistence from Lustre 2.17: the hwaac block of ``fsname`` in ``path`` (``mount.client.params``).
    Returns ``{"method", "path", "before", "after"}`` without writing; fails the task for a file it cannot read
    or a block it cannot find the end of, and warns about the same parameter set outside the block."""
    text = run.read_text(path)
    try:
        new = update_params_file(text, fsname, params)
        outside = outside_block_settings(text, fsname)
    except ParamError as exc:
        run.fail(f"{path}: {exc}")
    for key, val in outside.items():
        if key in params and not same_value(val, params[key]):
            run.module.warn(
                f"{path} also sets {key}={val} outside the hwaac block of {fsname} (the block sets "
                f"{params[key]}); the line that comes later in the file wins"
            )
    return {"method": "mount.client.params", "path": path, "before": text, "after": new}


def plan_unit(run: Steps, lctl: str, p: dict, params: dict[str, str]) -> dict:
    """Persistence before Lustre 2.17: the oneshot unit ``hwaac-lustre-tune-FSNAME.service`` in ``systemd_dir``,
    bound to the mount unit of ``mount_point`` (:func:`render_unit`). Returns ``{"method", "path", "unit",
    "before", "after", "systemctl"}`` without writing; fails the task without ``mount_point`` or ``systemctl``."""
    if not p["mount_point"]:
        run.fail(
            "mount_point is required to persist the parameters of a client before Lustre 2.17 (the unit is "
            "bound to the mount unit of the mount point)"
        )
    try:
        content = render_unit(p["filesystem"], p["mount_point"], params, lctl)
    except ParamError as exc:
        run.fail(str(exc))
    systemctl = run.module.get_bin_path("systemctl")
    if not systemctl:
        run.fail("systemctl not found on this host; cannot persist the tunables of a client before Lustre 2.17")
    unit = tune_unit_name(p["filesystem"])
    path = os.path.join(p["systemd_dir"], unit)
    return {
        "method": "systemd",
        "path": path,
        "unit": unit,
        "before": run.read_text(path),
        "after": content,
        "systemctl": systemctl,
    }


def persist_file(run: Steps, plan: dict) -> dict:
    """Write the planned ``mount.client.params`` when it changes. Returns ``{"method", "path", "changed"}``."""
    changed = plan["after"] != plan["before"]
    if changed:
        run.diffs.append(
            {
                "before_header": plan["path"],
                "after_header": plan["path"],
                "before": plan["before"],
                "after": plan["after"],
            }
        )
        run.action("params_file")
        if not run.check:
            run.write_text(plan["path"], plan["after"])
    return {"method": plan["method"], "path": plan["path"], "changed": changed}


def persist_unit(run: Steps, plan: dict) -> dict:
    """Write the planned unit when it changes, then ``systemctl daemon-reload`` and ``systemctl enable``; when it
    does not change, ``enable`` only if ``systemctl is-enabled`` does not say ``enabled``. Returns ``{"method",
    "path", "unit", "changed"}``; fails the task naming a systemctl call that failed."""
    systemctl, unit, path = plan["systemctl"], plan["unit"], plan["path"]
    changed = plan["before"] != plan["after"]
    if changed:
        run.diffs.append(
            {"before_header": path, "after_header": path, "before": plan["before"], "after": plan["after"]}
        )
        run.action("unit")
        if not run.check:
            run.write_text(path, plan["after"])
        res = run.run([systemctl, "daemon-reload"], changing=True)
        if res["rc"] != 0:
            run.fail(f"systemctl daemon-reload failed: {output_line(res)}")
        run.action("daemon-reload")
        enable = True
    else:
        res = run.run([systemctl, "is-enabled", unit], changing=False)
        enable = res["stdout"].strip() != "enabled"
    if enable:
        res = run.run([systemctl, "enable", unit], changing=True)
        if res["rc"] != 0:
            run.fail(f"systemctl enable {unit} failed: {output_line(res)}")
        run.action("enable")
    return {"method": "systemd", "path": path, "unit": unit, "changed": changed or enable}


def main() -> None:
    """Check the input and the release, plan the persistence, set the differing parameters and read them back,
    then persist them."""
    module = AnsibleModule(
        argument_spec={
            "params": {"type": "dict", "required": True},
            "filesystem": {"type": "str", "required": True},
            "mount_point": {"type": "str"},
            "client_version": {"type": "str"},
            "persist": {"type": "bool", "default": True},
            "params_file": {"type": "path", "default": "/etc/lustre/mount.client.params"},
            "systemd_dir": {"type": "path", "default": "/etc/systemd/system"},
            "timeout": {"type": "int", "default": 60},
        },
        supports_check_mode=True,
    )
    p = module.params
    run = Steps(module, p["timeout"], params=[])
    if p["timeout"] <= 0:
        module.fail_json(msg=f"timeout: {p['timeout']} must be a positive number of seconds")
    try:
        check_fsname(p["filesystem"], "filesystem")
        params, warnings = check_params(p["params"], p["filesystem"])
        if p["client_version"]:
            version_tuple(p["client_version"])
    except (LustreError, ParamError) as exc:
        module.fail_json(msg=str(exc))
    if p["mount_point"] and not p["mount_point"].startswith("/"):
        module.fail_json(
            msg=f"mount_point: {p['mount_point']!r} must be an absolute path (the mount point of "
            f"{p['filesystem']}, for example /mnt/{p['filesystem']})"
        )
    for w in warnings:
        module.warn(w)
    lctl = module.get_bin_path("lctl")
    if not lctl:
        module.fail_json(msg="lctl not found on this host (is the Lustre client installed?)")

    # Everything that can refuse comes before the first set_param: the release, the persistence target.
    plan = None
    if p["persist"] or p["client_version"]:
        version, text = running_version(run, lctl, p["client_version"] or None)
        if p["persist"]:
            run.result["client_version"] = text
            if version >= PERSIST_FILE_VERSION:
                plan = plan_file(run, p["params_file"], p["filesystem"], params)
            else:
                plan = plan_unit(run, lctl, p, params)

    order = set_order(params)
    before = {pattern: read_values(run, lctl, pattern, p["filesystem"]) for pattern in order}
    differing = {
        pattern: {n: v for n, v in before[pattern].items() if not same_value(v, params[pattern])} for pattern in order
    }
    for pattern in order:
        if not differing[pattern]:
            continue
        res = run.run([lctl, "set_param", f"{pattern}={params[pattern]}"], changing=True)
        if res["rc"] != 0:
            run.fail(f"lctl set_param {pattern}={params[pattern]} failed: {output_line(res)}")
        run.action("set_param")
    diff_before, diff_after = [], []
    for pattern in order:
        after = dict(before[pattern])
        if differing[pattern]:
            if run.check:
                after = {n: params[pattern] for n in after}
            else:
                after = read_values(run, lctl, pattern, p["filesystem"])
                still = [f"{n}={v}" for n, v in after.items() if not same_value(v, params[pattern])]
                if still:
                    run.fail(
                        f"lctl set_param {pattern}={params[pattern]} was accepted but these devices still "
                        f"differ: {', '.join(still)}"
                    )
            diff_before += [f"{n}={v}" for n, v in sorted(differing[pattern].items())]
            diff_after += [f"{n}={after.get(n, params[pattern])}" for n in sorted(differing[pattern])]
        run.result["params"].append(
            {
                "pattern": pattern,
                "value": params[pattern],
                "changed": bool(differing[pattern]),
                "before": before[pattern],
                "after": after,
            }
        )
    if diff_before:
        run.diffs.insert(
            0,
            {
                "before_header": "lctl get_param",
                "after_header": "lctl get_param",
                "before": "\n".join(diff_before) + "\n",
                "after": "\n".join(diff_after) + "\n",
            },
        )

    if plan is not None:
        if plan["method"] == "systemd":
            run.result["persistence"] = persist_unit(run, plan)
        else:
            run.result["persistence"] = persist_file(run, plan)
    module.exit_json(diff=run.diffs, **run.result)


if __name__ == "__main__":
    main()
