"""A lab host from its rendered files: the netplan YAML (addresses, MTU, rail tables, source rules) and the
sysctl.d file (the keys a namespace has), applied in the host's namespace — read, never recomputed from the plan.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from hwaac.lab.errors import LabError
from hwaac.lab.fabric import Host
from hwaac.lab.netns import batch
from hwaac.lab.netplan import Interface, ip_commands, read_netplan
from hwaac.lab.sysctl import read_sysctl_d, set_in_netns, split_namespaced


@dataclass(slots=True)
class HostFiles:
    """What a host's rendered files ask for."""

    interfaces: dict[str, Interface] = field(default_factory=dict)
    sysctl_applied: list[tuple[str, str]] = field(default_factory=list)
    sysctl_skipped: dict[str, str] = field(default_factory=dict)


def read_host_files(host: Host) -> HostFiles:
    """Read ``hosts/<node>/netplan/*.yaml`` and ``sysctl.d/*.conf`` (each in name order, as netplan and
    systemd-sysctl do; a later file's value wins).

    Raises:
        LabError: no netplan file, or a file the readers refuse.
    """
    out = HostFiles()
    plans = sorted((host.folder / "netplan").glob("*.yaml"))
    if not plans:
        raise LabError(f"{host.folder}/netplan: no *.yaml file (re-render the fabric)")
    for path in plans:
        for name, iface in read_netplan(path.read_text(), source=str(path)).items():
            if name in out.interfaces:
                raise LabError(f"{path}: interface {name} is also in an earlier netplan file (not merged by the lab)")
            out.interfaces[name] = iface
    settings: dict[str, str] = {}
    for path in sorted((host.folder / "sysctl.d").glob("*.conf")):
        settings.update(read_sysctl_d(path.read_text(), source=str(path)))
    out.sysctl_applied, out.sysctl_skipped = split_namespaced(settings.items())
    return out


def apply_sysctls(netns: str, files: HostFiles) -> None:
    """Set the namespace's share of the sysctl.d settings (before the rails exist, as at boot)."""
    set_in_netns(netns, files.sysctl_applied)


def apply_network(netns: str, host: Host, files: HostFiles, cabled: Iterable[str]) -> None:
    """Configure the rails (already created as veth ends) as netplan would.

    Raises:
        LabError: the netplan file names an interface the host has no cable for, or ip refused a line.
    """
    have = set(cabled)
    extra = sorted(set(files.interfaces) - have)
    if extra:
        raise LabError(
            f"{host.folder}/netplan: interface(s) {', '.join(extra)} of {host.name} have no cable in "
            f"the plan (cabled: {', '.join(sorted(have)) or 'none'})"
        )
    lines: list[str] = []
    for iface in files.interfaces.values():
        lines += ip_commands(iface)
    # rails without netplan settings still come up, as a NIC with a carrier does
    lines += [f"link set dev {name} up" for name in sorted(have - set(files.interfaces))]
    batch(lines, netns=netns)
