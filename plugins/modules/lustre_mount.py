#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache-2.0
"""Ansible module aiinfra.hwaac.lustre_mount: a Lustre client mount and its fstab line, compared by resolved NID."""

# ruff: noqa: E402  (Ansible modules keep DOCUMENTATION/EXAMPLES/RETURN above the imports)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: lustre_mount
short_description: Mount a Lustre file system on a client and record it in fstab, comparing what is really mounted
description:
  - Manages one Lustre client mount, C(mount -t lustre -o OPTIONS MGS:/FSNAME MOUNT_POINT), and its line in
    O(fstab) (always with C(_netdev) and the failover MGS syntax C(NID,NID:NID:/FSNAME) of mount.lustre(8)).
  - "B(Compares what is mounted, not fstab.) The module reads O(proc_mounts) and compares the mounted source by
    resolved NID: a NID written with a host name (C(mgs01@o2ib)) is resolved with C(getaddrinfo) as mount.lustre
    does, because /proc/mounts shows IP NIDs (C(10.20.0.1@o2ib)). C(o2ib0) and C(o2ib) are the same net. The order
    of the MGS nodes and of the NIDs of one node is not compared. A cosmetic C(mgsname=) option (Lustre 2.17) is
    ignored."
  - "B(Options.) Options that C(mount -o remount) can change on a Lustre client (C(ro)/C(rw) and the VFS flags
    C(nosuid), C(nodev), C(noexec), C(noatime), C(relatime), C(nodiratime) and their opposites) are fixed with a
    remount. Any other difference (another file system or MGS, C(flock)/C(localflock)/C(noflock), C(user_xattr),
    C(lazystatfs), C(checksum), ...) needs an unmount and a new mount: the task fails and says so, unless
    O(allow_unmount=true). Options that /proc/mounts does not show (C(network=), C(exclude=), C(retry=),
    C(x-systemd.*), C(_netdev)) cannot be compared; RV(unverified_options) lists them."
  - "B(LNet first.) Before mounting, the module checks with C(lctl list_nids) that LNet is up with a NID on a net
    of the MGS NIDs. A mount on a node where LNet is not configured would load LNet with its default
    C(networks=tcp) and give the client a TCP NID on its first interface (the wrong-NID pitfall); the module
    refuses that and says why. Configure LNet first with M(aiinfra.hwaac.lnet)."
  - "B(Unmounting.) O(state=unmounted) and O(state=absent) run C(umount MOUNT_POINT). When it fails with
    C(target is busy), the module runs C(fuser -vm MOUNT_POINT) and fails naming the processes that hold the
    mount (pid, user, command) in the message and in RV(holders). A lazy (C(umount -l)) or forced (C(umount -f))
    unmount happens only when O(force_unmount) asks for it."
  - fstab is written atomically; other lines, comments and blank lines are kept; the lines for the mount point are
    replaced by one line (or removed with O(state=absent)). Every line for the mount point must be a Lustre line of
    O(name); another one (another file system type, another Lustre file system) fails the task, naming the line,
    before anything changes.
version_added: "0.1.0"
author: hwaac maintainers (@aiinfra)
options:
  name:
    description: The Lustre file system name (fsname), 1 to 8 characters from C(A-Z a-z 0-9 _).
    type: str
    required: true
  mgs:
    description:
      - The MGS nodes, in failover order; each is the list of NIDs of that node (several NIDs = several networks or
        rails of one server). Written as C(NID,NID:NID,NID:/FSNAME). A node may also be given as one string with
        commas. A NID is C(ADDRESS@NET); the address is IPv4 or a host name.
      - Required with O(state=mounted) and O(state=present).
    type: list
    elements: list
  mount_point:
    description: Absolute path of the mount point; created (mode 0755) when missing with O(state=mounted).
    type: str
    required: true
  options:
    description:
      - Mount options, one per entry (for example C(flock), C(noatime), C(user_xattr)). C(_netdev) is always added.
      - C(remount) is not accepted; the module remounts by itself when only remountable options differ.
    type: list
    elements: str
    default: []
  state:
    description:
      - C(mounted) - in fstab and mounted (mounted, remounted, or with O(allow_unmount) mounted again as needed).
      - C(present) - in fstab only; the mount is not touched (a difference is reported as a warning).
      - C(unmounted) - not mounted; the fstab line stays.
      - C(absent) - not mounted and no fstab line.
    type: str
    choices: [mounted, present, unmounted, absent]
    default: mounted
  fstab:
    description: The fstab file.
    type: path
    default: /etc/fstab
  proc_mounts:
    description: The kernel's mount table to compare with; a missing file reads as no mounts.
    type: path
    default: /proc/mounts
  force_unmount:
    description:
      - How to unmount. C(none) - plain C(umount); a busy mount fails with the processes that hold it.
      - C(lazy) - C(umount -l), the mount point is detached at once and freed when the last user goes.
      - C(force) - C(umount -f), Lustre aborts the outstanding RPCs (running jobs get I/O errors).
      - Applies to O(state=unmounted), O(state=absent) and to the unmount that O(allow_unmount) permits.
    type: str
    choices: [none, lazy, force]
    default: none
  allow_unmount:
    description:
      - With O(state=mounted), allow the module to unmount and mount again when the mounted file system, MGS or an
        option that a remount cannot change differs. Without it such a difference fails the task and says what
        differs.
    type: bool
    default: false
  check_lnet:
    description: Check with C(lctl list_nids) that LNet has a NID on a net of the MGS before mounting.
    type: bool
    default: true
  timeout:
    description: Seconds each C(mount), C(umount), C(fuser) or C(lctl) call may take.
    type: int
    default: 120
notes:
  - Supports check mode (reads only; RV(actions) and RV(commands) predict the run; C(lctl list_nids) still runs) and
    diff mode (fstab text before and after, and the mount before and after).
  - Needs root (mount, umount, fstab).
seealso:
  - name: mount.lustre(8)
    description: Client mount syntax, failover MGS nodes and client options.
    link: https://github.com/lustre/lustre-release/blob/master/Documentation/man8/mount.lustre.8
  - module: aiinfra.hwaac.lnet
  - module: aiinfra.hwaac.lustre_tune
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.changes]
"""

EXAMPLES = r"""
- name: Mount lfs1 from two MGS nodes with two rails each
  aiinfra.hwaac.lustre_mount:
    name: lfs1
    mgs:
      - [10.20.0.1@o2ib, 10.20.1.1@o2ib]
      - [10.20.0.2@o2ib, 10.20.1.2@o2ib]
    mount_point: /mnt/lfs1
    options: [flock, noatime]

- name: Unmount for maintenance; a busy mount fails and names the processes
  aiinfra.hwaac.lustre_mount:
    name: lfs1
    mount_point: /mnt/lfs1
    state: unmounted

- name: Move the client to new MGS NIDs, remounting when needed (lazily if busy)
  aiinfra.hwaac.lustre_mount:
    name: lfs1
    mgs: [[mgs01@o2ib], [mgs02@o2ib]]
    mount_point: /mnt/lfs1
    options: [flock]
    allow_unmount: true
    force_unmount: lazy
"""

RETURN = r"""
source:
  description: The mount source as the module writes it (host names kept, net number 0 dropped).
  returned: when O(mgs) is given
  type: str
  sample: "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.2@o2ib:/lfs1"
fstab_line:
  description: The fstab line for the mount point after the run (or, in check mode, as it would be); null when none.
  returned: always
  type: str
  sample: "10.20.0.1@o2ib:/lfs1 /mnt/lfs1 lustre flock,noatime,_netdev 0 0"
actions:
  description: What the module did (in check mode, would do), in order - C(mkdir), C(fstab), C(mount), C(remount),
    C(unmount).
  returned: always
  type: list
  elements: str
  sample: [fstab, mount]
commands:
  description: The mount, umount, fuser and lctl commands run (in check mode, the changing ones that would run).
  returned: always
  type: list
  elements: str
  sample: ["lctl list_nids", "mount -t lustre -o flock,_netdev 10.20.0.1@o2ib:/lfs1 /mnt/lfs1"]
mounted:
  description: Whether a Lustre file system is mounted on the mount point after the run (predicted in check mode).
  returned: always
  type: bool
mounted_source:
  description: The source /proc/mounts shows for the mount point (after the run; before it in check mode).
  returned: when mounted
  type: str
  sample: "10.20.0.1@o2ib:/lfs1"
mounted_options:
  description: The options /proc/mounts shows for the mount point (after the run; before it in check mode).
  returned: when mounted
  type: list
  elements: str
  sample: [rw, noatime, checksum, flock, nouser_xattr, lruresize, lazystatfs, nouser_fid2path, verbose, encrypt]
differences:
  description: How the mounted file system differed from the wanted one, in words (empty when it did not).
  returned: always
  type: list
  elements: str
  sample: ["noatime wanted, not set", "user_xattr wanted, not in effect"]
unverified_options:
  description: Wanted options that /proc/mounts does not show, so a difference in them cannot be seen.
  returned: always
  type: list
  elements: str
  sample: ["network=o2ib1"]
lnet_nids:
  description: The local NIDs from C(lctl list_nids), when LNet was checked.
  returned: when LNet was checked
  type: list
  elements: str
  sample: ["10.20.0.5@o2ib", "10.20.1.5@o2ib"]
holders:
  description: The processes that hold a busy mount point (C(fuser -vm)), when an unmount failed with target busy.
  returned: on failure, when the mount point is busy
  type: list
  elements: dict
  sample: [{"pid": 4242, "user": "alice", "command": "python3", "access": "F...."}]
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aiinfra.hwaac.plugins.module_utils.host_files import output_line
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_mount import (
    LustreError,
    check_fsname,
    check_options,
    compare_options,
    format_source,
    fstab_entry,
    parse_mgs,
    parse_source,
    render_fstab_line,
    resolved_groups,
    with_netdev,
)
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_mount_steps import (
    Run,
    check_fstab,
    check_lnet,
    converge_fstab,
    do_mount,
    mount_text,
    mounted_differences,
    read_fstab,
    unmount,
)


def main() -> None:
    """Check the input and fstab, then bring the mount and its fstab line to O(state)."""
    module = AnsibleModule(
        argument_spec={
            "name": {"type": "str", "required": True},
            "mgs": {"type": "list", "elements": "list"},
            "mount_point": {"type": "str", "required": True},
            "options": {"type": "list", "elements": "str", "default": []},
            "state": {"type": "str", "default": "mounted", "choices": ["mounted", "present", "unmounted", "absent"]},
            "fstab": {"type": "path", "default": "/etc/fstab"},
            "proc_mounts": {"type": "path", "default": "/proc/mounts"},
            "force_unmount": {"type": "str", "default": "none", "choices": ["none", "lazy", "force"]},
            "allow_unmount": {"type": "bool", "default": False},
            "check_lnet": {"type": "bool", "default": True},
            "timeout": {"type": "int", "default": 120},
        },
        required_if=[["state", "mounted", ["mgs"]], ["state", "present", ["mgs"]]],
        supports_check_mode=True,
    )
    p = module.params
    run = Run(module)
    state = p["state"]
    mp = p["mount_point"]
    if not mp.startswith("/") or any(part in (".", "..") for part in mp.split("/")) or "\n" in mp:
        module.fail_json(msg=f"mount_point: {mp!r} must be an absolute, normalised path (for example /mnt/lfs1)")
    if p["timeout"] <= 0:
        module.fail_json(msg=f"timeout: {p['timeout']} must be a positive number of seconds")
    try:
        check_fsname(p["name"])
        options = with_netdev(check_options(p["options"]))
        groups = parse_mgs(p["mgs"]) if p["mgs"] is not None else None
    except LustreError as exc:
        module.fail_json(msg=str(exc))
    source = format_source(groups, p["name"]) if groups else None
    if source:
        run.result["source"] = source
    before = run.proc_mounts()
    if before is not None and before.fstype != "lustre" and state in ("mounted", "unmounted", "absent"):
        run.fail(f"{run.mp} has a {before.fstype} file system mounted ({before.source}), not Lustre; not touching it")
    mount_before = mount_text(before)
    after_text = mount_before
    after = before
    run.result["fstab_line"] = fstab_entry(read_fstab(run), run.mp)
    if state in ("mounted", "present", "absent"):
        check_fstab(run, removing=state == "absent")

    def resolve_wanted():
        try:
            return resolved_groups(groups)
        except LustreError as exc:
            run.fail(f"mgs: {exc}")

    if state == "mounted":
        line = render_fstab_line(source, run.mp, options)
        need_unmount: list[str] = []
        remount: list[str] = []
        resolved = resolve_wanted()
        if before is not None:
            need_unmount, remount = mounted_differences(run, before, resolved, options)
            run.result["differences"] = need_unmount + remount
            if need_unmount and not p["allow_unmount"]:
                run.fail(
                    f"{before.source} is mounted on {run.mp} but differs from the wanted mount in a way a "
                    f"remount cannot change: {'; '.join(need_unmount)}. It needs an unmount and a new mount; "
                    "set allow_unmount=true to let the module do it (force_unmount applies if it is busy)."
                )
        if (before is None or need_unmount) and p["check_lnet"]:
            check_lnet(run, groups)
        if not os.path.isdir(run.mp):
            run.action("mkdir")
            if not run.check:
                try:
                    os.makedirs(run.mp, mode=0o755)
                except OSError as exc:
                    run.fail(f"cannot create the mount point {run.mp}: {exc.strerror or exc}")
        converge_fstab(run, line)
        if before is None or need_unmount:
            if need_unmount:
                unmount(run, before)
            after = do_mount(run, source, options, resolved)
            if run.check:
                after_text = f"{source} {run.mp} lustre {','.join(options)} (to be mounted)\n"
        elif remount:
            argv = [run.binary("mount"), "-t", "lustre", "-o", "remount," + ",".join(options), before.source, run.mp]
            run.action("remount")
            res = run.run(argv)
            if run.check:
                after_text = f"{before.source} {run.mp} lustre remount,{','.join(options)} (to be remounted)\n"
            else:
                if res["rc"] != 0:
                    err = output_line(res, empty="no output")
                    run.fail(f"remount of {run.mp} failed (rc={res['rc']}): {err}")
                after = run.proc_mounts()
                left = compare_options(options, after.options if after else []).remount
                if after is None or left:
                    run.fail(f"remount of {run.mp} did not apply: {'; '.join(left) or 'not mounted'}")
        if not run.check:
            after_text = mount_text(after)
        run.result["mounted"] = True
    elif state == "present":
        converge_fstab(run, render_fstab_line(source, run.mp, options))
        if before is not None and before.fstype == "lustre":
            try:
                need_unmount, remount = mounted_differences(run, before, resolved_groups(groups), options)
            except LustreError as exc:
                need_unmount, remount = [f"cannot compare the mounted source: {exc}"], []
            run.result["differences"] = need_unmount + remount
            if need_unmount or remount:
                module.warn(
                    f"{run.mp} is mounted but differs from the fstab line (state=present does not touch the "
                    f"mount): {'; '.join(need_unmount + remount)}"
                )
        run.result["mounted"] = before is not None
    else:
        if before is not None:
            try:
                _groups, mounted_fs, _sub = parse_source(before.source)
            except LustreError:
                mounted_fs = None
            if mounted_fs != p["name"]:
                run.fail(f"{run.mp} has {before.source} mounted, not file system {p['name']}; not unmounting it")
            unmount(run, before)
            after = None
            after_text = "not mounted\n"
        if state == "absent":
            converge_fstab(run, None)
            run.result["fstab_line"] = None
        run.result["mounted"] = False

    if after_text != mount_before:
        run.diffs.append(
            {
                "before_header": f"mount {run.mp}",
                "after_header": f"mount {run.mp}",
                "before": mount_before,
                "after": after_text,
            }
        )
    shown = after if not run.check else before
    if shown is not None and run.result["mounted"]:
        run.result["mounted_source"] = shown.source
        run.result["mounted_options"] = shown.options
    module.exit_json(diff=run.diffs, **run.result)


if __name__ == "__main__":
    main()
