"""What the table generators share: a switch's local view of its links, and the per-intent QoS invariants.

:class:`SwitchContext` is built once per switch and handed to every generator; what depends only on the switch
model or the intent's ``qos`` section is cached as immutable ``(field, value)`` tuples, keyed on the whole
``QosSection.model_dump_json()``, so rendered configs share no dict or list. Why: docs/render-sonic.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from operator import attrgetter
from typing import Any, ClassVar

from hwaac.model.intent import QosSection, SwitchModel
from hwaac.model.sonic_releases import RELEASES, SonicRelease, bgp_admin_values
from hwaac.plan.model import LinkKind, Plan, Switch, ip_str, rail_vlan_id
from hwaac.plan.ports import port_table

# Names of the objects hwaac defines in the QoS tables (SONiC's own template calls its maps "AZURE"; a distinct
# name makes it obvious on a switch that the maps came from hwaac and not from the SKU's qos.json.j2).
QOS_MAP = "ROCE"
WRED_LOSSLESS = "ROCE_LOSSLESS"
SCHEDULER_LOSSY = "scheduler.lossy"
SCHEDULER_LOSSLESS = "scheduler.lossless"
SCHEDULER_CNP = "scheduler.cnp"
CABLE_LENGTH_PROFILE = "AZURE"  # the key buffermgrd and SONiC's buffer templates use
BUFFER_DEFAULTS = "AZURE"  # key of DEFAULT_LOSSLESS_BUFFER_PARAMETER / LOSSLESS_TRAFFIC_PATTERN (buffers_config.j2)
LOOPBACK = "Loopback0"

# Routing objects (frrcfgd; see generators' module docstring).
VRF = "default"
AFI_SAFI = "ipv4_unicast"
ROUTE_MAP_PERMIT = "HWAAC_PERMIT_ALL"  # neighbour in/out policy (FRR's ebgp-requires-policy needs one)

DEVICE_TYPE = {"leaf": "BackEndToRRouter", "spine": "BackEndLeafRouter", "super_spine": "SpineRouter"}

Items = tuple[tuple[str, str], ...]
Table = dict[str, Any]


@dataclass(frozen=True, slots=True)
class LocalLink:
    """One link seen from the switch being rendered: its own port and address, and the far end."""

    port: str
    position: int  # 0-based position of ``port`` in the model's port table (sort key)
    kind: LinkKind
    ip: int
    peer_ip: int
    network: int
    prefixlen: int
    peer: str
    peer_port: str


@dataclass(frozen=True, slots=True)
class QosInvariants:
    """The QoS content that depends only on the intent's ``qos`` section (see module docstring)."""

    dscp_to_tc: Items
    tc_to_queue: Items
    tc_to_pg: Items
    pfc_to_queue: Items
    pfc_to_pg: Items
    schedulers: tuple[tuple[str, Items], ...]
    wred: Items
    queues: tuple[tuple[str, Items], ...]  # ("|3", fields) per configured queue of an active port
    port_qos: Items
    lossless_pgs: tuple[str, ...]  # BUFFER_PG key suffixes of the PFC priorities: ("|3",) or ("|3-4",)
    pfcwd_enabled: bool
    pfcwd_global: Items
    pfcwd_port: Items
    cable_length: str


def pg_ranges(priorities: list[int] | tuple[int, ...]) -> tuple[str, ...]:
    """Priorities as BUFFER_PG priority-group keys: runs of consecutive values become ranges.

    ``[3]`` -> ``("3",)``, ``[3, 4]`` -> ``("3-4",)``, ``[2, 3, 5]`` -> ``("2-3", "5")`` (sonic-buffer-pg.yang
    pg_num pattern ``[0-7](-[0-7])?``).
    """
    out: list[str] = []
    run: list[int] = []
    for p in sorted(set(priorities)):
        if run and p != run[-1] + 1:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
            run = []
        run.append(p)
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return tuple(out)


_qos_cache: dict[str, QosInvariants] = {}
_QOS_CACHE_SIZE = 32


def qos_invariants(q: QosSection) -> QosInvariants:
    """The QoS invariants of ``q``, cached on its JSON dump (one computation per distinct qos section)."""
    key = q.model_dump_json()
    inv = _qos_cache.get(key)
    if inv is None:
        if len(_qos_cache) >= _QOS_CACHE_SIZE:
            _qos_cache.clear()
        inv = _qos_cache[key] = _build_qos_invariants(q)
    return inv


def _build_qos_invariants(q: QosSection) -> QosInvariants:
    lossless, cnp, ecn, wd = q.lossless_priority, q.cnp_priority, q.ecn, q.pfc_watchdog
    pfc_sorted = sorted(set(q.pfc_priorities))
    tc_of_dscp = {d: 0 for d in range(64)}
    for d in q.roce_dscp:
        tc_of_dscp[d] = lossless
    tc_of_dscp[q.cnp_dscp] = cnp
    identity = tuple((str(i), str(i)) for i in range(8))
    wred: list[tuple[str, str]] = [("ecn", "ecn_all")]
    wred += [(f"wred_{c}_enable", "true") for c in ("green", "yellow", "red")]
    for c in ("green", "yellow", "red"):
        wred += [
            (f"{c}_min_threshold", str(ecn.min_threshold_bytes)),
            (f"{c}_max_threshold", str(ecn.max_threshold_bytes)),
            (f"{c}_drop_probability", str(ecn.mark_probability_percent)),
        ]
    queues: dict[int, Items] = {0: (("scheduler", SCHEDULER_LOSSY),)}
    for p in pfc_sorted:
        queues[p] = (("scheduler", SCHEDULER_LOSSLESS), ("wred_profile", WRED_LOSSLESS))
    queues[cnp] = (("scheduler", SCHEDULER_CNP),)
    pfc_enable = ",".join(str(p) for p in pfc_sorted)
    port_qos: list[tuple[str, str]] = [
        ("dscp_to_tc_map", QOS_MAP),
        ("tc_to_queue_map", QOS_MAP),
        ("tc_to_pg_map", QOS_MAP),
        ("pfc_to_queue_map", QOS_MAP),
        ("pfc_to_pg_map", QOS_MAP),
        ("pfc_enable", pfc_enable),
    ]
    if wd.enabled:
        port_qos.append(("pfcwd_sw_enable", pfc_enable))
    return QosInvariants(
        dscp_to_tc=tuple((str(d), str(tc)) for d, tc in tc_of_dscp.items()),
        tc_to_queue=identity,
        tc_to_pg=tuple((str(tc), str(tc) if tc in pfc_sorted else "0") for tc in range(8)),
        pfc_to_queue=identity,
        pfc_to_pg=tuple((str(p), str(p)) for p in pfc_sorted),
        schedulers=(
            (SCHEDULER_LOSSY, (("type", "DWRR"), ("weight", str(q.lossy_weight)))),
            (SCHEDULER_LOSSLESS, (("type", "DWRR"), ("weight", str(q.lossless_weight)))),
            (SCHEDULER_CNP, (("type", "STRICT"),)),
        ),
        wred=tuple(wred),
        queues=tuple((f"|{n}", queues[n]) for n in sorted(queues)),
        port_qos=tuple(port_qos),
        lossless_pgs=tuple(f"|{r}" for r in pg_ranges(pfc_sorted)),
        pfcwd_enabled=wd.enabled,
        pfcwd_global=(("POLL_INTERVAL", str(wd.poll_interval_ms)),),
        pfcwd_port=(
            ("action", wd.action),
            ("detection_time", str(wd.detection_time_ms)),
            ("restoration_time", str(wd.restoration_time_ms)),
        ),
        cable_length=f"{q.cable_length_m}m",
    )


@cache
def port_positions(model: SwitchModel) -> dict[str, int]:
    """Port name -> 0-based position in the model's port table. Internal: never handed out."""
    return {p.name: i for i, p in enumerate(port_table(model))}


@lru_cache(maxsize=64)
def port_bases(model: SwitchModel, mtu: int) -> tuple[tuple[str, Items], ...]:
    """Per port: (name, the PORT fields that only depend on the model and the MTU), in port order.

    ``fec`` (the model's) is written on the front-panel ports only: an extra SKU port (e.g. the SN5600's 25G
    Ethernet512) runs at another speed, so its FEC is left to the platform.
    """
    out = []
    for i, p in enumerate(port_table(model)):
        fields: tuple[tuple[str, str], ...] = (
            ("alias", p.alias),
            ("lanes", p.lanes),
            ("speed", str(p.speed_mbps)),
            ("index", str(p.index)),
            ("mtu", str(mtu)),
        )
        if i < model.ports:
            fields += (("fec", model.fec),)
        out.append((p.name, fields))
    return tuple(out)


def switch_model(plan: Plan, switch: Switch) -> SwitchModel:
    """The resolved :class:`SwitchModel` of ``switch`` (the design holds one per layer)."""
    d = plan.design
    model = {"leaf": d.leaf_model, "spine": d.spine_model, "super_spine": d.super_spine_model}[switch.role]
    if model is None:  # pragma: no cover - the planner never makes a super-spine without a model
        raise ValueError(f"{switch.name}: no switch model for role {switch.role}")
    return model


class SwitchContext:
    """Everything the generators read about one switch.

    Attributes:
        release: the switch's SONiC release (its role's ``sonic_release``).
        bgp_up, bgp_down: the BGP_NEIGHBOR(_AF) admin_status values for the release (``up``/``down``, or
            ``true``/``false`` on the ``frrcfgd`` path): :func:`hwaac.model.sonic_releases.bgp_admin_values`.
        links: the switch's links seen from its side, in port order.
        routed: links with a /31 (or host-link) address on the port itself (INTERFACE).
        bridged: rail_subnet mode on a leaf: host downlinks, untagged members of the leaf's VLAN.
        active: names of linked ports, in port order ("active" ports get QoS, as in SONiC's qos template).
        vlan_id, rail_subnet: rail_subnet mode on a leaf (else None): its VLAN id and
            ``(network, prefixlen, gateway)`` from :meth:`Plan.rail_subnet`, present whether or not a host is
            cabled yet, so the switch and docs/ip-plan.csv always agree on the gateway.
        announced: the prefixes BGP announces (one network statement each), in order: the Loopback0 /32; on a
            leaf also its host links (p2p31: each cabled host link's /31; rail_subnet: the rail subnet).
        neighbors: ``(BGP_NEIGHBOR key "default|<peer address>", link)`` per fabric link (never hosts).

    Raises:
        ValueError: the role's release has no BGP admin_status value both frrcfgd and YANG accept and the intent
            does not choose one (:func:`hwaac.model.sonic_releases.bgp_admin_values`).
    """

    __slots__ = (
        "active",
        "announced",
        "bgp_down",
        "bgp_up",
        "bridged",
        "intent",
        "links",
        "model",
        "neighbors",
        "plan",
        "qos",
        "rail_subnet",
        "release",
        "routed",
        "switch",
        "vlan_id",
    )

    def __init__(self, plan: Plan, switch: Switch):
        self.plan = plan
        self.switch = switch
        self.intent = plan.intent
        self.model = switch_model(plan, switch)
        self.qos = qos_invariants(plan.intent.qos)
        spec = getattr(plan.intent.switches, switch.role)
        self.release: SonicRelease = RELEASES[spec.sonic_release]
        try:
            self.bgp_up, self.bgp_down = bgp_admin_values(spec.sonic_release, spec.sonic_bgp_admin_status)
        except ValueError as exc:
            raise ValueError(f"{switch.name} (switches.{switch.role}): {exc}") from None
        pos = port_positions(self.model)
        name = switch.name
        links = []
        for lk in plan.links_by_device.get(name, ()):
            if lk.b_device == name:
                links.append(
                    LocalLink(
                        lk.b_port,
                        pos[lk.b_port],
                        lk.kind,
                        lk.b_ip,
                        lk.a_ip,
                        lk.network,
                        lk.prefixlen,
                        lk.a_device,
                        lk.a_port,
                    )
                )
            else:
                links.append(
                    LocalLink(
                        lk.a_port,
                        pos[lk.a_port],
                        lk.kind,
                        lk.a_ip,
                        lk.b_ip,
                        lk.network,
                        lk.prefixlen,
                        lk.b_device,
                        lk.b_port,
                    )
                )
        links.sort(key=attrgetter("position"))
        self.links = links
        self.active = [lk.port for lk in links]
        self.neighbors = [(f"{VRF}|{ip_str(lk.peer_ip)}", lk) for lk in links if lk.kind != "host"]
        announced = [f"{ip_str(switch.loopback)}/32"]
        leaf = switch.role == "leaf"
        if leaf and plan.intent.addressing.host_links.mode == "rail_subnet":
            self.bridged = [lk for lk in links if lk.kind == "host"]
            self.routed = [lk for lk in links if lk.kind != "host"]
            self.vlan_id: int | None = rail_vlan_id(switch.rail or 0)
            self.rail_subnet: tuple[int, int, int] | None = plan.rail_subnet(switch)
            net, plen, _gw = self.rail_subnet
            announced.append(f"{ip_str(net)}/{plen}")
        else:
            self.bridged = []
            self.routed = links
            self.vlan_id = None
            self.rail_subnet = None
            announced += [f"{ip_str(lk.network)}/{lk.prefixlen}" for lk in links if lk.kind == "host"]
        self.announced = announced


class TableGenerator:
    """Base class: ``table`` is the config_db table name, :meth:`generate` its content."""

    table: ClassVar[str]

    @classmethod
    def generate(cls, ctx: SwitchContext) -> Table:
        raise NotImplementedError
