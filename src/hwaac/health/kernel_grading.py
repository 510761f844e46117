"""What a kernel log's events mean for a node: XID, SXid, fallen-off-the-bus and PCIe "limited by" findings.

The formats, sources and rules in full: ``docs/health-modules.md``, section "Kernel log grading".
"""

from __future__ import annotations

from hwaac.health.parsers.kernel_log import KernelEvent, KernelLog
from hwaac.health.result import Action, Finding, Status, grade_once
from hwaac.health.xid import is_benign_sxid, recovery_action, xid_action


def _evidence(events: list[KernelEvent], limit: int = 5) -> str:
    text = "\n".join(e.line for e in events[:limit])
    if len(events) > limit:
        text += f"\n... and {len(events) - limit} more line(s)"
    return text


def _same_gpu(a: str, b: str) -> bool:
    """XIDs name ``0000:b3:00``, other lines ``0000:b3:00.0``: compare without the function."""
    return a.split(".")[0] == b.split(".")[0]


def _xid_grade(number: int, events: list[KernelEvent]) -> tuple[Status, Action, str]:
    """Status, action and a note for one GPU's lines of one (primary) XID."""
    info = xid_action(number)
    status, action = info.status, info.action
    note = f"NVIDIA action {info.nvidia_action}" if info.listed else "not in the XID table: refresh it, re-run"
    if 144 <= number <= 150 and events and all("Nonfatal" in e.message for e in events):
        status = Status.WARN
    if number == 154 and events:
        target = events[-1].recovery_action
        mapped = recovery_action(target) if target else None
        if mapped is None:
            status, action, note = Status.UNKNOWN, Action.RETEST, "recovery action not readable"
        else:
            status = Status.WARN if mapped is Action.NONE else Status.FAIL
            action, note = mapped, f"recovery action {target}"
    return status, action, note


def _xid_findings(result: KernelLog) -> None:
    """One finding per GPU and XID. A secondary XID ("Xid 45 ... caused by previous Xid 149") is graded by its
    cause, as NVIDIA's catalog says for a non-solo XID 45 ("IGNORE (follow other Xid)"): with the cause's own lines
    on that GPU, as they were graded; without them, as the catalog grades the cause."""
    groups: dict[tuple[str, int, int | None], list[KernelEvent]] = {}
    for event in result.events:
        if event.kind == "xid" and event.code is not None:
            groups.setdefault((event.pci, event.code, event.caused_by), []).append(event)
    graded: dict[tuple[str, int], tuple[Status, Action, str]] = {}
    for (pci, number, cause), events in groups.items():
        if cause is None:
            graded[(pci, number)] = _xid_grade(number, events)
    for (pci, number, cause), events in groups.items():
        info = xid_action(number)
        if cause is None:
            status, action, note = graded[(pci, number)]
        else:
            own = graded.get((pci, cause))
            status, action, why = own if own is not None else _xid_grade(cause, [])
            seen = "its lines on this GPU" if own is not None else "NVIDIA's catalog (its own lines are not in the log)"
            name = xid_action(cause).mnemonic or "(unnamed)"
            note = f"secondary to Xid {cause} {name}, graded as Xid {cause} by {seen}: {why}"
        written = sorted({e.facility for e in events if e.facility and e.facility != "kern"})
        if written:
            note += (
                f"; facility {', '.join(written)}: written into the kernel log by a process (/dev/kmsg, e.g. a "
                "fault injector), not by the driver"
            )
        ids = result.gpu_ids.get(pci, {})
        who = f" ({ids['uuid']})" if "uuid" in ids else ""
        result.findings.append(
            Finding(
                info.code,
                status,
                f"XID {number} {info.mnemonic or '(unnamed)'} on GPU {pci}{who}, {len(events)} line(s): {note}; "
                f"first: {events[0].message}",
                f"gpu {pci}",
                _evidence(events),
                action,
            )
        )


def _other_findings(result: KernelLog) -> None:
    xid79 = [e.pci for e in result.events if e.kind == "xid" and e.code == 79]
    fallen: dict[str, list[KernelEvent]] = {}
    for event in result.events:
        if event.kind == "fallen_off_bus" and not any(_same_gpu(event.pci, pci) for pci in xid79):
            fallen.setdefault(event.pci, []).append(event)
    for pci, events in fallen.items():
        result.findings.append(
            Finding(
                "GPU_FALLEN_OFF_BUS",
                Status.FAIL,
                f"GPU {pci} has fallen off the bus ({len(events)} message(s); as XID 79): reboot the node; RMA if it "
                "recurs",
                f"gpu {pci}",
                _evidence(events),
                Action.REBOOT,
            )
        )
    for event in result.events:
        if event.kind == "pcie_limited" and event.pcie is not None:
            limit = event.pcie
            code = "NIC_PCIE_LIMITED" if limit.driver.startswith("mlx5") else "PCIE_BANDWIDTH_LIMITED"
            narrow = limit.width < limit.capable_width
            result.findings.append(
                Finding(
                    code,
                    Status.FAIL if narrow else Status.WARN,
                    f"{limit.driver} {event.pci}: {limit.available_gbps} Gb/s available of {limit.capable_gbps} Gb/s "
                    f"(x{limit.width} at {limit.speed_gts} GT/s, capable of x{limit.capable_width} at "
                    f"{limit.capable_speed_gts} GT/s, limited at {limit.at})"
                    + (": the link trained narrow, reboot to retrain, then reseat" if narrow else ""),
                    f"{limit.driver} {event.pci}",
                    event.line,
                    Action.REBOOT if narrow else Action.NONE,
                )
            )
    sxids: dict[tuple[str, int], list[KernelEvent]] = {}
    for event in result.events:
        if event.kind == "sxid" and event.code is not None and not is_benign_sxid(event.code):
            sxids.setdefault((event.pci, event.code), []).append(event)
    for (pci, number), events in sxids.items():
        fatal = any(e.message.startswith("Fatal") for e in events)
        result.findings.append(
            Finding(
                f"NVSWITCH_SXID_{number}",
                Status.FAIL if fatal else Status.WARN,
                f"SXid {number} on NVSwitch {pci} ({events[0].switch}), {len(events)} event(s), "
                f"{'fatal: reboot to reset the fabric' if fatal else 'non-fatal'}: {events[0].message}",
                f"nvswitch {pci}",
                _evidence(events),
                Action.REBOOT if fatal else Action.NONE,
            )
        )


@grade_once
def grade_kernel_log(log: KernelLog) -> None:
    """Add the findings of ``log``'s events (not its history) to it and return it; grading twice does nothing."""
    _xid_findings(log)
    _other_findings(log)


__all__ = ["grade_kernel_log"]
