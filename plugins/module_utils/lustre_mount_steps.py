# Copyright: hwaac maintainers
# Apache-2.0
"""The steps of the aiinfra.hwaac.lustre_mount module: its run (:class:`Run`), the fstab line, the LNet check
before a mount, mount, unmount and the comparison of a mounted file system with the wanted one. Each step fails
the task through :meth:`Run.fail`. Standard library only (host side); formats in module_utils/lustre_mount.py.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.aiinfra.hwaac.plugins.module_utils.host_files import Steps, output_line
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_mount import (
    LustreError,
    MountEntry,
    compare_options,
    find_mount,
    foreign_fstab_line,
    fstab_entries,
    is_busy,
    lnet_problems,
    parse_fuser,
    parse_list_nids,
    parse_mounts,
    parse_source,
    same_mgs,
    update_fstab,
)


class Run(Steps):
    """One invocation: the module's steps (:class:`Steps`: commands, actions, diffs, the result) plus the mount
    point, the binaries found and the mount table."""

    def __init__(self, module: Any) -> None:
        super().__init__(module, module.params["timeout"], differences=[], unverified_options=[])
        self.p = module.params
        self.mp = self.p["mount_point"].rstrip("/") or "/"
        self.bins: dict[str, str] = {}

    def binary(self, name: str) -> str:
        """The path of ``name`` (PATH, /sbin, /usr/sbin); fails the task when it is not installed."""
        if name not in self.bins:
            path = self.module.get_bin_path(name)
            if not path:
                self.fail(f"{name} not found on this host (PATH and /sbin, /usr/sbin were searched)")
            self.bins[name] = path
        return self.bins[name]

    def proc_mounts(self) -> MountEntry | None:
        """The mount on top at the mount point in O(proc_mounts) (a missing file has no mounts: a test's fake host
        before its first mount)."""
        return find_mount(parse_mounts(self.read_text(self.p["proc_mounts"])), self.mp)


def mount_text(entry: MountEntry | None) -> str:
    """One /proc/mounts-like line for the diff (``SOURCE MP TYPE OPTIONS``), or ``not mounted``."""
    if entry is None:
        return "not mounted\n"
    return f"{entry.source} {entry.mount_point} {entry.fstype} {','.join(entry.options)}\n"


def read_fstab(run: Run) -> str:
    """The text of O(fstab) ("" when it does not exist); fails the task when it cannot be read."""
    return run.read_text(run.p["fstab"])


def write_fstab(run: Run, text: str) -> None:
    """Write O(fstab) atomically (same directory, rename; an existing file keeps its owner and mode)."""
    run.write_text(run.p["fstab"], text)


def same_fstab_line(raw: str | None, source: str, mp: str, options: list[str]) -> bool:
    """Whether the fstab line ``raw`` says what the wanted line says: a Lustre line for ``mp`` with the same MGS
    NIDs as written (same order), fsname and subdir as ``source``, the same options in any order, and dump/pass
    ``0 0``. Spacing (tabs) does not matter."""
    if raw is None:
        return False
    entries = parse_mounts(raw)
    if not entries:
        return False
    e = entries[0]
    fields = raw.split()
    tail = fields[4:6] if len(fields) >= 6 else ["0", "0"]
    try:
        g1, fs1, sub1 = parse_source(e.source)
        g2, fs2, sub2 = parse_source(source)
    except LustreError:
        return False
    return (
        e.fstype == "lustre"
        and fs1 == fs2
        and sub1 == sub2
        and [[str(n) for n in g] for g in g1] == [[str(n) for n in g] for g in g2]
        and sorted(e.options) == sorted(options)
        and tail == ["0", "0"]
        and e.mount_point.rstrip("/") == mp.rstrip("/")
    )


def check_fstab(run: Run, removing: bool) -> None:
    """Fail the task, before anything changes, when a line of O(fstab) for the mount point is not a Lustre line of
    O(name): :func:`update_fstab` replaces (or removes) every line for the mount point, and someone else's line
    (another file system type, another Lustre file system) must not go with it."""
    path = run.p["fstab"]
    foreign = foreign_fstab_line(read_fstab(run), run.mp, run.p["name"])
    if foreign is not None:
        num, line, why = foreign
        run.fail(
            f"{path} line {num} for {run.mp} is {why}, not of Lustre file system {run.p['name']}; not "
            f"{'removing' if removing else 'replacing'} it: {line}. Edit {path} by hand, or use another mount "
            "point."
        )


def converge_fstab(run: Run, wanted_line: str | None) -> None:
    """Bring O(fstab) to one line ``wanted_line`` for the mount point (``None``: no line), after
    :func:`check_fstab`. An equal line (same source by NID and fsname, same options in any order, ``0 0``, any
    spacing) is left as it is; otherwise the file is rewritten atomically, with the ``fstab`` action and a diff.
    Sets ``fstab_line`` in the result."""
    path = run.p["fstab"]
    check_fstab(run, removing=wanted_line is None)
    text = read_fstab(run)
    current = fstab_entries(text, run.mp)
    if wanted_line is None:
        if not current:
            return
        new = update_fstab(text, run.mp, None)
    else:
        opts = wanted_line.split()[3].split(",")
        if len(current) == 1 and same_fstab_line(current[0], wanted_line.split()[0], run.mp, opts):
            run.result["fstab_line"] = current[0].strip()
            return
        new = update_fstab(text, run.mp, wanted_line)
    run.diffs.append({"before_header": path, "after_header": path, "before": text, "after": new})
    run.action("fstab")
    if not run.check:
        write_fstab(run, new)
    run.result["fstab_line"] = wanted_line


def check_lnet(run: Run, groups) -> None:
    """Fail the task, before mounting, unless LNet is up (``lctl list_nids`` answers) with a NID on a network of
    at least one MGS node of ``groups``; warn for failover MGS nodes no local network reaches. A mount without
    LNet configured would load it with its default ``networks="tcp"`` and give the client a wrong NID
    (lustre-release ``lnet/lnet/api-ni.c`` ``lnet_get_networks``; Lustre wiki "LNet Configuration Edge Case
    Behaviors and Side-Effects"). Sets ``lnet_nids`` in the result."""
    lctl = run.binary("lctl")
    res = run.run([lctl, "list_nids"], changing=False)
    what = output_line(res)
    if res["rc"] != 0:
        run.fail(
            f"cannot mount {run.p['name']} on {run.mp}: LNet is not up on this node (lctl list_nids: {what}). "
            "Mounting now would make mount.lustre load LNet with its default networks=\"tcp\" and give this "
            "client a TCP NID on its first interface instead of its intended NIDs (lnet_get_networks in "
            "lustre-release lnet/lnet/api-ni.c). Configure LNet first (aiinfra.hwaac.lnet), or set "
            "check_lnet=false."
        )
    try:
        nids = parse_list_nids(res["stdout"])
    except LustreError as exc:
        run.fail(f"cannot read the output of lctl list_nids: {exc}")
    run.result["lnet_nids"] = [str(n) for n in nids]
    reason, warnings = lnet_problems(nids, groups)
    if reason:
        run.fail(
            f"cannot mount {run.p['name']} on {run.mp}: {reason}. The client could not reach the MGS, and a "
            "NID on the wrong net would identify it wrongly to the servers. Add the network with "
            "aiinfra.hwaac.lnet first."
        )
    for w in warnings:
        run.module.warn(w)


def unmount(run: Run, entry: MountEntry) -> None:
    """``umount [-l|-f] MP`` (O(force_unmount)), then check /proc/mounts no longer shows ``entry`` there. A busy
    mount point fails the task naming its holders (``fuser -vm``; RV(holders)); any other failure names umount's
    output."""
    mode = run.p["force_unmount"]
    argv = [run.binary("umount"), *({"lazy": ["-l"], "force": ["-f"]}.get(mode, [])), run.mp]
    run.action("unmount")
    res = run.run(argv)
    if run.check:
        return
    if res["rc"] != 0:
        err = output_line(res, empty="no output")
        if is_busy(res["stderr"] + res["stdout"]):
            fres = run.run([run.binary("fuser"), "-vm", run.mp], changing=False)
            holders = [h for h in parse_fuser(fres["stdout"], fres["stderr"]) if h.kind == "process"]
            listed = "; ".join(h.describe() for h in holders) or "no process found by fuser -vm (kernel users?)"
            run.fail(
                f"cannot unmount {run.mp}: target is busy (umount: {err}). Held by: {listed}. Stop them, or set "
                "force_unmount=lazy (detach now, free when they exit) or force_unmount=force (abort "
                "outstanding I/O).",
                holders=[{"pid": h.pid, "user": h.user, "command": h.command, "access": h.access} for h in holders],
            )
        run.fail(f"umount of {run.mp} failed (rc={res['rc']}): {err}")
    after = run.proc_mounts()
    if after is not None and after.fstype == "lustre" and after.source == entry.source:
        run.fail(f"umount of {run.mp} reported success but /proc/mounts still shows {after.source} there")


def do_mount(run: Run, source: str, options: list[str], groups) -> MountEntry | None:
    """Mount, then read /proc/mounts back and check it shows the wanted file system and MGS (None in check mode)."""
    argv = [run.binary("mount"), "-t", "lustre", "-o", ",".join(options), source, run.mp]
    run.action("mount")
    res = run.run(argv)
    if run.check:
        return None
    if res["rc"] != 0:
        err = output_line(res, empty="no output")
        run.fail(f"mount of {run.p['name']} on {run.mp} failed (rc={res['rc']}): {err}")
    after = run.proc_mounts()
    if after is None or after.fstype != "lustre":
        run.fail(f"mount of {source} on {run.mp} reported success but /proc/mounts shows no Lustre mount there")
    verify_same(run, after, groups)
    return after


def verify_same(run: Run, entry: MountEntry, groups) -> None:
    """Fail the task unless the mounted ``entry`` is O(name) from the MGS nodes ``groups`` (resolved NIDs, order
    ignored)."""
    try:
        mgroups, mfs, _sub = parse_source(entry.source)
    except LustreError as exc:
        run.fail(f"cannot read the mounted source of {run.mp}: {exc}")
    if mfs != run.p["name"] or not same_mgs(mgroups, groups):
        run.fail(
            f"after mounting, /proc/mounts shows {entry.source} on {run.mp}, not {run.p['name']} from the wanted MGS"
        )


def mounted_differences(run: Run, entry: MountEntry, groups, options: list[str]) -> tuple[list[str], list[str]]:
    """(differences that need an unmount, differences a remount fixes)."""
    try:
        mgroups, mfs, msub = parse_source(entry.source)
    except LustreError as exc:
        return [f"mounted source {entry.source!r} cannot be read ({exc})"], []
    need_unmount = []
    if mfs != run.p["name"] or msub:
        need_unmount.append(f"file system {mfs}{'/' + msub if msub else ''} is mounted, {run.p['name']} wanted")
    elif not same_mgs(mgroups, groups):
        shown = ":".join(",".join(str(n) for n in g) for g in groups)
        need_unmount.append(f"mounted from MGS {entry.source.partition(':/')[0]}, wanted {shown} (resolved)")
    diff = compare_options(options, entry.options)
    run.result["unverified_options"] = diff.unverified
    return need_unmount + diff.unmount, diff.remount
