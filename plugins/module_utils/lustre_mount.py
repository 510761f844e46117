# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Lustre client mounts on the managed host: MGS source strings, NIDs, /proc/mounts, fstab, ``fuser -v`` output.

Standard library only (host side); used by ``aiinfra.hwaac.lustre_mount``. Every parser states the source of the
format it reads; ``tests/fixtures/tools/{proc_mounts,fuser,lctl}/README.md`` name the recorded samples. The
domain facts (mount source syntax, NID normalisation, the /proc/mounts options of each Lustre release, what
``mount -o remount`` can change, the ``fuser -v`` layout) and their sources: docs/modules/lustre.md,
"Client mounts".
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass, field

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_formats import (
    LustreError,
    mount_lines,
    normalise_net,
    read_list_nids,
    split_source,
    unescape_mount_field,
)

FSNAME_RE = re.compile(r"^[A-Za-z0-9_]{1,8}$")
HOST_LABEL_RE = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
NID_HELP = "expected ADDRESS@NET, for example 10.20.0.1@o2ib, 10.20.0.1@o2ib1 or mgs01@tcp (a host name is resolved)"

# VFS per-mount flags that `mount -o remount` changes on a Lustre client; value: the token /proc/mounts shows when
# the flag is set (None: shown as the absence of its opposite).
REMOUNT_OPTIONS = {
    "ro", "rw", "nosuid", "suid", "nodev", "dev", "noexec", "exec",
    "noatime", "atime", "nodiratime", "diratime", "relatime", "norelatime", "strictatime",
}  # fmt: skip
# Options that only user space reads (mount(8), systemd's fstab generator); never in /proc/mounts.
USERSPACE_OPTIONS = {
    "defaults",
    "_netdev",
    "auto",
    "noauto",
    "nofail",
    "user",
    "nouser",
    "users",
    "owner",
    "noowner",
    "group",
    "loop",
    "force",
}
USERSPACE_PREFIXES = ("x-", "comment=", "retry=", "skpath=", "md_stripe_cache_size=")
# Lustre flags /proc/mounts shows (positive name -> negative name, or None when there is no "no" form)
LUSTRE_SHOWN_NEW = {  # 2.15+ table (ll_sbi_flags_name)
    "checksum": "nochecksum", "flock": "noflock", "localflock": None, "user_xattr": "nouser_xattr",
    "lruresize": "nolruresize", "lazystatfs": "nolazystatfs", "32bitapi": None,
    "user_fid2path": "nouser_fid2path", "verbose": "noverbose", "always_ping": None, "encrypt": "noencrypt",
    "nolock": None,
}  # fmt: skip
LUSTRE_SHOWN_OLD = {
    "nolock": None,
    "flock": "noflock",
    "localflock": None,
    "user_xattr": "nouser_xattr",
    "lazystatfs": "nolazystatfs",
    "user_fid2path": "nouser_fid2path",
}
BUSY_MARKERS = ("target is busy", "device is busy", "Device or resource busy")


@dataclass(frozen=True)
class Nid:
    """One NID: ``address`` as written (IPv4 or host name) and ``net`` normalised (``o2ib0`` -> ``o2ib``)."""

    address: str
    net: str

    def __str__(self) -> str:
        return f"{self.address}@{self.net}"

    @property
    def is_ip(self) -> bool:
        """Whether ``address`` is an IPv4 address (else a host name that mount.lustre resolves)."""
        try:
            ipaddress.IPv4Address(self.address)
        except ValueError:
            return False
        return True


@dataclass
class MountEntry:
    """One /proc/mounts (or fstab) line, fields unescaped; ``options`` in their order."""

    source: str
    mount_point: str
    fstype: str
    options: list[str] = field(default_factory=list)


@dataclass
class Holder:
    """A process that holds a mount point, from ``fuser -vm``. ``kind``: ``process``, ``mount``, ``knfsd``, ``swap``."""

    name: str
    user: str
    pid: int | None
    access: str
    command: str
    kind: str = "process"

    def describe(self) -> str:
        """``pid 4242 (alice) bash`` for a process, ``mount /mnt/lfs1`` for the others (for messages)."""
        return f"pid {self.pid} ({self.user}) {self.command}" if self.pid is not None else f"{self.kind} {self.command}"


def parse_nid(text: str, where: str = "NID") -> Nid:
    """Parse ``ADDRESS@NET`` (mount.lustre(8)): the address an IPv4 address or a host name, the net normalised
    (:func:`normalise_net`). Raises :class:`LustreError` naming ``where`` (``mgs[0][1]``), the value and what a NID
    is."""
    if not isinstance(text, str) or text.count("@") != 1:
        raise LustreError(f"{where}: {text!r} is not a NID: {NID_HELP}")
    address, net = text.split("@")
    if not address or any(c in address for c in ",:/ \t"):
        raise LustreError(f"{where}: {text!r} is not a NID: {NID_HELP}")
    try:
        net_n = normalise_net(net)
    except LustreError as exc:
        raise LustreError(f"{where}: {text!r} is not a NID: {exc}") from None
    if net_n != "lo":
        try:
            ipaddress.IPv4Address(address)
        except ValueError:
            if address[0].isdigit() and address.replace(".", "").isdigit():
                raise LustreError(f"{where}: {text!r} is not a NID: {address!r} is not an IPv4 address") from None
            if len(address) > 253 or not all(HOST_LABEL_RE.match(label) for label in address.split(".")):
                raise LustreError(
                    f"{where}: {text!r} is not a NID: {address!r} is neither an IPv4 address nor a "
                    f"host name; {NID_HELP}"
                ) from None
    return Nid(address, net_n)


def check_fsname(name: str, where: str = "name") -> str:
    """``name`` when it is a Lustre file system name: 1 to 8 characters of ``[A-Za-z0-9_]`` (mkfs.lustre(8)
    ``--fsname``). Raises :class:`LustreError` naming ``where``, the value and what is valid."""
    if not isinstance(name, str) or not FSNAME_RE.match(name):
        raise LustreError(
            f"{where}: {name!r} is not a valid Lustre file system name: 1 to 8 characters from "
            "A-Z, a-z, 0-9 and _ (mkfs.lustre --fsname)"
        )
    return name


def parse_mgs(groups, where: str = "mgs") -> list[list[Nid]]:
    """Check ``[[nid, ...], ...]`` (failover MGS nodes, each a list of NIDs of that node; a node may also be given
    as one comma-separated string) -> the nodes as :class:`Nid` lists. Raises :class:`LustreError` naming the
    element (``mgs[1][0]``), the value and what is valid."""
    if not isinstance(groups, list) or not groups:
        raise LustreError(
            f"{where}: {groups!r} must be a non-empty list of MGS nodes, each a list of NIDs, for "
            "example [[10.20.0.1@o2ib, 10.20.1.1@o2ib], [10.20.0.2@o2ib]]"
        )
    out: list[list[Nid]] = []
    for i, group in enumerate(groups):
        if isinstance(group, str):
            group = [n.strip() for n in group.split(",")]
        if not isinstance(group, list) or not group:
            raise LustreError(f"{where}[{i}]: {group!r} must be a non-empty list of NIDs of one MGS node")
        out.append([parse_nid(nid, f"{where}[{i}][{j}]") for j, nid in enumerate(group)])
    return out


def format_source(groups: list[list[Nid]], fsname: str) -> str:
    """``10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.2@o2ib:/lfs1`` (mount.lustre(8) syntax)."""
    return ":".join(",".join(str(n) for n in group) for group in groups) + ":/" + fsname


def parse_source(source: str) -> tuple[list[list[Nid]], str, str]:
    """``NID[,NID][:NID[,NID]]:/fsname[/subdir]`` (mount.lustre(8)) -> (MGS nodes as :class:`Nid` lists, fsname,
    subdir or ""). Raises :class:`LustreError` for anything else (no ``:/``, a part that is not a NID)."""
    split = split_source(source)
    if split is None:
        raise LustreError(f"{source!r} is not a Lustre client source (expected NID[,NID][:NID...]:/FSNAME)")
    nodes, fsname, subdir = split
    if sum(map(len, nodes)) != source.partition(":/")[0].replace(":", ",").count(",") + 1:
        parse_nid("", "source")  # an empty NID between separators: raises, naming the value
    groups = [[parse_nid(n, "source") for n in node] for node in nodes]
    return groups, fsname, subdir


def resolve_nid(nid: Nid, resolver=socket.getaddrinfo) -> Nid:
    """The NID with its host name resolved to the first IPv4 address (as mount.lustre's ``convert_hostnames`` /
    ``libcfs_str2nid`` do); IP NIDs and ``lo`` are returned as they are. Raises :class:`LustreError` naming the
    host name when it does not resolve to an IPv4 address."""
    if nid.net == "lo" or nid.is_ip:
        return nid
    try:
        infos = resolver(nid.address, None, socket.AF_INET, socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise LustreError(f"cannot resolve host name {nid.address!r} of NID {nid}: {exc}") from None
    for info in infos:
        addr = info[4][0]
        return Nid(addr, nid.net)
    raise LustreError(f"cannot resolve host name {nid.address!r} of NID {nid}: no IPv4 address")


def resolved_groups(groups: list[list[Nid]], resolver=socket.getaddrinfo) -> list[list[Nid]]:
    """``groups`` (MGS nodes, each a list of NIDs) with every NID resolved (:func:`resolve_nid`), as /proc/mounts
    shows them. Raises :class:`LustreError` as :func:`resolve_nid` does."""
    return [[resolve_nid(n, resolver) for n in group] for group in groups]


def same_mgs(a: list[list[Nid]], b: list[list[Nid]]) -> bool:
    """Same MGS nodes with the same NIDs (resolved NIDs; order of nodes and of NIDs inside a node ignored)."""
    return {frozenset(g) for g in a} == {frozenset(g) for g in b}


def escape_field(text: str) -> str:
    """Octal-escape space, tab, newline and backslash as the kernel and fstab(5) do."""
    return "".join(f"\\{ord(c):03o}" if c in " \t\n\\" else c for c in text)


def parse_mounts(text: str) -> list[MountEntry]:
    """Lines of /proc/mounts (or fstab, comments and blank lines skipped): ``SOURCE MP TYPE OPTS [FREQ PASS]``."""
    return [
        MountEntry(source, mount_point, fstype, options) for source, mount_point, fstype, options in mount_lines(text)
    ]


def find_mount(entries: list[MountEntry], mount_point: str) -> MountEntry | None:
    """The mount on top at ``mount_point`` (the last line for it; later mounts hide earlier ones)."""
    found = None
    for e in entries:
        if e.mount_point.rstrip("/") == mount_point.rstrip("/") or (e.mount_point == "/" and mount_point == "/"):
            found = e
    return found


def check_options(options, where: str = "options") -> list[str]:
    """``options`` (a list of single mount options, for ``mount -o``) as a list. Raises :class:`LustreError`
    naming the element (``options[2]``) for an entry that is empty, not a string, or holds a comma or whitespace
    (one option per entry), and for ``remount`` (the module remounts by itself)."""
    out = []
    for i, opt in enumerate(options or []):
        if not isinstance(opt, str) or not opt or any(c in opt for c in ", \t\n"):
            raise LustreError(
                f"{where}[{i}]: {opt!r} is not one mount option (one option per entry, no commas or "
                "spaces; for example flock, noatime, _netdev)"
            )
        if opt == "remount":
            raise LustreError(
                f"{where}[{i}]: 'remount' is not a mount option here; the module remounts by itself "
                "when only remountable options differ"
            )
        out.append(opt)
    return out


def with_netdev(options: list[str]) -> list[str]:
    """The options with ``_netdev`` (network file system: wait for the network at boot); no duplicates."""
    out: list[str] = []
    for o in options:
        if o not in out:
            out.append(o)
    if "_netdev" not in out:
        out.append("_netdev")
    return out


def _is_userspace(opt: str) -> bool:
    return opt in USERSPACE_OPTIONS or opt.startswith(USERSPACE_PREFIXES)


def expected_vfs(options: list[str]) -> set[str]:
    """The VFS tokens /proc/mounts shows for a Lustre mount made with ``options`` (mount.lustre forces
    strictatime, which shows nothing, unless noatime or relatime is given; ``mount_lustre.c``)."""
    shown = {"rw"}
    atime = None
    for o in options:
        if o in ("ro", "rw"):
            shown.discard("ro")
            shown.discard("rw")
            shown.add(o)
        elif o in ("nosuid", "nodev", "noexec", "nodiratime"):
            shown.add(o)
        elif o in ("suid", "dev", "exec", "diratime"):
            shown.discard("no" + o)
        elif o in ("noatime", "relatime"):
            atime = o
        elif o in ("atime", "strictatime", "norelatime"):
            atime = None
    if atime:
        shown.add(atime)
    return shown


VFS_SHOWN = {"ro", "rw", "nosuid", "nodev", "noexec", "noatime", "nodiratime", "relatime"}


@dataclass
class OptionDiff:
    """How the options of a mounted Lustre client differ from the wanted ones."""

    remount: list[str] = field(default_factory=list)  # VFS differences, fixed by mount -o remount
    unmount: list[str] = field(default_factory=list)  # Lustre option differences, need umount + mount
    unverified: list[str] = field(default_factory=list)  # wanted options /proc/mounts does not show

    @property
    def any(self) -> bool:
        return bool(self.remount or self.unmount)


def compare_options(wanted: list[str], mounted: list[str]) -> OptionDiff:
    """Compare wanted mount options with a /proc/mounts option list (either Lustre layout, see the module doc)."""
    diff = OptionDiff()
    mounted_set = set(mounted)
    have_vfs = mounted_set & VFS_SHOWN
    want_vfs = expected_vfs(wanted)
    for tok in sorted(want_vfs - have_vfs):
        diff.remount.append(f"{tok} wanted, not set")
    for tok in sorted(have_vfs - want_vfs):
        diff.remount.append(f"{tok} set, not wanted")
    table = LUSTRE_SHOWN_NEW if mounted_set & {"checksum", "nochecksum"} else LUSTRE_SHOWN_OLD
    negatives = {neg: pos for pos, neg in table.items() if neg}
    for o in wanted:
        if o in REMOUNT_OPTIONS or _is_userspace(o):
            continue
        if o in table:
            if o not in mounted_set:
                diff.unmount.append(f"{o} wanted, not in effect")
        elif o in negatives:
            pos = negatives[o]
            if pos in mounted_set or (pos == "flock" and "localflock" in mounted_set):
                diff.unmount.append(f"{o} wanted, {pos if pos in mounted_set else 'localflock'} in effect")
        elif o.startswith("mgsname="):
            continue
        else:
            diff.unverified.append(o)
    # flock / localflock exclude each other
    if "flock" in wanted and "localflock" in mounted_set and "flock wanted, not in effect" not in diff.unmount:
        diff.unmount.append("flock wanted, localflock in effect")
    return diff


def render_fstab_line(source: str, mount_point: str, options: list[str]) -> str:
    """The fstab(5) line ``SOURCE MOUNT_POINT lustre OPTIONS 0 0`` (fields octal-escaped; ``defaults`` without
    options; dump 0, fsck pass 0: a network file system is never checked at boot)."""
    return f"{escape_field(source)} {escape_field(mount_point)} lustre {','.join(options) or 'defaults'} 0 0"


def _fstab_lines_for(text: str, mount_point: str) -> list[tuple[int, str]]:
    """``(line number from 1, raw line)`` of every fstab entry whose mount point (second field, unescaped) is
    ``mount_point`` (trailing ``/`` ignored); comments and blank lines are not entries."""
    want = mount_point.rstrip("/")
    found = []
    for num, raw in enumerate(text.splitlines(), 1):
        parts = raw.split()
        if len(parts) >= 2 and not parts[0].startswith("#") and unescape_mount_field(parts[1]).rstrip("/") == want:
            found.append((num, raw))
    return found


def update_fstab(text: str, mount_point: str, line: str | None) -> str:
    """``text`` with every line for ``mount_point`` replaced by one ``line`` (at the first one's place; ``None``:
    all removed), or ``line`` added at the end. Comments, blank lines and other lines stay as they are. Callers
    check first with :func:`foreign_fstab_line` that the lines replaced are theirs."""
    drop = {num for num, _raw in _fstab_lines_for(text, mount_point)}
    out: list[str] = []
    placed = False
    for num, raw in enumerate(text.splitlines(), 1):
        if num in drop:
            if line is not None and not placed:
                out.append(line)
                placed = True
            continue
        out.append(raw)
    if line is not None and not placed:
        out.append(line)
    return "\n".join(out) + ("\n" if out else "")


def fstab_entry(text: str, mount_point: str) -> str | None:
    """The (last) raw fstab line for ``mount_point``, or None."""
    found = _fstab_lines_for(text, mount_point)
    return found[-1][1] if found else None


def fstab_entries(text: str, mount_point: str) -> list[str]:
    """Every raw fstab line for ``mount_point``, in file order."""
    return [raw for _num, raw in _fstab_lines_for(text, mount_point)]


def foreign_fstab_line(text: str, mount_point: str, fsname: str) -> tuple[int, str, str] | None:
    """The first fstab line for ``mount_point`` that is not a Lustre line of file system ``fsname``, as
    ``(line number from 1, the line stripped, why)`` - why: ``of type nfs``, ``of Lustre file system lfs2``, or
    ``a Lustre line whose source cannot be read (...)`` - or None when every line for it is ours. A module that
    replaces or removes the lines of its mount point (:func:`update_fstab`) must not take such a line with it."""
    for num, raw in _fstab_lines_for(text, mount_point):
        entry = parse_mounts(raw)[0]
        if entry.fstype != "lustre":
            return num, raw.strip(), f"of type {entry.fstype}"
        try:
            _groups, fs, _subdir = parse_source(entry.source)
        except LustreError as exc:
            return num, raw.strip(), f"a Lustre line whose source cannot be read ({exc})"
        if fs != fsname:
            return num, raw.strip(), f"of Lustre file system {fs}"
    return None


def parse_list_nids(text: str) -> list[Nid]:
    """``lctl list_nids``: one NID a line (``jt_ptl_list_nids``, ``lnet/utils/portals.c``) -> the NIDs. Raises
    :class:`LustreError` (:func:`parse_nid`) for a line that is not a NID."""
    read = read_list_nids(text)
    if read.lnet_down:
        raise LustreError("lctl list_nids: LNet is down (Network is down)")
    if read.bad_lines:
        return [parse_nid(read.bad_lines[0], "lctl list_nids")]  # raises, naming the line
    return [parse_nid(f"{address}@{net}", "lctl list_nids") for address, net in read.nids]


def lnet_problems(local: list[Nid], groups: list[list[Nid]]) -> tuple[str | None, list[str]]:
    """(reason to refuse the mount or None, warnings) for the local NIDs against the MGS nodes' nets."""
    local_nets = {n.net for n in local if n.net != "lo"}
    reachable = [any(n.net in local_nets for n in g) for g in groups]
    wanted_nets = sorted({n.net for g in groups for n in g})
    if not any(reachable):
        shown = ", ".join(str(n) for n in local) or "none"
        return (f"LNet has no NID on the MGS network ({', '.join(wanted_nets)}); local NIDs: {shown}", [])
    warnings = [  # (no zip(strict=...): managed hosts may run Python 3.9)
        f"failover MGS node {','.join(str(n) for n in groups[i])} has no NID on a local LNet network "
        f"({', '.join(sorted(local_nets))}); failover to it will not work"
        for i, ok in enumerate(reachable)
        if not ok
    ]
    return None, warnings


def is_busy(stderr: str) -> bool:
    """Whether umount's output says the mount point is in use: util-linux ``umount: <mp>: target is busy.``, older
    ``device is busy``, or the kernel's EBUSY text ``Device or resource busy``."""
    return any(m in stderr for m in BUSY_MARKERS)


NAME_FIELD = 20


def _holder_from_fields(name: str, fields: list[str], pid_token: str | None) -> Holder | None:
    """``fields``: the stderr part of one entry (user, access or special kind, command...)."""
    if len(fields) < 2:
        return None
    user = fields[0]
    kind_or_access = fields[1]
    command = " ".join(fields[2:])
    if kind_or_access in ("mount", "knfsd", "swap"):
        return Holder(name, user, None, "", command, kind_or_access)
    pid = int(pid_token) if pid_token and pid_token.isdigit() else None
    return Holder(name, user, pid, kind_or_access, command, "process" if pid is not None else "kernel")


def parse_fuser(stdout: str, stderr: str) -> list[Holder]:
    """``fuser -vm PATH`` with stdout and stderr captured apart (how a module runs it): the PIDs (and ``kernel``)
    come in order on stdout, one per entry line of the stderr table (psmisc ``print_matches``)."""
    pids = stdout.split()
    holders: list[Holder] = []
    name = ""
    i = 0
    for line in stderr.splitlines():
        if not line.strip() or ("USER" in line and "PID ACCESS COMMAND" in line):
            continue
        if not line.startswith(" "):
            head, sep, rest = line.partition(":")
            if not sep:
                continue
            name = head
            line = " " * (len(head) + 1) + rest
            if not rest.strip():
                continue
        fields = line[NAME_FIELD:].split() if len(line) > NAME_FIELD else line.split()
        pid_token = pids[i] if i < len(pids) else None
        i += 1
        h = _holder_from_fields(name, fields, pid_token)
        if h:
            holders.append(h)
    return holders
