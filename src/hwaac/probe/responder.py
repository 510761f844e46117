"""The responder: echoes each probe with its running count of that flow's probes (per source address, port and
run), so the sender learns the forward loss apart from the replies'; answers count queries and path probes
without counting them. :func:`respond` is ``hwaac probe respond``; :func:`hwaac.probe.agent.run_probes` also
opens responders for a lab whose hosts are all on one machine. Message format: :mod:`hwaac.probe.wire`.
"""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Callable, Sequence

from hwaac.probe import wire
from hwaac.probe.netns import Namespaces
from hwaac.probe.pinglist import DPORT

RCVBUF = 4 * 1024 * 1024  # a responder's receive buffer: thousands of probes between two polls
_EXPIRE_S = 600.0  # a long-running responder forgets a flow idle this long


class Responder:
    """Echo of one bound UDP socket: replies to probes with the running count of the flow's probes (per source
    address, port and session), answers count queries and path probes without counting them."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.counts: dict[tuple[str, int, int], list[float]] = {}  # -> [count, last seen]
        self.drops = 0  # the socket's receive-buffer drops so far (SO_RXQ_OVFL)
        self.received = self.answered = self.foreign = self.send_errors = 0

    def on_readable(self, now: float) -> None:
        sock = self.sock
        for _ in range(256):
            try:
                data, anc, _flags, addr = sock.recvmsg(wire.MAX_SIZE, wire.ANC_SPACE)
            except BlockingIOError:
                return
            except OSError:
                continue
            d = wire.rxq_drops(anc)
            if d is not None:
                self.drops = d
            msg = wire.unpack(data)
            if msg is None or msg.kind not in wire.ANSWER:
                self.foreign += 1
                continue
            self.received += 1
            key = (addr[0], addr[1], msg.session)
            if msg.kind == wire.PROBE:
                entry = self.counts.get(key)
                if entry is None:
                    entry = self.counts[key] = [0, now]
                entry[0] += 1
                entry[1] = now
                count = int(entry[0])
            elif msg.kind == wire.COUNT:
                count = int(self.counts.get(key, (0,))[0])
            else:
                count = 0
            reply = wire.answer(msg, count=count, drops=self.drops, size=len(data))
            try:
                sock.sendto(reply, addr)
                self.answered += 1
            except OSError:
                self.send_errors += 1

    def expire(self, now: float, age: float = _EXPIRE_S) -> None:
        for key in [k for k, v in self.counts.items() if v[1] < now - age]:
            del self.counts[key]


def open_responder(
    address: str,
    port: int = DPORT,
    *,
    namespaces: Namespaces | None = None,
    netns: str | None = None,
    freebind: bool = False,
) -> Responder:
    """A responder bound to (``address``, ``port``), in ``netns`` when given. ``freebind``: bind even when the
    address is not (yet) on an interface (``IP_FREEBIND``, ip(7)); it answers once the address is up. Raises
    OSError."""
    ns = namespaces or Namespaces()
    with ns.inside(netns):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setblocking(False)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.setsockopt(socket.SOL_SOCKET, wire.SO_RCVBUFFORCE, RCVBUF)
        except OSError:  # without CAP_NET_ADMIN: up to net.core.rmem_max
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
        sock.setsockopt(socket.SOL_SOCKET, wire.SO_RXQ_OVFL, 1)
        if freebind:
            sock.setsockopt(socket.IPPROTO_IP, wire.IP_FREEBIND, 1)
        sock.bind((address, port))
    except OSError:
        sock.close()
        raise
    return Responder(sock)


def respond(
    addresses: Sequence[str],
    port: int = DPORT,
    *,
    netns: str | None = None,
    stop: Callable[[], bool] = lambda: False,
    duration: float | None = None,
    ready: Callable[[], None] | None = None,
    freebind: bool = False,
) -> dict[str, int]:
    """Answer probes on every (address, ``port``) until ``stop()`` is true or ``duration`` seconds passed (the
    long-running responder of ``hwaac probe respond``). Returns the counts: received, answered, foreign,
    send_errors, drops. Raises OSError when an address cannot be bound (``freebind``: see
    :func:`open_responder`)."""
    ns = Namespaces()
    responders: list[Responder] = []
    ep = select.epoll()
    try:
        for a in addresses:
            r = open_responder(a, port, namespaces=ns, netns=netns, freebind=freebind)
            responders.append(r)
            ep.register(r.sock.fileno(), select.EPOLLIN)
        by_fd = {r.sock.fileno(): r for r in responders}
        if ready is not None:
            ready()
        end = None if duration is None else time.monotonic() + duration
        last_expire = time.monotonic()
        while not stop():
            now = time.monotonic()
            if end is not None and now >= end:
                break
            wait = 0.5 if end is None else max(0.0, min(0.5, end - now))
            try:
                events = ep.poll(wait, 256)
            except InterruptedError:
                continue
            now = time.monotonic()
            for fd, _ev in events:
                by_fd[fd].on_readable(now)
            if now - last_expire > 60:
                for r in responders:
                    r.expire(now)
                last_expire = now
        return {
            "received": sum(r.received for r in responders),
            "answered": sum(r.answered for r in responders),
            "foreign": sum(r.foreign for r in responders),
            "send_errors": sum(r.send_errors for r in responders),
            "drops": sum(r.drops for r in responders),
        }
    finally:
        ep.close()
        for r in responders:
            r.sock.close()
        ns.close()


__all__ = ["RCVBUF", "Responder", "open_responder", "respond"]
