#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache-2.0
"""Ansible module aiinfra.hwaac.lnet: LNet networks of a Lustre client with lnetctl, idempotent, safe while mounted."""

# ruff: noqa: E402  (Ansible modules keep DOCUMENTATION/EXAMPLES/RETURN above the imports)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: lnet
short_description: Configure LNet networks with lnetctl, only the difference, never unconfiguring a mounted client
description:
  - Reads the live LNet configuration with C(lnetctl net show) and C(lnetctl export --backup) (both output layouts,
    the <= 2.15 cYAML one and the 2.16+ libyaml one, read with a YAML loader), compares it with O(networks) and
    O(global), and applies only the difference. Names are normalised first - C(o2ib0) is C(o2ib), C(tcp0) is
    C(tcp) (LNet prints network number 0 without the number), 2.12's C(max_intf) is C(max_interfaces).
  - "Order of a run: C(modprobe lnet) when the LNet modules are not loaded; C(lnetctl lnet configure) (needed when
    a mount brought LNet up implicitly: C(net add)/C(net del) return EINVAL until LNet was configured through
    lnetctl; idempotent otherwise); C(lnetctl net del) for NIs and networks to remove; C(lnetctl net add --net N
    --if a,b [--peer-credits ...]) for NIs to add (C(lnetctl import) of the NIs in lnetctl's own layout when a
    network declares o2ib C(concurrent_sends) or C(map_on_demand), which C(net add) has no flag for); C(lnetctl
    set NAME VALUE) for global settings. Nothing runs when nothing differs. While LNet is down its global
    settings cannot be read, so the declared ones are set."
  - An existing NI's tunables cannot be changed in place, so an NI whose tunables differ is deleted and added
    again. The first interface of a network is its primary NI; when the order or the first NI would change, the
    whole network is deleted and added again in the declared order.
  - "B(Safety while Lustre is mounted.) The module never restarts lnet.service and never runs C(lnetctl lnet
    unconfigure) (it returns EBUSY while mounted, and lnet.service's stop unloads the modules). When
    O(proc_mounts) lists a C(lustre) mount, the module refuses - fails before running anything, saying why and
    what to do - every change that deletes or re-creates an NI or a whole network that a mounted file system
    uses (the networks of its MGS NIDs; all local networks when a NID is not on a local network), including a
    tunables change or a new first NI, and the deletion of the node's own primary NI (first NI of the first
    network). Adding NIs and networks, removing networks no mount uses, and global settings go ahead while
    mounted. Unmount the file systems, or run in a reboot window before Lustre mounts, to make a refused change."
  - After applying, the module reads the configuration again and fails, naming what differs, when it is not
    the desired one (for example a tunable the LND clamped).
  - O(lnet_conf) is written, only when its content differs and atomically, in lnetctl's own <= 2.15 C(export
    --backup) layout with only the declared networks and global settings, so that lnet.service's boot-time
    C(lnetctl import) reads it on 2.15 too (LU-17479; 2.15's parser does not read PyYAML's layout).
version_added: "0.1.0"
author: hwaac maintainers (@aiinfra)
options:
  networks:
    description:
      - Desired LNet networks, in NI order (the first interface of a network is its primary NI). As rendered in
        C(lustre-client.json) under C(lnet.networks).
    type: list
    elements: dict
    default: []
    suboptions:
      net:
        description: The LNet network, C(o2ib) or C(tcp) with an optional number (C(o2ib0) = C(o2ib), C(o2ib1)).
        type: str
        required: true
      interfaces:
        description: Host interfaces that carry the network, one NI each (several = Multi-Rail). Non-empty; an
          interface may appear in one network only.
        type: list
        elements: str
        required: true
      tunables:
        description: C(peer_timeout), C(peer_credits), C(peer_buffer_credits), C(credits) (C(lnetctl net add
          --peer-timeout) and so on). Undeclared tunables are not managed.
        type: dict
        default: {}
      lnd_tunables:
        description: LND tunables that C(lnetctl import) reads - o2ib C(conns_per_peer), C(concurrent_sends),
          C(map_on_demand); tcp C(conns_per_peer). Undeclared ones are not managed.
        type: dict
        default: {}
  global:
    description:
      - Global settings set with C(lnetctl set NAME VALUE) - C(numa_range), C(max_interfaces) (or C(max_intf)),
        C(discovery), C(drop_asym_route), C(retry_count), C(transaction_timeout), C(health_sensitivity),
        C(recovery_interval), C(router_sensitivity), C(response_tracking), C(recovery_limit),
        C(max_recovery_ping_interval) (2.16+). Undeclared settings are not managed.
    type: dict
    default: {}
  lnet_conf:
    description:
      - The file lnet.service imports at boot. Set to null to leave it alone.
    type: path
    default: /etc/lnet.conf
  proc_mounts:
    description:
      - The mount table to look for C(lustre) mounts in.
    type: path
    default: /proc/mounts
  purge:
    description:
      - Delete NIs and networks that O(networks) does not declare. With false they are kept.
    type: bool
    default: true
notes:
  - Supports check mode (reads only; RV(commands) lists what would run, the diff shows the change; a change that
    would be refused fails in check mode too) and diff mode (the managed networks as YAML, and O(lnet_conf)).
  - Needs lnetctl (lustre-client or lustre-client-utils), root, and PyYAML on the host.
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.changes]
"""

EXAMPLES = r"""
- name: LNet Multi-Rail over two rails, discovery on
  aiinfra.hwaac.lnet:
    networks:
      - net: o2ib0
        interfaces: [ib0, ib1]
        tunables: {peer_credits: 32}
        lnd_tunables: {conns_per_peer: 1}
    global:
      discovery: 1
  register: lnet

- name: From the rendered client file
  aiinfra.hwaac.lnet:
    networks: "{{ lustre_client.lnet.networks }}"
    global: "{{ lustre_client.lnet.global }}"
"""

RETURN = r"""
commands:
  description: The commands run, in order (in check mode, the commands that would run). An C(lnetctl import)
    is shown with its document as a here-document.
  returned: always
  type: list
  elements: str
  sample: ["lnetctl lnet configure", "lnetctl net add --net o2ib --if ib1 --peer-credits 32"]
state_before:
  description: The networks and global settings found, normalised (C(nets) - C(net), C(nis) with C(interface),
    C(nid), C(status), C(tunables), C(lnd_tunables) - and C(global)). Empty when LNet was down or not loaded.
  returned: always
  type: dict
state:
  description: The same after the run (in check mode, what it would be; NIDs of new NIs are unknown there).
  returned: always
  type: dict
nids:
  description: The NIDs of the configured NIs after the run, in NI order (not in check mode).
  returned: always
  type: list
  elements: str
  sample: ["10.20.0.5@o2ib", "10.20.1.5@o2ib"]
lnet_status:
  description: What lnetctl said before the run - C(up), C(down) (modules loaded, LNet not configured), or
    C(not_loaded).
  returned: always
  type: str
mounts:
  description: The Lustre mount points found in O(proc_mounts).
  returned: always
  type: list
  elements: str
lnet_conf_changed:
  description: Whether O(lnet_conf) was (or would be) rewritten.
  returned: always
  type: bool
refused:
  description: Why each refused change cannot be made while Lustre is mounted; the task failed and nothing ran.
  returned: on failure, when a change was refused
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.aiinfra.hwaac.plugins.module_utils.host_files import HostFileError, read_text, write_atomic
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lnet import (
    EEXIST,
    HAS_YAML,
    LnetError,
    LnetInputError,
    cut_reason,
    lnet_down,
    merge_nids,
    modules_missing,
    parse_errors,
    parse_proc_mounts,
    parse_state,
)
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lnet_commands import op_command, render_lnet_conf
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lnet_plan import (
    desired_state,
    managed_view,
    plan_changes,
    simulate,
    view_text,
)
from ansible_collections.aiinfra.hwaac.plugins.module_utils.timed_run import run_limited


class Runner:
    """Runs lnetctl (and modprobe), keeping the commands that change state in ``ran``."""

    def __init__(self, module: AnsibleModule, lnetctl: str) -> None:
        self.module = module
        self.lnetctl = lnetctl
        self.ran: list[str] = []

    def read(self, *args: str) -> tuple[int, str, str]:
        """``(rc, stdout, stderr)`` of ``lnetctl ARGS`` (a command that only reads; not recorded)."""
        return run_limited(self.module, [self.lnetctl, *args]).rc_out_err

    def change(self, argv: list[str], data: str | None, display: str) -> None:
        """Run one state-changing command; fail the task with lnetctl's error when it fails.

        ``lnetctl lnet configure`` answering EEXIST is taken as "configured already": 2.16+ sends it with
        NLM_F_EXCL (lnetctl.c jt_config_lnet without --all), 2.15's ioctl is idempotent (module.c)."""
        rc, out, err = run_limited(self.module, argv, data=data).rc_out_err
        self.ran.append(display)
        if rc != 0:
            errors = parse_errors(err) or parse_errors(out)
            if display == "lnetctl lnet configure" and errors and all(e.errno == -EEXIST for e in errors):
                return
            why = "; ".join(str(e) for e in errors) or (err.strip() or out.strip() or "no output")
            self.module.fail_json(
                msg=f"'{display.splitlines()[0]}' failed (rc={rc}): {why}",
                commands=self.ran,
                rc=rc,
                stdout=out,
                stderr=err,
            )


def _read_lnetctl(runner: Runner, *args: str) -> tuple[str, dict]:
    """``("up", parsed)`` for ``lnetctl ARGS``, or ``("not_loaded"|"down", {})`` when the output says so (modules not
    loaded, LNet down: the texts of :func:`modules_missing` / :func:`lnet_down`). Fails the task on any other error
    (lnetctl's YAML error report, else its output) or on output it cannot read."""
    module = runner.module
    shown = "lnetctl " + " ".join(args)
    rc, out, err = runner.read(*args)
    text = out + "\n" + err
    if rc != 0 or parse_errors(out):
        if modules_missing(text):
            return "not_loaded", {"nets": [], "global": {}}
        if lnet_down(text):
            return "down", {"nets": [], "global": {}}
        errors = parse_errors(err) or parse_errors(out)
        module.fail_json(
            msg=f"{shown} failed (rc={rc}): " + ("; ".join(str(e) for e in errors) or text.strip()),
            stdout=out,
            stderr=err,
        )
    try:
        state = parse_state(out)
    except LnetError as exc:
        module.fail_json(msg=f"cannot read {shown}: {exc}", stdout=out, stderr=err)
    if cut := cut_reason(out, export=args[0] == "export"):  # a partial view would add NIs that exist, or miss some
        module.fail_json(msg=f"cannot read {shown}: the output looks cut short: {cut}", stdout=out, stderr=err)
    return "up", state


def read_state(runner: Runner) -> tuple[str, dict]:
    """``(status, state)``: status ``up``/``down``/``not_loaded`` and the parsed configuration (empty unless up):
    ``lnetctl export --backup`` with the NIDs of ``lnetctl net show`` (export leaves them out). Fails the task on
    output it cannot read."""
    status, shown = _read_lnetctl(runner, "net", "show")
    if status != "up":
        return status, shown
    status, state = _read_lnetctl(runner, "export", "--backup")
    if status != "up":
        return status, state
    return "up", merge_nids(state, shown)


def read_file(module: AnsibleModule, path: str) -> str | None:
    """The text of ``path``, None when it does not exist; fails the task when it cannot be read."""
    try:
        return read_text(path, missing=None)
    except HostFileError as exc:
        module.fail_json(msg=str(exc))
    return None  # not reached: fail_json exits


def nids_of(state: dict) -> list[str]:
    """The NIDs of ``state`` (:func:`parse_state`'s model) in network and NI order; NIs without one are skipped."""
    return [ni["nid"] for net in state["nets"] for ni in net["nis"] if ni.get("nid")]


def main() -> None:
    """Read LNet, plan, refuse what would cut a mounted client, run the plan (unless in check mode), read LNet
    again to confirm, and write O(lnet_conf)."""
    module = AnsibleModule(
        argument_spec={
            "networks": {
                "type": "list",
                "elements": "dict",
                "default": [],
                "options": {
                    "net": {"type": "str", "required": True},
                    "interfaces": {"type": "list", "elements": "str", "required": True},
                    "tunables": {"type": "dict", "default": {}},
                    "lnd_tunables": {"type": "dict", "default": {}},
                },
            },
            "global": {"type": "dict", "default": {}},
            "lnet_conf": {"type": "path", "default": "/etc/lnet.conf"},
            "proc_mounts": {"type": "path", "default": "/proc/mounts"},
            "purge": {"type": "bool", "default": True},
        },
        supports_check_mode=True,
    )
    p = module.params
    if not HAS_YAML:
        module.fail_json(msg=missing_required_lib("PyYAML"))
    try:
        desired = desired_state(p["networks"], p["global"])
    except LnetInputError as exc:
        module.fail_json(msg=str(exc), option=exc.option)

    runner = Runner(module, module.get_bin_path("lnetctl", required=True))
    mounts_text = read_file(module, p["proc_mounts"]) or ""
    mounts = parse_proc_mounts(mounts_text)
    mount_points = [m["mount_point"] for m in mounts]

    status, before = read_state(runner)
    plan = plan_changes(desired, before, mounts, p["purge"])
    commands: list[tuple[list[str], str | None, str]] = []
    if plan["ops"]:
        if status == "not_loaded":
            # PATH first: get_bin_path searches opt_dirs before PATH and /sbin, /usr/sbin after it on its own
            modprobe = module.get_bin_path("modprobe", required=True)
            commands.append(([modprobe, "lnet"], None, "modprobe lnet"))
        argv = [runner.lnetctl, "lnet", "configure"]
        commands.append((argv, None, "lnetctl lnet configure"))
        for op in plan["ops"]:
            argv, data, _shown = op_command(op, runner.lnetctl)
            commands.append((argv, data, op_command(op)[2]))
    displays = [c[2] for c in commands]

    predicted = simulate(before, plan["ops"])
    conf_before = conf_after = None
    conf_changed = False
    if p["lnet_conf"]:
        conf_before = read_file(module, p["lnet_conf"])
        conf_after = render_lnet_conf(desired)
        conf_changed = conf_before != conf_after

    result = {
        "state_before": before,
        "lnet_status": status,
        "mounts": mount_points,
        "lnet_conf_changed": conf_changed,
    }
    for warning in plan["warnings"]:
        module.warn(warning)

    if plan["refused"]:
        module.fail_json(
            msg="refusing to change LNet while Lustre is mounted ("
            + ", ".join(mount_points)
            + "): "
            + "; ".join(plan["refused"])
            + ". Nothing was changed. Unmount "
            + " ".join(mount_points)
            + " and run again, or run in a reboot "
            "window before Lustre is mounted (lnet.service must not be restarted while mounted: its stop unloads "
            "the modules and lnetctl lnet unconfigure returns EBUSY).",
            refused=plan["refused"],
            commands=[],
            would_run=displays,
            state=before,
            nids=nids_of(before),
            **result,
        )

    def diff(after_state: dict) -> list[dict]:
        parts = [
            {
                "before_header": "LNet (lnetctl export --backup)",
                "after_header": "LNet (desired)",
                "before": view_text(managed_view(before, desired)),
                "after": view_text(managed_view(after_state, desired)),
            }
        ]
        if p["lnet_conf"]:
            parts.append(
                {
                    "before_header": p["lnet_conf"],
                    "after_header": p["lnet_conf"],
                    "before": conf_before or "",
                    "after": conf_after,
                }
            )
        return parts

    if module.check_mode:
        module.exit_json(
            changed=bool(commands) or conf_changed,
            commands=displays,
            state=predicted,
            nids=[],
            diff=diff(predicted),
            **result,
        )

    for argv, data, display in commands:
        runner.change(argv, data, display)

    after = before
    if commands:
        status_after, after = read_state(runner)
        left = plan_changes(desired, after, [], p["purge"])["ops"]
        if status_after != "up" or left:
            differs = "; ".join(op["reason"] for op in left) or f"LNet is {status_after}"
            module.fail_json(
                msg=f"LNet differs from the desired state after applying: {differs}",
                commands=runner.ran,
                state=after,
                nids=nids_of(after),
                diff=diff(after),
                **result,
            )

    if conf_changed:
        try:
            write_atomic(module, p["lnet_conf"], conf_after)
        except HostFileError as exc:
            module.fail_json(
                msg=f"LNet was configured, but {exc}", commands=runner.ran, state=after, nids=nids_of(after), **result
            )

    module.exit_json(
        changed=bool(runner.ran) or conf_changed,
        commands=runner.ran,
        state=after,
        nids=nids_of(after),
        diff=diff(after),
        **result,
    )


if __name__ == "__main__":
    main()
