"""The state and poll loop of one prober run (:class:`ProbeRun`), which :func:`hwaac.probe.agent.run_probes` sets up
and reads out: one unconnected UDP socket per flow, its probes, count queries and tracepath-style path learning
(``IP_TTL`` probes, ICMP errors on the socket's error queue, ``IP_RECVERR``), paced per (source, TTL) for routers'
ICMP rate limits and self-clocked as ``docs/network-health.md`` "Active probing" says.
"""

from __future__ import annotations

import errno
import functools
import heapq
import os
import select
import socket
import time
from collections.abc import Callable, Sequence

from hwaac.probe import wire
from hwaac.probe.model import MISSING_HOP, NO_RESPONDER, Flow, FlowResult
from hwaac.probe.netns import Namespaces, raise_nofile
from hwaac.probe.responder import Responder, open_responder
from hwaac.probe.senders import Bucket, Sender

_SOFT = frozenset({errno.EHOSTUNREACH, errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTDOWN})
_BATCH = 512  # probes sent between two polls at most
_WINDOW = 8  # a flow's probes awaiting a reply at most (younger than the stall time): self-clocks an overloaded run
COUNT_TRIES = 3  # count queries at the end of a flow
_MAX_GAP = 2  # consecutive silent hops that end path learning


class ProbeRun:
    """The state of one :func:`hwaac.probe.agent.run_probes` call (module docstring)."""

    def __init__(self, flows: Sequence[Flow], opts: dict) -> None:
        self.o = opts
        self.session = int.from_bytes(os.urandom(4), "big")
        self.senders = [Sender(i, FlowResult(f)) for i, f in enumerate(flows)]
        self.heap: list[tuple[float, int, int, str]] = []
        self.tick = 0
        self.buckets: dict[tuple[str, int], Bucket] = {}
        self.handlers: dict[int, Callable[[float], None]] = {}
        self.responders: list[Responder] = []
        self.ep = select.epoll()
        self.ns = Namespaces()
        self.sent_total = 0
        self.left = len(self.senders)
        self.trace_end = float("inf")  # path learning stops here (monotonic)

    def check_done(self, s: Sender) -> None:
        if not s.done and s.finished:
            s.done = True
            self.left -= 1

    def at(self, s: Sender, what: str, when: float) -> None:
        s.due[what] = when
        self.tick += 1
        heapq.heappush(self.heap, (when, self.tick, s.idx, what))

    # -- sockets ---------------------------------------------------------------------------------------------------
    def open(self, netns_of: Callable[[str], str | None], responders: bool) -> None:
        flows = [s.result.flow for s in self.senders]
        targets = sorted({(f.dst_host, f.dst_ip, f.dport) for f in flows}) if responders else []
        limit = raise_nofile(len(flows) + len(targets))
        failed: dict[tuple[str, int], str] = {}
        for host, ip, port in targets:
            try:
                r = open_responder(ip, port, namespaces=self.ns, netns=netns_of(host))
            except OSError as exc:
                failed[(ip, port)] = f"responder on {ip}:{port} not started: {exc.strerror or exc}" + (
                    f" ({limit})" if limit and exc.errno == errno.EMFILE else ""
                )
                continue
            self.responders.append(r)
            fd = r.sock.fileno()
            self.handlers[fd] = r.on_readable
            self.ep.register(fd, select.EPOLLIN)
        by_ns: dict[str | None, list[Sender]] = {}
        for s in self.senders:
            by_ns.setdefault(netns_of(s.result.flow.src_host), []).append(s)
        for name, group in by_ns.items():
            try:
                with self.ns.inside(name):
                    for s in group:
                        try:
                            s.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                        except OSError as exc:
                            s.error(
                                f"no socket: {exc.strerror or exc}"
                                + (f" ({limit})" if limit and exc.errno in (errno.EMFILE, errno.ENFILE) else "")
                            )
            except OSError as exc:
                for s in group:
                    s.error(f"network namespace {name}: {exc.strerror or exc}")
            for s in group:
                self._connect(s, failed)

    def _connect(self, s: Sender, failed: dict[tuple[str, int], str]) -> None:
        f = s.result.flow
        if (f.dst_ip, f.dport) in failed:
            s.error(failed[(f.dst_ip, f.dport)])
        if s.sock is None:
            return
        try:
            s.sock.setblocking(False)
            s.sock.setsockopt(socket.IPPROTO_IP, wire.IP_RECVERR, 1)
            s.ttl_default = s.sock.getsockopt(socket.IPPROTO_IP, socket.IP_TTL)
            s.sock.bind((f.src_ip, f.sport))
        except OSError as exc:
            s.error(f"bind {f.src_ip}:{f.sport}: {exc.strerror or exc}")
            s.sock.close()
            s.sock = None
            return
        fd = s.sock.fileno()
        self.handlers[fd] = functools.partial(self.on_sender, s)
        self.ep.register(fd, select.EPOLLIN)

    def close(self) -> None:
        self.ep.close()
        for s in self.senders:
            if s.sock is not None:
                s.sock.close()
                s.sock = None
        for r in self.responders:
            r.sock.close()
        self.ns.close()

    # -- sending ---------------------------------------------------------------------------------------------------
    def send(self, s: Sender, data: bytes, ttl: int | None = None) -> int:
        """Send on the flow's socket; 0 or the errno. A pending soft error (an ICMP error reported on the socket,
        ``sk_err``) fails one send without sending: the error queue is read and the send tried once more."""
        assert s.sock is not None
        to = (s.result.flow.dst_ip, s.result.flow.dport)
        for attempt in (0, 1):
            try:
                if ttl is None:
                    s.sock.sendto(data, to)
                else:
                    s.sock.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, ttl)
                    try:
                        s.sock.sendto(data, to)
                    finally:
                        s.sock.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, s.ttl_default)
                return 0
            except BlockingIOError:
                return errno.EAGAIN
            except OSError as exc:
                if exc.errno in _SOFT and attempt == 0:
                    self.read_errors(s, time.monotonic())
                    continue
                return exc.errno or errno.EIO
        return errno.EIO

    def probe(self, s: Sender, now: float) -> None:
        o = self.o
        if s.sock is None:
            self.end_probing(s)
            return
        seq = s.attempts
        if seq >= _WINDOW:
            old = seq - _WINDOW
            if not s.replied[old] and now < s.sent_at[old] + o["stall"]:
                self.at(s, "probe", min(s.sent_at[old] + o["stall"], now + o["interval"]))
                return
        s.attempts += 1
        s.sent_at.append(now)
        err = self.send(
            s,
            wire.pack(wire.PROBE, session=self.session, flow=s.idx, seq=seq, t_ns=time.monotonic_ns(), size=o["size"]),
        )
        if err == 0:
            s.result.sent += 1
            self.sent_total += 1
        else:
            s.error(f"send: {os.strerror(err)}")
            s.replied[seq] = 2  # never sent: not a loss
        if s.attempts < o["count"]:
            self.at(s, "probe", max(now, s.due["probe"] + o["interval"]))
        else:
            self.at(s, "drain", now + o["timeout"])

    def count_query(self, s: Sender, now: float) -> None:
        if s.result.sent and s.result.received_back >= s.result.sent:
            s.fwd, s.count_final = max(s.fwd or 0, s.result.received_back), True  # every reply came back
        if s.count_final or s.sock is None or s.count_tries >= COUNT_TRIES or not s.result.sent:
            self.end_probing(s)
            return
        s.count_tries += 1
        self.send(
            s,
            wire.pack(
                wire.COUNT,
                session=self.session,
                flow=s.idx,
                seq=s.count_tries,
                t_ns=time.monotonic_ns(),
                size=self.o["size"],
            ),
        )
        self.at(s, "drain", now + self.o["count_wait"])

    def end_probing(self, s: Sender) -> None:
        s.probing = False
        s.due.pop("drain", None)
        s.due.pop("probe", None)
        self.check_done(s)

    # -- path learning ---------------------------------------------------------------------------------------------
    def trace(self, s: Sender, now: float) -> None:
        o = self.o
        if not s.tracing:
            return
        if now >= self.trace_end:
            s.error(f"path learning stopped after {o['trace_budget']:.0f} s")
            self.end_trace(s, reached=False)
            return
        if s.trace_out is not None:
            if now < s.trace_out + o["trace_timeout"]:
                self.at(s, "trace", s.trace_out + o["trace_timeout"])
                return
            s.trace_out = None
            s.tries += 1
            if s.tries >= o["trace_tries"]:
                s.hops.append(MISSING_HOP)
                s.gap += 1
                s.ttl += 1
                s.tries = 0
                if s.gap >= _MAX_GAP or s.ttl > o["max_hops"]:
                    self.end_trace(s, reached=False)
                    return
        if s.sock is None:
            self.end_trace(s, reached=False)
            return
        f = s.result.flow
        bucket = self.buckets.get((f.src_ip, s.ttl))
        if bucket is None:
            bucket = self.buckets[(f.src_ip, s.ttl)] = Bucket(o["trace_burst"], now)
        wait = bucket.take(now, o["trace_burst"], o["trace_gap"])
        if wait > 0:
            bucket.waiting.append(s.idx)
            self.at(s, "trace", now + wait)
            return
        s.trace_seq += 1
        err = self.send(
            s,
            wire.pack(
                wire.TRACE,
                session=self.session,
                flow=s.idx,
                seq=s.trace_seq,
                ttl=s.ttl,
                t_ns=time.monotonic_ns(),
                size=o["size"],
            ),
            ttl=s.ttl,
        )
        if err:
            s.error(f"path probe: {os.strerror(err)}")
        s.trace_out = now
        self.at(s, "trace", now + o["trace_timeout"])

    def hop(self, s: Sender, ttl: int, addr: str, now: float) -> None:
        """The hop at ``ttl`` answered from ``addr`` (a router's time-exceeded)."""
        if not s.tracing or ttl != s.ttl or s.trace_out is None:
            return
        s.hops.append(addr)
        s.gap, s.tries, s.trace_out = 0, 0, None
        s.ttl += 1
        if s.ttl > self.o["max_hops"]:
            s.error(f"path longer than {self.o['max_hops']} hops")
            self.end_trace(s, reached=False)
        else:
            self.trace(s, now)

    def end_trace(self, s: Sender, *, reached: bool) -> None:
        s.tracing = False
        s.trace_out = None
        s.due.pop("trace", None)
        r = s.result
        r.path = tuple(s.hops)
        r.path_complete = reached and MISSING_HOP not in s.hops
        if not reached:
            s.error(f"path incomplete: the destination did not answer within {len(s.hops)} hops")
        self.check_done(s)

    # -- receiving -------------------------------------------------------------------------------------------------
    def read_errors(self, s: Sender, now: float) -> None:
        sock = s.sock
        if sock is None:
            return
        for _ in range(64):
            try:
                data, anc, _flags, _addr = sock.recvmsg(wire.MAX_SIZE, wire.ANC_SPACE, wire.MSG_ERRQUEUE)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            e = wire.queued_error(anc)
            if e is None or not e.icmp or e.offender is None:
                continue
            msg = wire.unpack(data)
            f = s.result.flow
            is_trace = msg.kind == wire.TRACE if msg is not None else s.trace_out is not None
            ttl = msg.ttl if msg is not None else s.ttl
            if msg is not None and (msg.session != self.session or msg.flow != s.idx):
                continue
            if e.time_exceeded and is_trace:
                self.hop(s, ttl, e.offender, now)
            elif e.port_unreachable and e.offender == f.dst_ip:
                s.error(f"{NO_RESPONDER} {f.dst_ip}:{f.dport} (ICMP port unreachable)")
                if is_trace and s.tracing and ttl == s.ttl:
                    s.hops.append(e.offender)
                    self.end_trace(s, reached=True)
            elif e.type == wire.ICMP_DEST_UNREACH:
                s.error(f"{e.offender}: destination unreachable (ICMP code {e.code})")
                if is_trace and s.tracing and ttl == s.ttl:
                    s.hops.append(e.offender)
                    self.end_trace(s, reached=False)
            elif not e.time_exceeded:
                s.error(f"{e.offender}: ICMP type {e.type} code {e.code}")

    def on_sender(self, s: Sender, now: float) -> None:
        self.read_errors(s, now)
        sock = s.sock
        if sock is None:
            return
        peer = (s.result.flow.dst_ip, s.result.flow.dport)
        for _ in range(64):
            try:
                data, addr = sock.recvfrom(wire.MAX_SIZE)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:
                if exc.errno in _SOFT:
                    self.read_errors(s, now)
                    continue
                s.error(f"receive: {exc.strerror or exc}")
                break
            msg = wire.unpack(data)
            if addr != peer or msg is None or msg.session != self.session or msg.flow != s.idx:
                continue
            self.on_message(s, msg, now)

    def on_message(self, s: Sender, msg: wire.Message, now: float) -> None:
        r = s.result
        if msg.kind in (wire.REPLY, wire.COUNT_ANSWER):
            s.drops_seen = (
                [min(s.drops_seen[0], msg.drops), max(s.drops_seen[1], msg.drops)]
                if s.drops_seen
                else [msg.drops, msg.drops]
            )
            s.fwd = msg.count if s.fwd is None else max(s.fwd, msg.count)
        if msg.kind == wire.REPLY:
            if msg.seq < len(s.replied) and s.replied[msg.seq] == 0:
                s.replied[msg.seq] = 1
                r.received_back += 1
                s.rtts.append((time.monotonic_ns() - msg.t_ns) / 1000.0)
                if s.probing and s.attempts >= self.o["count"] and r.received_back >= r.sent:
                    s.fwd, s.count_final = max(s.fwd or 0, r.received_back), True
                    self.end_probing(s)
        elif msg.kind == wire.COUNT_ANSWER:
            if s.probing and s.attempts >= self.o["count"]:
                s.count_final = True
                self.end_probing(s)
        elif msg.kind == wire.TRACE_REPLY and s.tracing and msg.ttl == s.ttl and s.trace_out is not None:
            bucket = self.buckets.get((r.flow.src_ip, msg.ttl))
            if bucket is not None:  # the destination answered, no router spent an ICMP error: give the token back
                bucket.tokens = min(self.o["trace_burst"], bucket.tokens + 1)
                while bucket.waiting:
                    w = self.senders[bucket.waiting.pop(0)]
                    if w.tracing and w.trace_out is None and w.ttl == msg.ttl:
                        self.at(w, "trace", now)
                        break
            s.hops.append(r.flow.dst_ip)
            self.end_trace(s, reached=True)

    # -- the loop --------------------------------------------------------------------------------------------------
    def loop(self, t0: float, deadline: float) -> None:
        heap, senders = self.heap, self.senders
        rate = self.o["rate"]
        for s in senders:
            self.check_done(s)
        while self.left > 0 and time.monotonic() < deadline:
            now = time.monotonic()
            wait = min(0.05, max(0.0, heap[0][0] - now)) if heap else 0.05
            try:
                events = self.ep.poll(wait, 4096)
            except InterruptedError:
                events = []
            now = time.monotonic()
            for fd, _ev in events:
                h = self.handlers.get(fd)
                if h is not None:
                    h(now)
            sent_here = 0
            while heap and heap[0][0] <= now and sent_here < _BATCH:
                when, _t, idx, what = heap[0]
                s = senders[idx]
                if s.due.get(what) != when:
                    heapq.heappop(heap)
                    continue
                if what == "probe" and rate and self.sent_total >= (now - t0) * rate:
                    break
                heapq.heappop(heap)
                if what == "probe":
                    self.probe(s, now)
                    sent_here += 1
                elif what == "drain":
                    self.count_query(s, now)
                elif what == "trace":
                    self.trace(s, now)


__all__ = ["COUNT_TRIES", "ProbeRun"]
