"""Threshold checks of the NICs and their links: a parsed ``ibstat``, sysfs port-counter or ``ethtool -S`` result
(and a SKU profile) in, findings out (pure functions), as :mod:`hwaac.health.checks` does for GPUs and measured
performance and :mod:`hwaac.health.checks_rdma` for ``ibstatus``/``ibv_devinfo`` and ``rdma statistic``.

The formats, sources and rules in full: ``docs/health-modules.md``, section "Threshold checks".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hwaac.health.parsers.ethtool import ERROR_COUNTERS, EthtoolStats
from hwaac.health.parsers.growth import CounterGrowth
from hwaac.health.parsers.ib_counters import IbCountersResult
from hwaac.health.parsers.ibstat import IbstatResult
from hwaac.health.profile import NicLimits, Profile
from hwaac.health.result import Action, Finding, Status, incomplete_means_retest, retest_finding


@incomplete_means_retest
def check_ibstat_ports(
    ib: IbstatResult, devices: Iterable[str] | None = None, *, ports: Iterable[tuple[str, int]] | None = None
) -> list[Finding]:
    """What ``ibstat`` says without a profile: ``IB_IBSTAT_PANIC`` (UNKNOWN, RETEST) when it stopped at a device (the
    rails after it were not read), ``NIC_PORT_DOWN`` (FAIL, CHECK_LINK) for each port of ``devices`` (default: any
    port) that is not Active/LinkUp, then the parser's unknown reasons. ``ports``: only these ``(device, port
    number)`` pairs, e.g. the ports NCCL takes (:func:`hwaac.health.nccl_hca.nccl_ib_ports`), not every port of a
    device that has more."""
    wanted = list(devices) if devices is not None else None
    chosen = set(ports) if ports is not None else None
    out: list[Finding] = []
    if ib.panic is not None:  # kept whatever the device: the rails after it were never read
        where = f"at device '{ib.failed_device}'" if ib.failed_device else "early"
        out.append(
            Finding(
                "IB_IBSTAT_PANIC",
                Status.UNKNOWN,
                f"ibstat stopped {where} (ibpanic); the devices after it were not read: {ib.panic}",
                ib.failed_device or "",
                ib.panic_line,
                Action.RETEST,
            )
        )
    for p in ib.ports():
        if (
            (wanted is None or p.ca in wanted)
            and (chosen is None or (p.ca, p.number) in chosen)
            and p.state is not None
            and p.physical_state is not None
            and not p.is_up
        ):
            rate = "no rate" if p.rate_gbps is None else f"Rate {p.rate_gbps:g} Gb/s"
            out.append(
                Finding(
                    "NIC_PORT_DOWN",
                    Status.FAIL,
                    f"{p.subject} ({p.link_layer or 'link layer unknown'}) "
                    f"is {p.state}/{p.physical_state} ({rate}, not a working link); expected Active/LinkUp",
                    p.subject,
                    p.evidence,
                    Action.CHECK_LINK,
                )
            )
    return [*out, *ib.unknown_findings()]


def check_port_speed(
    subject: str, rate_gbps: float | None, link_layer: str | None, evidence: str, lim: NicLimits
) -> list[Finding]:
    """One up rail port against the profile's NIC limits, whichever tool read it (``ibstat``, ``ibstatus``,
    ``ibv_devinfo``): ``NIC_RATE_LOW`` (FAIL, CHECK_LINK) below the profile's rate (only where a rate was printed),
    ``NIC_LINK_LAYER`` (FAIL) for the other link layer."""
    out: list[Finding] = []
    if rate_gbps is not None and rate_gbps < lim.rate_gbits_per_s:
        out.append(
            Finding(
                "NIC_RATE_LOW",
                Status.FAIL,
                f"rate {rate_gbps:g} Gb/s, expected {lim.rate_gbits_per_s}",
                subject,
                evidence,
                Action.CHECK_LINK,
            )
        )
    if link_layer and link_layer != lim.link_layer:
        out.append(
            Finding(
                "NIC_LINK_LAYER",
                Status.FAIL,
                f"link layer {link_layer}, expected {lim.link_layer} (mlxconfig LINK_TYPE)",
                subject,
                evidence,
                Action.NONE,
            )
        )
    return out


@incomplete_means_retest
def check_ibstat(ib: IbstatResult, profile: Profile, devices: Iterable[str] | None = None) -> list[Finding]:
    """Every rail's port up, at the SKU's rate and link layer (``devices``: the rails' RDMA devices, e.g. from the
    host's rendered ``nic-roce.json``; default: every CA of that link layer), after :func:`check_ibstat_ports`."""
    lim = profile.nic
    wanted = list(devices) if devices is not None else None
    out = check_ibstat_ports(ib, wanted)
    ports = [
        p
        for ca in ib.cas
        for p in ca.ports
        if (wanted is None and p.link_layer == lim.link_layer) or (wanted is not None and p.ca in wanted)
    ]
    if wanted is not None:
        ports.sort(key=lambda p: wanted.index(p.ca))  # rail order, as the caller lists the rails
    up = [p for p in ports if p.is_up]
    if wanted is not None:
        seen = {ca.name for ca in ib.cas}
        for dev in wanted:
            if dev not in seen and not ib.failed_device:
                out.append(
                    Finding("NIC_MISSING", Status.FAIL, f"{dev} is not in ibstat's output", dev, action=Action.REBOOT)
                )
    panicked = ib.panic is not None
    if len(up) < lim.rails and not ib.unknown and not panicked:
        out.append(
            Finding(
                "NIC_RAILS_DOWN",
                Status.FAIL,
                f"{len(up)} of {lim.rails} rail ports up",
                ", ".join(f"{p.ca} port {p.number}" for p in ports if not p.is_up),
                action=Action.CHECK_LINK,
            )
        )
    for p in up:
        out += check_port_speed(f"{p.ca} port {p.number}", p.working_rate_gbps, p.link_layer, p.evidence, lim)
    if lim.ca_type:
        for ca in ib.cas:
            if (
                (wanted is None or ca.name in wanted)
                and ca.ca_type
                and ca.ca_type != lim.ca_type
                and any(p in ports for p in ca.ports)
            ):
                out.append(
                    Finding(
                        "NIC_MODEL_MISMATCH", Status.WARN, f"CA type {ca.ca_type}, the SKU has {lim.ca_type}", ca.name
                    )
                )
    return out


@incomplete_means_retest
def check_ib_counters(counters: IbCountersResult, devices: Iterable[str] | None = None) -> list[Finding]:
    """One sysfs port-counter reading, before any growth is judged: ``IB_COUNTER_SATURATED`` (UNKNOWN, RETEST:
    clear the counters, e.g. ``perfquery -R``, and read again) per port with counters at the maximum of their
    field width (their true counts and growth are unknown), ``IB_COUNTER_UNREADABLE`` (UNKNOWN, RETEST) per port
    with values that are not counts, then the parser's unknown reasons (about the whole reading, so kept whatever
    ``devices``). ``devices``: the rails' RDMA devices (default: every port read)."""
    wanted = None if devices is None else set(devices)
    out: list[Finding] = []
    for code, per_port, says, shown in (
        (
            "IB_COUNTER_SATURATED",
            counters.saturated,
            lambda lines: (
                f"{', '.join(lines)} at the maximum of their field width: the true counts and their "
                "growth are unknown; clear the port counters (perfquery -R) and read again"
            ),
            None,
        ),
        (
            "IB_COUNTER_UNREADABLE",
            counters.unreadable,
            lambda lines: f"{len(lines)} counters could not be read as numbers",
            10,
        ),
    ):
        for (dev, port), lines in per_port.items():
            if wanted is None or dev in wanted:
                subject = f"{dev} port {port}"
                evidence = "\n".join(list(lines.values())[:shown])
                out.append(Finding(code, Status.UNKNOWN, f"{subject}: {says(lines)}", subject, evidence, Action.RETEST))
    return [*out, *counters.unknown_findings()]


@incomplete_means_retest
def check_ethtool(stats: EthtoolStats) -> list[Finding]:
    """``ethtool -S``: parsed, not yet judged (no profile holds NIC netdev counter limits yet), so never PASS.

    Whatever the counters say, the result is UNKNOWN ``NIC_ETHTOOL_UNJUDGED`` naming the error counters
    (:data:`hwaac.health.parsers.ethtool.ERROR_COUNTERS`) that are not zero, so a fault in them stays visible;
    the parser's own findings and UNKNOWN reasons come first."""
    out = stats.all_findings()
    if not stats.counters:
        return out
    subject = stats.netdev
    nonzero = {name: stats.counters[name] for name in ERROR_COUNTERS if stats.counters.get(name)}
    named = ", ".join(f"{k}={v}" for k, v in nonzero.items())
    message = f"{len(stats.counters)} ethtool -S counters read but not judged (no limits for them yet)" + (
        f"; non-zero error counters: {named}" if nonzero else "; the error counters read 0"
    )
    out.append(Finding("NIC_ETHTOOL_UNJUDGED", Status.UNKNOWN, message, subject, named, Action.NONE))
    return out


@incomplete_means_retest
def check_counter_growth(
    growth: Mapping[tuple[str, int], Mapping[str, CounterGrowth]], profile: Profile
) -> list[Finding]:
    """Port counter growth between two readings (NVSentinel's rules): any increase of a fatal counter fails the
    link; a rate above the warn limit warns; a fatal counter whose growth cannot be known is UNKNOWN."""
    lim = profile.nic
    out: list[Finding] = []
    for (dev, port), counters in sorted(growth.items()):
        subject = f"{dev} port {port}"
        for name in lim.counters_fatal_on_increase:
            g = counters.get(name)
            if g is None:
                continue
            if g.delta is None:
                out.append(retest_finding("NIC_COUNTER_UNKNOWN", f"{name}: growth unknown ({g.reason})", subject))
            elif g.delta > 0:
                out.append(
                    Finding(
                        f"NIC_{name.upper()}",
                        Status.FAIL,
                        f"{name} grew by {g.delta} ({g.before} -> {g.after})",
                        subject,
                        f"{name} {g.before} -> {g.after}",
                        Action.CHECK_LINK,
                    )
                )
        for name, per_second in lim.counters_warn_per_second.items():
            g = counters.get(name)
            if g is not None and g.per_second is not None and g.per_second > per_second:
                out.append(
                    Finding(
                        f"NIC_{name.upper()}_RATE",
                        Status.WARN,
                        f"{name} grew {g.per_second:.3g}/s (warn above {per_second:g}/s)",
                        subject,
                        f"{name} {g.before} -> {g.after}",
                        Action.CHECK_LINK,
                    )
                )
    return out
