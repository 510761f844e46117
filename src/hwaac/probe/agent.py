"""The prober and the responder: UDP sockets in one poll loop (standard library only), in any network namespace.

:func:`run_probes` opens one unconnected socket per flow, bound to the flow's source address and port, so that
everything it sends is that flow's 5-tuple (and takes that flow's ECMP path). It sends ``count`` probes
``interval`` apart, learns the forward path tracepath-style on the same socket, and ends with a few count queries
so the responder's count (the forward direction) is final; the loop is :mod:`hwaac.probe.prober`. The responder
(:mod:`hwaac.probe.responder`) echoes each probe with its running count of that flow's probes. Message
format: :mod:`hwaac.probe.wire`; why not ``connect()``, and the numbers: ``docs/network-health.md`` "Active probing".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from hwaac.probe import wire
from hwaac.probe.model import Flow, FlowResult
from hwaac.probe.prober import COUNT_TRIES, ProbeRun
from hwaac.probe.senders import rtt_stats


def run_probes(
    flows: Sequence[Flow],
    *,
    netns_of: Callable[[str], str | None] = lambda host: None,
    count: int = 100,
    interval: float = 0.01,
    timeout: float = 2.0,
    learn_paths: bool = True,
    path_cache: dict | None = None,
    responders: bool = True,
    size: int = 64,
    max_hops: int = 8,
    trace_burst: float = 5.0,
    trace_gap: float = 1.05,
    trace_timeout: float = 0.5,
    trace_tries: int = 3,
    trace_budget: float = 60.0,
    rate: float | None = None,
    path_max_age: float | None = None,
    deadline: float | None = None,
) -> list[FlowResult]:
    """Probe ``flows`` and return one :class:`FlowResult` each, in the same order.

    Args:
        flows: the flows (a pinglist); two flows with the same source address and port cannot both bind.
        netns_of: the network namespace (name under /run/netns, or a path) of a host's sockets, None for here.
        count / interval: loss probes per flow and the seconds between two of one flow (flows are spread over
            the first interval); a flow waits while 8 of its probes are unanswered and younger than
            ``min(timeout, max(0.25, 10 * interval))`` s, so a run that outpaces its CPU slows down rather than
            overflowing receive buffers.
        timeout: seconds to wait for replies after a flow's last probe, before its count queries.
        learn_paths: learn each flow's forward path (flows in ``path_cache`` reuse theirs).
        path_cache: ``Flow.key`` -> ``{"hops": [...], "learned": unix time}``; complete paths learned are added.
        responders: also answer the probes here (a responder per destination, in its host's namespace).
        size: datagram bytes (header + padding).
        max_hops / trace_*: path learning: the longest path; TTL probes per (source address, TTL) at most
            ``trace_burst`` at once and then one per ``trace_gap`` seconds (0: no pacing); a TTL probe's answer is
            awaited ``trace_timeout`` s and it is sent ``trace_tries`` times before the hop is ``*``; path learning
            stops after ``trace_budget`` s.
        rate: probes per second over all flows at most (None: as the schedule asks).
        path_max_age: cached paths older than this many seconds are learned again (None: kept).
        deadline: seconds after which the run stops whatever is left (default: from the options above).
    """
    if count < 1 or interval <= 0 or timeout <= 0:
        raise ValueError("count must be at least 1, interval and timeout above 0")
    count_wait = max(0.2, timeout / 2)
    opts = {
        "count": count,
        "interval": interval,
        "timeout": timeout,
        "size": max(size, wire.HEADER.size),
        "max_hops": max_hops,
        "trace_burst": max(1.0, trace_burst),
        "trace_gap": trace_gap,
        "trace_timeout": trace_timeout,
        "trace_tries": max(1, trace_tries),
        "rate": rate,
        "count_wait": count_wait,
        "stall": min(timeout, max(0.25, 10 * interval)),
        "trace_budget": trace_budget,
    }
    run = ProbeRun(flows, opts)
    wall0 = time.time()
    try:
        run.open(netns_of, responders)
        t0 = time.monotonic()
        run.trace_end = t0 + trace_budget
        n = max(1, len(run.senders))
        cache = path_cache if path_cache is not None else {}
        for s in run.senders:
            s.replied = bytearray(count)
            cached = cache.get(s.result.flow.key) if isinstance(cache, dict) else None
            fresh = (
                isinstance(cached, dict)
                and isinstance(cached.get("hops"), list)
                and (path_max_age is None or wall0 - float(cached.get("learned", 0)) <= path_max_age)
            )
            if fresh:
                s.result.path, s.result.path_complete = tuple(str(h) for h in cached["hops"]), True  # type: ignore[index]
            elif learn_paths and s.sock is not None:
                s.tracing = True
                run.at(s, "trace", t0 + min(1.0, trace_gap) * s.idx / n)
            if s.sock is None:
                s.probing = False
            else:
                run.at(s, "probe", t0 + interval * s.idx / n)
        probe_s = max(count * interval, len(flows) * count / 10_000) * 1.5 + timeout + COUNT_TRIES * count_wait + 2
        limit = deadline if deadline is not None else probe_s + (trace_budget if learn_paths else 0)
        run.loop(t0, t0 + limit)
        end = time.monotonic()
        for s in run.senders:
            if s.tracing:
                s.error(f"path learning stopped at the deadline ({end - t0:.0f} s)")
                s.tracing = False
                s.result.path, s.result.path_complete = tuple(s.hops), False
            if s.probing:
                s.error(f"probing stopped at the deadline ({end - t0:.0f} s)")
                s.probing = False
    finally:
        run.close()
    out = []
    for s in run.senders:
        r = s.result
        r.rtt_us = rtt_stats(s.rtts)
        if s.fwd is not None and not s.count_final and r.received_back < r.sent:
            s.error("the responder's final count did not come back: forward loss unknown")
            s.fwd = None
        r.received_forward = None if s.fwd is None else min(s.fwd, r.sent)
        if s.drops_seen and s.drops_seen[1] > s.drops_seen[0]:
            r.host_drops = s.drops_seen[1] - s.drops_seen[0]
            s.error(f"the responder's receive buffer dropped {r.host_drops} datagrams meanwhile")
        r.errors = [t if n == 1 else f"{t} (x{n})" for t, n in s.errors.items()]
        if (
            r.path is not None
            and r.path_complete
            and learn_paths
            and path_cache is not None
            and r.flow.key not in path_cache
        ):
            path_cache[r.flow.key] = {"hops": list(r.path), "learned": wall0}
        out.append(r)
    return out


__all__ = ["run_probes"]
