"""Where a lab's files are inside its state folder.

``dev/<device>/`` holds a device's daemon files (FRR configs, pid files and logs; owned by the ``frr`` user for
switches, as FRR writes its pid file after dropping privileges), lldpd's socket, pid and config;
``bin/<device>/`` the ``vtysh``/``lldpcli`` wrappers that reach that device's daemons.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hwaac.lab.names import FRR_RUN_DIR

SUN_PATH_MAX = 107  # sizeof(sockaddr_un.sun_path) - 1 on Linux (unix(7))


@dataclass(frozen=True, slots=True)
class Layout:
    """The paths of one lab, from its state folder."""

    folder: Path

    @property
    def state_file(self) -> Path:
        return self.folder / "lab.json"

    def dev_dir(self, device: str) -> Path:
        return self.folder / "dev" / device

    def bin_dir(self, device: str) -> Path:
        return self.folder / "bin" / device

    def conf(self, device: str, daemon: str) -> Path:
        return self.dev_dir(device) / f"{daemon}.conf"

    def pidfile(self, device: str, daemon: str) -> Path:
        return self.dev_dir(device) / f"{daemon}.pid"

    def log(self, device: str, daemon: str) -> Path:
        return self.dev_dir(device) / f"{daemon}.log"

    def lldp_socket(self, device: str) -> Path:
        return self.dev_dir(device) / "lldpd.socket"


def frr_socket_dir(netns: str) -> Path:
    """Where the FRR daemons of path space ``netns`` keep their vty sockets (``vtysh -N netns`` looks there)."""
    return FRR_RUN_DIR / netns
