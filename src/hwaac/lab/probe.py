"""Active probes across a lab: every lab host's pinglist (:func:`hwaac.probe.pinglist.pinglist`) run from this one
process, each socket opened in its host's namespace (:func:`hwaac.probe.agent.run_probes` with ``netns_of``), the
results as one ``probe.json`` per host, as ``hwaac probe send`` writes it on a node.

Learned paths are kept in the lab folder (``probe-paths.json``) with the link faults and switch configs they were
learned under: a link down, a flap, a stopped switch, a node fault or a changed CONFIG_DB (a deploy, a drain)
changes the routes, and with them the paths, so the cache is dropped when that set changes (loss and delay faults
do not change routes).
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

from hwaac.lab.api import Lab
from hwaac.lab.errors import LabError
from hwaac.plan.model import Plan
from hwaac.probe.model import Flow, ProbeResults, write_atomic

CACHE_FILE = "probe-paths.json"
ROUTING_MODES = ("down", "flap", "node", "stopped")  # faults that change routes (hwaac.lab.faults)


def lab_flows(lab: Lab, plan: Plan, *, peers: int = 2, sports: int = 8) -> list[Flow]:
    """The pinglist of the lab's hosts whose peers are in the lab too (a lab may hold a few nodes per SU)."""
    from hwaac.probe.pinglist import pinglist

    hosts = set(lab.hosts)
    return [f for f in pinglist(plan, peers=peers, sports=sports, hosts=hosts) if f.dst_host in hosts]


def _routing_faults(lab: Lab) -> list[str]:
    """What the learned paths hold for: the faults that change routes, and each switch's running CONFIG_DB as
    changed last (a deploy, or a drain that shut BGP sessions, moves routes as much as a fault does)."""
    faults = sorted(f["id"] for f in lab.state.get("faults", []) if f.get("mode") in ROUTING_MODES)
    changed = []
    for name in lab.switches:
        with contextlib.suppress(OSError):
            changed.append(f"{name}@{(lab.layout.dev_dir(name) / 'config_db.json').stat().st_mtime_ns}")
    return faults + changed


def _load_cache(path: Path, faults: list[str]) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("faults") != faults or not isinstance(doc.get("paths"), dict):
        return {}
    return doc["paths"]


def probe_lab(lab: Lab, plan: Plan, *, peers: int = 2, sports: int = 8, **options: Any) -> dict[str, ProbeResults]:
    """Run every lab host's flows at once; host -> its results. ``options`` go to
    :func:`hwaac.probe.agent.run_probes` (``count``, ``interval``, ``learn_paths``, ``timeout``, ...; the lab sets
    ``netns_of`` and ``path_cache``).

    Raises:
        LabError: the lab has no host with a peer in the lab, or the sockets could not be opened.
    """
    from hwaac.probe.agent import run_probes

    lab.reload()
    flows = lab_flows(lab, plan, peers=peers, sports=sports)
    if not flows:
        raise LabError(f"lab {lab.name}: no GPU node with a probe peer in the lab (hosts: {len(lab.hosts)})")
    cache_file = lab.folder / CACHE_FILE
    faults = _routing_faults(lab)
    cache = _load_cache(cache_file, faults)
    started = time.time()
    try:
        results = run_probes(flows, netns_of=lab.netns, path_cache=cache, **options)
    except (ValueError, OSError) as exc:
        raise LabError(f"lab {lab.name}: probes failed: {exc}") from None
    ended = time.time()
    write_atomic(cache_file, json.dumps({"faults": faults, "paths": cache}) + "\n")
    by_host: dict[str, list] = {}
    for r in results:
        by_host.setdefault(r.flow.src_host, []).append(r)
    return {h: ProbeResults(h, started, ended, rs) for h, rs in sorted(by_host.items())}


__all__ = ["CACHE_FILE", "lab_flows", "probe_lab"]
