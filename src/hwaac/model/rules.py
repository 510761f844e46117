"""Semantic rules on the intent alone (no derived topology): QoS, host profile and appliances.

Each rule has an id (``IntentIssue.rule``) listed in :data:`RULES`; the rules that need the derived fabric
(switch fit, pools, ASNs, names) live in :mod:`hwaac.plan.rules`. Sources of the constraints:

- QoS: one lossless priority with PFC and ECN, CNP on its own strict priority (NVIDIA RoCE lossless
  defaults, Cumulus/Onyx); priority 0 carries every unclassified DSCP in the rendered maps, so neither RoCE nor
  CNP may use it; PFC watchdog times >= the poll interval (sonic-pfcwd.yang);
- routing: tables 253-255 are the kernel's default/main/local, rule 32766 is "from all lookup main"
  (iproute2 rt_tables, ip-rule(8));
- NIC: mlxconfig CNP_DSCP_P1 / CNP_802P_PRIO_P1 must match the switch's CNP DSCP and priority;
- storage (Lustre clients): see :func:`check_storage`;
- SONiC release per switch role: :func:`hwaac.model.sonic_releases.check_sonic`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

import netaddr

from hwaac.errors import IntentIssue
from hwaac.model.intent import Intent
from hwaac.model.patterns import HCA_NAME, HCA_VALID, IFNAME_VALID, ifname_problem, pattern_problem
from hwaac.model.sonic_releases import RULES as SONIC_RULES
from hwaac.model.sonic_releases import check_sonic

RULES: dict[str, str] = {
    "dscp-out-of-range": "RoCE DSCP values are 0-63",
    "cnp-shares-roce-dscp": "CNP uses a DSCP of its own",
    "cnp-priority-is-lossless": "CNP uses a priority other than the lossless one",
    "priority-zero-reserved": "priority 0 carries unclassified traffic; RoCE, CNP and PFC may not use it",
    "pfc-priority-out-of-range": "PFC priorities are 0-7",
    "pfc-not-on-lossless": "PFC is enabled on the lossless priority",
    "pfc-on-cnp-priority": "PFC is not enabled on the CNP priority",
    "ecn-min-above-max": "ECN min threshold below max",
    "pfcwd-below-poll": "PFC watchdog detection/restoration times >= poll interval",
    "host-mtu-above-switch": "host MTU <= switch MTU",
    "bad-interface-pattern": "host interface/HCA patterns use only {rail}, {plane}, {port}",
    "bad-interface-name": "host interface names are Linux interface names (at most 15 characters), HCA names RDMA "
                          "device names",
    "host-port-names-not-unique": "every NIC port of a host gets its own interface and HCA name",
    "host-ecn-priority-out-of-range": "host ECN priorities are 0-7",
    "routing-table-reserved": "per-rail routing tables stay below 253",
    "rule-priority-after-main": "per-rail source rules come before the main table's rule 32766",
    "host-sysctl-bad": "host sysctls are sysctl names with one-line values (sysctl.d(5))",
    "nccl-env-bad-name": "NCCL variables are upper-case identifiers",
    "nccl-env-line-break": "NCCL values are one line",
    "nic-cnp-mismatch": "NIC firmware CNP DSCP/priority equal the switch QoS",
    "host-tos-not-roce-dscp": "the host ToS carries a RoCE DSCP of qos.roce_dscp",
    "host-tos-not-ect": "the host ToS marks packets ECN-capable (ECT(0) or ECT(1))",
    "host-ecn-misses-lossless": "host ECN (DCQCN) is on for the lossless priority",
    "host-trust-not-dscp": "hosts trust DSCP: routed rails carry no VLAN tag, so PCP is always 0",
    "lossless-queue-not-sonic": "lossless priorities are 3 or 4, the queues SONiC's buffer templates make lossless",
    "appliance-bad-su": "appliances sit in an existing SU",
    "appliance-bad-slot": "appliances sit in an existing slot",
    "appliance-bad-rail": "appliances use existing rails",
    "appliance-slot-taken": "one appliance per slot",
    "too-many-nodes": "fabric.nodes fits the free slots",
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
    **SONIC_RULES,
}


HOST_PATTERN_FIELDS = ("rail", "plane", "port")  # host.interface_name and host.hca_name (hwaac.plan.cabling)


def check_intent(intent: Intent) -> list[IntentIssue]:
    """Issues found in the intent alone (empty when none)."""
    return (check_qos(intent) + check_host(intent) + check_appliances(intent) + check_storage(intent)
            + check_sonic(intent))


def check_qos(intent: Intent) -> list[IntentIssue]:
    q = intent.qos
    issues: list[IntentIssue] = []

    def add(rule: str, path: str, message: str, value: object, valid: str) -> None:
        issues.append(IntentIssue(path, message, value, valid, rule=rule))

    for i, v in enumerate(q.roce_dscp):
        if not 0 <= v <= 63:
            add("dscp-out-of-range", f"qos.roce_dscp[{i}]", "DSCP out of range", v, "0-63")
    if q.cnp_dscp in q.roce_dscp:
        add("cnp-shares-roce-dscp", "qos.cnp_dscp", "CNP must use a DSCP other than RoCE data", q.cnp_dscp,
            f"a DSCP not in {q.roce_dscp}")
    if q.lossless_priority == q.cnp_priority:
        add("cnp-priority-is-lossless", "qos.cnp_priority", "CNP needs its own (strict) priority", q.cnp_priority,
            f"a priority other than {q.lossless_priority}")
    for path, value in (("qos.lossless_priority", q.lossless_priority), ("qos.cnp_priority", q.cnp_priority)):
        if value == 0:
            add("priority-zero-reserved", path, "priority 0 carries every unclassified DSCP (the lossy default)",
                value, "1-7")
    for i, p in enumerate(q.pfc_priorities):
        if not 0 <= p <= 7:
            add("pfc-priority-out-of-range", f"qos.pfc_priorities[{i}]", "priority out of range", p, "0-7")
        elif p == 0:
            add("priority-zero-reserved", f"qos.pfc_priorities[{i}]",
                "PFC on priority 0 would pause all unclassified traffic", p, "1-7")
    if 0 in q.roce_dscp:
        add("priority-zero-reserved", "qos.roce_dscp", "DSCP 0 is unmarked traffic; it cannot be RoCE",
            q.roce_dscp, "DSCP values 1-63, e.g. [26]")
    # SONiC's buffers_config.j2 gives egress queues 3-4 the lossless profile and every other queue a lossy one
    # (BUFFER_QUEUE <port>|3-4 egress_lossless_profile), so PFC elsewhere would pause into a dropping queue.
    for i, p in enumerate(q.pfc_priorities):
        if p not in (0, 3, 4) and 0 <= p <= 7:
            add("lossless-queue-not-sonic", f"qos.pfc_priorities[{i}]",
                "SONiC's buffer templates make only queues 3 and 4 lossless", p, "3 or 4")
    if q.lossless_priority not in q.pfc_priorities:
        add("pfc-not-on-lossless", "qos.pfc_priorities", "PFC must be enabled on the lossless priority",
            q.pfc_priorities, f"a list containing {q.lossless_priority}")
    if q.cnp_priority in q.pfc_priorities:
        add("pfc-on-cnp-priority", "qos.pfc_priorities", "PFC on the CNP priority would pause CNPs",
            q.pfc_priorities, f"a list without {q.cnp_priority}")
    if q.ecn.min_threshold_bytes >= q.ecn.max_threshold_bytes:
        add("ecn-min-above-max", "qos.ecn.min_threshold_bytes", "must be below max_threshold_bytes",
            q.ecn.min_threshold_bytes, f"< {q.ecn.max_threshold_bytes}")
    wd = q.pfc_watchdog
    for name in ("detection_time_ms", "restoration_time_ms"):
        if getattr(wd, name) < wd.poll_interval_ms:
            add("pfcwd-below-poll", f"qos.pfc_watchdog.{name}", "must be at least poll_interval_ms",
                getattr(wd, name), f">= {wd.poll_interval_ms}")
    if q.host_mtu > q.switch_mtu:
        add("host-mtu-above-switch", "qos.host_mtu", "host MTU above the switch MTU would drop large frames",
            q.host_mtu, f"4200-{q.switch_mtu}")
    return issues


def check_host(intent: Intent) -> list[IntentIssue]:
    h, f, q = intent.host, intent.fabric, intent.qos
    issues: list[IntentIssue] = []

    def add(rule: str, path: str, message: str, value: object, valid: str) -> None:
        issues.append(IntentIssue(path, message, value, valid, rule=rule))

    ports = [(rail, plane, rail * f.planes + plane) for rail in range(f.rails) for plane in range(f.planes)]
    for name, pattern in (("interface_name", h.interface_name), ("hca_name", h.hca_name)):
        problem = pattern_problem(pattern, HOST_PATTERN_FIELDS)
        if problem is not None:
            add("bad-interface-pattern", f"host.{name}", f"bad pattern: {problem}", pattern,
                "a format string using {rail}, {plane} or {port}, e.g. rail{rail}")
            continue
        names = [pattern.format(rail=r, plane=p, port=n) for r, p, n in ports]
        bad = next(((n, why) for n in names if (why := _port_name_problem(name, n)) is not None), None)
        if bad is not None:
            add("bad-interface-name", f"host.{name}", f"makes the name {bad[0]!r}: {bad[1]}", pattern,
                IFNAME_VALID if name == "interface_name" else HCA_VALID)
            continue
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            add("host-port-names-not-unique", f"host.{name}",
                f"gives {len(ports)} NIC ports only {len(set(names))} names (e.g. {dupes[0]!r} twice)", pattern,
                "a pattern with {port}, or {rail} and {plane} when planes > 1, e.g. rail{rail}p{plane}")
    for i, p in enumerate(h.ecn_priorities or []):
        if not 0 <= p <= 7:
            add("host-ecn-priority-out-of-range", f"host.ecn_priorities[{i}]", "priority out of range", p, "0-7")
    nics, r = len(ports), h.routing
    last_table = r.table_base + nics - 1
    if last_table > 252:
        add("routing-table-reserved", "host.routing.table_base",
            f"{nics} NIC ports would use tables up to {last_table}, reaching the kernel's default/main/local "
            "tables (253-255)", r.table_base, f"1-{253 - nics}")
    last_prio = r.rule_priority_base + (nics - 1) * r.rule_priority_step
    if last_prio >= 32766:
        add("rule-priority-after-main", "host.routing.rule_priority_base",
            f"the last source rule priority {last_prio} would not come before the main table's rule (32766)",
            r.rule_priority_base, f"<= {32765 - (nics - 1) * r.rule_priority_step}")
    # sysctl.d(5): one "key = value" per line; a key or value with a line break would add settings of its own
    for key, value in h.sysctl.items():
        if not _SYSCTL_KEY.match(key):
            add("host-sysctl-bad", f"host.sysctl.{key}", "not a sysctl name", key,
                "dotted or slash-separated letters, digits, '_', '-' or '*', e.g. net.ipv4.conf.all.arp_ignore")
        elif not str(value) or not str(value).isprintable():
            add("host-sysctl-bad", f"host.sysctl.{key}", "value is empty or holds a line break or control "
                "character", value, "one line, e.g. 2")
    for key, value in h.nccl_env.items():
        if not key.isidentifier() or not key.isupper():
            add("nccl-env-bad-name", f"host.nccl_env.{key}", "not an environment variable name", key,
                "upper-case letters, digits and '_', e.g. NCCL_IB_QPS_PER_CONNECTION")
        if "\n" in value or "\r" in value:
            add("nccl-env-line-break", f"host.nccl_env.{key}", "value contains a line break", value, "one line")
    # The NIC's firmware CNP marking must agree with the switch QoS, or CNPs land in the wrong queue.
    for param, field, want in (("CNP_DSCP_P1", "qos.cnp_dscp", q.cnp_dscp),
                               ("CNP_802P_PRIO_P1", "qos.cnp_priority", q.cnp_priority)):
        have = h.mlxconfig.get(param)
        if have is not None and str(have) != str(want):
            add("nic-cnp-mismatch", f"host.mlxconfig.{param}", f"disagrees with the switch QoS ({field} is {want})",
                have, str(want))
    # The host's RoCE marking must land in the switch's lossless class and be ECN-capable, or DCQCN never reacts
    # and the WRED profile (ecn_all) drops instead of marking: ToS = DSCP << 2 | ECN bits (RFC 3168).
    tos = h.roce_tos
    if tos is not None:
        if tos >> 2 not in q.roce_dscp:
            add("host-tos-not-roce-dscp", "host.roce_tos", f"carries DSCP {tos >> 2}, not a RoCE DSCP of qos.roce_dscp "
                f"{q.roce_dscp}", tos, f"{q.roce_dscp[0] << 2 | 2} (DSCP {q.roce_dscp[0]} with ECT(0))")
        if tos & 3 not in (1, 2):
            add("host-tos-not-ect", "host.roce_tos", "its ECN bits do not mark packets ECN-capable "
                f"({'CE' if tos & 3 == 3 else 'Not-ECT'})", tos, f"{tos & ~3 | 2} (ECT(0))")
    if h.ecn_priorities is not None and q.lossless_priority not in h.ecn_priorities:
        add("host-ecn-misses-lossless", "host.ecn_priorities", "ECN (DCQCN) is off for the lossless priority",
            h.ecn_priorities, f"a list containing {q.lossless_priority}")
    if h.trust != "dscp":
        add("host-trust-not-dscp", "host.trust", "routed rails are untagged, so PCP is always 0", h.trust, "dscp")
    return issues


def _port_name_problem(field: str, name: str) -> str | None:
    if field == "interface_name":
        return ifname_problem(name)
    return None if HCA_NAME.match(name) else "not an RDMA device name"


def check_appliances(intent: Intent) -> list[IntentIssue]:
    f = intent.fabric
    issues: list[IntentIssue] = []

    def add(rule: str, path: str, message: str, value: object, valid: str) -> None:
        issues.append(IntentIssue(path, message, value, valid, rule=rule))

    seen: dict[tuple[int, int], str] = {}
    for i, a in enumerate(f.appliances):
        if a.su > f.su_count:
            add("appliance-bad-su", f"fabric.appliances[{i}].su", "SU does not exist", a.su, f"1-{f.su_count}")
        if a.slot > f.nodes_per_su:
            add("appliance-bad-slot", f"fabric.appliances[{i}].slot", "slot does not exist", a.slot,
                f"1-{f.nodes_per_su}")
        for j, r in enumerate(a.rails):
            if not 0 <= r < f.rails:
                add("appliance-bad-rail", f"fabric.appliances[{i}].rails[{j}]", "rail does not exist", r,
                    f"0-{f.rails - 1}")
        if (a.su, a.slot) in seen:
            add("appliance-slot-taken", f"fabric.appliances[{i}].slot", f"slot already taken by {seen[a.su, a.slot]}",
                a.slot, "a free slot")
        seen[a.su, a.slot] = a.name
    free = f.su_count * f.nodes_per_su - len(seen)
    if f.nodes is not None and f.nodes > free:
        add("too-many-nodes", "fabric.nodes", f"more nodes than free slots in {f.su_count} SU(s)", f.nodes,
            f"0-{free}")
    return issues


# --- storage (Lustre clients) -----------------------------------------------------------------------------

_SYSCTL_KEY = re.compile(r"^-?[A-Za-z0-9_*]([A-Za-z0-9_*./-]*[A-Za-z0-9_*])?$")
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
        add("storage-bad-client-version", "storage.client_version", "not a Lustre version", st.client_version,
            "numbers joined by dots, e.g. 2.15.5")
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
            add("storage-duplicate-net", f"{base}.net", f"the same network as {nets[key]!r} (LNet network "
                f"{key})", n.net, f"a network other than {sorted(nets.values())}")
        else:
            nets[key] = n.net
            net_index[key] = i
        count = 0
        if (n.rails is None) == (n.interfaces is None) or not (n.rails or n.interfaces):
            add("storage-net-interfaces", base, "name either rails or interfaces, not both or neither, and not "
                "an empty list", {"rails": n.rails, "interfaces": n.interfaces},
                "rails: [0, 1, ...] (the fabric's rails) or interfaces: [eth2, ...]")
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
                add("storage-routes-without-rails", f"{base}.routes", "routes are only for a network on rails "
                    "(hwaac adds them to the rails' routing tables); a network on named interfaces is routed by "
                    "the host's own network configuration", n.routes,
                    "no routes here, or rails instead of interfaces")
            names: set[str] = set()
            for j, name in enumerate(n.interfaces or []):
                if not 1 <= len(name) <= 15 or _IFNAME_BAD.search(name) or name in (".", ".."):
                    add("storage-bad-interface", f"{base}.interfaces[{j}]", "not a Linux interface name", name,
                        "1-15 characters without white space, '/', ':', ',' or parentheses, e.g. eth2")
                elif name in names:
                    add("storage-bad-interface", f"{base}.interfaces[{j}]", "interface listed twice", name,
                        "each interface once")
                names.add(name)
            count = len(n.interfaces or [])
        if not n.multi_rail and count > 1:
            add("storage-multi-rail-off", f"{base}.multi_rail", f"is false but the network has {count} interfaces "
                f"({'rails x planes' if n.rails is not None else 'interfaces'})", False,
                "true (LNet Multi-Rail), or a single interface")
        lnd = key.rstrip("0123456789") if key else None
        if lnd is not None:
            allowed = LND_TUNABLES_READ[lnd]
            for name, value in n.lnd_tunables.model_dump(exclude_none=True).items():
                if name not in allowed:
                    add("storage-lnd-tunable-not-for-net", f"{base}.lnd_tunables.{name}",
                        f"the {lnd} LND does not read it (lnetctl import ignores it)", value,
                        f"{lnd} LND tunables: {', '.join(allowed)}")
    fs_names: dict[str, int] = {}
    mounts: dict[str, int] = {}
    for i, fs in enumerate(st.filesystems):
        base = f"storage.filesystems[{i}]"
        if not _FSNAME.match(fs.name):
            add("storage-bad-fsname", f"{base}.name", "not a Lustre fsname hwaac accepts", fs.name,
                "1-8 letters, digits or '_' (no '-': tunables are scoped as <fsname>-*)")
        elif fs.name in fs_names:
            add("storage-duplicate-fs", f"{base}.name", f"already declared as storage.filesystems[{fs_names[fs.name]}]",
                fs.name, "a file system name not used before")
        fs_names.setdefault(fs.name, i)
        mp = fs.mount_point
        if (not mp.startswith("/") or mp == "/" or posixpath.normpath(mp) != mp or mp.startswith("//")
                or any(c.isspace() or not c.isprintable() for c in mp)):
            add("storage-bad-mount-point", f"{base}.mount_point", "not a usable mount point", mp,
                "an absolute path without '..', '//', a trailing '/' or white space, other than /, e.g. /mnt/lfs1")
        elif mp in mounts:
            add("storage-duplicate-mount-point", f"{base}.mount_point",
                f"already used by storage.filesystems[{mounts[mp]}]", mp, "a mount point not used before")
        mounts.setdefault(mp, i)
        if not fs.mgs:
            add("storage-bad-nid", f"{base}.mgs", "no MGS node", fs.mgs,
                "one entry per MGS node, e.g. ['10.20.0.1@o2ib', '10.20.0.2@o2ib'] (primary, failover)")
        seen_nids: set[str] = set()
        for j, node in enumerate(fs.mgs):
            for nid in node.split(","):
                parsed = parse_nid(nid)
                if parsed is None:
                    add("storage-bad-nid", f"{base}.mgs[{j}]", f"{nid!r} is not a NID", node,
                        "comma-separated NIDs of one MGS node: <IPv4 or host name>@<o2ib[N] or tcp[N]>, "
                        "e.g. 10.20.0.1@o2ib,10.20.1.1@o2ib")
                    continue
                if nid in seen_nids:
                    add("storage-bad-nid", f"{base}.mgs[{j}]", f"NID {nid} given twice", node,
                        "each NID once (a failover MGS node is its own entry)")
                seen_nids.add(nid)
                if parsed[1] not in nets and not bad_net:
                    declared = ", ".join(nets.values()) or "none"
                    add("storage-mgs-net-not-configured", f"{base}.mgs[{j}]",
                        f"NID {nid} is on LNet network {parsed[1]}, which storage.lnet.networks does not declare "
                        f"(declared: {declared})", node,
                        f"a NID on {' or '.join(nets.values())}" if nets else
                        f"declare {parsed[1]} in storage.lnet.networks")
                    continue
                k = net_index.get(parsed[1])
                routes = routed.get(k) if k is not None else None
                if routes is None or host_block is None or not netaddr.valid_ipv4(parsed[0]):
                    continue  # not a rails network, a bad route or pool reported already, or a host name
                ip = netaddr.IPAddress(parsed[0])
                if ip in host_block or any(ip in r for r in routes):
                    continue
                add("storage-mgs-not-routed", f"{base}.mgs[{j}]",
                    f"NID {nid} is on {st.lnet.networks[k].net}, which runs over the rails, but lies outside the "
                    f"host-link block {host_block} and the network's routes ({', '.join(map(str, routes)) or 'none'})"
                    ": the rails' routing tables have no route to it", node,
                    f"add its prefix to storage.lnet.networks[{k}].routes (the storage servers' subnet, e.g. "
                    f"{netaddr.IPNetwork(f'{ip}/16').cidr}), or a NID in {host_block}")
        for j, opt in enumerate(fs.options):
            if not opt or "," in opt or any(c.isspace() or not c.isprintable() for c in opt):
                add("storage-bad-mount-option", f"{base}.options[{j}]", "not a single mount option", opt,
                    "one option per list item, without spaces or commas, e.g. [flock, noatime]")
        for key_, value in fs.tunables.items():
            path = f"{base}.tunables.{key_}"
            if not _TUNABLE.match(key_):
                add("storage-bad-tunable", path, "not a client parameter hwaac can scope to the file system", key_,
                    "<type>.<parameter> with type " + ", ".join(TUNABLE_TYPES) + ", e.g. osc.max_rpcs_in_flight")
            text = str(value)
            if not text or any(c.isspace() or not c.isprintable() for c in text):
                add("storage-bad-tunable", path, "value is empty or contains white space", value,
                    "a single word or number, e.g. 32 or 16M")
    return issues


def _check_routes(routes: list[str], path: str, pools: list[tuple[str, netaddr.IPNetwork]],
                  add: Callable[[str, str, str, object, str], None]) -> list[netaddr.IPNetwork] | None:
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
                add("storage-route-overlaps-pool", f"{path}[{j}]",
                    f"overlaps {pool_path} ({pool}), a pool of the fabric itself", text,
                    "a prefix of the storage servers that shares no address with the fabric's pools "
                    "(addressing.loopbacks, leaf_spine, spine_super_spine, host_links)")
                ok = False
        out.append(net)
    return out if ok else None
