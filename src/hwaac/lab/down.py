"""``hwaac lab down``: remove everything a lab made, from its record and by its namespace prefix, so a crashed
or half-made lab goes as completely as a healthy one. Idempotent.

Order: the closed mitigation loop's processes (hwaac.lab.loop) are stopped, then every process in the lab's
namespaces (daemons, flap loops, commands run with ``lab exec``) is killed,
then the namespaces (and their veths) are deleted, FRR's path-space folders removed, the neighbour-table
limits restored when no other lab is up, the KSM settings when no other lab merges (hwaac.lab.ksm), a socket
buffer default an ``up`` stopped half-way left raised (hwaac.lab.rcvbuf), and the state folder removed.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hwaac.lab import ksm, neigh, netns, rcvbuf
from hwaac.lab.errors import LabError
from hwaac.lab.loop import stop_recorded
from hwaac.lab.manifest import list_labs, locked, read_state
from hwaac.lab.names import FRR_RUN_DIR, PREFIX, check_lab_name, lab_of_netns, lab_prefix, state_root
from hwaac.lab.procs import alive, stop, stop_pids

Log = Callable[[str], None]


def labs_present(root: Path | None = None) -> list[str]:
    """Labs with a state folder or a namespace, sorted."""
    from_ns = {lab for n in netns.existing(PREFIX) if (lab := lab_of_netns(n))}
    return sorted(set(list_labs(root)) | from_ns)


def down(name: str | None = None, *, root: Path | None = None, log: Log = lambda _: None) -> dict[str, Any]:
    """Remove lab ``name`` (or the only lab present).

    Returns:
        What was removed: ``{"lab", "namespaces", "processes", "sysctl_restored", "state_removed"}``.

    Raises:
        LabError: several labs are present and none was named.
    """
    root = root or state_root()
    if name is None:
        present = labs_present(root)
        if not present:
            log("no lab is up: nothing to remove")
            return {"lab": None, "namespaces": 0, "processes": 0, "sysctl_restored": {}, "state_removed": False}
        if len(present) > 1:
            raise LabError(f"several labs are up ({', '.join(present)}): name one")
        name = present[0]
    lab = check_lab_name(name)
    folder = root / lab
    if folder.is_dir():
        with locked(folder):
            return _down(lab, folder, root, log)
    return _down(lab, folder, root, log)


def _loop_lab(folder: Path) -> Any:
    """Enough of a lab for :func:`hwaac.lab.loop.stop_recorded`: its folder."""
    from types import SimpleNamespace

    return SimpleNamespace(folder=folder)


def _merging(root: Path, lab: str) -> bool:
    """Whether lab ``lab`` has KSM merge its pages (hwaac.lab.ksm); a lab without a readable record may."""
    try:
        return bool(read_state(root / lab).get("ksm"))
    except LabError:
        return True


def _down(lab: str, folder: Path, root: Path, log: Log) -> dict[str, Any]:
    try:
        state = read_state(folder)
    except LabError:
        state = {}  # no or unreadable record: the prefix still finds everything
    prefix = lab_prefix(lab)
    names = sorted(
        set(netns.existing(prefix))
        | {d["netns"] for d in state.get("devices", {}).values() if d.get("netns", "").startswith(prefix)}
    )
    # recorded processes first (a flap loop runs in the initial namespace), then whatever is in the namespaces
    recs = [f["process"] for f in state.get("faults", []) if f.get("process")]
    recs += [r for daemons in state.get("daemons", {}).values() for r in daemons.values()]
    t = time.monotonic()
    count = stop_recorded(_loop_lab(folder)) if (folder / "loop.json").exists() else 0
    live = [r for r in recs if alive(r)]
    stop(live, sig=signal.SIGKILL, timeout=2.0)
    inside = netns.pids(names)
    count += len(live) + sum(len(p) for p in inside.values())
    stop_pids([p for ps in inside.values() for p in ps])
    killed = time.monotonic() - t
    try:
        netns.delete(names)
    except LabError as exc:
        log(f"lab {lab}: deleting namespaces: {exc}")
    left = netns.existing(prefix)
    if left:  # keep the record: the next down finds the rest
        raise LabError(
            f"lab {lab} only partly down: {len(left)} namespace(s) remain ({left[0]}, ...): run "
            f"`hwaac lab down {lab}` again"
        )
    for path in sorted(FRR_RUN_DIR.glob(f"{prefix}*")) if FRR_RUN_DIR.is_dir() else []:
        shutil.rmtree(path, ignore_errors=True)
    others = [other for other in labs_present(root) if other != lab]
    restored = {
        **neigh.restore_if_last(bool(others), state.get("neigh_sysctl")),
        **rcvbuf.restore(),
        **ksm.restore_if_last(any(_merging(root, other) for other in others)),
    }
    removed = folder.is_dir()
    if removed:
        shutil.rmtree(folder)
    for empty in (root, neigh.RECORD_DIR):  # the folders up made, once nothing is left in them
        with contextlib.suppress(OSError):
            empty.rmdir()
    log(
        f"lab {lab} down: {len(names)} namespaces, {count} processes removed ({killed:.1f} s to stop them)"
        + (f"; restored {', '.join(f'{k}={v}' for k, v in restored.items())}" if restored else "")
        + (f" ({len(others)} other lab(s) still up: neighbour limits kept)" if others else "")
    )
    return {
        "lab": lab,
        "namespaces": len(names),
        "processes": count,
        "sysctl_restored": restored,
        "state_removed": removed,
    }
