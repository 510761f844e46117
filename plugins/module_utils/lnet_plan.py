# Copyright: hwaac maintainers
# Apache-2.0
"""Plan LNet changes for the ``aiinfra.hwaac.lnet`` module: the desired state from its options, the ``lnetctl``
operations from the current state (``lnet.parse_state``) and the diff view; ``lnet_commands`` turns the
operations into commands and renders ``/etc/lnet.conf``. Host side: standard library and ``ansible.module_utils``
only; the layouts and their sources: ``docs/modules/lustre.md``, "lnetctl output".
"""

from __future__ import annotations

import re

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lnet import (
    GLOBAL_ALIASES,
    TUNABLES,
    LnetInputError,
    used_nets,
)
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lnet_globals import GLOBALS
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_formats import NET_RE, LustreError, normalise_net

try:
    from ansible.module_utils.common.yaml import yaml_dump
except ImportError:  # pragma: no cover - ansible-core always ships it
    yaml_dump = None

NET_TYPES = ("o2ib", "tcp")

# minimum of each tunable (lnetctl jt_add_ni ignores values <= 0 except peer_timeout, which 0 turns off)
TUNABLE_MIN = {"peer_timeout": 0, "peer_credits": 1, "peer_buffer_credits": 0, "credits": 1}

# ``lnd tunables:`` that lnetctl import reads per LND (liblnetconfig_lnd.c yaml_extract_o2ib_tun /
# yaml_extract_sock_tun), in the order lnetctl prints them (lustre_ni_show_tunables)
LND_TUNABLES = {"o2ib": ("map_on_demand", "concurrent_sends", "conns_per_peer"), "tcp": ("conns_per_peer",)}

# settings with a range narrower than "an integer >= 0"
GLOBAL_RANGES = {"discovery": (0, 1), "drop_asym_route": (0, 1), "response_tracking": (0, 3)}

# a Linux interface name (IFNAMSIZ 16 with the NUL)
_IFNAME_RE = re.compile(r"^[A-Za-z0-9_.:@-]{1,15}$")


def _lnd(net: str) -> str:
    """The LND of a normalised network name (``o2ib1`` -> ``o2ib``)."""
    return NET_RE.match(net).group("lnd")


# --- desired state -----------------------------------------------------------------------------------------------


def _check_int(option: str, value: object, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit())):
        raise LnetInputError(option, value, f"an integer >= {minimum}")
    num = int(value)
    if num < minimum or (maximum is not None and num > maximum):
        rng = f"{minimum}..{maximum}" if maximum is not None else f">= {minimum}"
        raise LnetInputError(option, value, f"an integer {rng}")
    return num


def desired_state(networks: list | None, global_: dict | None) -> dict:
    """Validate the module's ``networks`` and ``global`` options and return the desired model::

        {"nets": [{"net": "o2ib", "declared": "o2ib0", "interfaces": ["ib0", "ib1"],
                   "tunables": {"peer_credits": 32}, "lnd_tunables": {"conns_per_peer": 1}}],
         "global": {"discovery": 1}}

    Order is kept: the first interface of a network is its primary NI (the NID the servers know the client by).
    Raises :class:`LnetInputError` naming the option, the value and what is valid: a network that is not o2ib or
    tcp with an optional number, a network given twice (``o2ib`` and ``o2ib0`` are the same), an empty or
    malformed interface list, an interface used twice (in one network or across networks), an unknown or
    out-of-range tunable, an LND tunable the network's LND does not read, an unknown global setting.
    """
    nets: list[dict] = []
    seen_nets: dict[str, str] = {}
    seen_ifs: dict[str, str] = {}
    for idx, entry in enumerate(networks or []):
        where = f"networks[{idx}]"
        if not isinstance(entry, dict):
            raise LnetInputError(where, entry, "a dict with net, interfaces, tunables, lnd_tunables")
        declared = entry.get("net")
        valid_net = "o2ib or tcp with an optional network number (o2ib, o2ib0, o2ib1, tcp, tcp2)"
        try:
            net = normalise_net(str(declared).strip()) if declared is not None else None
        except LustreError:
            net = None
        if net is None or _lnd(net) not in NET_TYPES:
            raise LnetInputError(f"{where}.net", declared, valid_net)
        if net in seen_nets:
            raise LnetInputError(
                f"{where}.net",
                declared,
                f"a network not listed before ({seen_nets[net]} is the same LNet network {net})",
            )
        seen_nets[net] = str(declared)
        lnd_type = _lnd(net)
        interfaces = entry.get("interfaces")
        if not isinstance(interfaces, list) or not interfaces:
            raise LnetInputError(
                f"{where}.interfaces",
                interfaces,
                "a non-empty list of host interface names (the first is the primary NI)",
            )
        for j, name in enumerate(interfaces):
            if not isinstance(name, str) or not _IFNAME_RE.match(name):
                raise LnetInputError(
                    f"{where}.interfaces[{j}]",
                    name,
                    "a Linux interface name (1-15 characters: letters, digits, _ . : -)",
                )
            if name in seen_ifs:
                raise LnetInputError(
                    f"{where}.interfaces[{j}]",
                    name,
                    f"an interface not already used by {seen_ifs[name]} "
                    "(each host interface carries one NI of one network here)",
                )
            seen_ifs[name] = f"networks[{idx}] ({declared})"
        tunables: dict[str, int] = {}
        for key, value in (entry.get("tunables") or {}).items():
            if key not in TUNABLES:
                raise LnetInputError(f"{where}.tunables", key, "one of " + ", ".join(TUNABLES))
            tunables[key] = _check_int(f"{where}.tunables.{key}", value, TUNABLE_MIN[key])
        lnd: dict[str, int] = {}
        for key, value in (entry.get("lnd_tunables") or {}).items():
            allowed = LND_TUNABLES[lnd_type]
            if key not in allowed:
                raise LnetInputError(
                    f"{where}.lnd_tunables",
                    key,
                    f"one of {', '.join(allowed)} for {lnd_type} (what lnetctl import reads; "
                    "other LND settings are module options in /etc/modprobe.d)",
                )
            lnd[key] = _check_int(f"{where}.lnd_tunables.{key}", value, 0)
        nets.append(
            {
                "net": net,
                "declared": str(declared),
                "interfaces": list(interfaces),
                "tunables": {k: tunables[k] for k in TUNABLES if k in tunables},
                "lnd_tunables": {k: lnd[k] for k in LND_TUNABLES[lnd_type] if k in lnd},
            }
        )
    glob: dict[str, int] = {}
    for key, value in (global_ or {}).items():
        name = GLOBAL_ALIASES.get(key, key)
        if name not in GLOBALS:
            raise LnetInputError("global", key, "one of " + ", ".join(GLOBALS) + " (max_intf = max_interfaces)")
        if name in glob:
            raise LnetInputError("global", key, f"{name} given once (max_intf is max_interfaces)")
        lo, hi = GLOBAL_RANGES.get(name, (0, None))
        glob[name] = _check_int(f"global.{key}", value, lo, hi)
    return {"nets": nets, "global": {k: glob[k] for k in GLOBALS if k in glob}}


# --- plan --------------------------------------------------------------------------------------------------------


def _tunable_diffs(ni: dict, want: dict) -> list[str]:
    diffs = []
    for group, key in [("tunables", k) for k in want["tunables"]] + [("lnd_tunables", k) for k in want["lnd_tunables"]]:
        have = ni.get(group, {}).get(key)
        if have != want[group][key]:
            diffs.append(f"{key} {have if have is not None else 'unset'} -> {want[group][key]}")
    return diffs


def _ni_label(net: str, ni: dict | None, interface: str) -> str:
    nid = ni.get("nid") if ni else None
    return f"{interface} ({nid})" if nid else interface


def plan_changes(desired: dict, current: dict, mounts: list[dict] | None = None, purge: bool = True) -> dict:
    """The operations that bring ``current`` to ``desired`` and the ones refused because Lustre is mounted.

    Returns ``{"ops": [...], "refused": [str], "warnings": [str]}``; each op is a dict:
    ``{"op": "del_net", "net"}``, ``{"op": "del_ni", "net", "interface"}``,
    ``{"op": "add", "net", "interfaces", "tunables", "lnd_tunables"}``, ``{"op": "set", "key", "value",
    "current"}``, each with a ``reason``; deletions come first, then additions, then settings.

    Rules (sources: lnetctl(8) and lustre-release ``lnet/utils/lnetctl.c``; the Lustre Operations Manual,
    "Configuring LNet via lnetctl" and "LNet Software Multi-Rail"):

    * a desired NI that is missing is added (``lnetctl net add`` adds NIs to a live LNet, also while mounted);
    * an existing NI's tunables cannot be changed in place: that NI is deleted and added again;
    * the first NI of a network is its primary NI; when the result would not start with the declared first
      interface (order changed, first NI re-created), the whole network is deleted and added again in order;
    * with ``purge``, NIs and networks that are not declared are deleted;
    * global settings that differ are set with ``lnetctl set``.

    When ``mounts`` lists Lustre mounts, these deletions are refused (nothing runs; the reasons are returned):
    deleting (or re-creating) any NI, or the whole network, of a network that a mounted file system uses
    (:func:`used_nets`): its primary NI is the NID the servers know the client by and locks and imports are
    keyed on; removing a secondary NI drops the RPCs in flight on it (lustre-release sanity-lnet test_107
    guards a crash on exactly that path), so it waits for an unmount too. Deleting the node's own primary NI
    (the first NI of the first network) is refused on any network. Additions, deletions on networks no mount
    uses and global settings go ahead.
    """
    ops_del: list[dict] = []
    ops_add: list[dict] = []
    ops_set: list[dict] = []
    warnings: list[str] = []
    cur_by_net = {n["net"]: n for n in current["nets"]}
    desired_names = {d["net"] for d in desired["nets"]}

    for want in desired["nets"]:
        name = want["net"]
        have = cur_by_net.get(name)
        add_args = {"net": name, "tunables": want["tunables"], "lnd_tunables": want["lnd_tunables"]}
        if have is None:
            ops_add.append(
                {
                    "op": "add",
                    "interfaces": list(want["interfaces"]),
                    **add_args,
                    "reason": f"net {name} is not configured",
                }
            )
            continue
        by_if = {ni["interface"]: ni for ni in have["nis"]}
        cur_ifs = [ni["interface"] for ni in have["nis"]]
        declared = set(want["interfaces"])
        differs = {i: _tunable_diffs(by_if[i], want) for i in cur_ifs if i in declared}
        differs = {i: d for i, d in differs.items() if d}
        missing = [i for i in want["interfaces"] if i not in by_if]
        extra = [i for i in cur_ifs if i not in declared]
        removed = extra if purge else []
        kept = [i for i in cur_ifs if i not in removed and i not in differs]
        readd = [i for i in want["interfaces"] if i in missing or i in differs]
        result = kept + readd
        if result[0] != want["interfaces"][0] and (purge or not extra):
            if differs.get(cur_ifs[0]):
                why = (
                    f"primary NI {_ni_label(name, by_if[cur_ifs[0]], cur_ifs[0])} needs new tunables "
                    f"({', '.join(differs[cur_ifs[0]])})"
                )
            else:
                why = (
                    f"the primary NI must be {want['interfaces'][0]} (now {cur_ifs[0]}; NI order "
                    f"{','.join(cur_ifs)} -> {','.join(want['interfaces'])})"
                )
            ops_del.append({"op": "del_net", "net": name, "reason": f"re-create net {name}: {why}"})
            ops_add.append(
                {
                    "op": "add",
                    "interfaces": list(want["interfaces"]),
                    **add_args,
                    "reason": f"re-create net {name} in the declared order",
                }
            )
            continue
        if result[0] != want["interfaces"][0]:
            warnings.append(
                f"net {name}: the primary NI is {result[0]}, which is not declared; with purge=false "
                f"it stays first (declared first: {want['interfaces'][0]})"
            )
        for i in removed:
            ops_del.append(
                {
                    "op": "del_ni",
                    "net": name,
                    "interface": i,
                    "reason": f"NI {_ni_label(name, by_if[i], i)} of net {name} is not declared",
                }
            )
        for i, diffs in differs.items():
            ops_del.append(
                {
                    "op": "del_ni",
                    "net": name,
                    "interface": i,
                    "reason": f"NI {_ni_label(name, by_if[i], i)} of net {name} needs new tunables "
                    f"({', '.join(diffs)}); LNet cannot change an existing NI's tunables",
                }
            )
        if readd:
            reasons = [f"{i} is not configured" for i in readd if i in missing]
            reasons += [f"{i} is re-created with new tunables" for i in readd if i in differs]
            ops_add.append({"op": "add", "interfaces": readd, **add_args, "reason": "; ".join(reasons)})

    if purge:
        for have in current["nets"]:
            if have["net"] not in desired_names:
                ifs = ",".join(str(ni["interface"]) for ni in have["nis"])
                ops_del.append(
                    {"op": "del_net", "net": have["net"], "reason": f"net {have['net']} ({ifs}) is not declared"}
                )
    elif any(n["net"] not in desired_names for n in current["nets"]):
        extra_nets = [n["net"] for n in current["nets"] if n["net"] not in desired_names]
        warnings.append(f"nets not declared are kept (purge=false): {', '.join(extra_nets)}")

    for key, value in desired["global"].items():
        now = current["global"].get(key)
        if now != value:
            ops_set.append(
                {
                    "op": "set",
                    "key": key,
                    "value": value,
                    "current": now,
                    "reason": f"{key} is {now if now is not None else 'not shown'}, want {value}",
                }
            )

    refused = _refusals(ops_del, current, mounts or [])
    return {"ops": ops_del + ops_add + ops_set, "refused": refused, "warnings": warnings}


def _refusals(ops_del: list[dict], current: dict, mounts: list[dict]) -> list[str]:
    if not mounts:
        return []
    used = used_nets(mounts, current)
    primary = None
    for net in current["nets"]:
        if net["nis"]:
            primary = (net["net"], net["nis"][0]["interface"], net["nis"][0].get("nid"))
            break
    first_ni = {n["net"]: n["nis"][0]["interface"] for n in current["nets"] if n["nis"]}
    refused = []
    for op in ops_del:
        net = op["net"]
        users = ", ".join(used.get(net, []))
        if op["op"] == "del_net":
            if net in used:
                refused.append(
                    f"{op['reason']}: deleting net {net} takes away the network that the Lustre mount(s) "
                    f"{users} use (the client's primary NID and imports live on it)"
                )
            elif primary and primary[0] == net:
                refused.append(
                    f"{op['reason']}: deleting net {net} removes the node's primary NID "
                    f"{primary[2] or primary[1]} while Lustre is mounted"
                )
            continue
        intf = op["interface"]
        if net in used:
            if first_ni.get(net) == intf:
                what = f"primary NI {intf} of net {net} (the NID the servers know this client by)"
            else:
                what = f"NI {intf} of net {net} (RPCs in flight on it would be dropped)"
            refused.append(f"{op['reason']}: deleting {what} while {users} is mounted")
        elif primary and (primary[0], primary[1]) == (net, intf):
            refused.append(
                f"{op['reason']}: deleting the node's primary NI {intf} "
                f"({primary[2] or 'first NI'}) while Lustre is mounted"
            )
    return refused


# --- diff --------------------------------------------------------------------------------------------------------


def managed_view(state: dict, desired: dict) -> dict:
    """What the module manages in ``state``, for the diff: each network's interfaces in NI order with the
    tunables that ``desired`` declares for that network (other tunables are not managed), and the declared
    global settings."""
    want = {n["net"]: n for n in desired["nets"]}
    nets: dict[str, list] = {}
    for net in state["nets"]:
        decl = want.get(net["net"])
        rows = []
        for ni in net["nis"]:
            row: dict = {"interface": ni["interface"]}
            if decl and decl["tunables"]:
                row["tunables"] = {k: ni.get("tunables", {}).get(k) for k in decl["tunables"]}
            if decl and decl["lnd_tunables"]:
                row["lnd_tunables"] = {k: ni.get("lnd_tunables", {}).get(k) for k in decl["lnd_tunables"]}
            rows.append(row)
        nets[net["net"]] = rows
    return {"net": nets, "global": {k: state["global"].get(k) for k in desired["global"]}}


def simulate(current: dict, ops: list[dict]) -> dict:
    """The state ``ops`` (from :func:`plan_changes`) lead to from ``current``, as lnetctl would show it: a
    deleted NI leaves its network (the last one takes the network with it), an added NI goes to the end of its
    network (a new network to the end of the list) with the op's tunables over what was known, a setting takes
    its value. Used for check mode's diff and to tell what a run should have produced."""
    nets = [{"net": n["net"], "nis": [dict(ni) for ni in n["nis"]]} for n in current["nets"]]
    glob = dict(current["global"])
    for op in ops:
        by_name = {n["net"]: n for n in nets}
        if op["op"] == "del_net":
            nets = [n for n in nets if n["net"] != op["net"]]
        elif op["op"] == "del_ni":
            net = by_name.get(op["net"])
            if net is not None:
                net["nis"] = [ni for ni in net["nis"] if ni["interface"] != op["interface"]]
                if not net["nis"]:
                    nets.remove(net)
        elif op["op"] == "add":
            net = by_name.get(op["net"])
            if net is None:
                net = {"net": op["net"], "nis": []}
                nets.append(net)
            for intf in op["interfaces"]:
                net["nis"].append(
                    {
                        "interface": intf,
                        "nid": None,
                        "status": None,
                        "tunables": dict(op["tunables"]),
                        "lnd_tunables": dict(op["lnd_tunables"]),
                    }
                )
        elif op["op"] == "set":
            glob[op["key"]] = op["value"]
    return {"nets": nets, "global": glob}


def view_text(view: dict) -> str:
    """A managed view as readable YAML for the diff."""
    if yaml_dump is None:
        return repr(view)
    return yaml_dump(view, default_flow_style=False, sort_keys=False)
