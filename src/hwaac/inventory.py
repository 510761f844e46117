"""The fabric as an Ansible inventory: hosts, groups and host variables, from a plan file or from NetBox.

The inventory plugin ``aiinfra.hwaac.fabric`` (plugins/inventory/fabric.py) is a thin adapter over
:func:`from_plan_file` and :func:`from_netbox`; both return a :class:`FabricInventory`: groups by fabric, role,
plane, rail, SU and pod, and ``hwaac_*`` host variables. Every group and variable: docs/inventory.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SWITCH_ROLES = ("leaf", "spine", "super_spine")


@dataclass
class FabricInventory:
    """``groups``: group -> sorted host names; ``children``: parent group -> child groups; ``hostvars``: host ->
    variables; ``notes``: values taken from NetBox that differ from the intent (one line each)."""

    fabric: str
    groups: dict[str, list[str]] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    hostvars: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def hosts_of(self, group: str) -> list[str]:
        """The hosts of ``group`` and its descendants in the order Ansible lists them (a play's ``serial`` batches
        follow it): breadth first over the children, each host once, as ansible-core's
        ``Group.get_descendants(preserve_ordering=True)`` (lib/ansible/inventory/group.py)."""
        order: list[str] = []
        seen: set[str] = set()
        queue = [group]
        while queue:
            g = queue.pop(0)
            for h in self.groups.get(g, []):
                if h not in seen:
                    seen.add(h)
                    order.append(h)
            queue.extend(self.children.get(g, []))
        return order


def group_name(text: str) -> str:
    """``text`` as an Ansible group name: lowercase, runs of other characters as one underscore."""
    return re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_") or "_"


def from_plan_doc(
    doc: dict[str, Any], *, source: str = "plan", render_dir: str | Path | None = None
) -> FabricInventory:
    """The inventory of a plan document (the ``plan.json`` shape of :mod:`hwaac.plan.serialize`).

    Raises:
        ValueError: a switch or node entry lacks a field the groups need (names the host and the field).
    """
    fabric = str(doc["fabric"])
    inv = FabricInventory(fabric)
    groups: dict[str, set[str]] = {}

    def add(group: str, host: str) -> None:
        groups.setdefault(group, set()).add(host)

    node_planes: dict[str, set[int]] = {}
    for link in (doc.get("links") or {}).values():
        if link.get("kind") == "host":
            for end in (link["a"], link["b"]):
                if end[0] in (doc.get("nodes") or {}):
                    node_planes.setdefault(end[0], set()).add(int(link["plane"]))

    files = Path(render_dir) if render_dir is not None else None
    for name, sw in (doc.get("switches") or {}).items():
        try:
            role, plane = sw["role"], int(sw["plane"])
            hv: dict[str, Any] = {
                "hwaac_fabric": fabric,
                "hwaac_role": role,
                "hwaac_source": source,
                "hwaac_plane": plane,
                "hwaac_model": sw["model"],
                "hwaac_asn": int(sw["asn"]),
                "hwaac_loopback": str(sw["loopback"]).split("/")[0],
            }
        except KeyError as exc:
            raise ValueError(f"plan: switch {name} has no field {exc.args[0]!r}") from None
        for key in ("su", "rail", "pod"):
            if sw.get(key) is not None:
                hv[f"hwaac_{key}"] = int(sw[key])
        if files is not None:
            hv["hwaac_files"] = str(files / "switches" / name)
        inv.hostvars[name] = hv
        add(group_name(role), name)
        add(f"plane{plane}", name)
        if role == "leaf" and sw.get("rail") is not None:
            add(f"rail{int(sw['rail'])}", name)
        if role == "leaf" and sw.get("su") is not None:
            add(f"su{int(sw['su']):02d}", name)
        if sw.get("pod") is not None and role in ("leaf", "spine"):
            add(f"pod{int(sw['pod'])}", name)
    for name, node in (doc.get("nodes") or {}).items():
        try:
            kind, su = node["kind"], int(node["su"])
            hv = {
                "hwaac_fabric": fabric,
                "hwaac_role": kind,
                "hwaac_source": source,
                "hwaac_su": su,
                "hwaac_slot": int(node["slot"]),
                "hwaac_rails": [int(r) for r in node["rails"]],
                "hwaac_planes": sorted(node_planes.get(name, set())),
            }
        except KeyError as exc:
            raise ValueError(f"plan: node {name} has no field {exc.args[0]!r}") from None
        if files is not None:
            hv["hwaac_files"] = str(files / "hosts" / name)
        inv.hostvars[name] = hv
        add("gpu_nodes" if kind == "gpu" else "appliances", name)
        add(f"su{su:02d}", name)
        for p in hv["hwaac_planes"]:
            add(f"plane{p}", name)
    top = f"fabric_{group_name(fabric)}"
    roles = [r for r in SWITCH_ROLES if r in groups]
    if roles:
        inv.children["switches"] = roles
    inv.children[top] = [g for g in ("switches", "gpu_nodes", "appliances") if g in groups or g in inv.children]
    inv.groups = {g: sorted(hosts) for g, hosts in sorted(groups.items())}
    return inv


def from_plan_file(path: str | Path, *, render_dir: str | Path | None = None) -> FabricInventory:
    """The inventory of a ``plan.json`` written by ``hwaac plan`` (a file, or the output folder holding it).

    Raises:
        ValueError: not an hwaac plan document; OSError: the file cannot be read.
    """
    from hwaac.plan.serialize import read_plan

    return from_plan_doc(read_plan(path), source="plan", render_dir=render_dir)


def from_netbox(intent: str | Path, url: str, token: str, *, render_dir: str | Path | None = None) -> FabricInventory:
    """The inventory of the fabric as NetBox holds it: the intent's plan with the ASNs, loopbacks and link
    addresses NetBox records (:func:`hwaac.netbox.source.plan_from_netbox`; pools that name a NetBox prefix role
    are read from the same NetBox), plus each device's NetBox status and primary IPv4 address (``ansible_host``).

    The reads are the sync engine's: a bounded number of requests per object type (pages of 1,000), never one per
    device.

    Raises:
        IntentError: the intent is invalid (file:line: field). NetBoxError / SyncError: NetBox unreachable or the
        token refused (one line, no token). NetBoxRecordError: a planned device or cable is missing from NetBox.
    """
    from hwaac.netbox.pools import prefix_lookup
    from hwaac.netbox.source import plan_from_netbox
    from hwaac.netbox.sync.client import Client
    from hwaac.netbox.sync.desired import fabric_tag
    from hwaac.plan import build_plan
    from hwaac.plan.serialize import plan_to_dict
    from hwaac.validate import load_intent

    plan = build_plan(load_intent(intent, pool_lookup=prefix_lookup(url, token)))
    plan, notes = plan_from_netbox(plan, url, token)
    inv = from_plan_doc(plan_to_dict(plan), source="netbox", render_dir=render_dir)
    inv.notes = notes
    for r in Client(url, token).read("devices", "name,status,primary_ip4", tag=fabric_tag(plan)):
        name = r.get("name")
        hv = inv.hostvars.get(name) if isinstance(name, str) else None
        if hv is None:
            continue
        status = r.get("status")
        hv["hwaac_status"] = status.get("value") if isinstance(status, dict) else status
        ip = r.get("primary_ip4")
        if isinstance(ip, dict) and ip.get("address"):
            hv["ansible_host"] = str(ip["address"]).split("/")[0]
    return inv
