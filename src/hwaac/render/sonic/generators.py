"""One generator per config_db table (pyavd style): each turns a :class:`SwitchContext` into its table.

Field names, value formats and defaults follow sonic-buildimage ``src/sonic-yang-models/doc/Configuration.md``
and the YANG models next to it (named per class); a generator returns a fresh dict, or an empty one when its
table does not apply. BGP is written in frrcfgd's schema, not bgpcfgd's, so that a leaf announces its host
links: docs/render-sonic.md, "BGP: frrcfgd tables, not bgpcfgd's". QoS and buffer tables:
:mod:`hwaac.render.sonic.generators_qos`.
"""

from __future__ import annotations

from hwaac.plan.model import ip_str
from hwaac.render.sonic.context import (
    AFI_SAFI,
    DEVICE_TYPE,
    LOOPBACK,
    ROUTE_MAP_PERMIT,
    VRF,
    SwitchContext,
    Table,
    TableGenerator,
    port_bases,
)
from hwaac.render.sonic.generators_qos import (
    BufferPg,
    CableLength,
    DefaultLosslessBufferParameter,
    DscpToTcMap,
    LosslessTrafficPattern,
    MapPfcPriorityToQueue,
    PfcPriorityToPriorityGroupMap,
    PfcWd,
    PortQosMap,
    Queue,
    Scheduler,
    TcToPriorityGroupMap,
    TcToQueueMap,
    WredProfile,
)

# BGP neighbour timers (seconds): fast failure detection on point-to-point fabric links.
BGP_KEEPALIVE = "3"
BGP_HOLDTIME = "10"
BGP_MIN_EBGP_PATHS = 64  # SONiC's own default (constants.yml maximum_paths); raised to the session count


# --- device ---------------------------------------------------------------------------------------------------


class DeviceMetadata(TableGenerator):
    """DEVICE_METADATA|localhost (sonic-device_metadata.yang).

    - hostname, hwsku, platform (left out when the model has none): identity; hwsku selects port_config.ini.
    - bgp_asn, bgp_router_id: the switch's ASN and its loopback (BGP_GLOBALS repeats them for frrcfgd, which
      falls back to bgp_asn for the default VRF). bgp_router_id only from 202405: older releases' YANG has no
      such field (sonic-device_metadata.yang gained it in 202405), and frrcfgd reads BGP_GLOBALS router_id.
    - type: leaf ``BackEndToRRouter``, spine ``BackEndLeafRouter``, super-spine ``SpineRouter`` (a back-end
      fabric in SONiC's vocabulary); the buffer templates pick their defaults file (t0/t1/t2) from it.
    - buffer_model ``dynamic``: lossless headroom is computed from speed, cable length (CABLE_LENGTH) and MTU
      for the BUFFER_PG entries with profile NULL.
    - docker_routing_config_mode ``unified`` and frr_mgmt_framework_config ``true``: FRR is configured by
      frrcfgd from BGP_GLOBALS, BGP_NEIGHBOR ``vrf|address`` and the routing policy tables (module docstring:
      the bgpcfgd templates would not advertise the host links).
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
        if ctx.release.bgp_router_id_field:
            local["bgp_router_id"] = ip_str(sw.loopback)
        local["type"] = DEVICE_TYPE[sw.role]
        local["buffer_model"] = "dynamic"
        local["docker_routing_config_mode"] = "unified"
        local["frr_mgmt_framework_config"] = "true"
        local["default_pfcwd_status"] = "enable" if ctx.qos.pfcwd_enabled else "disable"
        return {"localhost": local}


class Port(TableGenerator):
    """PORT: every front-panel port of the model (sonic-port.yang), in port order.

    - alias, lanes (comma list, mandatory on non-chassis platforms), index (1-based cage): from the SKU's
      port_config.ini as the switch model describes it (:func:`hwaac.plan.ports.port_table`).
    - Every port of :func:`hwaac.plan.ports.port_table`, including the SKU's extra ports (the SN5600's 25G
      Ethernet512): ``config reload`` deletes a port that PORT leaves out.
    - speed: Mb/s (1..1600000); mtu: qos.switch_mtu (68..9216); fec: the model's FEC (rs|fc|none|auto), on the
      front-panel ports only (an extra port's FEC is left to the platform).
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
    """VLAN (sonic-vlan.yang), rail_subnet mode on leaves only: one VLAN per leaf, ``Vlan<1000 + rail>``, also
    on a leaf with no host cabled yet (a partly populated SU), so that its gateway is up when hosts arrive."""

    table = "VLAN"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        if ctx.vlan_id is None:
            return {}
        return {
            f"Vlan{ctx.vlan_id}": {
                "vlanid": str(ctx.vlan_id),
                "admin_status": "up",
                "mtu": str(ctx.intent.qos.switch_mtu),
            }
        }


class VlanMember(TableGenerator):
    """VLAN_MEMBER (sonic-vlan.yang), rail_subnet mode: ``Vlan1000|Ethernet0`` untagged per cabled host
    downlink (none on a leaf without hosts)."""

    table = "VLAN_MEMBER"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {f"Vlan{ctx.vlan_id}|{lk.port}": {"tagging_mode": "untagged"} for lk in ctx.bridged}


class VlanInterface(TableGenerator):
    """VLAN_INTERFACE (sonic-vlan.yang), rail_subnet mode: ``Vlan1000`` and ``Vlan1000|<gateway>/<len>`` from
    :meth:`Plan.rail_subnet` (the same gateway docs/ip-plan.csv lists, and the leaf end of its host links),
    whether or not a host is cabled."""

    table = "VLAN_INTERFACE"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        if ctx.rail_subnet is None:
            return {}
        vlan = f"Vlan{ctx.vlan_id}"
        _net, plen, gateway = ctx.rail_subnet
        return {vlan: {}, f"{vlan}|{ip_str(gateway)}/{plen}": {}}


# --- BGP and routing policy (frrcfgd; see module docstring) -----------------------------------------------------


class RouteMapSet(TableGenerator):
    """ROUTE_MAP_SET (sonic-route-map.yang): the route map names, which the YANG leafrefs of route_map_in/out
    point to (frrcfgd itself does not read this table)."""

    table = "ROUTE_MAP_SET"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {ROUTE_MAP_PERMIT: {}}


class RouteMap(TableGenerator):
    """ROUTE_MAP (sonic-route-map.yang) ``HWAAC_PERMIT_ALL|10`` permit without a match: the neighbours' in/out
    policy (frrcfgd: ``route-map HWAAC_PERMIT_ALL permit 10``)."""

    table = "ROUTE_MAP"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {f"{ROUTE_MAP_PERMIT}|10": {"route_operation": "permit"}}


class BgpGlobals(TableGenerator):
    """BGP_GLOBALS|default (sonic-bgp-global.yang): local_asn and router_id (the switch's ASN and loopback),
    load_balance_mp_relax ``true`` (multipath over equal-length paths whose AS_PATHs differ, e.g. through
    spines or super-spines of different ASNs), log_nbr_state_changes ``true``."""

    table = "BGP_GLOBALS"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        sw = ctx.switch
        return {
            VRF: {
                "local_asn": str(sw.asn),
                "router_id": ip_str(sw.loopback),
                "load_balance_mp_relax": "true",
                "log_nbr_state_changes": "true",
            }
        }


class BgpGlobalsAf(TableGenerator):
    """BGP_GLOBALS_AF|default|ipv4_unicast (sonic-bgp-global.yang): max_ebgp_paths = the switch's BGP session
    count, at least 64 (``maximum-paths N``): ECMP over every uplink, so a leaf with 96 uplinks uses all 96
    rather than FRR's 64. (The hardware ECMP group size of the ASIC is the other bound; it is not modelled.)"""

    table = "BGP_GLOBALS_AF"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {f"{VRF}|{AFI_SAFI}": {"max_ebgp_paths": str(max(BGP_MIN_EBGP_PATHS, len(ctx.neighbors)))}}


class BgpGlobalsAfNetwork(TableGenerator):
    """BGP_GLOBALS_AF_NETWORK (sonic-bgp-global.yang) ``default|ipv4_unicast|<prefix>`` -> ``network <prefix>``
    under ``address-family ipv4 unicast``, one per announced prefix (:attr:`SwitchContext.announced`: Loopback0,
    a leaf's host links); never the fabric /31s (module docstring)."""

    table = "BGP_GLOBALS_AF_NETWORK"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {f"{VRF}|{AFI_SAFI}|{prefix}": {} for prefix in ctx.announced}


class BgpNeighbor(TableGenerator):
    """BGP_NEIGHBOR ``default|<neighbour address>`` (sonic-bgp-neighbor.yang BGP_NEIGHBOR_LIST, frrcfgd).

    One entry per leaf-spine and spine-super-spine link end: leaves peer with spines, spines with leaves and
    super-spines, super-spines with spines; never with hosts. Fields: asn (the peer's: ``remote-as``), name
    (peer device: ``description``), local_addr (this end of the /31: ``update-source``), admin_status
    :attr:`SwitchContext.bgp_up` (``up``, or ``true`` on the frrcfgd path: ``no neighbor X shutdown``), keepalive 3
    and holdtime 10 seconds (``timers 3 10``: fast failure detection
    on point-to-point links).
    """

    table = "BGP_NEIGHBOR"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        by_name = ctx.plan.switch_by_name
        return {
            key: {
                "asn": str(by_name[lk.peer].asn),
                "name": lk.peer,
                "local_addr": ip_str(lk.ip),
                "admin_status": ctx.bgp_up,
                "keepalive": BGP_KEEPALIVE,
                "holdtime": BGP_HOLDTIME,
            }
            for key, lk in ctx.neighbors
        }


class BgpNeighborAf(TableGenerator):
    """BGP_NEIGHBOR_AF ``default|<neighbour address>|ipv4_unicast`` (sonic-bgp-neighbor.yang), one per
    BGP_NEIGHBOR: admin_status :attr:`SwitchContext.bgp_up` (``neighbor X activate``; frrcfgd configures ``no bgp
    default ipv4-unicast``), route_map_in and route_map_out ``[HWAAC_PERMIT_ALL]`` (FRR's ``bgp ebgp-requires-policy``
    drops every route of an eBGP session that has no policy)."""

    table = "BGP_NEIGHBOR_AF"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        suffix = f"|{AFI_SAFI}"
        return {
            key + suffix: {
                "admin_status": ctx.bgp_up,
                "route_map_in": [ROUTE_MAP_PERMIT],
                "route_map_out": [ROUTE_MAP_PERMIT],
            }
            for key, _lk in ctx.neighbors
        }


class DeviceNeighbor(TableGenerator):
    """DEVICE_NEIGHBOR (sonic-device_neighbor.yang): per linked port, the peer ``name`` and ``port``. SONiC's
    QoS and buffer templates treat ports listed here as the active ones."""

    table = "DEVICE_NEIGHBOR"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        return {lk.port: {"name": lk.peer, "port": lk.peer_port} for lk in ctx.links}


#: The generators in the order their tables appear in config_db.json (routing tables in dependency order, see
#: the module docstring).
GENERATORS: tuple[type[TableGenerator], ...] = (
    DeviceMetadata,
    Port,
    LoopbackInterface,
    Interface,
    Vlan,
    VlanMember,
    VlanInterface,
    RouteMapSet,
    RouteMap,
    BgpGlobals,
    BgpGlobalsAf,
    BgpGlobalsAfNetwork,
    BgpNeighbor,
    BgpNeighborAf,
    DeviceNeighbor,
    DscpToTcMap,
    TcToQueueMap,
    TcToPriorityGroupMap,
    MapPfcPriorityToQueue,
    PfcPriorityToPriorityGroupMap,
    Scheduler,
    WredProfile,
    Queue,
    PortQosMap,
    PfcWd,
    CableLength,
    BufferPg,
    DefaultLosslessBufferParameter,
    LosslessTrafficPattern,
)
