"""Which named faults lie on a rail probe's possible paths (shared by VerifyRailPaths and VerifyPathMtu).

The paths: the source's and the destination's host cables and leaves, and every session the planned fabric
could hash the probe or its reply onto (the multipath DAG between the two leaves, both ways).
"""

from __future__ import annotations

from dataclasses import dataclass

from hwaac.verify.checks.base import Context
from hwaac.verify.inputs import Probe


@dataclass(frozen=True, slots=True)
class PathFaults:
    broken: tuple[str, ...]  # faults that leave the probe no path at all
    on_path: tuple[str, ...]  # faults on some possible path (of the kinds asked for)


def path_faults(ctx: Context, probe: Probe, kinds: frozenset[str]) -> PathFaults:
    inputs = ctx.inputs
    src_cable, dst_cable = (inputs.cables[c] for c in probe.cables)
    src_leaf, dst_leaf = src_cable.b.device, dst_cable.b.device
    broken: set[str] = set()
    on_path: set[str] = set()
    for dev in (probe.host, probe.dst_host, src_leaf, dst_leaf):
        if ctx.down(dev):
            broken.add(dev)
    for c in probe.cables:
        if ctx.faults.cable_fault(c, kinds):
            (broken if ctx.faults.cable_fault(c, frozenset({"down", "missing", "miswired"})) else on_path).add(c)
    if src_leaf != dst_leaf:
        for a, b in ((src_leaf, dst_leaf), (dst_leaf, src_leaf)):
            on_path |= ctx.upstream_faults(a, b, kinds)
            if not ctx.live.reaches(a, b):
                broken |= on_path or {a}
    for prefix_cable in probe.cables:
        prefix = inputs.cables[prefix_cable].network
        if ctx.prefix_live(prefix) is False:
            broken |= {prefix_cable} if prefix_cable in ctx.faults.cables else {inputs.cables[prefix_cable].b.device}
    return PathFaults(tuple(sorted(broken)), tuple(sorted(on_path - broken)))
