"""The QoS and buffer tables of a switch's config_db: one generator per table, as in
:mod:`hwaac.render.sonic.generators` (which lists them in :data:`~hwaac.render.sonic.generators.GENERATORS`).

The whole RoCE QoS is written explicitly, its content from :func:`hwaac.render.sonic.context.qos_invariants`.
Buffers follow SONiC's dynamic model: BUFFER_PG ``<port>|<PFC priorities>`` NULL on every active port, pools and
profiles left to the SKU's template (docs/render-sonic.md, "Buffers (dynamic model)"; see :class:`BufferPg`).
"""

from __future__ import annotations

from hwaac.render.sonic.context import (
    BUFFER_DEFAULTS,
    CABLE_LENGTH_PROFILE,
    QOS_MAP,
    WRED_LOSSLESS,
    SwitchContext,
    Table,
    TableGenerator,
)

# Dynamic buffer model parameters (see BufferPg and the classes below it).
DEFAULT_DYNAMIC_TH = "0"
LOSSLESS_PATTERN_MTU = "1024"
LOSSLESS_SMALL_PACKET_PERCENTAGE = "100"


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


# --- buffers (dynamic model; see module docstring) ---------------------------------------------------------------


class BufferPg(TableGenerator):
    """BUFFER_PG (sonic-buffer-pg.yang) ``<port>|<pg>`` profile ``NULL`` for the PFC priorities of every active
    port: with buffer_model dynamic, buffermgrd computes these lossless PGs' headroom (xon, xoff, size) from
    the port's speed, CABLE_LENGTH and MTU (Configuration.md BUFFER_PG; buffers_config.j2 writes ``|3-4`` NULL in
    dynamic mode). Consecutive priorities form one range key (``3-4``), as in SONiC's templates.

    The lossy ``<port>|0`` (``ingress_lossy_profile``) and the pools and profiles are the SKU's, from its buffer
    template (module docstring); they are not written here. Loading this file with ``config reload`` on its own
    therefore leaves the lossless PGs pending in buffermgrd until the SKU's BUFFER_POOL and BUFFER_PROFILE exist
    (``config qos reload`` writes them -- together with SKU QoS maps and ``3-4`` PGs that this file then has to
    replace again -- or merge this file with ``config load`` onto a switch that has them).
    """

    table = "BUFFER_PG"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        pgs = ctx.qos.lossless_pgs
        return {port + pg: {"profile": "NULL"} for port in ctx.active for pg in pgs}


class DefaultLosslessBufferParameter(TableGenerator):
    """DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE (sonic-default-lossless-buffer-parameter.yang): default_dynamic_th
    ``0`` (the value buffers_config.j2 and Configuration.md give; buffermgrd keeps lossless PGs pending without
    it). over_subscribe_ratio is left out: setting it turns on the shared headroom pool (HLD
    dynamically-headroom-calculation.md), which buffers_config.j2 does only for SKUs that ask for it (``shp``,
    then with ratio 1), so each lossless PG keeps its own full headroom."""

    table = "DEFAULT_LOSSLESS_BUFFER_PARAMETER"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        if not ctx.active:
            return {}
        return {BUFFER_DEFAULTS: {"default_dynamic_th": DEFAULT_DYNAMIC_TH}}


class LosslessTrafficPattern(TableGenerator):
    """LOSSLESS_TRAFFIC_PATTERN|AZURE (sonic-lossless-traffic-pattern.yang): mtu ``1024`` and
    small_packet_percentage ``100`` (Configuration.md's example and the HLD's default: the worst case, all small
    packets, gives the largest headroom; SONiC's buffers_config.j2 writes 50)."""

    table = "LOSSLESS_TRAFFIC_PATTERN"

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        if not ctx.active:
            return {}
        return {
            BUFFER_DEFAULTS: {"mtu": LOSSLESS_PATTERN_MTU, "small_packet_percentage": LOSSLESS_SMALL_PACKET_PERCENTAGE}
        }
