"""bgpd's routing-policy objects from a SONiC config_db (:mod:`hwaac.lab.frr_config` writes them before
``router bgp``): prefix lists, route maps, AS-path and community lists, as SONiC's frrcfgd templates
``bgpd.conf.db.pref_list.j2``, ``bgpd.conf.db.route_map.j2`` and ``bgpd.conf.db.comm_list.j2`` derive them
(sonic-buildimage ``src/sonic-frr-mgmt-framework/templates/bgpd/``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hwaac.lab.errors import LabError

IP_STR = {"IPv4": "ip", "IPv6": "ipv6"}

Table = Mapping[tuple[str, ...], Any]


def policy_lines(db: Mapping[str, Table]) -> list[str]:
    """The policy lines of ``db`` (config_db tables with split keys): prefix lists, route maps, AS-path lists,
    community lists, in that order."""
    out = _prefix_lists(db["PREFIX_SET"], db["PREFIX"])
    out += _route_maps(db["ROUTE_MAP"], db["PREFIX_SET"])
    for name, val in db["AS_PATH_SET"].items():
        out += [f"bgp as-path access-list {name[0]} permit {p}" for p in leaf_list(val.get("as_path_set_member"))]
    out += _community_lists(db["COMMUNITY_SET"], db["EXTENDED_COMMUNITY_SET"])
    return out


def leaf_list(value: Any) -> list[str]:
    """A leaf-list field: a JSON list, or one value."""
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list | tuple) else [str(value)]


def flag(fields: Mapping[str, Any], name: str) -> bool:
    """Whether the field ``name`` is the string "true" (config_db booleans are strings)."""
    return str(fields.get(name, "")).lower() == "true"


def _prefix_lists(sets: Mapping[tuple[str, ...], Any], prefixes: Mapping[tuple[str, ...], Any]) -> list[str]:
    """``ip prefix-list`` lines: IPv4 sets first, then IPv6 (bgpd.conf.db.pref_list.j2)."""
    if not sets or not prefixes:
        return []
    out: list[str] = []
    for mode in ("IPv4", "IPv6"):
        out.append("!")
        for (name, *_), sval in sets.items():
            if sval.get("mode") != mode:
                continue
            for key, pval in prefixes.items():
                if len(key) == 4:
                    pset, seq, prefix, rng = key
                elif len(key) == 3:
                    (pset, prefix, rng), seq = key, None
                else:
                    raise LabError(f"PREFIX|{'|'.join(key)}: key is not SET|PREFIX|RANGE or SET|SEQ|PREFIX|RANGE")
                if pset != name:
                    continue
                action = pval.get("action", "permit")
                head = f"{IP_STR[mode]} prefix-list {name}{f' seq {seq}' if seq else ''} {action} {prefix}"
                out.append(head + _range(key, prefix, rng))
    return out


def _range(key: tuple[str, ...], prefix: str, rng: str) -> str:
    if rng == "exact":
        return ""
    low, sep, high = rng.partition("..")
    if not sep or not low.isdigit() or not high.isdigit() or "/" not in prefix:
        raise LabError(f"PREFIX|{'|'.join(key)}: range {rng!r} is not valid: 'exact' or 'GE..LE'")
    # as the template: it compares the two lengths as strings ('24' > '8' is false there, so 10.0.0.0/8 with
    # 24..32 becomes "le 32"); the twin runs what the switch runs
    return f" ge {low} le {high}" if low > prefix.split("/")[1] else f" le {high}"


def _route_maps(maps: Mapping[tuple[str, ...], Any], sets: Mapping[tuple[str, ...], Any]) -> list[str]:
    """``route-map`` stanzas (bgpd.conf.db.route_map.j2)."""
    out: list[str] = []
    modes = {k[0]: v.get("mode") for k, v in sets.items()}
    for key, rm in maps.items():
        if "route_operation" not in rm:
            continue
        if len(key) != 2:
            raise LabError(f"ROUTE_MAP|{'|'.join(key)}: key is not NAME|SEQUENCE")
        out += ["!", f"route-map {key[0]} {rm['route_operation']} {key[1]}"]
        simple = (
            ("match_as_path", "match as-path {}"),
            ("call_route_map", "call {}"),
            ("match_community", "match community {}"),
            ("match_ext_community", "match extcommunity {}"),
            ("match_interface", "match interface {}"),
            ("match_src_vrf", "match source-vrf {}"),
        )
        out += [" " + fmt.format(rm[f]) for f, fmt in simple if f in rm]
        if "match_tag" in rm:
            out.append(f" match tag {leaf_list(rm['match_tag'])[0]}")
        for field, what in (("match_prefix_set", "address"), ("match_next_hop_set", "next-hop")):
            if field in rm and rm[field] in modes and modes[rm[field]] in IP_STR:
                out.append(f" match {IP_STR[modes[rm[field]]]} {what} prefix-list {rm[field]}")
        more = (("match_local_pref", "match local-preference {}"), ("match_med", "match metric {}"))
        out += [" " + fmt.format(rm[f]) for f, fmt in more if f in rm]
        out += [f" match origin {str(rm['match_origin']).lower()}"] if "match_origin" in rm else []
        out += [f" match peer {leaf_list(rm['match_neighbor'])[0]}"] if "match_neighbor" in rm else []
        out += [f" match source-protocol {rm['match_protocol']}"] if "match_protocol" in rm else []
        out += _route_map_sets(rm)
    return out


def _route_map_sets(rm: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    if "set_asn" in rm and "set_repeat_asn" in rm:
        # the template compares set_repeat_asn (a string in CONFIG_DB) with 0 and stops with a TypeError, so a
        # switch renders no FRR configuration at all from such a config_db
        raise LabError(
            "ROUTE_MAP set_asn with set_repeat_asn: SONiC's frrcfgd template fails on it "
            "(bgpd.conf.db.route_map.j2: '>' between a string and 0), the switch would get no FRR config"
        )
    if "set_community_inline" in rm:
        out.append(" set community " + " ".join(leaf_list(rm["set_community_inline"])))
    if "set_community_ref" in rm:
        out.append(f" set community {rm['set_community_ref']}")
    if "set_ext_community_inline" in rm:
        parts = [c.split(":") for c in leaf_list(rm["set_ext_community_inline"])]
        rt = [f"{p[1]}:{p[2]}" for p in parts if p[0] == "route-target" and len(p) == 3]
        soo = [f"{p[1]}:{p[2]}" for p in parts if p[0] == "route-origin" and len(p) == 3]
        out += [" set extcommunity rt " + " ".join(rt)] if rt else []
        # as the template: after "soo" it writes the route-target values (route_map.j2, ec_ns.rt_str)
        out += [" set extcommunity soo" + "".join(f" {r}" for r in rt)] if soo else []
    if "set_ext_community_ref" in rm:
        out.append(f" set extcommunity {rm['set_ext_community_ref']}")
    out += [f" set ip next-hop {rm['set_next_hop']}"] if "set_next_hop" in rm else []
    out += [f" set ipv6 next-hop global {rm['set_ipv6_next_hop_global']}"] if "set_ipv6_next_hop_global" in rm else []
    out += [" set ipv6 next-hop prefer-global"] if flag(rm, "set_ipv6_next_hop_prefer_global") else []
    out += [f" set local-preference {rm['set_local_preference']}"] if "set_local_preference" in rm else []
    action = rm.get("set_metric_action")
    if action:
        value = rm.get("set_metric")
        sign = {"METRIC_SET_VALUE": "", "METRIC_ADD_VALUE": "+", "METRIC_SUBTRACT_VALUE": "-"}
        rtt = {"METRIC_SET_RTT": "rtt", "METRIC_ADD_RTT": "+rtt", "METRIC_SUBTRACT_RTT": "-rtt"}
        if value is not None and action in sign:
            out.append(f" set metric {sign[action]}{value}")
        if action in rtt:
            out.append(f" set metric {rtt[action]}")
    elif "set_med" in rm:
        out.append(f" set metric {rm['set_med']}")
    elif "set_metric" in rm:
        out.append(f" set metric {rm['set_metric']}")
    if "set_origin" in rm:
        out.append(f" set origin {str(rm['set_origin']).lower()}")
    return out


def _community_lists(std: Mapping[tuple[str, ...], Any], ext: Mapping[tuple[str, ...], Any]) -> list[str]:
    """``bgp (ext)community-list`` lines (bgpd.conf.db.comm_list.j2)."""
    out = ["!"] if std or ext else []
    for table, kind in ((std, "community-list"), (ext, "extcommunity-list")):
        for (name, *_), val in table.items():
            if not all(f in val for f in ("set_type", "match_action", "community_member")):
                continue
            members = leaf_list(val["community_member"])
            if kind == "extcommunity-list":
                members = [
                    f"rt {m[13:]}" if "route-target" in m else f"soo {m[13:]}" if "route-origin" in m else m
                    for m in members
                ]
            head = f"bgp {kind} {str(val['set_type']).lower()} {name} permit"
            match = str(val["match_action"]).lower()
            if match == "all":
                out.append(f"{head} {' '.join(members)}")
            elif match == "any":
                out += [f"{head} {m}" for m in members]
    return out
