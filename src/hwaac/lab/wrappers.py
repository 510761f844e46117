"""The per-device ``vtysh`` and ``lldpcli`` wrappers in ``bin/<device>/``: put first on ``PATH`` (see
:meth:`hwaac.lab.Lab.env`), they reach that device's daemons and no other."""

from __future__ import annotations

import shlex

from hwaac.lab.frr import VTYSH
from hwaac.lab.layout import Layout, frr_socket_dir
from hwaac.lab.lldp import LLDPCLI


def write(layout: Layout, device: str, netns: str, *, frr: bool) -> None:
    """Write the wrappers of ``device`` (a host's ``vtysh`` says there is no FRR on it rather than reach the
    machine's own)."""
    folder = layout.bin_dir(device)
    folder.mkdir(parents=True, exist_ok=True)
    if frr:
        vtysh = f"exec {VTYSH} --vty_socket {shlex.quote(str(frr_socket_dir(netns)))} \"$@\""
    else:
        vtysh = f"echo 'vtysh: {device} runs no FRR in this lab' >&2\nexit 1"
    lldpcli = f"exec {LLDPCLI} -u {shlex.quote(str(layout.lldp_socket(device)))} \"$@\""
    for name, body in (("vtysh", vtysh), ("lldpcli", lldpcli)):
        path = folder / name
        path.write_text(f"#!/bin/sh\n# {device} in lab namespace {netns} (written by hwaac lab up)\n{body}\n")
        path.chmod(0o755)
