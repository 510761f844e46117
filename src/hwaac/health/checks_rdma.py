"""Checks over the RDMA port facts of ``ibstatus``/``ibv_devinfo``, the counters of ``rdma statistic show`` and
the pair tests between two nodes' ports.

The parsers (:mod:`hwaac.health.parsers.rdma`) only report what the tools printed; these functions judge it against
the SKU profile, as :func:`hwaac.health.checks_nic.check_ibstat` does for ``ibstat``: every rail port Active/LinkUp, at
the profile's rate and link layer, and no error counter growing. Anything that could not be read is UNKNOWN (action
RETEST) and suppresses the verdicts that would need it, so an incomplete output never passes and never leads to a
stronger action than a retest.
"""

from __future__ import annotations

from collections.abc import Iterable

from hwaac.health.checks import check_perftest
from hwaac.health.checks_nic import check_counter_growth, check_port_speed
from hwaac.health.parsers.growth import port_counter_growth
from hwaac.health.parsers.perftest import PerftestResult
from hwaac.health.parsers.rdma import RdmaPortsResult, RdmaStatResult
from hwaac.health.profile import MinThreshold, Profile
from hwaac.health.result import Action, Finding, Status, incomplete_means_retest, retest_finding


@incomplete_means_retest
def check_rdma_ports(result: RdmaPortsResult, profile: Profile, devices: Iterable[str] | None = None) -> list[Finding]:
    """``ibstatus`` or ``ibv_devinfo`` ports against the profile.

    ``devices``: the rails' RDMA devices (default: every port of the profile's link layer). Findings:
    ``NIC_PORT_DOWN`` (FAIL, CHECK_LINK) for a rail port that is not Active/LinkUp; ``NIC_RATE_LOW`` (FAIL,
    CHECK_LINK) below the profile's rate (only where the tool printed a rate: ``ibstatus``, ``ibv_devinfo -v``);
    ``NIC_LINK_LAYER`` (FAIL) for a rail of the other link layer; ``NIC_MISSING`` (FAIL, REBOOT) for a rail device
    not printed, or no device at all; ``NIC_RAILS_DOWN`` (FAIL, CHECK_LINK) for fewer up rails than the profile has;
    ``NIC_NO_PORTS`` (UNKNOWN) when no port could be judged; the parser's ``unknown`` reasons as
    ``PARSE_UNREADABLE`` (UNKNOWN, RETEST), which also hold back the missing-device and rail-count verdicts.
    """
    lim = profile.nic
    out = result.unknown_findings()
    wanted = list(devices) if devices is not None else None
    complete = not result.unknown
    if result.no_devices and complete:
        return [
            *out,
            Finding(
                "NIC_MISSING",
                Status.FAIL,
                f"{result.tool}: no RDMA device found (driver not loaded or NICs gone)",
                action=Action.REBOOT,
            ),
        ]
    ports = [
        p
        for p in result.ports
        if (wanted is None and p.link_layer == lim.link_layer) or (wanted is not None and p.device in wanted)
    ]
    for p in ports:
        if p.state_code is None:
            continue  # unreadable: already UNKNOWN
        if not p.is_up:
            out.append(
                Finding(
                    "NIC_PORT_DOWN",
                    Status.FAIL,
                    f"{p.subject} is {p.state}"
                    + (f"/{p.phys_state}" if p.phys_state else "")
                    + ", expected Active/LinkUp",
                    p.subject,
                    p.evidence,
                    Action.CHECK_LINK,
                )
            )
            continue
        out += check_port_speed(p.subject, p.rate_gbps, p.link_layer, p.evidence, lim)
    if wanted is not None and complete:
        seen = {p.device for p in result.ports} | set(result.devices)
        out += [
            Finding("NIC_MISSING", Status.FAIL, f"{dev} is not in {result.tool}'s output", dev, action=Action.REBOOT)
            for dev in wanted
            if dev not in seen
        ]
    up = [p for p in ports if p.is_up]
    if complete and ports and len(up) < lim.rails:
        out.append(
            Finding(
                "NIC_RAILS_DOWN",
                Status.FAIL,
                f"{len(up)} of {lim.rails} rail ports up",
                ", ".join(p.subject for p in ports if not p.is_up),
                action=Action.CHECK_LINK,
            )
        )
    if not ports and complete:
        out.append(
            retest_finding(
                "NIC_NO_PORTS",
                f"{result.tool}: no port of link layer {lim.link_layer}"
                + (f" on {', '.join(wanted)}" if wanted else "")
                + " to judge",
            )
        )
    return out


@incomplete_means_retest
def check_rdma_statistic(result: RdmaStatResult, devices: Iterable[str] | None = None) -> list[Finding]:
    """One ``rdma statistic show`` reading: its ``unknown`` reasons, and ``NIC_COUNTERS_MISSING`` (UNKNOWN) for a
    rail device with no counters (its growth cannot be known)."""
    out = result.unknown_findings()
    read = {dev for dev, _port in result.ports}
    out += [
        retest_finding("NIC_COUNTERS_MISSING", f"{dev}: no counters in rdma statistic show", dev)
        for dev in (devices or ())
        if dev not in read
    ]
    return out


@incomplete_means_retest
def check_rdma_statistic_growth(
    before: RdmaStatResult,
    after: RdmaStatResult,
    seconds: float,
    profile: Profile,
    devices: Iterable[str] | None = None,
) -> list[Finding]:
    """Two ``rdma statistic show`` readings ``seconds`` apart: both readings' problems, then
    :func:`~hwaac.health.checks_nic.check_counter_growth` (a fatal counter that grew fails the link, a rate above the
    profile's warn limit warns, a fatal counter whose growth is unknown is UNKNOWN)."""
    wanted = list(devices) if devices is not None else None
    growth = port_counter_growth(before, after, seconds)
    if wanted is not None:
        growth = {key: g for key, g in growth.items() if key[0] in wanted}
    return [
        *check_rdma_statistic(before, wanted),
        *check_rdma_statistic(after, wanted),
        *check_counter_growth(growth, profile),
    ]


PAIR_CODES = ("PERFTEST_", "NIC_WRITE_BW_")


@incomplete_means_retest
def check_pair_perftest(result: PerftestResult, th: MinThreshold, *, subject: str, port_clean: bool) -> list[Finding]:
    """One side of a pair test (``ib_write_bw`` against a peer) on this node's port ``subject``.

    A pair that failed or was slow implicates both ends. It is this node's FAIL only when this node's own port shows
    it (down in ibstat, or another check failing the port, e.g. error counters that grew); when ``port_clean`` (the
    port is up and nothing else fails it) the peer's side is suspect: the finding is UNKNOWN and RETEST against
    another node (the peer's own checks catch a dead peer port).
    """
    out = []
    for f in check_perftest(result, th, subject=subject):
        f = Finding(f.code, f.status, f.message, f.subject or subject, f.evidence, f.action)
        if port_clean and f.status == Status.FAIL and f.code.startswith(PAIR_CODES):
            f = Finding(
                f.code,
                Status.UNKNOWN,
                f"{f.message} -- this node's port is up with no error growth: the "
                "peer's side is suspect; retest against another node",
                f.subject,
                f.evidence,
                Action.RETEST,
            )
        out.append(f)
    return out
