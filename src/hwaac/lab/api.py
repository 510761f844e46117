"""The public handle on a running lab: its devices, and commands run inside a device's namespace.

Other code (verify collectors, the Ansible path, the deploy) reaches a lab's devices only through this:
``Lab.load(name).run(device, argv)`` runs ``argv`` in the device's namespace with ``vtysh`` and ``lldpcli``
on ``PATH`` reaching that device's daemons (wrappers in the lab's ``bin/<device>/``).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hwaac.lab.errors import LabError
from hwaac.lab.layout import Layout, frr_socket_dir
from hwaac.lab.manifest import lab_dir, read_state, resolve_name
from hwaac.lab.vty import query


@dataclass(frozen=True, slots=True)
class Device:
    """A device of the lab.

    Attributes:
        name: the planned device name (switch or node).
        kind: "switch" or "host".
        role: the plan's role ("leaf", "spine", ...) for a switch, the node's kind ("gpu", ...) for a host.
        netns: its network namespace (``ip netns exec <netns> ...``).
        ports: its planned interfaces in the lab (SONiC port names on a switch, rail names on a host), sorted.
    """

    name: str
    kind: str
    role: str
    netns: str
    ports: tuple[str, ...] = ()


class Lab:
    """A lab that is up (or half made: ``phase`` says which). Load it with :meth:`Lab.load`."""

    def __init__(self, folder: Path, state: dict[str, Any]) -> None:
        self.folder = folder
        self.layout = Layout(folder)
        self._set(state)

    def reload(self) -> Lab:
        """Read lab.json again (another command may have changed the lab); returns self."""
        self._set(read_state(self.folder))
        return self

    def _set(self, state: dict[str, Any]) -> None:
        self.state = state
        self.name: str = state["name"]
        self.fabric: str = state.get("fabric", "")
        self.render_dir = Path(state.get("render_dir", ""))
        self.phase: str = state.get("phase", "")
        ports: dict[str, list[str]] = {}
        for link in state.get("links", {}).values():
            for dev, port in (link["a"], link["b"]):
                ports.setdefault(dev, []).append(port)
        devices = {
            name: Device(
                name=name,
                kind=d["kind"],
                role=d.get("role", ""),
                netns=d["netns"],
                ports=tuple(sorted(ports.get(name, []), key=_port_key)),
            )
            for name, d in state.get("devices", {}).items()
        }
        self.devices: dict[str, Device] = dict(sorted(devices.items()))
        self.switches: dict[str, Device] = {n: d for n, d in self.devices.items() if d.kind == "switch"}
        self.hosts: dict[str, Device] = {n: d for n, d in self.devices.items() if d.kind == "host"}

    @classmethod
    def load(cls, name: str | None = None, *, root: Path | None = None) -> Lab:
        """The lab ``name`` (or the only lab up when None).

        Raises:
            LabNotUp: it has no state folder.
            LabError: its state is unreadable, or several labs are up and none was named.
        """
        lab = resolve_name(name, root)
        folder = lab_dir(lab, root)
        return cls(folder, read_state(folder))

    def device(self, device: str) -> Device:
        """The device called ``device``.

        Raises:
            LabError: the lab has no such device.
        """
        try:
            return self.devices[device]
        except KeyError:
            near = [d for d in self.devices if device in d][:5]
            hint = f"; did you mean {', '.join(near)}" if near else ""
            raise LabError(
                f"lab {self.name!r} has no device {device!r} ({len(self.switches)} switches, "
                f"{len(self.hosts)} hosts){hint}"
            ) from None

    def netns(self, device: str) -> str:
        """The network namespace of ``device``."""
        return self.device(device).netns

    def vtysh_argv(self, device: str) -> list[str]:
        """``vtysh`` reaching ``device``'s FRR daemons (the same as ``vtysh -N <netns>``, without its warning about
        a missing ``/etc/frr/<netns>/vtysh.conf``); append ``-c CMD`` arguments."""
        return ["vtysh", "--vty_socket", str(frr_socket_dir(self.netns(device)))]

    def lldpcli_argv(self, device: str) -> list[str]:
        """``lldpcli`` reaching ``device``'s lldpd; append its arguments."""
        return ["lldpcli", "-u", str(self.layout.lldp_socket(self.device(device).name))]

    def env(self, device: str) -> dict[str, str]:
        """The environment for a command of ``device``: ``PATH`` starts with its wrappers (``vtysh``, ``lldpcli``)."""
        self.device(device)
        env = dict(os.environ)
        env["PATH"] = f"{self.layout.bin_dir(device)}:{env.get('PATH') or '/usr/sbin:/usr/bin:/sbin:/bin'}"
        env["HWAAC_LAB"] = self.name
        env["HWAAC_LAB_DEVICE"] = device
        return env

    def vty(self, device: str, daemon: str, command: str, *, timeout: float = 60.0) -> str:
        """What ``vtysh -c COMMAND`` prints on ``device`` when ``daemon`` (zebra, bgpd) serves the command, read from
        the daemon's vty socket as vtysh does, without a vtysh process (whose start, parsing every command of every
        daemon, costs more than the answer).

        Raises:
            LabError: unknown device, the daemon is not reachable, or it refused the command.
        """
        return query(self.netns(device), daemon, command, timeout=timeout)

    def run(
        self, device: str, argv: Sequence[str], *, timeout: float = 60.0, input: str | None = None, check: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` inside ``device``'s namespace with :meth:`env`; text output captured.

        Raises:
            LabError: unknown device, or ``argv`` empty.
            subprocess.TimeoutExpired: it ran longer than ``timeout`` s.
            subprocess.CalledProcessError: it failed and ``check`` is set.
        """
        if not argv:
            raise LabError("lab.run: empty command")
        netns = self.netns(device)
        return subprocess.run(
            ["ip", "netns", "exec", netns, *argv],
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.env(device),
            check=check,
        )


def _port_key(port: str) -> tuple[str, int]:
    """Ethernet8 before Ethernet16; rail2 before rail10."""
    head = port.rstrip("0123456789")
    tail = port[len(head) :]
    return (head, int(tail) if tail else -1)
