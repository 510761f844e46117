"""Front-panel ports of a switch model as SONiC names them (see :class:`hwaac.model.intent.SwitchModel`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from string import ascii_lowercase

from hwaac.model.intent import SwitchModel


@dataclass(frozen=True, slots=True)
class PortInfo:
    """One port: SONiC name, comma-joined lane list, alias, 1-based cage index, speed in Mb/s."""

    name: str
    lanes: str
    alias: str
    index: int
    speed_mbps: int


@cache
def port_table(model: SwitchModel) -> tuple[PortInfo, ...]:
    """All ports of ``model``: the ``model.ports`` front-panel ports in order (port 0 first), then its extra ports.

    Cabling uses only the front-panel ports (indices below ``model.ports``).
    """
    step = model.lane_step or model.lanes_per_port
    out = []
    for i in range(model.ports):
        n = model.first_port_number + i * model.port_step
        first = model.first_lane + i * step
        cage, sub = divmod(i, model.ports_per_cage)
        out.append(
            PortInfo(
                name=model.port_name.format(n=n),
                lanes=",".join(str(first + k) for k in range(model.lanes_per_port)),
                alias=model.alias.format(
                    cage=cage + 1, sub=ascii_lowercase[sub] if model.ports_per_cage > 1 else "", n=n
                ),
                index=cage + 1,
                speed_mbps=model.port_speed_gbps * 1000,
            )
        )
    out.extend(PortInfo(x.name, x.lanes, x.alias, x.index, x.speed_mbps) for x in model.extra_ports)
    return tuple(out)


@cache
def port_names(model: SwitchModel) -> tuple[str, ...]:
    return tuple(p.name for p in port_table(model))
