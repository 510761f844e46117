"""Who uses the local NetBox: a per-process, re-entrant view of ``STATE/users.lock`` (``flock``).

Users of a running NetBox (a test module's fresh database, a test on the main instance) hold it shared;
``down`` takes it exclusive, so it waits for, or refuses while, another process (an xdist worker) uses it.
A waiting ``exclusive`` goes first: it holds ``users.lock.turn`` while it waits, and a process's first shared use
passes that turnstile (shared) before it takes ``users.lock``, so a stream of other processes' leases cannot
starve it (writer preference).
One descriptor per lock file and process: ``flock`` locks on two descriptors of one process would block each
other, so nested and repeated uses in one process are counted instead.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hwaac.devnetbox.errors import LocalNetBoxError
from hwaac.devnetbox.procs import acquire


@dataclass
class _Held:
    fd: int = -1
    shared: int = 0
    exclusive: int = 0


_HELD: dict[Path, _Held] = {}
_MUTEX = threading.Lock()


class UsageLock:
    """Shared/exclusive use of one state folder's NetBox, counted per process."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _held(self) -> _Held:
        return _HELD.setdefault(self.path, _Held())

    def _open(self, h: _Held) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        h.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)

    @contextlib.contextmanager
    def _turnstile(self, *, shared: bool, timeout: float) -> Iterator[None]:
        fd = os.open(self.path.with_name(self.path.name + ".turn"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            acquire(fd, shared=shared, timeout=timeout, what="another process waits to stop the local NetBox")
            yield
        finally:
            os.close(fd)

    def _release(self, h: _Held) -> None:
        if h.shared == 0 and h.exclusive == 0 and h.fd >= 0:
            os.close(h.fd)
            h.fd = -1

    def _take(self, h: _Held, *, shared: bool, timeout: float, wait: float, what: str) -> None:
        """Open the lock file and take it, shared or sole, through the turnstile (waiting ``wait`` s for it);
        on any failure nothing stays open."""
        self._open(h)
        try:
            with self._turnstile(shared=shared, timeout=wait):
                acquire(h.fd, shared=shared, timeout=timeout, what=what)
        except BaseException:
            self._release(h)
            raise

    @contextlib.contextmanager
    def shared(self, timeout: float = 1800.0) -> Iterator[None]:
        """Hold a shared use for the ``with`` body (waits up to ``timeout`` s while another process stops it)."""
        with _MUTEX:
            h = self._held()
            if h.fd < 0:
                self._take(
                    h,
                    shared=True,
                    timeout=timeout,
                    wait=timeout,
                    what="the local NetBox is being stopped by another process",
                )
            h.shared += 1
        try:
            yield
        finally:
            with _MUTEX:
                h.shared -= 1
                self._release(h)

    @contextlib.contextmanager
    def exclusive(self, timeout: float = 0.0) -> Iterator[None]:
        """Hold sole use for the ``with`` body; other processes' shared uses make it wait ``timeout`` s, then fail."""
        with _MUTEX:
            h = self._held()
            if h.exclusive == 0:
                if h.shared:
                    raise LocalNetBoxError(
                        "this process still uses the local NetBox (an open fresh instance or "
                        "lease); stop it before stopping the NetBox"
                    )
                self._take(
                    h,
                    shared=False,
                    timeout=timeout,
                    wait=max(timeout, 5.0),
                    what="the local NetBox is in use by another process (a test run?); not stopping it",
                )
            h.exclusive += 1
        try:
            yield
        finally:
            with _MUTEX:
                h.exclusive -= 1
                if h.exclusive == 0 and h.shared:
                    fcntl.flock(h.fd, fcntl.LOCK_SH)  # leases taken inside the exclusive block stay held
                self._release(h)
