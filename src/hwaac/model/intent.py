"""The fabric intent: the one file (``inventory/<fabric>/fabric.yml``) a user writes.

Field shapes, units and defaults are declared here once; the JSON Schema that editors use (``hwaac schema``)
is generated from these classes. Defaults follow public reference designs (NVIDIA DGX SuperPOD, RFC 7938 and
RFC 6996 for ASNs, NVIDIA/Cumulus RoCE lossless QoS, the AMD Instinct acceptance guide for hosts), cited per field
in docs/intent-sources.md. Planes and rails count from 0, SUs, node slots and switch indices from 1, as in NVIDIA's
AIR naming (``leaf-p0-su01-r0``, ``gpu-su01-h01``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, Field, PrivateAttr

from hwaac.model.patterns import HOSTNAME, SLUG
from hwaac.model.sections import STRICT_CONFIG, StrictSection, exact_int
from hwaac.model.sonic_releases import DEFAULT_RELEASE, BgpAdminStatusPath, ReleaseName
from hwaac.model.storage import StorageSection

PRIVATE_ASN4_FIRST = 4_200_000_000
PRIVATE_ASN4_LAST = 4_294_967_294

Prefix = Annotated[
    str,
    Field(
        description="An IPv4 prefix in CIDR notation, e.g. 10.0.0.0/16 (IPv6 pools are reserved for later).",
        examples=["10.0.0.0/16"],
    ),
]


class _StrictBase(BaseModel):
    model_config = STRICT_CONFIG


class NetBoxPrefixRef(_StrictBase):
    """A pool kept in NetBox, the source of truth: the one prefix with this role (at this site, in this VRF).

    Resolved when the intent is loaded against NetBox (``hwaac validate``/``plan`` with NETBOX_URL and
    NETBOX_TOKEN, or the local NetBox); without NetBox it is an error naming the role.
    """

    netbox_role: str = Field(
        pattern=SLUG, description="Slug of the NetBox prefix role (IPAM > Roles), e.g. gpu-host-links."
    )
    site: str | None = Field(
        None, pattern=SLUG, description="Slug of the site the prefix is scoped to; default: fabric.site."
    )
    vrf: str | None = Field(None, description="Name of the prefix's VRF; default: the global table.")


PoolRef = Prefix | NetBoxPrefixRef


# --- fabric -----------------------------------------------------------------------------------------------


class Appliance(StrictSection):
    """A non-GPU device that occupies node slots on the leaves (for example a UFM or storage head)."""

    name: str = Field(
        pattern=HOSTNAME,
        description="Device name, unique across the fabric: a host name (lower-case letters, digits, '-'; at most 63).",
    )
    su: int = Field(ge=1, description="The SU (1-based) whose leaves it attaches to.")
    slot: int = Field(ge=1, description="The node slot (1-based) it occupies; leaf downlink port slot-1.")
    rails: list[int] = Field(description="Rails (0-based) it has a port on, e.g. [0, 1, 2, 3].", min_length=1)


class FabricSection(StrictSection):
    """Size and shape of the fabric."""

    name: str = Field(pattern=HOSTNAME, description="Fabric name: lower case, digits, '-'; at most 63.")
    site: str = Field(pattern=SLUG, description="The site (NetBox site slug) that holds the fabric.")
    tiers: Annotated[Literal[2, 3], exact_int(2, 3)] = Field(
        2, description="2 = leaf/spine; 3 adds super-spines (NVIDIA B200: from 16 SUs)."
    )
    planes: Annotated[Literal[1, 2, 4], exact_int(1, 2, 4)] = Field(
        1, description="Independent fabric planes; 2 = Spectrum-X twin-plane (B300)."
    )
    rails: int = Field(8, ge=1, le=16, description="Rails per node: GPUs/NICs per node, one leaf per rail per SU.")
    nodes_per_su: int = Field(32, ge=1, description="Node slots per scalable unit (32 H100/B200, 64 B300 Ethernet).")
    su_count: int = Field(ge=1, description="Scalable units built now.")
    su_capacity: int | None = Field(
        None,
        ge=1,
        description="SUs the spine (and super-spine) layer is sized for. Growth up to this many SUs never moves "
        "an existing cable, address or ASN. Default: su_count.",
    )
    nodes: int | None = Field(
        None,
        ge=0,
        description="GPU nodes populated, filling slots in order (default: every slot not taken by "
        "an appliance). Leaves and uplinks are still built for full SUs, as NVIDIA advises.",
    )
    host_port_speed_gbps: Annotated[Literal[100, 200, 400, 800], exact_int(100, 200, 400, 800)] = Field(
        400, description="Host NIC port speed in Gb/s."
    )
    appliances: list[Appliance] = Field(default_factory=list, description="Non-GPU devices on leaf ports.")


# --- switches ---------------------------------------------------------------------------------------------


class ExtraPort(StrictSection):
    """A port outside the front-panel radix that the SKU defines (e.g. the SN5600's 25G Ethernet512)."""

    name: str
    lanes: str = Field(pattern=r"^[0-9]+(,[0-9]+)*$", description="Comma-separated lane numbers.")
    alias: str
    index: int = Field(ge=0)
    speed_mbps: int = Field(ge=1, le=1_600_000)


class SwitchModel(StrictSection):
    """A switch model as SONiC names its ports (the HwSKU's port_config.ini).

    Port i (0-based) is named ``port_name.format(n=first_port_number + i * port_step)`` and has lanes
    ``first_lane + i * lanes_per_port`` onwards, unless ``lane_step`` says otherwise.
    """

    hwsku: str = Field(description="SONiC HwSKU, e.g. Mellanox-SN5600-O128.")
    platform: str = Field("", description="SONiC platform string, e.g. x86_64-nvidia_sn5600-r0.")
    manufacturer: str = Field("", description="Manufacturer name (NetBox).")
    ports: int = Field(ge=2, le=1024, description="Front-panel ports at the configured breakout (the radix).")
    port_speed_gbps: Annotated[Literal[100, 200, 400, 800, 1600], exact_int(100, 200, 400, 800, 1600)] = Field(
        description="Speed of each port in Gb/s."
    )
    port_name: str = Field("Ethernet{n}", description="SONiC port name pattern; {n} is the port number.")
    first_port_number: int = Field(0, ge=0)
    port_step: int = Field(4, ge=1, description="Step of the number in the port name between ports.")
    lanes_per_port: int = Field(4, ge=1, le=8, description="SerDes lanes per port.")
    first_lane: int = Field(0, ge=0)
    lane_step: int | None = Field(None, ge=1, description="Lane number step between ports; default lanes_per_port.")
    ports_per_cage: int = Field(1, ge=1, le=8, description="Breakout ports per cage (2 for 2x400G in an OSFP).")
    alias: str = Field(
        "etp{cage}{sub}",
        description="SONiC alias pattern; {cage} is the 1-based cage, {sub} a letter for the breakout port.",
    )
    fec: Literal["rs", "fc", "none", "auto"] = Field("rs", description="FEC mode (sonic-port.yang).")
    extra_ports: tuple[ExtraPort, ...] = Field(
        (), strict=False, description="Ports the SKU defines beyond the radix; rendered admin down, never cabled."
    )


def _release_text(value: object) -> object:
    """YAML reads ``sonic_release: 202505`` as an int; the release is a name, so an int is taken as its text."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class _SonicSpec(StrictSection):
    """The SONiC settings of a switch role (see docs/sonic-releases.md for the per-release facts)."""

    sonic_release: Annotated[ReleaseName, BeforeValidator(_release_text)] = Field(
        DEFAULT_RELEASE,
        description="SONiC release the switches of this role run (the release branch, e.g. "
        "\"202505\"); the config_db follows it where SONiC's code paths disagree (docs/sonic-releases.md).",
        examples=["202505"],
    )
    sonic_bgp_admin_status: BgpAdminStatusPath | None = Field(
        None,
        description="Only for releases before 202505, where frrcfgd reads BGP_NEIGHBOR(_AF) admin_status "
        "only as true/false while SONiC's YANG accepts only up/down, and hwaac refuses to choose: 'frrcfgd' renders "
        "true/false (sessions and address families come up, but GCU 'config apply-patch' refuses every patch "
        "while the running config holds them, and so does 'config reload' where it checks YANG); 'yang' renders "
        "up/down (YANG-valid for GCU, but frrcfgd does not activate the address family: no routes). Unset on "
        "202505 and later (up/down satisfy both).",
    )


class LeafSpec(_SonicSpec):
    model: str = Field(description="A key of switch_models (or the built-in catalog).")
    downlinks: int | None = Field(None, ge=1, description="Ports towards nodes; default nodes_per_su.")
    uplinks: int | None = Field(None, ge=1, description="Ports towards spines; default from oversubscription.")
    oversubscription: float = Field(
        1.0, gt=0, le=16, description="Downlink:uplink bandwidth ratio; 1.0 is non-blocking, 0.5 doubles uplinks."
    )


class SpineSpec(_SonicSpec):
    model: str
    per_plane: int | None = Field(
        None,
        ge=1,
        description="2 tiers: spines per plane; 3 tiers: spines per pod and plane. Default: "
        "the fewest that give every leaf an equal number of links to each spine.",
    )
    sus_per_pod: int | None = Field(None, ge=1, description="3 tiers only: SUs under one set of spines.")
    downlinks: int | None = Field(
        None, ge=1, description="3 tiers only: spine ports towards leaves (default half the ports)."
    )


class SuperSpineSpec(_SonicSpec):
    model: str
    per_group: int | None = Field(
        None,
        ge=1,
        description="Super-spines that spine j of every pod connects to (per plane); default: "
        "the fewest that fit the pods of su_capacity and split each spine's uplinks evenly.",
    )


class SwitchesSection(StrictSection):
    leaf: LeafSpec
    spine: SpineSpec
    super_spine: SuperSpineSpec | None = Field(None, description="Required when fabric.tiers is 3.")


# --- addressing -------------------------------------------------------------------------------------------


class LoopbackPools(StrictSection):
    """One /32 per switch, from a pool per layer so that each layer grows on its own."""

    leaf: PoolRef
    spine: PoolRef
    super_spine: PoolRef | None = None


class HostLinkPool(StrictSection):
    prefix: PoolRef
    mode: Literal["p2p31", "rail_subnet"] = Field(
        "p2p31",
        description="p2p31: a /31 per NIC port (Juniper AI JVD); rail_subnet: one subnet per leaf (SU x rail) "
        "with the leaf as gateway on the first address.",
    )
    host_address: Literal["odd", "even"] = Field(
        "odd", description="p2p31: the host takes the odd (Juniper JVD) or even (NVIDIA k8s-launch-kit) address."
    )
    rail_subnet_prefixlen: int | None = Field(
        None, ge=16, le=30, description="rail_subnet: prefix length per leaf subnet; default the smallest fit."
    )


class AddressingSection(StrictSection):
    loopbacks: LoopbackPools
    leaf_spine: PoolRef = Field(description="Pool of /31s for leaf-spine links.")
    spine_super_spine: PoolRef | None = Field(None, description="Pool of /31s for spine-super-spine links (3 tiers).")
    host_links: HostLinkPool


# --- ASNs -------------------------------------------------------------------------------------------------


class AsnRange(StrictSection):
    # 4294967295 is reserved (RFC 7300), hence the upper bound
    first: int = Field(ge=1, le=PRIVATE_ASN4_LAST)
    last: int = Field(ge=1, le=PRIVATE_ASN4_LAST)


class AsnSection(StrictSection):
    """RFC 7938 style: unique per leaf, shared per spine layer and plane (and pod), one for super-spines."""

    super_spine: int = Field(PRIVATE_ASN4_FIRST, ge=1, le=PRIVATE_ASN4_LAST)
    spine: AsnRange = AsnRange(first=PRIVATE_ASN4_FIRST + 1, last=PRIVATE_ASN4_FIRST + 9_999)
    leaf: AsnRange = AsnRange(first=PRIVATE_ASN4_FIRST + 100_000, last=PRIVATE_ASN4_LAST)


# --- QoS --------------------------------------------------------------------------------------------------


class EcnProfile(StrictSection):
    min_threshold_bytes: int = Field(150_000, ge=1_000, description="WRED/ECN start marking, bytes.")
    max_threshold_bytes: int = Field(1_500_000, ge=1_000, description="WRED/ECN mark everything, bytes.")
    mark_probability_percent: int = Field(100, ge=0, le=100, description="Marking probability at max threshold.")


class PfcWatchdog(StrictSection):
    enabled: bool = True
    action: Literal["drop", "forward", "alert"] = "drop"
    poll_interval_ms: int = Field(200, ge=100, le=1000)
    detection_time_ms: int = Field(200, ge=100, le=5000)
    restoration_time_ms: int = Field(400, ge=100, le=60000)


class QosSection(StrictSection):
    roce_dscp: list[int] = Field(default_factory=lambda: [26], description="DSCP values of RoCE data.")
    cnp_dscp: int = Field(48, ge=0, le=63, description="DSCP of congestion notification packets.")
    lossless_priority: int = Field(3, ge=0, le=7, description="Priority/traffic class of RoCE (lossless).")
    cnp_priority: int = Field(6, ge=0, le=7, description="Priority/traffic class of CNP (strict priority).")
    pfc_priorities: list[int] = Field(default_factory=lambda: [3], description="Priorities with PFC enabled.")
    lossless_weight: int = Field(50, ge=1, le=100, description="DWRR weight of the lossless queue.")
    lossy_weight: int = Field(50, ge=1, le=100, description="DWRR weight of the default (lossy) queue.")
    ecn: EcnProfile = EcnProfile()
    pfc_watchdog: PfcWatchdog = PfcWatchdog()
    switch_mtu: int = Field(9100, ge=68, le=9216, description="Switch port MTU in bytes (SONiC: 68-9216).")
    host_mtu: int = Field(4200, ge=4200, le=9216, description="Host rail MTU in bytes; >= 4200 for RoCE MTU 4096.")
    cable_length_m: int = Field(40, ge=1, le=2000, description="Cable length used for PFC headroom, metres.")


# --- hosts ------------------------------------------------------------------------------------------------


class RoutingProfile(StrictSection):
    table_base: int = Field(101, ge=1, le=252, description="Routing table of NIC port 0; +1 per port.")
    rule_priority_base: int = Field(1010, ge=1, le=32765, description="Source rule priority of NIC port 0.")
    rule_priority_step: int = Field(10, ge=1, le=1000)


def _default_mlxconfig() -> dict[str, int | str]:
    return {
        "LINK_TYPE_P1": 2,
        "ROCE_CC_PRIO_MASK_P1": 255,
        "CNP_DSCP_P1": 48,
        "CNP_802P_PRIO_P1": 6,
        "ATS_ENABLED": 0,
        "ADVANCED_PCI_SETTINGS": 1,
    }


def _default_sysctl() -> dict[str, int | str]:
    return {
        "net.ipv4.conf.all.arp_ignore": 1,
        "net.ipv4.conf.all.arp_announce": 2,
        "net.ipv4.conf.all.rp_filter": 2,
    }


class HostProfile(StrictSection):
    nic_model: str = Field("ConnectX-7", description="NIC model (NetBox device type of the NIC).")
    hca_name: str = Field("mlx5_{port}", description="RDMA device name; {port} is the 0-based NIC port ordinal.")
    interface_name: str = Field(
        "rail{rail}", description="Linux interface name of a rail port; {rail}, {plane} and {port} are 0-based."
    )
    mlxconfig: dict[str, int | str] = Field(
        default_factory=_default_mlxconfig,
        description="Desired firmware parameters (mlxconfig names; values as mlxconfig sets them).",
    )
    trust: Literal["dscp", "pcp"] = "dscp"
    roce_tos: int | None = Field(None, ge=0, le=255, description="RDMA-CM ToS; default roce_dscp[0] << 2 | 2 (106).")
    ecn_priorities: list[int] | None = Field(None, description="Priorities with ECN NP/RP on; default [lossless].")
    routing: RoutingProfile = RoutingProfile()
    sysctl: dict[str, int | str] = Field(
        default_factory=_default_sysctl,
        description="sysctls for RDMA multi-rail hosts (conf.all applies to every rail: the kernel takes the max).",
    )
    nccl_gid_index: int = Field(3, ge=-1, le=255, description="NCCL_IB_GID_INDEX (-1 = NCCL picks RoCEv2).")
    nccl_env: dict[str, str] = Field(default_factory=dict, description="Extra NCCL variables.")


# --- naming -----------------------------------------------------------------------------------------------


class NamingSection(StrictSection):
    """Python format patterns. Fields: plane, rail (0-based); su, slot, pod, index (1-based)."""

    node: str = "gpu-su{su:02d}-h{slot:02d}"
    leaf: str = "leaf-p{plane}-su{su:02d}-r{rail}"
    spine: str = "spine-p{plane}-{index:02d}"
    super_spine: str = "superspine-p{plane}-{index:02d}"


class Intent(StrictSection):
    """The whole intent file."""

    fabric: FabricSection
    switch_models: dict[str, SwitchModel] = Field(
        default_factory=dict, description="Switch models used by `switches`; extend or override the catalog."
    )
    switches: SwitchesSection
    addressing: AddressingSection
    asn: AsnSection = AsnSection()
    qos: QosSection = QosSection()
    host: HostProfile = HostProfile()
    naming: NamingSection = NamingSection()
    storage: StorageSection | None = Field(
        None, description="Lustre clients of the GPU nodes; absent = no lustre-client.json is rendered."
    )

    # field path -> NetBox prefix role, for pools resolved from NetBox (set by hwaac.validate.resolve_netbox_pools)
    _netbox_pools: dict[str, str] = PrivateAttr(default_factory=dict)

    @property
    def netbox_pools(self) -> dict[str, str]:
        """Pools taken from NetBox by prefix role: intent field path (``addressing.leaf_spine``) -> role slug.
        They belong to whoever recorded them in NetBox; hwaac references them and never owns them."""
        return self._netbox_pools
