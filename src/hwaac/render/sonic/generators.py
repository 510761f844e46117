"""One generator per config_db table (pyavd style): each turns a :class:`SwitchContext` into its table.

Field names, value formats and defaults follow sonic-buildimage ``src/sonic-yang-models/doc/Configuration.md``
and the YANG models next to it (named per class). config_db values are strings; every generator returns a
freshly built dict (see :mod:`hwaac.render.sonic.context` for what is cached), or an empty dict when the table
does not apply to the switch (the table is then left out).
"""

from __future__ import annotations

from typing import Any, ClassVar

from hwaac.plan.model import ip_str
from hwaac.render.sonic.context import (
    CABLE_LENGTH_PROFILE,
    DEVICE_TYPE,
    LOOPBACK,
    QOS_MAP,
    WRED_LOSSLESS,
    SwitchContext,
    port_bases,
)

Table = dict[str, Any]


class TableGenerator:
    """Base class: ``table`` is the config_db table name, :meth:`generate` its content."""

    table: ClassVar[str]

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        raise NotImplementedError


# --- device ---------------------------------------------------------------------------------------------------


class DeviceMetadata(TableGenerator):
    """DEVICE_METADATA|localhost (sonic-device_metadata.yang).

    - hostname, hwsku, platform (left out when the model has none): identity; hwsku selects port_config.ini.
    - bgp_asn, bgp_router_id: the switch's ASN and its loopback; bgpcfgd takes the local ASN of every
      BGP_NEIGHBOR from here.
    - type: leaf ``BackEndToRRouter``, spine ``BackEndLeafRouter``, super-spine ``SpineRouter`` (a back-end
      fabric in SONiC's vocabulary); it selects bgpcfgd's peer templates.
    - buffer_model ``dynamic``: lossless headroom is computed from speed, cable length (CABLE_LENGTH) and MTU.
    - docker_routing_config_mode ``unified`` and frr_mgmt_framework_config ``false``: FRR config comes from
      bgpcfgd's templates, the mode in which the BGP_NEIGHBOR shape written here is honoured.
    - default_pfcwd_status: ``enable`` when qos.pfc_watchdog.enabled (SONiC's default is disable).
    """

    table = "DEVICE_METADATA"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        sw, model = ctx.switch, ctx.model
        local: dict[str, str] = {"hostname": sw.name, "hwsku": model.hwsku}
        if model.platform:
            local["platform"] = model.platform
        local["bgp_asn"] = str(sw.asn)
        local["bgp_router_id"] = ip_str(sw.loopback)
        local["type"] = DEVICE_TYPE[sw.role]
        local["buffer_model"] = "dynamic"
        local["docker_routing_config_mode"] = "unified"
        local["frr_mgmt_framework_config"] = "false"
        local["default_pfcwd_status"] = "enable" if ctx.qos.pfcwd_enabled else "disable"
        return {"localhost": local}


class Port(TableGenerator):
    """PORT: every front-panel port of the model (sonic-port.yang), in port order.

    - alias, lanes (comma list, mandatory on non-chassis platforms), index (1-based cage): from the SKU's
      port_config.ini as the switch model describes it (:func:`hwaac.plan.ports.port_table`).
    - speed: Mb/s (1..1600000); mtu: qos.switch_mtu (68..9216); fec: the model's FEC (rs|fc|none|auto).
    - admin_status: ``up`` on ports with a link, ``down`` on unused ones (SONiC's default is down; written
      either way so that a loaded config never depends on defaults).
    - description: ``peer-device:peer-port`` on linked ports.
    """

    table = "PORT"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        peers = {lk.port: f"{lk.peer}:{lk.peer_port}" for lk in ctx.links}
        out: Table = {}
        for name, base in port_bases(ctx.model, ctx.intent.qos.switch_mtu):
            entry = dict(base)
            desc = peers.get(name)
            if desc is None:
                entry["admin_status"] = "down"
            else:
                entry["admin_status"] = "up"
                entry["description"] = desc
            out[name] = entry
        return out


# --- layer 3 ----------------------------------------------------------------------------------------------------


class LoopbackInterface(TableGenerator):
    """LOOPBACK_INTERFACE (sonic-loopback-interface.yang): ``Loopback0`` and ``Loopback0|<loopback>/32``."""

    table = "LOOPBACK_INTERFACE"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {LOOPBACK: {}, f"{LOOPBACK}|{ip_str(ctx.switch.loopback)}/32": {}}


class Interface(TableGenerator):
    """INTERFACE (sonic-interface.yang): per routed port ``Ethernet0`` (creates the router interface) and
    ``Ethernet0|<address>/<prefixlen>``.

    Leaf-spine and spine-super-spine links are always routed /31s; host downlinks are /31s in p2p31 mode and
    VLAN members (no per-port address) in rail_subnet mode.
    """

    table = "INTERFACE"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        out: Table = {}
        for lk in ctx.routed:
            out[lk.port] = {}
            out[f"{lk.port}|{ip_str(lk.ip)}/{lk.prefixlen}"] = {}
        return out


class Vlan(TableGenerator):
    """VLAN (sonic-vlan.yang), rail_subnet mode on leaves only: one VLAN per leaf, ``Vlan<1000 + rail>``."""

    table = "VLAN"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        if not ctx.bridged:
            return {}
        return {f"Vlan{ctx.vlan_id}": {"vlanid": str(ctx.vlan_id), "admin_status": "up",
                                       "mtu": str(ctx.intent.qos.switch_mtu)}}


class VlanMember(TableGenerator):
    """VLAN_MEMBER (sonic-vlan.yang), rail_subnet mode: ``Vlan1000|Ethernet0`` untagged per host downlink."""

    table = "VLAN_MEMBER"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {f"Vlan{ctx.vlan_id}|{lk.port}": {"tagging_mode": "untagged"} for lk in ctx.bridged}


class VlanInterface(TableGenerator):
    """VLAN_INTERFACE (sonic-vlan.yang), rail_subnet mode: ``Vlan1000`` and ``Vlan1000|<gateway>/<len>``;
    the gateway is the leaf end (``Link.b_ip``) of its host links, the prefix length the rail subnet's."""

    table = "VLAN_INTERFACE"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        if not ctx.bridged:
            return {}
        vlan = f"Vlan{ctx.vlan_id}"
        out: Table = {vlan: {}}
        for gw in dict.fromkeys((lk.ip, lk.prefixlen) for lk in ctx.bridged):
            out[f"{vlan}|{ip_str(gw[0])}/{gw[1]}"] = {}
        return out


class BgpNeighbor(TableGenerator):
    """BGP_NEIGHBOR keyed by neighbour address: the template shape bgpcfgd consumes (sonic-bgp-neighbor.yang,
    BGP_NEIGHBOR_TEMPLATE_LIST); the local ASN comes from DEVICE_METADATA.

    One entry per leaf-spine and spine-super-spine link end: leaves peer with spines, spines with leaves and
    super-spines, super-spines with spines; never with hosts. Fields: asn (the peer's), name (peer device),
    local_addr (this end of the /31), admin_status up, holdtime 10 and keepalive 3 (seconds; fast failure
    detection on point-to-point links), nhopself 0 (eBGP sets the next hop anyway).
    """

    table = "BGP_NEIGHBOR"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        by_name = ctx.plan.switch_by_name
        out: Table = {}
        for lk in ctx.links:
            if lk.kind == "host":
                continue
            out[ip_str(lk.peer_ip)] = {
                "asn": str(by_name[lk.peer].asn), "name": lk.peer, "local_addr": ip_str(lk.ip),
                "admin_status": "up", "holdtime": "10", "keepalive": "3", "nhopself": "0",
            }
        return out


class DeviceNeighbor(TableGenerator):
    """DEVICE_NEIGHBOR (sonic-device_neighbor.yang): per linked port, the peer ``name`` and ``port``. SONiC's
    QoS and buffer templates treat ports listed here as the active ones."""

    table = "DEVICE_NEIGHBOR"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {lk.port: {"name": lk.peer, "port": lk.peer_port} for lk in ctx.links}


# --- QoS maps (shared by all ports) -----------------------------------------------------------------------------


class DscpToTcMap(TableGenerator):
    """DSCP_TO_TC_MAP|ROCE (sonic-dscp-tc-map.yang): all 64 DSCPs listed; qos.roce_dscp -> lossless_priority,
    qos.cnp_dscp -> cnp_priority, everything else -> TC 0. (SONiC's AZURE default sends DSCP 26 to lossy TC 1,
    so nothing is left to the platform template.)"""

    table = "DSCP_TO_TC_MAP"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {QOS_MAP: dict(ctx.qos.dscp_to_tc)}


class TcToQueueMap(TableGenerator):
    """TC_TO_QUEUE_MAP|ROCE (sonic-tc-queue-map.yang): identity, TC n -> queue n for 0-7."""

    table = "TC_TO_QUEUE_MAP"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {QOS_MAP: dict(ctx.qos.tc_to_queue)}


class TcToPriorityGroupMap(TableGenerator):
    """TC_TO_PRIORITY_GROUP_MAP|ROCE (sonic-tc-priority-group-map.yang): each lossless TC (qos.pfc_priorities)
    -> the ingress priority group of the same number, every other TC -> PG 0."""

    table = "TC_TO_PRIORITY_GROUP_MAP"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {QOS_MAP: dict(ctx.qos.tc_to_pg)}


class MapPfcPriorityToQueue(TableGenerator):
    """MAP_PFC_PRIORITY_TO_QUEUE|ROCE (sonic-pfc-priority-queue-map.yang): identity, a PFC frame for priority
    n pauses queue n."""

    table = "MAP_PFC_PRIORITY_TO_QUEUE"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {QOS_MAP: dict(ctx.qos.pfc_to_queue)}


class PfcPriorityToPriorityGroupMap(TableGenerator):
    """PFC_PRIORITY_TO_PRIORITY_GROUP_MAP|ROCE (sonic-pfc-priority-priority-group-map.yang; used by Mellanox
    and Barefoot): each PFC priority -> the PG of the same number, whose fill level triggers pause frames."""

    table = "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {QOS_MAP: dict(ctx.qos.pfc_to_pg)}


class Scheduler(TableGenerator):
    """SCHEDULER (sonic-scheduler.yang): ``scheduler.lossy`` DWRR qos.lossy_weight (queue 0),
    ``scheduler.lossless`` DWRR qos.lossless_weight (the PFC queues), ``scheduler.cnp`` STRICT (CNP queue)."""

    table = "SCHEDULER"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {name: dict(fields) for name, fields in ctx.qos.schedulers}


class WredProfile(TableGenerator):
    """WRED_PROFILE|ROCE_LOSSLESS (sonic-wred-profile.yang): ECN marking on the lossless queues.

    ecn ``ecn_all`` with WRED enabled for green, yellow and red; ``*_min_threshold`` / ``*_max_threshold`` in
    bytes from qos.ecn (Cumulus/Onyx RoCE defaults 150 KB / 1500 KB); ``*_drop_probability`` (percent) from
    qos.ecn.mark_probability_percent: with ECN on, it is the marking probability at the max threshold.
    """

    table = "WRED_PROFILE"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {WRED_LOSSLESS: dict(ctx.qos.wred)}


# --- QoS per active port ----------------------------------------------------------------------------------------


class Queue(TableGenerator):
    """QUEUE (sonic-queue.yang) for every active port: ``Ethernet0|0`` scheduler.lossy, ``Ethernet0|3`` (each
    PFC queue) scheduler.lossless + wred_profile ROCE_LOSSLESS, ``Ethernet0|6`` (CNP) scheduler.cnp."""

    table = "QUEUE"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        queues = ctx.qos.queues
        return {port + suffix: dict(fields) for port in ctx.active for suffix, fields in queues}


class PortQosMap(TableGenerator):
    """PORT_QOS_MAP (sonic-port-qos-map.yang): ``global`` with dscp_to_tc_map, then one entry per active port
    (per-port keys, the form the YANG model accepts; SONiC also takes comma-joined port lists) binding the
    five ROCE maps, pfc_enable = qos.pfc_priorities comma-joined, and pfcwd_sw_enable the same when the PFC
    watchdog is enabled."""

    table = "PORT_QOS_MAP"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        out: Table = {"global": {"dscp_to_tc_map": QOS_MAP}}
        fields = ctx.qos.port_qos
        for port in ctx.active:
            out[port] = dict(fields)
        return out


class PfcWd(TableGenerator):
    """PFC_WD (sonic-pfcwd.yang), when qos.pfc_watchdog.enabled: ``GLOBAL`` POLL_INTERVAL (100-1000 ms) and per
    active port action (drop|forward|alert), detection_time (100-5000 ms), restoration_time (100-60000 ms),
    both at least the poll interval."""

    table = "PFC_WD"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        q = ctx.qos
        if not q.pfcwd_enabled:
            return {}
        out: Table = {"GLOBAL": dict(q.pfcwd_global)}
        for port in ctx.active:
            out[port] = dict(q.pfcwd_port)
        return out


class CableLength(TableGenerator):
    """CABLE_LENGTH|AZURE (sonic-cable-length.yang): ``<qos.cable_length_m>m`` per active port; with
    buffer_model dynamic, buffermgrd sizes the lossless PG headroom from it, the speed and the MTU."""

    table = "CABLE_LENGTH"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        if not ctx.active:
            return {}
        length = ctx.qos.cable_length
        return {CABLE_LENGTH_PROFILE: dict.fromkeys(ctx.active, length)}


#: The generators in the order their tables appear in config_db.json.
GENERATORS: tuple[type[TableGenerator], ...] = (
    DeviceMetadata, Port, LoopbackInterface, Interface, Vlan, VlanMember, VlanInterface, BgpNeighbor,
    DeviceNeighbor, DscpToTcMap, TcToQueueMap, TcToPriorityGroupMap, MapPfcPriorityToQueue,
    PfcPriorityToPriorityGroupMap, Scheduler, WredProfile, Queue, PortQosMap, PfcWd, CableLength,
)
