"""The per-flow state of a probe run (:func:`hwaac.probe.agent.run_probes`): a token bucket pacing TTL probes,
one sender per flow, and the round-trip statistics of its replies."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field

from hwaac.probe.model import FlowResult, RttStats


class Bucket:
    """A token bucket: ``burst`` tokens, one more every ``gap`` seconds (the kernel's ICMP limit per destination
    is such a bucket: ``net.ipv4.icmp_ratelimit`` ms per token, 6 tokens; ``net/ipv4/icmp.c``, ``inetpeer.c``);
    ``waiting``: the flows waiting for a token, woken when one is given back."""

    __slots__ = ("t", "tokens", "waiting")

    def __init__(self, burst: float, now: float) -> None:
        self.tokens, self.t = burst, now
        self.waiting: list[int] = []

    def take(self, now: float, burst: float, gap: float) -> float:
        """0 when a token was taken, else the seconds until one is there."""
        if gap <= 0:
            return 0.0
        self.tokens = min(burst, self.tokens + (now - self.t) / gap)
        self.t = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) * gap + 1e-3


@dataclass(slots=True)
class Sender:
    """One flow of a run: its socket, the probes sent and answered, its path learning (:mod:`hwaac.probe.prober`)."""

    idx: int
    result: FlowResult
    sock: socket.socket | None = None
    ttl_default: int = 64
    attempts: int = 0
    replied: bytearray = field(default_factory=bytearray)
    sent_at: list[float] = field(default_factory=list)
    rtts: list[float] = field(default_factory=list)
    fwd: int | None = None
    count_final: bool = False
    drops_seen: list[int] = field(default_factory=list)  # [min, max] of the responder's drops
    probing: bool = True
    count_tries: int = 0
    tracing: bool = False
    ttl: int = 1
    tries: int = 0
    gap: int = 0
    hops: list[str] = field(default_factory=list)
    trace_seq: int = 0
    trace_out: float | None = None  # when the outstanding TTL probe was sent
    due: dict[str, float] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    done: bool = False

    def error(self, text: str) -> None:
        self.errors[text] = self.errors.get(text, 0) + 1

    @property
    def finished(self) -> bool:
        return not self.probing and not self.tracing


def rtt_stats(rtts: list[float]) -> RttStats | None:
    """Minimum, median and 99th percentile of round-trip times in microseconds, rounded to 0.1; None for none."""
    if not rtts:
        return None
    v = sorted(rtts)
    n = len(v)
    return RttStats(round(v[0], 1), round(v[(n - 1) // 2], 1), round(v[min(n - 1, int(0.99 * n))], 1))
