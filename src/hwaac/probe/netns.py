"""Open sockets inside named network namespaces from one process, and the open-file limit that many sockets need.

A socket belongs to the namespace of the thread that created it (socket(7), network_namespaces(7)), and keeps it
when the thread moves on: :class:`Namespaces` switches the calling thread with ``setns(2)`` (``CLONE_NEWNET``) to
``/run/netns/NAME`` (where ``ip netns add`` mounts them), creates and binds the socket there, and switches back to
the thread's own namespace, saved from ``/proc/thread-self/ns/net``. Needs CAP_SYS_ADMIN.
"""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Iterator

NETNS_DIR = "/run/netns"


def netns_path(name: str) -> str:
    """A namespace name (``ip netns`` style) or an absolute path to its file."""
    return name if name.startswith("/") else os.path.join(NETNS_DIR, name)


class Namespaces:
    """Namespace file descriptors, opened once each; :meth:`inside` switches the thread for a block."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}
        self._own: int | None = None

    def inside(self, name: str | None) -> contextlib.AbstractContextManager[None]:
        """A block run in namespace ``name`` (None: where the thread is). Raises OSError when the namespace
        cannot be opened or entered."""
        return contextlib.nullcontext() if name is None else self._switch(name)

    @contextlib.contextmanager
    def _switch(self, name: str) -> Iterator[None]:
        if self._own is None:
            self._own = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        fd = self._fds.get(name)
        if fd is None:
            fd = self._fds[name] = os.open(netns_path(name), os.O_RDONLY | os.O_CLOEXEC)
        os.setns(fd, os.CLONE_NEWNET)
        try:
            yield
        finally:
            os.setns(self._own, os.CLONE_NEWNET)

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        if self._own is not None:
            os.close(self._own)
            self._own = None


def raise_nofile(need: int) -> str | None:
    """Raise the soft RLIMIT_NOFILE towards the hard limit so that ``need`` more descriptors fit; the reason in
    words when they do not (None when they do)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    used = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    want = used + need + 16
    if soft != resource.RLIM_INFINITY and soft < want:
        new = want if hard == resource.RLIM_INFINITY else min(hard, want)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft != resource.RLIM_INFINITY and soft < want:
        return (
            f"{need} sockets need about {want} open files, RLIMIT_NOFILE allows {soft} (hard limit {hard}); "
            "raise the hard limit (ulimit -Hn, LimitNOFILE=) or probe fewer flows at once"
        )
    return None


__all__ = ["NETNS_DIR", "Namespaces", "netns_path", "raise_nofile"]
