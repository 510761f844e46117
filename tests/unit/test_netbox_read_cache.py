"""The read cache the Terraform provider's refreshes share (hwaac.netbox.sync.client.ReadCache; no NetBox)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from hwaac.netbox.sync.client import ReadCache


def test_askers_of_one_key_share_one_fetch_and_each_gets_its_own_copy() -> None:
    cache, calls, gate = ReadCache(), [], threading.Event()

    def fetch() -> list[dict]:
        calls.append(1)
        gate.wait(5)  # every asker arrives while the first fetch is in flight
        return [{"id": 1, "tags": [{"slug": "hwaac"}]}]

    with ThreadPoolExecutor(4) as pool:
        got = [pool.submit(cache.get, ("GET", "devices"), fetch) for _ in range(4)]
        threading.Timer(0.2, gate.set).start()
        answers = [f.result() for f in got]
    assert len(calls) == 1
    assert all(a == [{"id": 1, "tags": [{"slug": "hwaac"}]}] for a in answers)
    answers[0][0]["tags"].append({"slug": "x"})  # a caller annotating its records changes no other answer
    assert cache.get(("GET", "devices"), fetch) == answers[1] and len(calls) == 1


def test_clear_forgets_answers_and_a_failed_fetch_is_not_kept() -> None:
    cache, n = ReadCache(), iter(range(10))
    assert cache.get("k", lambda: next(n)) == 0
    assert cache.get("k", lambda: next(n)) == 0
    cache.clear()  # a write happened: ask again
    assert cache.get("k", lambda: next(n)) == 1

    def broken() -> int:
        raise OSError("NetBox stopped answering")

    with pytest.raises(OSError):
        cache.get("other", broken)
    assert cache.get("other", lambda: 7) == 7
