"""``hwaac lab compact``: merge the lab daemons' zero-filled and identical pages once with the kernel's KSM.

bgpd touches most of its ~724 KiB per-peer structure with zeros (measured: 60-70 % of a bgpd's resident pages
are zero-filled). KSM (Documentation/admin-guide/mm/ksm.rst) with ``use_zero_pages`` maps such pages to the
zero page. The daemons are started with ``prctl(PR_SET_MEMORY_MERGE, 1)`` (Linux >= 6.4; kept across fork and
exec) so KSM may scan them; ksmd runs only during ``compact`` (``run=1`` for a few full scans, then the
machine's previous settings come back; merged pages stay merged and are copied again only when written).
"""

from __future__ import annotations

import ctypes
import time
from pathlib import Path

from hwaac.lab.errors import LabError

KSM = Path("/sys/kernel/mm/ksm")
PR_SET_MEMORY_MERGE = 67
SETTINGS = ("run", "use_zero_pages", "pages_to_scan", "sleep_millisecs")
FAST = {"use_zero_pages": "1", "pages_to_scan": "5000", "sleep_millisecs": "10"}


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
    before = {k: (KSM / k).read_text().strip() for k in SETTINGS}
    t0 = time.monotonic()
    start = int((KSM / "full_scans").read_text())
    done = 0
    try:
        for key, value in FAST.items():
            (KSM / key).write_text(value)
        (KSM / "run").write_text("1")
        while time.monotonic() - t0 < timeout:
            done = int((KSM / "full_scans").read_text()) - start
            if done >= passes:
                break
            time.sleep(0.5)
    finally:
        # stop first (run=0 keeps what was merged), then the rest as it was
        (KSM / "run").write_text(before["run"])
        for key in ("use_zero_pages", "pages_to_scan", "sleep_millisecs"):
            (KSM / key).write_text(before[key])
    zero = KSM / "ksm_zero_pages"
    return {"seconds": round(time.monotonic() - t0, 1), "passes": done,
            "zero_pages": int(zero.read_text()) if zero.exists() else None,
            "pages_sharing": int((KSM / "pages_sharing").read_text())}
