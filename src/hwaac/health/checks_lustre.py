"""Judge the facts of the Lustre client parsers (``lfs check``, ``lctl``, imports, ``lnetctl``): findings, severities,
actions.

Each function takes one parse result and returns its findings followed by its ``unknown`` reasons as UNKNOWN
(``PARSE_UNREADABLE``, RETEST), in the order and with the messages :func:`hwaac.health.lustre.evaluate` reports.
Why each fault gets its status and action: ``docs/health-parsers.md`` and the codes listed in
:mod:`hwaac.health.lustre`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hwaac.health.parsers.lctl import HealthCheckResult, LctlPingResult
from hwaac.health.parsers.lnetctl import FULL_HEALTH, HEALTH_DETAIL, LnetNetsResult
from hwaac.health.parsers.lustre import ENOTCONN, LfsCheckResult
from hwaac.health.parsers.lustre_imports import IMPORT_STATES_DOWN, IMPORT_STATES_RECOVERING, ImportsResult, ImportState
from hwaac.health.result import Action, Finding, Status, incomplete_means_retest


@incomplete_means_retest
def lfs_check_findings(result: LfsCheckResult, *, mounts_known: bool = False) -> list[Finding]:
    """``lfs check servers``: ``LUSTRE_TARGET_INACTIVE`` (FAIL, CHECK_LINK) for an ``inactive.`` line or an error
    with ENOTCONN (107); ``LUSTRE_TARGET_UNREACHABLE`` (FAIL, CHECK_LINK) for any other error (EIO, EAGAIN,
    ESHUTDOWN...), the device as subject; ``LUSTRE_NO_CLIENT_MOUNT`` (FAIL, NONE) when nothing is mounted, unless
    ``mounts_known`` (the caller judges the mounts from /proc/mounts against what must be mounted)."""
    out: list[Finding] = []
    if result.not_mounted and not mounts_known:
        out.append(
            Finding(
                "LUSTRE_NO_CLIENT_MOUNT",
                Status.FAIL,
                "lfs check: no Lustre file system is mounted on this node",
                evidence=result.not_mounted_line,
                action=Action.NONE,
            )
        )
    for t in result.targets:
        name = t.obd.name
        if t.state == "inactive":
            out.append(
                Finding(
                    "LUSTRE_TARGET_INACTIVE",
                    Status.FAIL,
                    f"{name} is inactive (its import is not connected): this client cannot reach that target",
                    name,
                    t.evidence,
                    Action.CHECK_LINK,
                )
            )
        elif t.state == "error" and t.errno == ENOTCONN:
            out.append(
                Finding(
                    "LUSTRE_TARGET_INACTIVE",
                    Status.FAIL,
                    f"{name}: {t.error} ({t.errno}): the import is not connected",
                    name,
                    t.evidence,
                    Action.CHECK_LINK,
                )
            )
        elif t.state == "error":
            out.append(
                Finding(
                    "LUSTRE_TARGET_UNREACHABLE",
                    Status.FAIL,
                    f"{name} does not answer a ping: "
                    f"{t.error or 'error'}" + (f" ({t.errno})" if t.errno is not None else ""),
                    name,
                    t.evidence,
                    Action.CHECK_LINK,
                )
            )
    return [*out, *result.unknown_findings()]


@incomplete_means_retest
def ping_findings(result: LctlPingResult) -> list[Finding]:
    """``lctl ping NID``: ``LUSTRE_PING_FAILED`` (FAIL, CHECK_LINK, subject the NID) when the peer did not answer.
    (The client verdict judges MGS reachability per failover node instead: :func:`hwaac.health.lustre.evaluate`.)"""
    out = []
    if result.reachable is False:
        out.append(
            Finding(
                "LUSTRE_PING_FAILED",
                Status.FAIL,
                f"lctl ping {result.nid}: {result.error}",
                result.nid,
                result.error_line,
                Action.CHECK_LINK,
            )
        )
    return [*out, *result.unknown_findings()]


@incomplete_means_retest
def mgs_reach_findings(
    subject: str, nodes: Sequence[Sequence[str]], pings: Mapping[str, LctlPingResult | None]
) -> list[Finding]:
    """MGS reachability of one file system (``subject``) from the ``lctl ping`` of each NID of its failover MGS
    ``nodes`` (``pings``: NID -> result, None or absent where the ping did not run or its output was not returned):
    ``LUSTRE_MGS_UNREACHABLE`` (FAIL, CHECK_LINK, subject the file system) when no NID of any node answers,
    ``LUSTRE_MGS_NID_UNREACHABLE`` (WARN, CHECK_LINK, subject the NID) for a NID that does not answer while another
    does (failover redundancy lost). Nothing when some NIDs are unknown and none answered (their own UNKNOWNs say
    so). A torn ping output recommends only a retest (the rule holds for every ping given)."""
    reach: dict[str, bool | None] = {}
    for node in nodes:
        for nid in node:
            ping = pings.get(nid)
            reach[nid] = None if ping is None else ping.reachable
    states = list(reach.values())
    if any(s is None for s in states) and not any(states):
        return []
    if not any(any(reach[nid] for nid in node) for node in nodes):
        failed = [nid for node in nodes for nid in node]
        return [
            Finding(
                "LUSTRE_MGS_UNREACHABLE",
                Status.FAIL,
                f"{subject}: no MGS NID answers lctl ping "
                f"({', '.join(failed)}): the client cannot (re)mount or get configuration updates; check "
                "this node's LNet NIs and the path to the MGS",
                subject,
                "; ".join(f"{nid}: failed" for nid in failed),
                Action.CHECK_LINK,
            )
        ]
    return [
        Finding(
            "LUSTRE_MGS_NID_UNREACHABLE",
            Status.WARN,
            f"{subject}: MGS NID {nid} does not answer lctl ping while another MGS NID does (failover redundancy lost)",
            nid,
            f"lctl ping {nid}: failed",
            Action.CHECK_LINK,
        )
        for node in nodes
        for nid in node
        if reach[nid] is False
    ]


@incomplete_means_retest
def health_check_findings(result: HealthCheckResult) -> list[Finding]:
    """``health_check``: ``LUSTRE_LBUG`` (FAIL, REBOOT: an LBUG leaves a Lustre thread stuck for good, only a reboot
    clears it) and ``LUSTRE_NOT_HEALTHY`` (FAIL, REBOOT; the unhealthy devices named)."""
    out = []
    if result.lbug:
        out.append(
            Finding(
                "LUSTRE_LBUG",
                Status.FAIL,
                "Lustre hit an LBUG on this node: a kernel thread is stuck "
                "for good; collect the debug log, then reboot",
                evidence="LBUG",
                action=Action.REBOOT,
            )
        )
    if result.not_healthy or result.unhealthy_devices:
        devices = ", ".join(result.unhealthy_devices)
        out.append(
            Finding(
                "LUSTRE_NOT_HEALTHY",
                Status.FAIL,
                "lctl health_check: NOT HEALTHY" + (f" (devices reported unhealthy: {devices})" if devices else ""),
                evidence="\n".join(result.lines[:20]),
                action=Action.REBOOT,
            )
        )
    return [*out, *result.unknown_findings()]


def _import_findings(imp: ImportState) -> list[Finding]:
    name = imp.obd.name
    where = f" via {imp.current_connection}" if imp.current_connection else ""
    out = []
    if imp.deactivated:
        out.append(
            Finding(
                "LUSTRE_TARGET_DEACTIVATED",
                Status.WARN,
                f"{name}: {imp.target or 'the target'} is "
                "deactivated on this client (lctl set_param ...active=0 or conf_param ...active=0): no new "
                "I/O goes there",
                name,
                imp.evidence,
                Action.NONE,
            )
        )
    if imp.state in IMPORT_STATES_RECOVERING:
        out.append(
            Finding(
                "LUSTRE_IMPORT_RECOVERING",
                Status.WARN,
                f"{name}: import {imp.state}{where} (reconnecting or in recovery): retest when recovery ends",
                name,
                imp.evidence,
                Action.RETEST,
            )
        )
    elif imp.state == "EVICTED":
        out.append(
            Finding(
                "LUSTRE_IMPORT_EVICTED",
                Status.FAIL,
                f"{name}: the server evicted this client (import EVICTED{where}); open files on that target got errors",
                name,
                imp.evidence,
                Action.CHECK_LINK,
            )
        )
    elif imp.state in IMPORT_STATES_DOWN:
        out.append(
            Finding(
                "LUSTRE_IMPORT_NOT_FULL",
                Status.FAIL,
                f"{name}: import {imp.state}{where}, not FULL: I/O to {imp.target or 'the target'} hangs or fails",
                name,
                imp.evidence,
                Action.CHECK_LINK,
            )
        )
    return out


@incomplete_means_retest
def import_findings(result: ImportsResult) -> list[Finding]:
    """Import states (``*.import`` or ``*_server_uuid``): ``LUSTRE_IMPORT_NOT_FULL`` (FAIL, CHECK_LINK) for DISCONN
    or CLOSED, ``LUSTRE_IMPORT_EVICTED`` (FAIL, CHECK_LINK), ``LUSTRE_IMPORT_RECOVERING`` (WARN, RETEST) for
    NEW/CONNECTING/REPLAY*/RECOVER, ``LUSTRE_TARGET_DEACTIVATED`` (WARN) for an administratively deactivated
    target; FULL and IDLE are fine."""
    return [*(f for imp in result.imports for f in _import_findings(imp)), *result.unknown_findings()]


@incomplete_means_retest
def lnet_findings(result: LnetNetsResult) -> list[Finding]:
    """``lnetctl net show -v 2``: ``LUSTRE_LNET_DOWN`` (FAIL, NONE: configure LNet with the lnet module/role) when
    LNet is not running; per NI ``LUSTRE_LNET_NI_DOWN`` (FAIL, CHECK_LINK) for a status other than ``up``,
    ``LUSTRE_LNET_NI_FATAL`` (FAIL, CHECK_LINK) for ``fatal_error`` != 0 (the port or cable is down, LU-14114),
    ``LUSTRE_LNET_NI_DEGRADED`` (WARN, CHECK_LINK) for a health value below 1000 (the NI saw send failures; LNet
    prefers healthier NIs until it recovers), ``LUSTRE_LNET_HEALTH_MISSING`` (UNKNOWN, RETEST) for an NI without
    ``health stats: health value``: every release since 2.12 prints it at ``-v 2``, so its absence means a lower
    detail level or a failed health ioctl, and an NI whose health was not read is not healthy. ``fatal_error`` is
    judged where printed (2.15+; releases before it print ``health value`` alone)."""
    if result.lnet_down:
        return [
            Finding(
                "LUSTRE_LNET_DOWN",
                Status.FAIL,
                "LNet is not running on this node (lnetctl: Network is down): no Lustre traffic is possible",
                evidence=result.down_text,
                action=Action.NONE,
            ),
            *result.unknown_findings(),
        ]
    out = []
    for ni in result.nis:
        subject = ni.nid + (f" ({ni.interface})" if ni.interface else "")
        if ni.status is not None and ni.status != "up":
            out.append(
                Finding(
                    "LUSTRE_LNET_NI_DOWN",
                    Status.FAIL,
                    f"LNet NI {ni.nid} is {ni.status}",
                    subject,
                    f"status: {ni.status}",
                    Action.CHECK_LINK,
                )
            )
        if ni.fatal_error:
            out.append(
                Finding(
                    "LUSTRE_LNET_NI_FATAL",
                    Status.FAIL,
                    f"LNet NI {ni.nid}: fatal_error {ni.fatal_error} (port or cable down)",
                    subject,
                    f"fatal_error: {ni.fatal_error}",
                    Action.CHECK_LINK,
                )
            )
        if ni.health_value is None:
            out.append(
                Finding(
                    "LUSTRE_LNET_HEALTH_MISSING",
                    Status.UNKNOWN,
                    f"LNet NI {ni.nid}: no 'health stats: "
                    f"health value' in the output (lnetctl prints it from -v {HEALTH_DETAIL} on): its "
                    "health was not read",
                    subject,
                    "health stats: (not printed)",
                    Action.RETEST,
                )
            )
        elif ni.health_value < FULL_HEALTH:
            out.append(
                Finding(
                    "LUSTRE_LNET_NI_DEGRADED",
                    Status.WARN,
                    f"LNet NI {ni.nid}: health value {ni.health_value} < {FULL_HEALTH}",
                    subject,
                    f"health value: {ni.health_value}",
                    Action.CHECK_LINK,
                )
            )
    return [*out, *result.unknown_findings()]
