"""Judge ``lfs df`` facts (:mod:`hwaac.health.parsers.lustre_df`): the MDTs and OSTs a Lustre client sees.

A target that printed an error instead of its numbers is unreachable (FAIL, CHECK_LINK) or administratively
deactivated (``inactive device``: WARN, as :mod:`hwaac.health.checks_lustre` treats a deactivated import); a
read-only target fails writes (FAIL); a degraded one (RAID rebuild) or one out of space or inodes, or above
:data:`FULL_PERCENT` used, warns. A mounted file system missing from the output, or an output that could not be
read completely, is UNKNOWN (RETEST), never PASS.
"""

from __future__ import annotations

from collections.abc import Iterable

from hwaac.health.parsers.lustre_df import LfsDfResult
from hwaac.health.result import Action, Finding, Status, incomplete_means_retest

FULL_PERCENT = 95  # Use%/IUse% from which a target warns (OST allocation skews and ENOSPC follow)
_STATE = {  # obd_statfs_state_names in lustre_user.h: letter -> (code, status, action, meaning)
    "R": ("LUSTRE_TARGET_READONLY", Status.FAIL, Action.NONE, "is read-only (writes to it fail)"),
    "D": ("LUSTRE_TARGET_DEGRADED", Status.WARN, Action.NONE, "is degraded (RAID rebuild: slow I/O)"),
    "S": ("LUSTRE_TARGET_FULL", Status.WARN, Action.NONE, "is out of space"),
    "I": ("LUSTRE_TARGET_FULL", Status.WARN, Action.NONE, "is out of inodes"),
    "N": ("LUSTRE_TARGET_NOCREATE", Status.WARN, Action.NONE, "takes no new objects"),
}


@incomplete_means_retest
def df_findings(result: LfsDfResult, mounted: Iterable[str] = ()) -> list[Finding]:
    """Findings for one ``lfs df`` (or ``lfs df -i``) output; ``mounted``: fsnames /proc/mounts shows mounted."""
    out = result.unknown_findings()
    what = "inodes" if result.inodes else "space"
    for fs in result.filesystems:
        for row in fs.rows:
            target = row.uuid.removesuffix("_UUID")
            if row.inactive:
                out.append(
                    Finding(
                        "LUSTRE_TARGET_DEACTIVATED",
                        Status.WARN,
                        f"{target} is inactive on this client (deactivated): no new files are striped on it",
                        target,
                        row.evidence,
                    )
                )
            elif row.error:
                out.append(
                    Finding(
                        "LUSTRE_TARGET_UNREACHABLE",
                        Status.FAIL,
                        f"{target}: statfs failed ({row.error}): this client cannot reach the target",
                        target,
                        row.evidence,
                        Action.CHECK_LINK,
                    )
                )
            for letter in dict.fromkeys(row.state):
                if letter in _STATE:
                    code, status, action, meaning = _STATE[letter]
                    out.append(
                        Finding(code, status, f"{target} {meaning} (state {letter})", target, row.evidence, action)
                    )
            if row.use_pct is not None and row.use_pct >= FULL_PERCENT and not set(row.state) & {"S", "I"}:
                out.append(
                    Finding(
                        "LUSTRE_TARGET_FULL",
                        Status.WARN,
                        f"{target}: {row.use_pct}% of its {what} used (warn from {FULL_PERCENT}%)",
                        target,
                        row.evidence,
                    )
                )
    seen = {fs.fsname for fs in result.filesystems}
    if not result.unknown:
        out += [
            Finding(
                "LUSTRE_DF_MISSING",
                Status.UNKNOWN,
                f"{name} is mounted but lfs df listed no target of it",
                name,
                action=Action.RETEST,
            )
            for name in mounted
            if name not in seen
        ]
    return out
