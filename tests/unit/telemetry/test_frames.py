"""A reading as columns (hwaac.telemetry.frames): a frame is its snapshot and back, a snapshot that is not plain
has no frame, and counts are ASCII digits below 2**64."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hwaac.telemetry.frames import MAX_COUNT, Frame, counts, frame_of, frame_to_snapshot
from hwaac.telemetry.model import PortSample, Snapshot


def dump(snap: Snapshot) -> Any:
    """A snapshot with every dict as a list of items, so that equal means the same order too."""
    return (
        snap.tool,
        snap.device,
        snap.taken_at,
        snap.version,
        snap.unknown,
        [
            (k, p.port, list(p.counters.items()), list(p.gauges.items()), list(p.state.items()))
            for k, p in snap.ports.items()
        ],
    )


def test_a_frame_is_its_snapshot() -> None:
    frame = Frame(
        "t",
        "dev",
        5.0,
        "v1",
        ["p1", "p0"],
        ("b", "a"),
        np.array([[1, 2], [MAX_COUNT, 0]], np.uint64),
        [{"oper": "up"}, {}],
    )
    snap = frame_to_snapshot(frame)
    assert dump(snap) == (
        "t",
        "dev",
        5.0,
        "v1",
        [],
        [("p1", "p1", [("b", 1), ("a", 2)], [], [("oper", "up")]), ("p0", "p0", [("b", MAX_COUNT), ("a", 0)], [], [])],
    )
    assert frame_of(snap) == frame and frame_of(snap) != Frame(
        "t", "dev", 5.0, "v1", ["p1", "p0"], ("b", "a"), frame.values + 1, frame.state
    )


def _snap(**changes: Any) -> Snapshot:
    ports = changes.pop("ports", {"p0": {"a": 1, "b": 2}, "p1": {"a": 3, "b": 4}})
    snap = Snapshot("t", "dev", unknown=changes.pop("unknown", []))
    for name, counters in ports.items():
        snap.ports[name] = PortSample(name, dict(counters), dict(changes.get("gauges", {})))
    return snap


@pytest.mark.parametrize(
    ("why", "snap"),
    [
        ("a reason", _snap(unknown=["p0: cut"])),
        ("a gauge", _snap(gauges={"rx_power_dbm": -2.0})),
        ("a None counter", _snap(ports={"p0": {"a": None, "b": 2}})),
        ("names differ", _snap(ports={"p0": {"a": 1, "b": 2}, "p1": {"a": 3}})),
        ("names in another order", _snap(ports={"p0": {"a": 1, "b": 2}, "p1": {"b": 4, "a": 3}})),
        ("below zero", _snap(ports={"p0": {"a": -1}})),
        ("past 64 bits", _snap(ports={"p0": {"a": MAX_COUNT + 1}})),
        ("a bool", _snap(ports={"p0": {"a": True}})),
    ],
)
def test_a_snapshot_that_is_not_plain_has_no_frame(why: str, snap: Snapshot) -> None:
    assert frame_of(snap) is None
    assert frame_of(_snap()) is not None  # the same snapshot without it has


@pytest.mark.parametrize(
    ("text", "n", "expected"),
    [
        ("1,22,333", 3, [1, 22, 333]),
        ("007", 1, [7]),
        ("18446744073709551615", 1, [MAX_COUNT]),
        ("000000000000000000000000018446744073709551615", 1, [MAX_COUNT]),
        ("", 0, []),
        ("18446744073709551616", 1, None),
        ("1,18446744073709551615,99999999999999999999", 3, None),
        ("1,,2", 3, None),
        (",1", 2, None),
        ("1,", 2, None),
        ("1,2,", 2, None),
        ("1,2", 3, None),
        ("1,2,3", 2, None),
        ("", 1, None),
        ("1, 2", 2, None),
        ("+1", 1, None),
        ("-1", 1, None),
        ("0x10", 1, None),
        ("1e3", 1, None),
        ("١٢", 1, None),
    ],
)
def test_counts_are_ascii_digits_below_2_64(text: str, n: int, expected: list[int] | None) -> None:
    got = counts(text, n)
    assert (None if got is None else got.tolist()) == expected
    assert got is None or got.dtype == np.uint64
