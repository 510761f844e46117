"""Looking up a hand-made output by its case name in the frame readers' case tables (test_frame_readers_cases.py,
test_frame_readers_host_cases.py)."""

from __future__ import annotations


def case_raw(cases: list[tuple[str, str, bool]], name: str) -> str:
    """The output of the case ``name`` in a table of (case, output, usual)."""
    return next(raw for case, raw, _ in cases if case == name)
