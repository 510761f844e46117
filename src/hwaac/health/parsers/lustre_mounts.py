"""The Lustre client lines of ``/proc/mounts``: :func:`parse_lustre_mounts`.

``<mgsnid>[,<nid>][:<failover>]:/<fsname>[/subdir] <dir> lustre <options> 0 0`` (mount.lustre.8), fields decoded
as the kernel escapes them, through the readers shared with the host modules
(:mod:`hwaac.health.parsers.lustre_formats`: ``mount_lines``, ``split_source``, ``unescape_mount_field``; compare
NIDs with its ``normalise_nid``; ``proc_mounts_cut`` says whether the text was cut short). Facts only; never raises.
"""

from __future__ import annotations

from dataclasses import dataclass

from hwaac.health.parsers.lustre_formats import mount_lines, split_source


@dataclass(frozen=True)
class LustreMount:
    """A Lustre client mount from ``/proc/mounts``.

    Attributes:
        source: as printed (``10.20.0.1@o2ib,10.20.0.2@o2ib:10.20.0.3@o2ib:/lfs1``).
        fsname: ``lfs1`` (a subdirectory mount ``/lfs1/sub`` keeps ``lfs1``).
        mount_point: the directory (octal escapes such as ``\\040`` decoded).
        options: the mount options in order (octal escapes decoded).
        mgs: failover MGS nodes, each a tuple of its NIDs as printed (``:`` separates nodes, ``,`` NIDs of one
            node; compare them through :func:`~hwaac.health.parsers.lustre_formats.normalise_nid`).
    """

    source: str
    fsname: str
    mount_point: str
    options: tuple[str, ...]
    mgs: tuple[tuple[str, ...], ...]


def parse_lustre_mounts(raw: str) -> list[LustreMount]:
    """The ``lustre`` mounts of a ``/proc/mounts`` text.

    Args:
        raw: the file's text (``SOURCE MOUNT_POINT TYPE OPTIONS 0 0`` per line, fields separated by one space).

    Returns:
        One :class:`LustreMount` per Lustre client line, in file order, every field decoded with
        ``unescape_mount_field`` (the kernel escapes space, tab, newline and backslash, so splitting on
        whitespace before decoding is exact). Lines of other file systems and malformed lines are skipped: a line
        that is not Lustre's is no evidence about Lustre. Never raises.
    """
    mounts = []
    for source, mount_point, fstype, options in mount_lines(raw):  # lustre_formats: one reader, host and controller
        split = split_source(source) if fstype == "lustre" else None
        if split is None:
            continue
        nodes, fsname, _subdir = split
        mounts.append(LustreMount(source, fsname, mount_point, tuple(options), tuple(tuple(n) for n in nodes)))
    return mounts
