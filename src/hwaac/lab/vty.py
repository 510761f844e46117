"""A daemon's vty socket queried directly, as vtysh does, for polling many switches without a vtysh process each.

Protocol (FRR ``lib/vty.c`` ``vtysh_read``/``vtysh_flush``, ``vtysh/vtysh.c`` ``vtysh_client_run``): the client
writes a command line ending in NUL; the daemon answers with the output, then three NULs and the command's
return code (0 success, 2 unknown command, ...). ``vtysh --vty_socket DIR`` (or ``-N``) uses DIR/<daemon>.vty.
"""

from __future__ import annotations

import socket

from hwaac.lab.errors import LabError
from hwaac.lab.layout import frr_socket_dir

CMD_SUCCESS = 0


def query(netns: str, daemon: str, command: str, *, timeout: float = 30.0) -> str:
    """The output of ``command`` from ``daemon`` (zebra, bgpd) of path space ``netns``.

    Raises:
        LabError: the daemon is not reachable, or refused the command (its message).
    """
    path = frr_socket_dir(netns) / f"{daemon}.vty"
    buf = bytearray()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(path))
            sock.sendall(command.encode() + b"\0")
            while not (len(buf) >= 4 and buf[-4:-1] == b"\0\0\0"):
                chunk = sock.recv(1 << 16)
                if not chunk:
                    raise LabError(f"{path}: {daemon} closed the connection during {command!r}")
                buf += chunk
    except OSError as exc:
        raise LabError(f"{path}: {daemon} not reachable ({exc.strerror or exc})") from None
    text, code = buf[:-4].decode(errors="replace"), buf[-1]
    if code != CMD_SUCCESS:
        raise LabError(f"{daemon} in {netns}: {command!r} failed (code {code}): {text.strip()[:200]}")
    return text
