"""The kernel's KSM for the lab daemons' zero-filled pages: merged while a big lab is up, or once by ``compact``.

bgpd touches most of its ~724 KiB per-peer structure with zeros (measured: 60-70 % of a bgpd's resident pages
are zero-filled). KSM (Documentation/admin-guide/mm/ksm.rst) with ``use_zero_pages`` maps such pages to the
zero page. The daemons are started with ``prctl(PR_SET_MEMORY_MERGE, 1)`` (Linux >= 6.4; kept across fork and
exec) so KSM may scan them. :func:`merging` runs ksmd while a big lab starts and stays up (the settings it found
are kept in ``/run/hwaac/ksm.json`` and written back when the last such lab goes: :func:`restore_if_last`);
:func:`compact` runs a few full scans at once and puts the settings back. Merged pages stay merged when ksmd
stops and are copied again only when written.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import time
from collections.abc import Iterator
from pathlib import Path

from hwaac.lab.errors import LabError
from hwaac.lab.manifest import locked
from hwaac.lab.neigh import RECORD_DIR, write_record

KSM = Path("/sys/kernel/mm/ksm")
PR_SET_MEMORY_MERGE = 67
SETTINGS = ("run", "use_zero_pages", "pages_to_scan", "sleep_millisecs")
FAST = {"use_zero_pages": "1", "pages_to_scan": "5000", "sleep_millisecs": "10"}
# while the lab is up: a full pass over a 16-SU lab's ~2 M pages about every 40 s, a fifth of a core or less
STEADY = {"use_zero_pages": "1", "pages_to_scan": "1000", "sleep_millisecs": "20"}
RECORD = "ksm.json"


@contextlib.contextmanager
def merging(root: Path = RECORD_DIR, ksm: Path = KSM) -> Iterator[bool]:
    """ksmd at :data:`FAST` for the block (the daemons' start and first updates), at :data:`STEADY` after it,
    until :func:`restore_if_last`. Yields False (and changes nothing) when the kernel has no KSM."""
    if not (ksm / "run").exists():
        yield False
        return
    root.mkdir(parents=True, exist_ok=True)
    record = root / RECORD
    with locked(root):
        if not record.exists():  # the first lab to merge keeps what the machine had
            write_record(record, {"saved": _read(ksm)})
        _write(ksm, {**FAST, "run": "1"})
    try:
        yield True
    finally:
        with locked(root):
            if record.exists():
                _write(ksm, {**STEADY, "run": "1"})


def restore_if_last(others_up: bool, root: Path = RECORD_DIR, ksm: Path = KSM) -> dict[str, str]:
    """Write back the settings from before the first :func:`merging`, unless ``others_up``; the settings written.

    Settings someone changed since (neither :data:`FAST` nor :data:`STEADY`) are theirs and stay.
    """
    record = root / RECORD
    if others_up or not record.exists():
        return {}
    with locked(root):
        try:
            saved = {k: str(v) for k, v in json.loads(record.read_text())["saved"].items() if k in SETTINGS}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            saved = {}  # not ours to act on
        record.unlink(missing_ok=True)
        now = _read(ksm) if (ksm / "run").exists() else {}
        ours = [{**FAST, "run": "1"}, {**STEADY, "run": "1"}]
        if not saved or now not in ours:
            return {}
        _write(ksm, saved)
        return {f"ksm.{k}": v for k, v in saved.items() if v != now[k]}


def _read(ksm: Path) -> dict[str, str]:
    return {k: (ksm / k).read_text().strip() for k in SETTINGS}


def _write(ksm: Path, values: dict[str, str]) -> None:
    """``run`` last when starting, first when stopping (stopping keeps what was merged)."""
    order = [k for k in SETTINGS if k != "run"]
    order = [*order, "run"] if values.get("run", "0") != "0" else ["run", *order]
    for key in order:
        if key in values:
            (ksm / key).write_text(values[key])


def mark_mergeable() -> bool:
    """Let KSM merge the memory of this process and of every process it starts from now on (children inherit
    the flag through fork and exec). False when the kernel has no KSM or no PR_SET_MEMORY_MERGE."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def compact(*, passes: int = 3, timeout: float = 600.0) -> dict[str, object]:
    """Run ksmd for ``passes`` full scans (at most ``timeout`` s), then restore the settings it found.

    Returns:
        ``{"seconds", "passes", "zero_pages", "pages_sharing"}`` after the scans.

    Raises:
        LabError: the kernel has no KSM (no /sys/kernel/mm/ksm).
    """
    if not (KSM / "run").exists():
        raise LabError("this kernel has no KSM (/sys/kernel/mm/ksm, CONFIG_KSM): nothing to compact with")
    before = _read(KSM)
    t0 = time.monotonic()
    start = int((KSM / "full_scans").read_text())
    done = 0
    try:
        _write(KSM, {**FAST, "run": "1"})
        while time.monotonic() - t0 < timeout:
            done = int((KSM / "full_scans").read_text()) - start
            if done >= passes:
                break
            time.sleep(0.5)
    finally:
        _write(KSM, before)
    zero = KSM / "ksm_zero_pages"
    return {
        "seconds": round(time.monotonic() - t0, 1),
        "passes": done,
        "zero_pages": int(zero.read_text()) if zero.exists() else None,
        "pages_sharing": int((KSM / "pages_sharing").read_text()),
    }
