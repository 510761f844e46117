#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Host side of aiinfra.hwaac.fabric_facts: runs the read-only commands the controller asked for (vtysh show,
lldpcli show, ip -j link/route get, ping) and returns their raw output; hwaac.verify judges it on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: fabric_facts
short_description: Gather the raw outputs the hwaac.verify check catalog reads (switches and GPU nodes)
version_added: "0.1.0"
description:
  - On the controller, the action plugin derives from the plan which commands this device needs for the checks
    (switches FRR's C(show bgp summary json) and C(show ip route json) through C(vtysh), C(lldpcli -f json0 show
    neighbors), C(ip -j link show); GPU nodes their links, LLDP and per rail C(ip -j route get DST from SRC) and
    C(ping -I SRC), plain and with Don't Fragment at the planned MTU).
  - The module runs them in parallel on the host and returns each one's exit status and output, unparsed.
  - Only those read-only tools are run; any other command is refused.
  - With O(dest) the action writes C(<dest>/<device>.json), the facts folder M(aiinfra.hwaac.fabric_verify) and
    C(hwaac verify FOLDER) read.
  - Tools are looked up on the task's C(PATH); a twin device's inventory sets C(PATH) to its C(vtysh)/C(lldpcli)
    wrappers (C(hwaac.lab.Lab.env)), or O(netns) runs each command in that network namespace.
author:
  - hwaac maintainers (@aiinfra)
options:
  plan:
    description:
      - The plan folder on the controller (C(plan.json) and the rendered files), as C(hwaac plan) writes it.
    type: path
    required: true
  checks:
    description:
      - Check names whose commands to run (and what they require). Default every check.
    type: list
    elements: str
  device:
    description:
      - The device's planned name. Default the inventory host name.
    type: str
  dest:
    description:
      - Facts folder on the controller; C(<dest>/<device>.json) is written, in check mode too (a reading, not a
        change).
    type: path
  netns:
    description:
      - Run every command with C(ip netns exec NETNS) (a twin device reached from its host).
    type: str
  timeout:
    description:
      - Seconds each command may run.
    type: float
    default: 30.0
  parallel:
    description:
      - Commands run at once.
    type: int
    default: 16
  return_outputs:
    description:
      - Also return the raw outputs in RV(outputs) (a leaf's route table is megabytes; off by default).
    type: bool
    default: false
  commands:
    description:
      - Set by the action plugin; not for playbooks. The commands to run, each as C(argv).
    type: list
    elements: dict
    suboptions:
      argv:
        description: The command and its arguments.
        type: list
        elements: str
        required: true
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.platform,
                                 aiinfra.hwaac.controller_requirements]
attributes:
  check_mode:
    support: full
    details: Read only; check mode runs the commands too.
  diff_mode:
    support: none
  platform:
    platforms: [sonic, linux]
    support: full
notes:
  - Needs the right to run C(vtysh) on a switch (root on SONiC; use C(become)).
seealso:
  - module: aiinfra.hwaac.fabric_verify
"""

EXAMPLES = r"""
- name: Gather what the checks read
  aiinfra.hwaac.fabric_facts:
    plan: build/demo
    dest: build/verify/facts
  become: true
"""

RETURN = r"""
commands:
  description: How many commands ran.
  returned: success
  type: int
  sample: 26
failed_commands:
  description: Command lines that could not be run at all (not found, timed out), with why.
  returned: success
  type: dict
file:
  description: The facts file written on the controller.
  returned: when dest is set
  type: str
outputs:
  description: Command line to C(argv), C(rc), C(stdout), C(stderr), C(error).
  returned: when return_outputs is set
  type: dict
"""

import os  # noqa: E402
import shlex  # noqa: E402
import subprocess  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.aiinfra.hwaac.plugins.module_utils.verify_specs import (  # noqa: E402
    COMMANDS_OPTION,
    SPECS,
)

MAX_OUTPUT = 16 * 1024 * 1024  # a large leaf's `show ip route json` is several MiB


def refused(argv):
    """Why ``argv`` is not one of the read-only commands this module runs (None when it is)."""
    if not argv:
        return "empty command"
    tool, args = argv[0], argv[1:]
    if tool == "vtysh":
        shows = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-c"]
        if not shows or len(shows) * 2 != len(args) or not all(c.startswith("show ") for c in shows):
            return "vtysh runs only -c 'show ...'"
        return None
    if tool == "lldpcli":
        return (
            None
            if "show" in args and not ({"configure", "unconfigure", "update"} & set(args))
            else "lldpcli runs only show"
        )
    if tool == "ip":
        if args[:3] == ["-j", "link", "show"] or args[:3] == ["-j", "route", "get"]:
            return None
        return "ip runs only -j link show and -j route get"
    if tool == "ping":
        return None
    return f"{tool} is not a tool this module runs (vtysh, lldpcli, ip, ping)"


def run_one(module, argv, netns, timeout):
    """Run one command; its result as the facts folder records it.

    Not ``AnsibleModule.run_command``: its read loop leaves when a 1 s select() sees no data and the process has
    ended (module_utils/basic.py), so output written in that window is lost - on a loaded host an empty stdout
    with rc 0. ``subprocess.run`` reads both pipes to their end.
    """
    out = {"argv": list(argv), "rc": None, "stdout": "", "stderr": "", "error": None}
    path = module.get_bin_path(argv[0])
    if path is None:
        out["error"] = f"{argv[0]}: not found on PATH"
        return out
    full = [path, *argv[1:]]
    if netns:
        full = [module.get_bin_path("ip", required=True), "netns", "exec", netns, *full]
    env = {**os.environ, "LC_ALL": "C"}
    try:
        ran = subprocess.run(full, capture_output=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        out["error"] = f"timed out after {timeout:g} s"
        return out
    except OSError as exc:
        out["error"] = f"cannot run {argv[0]}: {exc.strerror or exc}"
        return out
    out.update(
        rc=ran.returncode,
        stdout=ran.stdout[:MAX_OUTPUT].decode("utf-8", "replace"),
        stderr=ran.stderr[:MAX_OUTPUT].decode("utf-8", "replace"),
    )
    return out


def main():
    module = AnsibleModule(argument_spec={**SPECS["fabric_facts"], **COMMANDS_OPTION}, supports_check_mode=True)
    commands = [c["argv"] for c in module.params["commands"] or []]
    if not commands:
        module.fail_json(
            msg="aiinfra.hwaac.fabric_facts: no commands: this module runs through its action plugin "
            "(the controller needs the hwaac package)"
        )
    for argv in commands:
        why = refused(argv)
        if why:
            module.fail_json(msg=f"aiinfra.hwaac.fabric_facts: refused {shlex.join(argv)}: {why}")
    netns, timeout = module.params["netns"], float(module.params["timeout"])
    with ThreadPoolExecutor(max_workers=max(1, module.params["parallel"])) as pool:
        results = list(pool.map(lambda a: run_one(module, a, netns, timeout), commands))
    outputs = {shlex.join(a): results[i] for i, a in enumerate(commands)}
    module.exit_json(changed=False, outputs=outputs)


if __name__ == "__main__":
    main()
