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
  - "B(Persistence) (O(persist=true)) depends on the client version (O(client_version), else C(lctl get_param -n
    version)): from 2.17 the parameters are written to O(params_file) (C(/etc/lustre/mount.client.params), read by
    the client after each mount; LU-11077), inside a block marked C(# BEGIN hwaac lustre_tune FSNAME) that the
    module owns, other lines kept. Before 2.17 a systemd oneshot unit C(hwaac-lustre-tune-FSNAME.service) is
    written to O(systemd_dir), with C(After=), C(BindsTo=) and C(WantedBy=) the mount unit of O(mount_point)
    (C(mnt-lfs1.mount), systemd path escaping) and one C(ExecStart=lctl set_param PATTERN=VALUE) per parameter;
    C(systemctl daemon-reload) and C(systemctl enable) run only when the unit changed (or is not enabled)."
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
    description: The Lustre client version (C(2.15.5)); read with C(lctl get_param -n version) when not given.
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
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: full
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
  description: The client version used to choose the persistence.
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
import shlex
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_mount import LustreError, check_fsname
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_params import (
    PERSIST_FILE_VERSION,
    ParamError,
    check_params,
    mount_unit_name,
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
from ansible_collections.aiinfra.hwaac.plugins.module_utils.timed_run import run_timed


class Run:
    def __init__(self, module: AnsibleModule) -> None:
        self.module = module
        self.check = module.check_mode
        self.timeout = module.params["timeout"]
        self.result: dict = {"changed": False, "actions": [], "commands": [], "params": []}
        self.diffs: list[dict] = []

    def fail(self, msg: str) -> None:
        self.module.fail_json(msg=msg, **self.result)

    def run(self, argv: list[str], changing: bool) -> dict:
        shown = " ".join(shlex.quote(a) for a in argv)
        self.result["commands"].append(shown)
        if changing and self.check:
            return {"rc": 0, "stdout": "", "stderr": ""}
        res = run_timed(self.module, argv, self.timeout)
        if res["timed_out"]:
            self.fail(f"{shown} did not finish within {self.timeout} s")
        if res["rc"] is None:
            self.fail(f"cannot run {shown}: {res['stderr']}")
        return res

    def action(self, name: str) -> None:
        if name not in self.result["actions"]:
            self.result["actions"].append(name)
        self.result["changed"] = True


def one_line(res: dict) -> str:
    return (res["stderr"].strip() or res["stdout"].strip() or f"exit {res['rc']}").replace("\n", " / ")


def read_values(run: Run, lctl: str, pattern: str, fsname: str) -> dict[str, str]:
    res = run.run([lctl, "get_param", pattern], changing=False)
    values = parse_get_param(res["stdout"]) if res["rc"] == 0 else {}
    if not values:
        run.fail(f"params: pattern {pattern} matches no parameter on this node (lctl get_param: {one_line(res)}); "
                 f"is {fsname} mounted, and is the pattern right?")
    return values


def write_atomic(run: Run, path: str, text: str) -> None:
    directory = os.path.dirname(os.path.abspath(path)) or "/"
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".hwaac.", dir=directory)
    except OSError as exc:
        run.fail(f"cannot write {path}: {exc.strerror or exc}")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if not os.path.exists(path):
            os.chmod(tmp, 0o644)
        run.module.atomic_move(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def read_text(run: Run, path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return ""
    except OSError as exc:
        run.fail(f"cannot read {path}: {exc.strerror or exc}")
    return ""


def persist_file(run: Run, path: str, fsname: str, params: dict[str, str]) -> dict:
    text = read_text(run, path)
    new = update_params_file(text, fsname, params)
    for key, val in outside_block_settings(text, fsname).items():
        if key in params and not same_value(val, params[key]):
            run.module.warn(f"{path} also sets {key}={val} outside the hwaac block of {fsname} (the block sets "
                            f"{params[key]}); the line that comes later in the file wins")
    changed = new != text
    if changed:
        run.diffs.append({"before_header": path, "after_header": path, "before": text, "after": new})
        run.action("params_file")
        if not run.check:
            write_atomic(run, path, new)
    return {"method": "mount.client.params", "path": path, "changed": changed}


def persist_unit(run: Run, lctl: str, p: dict, params: dict[str, str]) -> dict:
    if not p["mount_point"]:
        run.fail("mount_point is required to persist the parameters of a client before Lustre 2.17 (the unit is "
                 "bound to the mount unit of the mount point)")
    try:
        content = render_unit(p["filesystem"], p["mount_point"], params, lctl)
        mount_unit_name(p["mount_point"])
    except ParamError as exc:
        run.fail(str(exc))
    unit = tune_unit_name(p["filesystem"])
    path = os.path.join(p["systemd_dir"], unit)
    text = read_text(run, path)
    changed = text != content
    systemctl = run.module.get_bin_path("systemctl")
    if not systemctl:
        run.fail("systemctl not found on this host; cannot persist the tunables of a client before Lustre 2.17")
    if changed:
        run.diffs.append({"before_header": path, "after_header": path, "before": text, "after": content})
        run.action("unit")
        if not run.check:
            write_atomic(run, path, content)
        res = run.run([systemctl, "daemon-reload"], changing=True)
        if res["rc"] != 0:
            run.fail(f"systemctl daemon-reload failed: {one_line(res)}")
        run.action("daemon-reload")
        enable = True
    else:
        res = run.run([systemctl, "is-enabled", unit], changing=False)
        enable = res["stdout"].strip() != "enabled"
    if enable:
        res = run.run([systemctl, "enable", unit], changing=True)
        if res["rc"] != 0:
            run.fail(f"systemctl enable {unit} failed: {one_line(res)}")
        run.action("enable")
    return {"method": "systemd", "path": path, "unit": unit, "changed": changed or enable}


def main() -> None:
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
    run = Run(module)
    if p["timeout"] <= 0:
        module.fail_json(msg=f"timeout: {p['timeout']} must be a positive number of seconds")
    try:
        check_fsname(p["filesystem"], "filesystem")
        params, warnings = check_params(p["params"], p["filesystem"])
        wanted_version = version_tuple(p["client_version"]) if p["client_version"] else None
    except (LustreError, ParamError) as exc:
        module.fail_json(msg=str(exc))
    if p["mount_point"] and not p["mount_point"].startswith("/"):
        module.fail_json(msg=f"mount_point: {p['mount_point']!r} must be an absolute path")
    for w in warnings:
        module.warn(w)
    lctl = module.get_bin_path("lctl")
    if not lctl:
        module.fail_json(msg="lctl not found on this host (is the Lustre client installed?)")

    order = set_order(params)
    before = {pattern: read_values(run, lctl, pattern, p["filesystem"]) for pattern in order}
    differing = {pattern: {n: v for n, v in before[pattern].items() if not same_value(v, params[pattern])}
                 for pattern in order}
    for pattern in order:
        if not differing[pattern]:
            continue
        res = run.run([lctl, "set_param", f"{pattern}={params[pattern]}"], changing=True)
        if res["rc"] != 0:
            run.fail(f"lctl set_param {pattern}={params[pattern]} failed: {one_line(res)}")
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
                    run.fail(f"lctl set_param {pattern}={params[pattern]} was accepted but these devices still "
                             f"differ: {', '.join(still)}")
            diff_before += [f"{n}={v}" for n, v in sorted(differing[pattern].items())]
            diff_after += [f"{n}={after.get(n, params[pattern])}" for n in sorted(differing[pattern])]
        run.result["params"].append({"pattern": pattern, "value": params[pattern], "changed": bool(differing[pattern]),
                                     "before": before[pattern], "after": after})
    if diff_before:
        run.diffs.insert(0, {"before_header": "lctl get_param", "after_header": "lctl get_param",
                             "before": "\n".join(diff_before) + "\n", "after": "\n".join(diff_after) + "\n"})

    if p["persist"]:
        if wanted_version is None:
            res = run.run([lctl, "get_param", "-n", "version"], changing=False)
            try:
                wanted_version, text = parse_version(res["stdout"]) if res["rc"] == 0 else (None, "")
            except ParamError as exc:
                run.fail(f"cannot tell the Lustre client version: {exc}; give client_version")
            if wanted_version is None:
                run.fail(f"cannot tell the Lustre client version (lctl get_param -n version: {one_line(res)}); give "
                         "client_version")
            run.result["client_version"] = text
        else:
            run.result["client_version"] = p["client_version"]
        if wanted_version >= PERSIST_FILE_VERSION:
            run.result["persistence"] = persist_file(run, p["params_file"], p["filesystem"], params)
        else:
            run.result["persistence"] = persist_unit(run, lctl, p, params)
    module.exit_json(diff=run.diffs, **run.result)


if __name__ == "__main__":
    main()
