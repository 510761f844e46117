"""What a change reaches: the blast radius, the rollout batches that will run, risk flags and the gates.

Batches are the ones ansible-playbook cuts for the play's ``serial`` (:mod:`hwaac.deploy.serial`, ansible-core's
arithmetic), hosts in the order of the inventory plugin ``aiinfra.hwaac.fabric`` (switches by role, each role's
hosts sorted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hwaac.deploy.serial import batches as serial_batches
from hwaac.deploy.serial import parse_batch_size
from hwaac.inventory import from_plan_doc
from hwaac.plan.diff import PlanDiff
from hwaac.review.files import DeviceChange
from hwaac.verify.checks import CATALOG
from hwaac.verify.inputs import inputs_from_plan

SPINE_ROLES = ("spine", "super_spine")
# SONiC CONFIG_DB tables of the RoCE QoS (DSCP -> TC -> queue/PG maps, PFC, ECN/WRED, buffers, scheduler, PFC watchdog)
QOS_TABLES = frozenset(
    {
        "BUFFER_PG",
        "BUFFER_POOL",
        "BUFFER_PROFILE",
        "BUFFER_QUEUE",
        "CABLE_LENGTH",
        "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
        "DSCP_TO_TC_MAP",
        "LOSSLESS_TRAFFIC_PATTERN",
        "MAP_PFC_PRIORITY_TO_QUEUE",
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
        "PFC_WD",
        "PORT_QOS_MAP",
        "QUEUE",
        "SCHEDULER",
        "TC_TO_PRIORITY_GROUP_MAP",
        "TC_TO_QUEUE_MAP",
        "WRED_PROFILE",
    }
)
# host files of the RoCE QoS: NIC trust/PFC/ECN and NCCL's traffic class
QOS_HOST_FILES = frozenset({"nic-roce.json", "nccl.env"})
LUSTRE_FILE = "lustre-client.json"
# playbook, its group, its serial variable, and which of a device's changed files (None: its config_db) it applies
PLAYBOOKS = (
    ("fabric_deploy", "switches", "fabric_deploy_serial", None),
    ("hosts_network", "gpu_nodes", "hosts_network_serial", lambda f: f != LUSTRE_FILE),
    ("lustre_clients", "gpu_nodes", "lustre_clients_serial", lambda f: f == LUSTRE_FILE),
)


@dataclass(frozen=True)
class Risk:
    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


def blast_radius(
    devices: Mapping[str, DeviceChange], plan_diff: PlanDiff, old: Mapping[str, Any], new: Mapping[str, Any]
) -> dict[str, Any]:
    """Switches per role, GPU nodes, appliances, cables and SUs that the change touches."""
    switches: dict[str, list[str]] = {}
    nodes: dict[str, list[str]] = {}
    sus: set[int] = set()
    for name, dev in devices.items():
        entry = _entry(name, old, new)
        if dev.kind == "switch":
            switches.setdefault(entry.get("role", "?"), []).append(name)
        else:
            nodes.setdefault("gpu" if entry.get("kind") == "gpu" else "appliance", []).append(name)
        if entry.get("su") is not None:
            sus.add(int(entry["su"]))
    pushed = {n for names in switches.values() for n in names}
    links = {**old.get("links", {}), **new.get("links", {})}
    on_pushed = sorted(c for c, link in links.items() if link["a"][0] in pushed or link["b"][0] in pushed)
    cables = {
        verb: len(getattr(plan_diff, attr).get("links", {}))
        for verb, attr in (("added", "added"), ("changed", "changed"), ("removed", "removed"))
    }
    return {
        "switches": {role: sorted(names) for role, names in sorted(switches.items())},
        "gpu_nodes": sorted(nodes.get("gpu", [])),
        "appliances": sorted(nodes.get("appliance", [])),
        "cables": cables,
        "links_on_pushed_switches": len(on_pushed),
        "sus": sorted(sus),
        "su_count": len({int(n["su"]) for n in new.get("nodes", {}).values() if n.get("su") is not None}),
    }


def _entry(name: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> Mapping[str, Any]:
    for doc in (new, old):
        for section in ("switches", "nodes"):
            if name in doc.get(section, {}):
                return doc[section][name]
    return {}


def rollout(new: Mapping[str, Any], devices: Mapping[str, DeviceChange], serial: str) -> list[dict[str, Any]]:
    """Per playbook that has work (fabric_deploy for switches' config_db, hosts_network for the nodes' network
    and NIC files, lustre_clients for their Lustre client file): its batches over the group's hosts in inventory
    order, each with the hosts it changes. Batches that change nothing still run (they find nothing to do) and
    are counted, not listed.

    Raises:
        hwaac.deploy.serial.BatchSizeError: ``serial`` is not a batch size the playbooks take.
    """
    serial = parse_batch_size(serial, "--batch-size")
    inv = from_plan_doc(dict(new))
    out = []
    for playbook, group, var, applies in PLAYBOOKS:
        hosts = inv.hosts_of(group)
        work = {
            h
            for h in hosts
            if h in devices
            and devices[h].status != "removed"
            and (applies is None or any(applies(Path(f).name) for f in devices[h].files))
        }
        if not work:
            continue
        batches = serial_batches(hosts, serial)
        with_work = [
            {"batch": i + 1, "hosts": len(b), "changed": [h for h in b if h in work]}
            for i, b in enumerate(batches)
            if any(h in work for h in b)
        ]
        out.append(
            {
                "playbook": playbook,
                "group": group,
                "serial": serial,
                "extra_var": var,
                "hosts": len(hosts),
                "batch_size": len(batches[0]),
                "batches": len(batches),
                "with_changes": with_work,
            }
        )
    return out


def risks(
    intent_changes: Mapping[str, Any],
    plan_diff: PlanDiff,
    devices: Mapping[str, DeviceChange],
    radius: Mapping[str, Any],
    many_sus: int,
) -> list[Risk]:
    """Risk flags, most severe first: renumbering, removal, spine or super-spine change, QoS change, many SUs."""
    out = []
    if plan_diff.renumbered:
        out.append(
            Risk(
                "renumbering",
                f"{len(plan_diff.renumbered)} existing allocation(s) change (addresses, ASNs "
                "or cables in service): re-addresses or re-cables devices that carry jobs",
            )
        )
    if plan_diff.removals:
        out.append(Risk("removal", f"{len(plan_diff.removals)} device(s) or cable(s) in service removed"))
    spines = [n for role in SPINE_ROLES for n in radius["switches"].get(role, [])]
    if spines:
        out.append(
            Risk(
                "spine-change",
                f"{len(spines)} spine or super-spine switch(es) change: each carries "
                "traffic of every SU below it ({})".format(_names(spines)),
            )
        )
    qos_paths = [p for p in intent_changes if p == "qos" or p.startswith("qos.")]
    qos_devices = sorted(n for n, d in devices.items() if d.status == "changed" and _qos_changed(d))
    if qos_paths or qos_devices:
        what = f"intent {', '.join(qos_paths)} changes" if qos_paths else "the RoCE QoS changes"
        out.append(
            Risk(
                "qos-change",
                f"{what}; the QoS of {len(qos_devices)} device(s) in service changes (PFC, "
                "ECN, DSCP maps, buffers, MTU): a mismatch between the ends of a link drops "
                "lossless traffic",
            )
        )
    if len(radius["sus"]) > many_sus:
        out.append(
            Risk(
                "many-sus",
                f"{len(radius['sus'])} SUs change at once (SU {', '.join(map(str, radius['sus']))};"
                f" more than {many_sus}): consider one SU per change",
            )
        )
    return out


def _qos_changed(d: DeviceChange) -> bool:
    """A QoS entry of a device in service changes, or a shared one (a map, profile, scheduler) goes, or a QoS host
    file changes. Per-port entries (``Ethernet0``, ``Ethernet0|3``) come and go with the port's cable: that is a
    port added or removed, not a QoS change. CABLE_LENGTH holds one field per port, so it is left out."""
    for table, t in d.tables.items():
        if table not in QOS_TABLES or table == "CABLE_LENGTH":
            continue
        if t["changed"] or any(not k.startswith("Ethernet") for k in t["removed"]):
            return True
    return any(Path(f).name in QOS_HOST_FILES and s == "changed" for f, s in d.files.items())


def _names(names: list[str], limit: int = 6) -> str:
    return ", ".join(names[:limit]) + (f", ... {len(names) - limit} more" if len(names) > limit else "")


def gates(new: Mapping[str, Any], devices: Mapping[str, DeviceChange], render_dir: Path | None) -> list[dict[str, Any]]:
    """What checks the rollout, and whether it gates a batch (``gate``), as the playbooks run by default:

    - ``bgp_sessions``, gate ``default``: the BGP gate of role switch_config after each pushed switch's push
      (``switch_config_bgp_gate: changed``); a failure rolls the switch back and, with
      ``fabric_deploy_max_fail_percentage`` 0, stops the rollout after its batch;
    - each ``hwaac.verify`` check that reads the pushed switches, gate ``switch_config_verify_gate``: the role's
      verify gate runs it on each of them after the BGP gate only when that variable is true (default false);
      ``gate_devices`` counts the switches it reads;
    - every ``hwaac.verify`` check over the devices the change touches (``devices`` counts those it reads): run
      after the rollout (``playbooks/verify.yml``, ``hwaac verify``), not a gate unless the line above says so.
      hosts_network and lustre_clients have no health gate: only a failed task stops them.
    """
    touched = [n for n, d in devices.items() if d.status != "removed"]
    if not touched:
        return []
    # config_dbs: the BGP sessions as rendered; netplan MTUs of the touched nodes only
    inputs = inputs_from_plan(dict(new), render_dir, netplan_hosts=[n for n in touched if n in new.get("nodes", {})])
    out = []
    pushed = [n for n in touched if n in inputs.switches]
    if pushed:
        sessions = sum(1 for s in inputs.sessions if s.a.device in pushed or s.b.device in pushed)
        out.append(
            {
                "check": "bgp_sessions",
                "stage": None,
                "gate": "default",
                "devices": len(pushed),
                "gate_devices": len(pushed),
                "description": f"after each switch's push, its rendered BGP neighbours Established "
                f"({sessions} session(s)); a failure rolls the switch back",
            }
        )
    for check in CATALOG:
        reads = sum(1 for n in touched if check().commands(inputs, n))
        gated = sum(1 for n in pushed if check().commands(inputs, n))
        if reads:
            out.append(
                {
                    "check": check.name,
                    "stage": check.stage,
                    "gate": "switch_config_verify_gate" if gated else None,
                    "devices": reads,
                    "gate_devices": gated,
                    "description": check.description,
                }
            )
    return out
