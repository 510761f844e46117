"""Semantic rules: what a schema cannot say. Each returns :class:`IntentIssue` objects with a field path.

Rules: switch models exist and fit (too few leaf ports for the nodes per SU), pools parse, fit su_capacity
and do not overlap, ASN ranges are large enough and disjoint, QoS is consistent (PFC on the lossless priority
only, CNP strict, ECN min < max, PFC watchdog times >= poll interval, host MTU <= switch MTU), names are
unique (naming patterns that would give two devices one name), appliances sit on free slots.
"""

from __future__ import annotations

from hwaac.errors import IntentIssue
from hwaac.model.intent import Intent
from hwaac.plan.asn import check_asns
from hwaac.plan.design import DesignError, derive
from hwaac.plan.ipam import check_pools


def check_semantics(intent: Intent) -> list[IntentIssue]:
    """All semantic issues of ``intent`` (empty when it is valid)."""
    issues = check_qos(intent) + check_host(intent) + check_appliances(intent)
    try:
        design = derive(intent)
    except DesignError as err:
        return issues + err.issues
    issues += check_pools(intent, design)
    issues += check_asns(intent, design)
    if not issues:
        issues += check_names(intent, design)
    return issues


def check_qos(intent: Intent) -> list[IntentIssue]:
    q = intent.qos
    issues: list[IntentIssue] = []
    for i, v in enumerate(q.roce_dscp):
        if not 0 <= v <= 63:
            issues.append(IntentIssue(f"qos.roce_dscp[{i}]", "DSCP out of range", v, "0-63"))
    if q.cnp_dscp in q.roce_dscp:
        issues.append(IntentIssue("qos.cnp_dscp", "CNP must use a DSCP other than RoCE data", q.cnp_dscp,
                                  f"a DSCP not in {q.roce_dscp}"))
    if q.lossless_priority == q.cnp_priority:
        issues.append(IntentIssue("qos.cnp_priority", "CNP needs its own (strict) priority", q.cnp_priority,
                                  f"a priority other than {q.lossless_priority}"))
    for i, p in enumerate(q.pfc_priorities):
        if not 0 <= p <= 7:
            issues.append(IntentIssue(f"qos.pfc_priorities[{i}]", "priority out of range", p, "0-7"))
    if q.lossless_priority not in q.pfc_priorities:
        issues.append(IntentIssue("qos.pfc_priorities", "PFC must be enabled on the lossless priority",
                                  q.pfc_priorities, f"a list containing {q.lossless_priority}"))
    if q.cnp_priority in q.pfc_priorities:
        issues.append(IntentIssue("qos.pfc_priorities", "PFC on the CNP priority would pause CNPs",
                                  q.pfc_priorities, f"a list without {q.cnp_priority}"))
    if q.ecn.min_threshold_bytes >= q.ecn.max_threshold_bytes:
        issues.append(IntentIssue("qos.ecn.min_threshold_bytes", "must be below max_threshold_bytes",
                                  q.ecn.min_threshold_bytes, f"< {q.ecn.max_threshold_bytes}"))
    wd = q.pfc_watchdog
    for name in ("detection_time_ms", "restoration_time_ms"):
        if getattr(wd, name) < wd.poll_interval_ms:
            issues.append(IntentIssue(f"qos.pfc_watchdog.{name}", "must be at least poll_interval_ms",
                                      getattr(wd, name), f">= {wd.poll_interval_ms}"))
    if q.host_mtu > q.switch_mtu:
        issues.append(IntentIssue("qos.host_mtu", "host MTU above the switch MTU would drop large frames",
                                  q.host_mtu, f"4200-{q.switch_mtu}"))
    return issues


def check_host(intent: Intent) -> list[IntentIssue]:
    h, f = intent.host, intent.fabric
    issues: list[IntentIssue] = []
    fields = {"rail": 0, "plane": 0, "port": 0}
    for name, pattern in (("interface_name", h.interface_name), ("hca_name", h.hca_name)):
        try:
            pattern.format(**fields)
        except (KeyError, IndexError, ValueError) as exc:
            issues.append(IntentIssue(f"host.{name}", f"bad pattern ({exc})", pattern,
                                      "a format string using {rail}, {plane} or {port}"))
    if f.planes > 1 and not any(t in h.interface_name for t in ("{plane", "{port")):
        issues.append(IntentIssue("host.interface_name", "with several planes each NIC port needs its own name",
                                  h.interface_name, "a pattern with {plane} or {port}, e.g. rail{rail}p{plane}"))
    for i, p in enumerate(h.ecn_priorities or []):
        if not 0 <= p <= 7:
            issues.append(IntentIssue(f"host.ecn_priorities[{i}]", "priority out of range", p, "0-7"))
    # Routing tables 253-255 are the kernel's default, main and local tables; rule 32766 is the main table's.
    nics = f.rails * f.planes
    r = h.routing
    last_table = r.table_base + nics - 1
    if last_table > 252:
        issues.append(IntentIssue("host.routing.table_base", f"{nics} NIC ports would use tables up to {last_table}, "
                                  "reaching the kernel's default/main/local tables (253-255)", r.table_base,
                                  f"1-{253 - nics}"))
    last_prio = r.rule_priority_base + (nics - 1) * r.rule_priority_step
    if last_prio >= 32766:
        issues.append(IntentIssue("host.routing.rule_priority_base", f"the last source rule priority {last_prio} "
                                  "would not come before the main table's rule (32766)", r.rule_priority_base,
                                  f"<= {32765 - (nics - 1) * r.rule_priority_step}"))
    for key, value in h.nccl_env.items():
        if not key.isidentifier() or not key.isupper():
            issues.append(IntentIssue(f"host.nccl_env.{key}", "not an environment variable name", key,
                                      "upper-case letters, digits and '_', e.g. NCCL_IB_QPS_PER_CONNECTION"))
        if "\n" in value or "\r" in value:
            issues.append(IntentIssue(f"host.nccl_env.{key}", "value contains a line break", value, "one line"))
    # The NIC's firmware CNP marking must agree with the switch QoS, or CNPs land in the wrong queue.
    q = intent.qos
    for param, want in (("CNP_DSCP_P1", q.cnp_dscp), ("CNP_802P_PRIO_P1", q.cnp_priority)):
        have = h.mlxconfig.get(param)
        if have is not None and str(have) != str(want):
            issues.append(IntentIssue(f"host.mlxconfig.{param}", f"disagrees with the switch QoS "
                                      f"({'qos.cnp_dscp' if param == 'CNP_DSCP_P1' else 'qos.cnp_priority'} "
                                      f"is {want})", have, str(want)))
    return issues


def check_appliances(intent: Intent) -> list[IntentIssue]:
    f = intent.fabric
    issues: list[IntentIssue] = []
    seen: dict[tuple[int, int], str] = {}
    for i, a in enumerate(f.appliances):
        if a.su > f.su_count:
            issues.append(IntentIssue(f"fabric.appliances[{i}].su", "SU does not exist", a.su, f"1-{f.su_count}"))
        if a.slot > f.nodes_per_su:
            issues.append(IntentIssue(f"fabric.appliances[{i}].slot", "slot does not exist", a.slot,
                                      f"1-{f.nodes_per_su}"))
        for j, r in enumerate(a.rails):
            if not 0 <= r < f.rails:
                issues.append(IntentIssue(f"fabric.appliances[{i}].rails[{j}]", "rail does not exist", r,
                                          f"0-{f.rails - 1}"))
        if (a.su, a.slot) in seen:
            issues.append(IntentIssue(f"fabric.appliances[{i}].slot", f"slot already taken by {seen[a.su, a.slot]}",
                                      a.slot, "a free slot"))
        seen[a.su, a.slot] = a.name
    free = f.su_count * f.nodes_per_su - len(seen)
    if f.nodes is not None and f.nodes > free:
        issues.append(IntentIssue("fabric.nodes", f"more nodes than free slots in {f.su_count} SU(s)", f.nodes,
                                  f"0-{free}"))
    return issues


def check_names(intent: Intent, design) -> list[IntentIssue]:
    """Two devices with one name: a naming pattern that misses a field, or an appliance named like a device."""
    from hwaac.plan.topology import device_names

    issues: list[IntentIssue] = []
    seen: dict[str, str] = {}
    try:
        for role, name in device_names(intent, design):
            if name in seen:
                path = "fabric.appliances" if role == "appliance" else f"naming.{role}"
                issues.append(IntentIssue(path, f"duplicate name {name!r} (also a {seen[name]})",
                                          getattr(intent.naming, role, name),
                                          "a pattern whose fields make every name unique"))
                if len(issues) >= 5:
                    break
            else:
                seen[name] = role
    except (KeyError, IndexError, ValueError) as exc:
        issues.append(IntentIssue("naming", f"bad naming pattern ({exc})", None,
                                  "format strings using plane, rail, su, slot, pod, index"))
    return issues
