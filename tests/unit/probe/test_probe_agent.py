"""The prober and the responder on real UDP sockets over loopback (no namespaces, no root): probes counted both
ways, the path (one hop: the destination), a closed port reported as no responder, the path cache reused, a
flow that cannot bind reported; and the datagram and error-queue formats."""

from __future__ import annotations

import os
import socket
import struct
import threading
from collections.abc import Iterator

import pytest

from hwaac.probe import wire
from hwaac.probe.agent import run_probes
from hwaac.probe.model import NO_RESPONDER, Flow
from hwaac.probe.responder import respond

BASE = 40000 + (os.getpid() % 500) * 40  # ports of this test process (xdist workers differ)
PORT = BASE + 39


def flows(dst: str, n: int = 4, port: int = PORT) -> list[Flow]:
    return [Flow("a", "lo", "127.0.0.1", "b", dst, 0, BASE + i, port) for i in range(n)]


@pytest.fixture
def responder() -> Iterator[str]:
    ready, stop = threading.Event(), threading.Event()
    stats: dict = {}
    t = threading.Thread(
        target=lambda: stats.update(respond(["127.0.0.2"], PORT, stop=stop.is_set, duration=30, ready=ready.set))
    )
    t.start()
    assert ready.wait(10)
    try:
        yield "127.0.0.2"
    finally:
        stop.set()
        t.join(10)
    assert stats["received"] > 0 and stats["drops"] == 0


def test_probes_are_counted_both_ways_and_the_path_learned(responder: str) -> None:
    cache: dict = {}
    rs = run_probes(flows(responder), count=20, interval=0.002, timeout=0.5, responders=False, path_cache=cache)
    for r in rs:
        assert (r.sent, r.received_forward, r.received_back, r.errors) == (20, 20, 20, [])
        assert r.path == (responder,) and r.path_complete
        assert r.rtt_us is not None and 0 < r.rtt_us.min <= r.rtt_us.p50 <= r.rtt_us.p99
    assert set(cache) == {r.flow.key for r in rs}
    cache[rs[0].flow.key] = {"hops": ["127.0.0.9", responder], "learned": 0}  # reused as it is, not learned again
    again = run_probes(flows(responder), count=5, interval=0.002, timeout=0.5, responders=False, path_cache=cache)
    assert again[0].path == ("127.0.0.9", responder) and again[1].path == (responder,)


def test_its_own_responders_answer() -> None:
    rs = run_probes(flows("127.0.0.3", 2), count=10, interval=0.002, timeout=0.5, learn_paths=False)
    assert [(r.sent, r.received_forward, r.received_back, r.path) for r in rs] == [(10, 10, 10, None)] * 2


def test_a_closed_port_is_no_responder_not_loss() -> None:
    (r,) = run_probes(flows("127.0.0.4", 1, port=BASE + 38), count=5, interval=0.002, timeout=0.3, responders=False)
    assert r.sent == 5 and r.received_back == 0 and r.received_forward is None
    assert any(e.startswith(NO_RESPONDER) for e in r.errors)


def test_a_flow_that_cannot_bind_is_reported() -> None:
    fl = flows("127.0.0.3", 1) * 2
    rs = run_probes(fl, count=3, interval=0.002, timeout=0.3, learn_paths=False)
    assert rs[0].received_back == 3 and rs[1].sent == 0
    assert "Address already in use" in rs[1].errors[0]


def test_datagram_round_trip() -> None:
    data = wire.pack(wire.REPLY, session=7, flow=3, seq=99, ttl=4, t_ns=123456789, count=98, drops=2, size=64)
    assert len(data) == 64
    assert wire.unpack(data) == wire.Message(wire.REPLY, 4, 7, 3, 99, 123456789, 98, 2)
    assert wire.unpack(b"junk" * 10) is None and wire.unpack(data[:20]) is None


def test_error_queue_entry() -> None:
    # struct sock_extended_err (errqueue.h) then the offender's struct sockaddr_in
    ee = struct.pack("=IBBBBII", 113, 2, 11, 0, 0, 0, 0)
    offender = struct.pack("=H", socket.AF_INET) + struct.pack("!H", 0) + socket.inet_aton("10.1.0.4") + bytes(8)
    e = wire.queued_error([(socket.IPPROTO_IP, wire.IP_RECVERR, ee + offender)])
    assert e is not None and e.time_exceeded and not e.port_unreachable and e.offender == "10.1.0.4"
    assert wire.queued_error([(socket.SOL_SOCKET, wire.SO_RXQ_OVFL, struct.pack("=I", 5))]) is None
    assert wire.rxq_drops([(socket.SOL_SOCKET, wire.SO_RXQ_OVFL, struct.pack("=I", 5))]) == 5
