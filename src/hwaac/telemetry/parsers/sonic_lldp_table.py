"""LLDP neighbours as ``show lldp table`` prints them (sonic-utilities ``scripts/lldpshow``
``get_summary_output``): one :class:`LldpNeighbor` per row, grouped by local port.

A port may list several neighbours (one row per remote port id). An empty RemoteDevice, Capability or
RemotePortDescr is what lldpshow prints when the neighbour sent no such TLV: it is kept as ``""``, a fact for the
checks. The ``Total entries displayed:`` trailer is compared with the rows read, so a cut output is not mistaken
for a complete one (``docs/telemetry/sonic-ports.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hwaac.telemetry.parsers.sonic_table import find_layout, rows

_HEADER = ("LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr")
_TOTAL = "Total entries displayed:"
_LEGEND = "Capability codes:"
_ERROR = "Error:"


@dataclass(frozen=True, slots=True)
class LldpNeighbor:
    """One row of ``show lldp table``.

    Attributes:
        local_port: this switch's port (``Ethernet0``, ``eth0``).
        remote_device: the neighbour's system name ("" when it sent none).
        remote_port_id: the neighbour's port id (an interface name, or a MAC when the neighbour identifies ports so).
        capability: enabled capabilities, ``R`` router, ``B`` bridge, ``O`` other ("" when none).
        remote_port_descr: the neighbour's port description ("" when it sent none).
    """

    local_port: str
    remote_device: str
    remote_port_id: str
    capability: str
    remote_port_descr: str


@dataclass
class LldpTable:
    """One reading of ``show lldp table`` on one switch.

    Attributes:
        neighbors: by local port, in the order printed.
        total: the count of the ``Total entries displayed:`` trailer (None when not printed).
        unknown: reasons something could not be read (each names the line).
    """

    tool: str = "show lldp table"
    device: str = ""
    version: str = ""
    neighbors: dict[str, list[LldpNeighbor]] = field(default_factory=dict)
    total: int | None = None
    unknown: list[str] = field(default_factory=list)

    @property
    def incomplete(self) -> bool:
        """Whether part of the output could not be read."""
        return bool(self.unknown)

    def count(self) -> int:
        """The number of neighbour rows read."""
        return sum(len(rows) for rows in self.neighbors.values())


def parse_lldp_table(raw: str, *, device: str = "", version: str | None = None) -> LldpTable:
    """Read ``show lldp table``.

    Args:
        raw: the output as recorded (the capability legend above the table and the trailer below it are expected).
        device: the switch, when the caller knows it.
        version: the SONiC release or sonic-utilities version, when known.

    Returns:
        The neighbours by local port. A missing or disagreeing ``Total entries displayed:`` trailer is a reason in
        ``unknown``. Never raises.
    """
    table = LldpTable(device=device, version=version or "")
    lines = raw.splitlines()
    layout = find_layout(lines)
    if layout is None or layout.names != _HEADER:
        error = next((line.strip() for line in lines if line.strip().startswith(_ERROR)), "")
        first = next((line.strip() for line in lines if line.strip()), "")
        if error:
            table.unknown.append(f"lldpshow reported {error[:200]!r}")
        elif layout is not None:
            table.unknown.append(f"table {' | '.join(layout.names)!r} is not show lldp table")
        else:
            table.unknown.append(f"no LLDP table (first line: {first[:120]!r})" if first else "empty output")
        return table
    trailer: list[int] = []  # the rule lldpshow prints above the total is passed over
    for n, cells in rows(
        lines, layout, table.unknown, until=(_TOTAL,), stops=trailer, starts=(_LEGEND,), rules_end=False
    ):
        local, device_name, port_id, capability, descr = (c.strip() for c in cells)
        if not local:
            table.unknown.append(f"line {n + 1}: cells do not line up with the 5 columns: {lines[n].strip()!r}")
            continue
        table.neighbors.setdefault(local, []).append(LldpNeighbor(local, device_name, port_id, capability, descr))
    if trailer:
        count = lines[trailer[0]].strip()[len(_TOTAL) :].strip()
        table.total = int(count) if count.isdigit() else None
        if table.total is None:
            table.unknown.append(f"line {trailer[0] + 1}: total {count!r} is not a count")
    read = table.count()
    if table.total is None and not any(u.endswith("is not a count") for u in table.unknown):
        table.unknown.append(f"no {_TOTAL!r} trailer: the output may be cut after {read} row(s)")
    elif table.total is not None and table.total != read:
        table.unknown.append(f"the trailer counts {table.total} entries, {read} row(s) were read")
    return table


__all__ = ["LldpNeighbor", "LldpTable", "parse_lldp_table"]
