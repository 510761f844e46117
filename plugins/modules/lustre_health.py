#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Host side of aiinfra.hwaac.lustre_health: runs the probe commands the action plugin sends (lfs check servers,
lctl ping per MGS NID, lctl get_param health_check and imports, lnetctl net show -v 2, lctl list_nids, lfs df -v),
each with a time limit, and returns their raw output with the text of /proc/mounts. Parsing and the verdict happen
on the controller (hwaac.health.lustre)."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: lustre_health
short_description: Check a Lustre client's health (targets, MGS reachability, health_check, imports, LNet NIs)
version_added: "0.1.0"
description:
  - Runs C(lfs check servers), C(lctl ping) to every MGS NID, C(lctl get_param -n health_check),
    C(lctl get_param osc.*.import mdc.*.import), (with O(lnet)) C(lnetctl net show -v 2), (with O(list_nids))
    C(lctl list_nids) and (with O(lfs_df)) C(lfs df -v) on the node, each with a time limit, and reads
    O(proc_mounts); the action plugin of the same name parses the output on the controller
    (Python package C(hwaac), C(hwaac.health.lustre)) and judges it against the expected file systems.
  - The verdict is PASS only when every expected file system is mounted from its expected MGS nodes (NIDs
    compared as LNet prints them, C(o2ib0) = C(o2ib), C(tcp0) = C(tcp); the order of NIDs and of failover nodes
    does not matter; host-name NIDs are matched through the NIDs the MGS lists to C(lctl ping)), every target it
    lists is active and its import FULL (or IDLE), every MGS NID answers C(lctl ping), C(health_check) says
    C(healthy), every LNet NI is up with its health value read and at full health, the node has a NID on an LNet
    network of every file system's MGS (O(list_nids)) and every MDT and OST C(lfs df) lists is reachable, active,
    writable and not full (O(lfs_df)); FAIL or WARN with fault codes and the recommended action otherwise
    (C(LUSTRE_MOUNTED_FROM_OTHER_MGS), FAIL, when no NID of the mounted source is an expected MGS NID;
    C(LUSTRE_MGS_LIST_DIFFERS), WARN, when the failover list differs). Output that cannot be read, a missing tool
    or a timeout is UNKNOWN, never PASS.
  - The probes only read state; check mode runs them too. A FAIL verdict fails the task only with
    O(fail_on_fail).
author:
  - hwaac maintainers (@aiinfra)
options:
  filesystems:
    description:
      - The file systems the node must have mounted, as in the rendered C(lustre-client.json) (C(name),
        C(mgs) as a list of failover MGS nodes each a list of NIDs, C(mount_point); other keys are ignored) or
        bare fsnames.
      - Default (unset) is C(filesystems) of O(client_config).
    type: list
    elements: raw
  mgs_nids:
    description:
      - MGS NIDs to ping besides those of O(filesystems).
    type: list
    elements: str
  client_config:
    description:
      - The node's rendered C(lustre-client.json) on the controller, read when O(filesystems) is unset.
      - Default is C(lustre-client.json) in the host's C(hwaac_files) directory.
    type: path
  proc_mounts:
    description:
      - The node's mount table (tests point it at a fake host's file). A file that does not exist reads as no
        mounts.
    type: path
    default: /proc/mounts
  lnet:
    description:
      - "Also read the local LNet NIs (C(lnetctl net show -v 2)): status, health value, fatal_error. Level 2 is the
        lowest that prints the NIs' C(health stats) (a plain C(-v) is level 1); an NI without its health value is
        UNKNOWN (C(LUSTRE_LNET_HEALTH_MISSING))."
    type: bool
    default: true
  list_nids:
    description:
      - "Also read the node's own NIDs (C(lctl list_nids)) and judge them against the MGS NIDs of O(filesystems):
        no local NID on any LNet network of a file system's MGS nodes is FAIL (C(LUSTRE_LNET_NO_MGS_NET)), a
        failover MGS node on no local network WARN (C(LUSTRE_LNET_MGS_NODE_OFF_NET)), LNet not running FAIL
        (C(LUSTRE_LNET_DOWN))."
      - On by default because it is cheap and safe on a client; it reads the local NI table through one ioctl
        and sends nothing over the network.
    type: bool
    default: true
  lfs_df:
    description:
      - "Also read C(lfs df -v): every MDT and OST of the mounted file systems with its usage and state. A target
        whose statfs fails is FAIL (C(LUSTRE_TARGET_UNREACHABLE)), a read-only one FAIL
        (C(LUSTRE_TARGET_READONLY)); an inactive (deactivated), degraded, no-create or full (95% or more of its
        space) target WARN; a mounted file system missing from the output UNKNOWN."
      - Off by default. C(lfs df) asks every MDT and OST for its statfs, and a target that does not answer can
        hold it until the RPC times out (at most O(timeout)), so run on thousands of clients at once it loads the
        servers; and space and target state are the same on every client, better judged once from one client.
        C(lfs check servers) already reports an unreachable target on every run.
    type: bool
    default: false
  timeout:
    description:
      - Seconds each probe may run (C(lctl ping) to a dead NID waits for the LNet timeout).
    type: int
    default: 60
  fail_on_fail:
    description:
      - Fail the task when the verdict is FAIL (the verdict and findings are returned either way).
    type: bool
    default: false
  probes:
    description:
      - Set by the action plugin; not for playbooks. Probe name to C(argv) (list) and C(timeout) (seconds).
    type: dict
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.probes,
                                 aiinfra.hwaac.controller_requirements]
notes:
  - Needs C(lfs), C(lctl) and, with O(lnet), C(lnetctl) on the node (package C(lustre-client) /
    C(lustre-client-utils)); a missing tool gives an UNKNOWN verdict naming it.
seealso:
  - module: aiinfra.hwaac.lustre_client_packages
  - module: aiinfra.hwaac.node_health
"""

EXAMPLES = r"""
- name: Lustre client health against the rendered intent
  aiinfra.hwaac.lustre_health:
    client_config: "{{ hwaac_files }}/lustre-client.json"
  register: lustre
  become: true

- name: Explicit file systems, fail the play on FAIL
  aiinfra.hwaac.lustre_health:
    filesystems:
      - name: lfs1
        mgs: [["10.20.0.1@o2ib", "10.20.1.1@o2ib"], ["10.20.0.2@o2ib"]]
        mount_point: /mnt/lfs1
    fail_on_fail: true
  become: true

- name: From one client, also judge every MDT and OST (lfs df -v)
  aiinfra.hwaac.lustre_health:
    client_config: "{{ hwaac_files }}/lustre-client.json"
    lfs_df: true
  become: true
  run_once: true
"""

RETURN = r"""
extends_documentation_fragment: [aiinfra.hwaac.returns.probes]
status:
  description: The verdict (PASS, WARN, UNKNOWN, FAIL).
  returned: success
  type: str
  sample: FAIL
codes:
  sample: [LUSTRE_MGS_UNREACHABLE]
action:
  description: The recommended action (none, retest, reboot, check_link...).
  returned: success
  type: str
  sample: check_link
filesystems:
  description: The expected file systems judged.
  returned: success
  type: list
  elements: str
  sample: [lfs1]
mounted:
  description: The Lustre file systems found in O(proc_mounts).
  returned: success
  type: list
  elements: str
proc_mounts:
  description: The text read from O(proc_mounts) (null when it could not be read; C(proc_mounts_error) says why).
  returned: success
  type: str
"""

import os  # noqa: E402

from ansible_collections.aiinfra.hwaac.plugins.module_utils.controller_specs import probes_module  # noqa: E402
from ansible_collections.aiinfra.hwaac.plugins.module_utils.timed_run import cut_output, run_timed  # noqa: E402

MAX_OUTPUT_MIB = 1  # stdout/stderr kept per probe (imports of a few hundred OSTs stay well below)


def main():
    """Run every probe of O(probes) with its time limit (``run_timed``: ``{"rc", "stdout", "stderr", "seconds",
    "timed_out"}``, stdout/stderr cut at :data:`MAX_OUTPUT_MIB`) and read O(proc_mounts); exit with the raw
    outputs (``outputs``: probe name -> output), ``proc_mounts`` (text; "" when the file does not exist, None with
    ``proc_mounts_error`` when it cannot be read) and ``proc_mounts_path``. Fails (``fail_json``) when O(probes)
    is empty or a probe's ``argv`` is not a non-empty list. Changes nothing on the node."""
    module, probes = probes_module("lustre_health")
    outputs = {}
    for name, probe in probes.items():
        argv = probe.get("argv")
        if not isinstance(argv, list) or not argv:
            module.fail_json(msg=f"aiinfra.hwaac.lustre_health: probe {name!r}: argv must be a non-empty list")
        out = run_timed(module, argv, int(probe.get("timeout") or module.params["timeout"]))
        outputs[name] = cut_output(out, MAX_OUTPUT_MIB)
    path = module.params["proc_mounts"]
    text, error = None, None
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except FileNotFoundError:
        text = ""  # no mount table: nothing mounted (a fake host without mounts has no file; /proc/mounts exists)
    except OSError as exc:
        error = f"cannot read {path}: {exc.strerror or exc}"
    module.exit_json(
        changed=False,
        outputs=outputs,
        proc_mounts=text,
        proc_mounts_error=error,
        proc_mounts_path=os.path.abspath(path),
    )


if __name__ == "__main__":
    main()
