"""bgpd's configuration from a SONiC config_db, derived as SONiC's frrcfgd boot templates derive it.

Source: sonic-buildimage ``src/sonic-frr-mgmt-framework/templates/bgpd/bgpd.conf.db*.j2`` (086b03bd), which the
bgp container's ``dockers/docker-fpm-frr/frr/bgpd/`` templates include; the SONiC toolkit (``HWAAC_SONIC_TOOLKIT``,
docs/sonic-releases.md) holds copies under ``templates/``. Prefix lists, route maps, AS-path and community lists,
then ``router bgp`` per ``BGP_GLOBALS`` VRF with its globals, peer groups, neighbours and address families. Table
order is the config_db's (sonic-cfggen does not sort). ``lab_timers`` adds what a twin needs to converge in seconds
(see docs/lab.md). Fields the templates ignore are ignored; values the lab cannot run are refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hwaac.lab.errors import LabError
from hwaac.lab.frr_policy import flag, leaf_list, policy_lines
from hwaac.render.sonic.checks_common import is_ip

ADMIN_UP, ADMIN_DOWN = ("true", "up"), ("false", "down")  # frrcfgd 202505 hdl_admin_status; templates l.5/l.33
LAB_NEIGHBOR_LINES = ("timers connect 2", "advertisement-interval 0")
AFS = (("ipv4_unicast", "ipv4 unicast"), ("ipv6_unicast", "ipv6 unicast"))  # l2vpn_evpn: refused, see _af

# BGP_GLOBALS field -> the line the template writes when the field is "true" (flags) ...
_GLOBAL_FLAGS = {
    "log_nbr_state_changes": "bgp log-neighbor-changes",
    "always_compare_med": "bgp always-compare-med",
    "default_show_hostname": "bgp default show-hostname",
    "default_shutdown": "bgp default shutdown",
    "disable_ebgp_connected_rt_check": "bgp disable-ebgp-connected-route-check",
    "deterministic_med": "bgp deterministic-med",
    "graceful_restart_enable": "bgp graceful-restart",
    "graceful_shutdown": "bgp graceful-shutdown",
    "gr_preserve_fw_state": "bgp graceful-restart preserve-fw-state",
    "compare_confed_as_path": "bgp bestpath as-path confed",
    "rr_allow_out_policy": "bgp route-reflector allow-outbound-policy",
    "med_confed": "bgp bestpath med confed",
    "med_missing_as_worst": "bgp bestpath med confed missing-as-worst",
    "network_import_check": "bgp network import-check",
}
# ... and the line with the field's value
_GLOBAL_VALUES = {
    "default_local_preference": "bgp default local-preference {}",
    "default_subgroup_pkt_queue_max": "bgp default subgroup-pkt-queue-max {}",
    "rr_cluster_id": "bgp cluster-id {}",
    "read_quanta": "read-quanta {}",
    "write_quanta": "write-quanta {}",
    "coalesce_time": "coalesce-time {}",
    "gr_stale_routes_time": "bgp graceful-restart stalepath-time {}",
    "gr_restart_time": "bgp graceful-restart restart-time {}",
}
# BGP_NEIGHBOR / BGP_PEER_GROUP flags and values (bgpd.conf.db.nbr_or_peer.j2)
_NBR_FLAGS = {
    "bfd": "bfd",
    "solo_peer": "solo",
    "passive_mode": "passive",
    "disable_ebgp_connected_route_check": "disable-connected-check",
    "enforce_first_as": "enforce-first-as",
    "capability_dynamic": "capability dynamic",
    "capability_ext_nexthop": "capability extended-nexthop",
    "dont_negotiate_capability": "dont-capability-negotiate",
    "enforce_multihop": "enforce-multihop",
    "override_capability": "override-capability",
}
_NBR_VALUES = {
    "local_asn": "local-as {}",
    "name": "description {}",
    "ttl_security_hops": "ttl-security hops {}",
    "auth_password": "password {} encrypted",
    "peer_port": "port {}",
    "local_addr": "update-source {}",
    "min_adv_interval": "advertisement-interval {}",
    "conn_retry": "timers connect {}",
}
# BGP_NEIGHBOR_AF / BGP_PEER_GROUP_AF (bgpd.conf.db.nbr_af.j2)
_AF_FLAGS = {
    "as_override": "as-override",
    "rrclient": "route-reflector-client",
    "soft_reconfiguration_in": "soft-reconfiguration inbound",
    "route_server_client": "route-server-client",
    "add_path_tx_all": "addpath-tx-all-paths",
    "add_path_tx_bestpath": "addpath-tx-bestpath-per-AS",
}
_AF_VALUES = {
    "cap_orf": "capability orf prefix-list {}",
    "weight": "weight {}",
    "prefix_list_in": "prefix-list {} in",
    "prefix_list_out": "prefix-list {} out",
    "unsuppress_map_name": "unsuppress-map {}",
    "filter_list_in": "filter-list {} in",
    "filter_list_out": "filter-list {} out",
}
_SEND_COMMUNITY = {
    "standard": ["no {n} send-community extended", "no {n} send-community large"],
    "extended": ["no {n} send-community", "no {n} send-community large"],
    "large": ["no {n} send-community", "no {n} send-community extended"],
    "both": ["no {n} send-community large"],
    "none": ["no {n} send-community all"],
}


def frr_config(
    config_db: Mapping[str, Any],
    *,
    lab_timers: bool = True,
    timers_floor: tuple[int, int] | None = None,
    connect_retry: int = 2,
) -> str:
    """bgpd's configuration for the switch whose config_db this is.

    Args:
        config_db: the rendered ``config_db.json`` (keys ``TABLE`` -> ``"k1|k2"`` -> fields).
        lab_timers: add ``timers connect 2`` and ``advertisement-interval 0`` to every neighbour and peer group
            (a twin's bgpd starts before its peers and should retry in seconds, not minutes).
        timers_floor: (keepalive, holdtime) at least this (with ``lab_timers``): for labs too big for their
            cores to keep 3/10 s timers through the initial update storm (docs/lab.md).
        connect_retry: the lab's ``timers connect`` (with ``lab_timers``).

    Raises:
        LabError: a value the lab cannot run (admin_status outside true/false/up/down, an EVPN family).
    """
    db = {
        t: _table(config_db.get(t))
        for t in (
            "DEVICE_METADATA",
            "PREFIX_SET",
            "PREFIX",
            "ROUTE_MAP",
            "AS_PATH_SET",
            "COMMUNITY_SET",
            "EXTENDED_COMMUNITY_SET",
            "BGP_GLOBALS",
            "BGP_GLOBALS_AF",
            "BGP_GLOBALS_AF_NETWORK",
            "BGP_GLOBALS_AF_AGGREGATE_ADDR",
            "ROUTE_REDISTRIBUTE",
            "BGP_PEER_GROUP",
            "BGP_PEER_GROUP_AF",
            "BGP_NEIGHBOR",
            "BGP_NEIGHBOR_AF",
            "BGP_GLOBALS_LISTEN_PREFIX",
        )
    }
    out: list[str] = []
    hostname = db["DEVICE_METADATA"].get(("localhost",), {}).get("hostname")
    if hostname:
        out += [f"hostname {hostname}", "!"]
    out += policy_lines(db)
    for (vrf, *_), glob in db["BGP_GLOBALS"].items():
        if "local_asn" in glob:
            lab = (f"timers connect {connect_retry}", LAB_NEIGHBOR_LINES[1]) if lab_timers else None
            out += ["!", *_router_bgp(vrf, glob, db, lab, timers_floor if lab_timers else None)]
    out.append("!")
    return "\n".join(out) + "\n"


def _table(raw: Any) -> dict[tuple[str, ...], Mapping[str, Any]]:
    """A config_db table with its keys split at ``|`` (as sonic-cfggen deserialises them)."""
    if not raw:
        return {}
    if not isinstance(raw, Mapping):
        raise LabError(f"config_db table is not an object: {raw!r:.80}")
    return {tuple(str(k).split("|")): (v if isinstance(v, Mapping) else {}) for k, v in raw.items()}


def _admin(table: str, key: tuple[str, ...], value: Any) -> bool:
    """admin_status as frrcfgd 202505 reads it: true/up -> True, false/down -> False."""
    text = str(value).lower()
    if text in ADMIN_UP:
        return True
    if text in ADMIN_DOWN:
        return False
    raise LabError(f"{table}|{'|'.join(key)} admin_status: {value!r} is not valid: up, down (or true, false)")


def _router_bgp(
    vrf: str,
    glob: Mapping[str, Any],
    db: Mapping[str, Any],
    lab_timers: tuple[str, ...] | None,
    floor: tuple[int, int] | None,
) -> list[str]:
    """One ``router bgp`` block (bgpd.conf.db.j2)."""
    out = [f"router bgp {glob['local_asn']}" + ("" if vrf == "default" else f" vrf {vrf}")]
    if str(glob.get("fast_external_failover", "")).lower() == "false":
        out.append(" no bgp fast-external-failover")
    if "router_id" in glob:
        out.append(f" bgp router-id {glob['router_id']}")
    out += [
        f" {line}"
        for f, line in _GLOBAL_FLAGS.items()
        if flag(glob, f) and f in ("log_nbr_state_changes", "always_compare_med")
    ]
    out.append(" bgp default ipv4-unicast" if flag(glob, "default_ipv4_unicast") else " no bgp default ipv4-unicast")
    out += [f" {_GLOBAL_VALUES[f].format(glob[f])}" for f in ("default_local_preference",) if f in glob]
    out += [f" {_GLOBAL_FLAGS[f]}" for f in ("default_show_hostname", "default_shutdown") if flag(glob, f)]
    out += [f" {_GLOBAL_VALUES[f].format(glob[f])}" for f in ("default_subgroup_pkt_queue_max",) if f in glob]
    if str(glob.get("rr_clnt_to_clnt_reflection", "")).lower() == "false":
        out.append(" no bgp client-to-client reflection")
    out += [f" {_GLOBAL_VALUES['rr_cluster_id'].format(glob['rr_cluster_id'])}"] if "rr_cluster_id" in glob else []
    out += [f" {_GLOBAL_FLAGS[f]}" for f in ("disable_ebgp_connected_rt_check", "deterministic_med") if flag(glob, f)]
    if "max_delay" in glob:
        out.append(" update-delay " + " ".join(str(glob[f]) for f in ("max_delay", "establish_wait") if f in glob))
    if "max_med_time" in glob:
        out.append(
            " bgp max-med on-startup " + " ".join(str(glob[f]) for f in ("max_med_time", "max_med_val") if f in glob)
        )
    if "max_med_admin" in glob:
        out.append(
            " bgp max-med administrative" + (f" {glob['max_med_admin_val']}" if "max_med_admin_val" in glob else "")
        )
    out += [
        f" {_GLOBAL_VALUES[f].format(glob[f])}"
        for f in ("read_quanta", "write_quanta", "coalesce_time", "gr_stale_routes_time", "gr_restart_time")
        if f in glob
    ]
    out += [
        f" {_GLOBAL_FLAGS[f]}"
        for f in ("graceful_restart_enable", "graceful_shutdown", "gr_preserve_fw_state")
        if flag(glob, f)
    ]
    if "ignore_as_path_length" in glob:
        out.append(" bgp bestpath as-path ignore")
    out += [f" {_GLOBAL_FLAGS['compare_confed_as_path']}"] if flag(glob, "compare_confed_as_path") else []
    if flag(glob, "load_balance_mp_relax"):
        as_set = str(glob.get("as_path_mp_as_set", "")).lower()
        out.append(" bgp bestpath as-path multipath-relax" + {"true": " as-set", "false": " no-as-set"}.get(as_set, ""))
    out += [f" {_GLOBAL_FLAGS['rr_allow_out_policy']}"] if flag(glob, "rr_allow_out_policy") else []
    if "external_compare_router_id" in glob:
        out.append(" bgp bestpath compare-routerid")
    out += [
        f" {_GLOBAL_FLAGS[f]}" for f in ("med_confed", "med_missing_as_worst", "network_import_check") if flag(glob, f)
    ]
    for key, peer in db["BGP_PEER_GROUP"].items():
        if key[0] == vrf and len(key) > 1:
            out += _neighbor("BGP_PEER_GROUP", key, peer, lab_timers, floor)
    for key, nbr in db["BGP_NEIGHBOR"].items():
        if key[0] == vrf and len(key) > 1:
            out += _neighbor("BGP_NEIGHBOR", key, nbr, lab_timers, floor)
    if "max_dynamic_neighbors" in glob:
        out.append(f" bgp listen limit {glob['max_dynamic_neighbors']}")
    if "route_map_process_delay" in glob:
        out.append(f" bgp route-map delay-timer {glob['route_map_process_delay']}")
    for key, lp in db["BGP_GLOBALS_LISTEN_PREFIX"].items():
        if key[0] == vrf and len(key) > 1 and "peer_group" in lp:
            out.append(f" bgp listen range {key[1]} peer-group {lp['peer_group']}")
    for af, af_str in AFS:
        body = _af(vrf, af, af_str, db)
        if body:
            out += [" !", f" address-family {af_str}", *body, " exit-address-family"]
    _refuse_evpn(vrf, db)
    return out


def _neighbor(
    table: str,
    key: tuple[str, ...],
    nbr: Mapping[str, Any],
    lab_timers: tuple[str, ...] | None,
    floor: tuple[int, int] | None = None,
) -> list[str]:
    """``neighbor`` lines of one neighbour or peer group (bgpd.conf.db.nbr_or_peer.j2)."""
    name = key[1]
    out: list[str] = []
    intf = ""
    if table == "BGP_PEER_GROUP":
        out.append(f" neighbor {name} peer-group")
    elif not is_ip(name):
        intf = "interface "
    remote_as = nbr.get("peer_type", nbr.get("asn", ""))
    if remote_as != "":
        out.append(f" neighbor {name} {intf}remote-as {remote_as}")
    if "peer_group_name" in nbr:
        out.append(f" neighbor {name} {intf}peer-group {nbr['peer_group_name']}")
    n = f" neighbor {name} "
    out += [n + _NBR_VALUES[f].format(nbr[f]) for f in ("local_asn", "name") if f in nbr]
    if "admin_status" in nbr and not _admin(table, key, nbr["admin_status"]):
        out.append(n + (f"shutdown message {nbr['shutdown_message']}" if "shutdown_message" in nbr else "shutdown"))
    out += [n + _NBR_FLAGS["bfd"]] if flag(nbr, "bfd") else []
    out += [n + _NBR_VALUES[f].format(nbr[f]) for f in ("ttl_security_hops", "auth_password") if f in nbr]
    out += [n + _NBR_FLAGS["solo_peer"]] if flag(nbr, "solo_peer") else []
    out += [n + _NBR_VALUES["peer_port"].format(nbr["peer_port"])] if "peer_port" in nbr else []
    out += [n + _NBR_FLAGS["passive_mode"]] if flag(nbr, "passive_mode") else []
    mhop = nbr.get("ebgp_multihop_ttl", "255" if flag(nbr, "ebgp_multihop") else "")
    if mhop != "":
        out.append(n + f"ebgp-multihop {mhop}")
    out += [n + _NBR_FLAGS[f] for f in ("disable_ebgp_connected_route_check", "enforce_first_as") if flag(nbr, f)]
    out += [n + _NBR_VALUES["local_addr"].format(nbr["local_addr"])] if "local_addr" in nbr else []
    if not lab_timers and "min_adv_interval" in nbr:
        out.append(n + _NBR_VALUES["min_adv_interval"].format(nbr["min_adv_interval"]))
    if "keepalive" in nbr and "holdtime" in nbr:
        ka, hold = nbr["keepalive"], nbr["holdtime"]
        if floor and str(ka).isdigit() and str(hold).isdigit():
            ka, hold = max(int(ka), floor[0]), max(int(hold), floor[1])
        out.append(n + f"timers {ka} {hold}")
    if not lab_timers and "conn_retry" in nbr:
        out.append(n + _NBR_VALUES["conn_retry"].format(nbr["conn_retry"]))
    if lab_timers:
        out += [n + line for line in lab_timers]
    out += [
        n + _NBR_FLAGS[f]
        for f in (
            "capability_dynamic",
            "capability_ext_nexthop",
            "dont_negotiate_capability",
            "enforce_multihop",
            "override_capability",
        )
        if flag(nbr, f)
    ]
    return out


def _af(vrf: str, af: str, af_str: str, db: Mapping[str, Any]) -> list[str]:
    """The body of one ``address-family`` of VRF ``vrf`` (bgpd.conf.db.addr_family.j2)."""
    out: list[str] = []
    globs = [v for k, v in db["BGP_GLOBALS_AF"].items() if k[0] == vrf and len(k) > 1 and k[1] == af]
    for g in globs:
        if all(f in g for f in ("ebgp_route_distance", "ibgp_route_distance", "local_route_distance")):
            out.append(
                f"  distance bgp {g['ebgp_route_distance']} {g['ibgp_route_distance']} {g['local_route_distance']}"
            )
        out += [f"  import vrf {g['import_vrf']}"] if "import_vrf" in g else []
        out += [f"  import vrf route-map {g['import_vrf_route_map']}"] if "import_vrf_route_map" in g else []
    for key, nw in db["BGP_GLOBALS_AF_NETWORK"].items():
        if key[0] == vrf and len(key) > 2 and key[1] == af:
            tail = ("backdoor " if flag(nw, "backdoor") else "") + (
                f"route-map {nw['policy']}" if "policy" in nw else ""
            )
            out.append(f"  network {key[2]} {tail}".rstrip())
    for key, ag in db["BGP_GLOBALS_AF_AGGREGATE_ADDR"].items():
        if key[0] == vrf and len(key) > 2 and key[1] == af:
            tail = ("as-set " if flag(ag, "as_set") else "") + ("summary-only" if flag(ag, "summary_only") else "")
            out.append(f"  aggregate-address {key[2]} {tail}".rstrip())
    for key, rr in db["ROUTE_REDISTRIBUTE"].items():
        if len(key) != 4:
            raise LabError(f"ROUTE_REDISTRIBUTE|{'|'.join(key)}: key is not VRF|SRC_PROTOCOL|DST_PROTOCOL|FAMILY")
        if key[0] == vrf and key[3] == af_str.split()[0]:
            maps = leaf_list(rr.get("route_map"))
            out += [f"  redistribute {key[1]} route-map {m}" for m in maps] if maps else [f"  redistribute {key[1]}"]
    for table in ("BGP_PEER_GROUP_AF", "BGP_NEIGHBOR_AF"):
        for key, naf in db[table].items():
            if key[0] == vrf and len(key) > 2 and key[2] == af:
                out += _neighbor_af(table, key, naf)
    for g in globs:
        out += _af_tail(g)
    return out


def _neighbor_af(table: str, key: tuple[str, ...], naf: Mapping[str, Any]) -> list[str]:
    """The lines of one neighbour or peer group in a family (bgpd.conf.db.nbr_af.j2)."""
    n = f"  neighbor {key[1]} "
    out: list[str] = []
    if "admin_status" in naf:
        out.append(n + "activate" if _admin(table, key, naf["admin_status"]) else f"  no neighbor {key[1]} activate")
    tx = naf.get("tx_add_paths")
    out += (
        [n + {"tx_all_paths": "addpath-tx-all-paths", "tx_best_path_per_as": "addpath-tx-bestpath-per-AS"}[tx]]
        if tx in ("tx_all_paths", "tx_best_path_per_as")
        else []
    )
    if flag(naf, "nhself"):
        out.append(n + ("next-hop-self force" if flag(naf, "nexthop_self_force") else "next-hop-self"))
    if flag(naf, "remove_private_as_enabled"):
        out.append(
            n
            + "remove-private-AS"
            + (" all" if flag(naf, "remove_private_as_all") else "")
            + (" replace-AS" if flag(naf, "replace_private_as") else "")
        )
    sends = _SEND_COMMUNITY.get(naf.get("send_community", ""), [])
    out += [f"  {line.format(n=f'neighbor {key[1]}')}" for line in sends]
    out += [n + _AF_FLAGS["as_override"]] if flag(naf, "as_override") else []
    if flag(naf, "send_default_route"):
        out.append(n + "default-originate" + (f" route-map {naf['default_rmap']}" if "default_rmap" in naf else ""))
    out += [n + _AF_FLAGS[f] for f in ("rrclient", "soft_reconfiguration_in") if flag(naf, f)]
    if "max_prefix_limit" in naf:
        line = f"maximum-prefix {naf['max_prefix_limit']}"
        line += f" {naf['max_prefix_warning_threshold']}" if "max_prefix_warning_threshold" in naf else ""
        if "max_prefix_restart_interval" in naf:
            line += f" restart {naf['max_prefix_restart_interval']}"
        elif flag(naf, "max_prefix_warning_only"):
            line += " warning-only"
        out.append(n + line)
    out += [n + _AF_FLAGS["route_server_client"]] if flag(naf, "route_server_client") else []
    if flag(naf, "allow_as_in"):
        out.append(
            n
            + (
                "allowas-in origin"
                if flag(naf, "allow_as_origin")
                else f"allowas-in {naf['allow_as_count']}"
                if "allow_as_count" in naf
                else "allowas-in"
            )
        )
    out += [n + _AF_FLAGS[f] for f in ("add_path_tx_all", "add_path_tx_bestpath") if flag(naf, f)]
    out += [
        n + _AF_VALUES[f].format(naf[f]) for f in ("cap_orf", "weight", "prefix_list_in", "prefix_list_out") if f in naf
    ]
    out += [n + f"route-map {m} in" for m in leaf_list(naf.get("route_map_in"))]
    out += [n + f"route-map {m} out" for m in leaf_list(naf.get("route_map_out"))]
    out += [
        n + _AF_VALUES[f].format(naf[f])
        for f in ("unsuppress_map_name", "filter_list_in", "filter_list_out")
        if f in naf
    ]
    unchanged = " ".join(
        w
        for f, w in (("unchanged_as_path", "as-path"), ("unchanged_med", "med"), ("unchanged_nexthop", "next-hop"))
        if flag(naf, f)
    )
    out += [n + f"attribute-unchanged {unchanged}"] if unchanged else []
    return out


def _af_tail(g: Mapping[str, Any]) -> list[str]:
    """Dampening, maximum-paths and table-map of a family (the end of bgpd.conf.db.addr_family.j2)."""
    out: list[str] = []
    if flag(g, "route_flap_dampen"):
        parts: list[str] = []
        for f in (
            "route_flap_dampen_half_life",
            "route_flap_dampen_reuse_threshold",
            "route_flap_dampen_suppress_threshold",
            "route_flap_dampen_max_suppress",
        ):
            if f not in g:
                break
            parts.append(str(g[f]))
        out.append("  bgp dampening " + " ".join(parts))
    if "max_ebgp_paths" in g:
        out.append(f"  maximum-paths {g['max_ebgp_paths']}")
    if "max_ibgp_paths" in g:
        eq = " equal-cluster-length" if flag(g, "ibgp_equal_cluster_length") else ""
        out.append(f"  maximum-paths ibgp {g['max_ibgp_paths']}{eq}")
    if "route_download_filter" in g:
        out.append(f"  table-map {g['route_download_filter']}")
    return [line.rstrip() for line in out]


def _refuse_evpn(vrf: str, db: Mapping[str, Any]) -> None:
    """EVPN needs VXLAN tunnels the twin does not build: refuse it rather than run a fabric without it."""
    for table in ("BGP_GLOBALS_AF", "BGP_NEIGHBOR_AF", "BGP_PEER_GROUP_AF"):
        idx = 1 if table == "BGP_GLOBALS_AF" else 2
        for key in db[table]:
            if key[0] == vrf and len(key) > idx and key[idx] == "l2vpn_evpn":
                raise LabError(
                    f"{table}|{'|'.join(key)}: the l2vpn_evpn family is not modelled by the lab "
                    f"(valid families: ipv4_unicast, ipv6_unicast)"
                )


def neighbors(config_db: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The BGP neighbours of the default VRF: address -> {"asn", "name", "local_addr", "enabled"} (enabled: not
    shut down and activated in at least one family)."""
    nbrs = _table(config_db.get("BGP_NEIGHBOR"))
    afs = _table(config_db.get("BGP_NEIGHBOR_AF"))
    out: dict[str, dict[str, Any]] = {}
    for key, nbr in nbrs.items():
        if key[0] != "default" or len(key) < 2:
            continue
        up = "admin_status" not in nbr or _admin("BGP_NEIGHBOR", key, nbr["admin_status"])
        active = any(
            k[1] == key[1] and "admin_status" in v and _admin("BGP_NEIGHBOR_AF", k, v["admin_status"])
            for k, v in afs.items()
            if k[0] == "default" and len(k) > 2
        )
        out[key[1]] = {
            "asn": nbr.get("asn", ""),
            "name": nbr.get("name", ""),
            "local_addr": nbr.get("local_addr", ""),
            "enabled": up and active,
        }
    return out
