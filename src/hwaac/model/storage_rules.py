"""Semantic rules on the intent's ``storage`` section (Lustre clients of the GPU nodes): LNet networks,
routes and NIDs, file systems, mount options and tunables. Each rule id is listed in :data:`RULES`; the
sources of each constraint are in :func:`check_storage`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

import netaddr

from hwaac.errors import IntentIssue
from hwaac.model.intent import Intent

_NET = re.compile(r"^(o2ib|tcp)(0|[1-9][0-9]*)?$")
_VERSION = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(\.[0-9]+)?$")
_FSNAME = re.compile(r"^[A-Za-z0-9_]{1,8}$")
_HOST_LABEL = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")
_IFNAME_BAD = re.compile(r"[\s/:,()]")
_TUNABLE = re.compile(r"^(osc|mdc|llite|ldlm\.namespaces)\.([a-z0-9_]+(\.[a-z0-9_]+)*)$")
NET_VALID = "o2ib or tcp, optionally numbered: o2ib, o2ib0, o2ib1, tcp, tcp0, ..."
TUNABLE_TYPES = ("osc", "mdc", "llite", "ldlm.namespaces")
LND_TUNABLES_READ = {
    # what `lnetctl import` reads per LND (lnet/utils/lnetconfig/liblnetconfig_lnd.c yaml_extract_*_tun)
    "o2ib": ("conns_per_peer", "concurrent_sends", "map_on_demand"),
    "tcp": ("conns_per_peer",),
}

RULES: dict[str, str] = {
    "storage-bad-client-version": "the Lustre client version is numeric, e.g. 2.15.5",
    "storage-bad-net": "LNet networks are o2ib[N] or tcp[N]",
    "storage-duplicate-net": "each LNet network is declared once (o2ib = o2ib0)",
    "storage-net-interfaces": "an LNet network names its rails or its interfaces (one of the two, not empty)",
    "storage-bad-rail": "LNet rails exist in the fabric, each once",
    "storage-bad-interface": "LNet interfaces are Linux interface names, each once",
    "storage-multi-rail-off": "a network with multi_rail false has one interface",
    "storage-lnd-tunable-not-for-net": "LND tunables are ones the network's LND reads",
    "storage-bad-fsname": "Lustre fsnames are 1-8 letters, digits or '_'",
    "storage-duplicate-fs": "each file system is declared once",
    "storage-bad-mount-point": "mount points are normalised absolute paths other than /",
    "storage-duplicate-mount-point": "each mount point is used once",
    "storage-bad-nid": "MGS NIDs are <IPv4 or host name>@<o2ib[N] or tcp[N]>, each once",
    "storage-mgs-net-not-configured": "every MGS NID is on an LNet network the nodes configure",
    "storage-mgs-not-routed": "an MGS NID address on a rails network lies in the host-link block or the network's "
    "routes",
    "storage-bad-route": "LNet routes are IPv4 prefixes in CIDR notation, host bits zero, each once",
    "storage-route-overlaps-pool": "LNet routes share no address with the fabric's own pools",
    "storage-routes-without-rails": "only a network on rails has routes",
    "storage-bad-mount-option": "mount options are single words without spaces or commas",
    "storage-bad-tunable": "client tunables are osc., mdc., llite. or ldlm.namespaces. parameters with a value",
}


def lnet_net_key(net: str) -> str | None:
    """The canonical name of an LNet network, ``o2ib`` -> ``o2ib0``, ``tcp3`` -> ``tcp3``; None when ``net`` is not
    o2ib[N] or tcp[N]. LNet itself prints network 0 without its number (libcfs_net2str), so ``o2ib`` and ``o2ib0``
    are the same network."""
    m = _NET.match(net)
    return f"{m.group(1)}{m.group(2) or 0}" if m else None


def parse_nid(nid: str) -> tuple[str, str] | None:
    """``"10.20.0.1@o2ib"`` -> ``("10.20.0.1", "o2ib0")`` (address, canonical net); None when it is not a NID of
    an IPv4 address (dotted quad, checked with netaddr) or an RFC 1123 host name, '@' and o2ib[N]/tcp[N].
    mount.lustre resolves host names (mount.lustre(8)); /proc/mounts then shows the address."""
    addr, at, net = nid.partition("@")
    key = lnet_net_key(net)
    if not at or key is None or not addr:
        return None
    if netaddr.valid_ipv4(addr):
        return addr, key
    labels = addr.split(".")
    if len(addr) > 253 or not all(_HOST_LABEL.match(label) for label in labels):
        return None
    if all(label.isdigit() for label in labels):
        return None  # digits and dots that are not a dotted quad: a mistyped address, not a host name
    return addr, key


def _ipv4_network(text: object) -> netaddr.IPNetwork | None:
    """``text`` as an IPv4 network (its host bits cleared), or None when it is not an IPv4 prefix (a NetBox pool
    reference not yet resolved, or a pool the pool rules already refuse)."""
    if not isinstance(text, str):
        return None
    try:
        net = netaddr.IPNetwork(text)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None
    return net.cidr if net.version == 4 else None


def fabric_pools(intent: Intent) -> list[tuple[str, netaddr.IPNetwork]]:
    """(field path, network) of the fabric's own address pools that are written as IPv4 prefixes: loopbacks,
    leaf-spine and spine-super-spine links, host links. Pools naming a NetBox prefix role count once resolved
    (:func:`hwaac.validate.load_intent` with a lookup); unparseable ones are left to the pool rules."""
    a = intent.addressing
    entries = (
        ("addressing.loopbacks.leaf", a.loopbacks.leaf),
        ("addressing.loopbacks.spine", a.loopbacks.spine),
        ("addressing.loopbacks.super_spine", a.loopbacks.super_spine),
        ("addressing.leaf_spine", a.leaf_spine),
        ("addressing.spine_super_spine", a.spine_super_spine),
        ("addressing.host_links.prefix", a.host_links.prefix),
    )
    return [(path, net) for path, value in entries if (net := _ipv4_network(value)) is not None]


def parse_route(text: str) -> tuple[netaddr.IPNetwork | None, str, str]:
    """One entry of ``storage.lnet.networks[].routes``: ``(network, "", "")`` when it is an IPv4 prefix in CIDR
    notation with its host bits zero, written as netaddr prints it (``10.20.0.0/16``); else ``(None, what is
    wrong, what is valid)``. A single server is ``<address>/32``: the length is never implied."""
    try:
        net = netaddr.IPNetwork(text) if "/" in text else None
    except (netaddr.AddrFormatError, ValueError, TypeError):
        net = None
    if net is None:
        return None, "not an IPv4 prefix in CIDR notation", "a prefix such as 10.20.0.0/16 (a single server: /32)"
    if net.version != 4:
        return None, "IPv6 routes are not supported", "an IPv4 prefix such as 10.20.0.0/16"
    if net.ip != net.network:
        return None, "host bits are set", f"the network address {net.cidr}"
    if str(net.cidr) != text:
        return None, "not written as a plain prefix", str(net.cidr)
    return net.cidr, "", ""


def check_storage(intent: Intent) -> list[IntentIssue]:
    """Issues of ``storage`` (Lustre clients of the GPU nodes); empty when the section is absent.

    Checks and their sources:

    - ``client_version``: numeric ``X.Y.Z[.W]``, as Lustre releases are numbered (2.15.5, 2.16.1);
    - LNet networks: o2ib[N] or tcp[N] (the LNDs of a RoCE/InfiniBand or Ethernet client); ``o2ib`` and ``o2ib0``
      name the same network (libcfs_net2str prints net 0 without its number), so declaring both is a duplicate;
      each network names ``rails`` (which must exist, each once) or ``interfaces`` (Linux names: 1-15 characters
      without '/', ':' or white space, which the kernel's dev_valid_name refuses, nor ',' or parentheses, on which
      ``lnetctl net add --if a,b`` and modprobe's ``o2ib0(a,b)`` split), never both; ``multi_rail: false`` with
      more than one interface is refused; LND tunables must be ones ``lnetctl import`` reads for that LND
      (liblnetconfig_lnd.c yaml_extract_o2ib_tun / yaml_extract_sock_tun: tcp reads only conns_per_peer);
    - file systems: fsname 1-8 characters (LUSTRE_MAXFSNAME, lustre_param.h). Lustre also allows '-', refused
      here: the render scopes llite and ldlm tunables with ``<fsname>-*``, which for fs ``a`` would also match fs
      ``a-b``. Names and mount points unique; a mount point is an absolute, normalised path other than ``/``
      without white space (an fstab field);
    - MGS: at least one node, each one or more NIDs (:func:`parse_nid`), no NID twice; every NID's network must
      be one of the LNet networks declared (LNet routers are not modelled, so a NID on another net is
      unreachable);
    - routes (``storage.lnet.networks[].routes``, rails networks only): IPv4 prefixes in CIDR notation with host
      bits zero (:func:`parse_route`), each once, sharing no address with the fabric's own pools
      (:func:`fabric_pools`: a route over a pool would shadow the rails' host-link route or send switch
      addresses to the storage). netplan puts them in each rail's routing table (hwaac.render.host.netplan);
    - MGS reachability over the rails: the address of an MGS NID on a network that runs over the rails must lie in
      the host-link block (``addressing.host_links.prefix``, which the rails' tables already route) or in one of
      that network's routes. ko2iblnd resolves a peer from the NI's own address (o2iblnd_cb.c
      ``kiblnd_connect_peer``) and RDMA CM routes with that source (Linux addr.c ``addr4_resolve``), so the
      ``from <rail address>`` rule selects the rail's table; a NID outside both is unreachable there. Not
      checked: host-name NIDs (resolved by mount.lustre on the node, unknown here; they are accepted) and NIDs
      on networks over named ``interfaces`` (routed by the host's own network configuration, not by hwaac);
    - mount options: non-empty single words (no white space, no ','; each option is one list item);
    - tunables: ``<osc|mdc|llite|ldlm.namespaces>.<param>`` with a parameter of lower-case letters, digits and
      '_' (dotted for nested ones such as ``pool.limit``), and a non-empty value without white space.
    """
    st = intent.storage
    if st is None:
        return []
    issues: list[IntentIssue] = []

    def add(rule: str, path: str, message: str, value: object, valid: str) -> None:
        issues.append(IntentIssue(path, message, value, valid, rule=rule))

    if not _VERSION.match(st.client_version):
        add(
            "storage-bad-client-version",
            "storage.client_version",
            "not a Lustre version",
            st.client_version,
            "numbers joined by dots, e.g. 2.15.5",
        )
    planes, rails = intent.fabric.planes, intent.fabric.rails
    pools = fabric_pools(intent)
    host_block = _ipv4_network(intent.addressing.host_links.prefix)
    nets: dict[str, str] = {}  # canonical net -> as written
    net_index: dict[str, int] = {}  # canonical net -> index of its (first) declaration
    routed: dict[int, list[netaddr.IPNetwork] | None] = {}  # rails network index -> its routes (None: a bad one)
    bad_net = False  # a network that is not o2ib[N]/tcp[N]: the MGS nets are then not checked against them
    for i, n in enumerate(st.lnet.networks):
        base = f"storage.lnet.networks[{i}]"
        key = lnet_net_key(n.net)
        if key is None:
            add("storage-bad-net", f"{base}.net", "not an LNet network hwaac configures", n.net, NET_VALID)
            bad_net = True
        elif key in nets:
            add(
                "storage-duplicate-net",
                f"{base}.net",
                f"the same network as {nets[key]!r} (LNet network {key})",
                n.net,
                f"a network other than {sorted(nets.values())}",
            )
        else:
            nets[key] = n.net
            net_index[key] = i
        count = 0
        if (n.rails is None) == (n.interfaces is None) or not (n.rails or n.interfaces):
            add(
                "storage-net-interfaces",
                base,
                "name either rails or interfaces, not both or neither, and not an empty list",
                {"rails": n.rails, "interfaces": n.interfaces},
                "rails: [0, 1, ...] (the fabric's rails) or interfaces: [eth2, ...]",
            )
        elif n.rails is not None:
            seen: set[int] = set()
            for j, r in enumerate(n.rails):
                if not 0 <= r < rails:
                    add("storage-bad-rail", f"{base}.rails[{j}]", "rail does not exist", r, f"0-{rails - 1}")
                elif r in seen:
                    add("storage-bad-rail", f"{base}.rails[{j}]", "rail listed twice", r, "each rail once")
                seen.add(r)
            count = len(n.rails) * planes
            routed[i] = _check_routes(n.routes or [], f"{base}.routes", pools, add)
        else:
            if n.routes is not None:
                add(
                    "storage-routes-without-rails",
                    f"{base}.routes",
                    "routes are only for a network on rails "
                    "(hwaac adds them to the rails' routing tables); a network on named interfaces is routed by "
                    "the host's own network configuration",
                    n.routes,
                    "no routes here, or rails instead of interfaces",
                )
            names: set[str] = set()
            for j, name in enumerate(n.interfaces or []):
                if not 1 <= len(name) <= 15 or _IFNAME_BAD.search(name) or name in (".", ".."):
                    add(
                        "storage-bad-interface",
                        f"{base}.interfaces[{j}]",
                        "not a Linux interface name",
                        name,
                        "1-15 characters without white space, '/', ':', ',' or parentheses, e.g. eth2",
                    )
                elif name in names:
                    add(
                        "storage-bad-interface",
                        f"{base}.interfaces[{j}]",
                        "interface listed twice",
                        name,
                        "each interface once",
                    )
                names.add(name)
            count = len(n.interfaces or [])
        if not n.multi_rail and count > 1:
            add(
                "storage-multi-rail-off",
                f"{base}.multi_rail",
                f"is false but the network has {count} interfaces "
                f"({'rails x planes' if n.rails is not None else 'interfaces'})",
                False,
                "true (LNet Multi-Rail), or a single interface",
            )
        lnd = key.rstrip("0123456789") if key else None
        if lnd is not None:
            allowed = LND_TUNABLES_READ[lnd]
            for name, value in n.lnd_tunables.model_dump(exclude_none=True).items():
                if name not in allowed:
                    add(
                        "storage-lnd-tunable-not-for-net",
                        f"{base}.lnd_tunables.{name}",
                        f"the {lnd} LND does not read it (lnetctl import ignores it)",
                        value,
                        f"{lnd} LND tunables: {', '.join(allowed)}",
                    )
    fs_names: dict[str, int] = {}
    mounts: dict[str, int] = {}
    for i, fs in enumerate(st.filesystems):
        base = f"storage.filesystems[{i}]"
        if not _FSNAME.match(fs.name):
            add(
                "storage-bad-fsname",
                f"{base}.name",
                "not a Lustre fsname hwaac accepts",
                fs.name,
                "1-8 letters, digits or '_' (no '-': tunables are scoped as <fsname>-*)",
            )
        elif fs.name in fs_names:
            add(
                "storage-duplicate-fs",
                f"{base}.name",
                f"already declared as storage.filesystems[{fs_names[fs.name]}]",
                fs.name,
                "a file system name not used before",
            )
        fs_names.setdefault(fs.name, i)
        mp = fs.mount_point
        if (
            not mp.startswith("/")
            or mp == "/"
            or posixpath.normpath(mp) != mp
            or mp.startswith("//")
            or any(c.isspace() or not c.isprintable() for c in mp)
        ):
            add(
                "storage-bad-mount-point",
                f"{base}.mount_point",
                "not a usable mount point",
                mp,
                "an absolute path without '..', '//', a trailing '/' or white space, other than /, e.g. /mnt/lfs1",
            )
        elif mp in mounts:
            add(
                "storage-duplicate-mount-point",
                f"{base}.mount_point",
                f"already used by storage.filesystems[{mounts[mp]}]",
                mp,
                "a mount point not used before",
            )
        mounts.setdefault(mp, i)
        if not fs.mgs:
            add(
                "storage-bad-nid",
                f"{base}.mgs",
                "no MGS node",
                fs.mgs,
                "one entry per MGS node, e.g. ['10.20.0.1@o2ib', '10.20.0.2@o2ib'] (primary, failover)",
            )
        seen_nids: set[str] = set()
        for j, node in enumerate(fs.mgs):
            for nid in node.split(","):
                parsed = parse_nid(nid)
                if parsed is None:
                    add(
                        "storage-bad-nid",
                        f"{base}.mgs[{j}]",
                        f"{nid!r} is not a NID",
                        node,
                        "comma-separated NIDs of one MGS node: <IPv4 or host name>@<o2ib[N] or tcp[N]>, "
                        "e.g. 10.20.0.1@o2ib,10.20.1.1@o2ib",
                    )
                    continue
                if nid in seen_nids:
                    add(
                        "storage-bad-nid",
                        f"{base}.mgs[{j}]",
                        f"NID {nid} given twice",
                        node,
                        "each NID once (a failover MGS node is its own entry)",
                    )
                seen_nids.add(nid)
                if parsed[1] not in nets and not bad_net:
                    declared = ", ".join(nets.values()) or "none"
                    add(
                        "storage-mgs-net-not-configured",
                        f"{base}.mgs[{j}]",
                        f"NID {nid} is on LNet network {parsed[1]}, which storage.lnet.networks does not declare "
                        f"(declared: {declared})",
                        node,
                        f"a NID on {' or '.join(nets.values())}"
                        if nets
                        else f"declare {parsed[1]} in storage.lnet.networks",
                    )
                    continue
                k = net_index.get(parsed[1])
                routes = routed.get(k) if k is not None else None
                if k is None or routes is None or host_block is None or not netaddr.valid_ipv4(parsed[0]):
                    continue  # not a rails network, a bad route or pool reported already, or a host name
                ip = netaddr.IPAddress(parsed[0])
                if ip in host_block or any(ip in r for r in routes):
                    continue
                add(
                    "storage-mgs-not-routed",
                    f"{base}.mgs[{j}]",
                    f"NID {nid} is on {st.lnet.networks[k].net}, which runs over the rails, but lies outside the "
                    f"host-link block {host_block} and the network's routes ({', '.join(map(str, routes)) or 'none'})"
                    ": the rails' routing tables have no route to it",
                    node,
                    f"add its prefix to storage.lnet.networks[{k}].routes (the storage servers' subnet, e.g. "
                    f"{netaddr.IPNetwork(f'{ip}/16').cidr}), or a NID in {host_block}",
                )
        for j, opt in enumerate(fs.options):
            if not opt or "," in opt or any(c.isspace() or not c.isprintable() for c in opt):
                add(
                    "storage-bad-mount-option",
                    f"{base}.options[{j}]",
                    "not a single mount option",
                    opt,
                    "one option per list item, without spaces or commas, e.g. [flock, noatime]",
                )
        for key_, value in fs.tunables.items():
            path = f"{base}.tunables.{key_}"
            if not _TUNABLE.match(key_):
                add(
                    "storage-bad-tunable",
                    path,
                    "not a client parameter hwaac can scope to the file system",
                    key_,
                    "<type>.<parameter> with type " + ", ".join(TUNABLE_TYPES) + ", e.g. osc.max_rpcs_in_flight",
                )
            text = str(value)
            if not text or any(c.isspace() or not c.isprintable() for c in text):
                add(
                    "storage-bad-tunable",
                    path,
                    "value is empty or contains white space",
                    value,
                    "a single word or number, e.g. 32 or 16M",
                )
    return issues


def _check_routes(
    routes: list[str],
    path: str,
    pools: list[tuple[str, netaddr.IPNetwork]],
    add: Callable[[str, str, str, object, str], None],
) -> list[netaddr.IPNetwork] | None:
    """Check one rails network's ``routes`` (reported through ``add``); its parsed prefixes, or None when one of
    them is bad (the MGS reachability check then stays quiet instead of reporting the consequence)."""
    out: list[netaddr.IPNetwork] = []
    ok = True
    seen: set[str] = set()
    for j, text in enumerate(routes):
        net, message, valid = parse_route(text)
        if net is None:
            add("storage-bad-route", f"{path}[{j}]", message, text, valid)
            ok = False
            continue
        if text in seen:
            add("storage-bad-route", f"{path}[{j}]", "route listed twice", text, "each prefix once")
            ok = False
            continue
        seen.add(text)
        for pool_path, pool in pools:
            if net.first <= pool.last and pool.first <= net.last:
                add(
                    "storage-route-overlaps-pool",
                    f"{path}[{j}]",
                    f"overlaps {pool_path} ({pool}), a pool of the fabric itself",
                    text,
                    "a prefix of the storage servers that shares no address with the fabric's pools "
                    "(addressing.loopbacks, leaf_spine, spine_super_spine, host_links)",
                )
                ok = False
        out.append(net)
    return out if ok else None
