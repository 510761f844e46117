"""What an ``mlxlink -c`` port means for a node: the findings of :func:`grade_mlxlink`.

The reader (:mod:`hwaac.health.parsers.mlxlink`) returns facts; :func:`grade_mlxlink` decides: ``NIC_LINK_DOWN``
(FAIL, CHECK_LINK) when the port's State is not Active, ``NIC_LINK_TROUBLESHOOTING`` (WARN, CHECK_LINK) for a
non-zero troubleshooting status opcode, each with mlxlink's own recommendation; the device queried is the subject.
"""

from __future__ import annotations

from hwaac.health.parsers.mlxlink import MlxlinkResult, parse_mlxlink_json, parse_mlxlink_text
from hwaac.health.result import Action, Finding, Status, grade_once


@grade_once
def grade_mlxlink(result: MlxlinkResult) -> None:
    """Add ``NIC_LINK_DOWN`` and ``NIC_LINK_TROUBLESHOOTING`` to ``result`` and return it; grading twice does
    nothing."""
    subject = result.device
    if result.state is not None and not result.is_active:
        result.findings.append(
            Finding(
                "NIC_LINK_DOWN",
                Status.FAIL,
                f"link is {result.state}/{result.physical_state or 'N/A'} (speed {result.speed or 'N/A'}); "
                f"expected State Active; mlxlink recommends: {result.recommendation or 'nothing'}",
                subject=subject,
                evidence=f"State : {result.state}\nPhysical state : {result.physical_state or 'N/A'}\n"
                f"Recommendation : {result.recommendation or 'N/A'}",
                action=Action.CHECK_LINK,
            )
        )
    if result.status_opcode:
        result.findings.append(
            Finding(
                "NIC_LINK_TROUBLESHOOTING",
                Status.WARN,
                f"mlxlink troubleshooting status opcode {result.status_opcode} (group {result.group_opcode or 'N/A'}):"
                f" {result.recommendation or 'no recommendation printed'}",
                subject=subject,
                evidence=f"Status Opcode : {result.status_opcode}\nGroup Opcode : {result.group_opcode or 'N/A'}\n"
                f"Recommendation : {result.recommendation or 'N/A'}",
                action=Action.CHECK_LINK,
            )
        )


def read_mlxlink_json(
    raw: str, *, version: str | None = None, device: str = "", counters_expected: bool = True
) -> MlxlinkResult:
    """``mlxlink -c --json`` read (:func:`hwaac.health.parsers.mlxlink.parse_mlxlink_json`) and graded."""
    return grade_mlxlink(parse_mlxlink_json(raw, version=version, device=device, counters_expected=counters_expected))


def read_mlxlink_text(
    raw: str, *, version: str | None = None, device: str = "", counters_expected: bool = True
) -> MlxlinkResult:
    """``mlxlink -c`` text read (:func:`hwaac.health.parsers.mlxlink.parse_mlxlink_text`) and graded."""
    return grade_mlxlink(parse_mlxlink_text(raw, version=version, device=device, counters_expected=counters_expected))


__all__ = ["grade_mlxlink", "read_mlxlink_json", "read_mlxlink_text"]
