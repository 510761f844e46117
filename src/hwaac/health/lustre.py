"""A Lustre client's health: which probes to run (:func:`commands`), and how their raw output and the expected file
systems become findings (:func:`evaluate`) and a verdict (:func:`client_verdict`).

The host module ``aiinfra.hwaac.lustre_health`` runs the probes, each with a time limit; the controller-side action
plugin of the same name calls :func:`evaluate` and :func:`client_verdict`. Nothing here runs a tool. PASS only when
every expected file system is mounted from its expected MGS nodes and every target, import, MGS NID, health_check
and LNet NI is healthy; anything unreadable, missing, timed out or not run is UNKNOWN (RETEST), never PASS. The
probes, output shapes, verdict rules and fault codes: ``docs/health-lustre.md``. Errors: :class:`ValueError` for
malformed expectations; bad tool output never raises.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hwaac.health.checks_lustre import (
    health_check_findings,
    import_findings,
    lfs_check_findings,
    lnet_findings,
    mgs_reach_findings,
)
from hwaac.health.lustre_lnet import nid_findings
from hwaac.health.lustre_targets import df_findings
from hwaac.health.node import NodeVerdict, verdict
from hwaac.health.parsers.base import with_stderr
from hwaac.health.parsers.lctl import LctlPingResult, parse_health_check, parse_lctl_ping
from hwaac.health.parsers.lctl_list_nids import parse_lctl_list_nids
from hwaac.health.parsers.lnetctl import NET_SHOW_ARGV, parse_lnet_net_show
from hwaac.health.parsers.lustre import parse_lfs_check
from hwaac.health.parsers.lustre_df import parse_lfs_df
from hwaac.health.parsers.lustre_formats import normalise_nid, proc_mounts_cut
from hwaac.health.parsers.lustre_imports import parse_imports
from hwaac.health.parsers.lustre_mounts import LustreMount, parse_lustre_mounts
from hwaac.health.result import Action, Finding, Status, retest_finding

FSNAME = re.compile(r"^[A-Za-z0-9_]{1,8}$")  # mkfs.lustre.8: at most 8 characters
NID = re.compile(r"^\S+@[A-Za-z][A-Za-z0-9]*$")  # 10.20.0.1@o2ib, 10.0.0.5@tcp1, 0@lo
PING_PREFIX = "ping "
STAGE = "lustre"


@dataclass(frozen=True)
class ExpectedFilesystem:
    """A file system the node must have mounted.

    Attributes:
        name: the Lustre fsname (1-8 characters ``[A-Za-z0-9_]``).
        mgs: failover MGS nodes in order, each a tuple of that node's NIDs.
        mount_point: where it must be mounted ("" = anywhere).
    """

    name: str
    mgs: tuple[tuple[str, ...], ...] = ()
    mount_point: str = ""

    @property
    def mgs_nids(self) -> list[str]:
        """Every MGS NID of the file system (``list[str]``), node by node, as written in the expectation."""
        return [nid for node in self.mgs for nid in node]


def expected_filesystems(items: Iterable[Mapping[str, Any] | str]) -> list[ExpectedFilesystem]:
    """Expected file systems from ``lustre-client.json``'s ``filesystems`` (dicts with ``name``, ``mgs``,
    ``mount_point``; other keys ignored) or bare fsnames.

    Raises:
        ValueError: a name that is not a Lustre fsname, an ``mgs`` that is not a list of lists of NIDs.
    """
    out = []
    for index, item in enumerate(items):
        data: Mapping[str, Any] = {"name": item} if isinstance(item, str) else item
        name = data.get("name")
        if not isinstance(name, str) or not FSNAME.match(name):
            raise ValueError(
                f"filesystems[{index}].name: {name!r} is not a Lustre fsname (1-8 characters A-Z a-z 0-9 _)"
            )
        mgs_raw = data.get("mgs") or []
        if not isinstance(mgs_raw, list) or not all(isinstance(node, list) for node in mgs_raw):
            raise ValueError(
                f"filesystems[{index}].mgs: {mgs_raw!r} must be a list of MGS nodes, each a list of "
                "NIDs, e.g. [['10.20.0.1@o2ib', '10.20.1.1@o2ib'], ['10.20.0.2@o2ib']]"
            )
        for node in mgs_raw:
            for nid in node:
                if not isinstance(nid, str) or not NID.match(nid):
                    raise ValueError(
                        f"filesystems[{index}].mgs: {nid!r} is not a NID (address@net, e.g. 10.20.0.1@o2ib)"
                    )
        mount_point = data.get("mount_point") or ""
        if not isinstance(mount_point, str):
            raise ValueError(f"filesystems[{index}].mount_point: {mount_point!r} must be a path")
        out.append(ExpectedFilesystem(name, tuple(tuple(node) for node in mgs_raw), mount_point))
    return out


def all_mgs_nids(filesystems: Sequence[ExpectedFilesystem], extra: Iterable[str] = ()) -> list[str]:
    """Every MGS NID to ping, each once, in order (the file systems', then ``extra``).

    Raises:
        ValueError: an extra NID that is not ``address@net``.
    """
    seen: dict[str, None] = {}
    for fs in filesystems:
        for nid in fs.mgs_nids:
            seen.setdefault(nid, None)
    for nid in extra:
        if not NID.match(nid):
            raise ValueError(f"mgs_nids: {nid!r} is not a NID (address@net, e.g. 10.20.0.1@o2ib)")
        seen.setdefault(nid, None)
    return list(seen)


def commands(
    mgs_nids: Iterable[str], *, lnet: bool = True, df: bool = False, nids: bool = False
) -> dict[str, list[str]]:
    """The probes: probe name -> argv (no shell). ``ping <nid>`` per MGS NID; ``lnet_net`` when ``lnet``;
    ``lfs_df`` when ``df``; ``list_nids`` when ``nids``."""
    probes = {
        "lfs_check": ["lfs", "check", "servers"],
        "health_check": ["lctl", "get_param", "-n", "health_check"],
        "imports": ["lctl", "get_param", "osc.*.import", "mdc.*.import"],
    }
    for nid in mgs_nids:
        probes[PING_PREFIX + nid] = ["lctl", "ping", nid]
    if lnet:
        probes["lnet_net"] = list(NET_SHOW_ARGV)  # -v 2: the lowest detail level that prints health stats
    if nids:
        probes["list_nids"] = ["lctl", "list_nids"]
    if df:
        probes["lfs_df"] = ["lfs", "df", "-v"]  # -v: inactive targets get a row (lfs.c mntdf skips them without)
    return probes


def _is_host_name(nid: str) -> bool:
    """True when the NID's address is a host name (``mgs01@o2ib``); IP addresses and LNet's numeric addresses
    (``27@gni``, ``0@lo``) are compared as written."""
    address = nid.rpartition("@")[0]
    try:
        ipaddress.ip_address(address)
    except ValueError:
        return any(c.isalpha() for c in address)
    return False


def _net(nid: str) -> str:
    return normalise_nid(nid).rpartition("@")[2]


def compare_mgs(
    mounted: Sequence[Sequence[str]],
    expected: Sequence[Sequence[str]],
    peers: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """Compare the MGS nodes a file system is mounted from with the expected ones.

    Args:
        mounted: failover MGS nodes of the ``/proc/mounts`` source (:attr:`LustreMount.mgs`), each a sequence of
            NIDs. /proc/mounts shows addresses: ``mount.lustre`` resolves host names NID by NID before mount(2)
            (``convert_hostnames`` in lustre-release ``lustre/utils/mount_lustre.c``).
        expected: the expected failover MGS nodes (``lustre-client.json`` ``mgs``); a NID may name a host.
        peers: expected host-name NID -> the NIDs its MGS listed when ``lctl ping`` reached it (``lctl`` resolves
            the name on the node as ``mount.lustre`` does, and the peer answers with all its NIDs,
            ``jt_ptl_ping()`` in ``lnet/utils/portals.c``). Only the peer's NIDs on the same LNet network count.

    Rules: NIDs are compared through :func:`~hwaac.health.parsers.lustre_formats.normalise_nid` (``o2ib0`` == ``o2ib``,
    ``tcp0`` == ``tcp``); the order of the NIDs of one node and the order of the failover nodes do not matter
    (the client tries every listed node; ``aiinfra.hwaac.lustre_mount`` also treats such a source as the same and
    does not remount); the NIDs must be grouped into nodes the same way.

    Returns:
        ``"same"``; ``"differs"``: some NID in common, but nodes or NIDs differ (another failover list);
        ``"other"``: no NID in common with any expected MGS node (with every expected NID known);
        ``"unverified"``: a host-name NID could not be resolved (its ping failed or was not read) and the source
        would match for some address of it. Never raises.
    """
    peers = peers or {}
    nodes = []  # (known NIDs, size, unresolved host names)
    for node in expected:
        known: set[str] = set()
        unresolved = 0
        for nid in node:
            if not _is_host_name(nid):
                known.add(normalise_nid(nid))
            elif nid in peers:
                known.update(normalise_nid(p) for p in peers[nid] if _net(p) == _net(nid))
            else:
                unresolved += 1
        size = len({normalise_nid(n) for n in node if not _is_host_name(n)}) + sum(map(_is_host_name, node))
        nodes.append((known, size, unresolved))
    groups = [frozenset(normalise_nid(nid) for nid in node) for node in mounted]

    def fits(group: frozenset[str], node: tuple[set[str], int, int], wildcard: bool) -> bool:
        known, size, unresolved = node
        return len(group) == size and len(group - known) <= (unresolved if wildcard else 0)

    def matches(wildcard: bool) -> bool:  # a one-to-one pairing of mounted and expected nodes (Kuhn's algorithm)
        if len(groups) != len(nodes):
            return False
        owner: dict[int, int] = {}

        def place(i: int, seen: set[int]) -> bool:
            for j, node in enumerate(nodes):
                if j in seen or not fits(groups[i], node, wildcard):
                    continue
                seen.add(j)
                if j not in owner or place(owner[j], seen):
                    owner[j] = i
                    return True
            return False

        return all(place(i, set()) for i in range(len(groups)))

    every_known = not any(unresolved for _known, _size, unresolved in nodes)
    if matches(wildcard=False):
        return "same"
    if not every_known and matches(wildcard=True):
        return "unverified"
    common = set().union(*groups) & set().union(*(known for known, _size, _unresolved in nodes))
    return "differs" if common or not every_known else "other"


def _mgs_text(nodes: Sequence[Sequence[str]]) -> str:
    return ":".join(",".join(node) for node in nodes)


# compare_mgs's outcome -> the finding: its code, status, how the fs is mounted, and what that means
_MGS_OUTCOMES = {
    "other": (
        "LUSTRE_MOUNTED_FROM_OTHER_MGS",
        Status.FAIL,
        "is mounted from MGS",
        "no NID in common, so this is another file system of the same name or an MGS the intent no longer "
        "names (jobs would read and write the wrong data); unmount it and mount it from the expected MGS "
        "(aiinfra.hwaac.lustre_mount, role lustre_client)",
    ),
    "differs": (
        "LUSTRE_MGS_LIST_DIFFERS",
        Status.WARN,
        "is mounted with MGS nodes",
        "the client knows only the MGS NIDs it was mounted with, so a failover to an MGS node or NID "
        "missing from that list loses configuration updates and reconnection; remount from the expected "
        "list at the next maintenance (aiinfra.hwaac.lustre_mount)",
    ),
}


def _mgs_findings(fs: ExpectedFilesystem, mount: LustreMount, peers: Mapping[str, Sequence[str]]) -> list[Finding]:
    outcome = compare_mgs(mount.mgs, fs.mgs, peers)
    if outcome not in _MGS_OUTCOMES:
        return []
    code, status, mounted, meaning = _MGS_OUTCOMES[outcome]
    return [
        Finding(
            code,
            status,
            f"{fs.name} at {mount.mount_point} {mounted} {_mgs_text(mount.mgs)}, expected "
            f"{_mgs_text(fs.mgs)}: {meaning}",
            fs.name,
            mount.source,
            Action.NONE,
        )
    ]


def _probe_problem(name: str, out: Mapping[str, Any] | None) -> Finding | None:
    if out is None:
        return retest_finding("PROBE_MISSING", f"{name}: no output returned for this probe")
    if out.get("timed_out"):
        return retest_finding("PROBE_TIMEOUT", f"{name}: timed out after {out.get('seconds', 0):.0f} s")
    if out.get("rc") is None:
        return retest_finding("PROBE_NOT_RUN", f"{name}: could not start ({(out.get('stderr') or '')[:200]})")
    return None


def _text(out: Mapping[str, Any]) -> tuple[str, str, int]:
    return out.get("stdout") or "", out.get("stderr") or "", int(out["rc"])


def _required(outputs: Mapping[str, Any], name: str, judge: Callable[[str, str, int], list[Finding]]) -> list[Finding]:
    """A probe's findings: its problem when it is missing or failed to run, else ``judge``'s on its stdout, stderr
    and exit code."""
    problem = _probe_problem(name, outputs.get(name))
    return [problem] if problem else judge(*_text(outputs[name]))


def _optional(outputs: Mapping[str, Any], name: str, judge: Callable[[str, str, int], list[Finding]]) -> list[Finding]:
    """An optional probe's findings: none when it was not run, else :func:`_required`'s."""
    return _required(outputs, name, judge) if name in outputs else []


def evaluate(
    outputs: Mapping[str, Mapping[str, Any]],
    filesystems: Sequence[ExpectedFilesystem],
    *,
    proc_mounts: str | None,
    mgs_nids: Iterable[str] = (),
) -> list[Finding]:
    """Parse every probe output and judge it against the expected file systems.

    Args:
        outputs: probe name -> output, as the host module returns them (names of :func:`commands`).
        filesystems: the file systems the node must have mounted.
        proc_mounts: the node's ``/proc/mounts`` text (None: not read, which makes mount state UNKNOWN).
        mgs_nids: MGS NIDs to ping besides the file systems' (each failing alone is WARN; all failing FAIL).

    Returns:
        Findings (possibly several per subject; :func:`client_verdict` deduplicates).
    """
    found: list[Finding] = []
    extra = [n for n in all_mgs_nids((), mgs_nids) if n not in {x for fs in filesystems for x in fs.mgs_nids}]
    if not filesystems and not extra:
        return [
            retest_finding(
                "LUSTRE_NOTHING_EXPECTED",
                "no expected Lustre file system or MGS NID was given: nothing "
                "to judge (pass filesystems or the node's lustre-client.json)",
            )
        ]

    cut = proc_mounts_cut(proc_mounts) if proc_mounts is not None else None  # a mount after the cut is unread
    mounts = parse_lustre_mounts(proc_mounts) if proc_mounts is not None and cut is None else None
    unread = f"/proc/mounts was cut short ({cut})" if cut else "/proc/mounts was not read"
    mounted: dict[str, LustreMount] = {}
    for fs in filesystems:
        if mounts is None:
            found.append(retest_finding("LUSTRE_MOUNTS_UNREAD", f"{unread}: mount state unknown", fs.name))
            continue
        here = [m for m in mounts if m.fsname == fs.name]
        at_point = [m for m in here if not fs.mount_point or m.mount_point == fs.mount_point]
        if at_point:
            mounted[fs.name] = at_point[0]
        elif here:
            mounted[fs.name] = here[0]
            found.append(
                Finding(
                    "LUSTRE_MOUNTED_ELSEWHERE",
                    Status.WARN,
                    f"{fs.name} is mounted at {here[0].mount_point}, expected at {fs.mount_point}",
                    fs.name,
                    here[0].source,
                    Action.NONE,
                )
            )
        else:
            found.append(
                Finding(
                    "LUSTRE_NOT_MOUNTED",
                    Status.FAIL,
                    f"{fs.name} is not mounted"
                    + (f" at {fs.mount_point}" if fs.mount_point else "")
                    + ": mount it (aiinfra.hwaac.lustre_mount, role lustre_client)",
                    fs.name,
                    action=Action.NONE,
                )
            )

    def lfs_check(stdout: str, stderr: str, rc: int) -> list[Finding]:
        lfs = parse_lfs_check(stdout, stderr, exit_code=rc)
        out = [*lfs_check_findings(lfs, mounts_known=True)]  # not mounted: judged from /proc/mounts
        for name in mounted:
            kinds = {t.obd.kind for t in lfs.of_fs(name)}
            if lfs.not_mounted:
                out.append(
                    retest_finding(
                        "LUSTRE_MOUNT_STATE_CONFLICT",
                        f"{name} is in /proc/mounts but lfs check found no mounted Lustre file system",
                        name,
                    )
                )
            elif not lfs.unknown and not {"mdc", "osc"} <= kinds:
                missing = " and ".join(k for k in ("mdc", "osc") if k not in kinds)
                out.append(
                    retest_finding(
                        "LUSTRE_TARGETS_MISSING", f"lfs check listed no {missing} device of mounted {name}", name
                    )
                )
        return out

    def import_states(stdout: str, stderr: str, rc: int) -> list[Finding]:
        imports = parse_imports(with_stderr(stdout, stderr), exit_code=rc)
        out = [*import_findings(imports)]
        for name in mounted:
            kinds = {i.obd.kind for i in imports.of_fs(name)}
            if not imports.unknown and not {"mdc", "osc"} <= kinds:
                missing = " and ".join(k for k in ("mdc", "osc") if k not in kinds)
                out.append(retest_finding("LUSTRE_IMPORTS_MISSING", f"no {missing} import of mounted {name}", name))
        return out

    found += _required(outputs, "lfs_check", lfs_check)  # lfs check servers
    found += _required(outputs, "imports", import_states)
    found += _required(
        outputs,
        "health_check",
        lambda stdout, stderr, rc: health_check_findings(parse_health_check(with_stderr(stdout, stderr), exit_code=rc)),
    )

    # MGS NIDs: per file system, per failover MGS node
    pings: dict[str, LctlPingResult | None] = {}
    peers: dict[str, list[str]] = {}
    for nid in all_mgs_nids(filesystems, extra):
        name = PING_PREFIX + nid
        out = outputs.get(name)
        problem = _probe_problem(name, out)
        if problem:
            found.append(Finding(problem.code, problem.status, problem.message, nid, action=problem.action))
            pings[nid] = None
            continue
        assert out is not None  # _probe_problem names a missing output
        stdout, stderr, rc = _text(out)
        ping = parse_lctl_ping(with_stderr(stdout, stderr), nid=nid, exit_code=rc)
        found += [Finding(f.code, f.status, f.message, nid, f.evidence, f.action) for f in ping.unknown_findings()]
        pings[nid] = ping
        if ping.reachable:
            peers[nid] = ping.peer_nids
    groups = [(fs.name, [list(node) for node in fs.mgs]) for fs in filesystems if fs.mgs]
    if extra:
        groups.append(("mgs", [[nid] for nid in extra]))
    for subject, nodes in groups:  # each group's own pings: a torn one withholds only that group's link repair
        found += mgs_reach_findings(subject, nodes, {nid: pings.get(nid) for node in nodes for nid in node})

    # the MGS each mounted file system was mounted from (after the pings: they resolve host-name NIDs)
    for fs in filesystems:
        if fs.mgs and fs.name in mounted:
            found += _mgs_findings(fs, mounted[fs.name], peers)

    # LNet NIs, the node's NIDs against the MGS networks, MDT/OST rows of lfs df (optional probes)
    def lfs_df(stdout: str, stderr: str, rc: int) -> list[Finding]:
        targets = df_findings(parse_lfs_df(with_stderr(stdout, stderr)), mounted)
        if rc and not targets:
            targets.append(retest_finding("LUSTRE_DF_FAILED", f"lfs df exited {rc} without naming a target"))
        return targets

    mgs = [(fs.name, fs.mgs) for fs in filesystems if fs.mgs]
    found += _optional(
        outputs, "lnet_net", lambda out, err, rc: lnet_findings(parse_lnet_net_show(out, stderr=err, exit_code=rc))
    )
    found += _optional(
        outputs,
        "list_nids",
        lambda out, err, rc: nid_findings(parse_lctl_list_nids(with_stderr(out, err), exit_code=rc), mgs),
    )
    found += _optional(outputs, "lfs_df", lfs_df)
    return found


def client_verdict(node: str, findings: list[Finding]) -> NodeVerdict:
    """The client's verdict (worst finding; PASS when none; UNKNOWN alone -> RETEST), findings deduplicated by
    (code, subject) as :func:`hwaac.health.node.verdict` does, under the stage name ``lustre``."""
    return verdict(node, {STAGE: findings})
