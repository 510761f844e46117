"""Semantic rules on the intent alone (no derived topology): QoS, host profile and appliances.

Each rule has an id (``IntentIssue.rule``) listed in :data:`RULES`; the rules that need the derived fabric
(switch fit, pools, ASNs, names) live in :mod:`hwaac.plan.rules`, the storage rules in
:func:`hwaac.model.storage_rules.check_storage` and the SONiC release rules in
:func:`hwaac.model.sonic_releases.check_sonic`. The sources of the QoS, routing and NIC constraints (NVIDIA RoCE
lossless defaults, sonic-pfcwd.yang, iproute2's rt_tables and ip-rule(8), mlxconfig): docs/intent-sources.md.
"""

from __future__ import annotations

import re

from hwaac.errors import IntentIssue
from hwaac.model.intent import Intent
from hwaac.model.patterns import HCA_NAME, HCA_VALID, IFNAME_VALID, ifname_problem, pattern_problem
from hwaac.model.sonic_releases import RULES as SONIC_RULES
from hwaac.model.sonic_releases import check_sonic
from hwaac.model.storage_rules import RULES as STORAGE_RULES
from hwaac.model.storage_rules import check_storage

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
    **STORAGE_RULES,
    **SONIC_RULES,
}


_SYSCTL_KEY = re.compile(r"^-?[A-Za-z0-9_*]([A-Za-z0-9_*./-]*[A-Za-z0-9_*])?$")
HOST_PATTERN_FIELDS = ("rail", "plane", "port")  # host.interface_name and host.hca_name (hwaac.plan.cabling)


def check_intent(intent: Intent) -> list[IntentIssue]:
    """Issues found in the intent alone (empty when none)."""
    return (
        check_qos(intent) + check_host(intent) + check_appliances(intent) + check_storage(intent) + check_sonic(intent)
    )


def check_qos(intent: Intent) -> list[IntentIssue]:
    q = intent.qos
    issues: list[IntentIssue] = []

    def add(rule: str, path: str, message: str, value: object, valid: str) -> None:
        issues.append(IntentIssue(path, message, value, valid, rule=rule))

    for i, v in enumerate(q.roce_dscp):
        if not 0 <= v <= 63:
            add("dscp-out-of-range", f"qos.roce_dscp[{i}]", "DSCP out of range", v, "0-63")
    if q.cnp_dscp in q.roce_dscp:
        add(
            "cnp-shares-roce-dscp",
            "qos.cnp_dscp",
            "CNP must use a DSCP other than RoCE data",
            q.cnp_dscp,
            f"a DSCP not in {q.roce_dscp}",
        )
    if q.lossless_priority == q.cnp_priority:
        add(
            "cnp-priority-is-lossless",
            "qos.cnp_priority",
            "CNP needs its own (strict) priority",
            q.cnp_priority,
            f"a priority other than {q.lossless_priority}",
        )
    for path, value in (("qos.lossless_priority", q.lossless_priority), ("qos.cnp_priority", q.cnp_priority)):
        if value == 0:
            add(
                "priority-zero-reserved",
                path,
                "priority 0 carries every unclassified DSCP (the lossy default)",
                value,
                "1-7",
            )
    for i, p in enumerate(q.pfc_priorities):
        if not 0 <= p <= 7:
            add("pfc-priority-out-of-range", f"qos.pfc_priorities[{i}]", "priority out of range", p, "0-7")
        elif p == 0:
            add(
                "priority-zero-reserved",
                f"qos.pfc_priorities[{i}]",
                "PFC on priority 0 would pause all unclassified traffic",
                p,
                "1-7",
            )
    if 0 in q.roce_dscp:
        add(
            "priority-zero-reserved",
            "qos.roce_dscp",
            "DSCP 0 is unmarked traffic; it cannot be RoCE",
            q.roce_dscp,
            "DSCP values 1-63, e.g. [26]",
        )
    # SONiC's buffers_config.j2 gives egress queues 3-4 the lossless profile and every other queue a lossy one
    # (BUFFER_QUEUE <port>|3-4 egress_lossless_profile), so PFC elsewhere would pause into a dropping queue.
    for i, p in enumerate(q.pfc_priorities):
        if p not in (0, 3, 4) and 0 <= p <= 7:
            add(
                "lossless-queue-not-sonic",
                f"qos.pfc_priorities[{i}]",
                "SONiC's buffer templates make only queues 3 and 4 lossless",
                p,
                "3 or 4",
            )
    if q.lossless_priority not in q.pfc_priorities:
        add(
            "pfc-not-on-lossless",
            "qos.pfc_priorities",
            "PFC must be enabled on the lossless priority",
            q.pfc_priorities,
            f"a list containing {q.lossless_priority}",
        )
    if q.cnp_priority in q.pfc_priorities:
        add(
            "pfc-on-cnp-priority",
            "qos.pfc_priorities",
            "PFC on the CNP priority would pause CNPs",
            q.pfc_priorities,
            f"a list without {q.cnp_priority}",
        )
    if q.ecn.min_threshold_bytes >= q.ecn.max_threshold_bytes:
        add(
            "ecn-min-above-max",
            "qos.ecn.min_threshold_bytes",
            "must be below max_threshold_bytes",
            q.ecn.min_threshold_bytes,
            f"< {q.ecn.max_threshold_bytes}",
        )
    wd = q.pfc_watchdog
    for name in ("detection_time_ms", "restoration_time_ms"):
        if getattr(wd, name) < wd.poll_interval_ms:
            add(
                "pfcwd-below-poll",
                f"qos.pfc_watchdog.{name}",
                "must be at least poll_interval_ms",
                getattr(wd, name),
                f">= {wd.poll_interval_ms}",
            )
    if q.host_mtu > q.switch_mtu:
        add(
            "host-mtu-above-switch",
            "qos.host_mtu",
            "host MTU above the switch MTU would drop large frames",
            q.host_mtu,
            f"4200-{q.switch_mtu}",
        )
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
            add(
                "bad-interface-pattern",
                f"host.{name}",
                f"bad pattern: {problem}",
                pattern,
                "a format string using {rail}, {plane} or {port}, e.g. rail{rail}",
            )
            continue
        names = [pattern.format(rail=r, plane=p, port=n) for r, p, n in ports]
        bad = next(((n, why) for n in names if (why := _port_name_problem(name, n)) is not None), None)
        if bad is not None:
            add(
                "bad-interface-name",
                f"host.{name}",
                f"makes the name {bad[0]!r}: {bad[1]}",
                pattern,
                IFNAME_VALID if name == "interface_name" else HCA_VALID,
            )
            continue
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            add(
                "host-port-names-not-unique",
                f"host.{name}",
                f"gives {len(ports)} NIC ports only {len(set(names))} names (e.g. {dupes[0]!r} twice)",
                pattern,
                "a pattern with {port}, or {rail} and {plane} when planes > 1, e.g. rail{rail}p{plane}",
            )
    for i, p in enumerate(h.ecn_priorities or []):
        if not 0 <= p <= 7:
            add("host-ecn-priority-out-of-range", f"host.ecn_priorities[{i}]", "priority out of range", p, "0-7")
    nics, r = len(ports), h.routing
    last_table = r.table_base + nics - 1
    if last_table > 252:
        add(
            "routing-table-reserved",
            "host.routing.table_base",
            f"{nics} NIC ports would use tables up to {last_table}, reaching the kernel's default/main/local "
            "tables (253-255)",
            r.table_base,
            f"1-{253 - nics}",
        )
    last_prio = r.rule_priority_base + (nics - 1) * r.rule_priority_step
    if last_prio >= 32766:
        add(
            "rule-priority-after-main",
            "host.routing.rule_priority_base",
            f"the last source rule priority {last_prio} would not come before the main table's rule (32766)",
            r.rule_priority_base,
            f"<= {32765 - (nics - 1) * r.rule_priority_step}",
        )
    # sysctl.d(5): one "key = value" per line; a key or value with a line break would add settings of its own
    for key, value in h.sysctl.items():
        if not _SYSCTL_KEY.match(key):
            add(
                "host-sysctl-bad",
                f"host.sysctl.{key}",
                "not a sysctl name",
                key,
                "dotted or slash-separated letters, digits, '_', '-' or '*', e.g. net.ipv4.conf.all.arp_ignore",
            )
        elif not str(value) or not str(value).isprintable():
            add(
                "host-sysctl-bad",
                f"host.sysctl.{key}",
                "value is empty or holds a line break or control character",
                value,
                "one line, e.g. 2",
            )
    for key, value in h.nccl_env.items():
        if not key.isidentifier() or not key.isupper():
            add(
                "nccl-env-bad-name",
                f"host.nccl_env.{key}",
                "not an environment variable name",
                key,
                "upper-case letters, digits and '_', e.g. NCCL_IB_QPS_PER_CONNECTION",
            )
        if "\n" in value or "\r" in value:
            add("nccl-env-line-break", f"host.nccl_env.{key}", "value contains a line break", value, "one line")
    # The NIC's firmware CNP marking must agree with the switch QoS, or CNPs land in the wrong queue.
    for param, field, want in (
        ("CNP_DSCP_P1", "qos.cnp_dscp", q.cnp_dscp),
        ("CNP_802P_PRIO_P1", "qos.cnp_priority", q.cnp_priority),
    ):
        have = h.mlxconfig.get(param)
        if have is not None and str(have) != str(want):
            add(
                "nic-cnp-mismatch",
                f"host.mlxconfig.{param}",
                f"disagrees with the switch QoS ({field} is {want})",
                have,
                str(want),
            )
    # The host's RoCE marking must land in the switch's lossless class and be ECN-capable, or DCQCN never reacts
    # and the WRED profile (ecn_all) drops instead of marking: ToS = DSCP << 2 | ECN bits (RFC 3168).
    tos = h.roce_tos
    if tos is not None:
        if tos >> 2 not in q.roce_dscp:
            add(
                "host-tos-not-roce-dscp",
                "host.roce_tos",
                f"carries DSCP {tos >> 2}, not a RoCE DSCP of qos.roce_dscp {q.roce_dscp}",
                tos,
                f"{q.roce_dscp[0] << 2 | 2} (DSCP {q.roce_dscp[0]} with ECT(0))",
            )
        if tos & 3 not in (1, 2):
            add(
                "host-tos-not-ect",
                "host.roce_tos",
                f"its ECN bits do not mark packets ECN-capable ({'CE' if tos & 3 == 3 else 'Not-ECT'})",
                tos,
                f"{tos & ~3 | 2} (ECT(0))",
            )
    if h.ecn_priorities is not None and q.lossless_priority not in h.ecn_priorities:
        add(
            "host-ecn-misses-lossless",
            "host.ecn_priorities",
            "ECN (DCQCN) is off for the lossless priority",
            h.ecn_priorities,
            f"a list containing {q.lossless_priority}",
        )
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
            add(
                "appliance-bad-slot",
                f"fabric.appliances[{i}].slot",
                "slot does not exist",
                a.slot,
                f"1-{f.nodes_per_su}",
            )
        for j, r in enumerate(a.rails):
            if not 0 <= r < f.rails:
                add(
                    "appliance-bad-rail",
                    f"fabric.appliances[{i}].rails[{j}]",
                    "rail does not exist",
                    r,
                    f"0-{f.rails - 1}",
                )
        if (a.su, a.slot) in seen:
            add(
                "appliance-slot-taken",
                f"fabric.appliances[{i}].slot",
                f"slot already taken by {seen[a.su, a.slot]}",
                a.slot,
                "a free slot",
            )
        seen[a.su, a.slot] = a.name
    free = f.su_count * f.nodes_per_su - len(seen)
    if f.nodes is not None and f.nodes > free:
        add("too-many-nodes", "fabric.nodes", f"more nodes than free slots in {f.su_count} SU(s)", f.nodes, f"0-{free}")
    return issues
