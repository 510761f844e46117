"""The receive buffer lldpd's netlink socket starts with: raised while a lab's lldpd instances start.

lldpd follows its ports through netlink notifications (lldpd ``src/daemon/netlink.c``, ``netlink_recv``): on
ENOBUFS it enlarges its socket's buffer and reads on, but what the kernel dropped is not replayed, so a port whose
"up" was dropped stays down for lldpd and sends no frame until it changes again. Debian's build opens that socket
at the kernel's default size (``NETLINK_RECEIVE_BUFSIZE`` 0: ``net.core.rmem_default``, 208 KiB), which a spine's
128 ports coming up on busy cores overflow. ``net.core.rmem_default`` is one for all namespaces; :func:`raised`
sets it while the lab's lldpd instances open their sockets (a socket keeps the size it was made with) and writes
the old value back at once. ``/run/hwaac/rmem-default.json`` holds the old value meanwhile, so that ``down`` (or
the next ``up``) writes it back after a crash in between.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

from hwaac.lab.manifest import locked
from hwaac.lab.neigh import RECORD_DIR, write_record

KEY = "net.core.rmem_default"
RCVBUF = 4 * 1024 * 1024  # a few thousand link and address notifications
RECORD = "rmem-default.json"
PROC = Path("/proc/sys/net/core/rmem_default")


@contextlib.contextmanager
def raised(size: int = RCVBUF, root: Path = RECORD_DIR, proc: Path = PROC) -> Iterator[None]:
    """``net.core.rmem_default`` at least ``size`` for the block (machine-wide: one lab at a time holds it)."""
    root.mkdir(parents=True, exist_ok=True)
    record = root / RECORD
    with locked(root):
        _restore(record, proc)
        now = int(proc.read_text().strip())
        if now >= size:
            yield
            return
        write_record(record, {"saved": now, "set": size})
        proc.write_text(str(size))
        try:
            yield
        finally:
            _restore(record, proc)


def restore(root: Path = RECORD_DIR, proc: Path = PROC) -> dict[str, str]:
    """What an ``up`` stopped inside :func:`raised` left, written back; ``{key: value}`` when it wrote."""
    if not (root / RECORD).exists():
        return {}
    with locked(root):
        return _restore(root / RECORD, proc)


def _restore(record: Path, proc: Path) -> dict[str, str]:
    try:
        data = json.loads(record.read_text())
        saved, lab_set = int(data["saved"]), int(data["set"])
    except FileNotFoundError:
        return {}
    except (ValueError, KeyError, TypeError):
        record.unlink()  # not ours to act on
        return {}
    back = {}
    if int(proc.read_text().strip()) == lab_set:  # else someone set another value since: theirs
        proc.write_text(str(saved))
        back = {KEY: str(saved)}
    record.unlink()
    return back
