"""Judge the node's LNet NIDs (``lctl list_nids`` facts) against the MGS NIDs of the expected file systems.

A client reaches an MGS only over an LNet network it has a NID on (LNet routers are not modelled, as in the intent
rules), so no local NID on any network of a file system's MGS nodes fails (the mount and its reconnection cannot
work), and a failover MGS node on no local network warns (failover to it will not work). ``lustre_mount`` refuses to
mount on the same rule (``lnet_problems`` in ``plugins/module_utils/lustre_mount.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from hwaac.health.parsers.lctl_list_nids import ListNidsResult
from hwaac.health.parsers.lustre_formats import normalise_nid
from hwaac.health.result import Action, Finding, Status, incomplete_means_retest


def _net(nid: str) -> str:
    return normalise_nid(nid).rpartition("@")[2]


@incomplete_means_retest
def nid_findings(result: ListNidsResult, mgs: Sequence[tuple[str, Sequence[Sequence[str]]]]) -> list[Finding]:
    """Findings for ``lctl list_nids`` given ``mgs``: (file system, its failover MGS nodes, each a list of NIDs)."""
    out = result.unknown_findings()
    if result.lnet_down:
        return [
            *out,
            Finding(
                "LUSTRE_LNET_DOWN",
                Status.FAIL,
                "LNet is not running on this node (lctl list_nids: Network is down): no Lustre traffic is possible",
                action=Action.NONE,
            ),
        ]
    if result.unknown:
        return out
    local = set(result.nets)
    shown = ", ".join(result.nids) or "none"
    for fsname, nodes in mgs:
        reachable = [any(_net(nid) in local for nid in node) for node in nodes]
        if nodes and not any(reachable):
            wanted = ", ".join(sorted({_net(nid) for node in nodes for nid in node}))
            out.append(
                Finding(
                    "LUSTRE_LNET_NO_MGS_NET",
                    Status.FAIL,
                    f"{fsname}: this node has no NID on the MGS "
                    f"network ({wanted}); local NIDs: {shown}. Configure LNet (aiinfra.hwaac.lnet)",
                    fsname,
                    shown,
                    Action.NONE,
                )
            )
            continue
        for node, ok in zip(nodes, reachable, strict=True):
            if not ok:
                out.append(
                    Finding(
                        "LUSTRE_LNET_MGS_NODE_OFF_NET",
                        Status.WARN,
                        f"{fsname}: failover MGS node "
                        f"{','.join(node)} is on no local LNet network ({', '.join(sorted(local))}); "
                        "failover to it will not work",
                        fsname,
                        shown,
                        Action.NONE,
                    )
                )
    return out
