"""A check's verdict on one object, and the faults the FAILs name (docs/verify.md: how faults are attributed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    SKIP = "SKIP"
    ERROR = "ERROR"


@dataclass(frozen=True, slots=True)
class Result:
    """One check's verdict on one object.

    Attributes:
        check: the check's class name (``VerifyLldpNeighbors``).
        object: what was checked, in words an operator can find (``leaf-p0-su01-r0 Ethernet8 <-> spine-p0-01
            Ethernet0``, ``leaf-p0-su01-r0``).
        expected, actual: the planned and the observed value, as text.
        status: PASS, FAIL, SKIP (not judged: ``explained_by`` says which fault made it moot, or ``message`` why),
            ERROR (the facts could not be read).
        devices: the devices the object is on (a batch gate keeps results that touch its devices).
        cable: the planned cable id of a link object.
        ends: both ends of that cable, ``"device port"`` each.
        fault: on a FAIL, the fault it names: a cable id, or a device name for a device's own fault.
        explained_by: faults named elsewhere that this result's expectation was lowered for (a degraded PASS)
            or that made it moot (a SKIP).
        message: more detail (e.g. ``swapped with L0000001``).
    """

    check: str
    object: str
    expected: str
    actual: str
    status: Status
    devices: tuple[str, ...] = ()
    cable: str | None = None
    ends: tuple[str, ...] = ()
    fault: str | None = None
    explained_by: tuple[str, ...] = ()
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "object": self.object,
            "status": str(self.status),
            "expected": self.expected,
            "actual": self.actual,
            "cable": self.cable,
            "ends": list(self.ends),
            "devices": list(self.devices),
            "fault": self.fault,
            "explained_by": list(self.explained_by),
            "message": self.message,
        }


@dataclass
class FaultSet:
    """The faults named so far (by the FAILs of earlier stages), which later checks' expectations account for.

    ``cables``: cable id -> kinds (``down``, ``miswired``, ``mtu``, ``session``); ``devices``: device -> why.
    """

    cables: dict[str, set[str]] = field(default_factory=dict)
    devices: dict[str, str] = field(default_factory=dict)

    def add(self, result: Result, kind: str) -> None:
        """Record the fault a FAIL names: a cable's (of ``kind``), or, for ``kind`` "device", a device."""
        if result.status is not Status.FAIL or result.fault is None:
            return
        if result.fault == result.cable:
            self.cables.setdefault(result.fault, set()).add(kind)
        elif kind == "device" and result.fault not in self.devices:
            self.devices[result.fault] = result.actual

    def cable_fault(self, cable: str | None, kinds: frozenset[str] | None = None) -> bool:
        if cable is None or cable not in self.cables:
            return False
        return kinds is None or bool(self.cables[cable] & kinds)

    def __bool__(self) -> bool:
        return bool(self.cables or self.devices)
