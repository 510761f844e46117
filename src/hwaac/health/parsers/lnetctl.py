"""``lnetctl net show -v 2``: the local LNet NIs, their status and health, or LNet down.

The formats, sources and rules in full: ``docs/health-modules.md``, section "lnetctl net show".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from hwaac.health.parsers.lustre_formats import LustreError, lnet_cut, lnet_down_text, lnet_nets
from hwaac.health.result import ToolResult

# the lowest `lnetctl net show -v N` that prints `health stats` (lustre-release lnet/utils/lnetconfig/liblnetconfig.c
# lustre_lnet_show_net() "if (detail < 2) goto continue_without_msg_stats", 2.12-2.15 ioctl path; lnet/lnet/api-ni.c
# "if (gnlh->version < 2) goto skip_msg_stats", 2.16+ Netlink path); jt_show_net() makes a plain -v level 1
HEALTH_DETAIL = 2
NET_SHOW_ARGV = ("lnetctl", "net", "show", "-v", str(HEALTH_DETAIL))
NI_STATUSES = ("up", "down")  # liblnetconfig lustre_lnet_show_net(): LNET_NI_STATUS_UP ? "up" : "down"
FULL_HEALTH = 1000  # LNet health value of a healthy NI (lnet/include/lnet/lib-types.h LNET_MAX_HEALTH_VALUE)


@dataclass
class LnetNi:
    """One local NI of ``lnetctl net show -v 2``.

    Attributes:
        net: the net type (``o2ib``, ``tcp``; LNet prints ``o2ib`` for ``o2ib0``).
        nid: ``10.20.0.5@o2ib``. status: ``up``/``down`` (None when missing). interface: ``interfaces: {0: ...}``.
        health_value: ``health stats: health value`` (1000 = full), None when not printed (detail below
            :data:`HEALTH_DETAIL`, < 2.12, or the ioctl for it failed).
        fatal_error: ``health stats: fatal_error`` (2.15+), None when not printed.
    """

    net: str
    nid: str
    status: str | None = None
    interface: str | None = None
    health_value: int | None = None
    fatal_error: int | None = None


@dataclass
class LnetNetsResult(ToolResult):
    """``lnetctl net show -v 2``: the local NIs (``lo`` left out) and whether LNet is down (``down_text``: what
    lnetctl printed then)."""

    tool: str = " ".join(NET_SHOW_ARGV)
    nis: list[LnetNi] = field(default_factory=list)
    lnet_down: bool = False
    down_text: str = ""

    def faulty(self) -> list[LnetNi]:
        """NIs that are not up, have a fatal error, or a health value below :data:`FULL_HEALTH`."""
        return [
            ni
            for ni in self.nis
            if (ni.status is not None and ni.status != "up")
            or ni.fatal_error
            or (ni.health_value is not None and ni.health_value < FULL_HEALTH)
        ]


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def parse_lnet_net_show(raw: str, *, stderr: str = "", exit_code: int | None = None) -> LnetNetsResult:
    """Read ``lnetctl net show -v 2`` (either layout) with PyYAML ``safe_load``.

    Returns:
        An :class:`LnetNetsResult`: ``lnet_down`` when LNet is not running, else per NI its status, health value
        and ``fatal_error`` (None where not printed: the check judges that). ``unknown``: empty or non-YAML
        output, no ``net:`` list, an NI without a NID, a status other than ``up``/``down``, a value that is not a
        number, output cut short (``lnet_cut``: a last NI or network that lacks what lnetctl prints), a failing exit
        status with every NI healthy.
    """
    result = LnetNetsResult()
    if lnet_down_text(raw) or lnet_down_text(stderr):
        result.lnet_down = True
        result.down_text = (stderr or raw).strip()[:400]
        return result
    if not raw.strip():
        result.unknown.append("no output" + (f" ({stderr.strip()[:160]})" if stderr.strip() else ""))
        return result
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        result.unknown.append(f"not YAML: {str(exc).splitlines()[0]}")
        return result
    if not isinstance(data, dict) or not isinstance(data.get("net"), list):
        result.unknown.append("no 'net:' list")
        return result
    try:
        nets = lnet_nets(data)  # lustre_formats: the one reader of lnetctl's net entries (host and controller)
    except LustreError as exc:
        result.unknown.append(str(exc)[:200])
        return result
    if cut := lnet_cut(nets):
        result.unknown.append(cut)
    for net in nets:
        net_type = net["net"]
        if net_type == "lo":
            continue
        for ni in net["nis"]:
            if not ni["nid"]:
                result.unknown.append(f"{net_type}: NI without a nid")
                continue
            health = ni["health stats"] or {}
            entry = LnetNi(
                net_type, str(ni["nid"]), str(ni["status"]) if ni["status"] is not None else None, ni["interface"]
            )
            if isinstance(health, dict):
                if "health value" in health:
                    entry.health_value = _int(health["health value"])
                    if entry.health_value is None:
                        result.unknown.append(f"{entry.nid}: health value {health['health value']!r} is not a number")
                if "fatal_error" in health:
                    entry.fatal_error = _int(health["fatal_error"])
            result.nis.append(entry)
            if entry.status is None:
                result.unknown.append(f"{entry.nid}: no status")
            elif entry.status not in NI_STATUSES:
                result.unknown.append(f"{entry.nid}: status {entry.status!r} is not {' or '.join(NI_STATUSES)}")
    if not result.nis and not result.unknown:
        result.unknown.append("no NI besides lo")
    if exit_code and not result.faulty() and not result.unknown:
        result.unknown.append(f"exit status {exit_code}")
    return result
