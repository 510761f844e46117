"""The intent's ``storage`` section: Lustre clients of the GPU nodes (LNet networks and globals, file systems,
tunables). Its semantic rules are in :mod:`hwaac.model.storage_rules`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from hwaac.model.lnet_globals import GLOBALS
from hwaac.model.sections import StrictSection, exact_int


class LnetTunables(StrictSection):
    """LNet tunables of one network's NIs: the ``tunables:`` block of ``lnetctl net show -v`` / ``export``
    (liblnetconfig_lnd.c ``lustre_net_show_tunables``), set with ``lnetctl net add --peer-timeout/--peer-credits/
    --peer-buffer-credits/--credits``. Unset fields keep the LND's defaults. Upper limits are the LND's own;
    ``lnetctl`` reports a value it refuses."""

    peer_timeout: int | None = Field(
        None, ge=0, description="Seconds before a silent peer is declared dead (0 turns the check off)."
    )
    peer_credits: int | None = Field(
        None,
        ge=1,
        description="Concurrent sends to one peer (o2ib default 8; NVIDIA's GDS guide for EXAScaler uses 32).",
    )
    peer_buffer_credits: int | None = Field(None, ge=0, description="Router buffer credits per peer.")
    credits: int | None = Field(None, ge=1, description="Concurrent sends over the whole NI.")


class LndTunables(StrictSection):
    """LND tunables of one network's NIs: the ``lnd tunables:`` block that ``lnetctl import`` reads
    (liblnetconfig_lnd.c ``yaml_extract_o2ib_tun`` / ``yaml_extract_sock_tun``). o2ib reads all three; tcp
    (ksocklnd) only ``conns_per_peer``. ``peercredits_hiw`` is shown by ``lnetctl net show -v`` but never read back
    by import, so it is not an intent field: it is the ko2iblnd module option ``peer_credits_hiw``."""

    conns_per_peer: int | None = Field(None, ge=0, description="Connections per peer (o2ib, tcp).")
    concurrent_sends: int | None = Field(None, ge=0, description="o2ib: sends in flight per connection.")
    map_on_demand: int | None = Field(None, ge=0, description="o2ib: fast registration of fragmented buffers.")


class LnetNetwork(StrictSection):
    """One LNet network of the GPU nodes: its NIs are the NIC ports of ``rails`` (or the named ``interfaces``).

    Several interfaces in one network are LNet Multi-Rail (2.10+); the first one is the node's primary NID, so
    the order written here is the NI order.

    ``routes`` (rails only) are the storage servers' prefixes outside the fabric's host-link block. ko2iblnd
    resolves a peer with the NI's own address as source (lustre-release lnet/klnds/o2iblnd/o2iblnd_cb.c
    ``kiblnd_connect_peer``: ``rdma_resolve_addr(cmid, srcaddr = NI address, dstaddr)``) and RDMA CM routes that
    lookup with the source set (Linux drivers/infiniband/core/addr.c ``addr4_resolve``: ``fl4.saddr = src_ip``,
    ``ip_route_output_key``), so the rule ``from <rail address> table <rail>`` picks the rail's own table, which
    holds only the host-link block unless these prefixes are added (hwaac.render.host.netplan).
    """

    net: str = Field(
        description="LNet network: o2ib or tcp with an optional number, e.g. o2ib0, o2ib1, tcp "
        "(o2ib = o2ib0, as LNet prints it).",
        examples=["o2ib0"],
    )
    rails: list[int] | None = Field(
        None,
        description="Rails (0-based) whose NIC ports carry the network, in NI order; with several planes "
        "every port of each rail, plane 0 first. Exclusive with interfaces.",
    )
    interfaces: list[str] | None = Field(
        None,
        description="Linux interfaces of the GPU nodes, e.g. [eth2], for a network outside the rails. "
        "Exclusive with rails.",
    )
    routes: list[str] | None = Field(
        None,
        description="Rails only: IPv4 prefixes of the storage servers that the fabric routes to the rails "
        "(e.g. storage on the backend fabric, advertised in BGP), e.g. [10.20.0.0/16]. Each rail's routing table "
        "gets a route to each via the rail's leaf, so RDMA CM, which resolves from the NI's own address, reaches "
        "the servers; MGS NIDs outside the host-link block must lie in one of them.",
        examples=[["10.20.0.0/16"]],
    )
    multi_rail: bool = Field(
        True, description="Several interfaces in this network (LNet Multi-Rail); false requires exactly one interface."
    )
    tunables: LnetTunables = LnetTunables()
    lnd_tunables: LndTunables = LndTunables()


class LnetSection(StrictSection):
    """LNet of the GPU nodes: its networks, and the global settings ``lnetctl global show`` lists and
    ``lnetctl set <name> <value>`` sets (lustre-release lnet/utils/lnetctl.c; 2.12's ``max_intf`` is
    ``max_interfaces`` since LU-13722). The global settings sit next to ``networks`` rather than under a
    ``global:`` key (a Python keyword, which the loader's field lookup cannot name); the render groups them as
    ``global``. Unset settings keep LNet's defaults; upper limits are LNet's own."""

    networks: list[LnetNetwork] = Field(default_factory=list, description="LNet networks of every GPU node.")
    discovery: Annotated[Literal[0, 1], exact_int(0, 1)] | None = Field(
        None, description="Multi-Rail peer discovery (default 1 since 2.11)."
    )
    max_interfaces: int | None = Field(None, ge=1, description="Interfaces a peer may advertise (default 200).")
    numa_range: int | None = Field(None, ge=0)
    drop_asym_route: Annotated[Literal[0, 1], exact_int(0, 1)] | None = None
    retry_count: int | None = Field(None, ge=0, description="Resends of a message before it fails.")
    transaction_timeout: int | None = Field(None, ge=1, description="Seconds.")
    health_sensitivity: int | None = Field(None, ge=0)
    recovery_interval: int | None = Field(None, ge=1, description="Seconds.")
    router_sensitivity: int | None = Field(None, ge=0, le=100, description="Percent.")
    response_tracking: int | None = Field(None, ge=0, le=3)
    recovery_limit: int | None = Field(None, ge=0, description="Seconds; 0 = no limit.")

    def global_settings(self) -> dict[str, int]:
        """The global settings the intent sets, name -> value, in :data:`LNET_GLOBALS` order."""
        return {k: v for k in LNET_GLOBALS if (v := getattr(self, k)) is not None}


# the global settings the intent sets (LnetSection's fields), in the order ``lnetctl global show`` prints them
LNET_GLOBALS = tuple(k for k in GLOBALS if k in LnetSection.model_fields)


class LustreFilesystem(StrictSection):
    """A Lustre file system every GPU node mounts.

    ``tunables`` keys are ``<device type>.<parameter>``; the render scopes each to this file system's devices
    (hwaac.render.host.lustre), so two file systems can be tuned apart.
    """

    name: str = Field(description="Lustre fsname: 1-8 letters, digits or '_'.", examples=["lfs1"])
    mgs: list[str] = Field(
        description="MGS nodes, primary first, then failover partners; each is the comma-separated NIDs of one "
        "node (<IPv4 or host name>@<net>), as in mount.lustre's MGSNODE:MGSNODE.",
        examples=[["10.20.0.1@o2ib,10.20.1.1@o2ib", "10.20.0.2@o2ib,10.20.1.2@o2ib"]],
    )
    mount_point: str = Field(description="Absolute path the file system is mounted on, e.g. /mnt/lfs1.")
    options: list[str] = Field(
        default_factory=list,
        description="Mount options, e.g. [flock, noatime]; "
        "_netdev is always added (the mount waits for the network at boot).",
    )
    tunables: dict[str, int | str] = Field(
        default_factory=dict,
        description="Client parameters: osc.<p>, mdc.<p>, llite.<p> or ldlm.namespaces.<p> -> value, e.g. "
        "osc.max_rpcs_in_flight: 32.",
    )


class StorageSection(StrictSection):
    """Lustre clients on the GPU nodes: LNet, the file systems they mount and their tunables."""

    client_version: str = Field(description="Lustre client version, e.g. 2.15.5.", examples=["2.15.5"])
    packages: Literal["kmod", "dkms", "auto"] = Field(
        "auto",
        description="Client kernel modules: kmod (prebuilt), dkms (built on the node) or auto (chosen "
        "per distribution by the role).",
    )
    lnet: LnetSection = LnetSection()
    filesystems: list[LustreFilesystem] = Field(default_factory=list)
