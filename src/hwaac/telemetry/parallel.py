"""Reading a large sweep on every core: jobs (chunks of devices) spread over forked worker processes, their results
returned in job order, so the caller merges them exactly as a serial loop would have built them.

Small sweeps stay in this process (a pool costs about 0.1 s to start); so do processes that cannot fork safely
(no ``fork`` start method, or other threads running: a fork copies their locks). Why and the figures:
``docs/network-health-scale.md``.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

# devices in the sweeps read together from which the reading is spread over processes (a 100k-GPU fabric has
# about 18,000; the demo fabric 50)
PARALLEL_DEVICES = 512
_shared: Any = None  # what the jobs read, set before the fork (the workers see the parent's memory as it was)


def shared() -> Any:
    """The object given to :func:`run` as ``shared``, in a worker (or in this process on the serial path)."""
    return _shared


def cores() -> int:
    """The CPUs this process may run on (its affinity, as ``taskset`` sets it), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def parallel_ok(devices: int, workers: int | None) -> int:
    """How many worker processes to use for ``devices`` devices: 0 for the serial path (a small sweep, one core,
    ``workers`` 1, no fork, other threads)."""
    n = cores() if workers is None else workers
    if n < 2 or devices < PARALLEL_DEVICES or "fork" not in multiprocessing.get_all_start_methods():
        return 0
    return n if threading.active_count() == 1 else 0


def run[J, T](
    fn: Callable[[J], T],
    jobs: Sequence[J],
    workers: int,
    share: Any = None,
    remote: Callable[[J], Any] | None = None,
    decode: Callable[[Any], T] | None = None,
    consume: Callable[[int, T], T] | None = None,
) -> list[T]:
    """``[fn(job) for job in jobs]`` on ``workers`` processes when ``workers`` >= 2: this one and ``workers - 1``
    forked helpers take the next job from one counter until none is left, so the faster side does more. A
    helper runs ``remote(job)`` (default ``fn``) and sends its result back (pickled; exceptions too), where
    ``decode`` (default: as it is) turns it into ``fn``'s result; this process decodes the helpers' results
    between its own jobs. ``consume(i, result)``, when given, is called here on each result in job order as soon
    as it and those before it are in (while the helpers still read), and what it returns is kept in its place.
    The helpers are gone when this returns. ``share`` is what :func:`shared` returns in the jobs."""
    global _shared, _job
    _shared = share
    try:
        if workers < 2 or len(jobs) < 2:
            return [fn(job) if consume is None else consume(i, fn(job)) for i, job in enumerate(jobs)]
        ctx = multiprocessing.get_context("fork")
        counter, results = ctx.Value("l", 0), ctx.Queue()
        _job = (remote or fn, jobs, counter, results)
        out: list[Any] = [_PENDING] * len(jobs)
        done = consumed = 0

        def put(i: int, value: Any) -> None:
            nonlocal done, consumed
            out[i] = value
            done += 1
            while consume is not None and consumed < len(jobs) and out[consumed] is not _PENDING:
                out[consumed] = consume(consumed, out[consumed])
                consumed += 1

        def take(result: tuple[int, bool, Any]) -> None:
            i, ok, value = result
            if not ok:
                raise value
            put(i, decode(value) if decode is not None else value)

        gc.freeze()  # the helpers' collector then leaves this process's objects (and their pages) alone
        helpers = [ctx.Process(target=_helper, daemon=True) for _ in range(workers - 1)]
        try:
            for h in helpers:
                h.start()
            while (i := _next(counter)) < len(jobs):
                put(i, fn(jobs[i]))
                while not results.empty():
                    take(results.get())
            while done < len(jobs):
                try:
                    take(results.get(timeout=1.0))
                except queue.Empty:
                    if not any(h.is_alive() for h in helpers) and results.empty():
                        raise RuntimeError("a reader process ended without its results") from None
            for h in helpers:
                h.join()
        finally:
            gc.unfreeze()
            for h in helpers:
                if h.is_alive():
                    h.kill()
                    h.join()
            results.close()
            results.join_thread()
        return out
    finally:
        _shared = _job = None


_PENDING = object()  # a job whose result is not in yet
_job: Any = None  # (the helpers' function, the jobs, the counter, the results queue), set before the fork


def _next(counter: Any) -> int:
    with counter.get_lock():
        i = counter.value
        counter.value = i + 1
    return i


def _helper() -> None:
    """A helper process: the next job until none is left, each result (or its exception) sent back."""
    fn, jobs, counter, results = _job
    while (i := _next(counter)) < len(jobs):
        try:
            results.put((i, True, fn(jobs[i])))
        except Exception as exc:  # sent to the parent, which raises it
            results.put((i, False, exc))
            break
    results.close()
    results.join_thread()


@contextmanager
def no_collections() -> Iterator[None]:
    """No garbage collection while millions of acyclic objects (samples, their counter dicts, the ends' words) are
    built: the collector would run hundreds of times over a sweep of a large fabric, each pass over everything
    built so far, and find nothing (the readers and the rates build no reference cycles: what they drop is freed
    by its reference count). The collector's state is restored after; forked helpers inherit it."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def chunks[T](items: Sequence[T], workers: int, per_worker: int = 8, last: int = 16) -> list[Sequence[T]]:
    """``items`` cut into runs in order (one run when serial), each about ``1 / (workers * per_worker)`` of what
    is left, down to ``last`` items: the large first runs cost little to hand out, and the small last ones even
    out the workers' ends, whatever items cost most (guided self-scheduling)."""
    if workers < 2:
        return [items]
    out: list[Sequence[T]] = []
    at = 0
    while at < len(items):
        size = max(last, -(-(len(items) - at) // (workers * per_worker)))
        out.append(items[at : at + size])
        at += size
    return out


__all__ = ["PARALLEL_DEVICES", "chunks", "cores", "no_collections", "parallel_ok", "run", "shared"]
